//! The EndpointSlice controller in a running cluster, each test worked by hand from kube 1.32's
//! staging/src/k8s.io/endpointslice (`podToEndpoint`, `reconcileByPortMapping`, the placeholder
//! rule of `reconcileByAddressType`) and pkg/controller/endpointslice (`syncService`, the
//! trigger-time tracker): what the slices hold as the pods behind a Service start, fail their
//! readiness probe, recover and terminate.

use std::collections::BTreeMap;

use crate::json::{json, Value};

use super::script::{create_as, patch_as, user};
use super::world::{Input, World};
use crate::api::meta::{self, str_at};
use crate::api::{ApiRequest, ObjectKey};
use crate::conditions;
use crate::controllers::endpointslice::{endpointslices, services};
use crate::controllers::util::{deployments, pods, replicasets};
use crate::controllers::ImageBehaviour;
use crate::engine::ClusterConfig;

fn world() -> World {
    let mut config = ClusterConfig::default();
    config.controllers.endpointslice = true;
    config
        .env
        .images
        .insert("web:1".into(), ImageBehaviour::Ok { pull_ms: 1_000 });
    World::new(config)
}

/// Deployment `web`: 3 replicas of `web:1`, container port `http` 8080 probed over HTTP every
/// 5 s, maxUnavailable 0.
fn web_deployment() -> Value {
    let mut d = super::script::deployment("default", "web", 3, "web:1");
    d["spec"]["strategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}});
    let c = &mut d["spec"]["template"]["spec"]["containers"][0];
    c["ports"] = json!([{"name": "http", "containerPort": 8080}]);
    c["readinessProbe"] =
        json!({"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 5});
    d
}

fn service(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": spec})
}

fn web_service() -> Value {
    service(
        json!({"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}),
    )
}

/// The Deployment and the Service, 30 s on: every pod ready.
fn running_web() -> World {
    let mut w = world();
    w.apply(create_as(
        "alice",
        deployments(),
        "default",
        web_deployment(),
    ));
    w.apply(create_as("alice", services(), "default", web_service()));
    w.advance(30_000);
    w
}

fn slices(w: &World) -> Vec<Value> {
    w.objects()
        .filter(|(k, _)| k.gr == endpointslices())
        .map(|(_, v)| v.as_ref().clone())
        .collect()
}

fn the_slice(w: &World) -> Value {
    let all = slices(w);
    assert_eq!(all.len(), 1, "one slice: {all:?}");
    all[0].clone()
}

fn web_pods(w: &World) -> Vec<Value> {
    w.objects()
        .filter(|(k, _)| k.gr == pods())
        .map(|(_, p)| p.as_ref().clone())
        .filter(|p| str_at(p, "/metadata/labels/app") == "web")
        .collect()
}

/// Each endpoint's pod name and (ready, serving, terminating).
fn conditions_by_pod(slice: &Value) -> BTreeMap<String, (bool, bool, bool)> {
    slice["endpoints"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let c = |k: &str| e["conditions"][k].as_bool().unwrap_or(false);
            (
                str_at(e, "/targetRef/name").to_owned(),
                (c("ready"), c("serving"), c("terminating")),
            )
        })
        .collect()
}

fn condition(obj: &Value, ty: &str) -> (String, String) {
    obj.get("status")
        .and_then(|s| conditions::find_condition(s, ty))
        .map(|c| {
            (
                str_at(c, "/status").to_owned(),
                str_at(c, "/reason").to_owned(),
            )
        })
        .unwrap_or_default()
}

fn set_image(w: &mut World, behaviour: ImageBehaviour) {
    w.apply(Input::SetImage {
        image: "web:1".into(),
        behaviour,
    });
}

/// The whole arc of the gallery lesson. Running pods: one slice `web-<5>` of the Service
/// (generateName, labels, controller ownerReference), the named targetPort resolved to 8080,
/// one endpoint per pod with its IP, node and targetRef, all ready and serving. The probe fails:
/// after failureThreshold (3) failed probes each pod's Ready goes False, podToEndpoint gives
/// serving false and so ready false (not terminating), the ReplicaSet counts no available pod
/// and the Deployment, which may lose none (maxUnavailable 0), reports
/// Available=False/MinimumReplicasUnavailable. The probe passes again: all back.
#[test]
fn a_services_endpoints_follow_pod_readiness_through_a_failing_probe() {
    let mut w = running_web();
    let slice = the_slice(&w);
    let svc = w
        .object(&ObjectKey::new(services(), "default", "web"))
        .cloned()
        .unwrap_or_default();
    let name = meta::name(&slice);
    assert!(
        name.len() == "web-".len() + 5 && name.starts_with("web-"),
        "{name}"
    );
    assert_eq!(
        slice["metadata"]["labels"],
        json!({"app": "web", "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
            "kubernetes.io/service-name": "web"})
    );
    assert_eq!(
        slice["metadata"]["ownerReferences"],
        json!([{"apiVersion": "v1", "kind": "Service", "name": "web", "uid": meta::uid(&svc),
            "controller": true, "blockOwnerDeletion": true}])
    );
    assert_eq!(slice["addressType"], "IPv4");
    assert_eq!(
        slice["ports"],
        json!([{"name": "http", "protocol": "TCP", "port": 8080}])
    );
    let pods = web_pods(&w);
    assert_eq!(pods.len(), 3);
    let endpoints = slice["endpoints"].as_array().cloned().unwrap_or_default();
    assert_eq!(endpoints.len(), 3);
    for p in &pods {
        let ep = endpoints
            .iter()
            .find(|e| str_at(e, "/targetRef/name") == meta::name(p))
            .cloned()
            .unwrap_or_default();
        assert_eq!(ep["addresses"], json!([str_at(p, "/status/podIP")]));
        assert_eq!(ep["nodeName"], p["spec"]["nodeName"]);
        assert_eq!(
            ep["targetRef"],
            json!({"kind": "Pod", "namespace": "default", "name": meta::name(p), "uid": meta::uid(p)})
        );
        assert_eq!(
            ep["conditions"],
            json!({"ready": true, "serving": true, "terminating": false})
        );
    }

    set_image(&mut w, ImageBehaviour::ProbeFails);
    w.advance(25_000);
    let slice = the_slice(&w);
    assert_eq!(meta::name(&slice), name, "the slice is updated in place");
    assert!(conditions_by_pod(&slice)
        .values()
        .all(|c| *c == (false, false, false)));
    for p in web_pods(&w) {
        assert_eq!(
            condition(&p, "Ready"),
            ("False".into(), "ContainersNotReady".into())
        );
    }
    // The annotation carries the earliest Ready transition this sync had not seen.
    let earliest = web_pods(&w)
        .iter()
        .filter_map(|p| {
            p.get("status")
                .and_then(|s| conditions::find_condition(s, "Ready"))
                .map(|c| str_at(c, "/lastTransitionTime").to_owned())
        })
        .max()
        .unwrap_or_default();
    assert_eq!(
        str_at(
            &slice,
            "/metadata/annotations/endpoints.kubernetes.io~1last-change-trigger-time"
        ),
        earliest,
        "the last sync saw only the last pod's transition"
    );
    let rs = w
        .objects()
        .find(|(k, _)| k.gr == replicasets())
        .map(|(_, v)| v.as_ref().clone())
        .unwrap_or_default();
    assert_eq!(rs["status"].get("availableReplicas"), None);
    assert_eq!(rs["status"].get("readyReplicas"), None);
    let dep = w
        .object(&ObjectKey::new(deployments(), "default", "web"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        condition(&dep, "Available"),
        ("False".into(), "MinimumReplicasUnavailable".into())
    );

    set_image(&mut w, ImageBehaviour::Ok { pull_ms: 1_000 });
    w.advance(10_000);
    assert!(conditions_by_pod(&the_slice(&w))
        .values()
        .all(|c| *c == (true, true, false)));
    let trace = w.trace_text();
    assert!(
        !trace.contains("endpointslice-controller reconcile default/web -> error"),
        "no failed sync: the tracker keeps the controller from acting on a stale cache"
    );
}

/// A Service that selects no pod gets one placeholder slice without endpoints or ports
/// (stored as null); a later sync finds it equal to the placeholder it would create and keeps
/// it. A label added to the Service is mirrored onto the slice, which bumps its generation.
#[test]
fn a_service_selecting_nothing_keeps_one_placeholder_slice() {
    let mut w = world();
    w.apply(create_as(
        "alice",
        services(),
        "default",
        service(json!({"selector": {"app": "nothing"}, "ports": [{"port": 80}]})),
    ));
    w.advance(2_000);
    let slice = the_slice(&w);
    assert_eq!(slice["endpoints"], Value::Null);
    assert_eq!(slice["ports"], Value::Null);
    assert_eq!(slice["metadata"]["generation"], 1);
    // The Service's creation is the first sync's trigger time.
    assert_eq!(
        str_at(
            &slice,
            "/metadata/annotations/endpoints.kubernetes.io~1last-change-trigger-time"
        ),
        "2025-01-01T00:00:00Z"
    );
    w.apply(patch_as(
        "alice",
        services(),
        "default",
        "web",
        json!({"metadata": {"labels": {"team": "a"}}}),
    ));
    w.advance(2_000);
    let after = the_slice(&w);
    assert_eq!(meta::name(&after), meta::name(&slice));
    assert_eq!(after["metadata"]["labels"]["team"], "a");
    assert_eq!(after["metadata"]["generation"], 2);
    assert!(!w.trace_text().contains("delete endpointslices"));
}

/// `publishNotReadyAddresses`: ready is true whatever the pod's readiness; serving still
/// follows it. A numeric targetPort needs no container port.
#[test]
fn published_not_ready_addresses_are_ready_but_not_serving() {
    let mut config = ClusterConfig::default();
    config.controllers.endpointslice = true;
    config
        .env
        .images
        .insert("web:1".into(), ImageBehaviour::ProbeFails);
    let mut w = World::new(config);
    w.apply(create_as(
        "alice",
        deployments(),
        "default",
        web_deployment(),
    ));
    w.apply(create_as(
        "alice",
        services(),
        "default",
        service(
            json!({"selector": {"app": "web"}, "publishNotReadyAddresses": true,
            "ports": [{"name": "http", "port": 80, "targetPort": 9090}]}),
        ),
    ));
    w.advance(20_000);
    let slice = the_slice(&w);
    assert_eq!(
        slice["ports"],
        json!([{"name": "http", "protocol": "TCP", "port": 9090}])
    );
    let by_pod = conditions_by_pod(&slice);
    assert_eq!(by_pod.len(), 3);
    assert!(by_pod.values().all(|c| *c == (true, false, false)));
}

/// A deleted pod stays in the slice while it terminates (ShouldPodBeInEndpoints includes
/// terminating pods): terminating true, ready false, serving its readiness while the kubelet
/// stops it (half a second here); once the pod is gone, its endpoint is, and the replacement's appears.
#[test]
fn a_terminating_pod_is_kept_as_terminating_until_it_is_gone() {
    let mut w = running_web();
    let victim = meta::name(&web_pods(&w)[0]).to_owned();
    w.apply(user(ApiRequest::delete(
        "alice",
        pods(),
        "default",
        &victim,
    )));
    // The simulated container stops 0.5 s after the kubelet sees the deletion.
    w.advance(200);
    let by_pod = conditions_by_pod(&the_slice(&w));
    assert_eq!(by_pod.get(&victim), Some(&(false, true, true)));
    w.advance(40_000);
    let by_pod = conditions_by_pod(&the_slice(&w));
    assert!(!by_pod.contains_key(&victim));
    assert_eq!(by_pod.len(), 3, "the replacement pod is in: {by_pod:?}");
}

/// A Service without a selector, or of type ExternalName, gets no slice from the controller.
#[test]
fn services_without_a_selector_get_no_slices() {
    let mut w = world();
    w.apply(create_as(
        "alice",
        services(),
        "default",
        service(json!({"ports": [{"port": 80}]})),
    ));
    let mut external = service(
        json!({"type": "ExternalName", "externalName": "example.com",
        "selector": {"app": "web"}}),
    );
    external["metadata"]["name"] = json!("ext");
    w.apply(create_as("alice", services(), "default", external));
    w.advance(5_000);
    assert!(slices(&w).is_empty());
}
