//! Cluster bootstrap: the serde-friendly [`ClusterConfig`] (nodes, controllers, environment)
//! and building the initial world from it: custom resources registered, RBAC for data-defined
//! controllers, Nodes created as `admin` with their status written by each node's kubelet, and
//! the controllers started.

use crate::api::meta::Fields;
use crate::json::{json, Value};
use imbl::Vector;
use serde::{Deserialize, Serialize};

use super::report::StepReport;
use super::world::{Input, Slot, World};
use crate::api::{ApiRequest, GroupResource, PatchType};
use crate::controllers::declarative::{DeclarativeController, DeclarativeSpec, Step};
use crate::controllers::{
    daemonset::DaemonSetController, database::DatabaseController, deployment::DeploymentController,
    endpointslice::EndpointSliceController, hpa::HpaController, job::JobController,
    kubelet::Kubelet, naive::NaiveController, podgc::PodGcController,
    replicaset::ReplicaSetController, scheduler::Scheduler, statefulset::StatefulSetController,
    util, Controller,
};
use crate::runtime::{Environment, Reconciler};
use crate::time::SimTime;

/// The principal the engine uses to set the cluster up.
pub const ADMIN: &str = "admin";

/// One Node of the simulated cluster.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSpec {
    pub name: String,
    /// CPU quantity, e.g. `4` or `3500m`.
    pub cpu: String,
    /// Memory quantity, e.g. `8Gi`.
    pub memory: String,
    pub pods: u64,
}

impl NodeSpec {
    pub fn new(name: &str, cpu: &str, memory: &str) -> Self {
        NodeSpec {
            name: name.to_owned(),
            cpu: cpu.to_owned(),
            memory: memory.to_owned(),
            pods: 110,
        }
    }
}

/// Which controllers run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControllerSet {
    pub deployment: bool,
    pub replicaset: bool,
    pub scheduler: bool,
    pub kubelets: bool,
    pub hpa: bool,
    /// The Job controller.
    #[serde(default = "yes")]
    pub job: bool,
    pub database: bool,
    /// The DaemonSet controller, with its bootstrap role and binding.
    #[serde(default = "yes")]
    pub daemonset: bool,
    /// The StatefulSet controller, with its bootstrap role and binding.
    #[serde(default = "yes")]
    pub statefulset: bool,
    /// The EndpointSlice controller. Off unless asked for (a scenario that names a Service):
    /// its role, binding and slices would change every other cluster's resourceVersions and
    /// traces; all workload controllers become default-on in one re-record later.
    #[serde(default)]
    pub endpointslice: bool,
    /// The pod garbage collector (kube's podgc, orphaned pods only) from the start. Off by
    /// default for the same reason; the first `Fault::RemoveNode` starts it anyway, as it has
    /// nothing to collect before a node goes.
    #[serde(default)]
    pub pod_gc: bool,
    /// The naive spec-from-status controller, on this resource.
    pub naive: Option<GroupResource>,
    pub declarative: Vec<DeclarativeSpec>,
}

impl Default for ControllerSet {
    fn default() -> Self {
        ControllerSet {
            deployment: true,
            replicaset: true,
            scheduler: true,
            kubelets: true,
            hpa: true,
            job: true,
            database: true,
            daemonset: true,
            statefulset: true,
            endpointslice: false,
            pod_gc: false,
            naive: None,
            declarative: Vec::new(),
        }
    }
}

/// Everything needed to build a world; serde-friendly so scenario files can carry it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterConfig {
    pub seed: u64,
    pub nodes: Vec<NodeSpec>,
    /// Default watch delivery latency for every informer.
    pub watch_latency_ms: u64,
    pub env: Environment,
    pub controllers: ControllerSet,
    /// Generation bumps of a top-level object by controllers within [`super::world::LOOP_WINDOW_MS`] (no
    /// user write in between) that count as a feedback loop.
    pub feedback_loop_threshold: u32,
    /// Custom resources to register: (group, plural, version, kind, status subresource).
    pub custom_resources: Vec<(String, String, String, String, bool)>,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            seed: 1,
            nodes: vec![
                NodeSpec::new("node-1", "4", "8Gi"),
                NodeSpec::new("node-2", "4", "8Gi"),
                NodeSpec::new("node-3", "4", "8Gi"),
            ],
            watch_latency_ms: 5,
            env: Environment::default(),
            controllers: ControllerSet::default(),
            feedback_loop_threshold: 20,
            custom_resources: Vec::new(),
        }
    }
}

