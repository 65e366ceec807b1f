//! The scheduler: binds Pods to Nodes whose allocatable CPU, memory and pod count fit the Pod's
//! requests, scored as kube 1.32's default profile scores them where the simulation has the
//! inputs: NodeResourcesFit (LeastAllocated over CPU and memory, weight 1 each, with 100m/200Mi
//! for containers that request nothing) plus NodeResourcesBalancedAllocation, each weight 1;
//! among the best nodes one is picked at random from the world's seeded RNG (`selectHost`'s
//! reservoir sampling). The other default score plugins give every simulated node the same score
//! (no taints, affinities, topology labels or image sizes; docs/fidelity.md). A Pod that fits nowhere gets
//! `PodScheduled=False`, reason `Unschedulable`, with kube's `0/N nodes are available: ...`
//! message, and is retried when a Node changes or a Pod goes away.
//!
//! Binding posts a `v1/Binding` to the namespace's `bindings` collection (kube-scheduler posts to
//! `pods/NAME/binding`; see docs/api-server.md); the API server sets `spec.nodeName` and
//! `PodScheduled=True`, as kube's binding REST does.

use std::collections::BTreeMap;
use std::sync::Arc;

use imbl::{OrdMap, OrdSet};
use rand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::util::{self, nodes, pods};
use crate::api::meta::{self, str_at, JsonPointer};
use crate::api::{ApiRequest, GroupResource, ObjectKey, StatusReason, WatchEvent, WatchEventType};
use crate::conditions::{self, Cond};
use crate::runtime::client;
use crate::runtime::informer::{pod_is_active, Informer};
use crate::runtime::{
    Ctx, EventApi, EventNote, EventType, ObjectRef, ReconcileAction, ReconcileError, Reconciler,
};

/// Retry interval for unschedulable pods (kube's podMaxBackoffDuration is 10 s).
pub const UNSCHEDULABLE_RETRY_MS: u64 = 10_000;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub cpu_millis: u64,
    pub memory_bytes: u64,
    pub pods: u64,
    /// The same requests with the scheduler's defaults for containers that request nothing
    /// (`NonZeroRequested`), which LeastAllocated scores.
    pub nonzero_cpu_millis: u64,
    pub nonzero_memory_bytes: u64,
}

impl Usage {
    fn add(&mut self, u: Usage) {
        self.cpu_millis += u.cpu_millis;
        self.memory_bytes += u.memory_bytes;
        self.pods += u.pods;
        self.nonzero_cpu_millis += u.nonzero_cpu_millis;
        self.nonzero_memory_bytes += u.nonzero_memory_bytes;
    }

    fn remove(&mut self, u: Usage) {
        self.cpu_millis = self.cpu_millis.saturating_sub(u.cpu_millis);
        self.memory_bytes = self.memory_bytes.saturating_sub(u.memory_bytes);
        self.pods = self.pods.saturating_sub(u.pods);
        self.nonzero_cpu_millis = self.nonzero_cpu_millis.saturating_sub(u.nonzero_cpu_millis);
        self.nonzero_memory_bytes = self
            .nonzero_memory_bytes
            .saturating_sub(u.nonzero_memory_bytes);
    }
}

/// kube's `framework.MaxNodeScore`.
const MAX_NODE_SCORE: u64 = 100;

/// NodeResourcesFit's LeastAllocated score [pkg/scheduler/framework/plugins/noderesources
/// least_allocated.go leastResourceScorer, leastRequestedScore]: per resource
/// `(capacity - requested) * 100 / capacity` (0 when over capacity), averaged with weight 1
/// each over the resources the node has; `requested` counts the defaults for request-less
/// containers.
fn least_allocated(requested: [u64; 2], allocatable: [u64; 2]) -> u64 {
    let (mut score, mut weights) = (0, 0);
    for (r, a) in requested.into_iter().zip(allocatable) {
        if a == 0 {
            continue;
        }
        score += if r > a {
            0
        } else {
            (a - r) * MAX_NODE_SCORE / a
        };
        weights += 1;
    }
    score.checked_div(weights).unwrap_or(0)
}

