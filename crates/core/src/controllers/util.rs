//! Small helpers shared by the controllers: the resources they name,
//! quantities and kube's name hashing. Metadata readers are [`crate::api::meta`]'s, request
//! builders [`crate::api::ApiRequest`]'s and condition setters [`crate::conditions`]'.

use crate::json::path;
use crate::json::Value;

use crate::api::meta;
use crate::api::meta::JsonPointer;
use crate::api::quantity::{cpu_millis, memory_bytes};
use crate::api::{ApiResult, GroupResource, StatusReason};
use crate::runtime::{Ctx, EventNote, EventType, ObjectRef};

// `scenario::compile` reads names through this old path.
pub use crate::api::meta::name;

pub fn deployments() -> GroupResource {
    crate::group_resource!("apps", "deployments")
}
pub fn replicasets() -> GroupResource {
    crate::group_resource!("apps", "replicasets")
}
pub fn pods() -> GroupResource {
    crate::group_resource!("", "pods")
}
pub fn nodes() -> GroupResource {
    crate::group_resource!("", "nodes")
}
pub fn configmaps() -> GroupResource {
    crate::group_resource!("", "configmaps")
}
pub fn hpas() -> GroupResource {
    crate::group_resource!("autoscaling", "horizontalpodautoscalers")
}
pub fn jobs() -> GroupResource {
    crate::group_resource!("batch", "jobs")
}
pub fn databases() -> GroupResource {
    crate::group_resource!("example.com", "databases")
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
        .at(path!("/spec/containers"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        cpu += c
            .at(path!("/resources/requests/cpu"))
            .map_or(missing.0, cpu_millis);
        mem += c
            .at(path!("/resources/requests/memory"))
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

/// Sorts `v` by `less` as a stable merge sort that never panics: kube's orderings such as
/// `ActivePodsWithRanks.Less` (logarithmic buckets with a UID tie-break) are not strict weak
/// orders, which Go's `sort.Sort` tolerates and Rust's `sort_by` may refuse with a panic. For
/// a consistent `less` the result is the one `sort_by` gives (both are stable).
pub fn sort_by_less<T: Clone>(v: &mut [T], less: impl Fn(&T, &T) -> bool) {
    if v.len() < 2 {
        return;
    }
    let mut buf: Vec<T> = v.to_vec();
    merge_sort(v, &mut buf, &less);
}

fn merge_sort<T: Clone>(v: &mut [T], buf: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    let mid = n / 2;
    merge_sort(&mut v[..mid], &mut buf[..mid], less);
    merge_sort(&mut v[mid..], &mut buf[mid..], less);
    buf[..n].clone_from_slice(v);
    let (left, right) = buf[..n].split_at(mid);
    let (mut i, mut j) = (0, 0);
    for slot in v.iter_mut() {
        // Take from the right only when it is strictly less: equal elements keep their order.
        let take_right = j < right.len() && (i == left.len() || less(&right[j], &left[i]));
        if take_right {
            *slot = right[j].clone();
            j += 1;
        } else {
            *slot = left[i].clone();
            i += 1;
        }
    }
}

#[cfg(test)]
mod sort_tests {
    use super::sort_by_less;

    #[test]
    fn stable_and_ordered_for_a_consistent_less() {
        let mut v = vec![(3, 'a'), (1, 'b'), (3, 'c'), (2, 'd'), (1, 'e')];
        sort_by_less(&mut v, |a, b| a.0 < b.0);
        assert_eq!(v, vec![(1, 'b'), (1, 'e'), (2, 'd'), (3, 'a'), (3, 'c')]);
    }

    #[test]
    fn an_inconsistent_less_still_sorts_without_panicking() {
        // A cycle (0 < 1 < 2 < 0), as a UID tie-break inside time buckets can make.
        let less = |a: &u32, b: &u32| (a + 1) % 3 == *b % 3;
        let mut v: Vec<u32> = (0..300).collect();
        sort_by_less(&mut v, less);
        let mut sorted = v.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..300).collect::<Vec<_>>(),
            "a permutation of the input"
        );
    }
}

/// What a controller did to a pod, for its event.
#[derive(Clone, Copy)]
pub enum PodOp<'a> {
    Create,
    Delete(&'a str),
}

/// `RealPodControl`'s events on the owner (`owner_ref`: its apiVersion and kind) [pkg/controller/controller_utils.go
/// `createPods`, `DeletePod`]: `SuccessfulCreate` with the created pod's name or `FailedCreate`
/// with the error (none when the namespace is terminating); `SuccessfulDelete`, or
/// `FailedDelete` unless the pod was already gone.
pub fn record_pod_control(
    ctx: &mut Ctx<'_>,
    owner_ref: (&str, &str),
    owner: &Value,
    op: PodOp<'_>,
    result: &ApiResult,
) {
    let (event_type, reason, message) = match (op, result) {
        (PodOp::Create, Ok(pod)) => (
            EventType::Normal,
            "SuccessfulCreate",
            format!("Created pod: {}", meta::name(pod)),
        ),
        // `HasStatusCause(err, NamespaceTerminatingCause)`: the refusal NamespaceLifecycle
        // gives in a terminating namespace.
        (PodOp::Create, Err(e)) if e.namespace_terminating() => return,
        (PodOp::Create, Err(e)) => (
            EventType::Warning,
            "FailedCreate",
            format!("Error creating: {}", e.message),
        ),
        (PodOp::Delete(pod), Ok(_)) => (
            EventType::Normal,
            "SuccessfulDelete",
            format!("Deleted pod: {pod}"),
        ),
        (PodOp::Delete(_), Err(e)) if e.reason == StatusReason::NotFound => return,
        (PodOp::Delete(_), Err(e)) => (
            EventType::Warning,
            "FailedDelete",
            format!("Error deleting: {}", e.message),
        ),
    };
    let regarding = ObjectRef::to(owner, owner_ref.0, owner_ref.1);
    ctx.record(EventNote::new(regarding, event_type, reason, message));
}

/// `v` with every map's keys in order, as Go marshals a `map[string]interface{}` (what a
/// ControllerRevision's data holds).
pub fn sort_keys(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&crate::json::Key> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sort_keys(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sort_keys).collect()),
        other => other.clone(),
    }
}