impl World {
    /// Builds the cluster: registers resources, creates the Nodes (as `admin`, status written by
    /// each node's kubelet) and starts the controllers.
    pub fn new(config: ClusterConfig) -> World {
        let mut world = World::blank(&config);
        world.provenance.setup = true;
        let c = &config.controllers;
        let mut controllers: Vec<Controller> = Vec::new();
        if c.deployment {
            controllers.push(Controller::Deployment(DeploymentController::new()));
        }
        if c.replicaset {
            controllers.push(Controller::ReplicaSet(ReplicaSetController::new()));
        }
        if c.scheduler {
            controllers.push(Controller::Scheduler(Scheduler::new()));
        }
        if c.kubelets {
            for (i, n) in config.nodes.iter().enumerate() {
                controllers.push(Controller::Kubelet(Kubelet::new(&n.name, i as u32 + 1)));
            }
        }
        if c.daemonset {
            controllers.push(Controller::DaemonSet(DaemonSetController::new()));
        }
        if c.statefulset {
            controllers.push(Controller::StatefulSet(StatefulSetController::new()));
        }
        if c.endpointslice {
            controllers.push(Controller::EndpointSlice(EndpointSliceController::new()));
        }
        if c.pod_gc {
            controllers.push(Controller::PodGc(PodGcController::new()));
        }
        if c.hpa {
            controllers.push(Controller::Hpa(HpaController::new()));
        }
        if c.job {
            controllers.push(Controller::Job(JobController::new()));
        }
        if c.database {
            controllers.push(Controller::Database(DatabaseController::new()));
        }
        if let Some(gr) = &c.naive {
            controllers.push(Controller::Naive(NaiveController::new(gr.clone())));
        }
        for spec in &c.declarative {
            controllers.push(Controller::Declarative(DeclarativeController::new(
                spec.clone(),
            )));
        }
        for controller in controllers {
            world.slots.insert(
                controller.name(),
                Slot::new(controller, config.watch_latency_ms),
            );
        }
        let mut crds = config.custom_resources.clone();
        if c.database || c.naive.as_ref() == Some(&util::databases()) {
            crds.insert(
                0,
                (
                    "example.com".into(),
                    "databases".into(),
                    "v1".into(),
                    "Database".into(),
                    true,
                ),
            );
        }
        for (group, plural, version, kind, status) in &crds {
            world.request_as_setup(ApiRequest::create(
                ADMIN,
                GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions"),
                "",
                crd(group, plural, version, kind, *status),
            ));
        }
        // Service accounts of data-defined controllers get a role for what they touch.
        let mut grants: Vec<(String, String, Vec<GroupResource>)> = Vec::new();
        if let Some(gr) = &c.naive {
            let principal = NaiveController::new(gr.clone()).principal();
            grants.push((
                "converge:naive-controller".into(),
                principal,
                vec![gr.clone()],
            ));
        }
        for spec in &c.declarative {
            let mut resources = vec![spec.parent.clone()];
            for step in &spec.steps {
                if let Step::CreateChild { resource, .. } | Step::WaitReady { resource, .. } = step
                {
                    resources.push(resource.clone());
                }
            }
            grants.push((
                format!("converge:{}", spec.name),
                spec.principal.clone(),
                resources,
            ));
        }
        let mut policy = Vec::new();
        if c.daemonset {
            policy.extend(crate::api::rbac::daemon_set_controller_policy());
        }
        if c.statefulset {
            policy.extend(crate::api::rbac::stateful_set_controller_policy());
        }
        if c.endpointslice {
            policy.extend(crate::api::rbac::endpoint_slice_controller_policy());
        }
        if c.pod_gc {
            policy.extend(crate::api::rbac::pod_gc_controller_policy());
        }
        {
            for obj in policy {
                let gr = if obj.member("kind") == "ClusterRole" {
                    GroupResource::new("rbac.authorization.k8s.io", "clusterroles")
                } else {
                    GroupResource::new("rbac.authorization.k8s.io", "clusterrolebindings")
                };
                world.request_as_setup(ApiRequest::create(ADMIN, gr, "", obj));
            }
        }
        for (role, principal, resources) in grants {
            for (gr, body) in rbac_grant(&role, &principal, &resources) {
                world.request_as_setup(ApiRequest::create(ADMIN, gr, "", body));
            }
        }
        for (i, node) in config.nodes.iter().enumerate() {
            let (obj, status) = node_objects(node, i as u32 + 1);
            world.request_as_setup(ApiRequest::create(ADMIN, util::nodes(), "", obj));
            world.request_as_setup(ApiRequest::patch_status(
                &crate::api::principals::kubelet(&node.name),
                util::nodes(),
                "",
                &node.name,
                PatchType::Merge,
                status,
            ));
        }
        // The set-up is part of the config, not of the replayable input log.
        world.inputs = Vector::new();
        world.provenance.setup = false;
        world
    }