/// NodeResourcesBalancedAllocation's score [balanced_allocation.go balancedResourceScorer]:
/// `(1 - std) * 100` over the requested fractions (each capped at 1) of CPU and memory, with
/// `std = |f_cpu - f_mem| / 2` for two resources, truncated as Go's `int64(...)`. It uses the
/// real requests (`useRequested: true`), and in 1.32 it still scores pods that request nothing.
fn balanced_allocation(requested: [u64; 2], allocatable: [u64; 2]) -> u64 {
    let fractions: Vec<f64> = requested
        .into_iter()
        .zip(allocatable)
        .filter(|(_, a)| *a != 0)
        .map(|(r, a)| (r as f64 / a as f64).min(1.0))
        .collect();
    let std = match fractions.as_slice() {
        [a, b] => ((a - b) / 2.0).abs(),
        _ => 0.0,
    };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as u64
}

#[derive(Clone, Debug, Default)]
pub struct Scheduler {
    /// Requests of pods bound to each node, from the cache.
    used: OrdMap<String, Usage>,
    /// Pods this scheduler bound that its cache has not seen bound yet (kube's assume cache).
    assumed: OrdMap<ObjectKey, (String, Usage)>,
    /// Sum of the assumed pods' requests per node.
    assumed_used: OrdMap<String, Usage>,
    /// Pods waiting for a node.
    pending: OrdSet<ObjectKey>,
}

fn usage_of(pod: &Value) -> Usage {
    let (cpu_millis, memory_bytes) = util::pod_requests(pod);
    let (nonzero_cpu_millis, nonzero_memory_bytes) = util::pod_nonzero_requests(pod);
    Usage {
        cpu_millis,
        memory_bytes,
        pods: 1,
        nonzero_cpu_millis,
        nonzero_memory_bytes,
    }
}

fn bound_node(pod: &Value) -> Option<&str> {
    let n = str_at(pod, "/spec/nodeName");
    (!n.is_empty() && pod_is_active(pod)).then_some(n)
}

impl Scheduler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Pods bound by this scheduler that its cache has not yet seen bound.
    pub fn assumed_count(&self) -> usize {
        self.assumed.len()
    }

    /// Pods waiting for a node.
    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }

    fn add_usage(&mut self, node: &str, u: Usage, sign: i8) {
        let e = self.used.entry(node.to_owned()).or_default();
        if sign > 0 {
            e.add(u);
        } else {
            e.remove(u);
        }
    }

    fn usage(&self, node: &str) -> Usage {
        let mut u = self.used.get(node).copied().unwrap_or_default();
        if let Some(a) = self.assumed_used.get(node) {
            u.add(*a);
        }
        u
    }

    fn assume(&mut self, key: ObjectKey, node: String, u: Usage) {
        self.assumed_used.entry(node.clone()).or_default().add(u);
        self.assumed.insert(key, (node, u));
    }

    fn forget_assumed(&mut self, key: &ObjectKey) {
        if let Some((node, u)) = self.assumed.remove(key) {
            if let Some(e) = self.assumed_used.get_mut(&node) {
                e.remove(u);
            }
        }
    }
}

/// kube's unschedulable message: `0/3 nodes are available: 3 Insufficient cpu.` with reasons
/// sorted, plus the preemption suffix the default profile adds.
pub fn unschedulable_message(total_nodes: usize, reasons: &BTreeMap<String, usize>) -> String {
    if total_nodes == 0 {
        return "no nodes available to schedule pods".into();
    }
    // `FitError.Error`: the "<count> <reason>" strings, sorted as strings.
    let mut parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
    parts.sort();
    format!(
        "0/{total_nodes} nodes are available: {}. preemption: 0/{total_nodes} nodes are available: {total_nodes} No preemption victims found for incoming pod.",
        parts.join(", ")
    )
}

/// Whether a pod changed beyond its status, resourceVersion, generation, managedFields and
/// finalizers (`isPodUpdated`'s `strip`).
fn is_pod_updated(old: &Value, new: &Value) -> bool {
    let strip = |p: &Value| {
        let mut meta = p.get("metadata").cloned().unwrap_or(Value::Null);
        if let Some(m) = meta.as_object_mut() {
            for k in [
                "resourceVersion",
                "generation",
                "managedFields",
                "finalizers",
            ] {
                m.remove(k);
            }
        }
        meta
    };
    old.get("spec") != new.get("spec") || strip(old) != strip(new)
}

/// `truncateMessage` [pkg/scheduler/schedule_one.go]: an event note longer than 1024 bytes is
/// cut, ending in ` ...`.
fn truncate_message(message: &str) -> String {
    const MAX: usize = 1024;
    const SUFFIX: &str = " ...";
    if message.len() <= MAX {
        return message.to_owned();
    }
    let mut end = MAX - SUFFIX.len();
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{SUFFIX}", &message[..end])
}

impl Reconciler for Scheduler {
    fn name(&self) -> String {
        "scheduler".into()
    }

