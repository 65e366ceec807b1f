"""The Kubernetes project's Python client against `converge serve`: a list, a watch, and a status
write as the deployment controller (impersonated by admin), whose role allows update (PUT) of
deployments/status and not patch, as kube's bootstrap policy does. Prints one line per check;
any failure raises and exits non-zero."""

import sys

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

config.load_kube_config(config_file=sys.argv[1])
apps = client.AppsV1Api()

deployments = apps.list_namespaced_deployment("default")
names = [d.metadata.name for d in deployments.items]
assert names == ["nginx-deployment"], names
print("list: nginx-deployment")

w = watch.Watch()
for event in w.stream(apps.list_namespaced_deployment, "default", resource_version="0"):
    assert event["type"] == "ADDED", event["type"]
    assert event["object"].metadata.name == "nginx-deployment"
    print("watch: ADDED nginx-deployment")
    w.stop()

controller = client.ApiClient()
controller.set_default_header(
    "Impersonate-User", "system:serviceaccount:kube-system:deployment-controller"
)
as_controller = client.AppsV1Api(controller)
try:
    as_controller.patch_namespaced_deployment_status(
        "nginx-deployment", "default", {"status": {"observedGeneration": 1}}
    )
    raise AssertionError("the deployment controller may not patch deployments/status")
except ApiException as e:
    assert e.status == 403, e.status
    print("patch status as the controller: 403")

current = as_controller.read_namespaced_deployment("nginx-deployment", "default")
current.status.conditions = None
current.status.observed_generation = current.metadata.generation
updated = as_controller.replace_namespaced_deployment_status("nginx-deployment", "default", current)
assert updated.status.observed_generation == current.metadata.generation
print("update status as the controller: 200")