    fn request_as_setup(&mut self, req: ApiRequest) {
        let mut report = StepReport::default();
        self.process_input(Input::Request { request: req }, &mut report);
    }
}

/// A Node as `admin` creates it and the status its kubelet first reports: the node with index
/// `index` (1 for the first) has the address `192.168.0.<10 + index>`.
pub(super) fn node_objects(node: &NodeSpec, index: u32) -> (Value, Value) {
    let obj = json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": node.name, "labels": {"kubernetes.io/hostname": node.name}},
        "spec": {},
    });
    let resources = json!({"cpu": node.cpu, "memory": node.memory, "pods": node.pods.to_string()});
    // What a kubelet reports about its machine (the address its pods get as hostIP) [pkg/kubelet/nodestatus setters.go
    // NodeAddress, VersionInfo, MachineInfo]; the runtime and OS are the simulation's.
    let machine = format!(
        "{:032x}",
        u128::from(crate::api::names::fnv32a(node.name.as_bytes()))
    );
    let status = json!({"status": {
        "capacity": resources,
        "allocatable": resources,
        "addresses": [
            {"type": "InternalIP", "address": format!("192.168.0.{}", index + 10)},
            {"type": "Hostname", "address": node.name},
        ],
        "nodeInfo": {
            "machineID": machine, "systemUUID": machine, "bootID": machine,
            "kernelVersion": "converge", "osImage": "Converge simulated node",
            "containerRuntimeVersion": "converge://simulated",
            "kubeletVersion": format!("v{}.0", crate::KUBERNETES_VERSION),
            "kubeProxyVersion": format!("v{}.0", crate::KUBERNETES_VERSION),
            "operatingSystem": "linux", "architecture": "amd64",
        },
        "conditions": [{
            "type": "Ready", "status": "True", "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
            "lastHeartbeatTime": SimTime::ZERO.rfc3339(),
            "lastTransitionTime": SimTime::ZERO.rfc3339(),
        }],
    }});
    (obj, status)
}

/// A CustomResourceDefinition for `plural.group`, schemaless, optionally with `/status`.
fn crd(group: &str, plural: &str, version: &str, kind: &str, status: bool) -> Value {
    let mut v = json!({
        "name": version, "served": true, "storage": true,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
    });
    if status {
        v["subresources"] = json!({"status": {}});
    }
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {
            "group": group,
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind, "listKind": format!("{kind}List")},
            "scope": "Namespaced",
            "versions": [v],
        },
    })
}

/// A ClusterRole allowing everything on `resources` (and their `/status`) and its binding to
/// `principal` (a service account `system:serviceaccount:ns:name`, or a user).
fn rbac_grant(
    role: &str,
    principal: &str,
    resources: &[GroupResource],
) -> Vec<(GroupResource, Value)> {
    let rules: Vec<Value> = resources
        .iter()
        .map(|gr| {
            json!({"apiGroups": [gr.group], "resources": [gr.resource, format!("{}/status", gr.resource)], "verbs": ["*"]})
        })
        .collect();
    let subject = match principal
        .strip_prefix("system:serviceaccount:")
        .and_then(|r| r.split_once(':'))
    {
        Some((ns, name)) => json!({"kind": "ServiceAccount", "name": name, "namespace": ns}),
        None => json!({"kind": "User", "name": principal, "apiGroup": "rbac.authorization.k8s.io"}),
    };
    vec![
        (
            GroupResource::new("rbac.authorization.k8s.io", "clusterroles"),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": role}, "rules": rules}),
        ),
        (
            GroupResource::new("rbac.authorization.k8s.io", "clusterrolebindings"),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": role},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": [subject]}),
        ),
    ]
}

fn yes() -> bool {
    true
}