    /// kube-scheduler records through events.k8s.io/v1 as its profile's scheduler name, the
    /// instance being `<name>-<hostname>`; the simulated scheduler runs on a control-plane host
    /// named `control-plane`.
    fn event_api(&self) -> Option<EventApi> {
        Some(EventApi::EventsV1 {
            controller: "default-scheduler".into(),
            instance: "default-scheduler-control-plane".into(),
        })
    }

    fn principal(&self) -> String {
        crate::api::principals::SCHEDULER.into()
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        *gr == pods() || *gr == nodes()
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        _cache: &Informer,
    ) -> Vec<ObjectKey> {
        if ev.key.gr == nodes() {
            return self.pending.iter().cloned().collect();
        }
        if let Some(o) = old {
            if let Some(n) = bound_node(o) {
                self.add_usage(n, usage_of(o), -1);
            }
        }
        let deleted = ev.event_type == WatchEventType::Deleted;
        if !deleted {
            if let Some(n) = bound_node(new) {
                self.add_usage(n, usage_of(new), 1);
            }
        }
        if deleted || !str_at(new, "/spec/nodeName").is_empty() {
            self.forget_assumed(&ev.key);
        }
        let waiting = !deleted && str_at(new, "/spec/nodeName").is_empty() && pod_is_active(new);
        if waiting {
            self.pending.insert(ev.key.clone());
            // `isPodUpdated` [pkg/scheduler/eventhandlers.go]: an update of the status alone
            // (such as the scheduler's own PodScheduled=False) does not queue the pod again.
            if old.is_some_and(|o| !is_pod_updated(o, new)) {
                return Vec::new();
            }
            return vec![ev.key.clone()];
        }
        self.pending.remove(&ev.key);
        let freed =
            old.is_some_and(|o| bound_node(o).is_some()) && (deleted || bound_node(new).is_none());
        if freed {
            return self.pending.iter().cloned().collect();
        }
        Vec::new()
    }

