//! Small helpers shared by the controllers: the resources they name, label selectors,
//! quantities and kube's name hashing. Metadata readers are [`crate::api::meta`]'s, request
//! builders [`crate::api::ApiRequest`]'s and condition setters [`crate::conditions`]'.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::api::meta::{string_map, JsonPointer};
use crate::api::quantity::{cpu_millis, memory_bytes};
use crate::api::GroupResource;

// `scenario::compile` reads names through this old path.
pub use crate::api::meta::name;

pub fn deployments() -> GroupResource {
    GroupResource::new("apps", "deployments")
}
pub fn replicasets() -> GroupResource {
    GroupResource::new("apps", "replicasets")
}
pub fn pods() -> GroupResource {
    GroupResource::new("", "pods")
}
pub fn nodes() -> GroupResource {
    GroupResource::new("", "nodes")
}
pub fn configmaps() -> GroupResource {
    GroupResource::new("", "configmaps")
}
pub fn hpas() -> GroupResource {
    GroupResource::new("autoscaling", "horizontalpodautoscalers")
}
pub fn databases() -> GroupResource {
    GroupResource::new("example.com", "databases")
}

/// Whether `labels` satisfy a `matchLabels` selector. An empty selector matches nothing here,
/// as the Deployment and ReplicaSet controllers refuse to act on it.
pub fn selector_matches(selector: &Value, labels: &BTreeMap<String, String>) -> bool {
    let want = string_map(selector.get("matchLabels"));
    !want.is_empty() && want.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// Sum of the containers' CPU (millicores) and memory (bytes) requests of a pod.
pub fn pod_requests(pod: &Value) -> (u64, u64) {
    sum_requests(pod, (0, 0))
}

/// The containers' (CPU millis, memory bytes) requests, counting `missing` for a resource a
/// container does not request.
fn sum_requests(pod: &Value, missing: (u64, u64)) -> (u64, u64) {
    let mut cpu = 0;
    let mut mem = 0;
    for c in pod
        .at("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        cpu += c
            .at("/resources/requests/cpu")
            .map_or(missing.0, cpu_millis);
        mem += c
            .at("/resources/requests/memory")
            .map_or(missing.1, memory_bytes);
    }
    (cpu, mem)
}

/// The scheduler's default for a container that requests no CPU: 100m
/// (`DefaultMilliCPURequest`, pkg/scheduler/util/pod_resources.go).
pub const DEFAULT_MILLI_CPU_REQUEST: u64 = 100;
/// ... and no memory: 200 MiB (`DefaultMemoryRequest`).
pub const DEFAULT_MEMORY_REQUEST: u64 = 200 * 1024 * 1024;

/// A Pod's (CPU millis, memory bytes) requests as the scheduler scores them: a container that
/// does not request a resource counts as the defaults above, so request-less pods still spread
/// [kube 1.32 `resourcehelper.PodRequests` with `NonMissingContainerRequests`, used for the
/// node's `NonZeroRequested` and the pod's score in noderesources].
pub fn pod_nonzero_requests(pod: &Value) -> (u64, u64) {
    sum_requests(pod, (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST))
}