    fn reset(&mut self) {
        self.assumed = OrdMap::new();
        self.assumed_used = OrdMap::new();
    }

    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let Some(pod) = ctx.cache.get(key).cloned() else {
            return Ok(ReconcileAction::AwaitChange);
        };
        if !str_at(&pod, "/spec/nodeName").is_empty()
            || !pod_is_active(&pod)
            || self.assumed.contains_key(key)
        {
            return Ok(ReconcileAction::AwaitChange);
        }
        let want = usage_of(&pod);
        let node_gr = nodes();
        // selectHost: the highest total score; among equals, reservoir sampling.
        let mut best: Option<(u64, String)> = None;
        let mut best_count = 0u32;
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let mut total = 0;
        for node in ctx.cache.list(&node_gr) {
            total += 1;
            let name = meta::name(node).to_owned();
            let alloc = |f: &str| node.at(&format!("/status/allocatable/{f}"));
            let cpu = alloc("cpu").map_or(u64::MAX, crate::api::quantity::cpu_millis);
            let mem = alloc("memory").map_or(u64::MAX, crate::api::quantity::memory_bytes);
            let max_pods = alloc("pods").map_or(110, |v| match v {
                Value::String(s) => s.parse().unwrap_or(110),
                other => other.as_u64().unwrap_or(110),
            });
            let used = self.usage(&name);
            let mut fits = true;
            if used.pods + 1 > max_pods {
                *reasons.entry("Too many pods".into()).or_default() += 1;
                fits = false;
            }
            if used.cpu_millis + want.cpu_millis > cpu {
                *reasons.entry("Insufficient cpu".into()).or_default() += 1;
                fits = false;
            }
            if used.memory_bytes + want.memory_bytes > mem {
                *reasons.entry("Insufficient memory".into()).or_default() += 1;
                fits = false;
            }
            if fits {
                let capacity = |q: u64| if q == u64::MAX { 0 } else { q };
                let allocatable = [capacity(cpu), capacity(mem)];
                let fit = least_allocated(
                    [
                        used.nonzero_cpu_millis + want.nonzero_cpu_millis,
                        used.nonzero_memory_bytes + want.nonzero_memory_bytes,
                    ],
                    allocatable,
                );
                let balanced = balanced_allocation(
                    [
                        used.cpu_millis + want.cpu_millis,
                        used.memory_bytes + want.memory_bytes,
                    ],
                    allocatable,
                );
                let score = fit + balanced;
                match &best {
                    Some((s, _)) if score < *s => {}
                    Some((s, _)) if score == *s => {
                        best_count += 1;
                        if ctx.rng.random_range(0..best_count) == 0 {
                            best = Some((score, name));
                        }
                    }
                    _ => {
                        best = Some((score, name));
                        best_count = 1;
                    }
                }
            }
        }
        let principal = self.principal();
        let Some((_, node)) = best else {
            let message = unschedulable_message(total, &reasons);
            // handleSchedulingFailure: the event first (its note cut to 1024 bytes by
            // `truncateMessage`), then the PodScheduled condition.
            ctx.record(
                EventNote::new(
                    ObjectRef::to(&pod, "v1", "Pod"),
                    EventType::Warning,
                    "FailedScheduling",
                    truncate_message(&message),
                )
                .action("Scheduling"),
            );
            let mut status = pod
                .get("status")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({}));
            let before = status.clone();
            conditions::set_pod_condition(
                &mut status,
                Cond {
                    type_: "PodScheduled",
                    status: "False",
                    reason: "Unschedulable",
                    message: &message,
                },
                ctx.now,
            );
            if status != before {
                let mut body = pod.as_ref().clone();
                body["status"] = status;
                ctx.send(client::update_status_object(&principal, pods(), body))?;
            }
            return Ok(ReconcileAction::RequeueAfter {
                ms: UNSCHEDULABLE_RETRY_MS,
            });
        };
        let bind = ApiRequest::bind(&principal, &key.namespace, &key.name, &node);
        match ctx.send(bind) {
            Ok(_) => {}
            Err(e) if e.reason == StatusReason::NotFound => {
                return Ok(ReconcileAction::AwaitChange)
            }
            Err(e) => return Err(e.into()),
        }
        // finishBinding's event on the assumed pod.
        ctx.record(
            EventNote::new(
                ObjectRef::to(&pod, "v1", "Pod"),
                EventType::Normal,
                "Scheduled",
                format!(
                    "Successfully assigned {}/{} to {node}",
                    key.namespace, key.name
                ),
            )
            .action("Binding"),
        );
        self.assume(key.clone(), node, want);
        Ok(ReconcileAction::AwaitChange)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MI: u64 = 1024 * 1024;

    /// Worked from least_allocated.go: a 2-CPU, 4 GiB node with two request-less pods (counted as
    /// 100m/200Mi each) scoring a third: cpu (2000-300)*100/2000 = 85, memory
    /// (4096-600)*100/4096 = 85 (85.35 truncated), mean 85.
    #[test]
    fn least_allocated_counts_the_defaults_for_request_less_pods() {
        let (cpu, mem) = util::pod_nonzero_requests(&serde_json::json!({
            "spec": {"containers": [{"name": "app", "image": "nginx"}]}
        }));
        assert_eq!((cpu, mem), (100, 200 * MI));
        assert_eq!(least_allocated([3 * cpu, 3 * mem], [2000, 4096 * MI]), 85);
        assert_eq!(
            least_allocated([2100, 0], [2000, 4096 * MI]),
            50,
            "over capacity scores 0"
        );
        assert_eq!(
            least_allocated([100, 0], [0, 0]),
            0,
            "no allocatable: no score"
        );
    }

    /// Worked from balanced_allocation.go: fractions 500/2000 = 0.25 and 1/8 = 0.125, std 0.0625,
    /// (1 - 0.0625) * 100 = 93.75, truncated to 93; no requests at all balance perfectly.
    #[test]
    fn balanced_allocation_scores_the_spread_between_cpu_and_memory() {
        assert_eq!(balanced_allocation([500, 1024 * MI], [2000, 8192 * MI]), 93);
        assert_eq!(balanced_allocation([0, 0], [2000, 8192 * MI]), 100);
        assert_eq!(
            balanced_allocation([4000, 0], [2000, 8192 * MI]),
            50,
            "fractions cap at 1"
        );
    }

    /// `FitError.Error` sorts the "<count> <reason>" strings, so the count leads.
    #[test]
    fn unschedulable_reasons_are_sorted_as_printed() {
        let mut r = BTreeMap::new();
        r.insert("Insufficient cpu".to_owned(), 2);
        r.insert("Insufficient memory".to_owned(), 1);
        assert!(unschedulable_message(3, &r)
            .starts_with("0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu. "));
    }

    #[test]
    fn the_unschedulable_message_counts_nodes_per_reason() {
        let mut r = BTreeMap::new();
        r.insert("Insufficient cpu".to_owned(), 3);
        assert_eq!(
            unschedulable_message(3, &r),
            "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
        );
    }
}
