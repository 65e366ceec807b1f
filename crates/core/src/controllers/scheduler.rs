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

use crate::api::meta::Fields;
use crate::json::path;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::json::Value;
use imbl::{OrdMap, OrdSet};
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::node_predicates;
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

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
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
    let n = str_at(pod, path!("/spec/nodeName"));
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

/// Why one node failed the filters: the failing plugin's reasons, and whether preemption could
/// help there (`Unschedulable`) or not (`UnschedulableAndUnresolvable`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeFailure {
    pub reasons: Vec<String>,
    pub unresolvable: bool,
}

/// What the scheduling cycle learnt about the nodes it could not use (kube's `Diagnosis`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnosis {
    /// A PreFilter plugin's refusal, which stands for every node (`PreFilterMsg`).
    pub pre_filter_msg: Option<String>,
    /// Each failed node's status (`NodeToStatus`), nodes a PreFilter result left out included.
    pub nodes: Vec<NodeFailure>,
}

/// `sortReasonsHistogram` [pkg/scheduler/framework/types.go]: `"<count> <reason>"` strings,
/// sorted as strings, so the count leads.
fn histogram<'a>(reasons: impl Iterator<Item = &'a str>) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for r in reasons {
        *counts.entry(r).or_default() += 1;
    }
    let mut parts: Vec<String> = counts.iter().map(|(r, n)| format!("{n} {r}")).collect();
    parts.sort();
    parts.join(", ")
}

/// kube's unschedulable message [`FitError.Error`, pkg/scheduler/framework/types.go]:
/// `0/3 nodes are available: <reasons>.` with the reasons counted per node, or the PreFilter
/// message alone, then the default profile's preemption summary [`nodesWherePreemptionMightHelp`,
/// pkg/scheduler/framework/preemption/preemption.go]: nodes that failed with
/// `UnschedulableAndUnresolvable` count as `Preemption is not helpful for scheduling`, the others
/// as `No preemption victims found for incoming pod` (no pod here has a lower priority to evict).
pub fn unschedulable_message(total_nodes: usize, diagnosis: &Diagnosis) -> String {
    if total_nodes == 0 {
        return "no nodes available to schedule pods".into();
    }
    let filters = match &diagnosis.pre_filter_msg {
        Some(m) => m.clone(),
        None => histogram(
            diagnosis
                .nodes
                .iter()
                .flat_map(|n| n.reasons.iter().map(String::as_str)),
        ),
    };
    let preemption = histogram(diagnosis.nodes.iter().map(|n| {
        if n.unresolvable || diagnosis.pre_filter_msg.is_some() {
            "Preemption is not helpful for scheduling"
        } else {
            "No preemption victims found for incoming pod"
        }
    }));
    format!(
        "0/{total_nodes} nodes are available: {filters}. preemption: 0/{total_nodes} nodes are available: {preemption}."
    )
}

/// `ErrReasonUnschedulable` [plugins/nodeunschedulable].
pub const ERR_REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";
/// `ErrReasonPod` [plugins/nodeaffinity].
pub const ERR_REASON_NODE_AFFINITY: &str = "node(s) didn't match Pod's node affinity/selector";
/// `errReasonConflict` [plugins/nodeaffinity].
pub const ERR_REASON_CONFLICT: &str = "pod affinity terms conflict";

/// NodeAffinity's `PreFilter` [plugins/nodeaffinity/node_affinity.go]: when every required term
/// names nodes with `matchFields metadata.name In`, only those nodes (the union over terms of
/// each term's intersection) are filtered. `Ok(None)`: every node; `Err`: the terms conflict.
pub fn pre_filter_node_names(
    pod_spec: &Value,
) -> Result<Option<std::collections::BTreeSet<String>>, &'static str> {
    let Some(terms) = pod_spec
        .at(path!("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms"))
        .and_then(Value::as_array)
        .filter(|t| !t.is_empty())
    else {
        return Ok(None);
    };
    let mut names = std::collections::BTreeSet::new();
    for t in terms {
        let mut term_names: Option<std::collections::BTreeSet<String>> = None;
        for r in t
            .field("matchFields")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if str_at(r, path!("/key")) == node_predicates::OBJECT_NAME_FIELD
                && str_at(r, path!("/operator")) == "In"
            {
                let s: std::collections::BTreeSet<String> = r
                    .field("values")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
                term_names = Some(match term_names {
                    None => s,
                    Some(prev) => prev.intersection(&s).cloned().collect(),
                });
            }
        }
        let Some(term_names) = term_names else {
            // A term without a node-name requirement admits every node (terms are ORed).
            return Ok(None);
        };
        names.extend(term_names);
    }
    if names.is_empty() {
        return Err(ERR_REASON_CONFLICT);
    }
    Ok(Some(names))
}

/// The filters of kube 1.32's default profile that look at the node itself, in the profile's
/// order, up to the first that fails (`RunFilterPlugins` stops there): NodeUnschedulable
/// [plugins/nodeunschedulable `Filter`: `spec.unschedulable` unless the pod tolerates the
/// `node.kubernetes.io/unschedulable:NoSchedule` taint], TaintToleration [plugins/tainttoleration
/// `Filter`: the first NoSchedule/NoExecute taint no toleration tolerates] and NodeAffinity
/// [plugins/nodeaffinity `Filter`: nodeSelector and required affinity]. All three fail as
/// `UnschedulableAndUnresolvable`. NodeResourcesFit comes after them (in `reconcile`).
pub fn node_filters(pod_spec: &Value, node: &Value) -> Option<NodeFailure> {
    let tolerations = node_predicates::pod_tolerations(pod_spec);
    let fail = |reason: String| {
        Some(NodeFailure {
            reasons: vec![reason],
            unresolvable: true,
        })
    };
    if node
        .at(path!("/spec/unschedulable"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        let taint = crate::json::json!({"key": node_predicates::TAINT_NODE_UNSCHEDULABLE, "effect": "NoSchedule"});
        if !tolerations
            .iter()
            .any(|t| node_predicates::tolerates(t, &taint))
        {
            return fail(ERR_REASON_UNSCHEDULABLE.into());
        }
    }
    if let Some(taint) = node_predicates::first_untolerated_taint(
        node_predicates::node_taints(node),
        tolerations,
        node_predicates::schedule_effect,
    ) {
        return fail(format!(
            "node(s) had untolerated taint {{{}: {}}}",
            str_at(taint, path!("/key")),
            str_at(taint, path!("/value"))
        ));
    }
    if !node_predicates::required_node_affinity_matches(pod_spec, node) {
        return fail(ERR_REASON_NODE_AFFINITY.into());
    }
    None
}

/// Whether a pod changed beyond its status, resourceVersion, generation, managedFields and
/// finalizers (`isPodUpdated`'s `strip`).
fn is_pod_updated(old: &Value, new: &Value) -> bool {
    let strip = |p: &Value| {
        let mut meta = p.field("metadata").cloned().unwrap_or(Value::Null);
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
    old.field("spec") != new.field("spec") || strip(old) != strip(new)
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
        if deleted || !str_at(new, path!("/spec/nodeName")).is_empty() {
            self.forget_assumed(&ev.key);
        }
        let waiting =
            !deleted && str_at(new, path!("/spec/nodeName")).is_empty() && pod_is_active(new);
        if waiting {
            self.pending.insert(ObjectKey::clone(&ev.key));
            // `isPodUpdated` [pkg/scheduler/eventhandlers.go]: an update of the status alone
            // (such as the scheduler's own PodScheduled=False) does not queue the pod again.
            if old.is_some_and(|o| !is_pod_updated(o, new)) {
                return Vec::new();
            }
            return vec![ObjectKey::clone(&ev.key)];
        }
        self.pending.remove(&*ev.key);
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
        if !str_at(&pod, path!("/spec/nodeName")).is_empty()
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
        let mut diagnosis = Diagnosis::default();
        let mut total = 0;
        let spec = pod.field("spec").cloned().unwrap_or(Value::Null);
        let pre_filter = pre_filter_node_names(&spec);
        if let Err(msg) = pre_filter {
            diagnosis.pre_filter_msg = Some(msg.to_owned());
        }
        for node in ctx.cache.list(&node_gr) {
            total += 1;
            let name = meta::name(node).to_owned();
            // A node the PreFilter result leaves out: `node(s) didn't satisfy plugin(s)
            // [NodeAffinity]` (`SetAbsentNodesStatus`, schedule_one.go findNodesThatFitPod).
            let failure = match &pre_filter {
                Err(_) => Some(NodeFailure {
                    reasons: Vec::new(),
                    unresolvable: true,
                }),
                Ok(Some(names)) if !names.contains(&name) => Some(NodeFailure {
                    reasons: vec!["node(s) didn't satisfy plugin(s) [NodeAffinity]".into()],
                    unresolvable: true,
                }),
                Ok(_) => node_filters(&spec, node),
            };
            if let Some(f) = failure {
                diagnosis.nodes.push(f);
                continue;
            }
            let node_allocatable = node.at(path!("/status/allocatable"));
            let alloc = |f: &str| node_allocatable.and_then(|a| a.field(f));
            let cpu = alloc("cpu").map_or(u64::MAX, crate::api::quantity::cpu_millis);
            let mem = alloc("memory").map_or(u64::MAX, crate::api::quantity::memory_bytes);
            let max_pods = alloc("pods").map_or(110, |v| match v {
                Value::String(s) => s.parse().unwrap_or(110),
                other => other.as_u64().unwrap_or(110),
            });
            let used = self.usage(&name);
            let mut fit_reasons = Vec::new();
            if used.pods + 1 > max_pods {
                fit_reasons.push("Too many pods".to_owned());
            }
            if used.cpu_millis + want.cpu_millis > cpu {
                fit_reasons.push("Insufficient cpu".to_owned());
            }
            if used.memory_bytes + want.memory_bytes > mem {
                fit_reasons.push("Insufficient memory".to_owned());
            }
            let fits = fit_reasons.is_empty();
            if !fits {
                diagnosis.nodes.push(NodeFailure {
                    reasons: fit_reasons,
                    unresolvable: false,
                });
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
            let message = unschedulable_message(total, &diagnosis);
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
                .field("status")
                .cloned()
                .unwrap_or_else(|| crate::json::json!({}));
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
        let (cpu, mem) = util::pod_nonzero_requests(&crate::json::json!({
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

    fn fit(reasons: &[&str]) -> NodeFailure {
        NodeFailure {
            reasons: reasons.iter().map(|r| (*r).to_owned()).collect(),
            unresolvable: false,
        }
    }

    fn unresolvable(reason: &str) -> NodeFailure {
        NodeFailure {
            reasons: vec![reason.to_owned()],
            unresolvable: true,
        }
    }

    /// `FitError.Error` sorts the "<count> <reason>" strings, so the count leads.
    #[test]
    fn unschedulable_reasons_are_sorted_as_printed() {
        let d = Diagnosis {
            pre_filter_msg: None,
            nodes: vec![
                fit(&["Insufficient cpu"]),
                fit(&["Insufficient cpu", "Insufficient memory"]),
                fit(&["Insufficient cpu"]),
            ],
        };
        assert!(unschedulable_message(3, &d)
            .starts_with("0/3 nodes are available: 1 Insufficient memory, 3 Insufficient cpu. "));
    }

    #[test]
    fn the_unschedulable_message_counts_nodes_per_reason() {
        let d = Diagnosis {
            pre_filter_msg: None,
            nodes: vec![fit(&["Insufficient cpu"]); 3],
        };
        assert_eq!(
            unschedulable_message(3, &d),
            "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
        );
    }

    fn node(name: &str, spec: Value, labels: Value) -> Value {
        crate::json::json!({"metadata": {"name": name, "labels": labels}, "spec": spec})
    }

    /// Worked from the three plugins' `Filter`s in the default profile's order: a cordoned node
    /// fails NodeUnschedulable before its taint is looked at; the taint's text is
    /// `{key: value}`; a selector miss is NodeAffinity's.
    #[test]
    fn node_filters_fail_with_the_first_failing_plugins_reason() {
        let spec = crate::json::json!({"nodeSelector": {"disk": "ssd"}});
        let tainted = crate::json::json!({"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]});
        let f = |n: &Value| node_filters(&spec, n).map(|f| f.reasons[0].clone());
        assert_eq!(
            f(&node(
                "a",
                crate::json::json!({"unschedulable": true, "taints": tainted["taints"]}),
                crate::json::json!({"disk": "ssd"})
            )),
            Some("node(s) were unschedulable".into())
        );
        assert_eq!(
            f(&node("b", tainted.clone(), crate::json::json!({}))),
            Some("node(s) had untolerated taint {dedicated: gpu}".into())
        );
        assert_eq!(
            f(&node(
                "c",
                crate::json::json!({}),
                crate::json::json!({"disk": "hdd"})
            )),
            Some("node(s) didn't match Pod's node affinity/selector".into())
        );
        assert_eq!(
            f(&node(
                "d",
                crate::json::json!({}),
                crate::json::json!({"disk": "ssd"})
            )),
            None
        );
        // A PreferNoSchedule taint does not filter; the unschedulable toleration admits a
        // cordoned node.
        let tolerant = crate::json::json!({"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]});
        let soft = node(
            "e",
            crate::json::json!({"unschedulable": true, "taints": [{"key": "x", "effect": "PreferNoSchedule"}]}),
            crate::json::json!({}),
        );
        assert_eq!(node_filters(&tolerant, &soft), None);
    }

    /// The message a DaemonSet pod pinned to node-3 (matchFields metadata.name) gets when
    /// node-3 carries a taint it does not tolerate: the other two nodes are left out by
    /// NodeAffinity's PreFilter and count as unresolvable in the preemption part.
    #[test]
    fn a_pinned_pod_on_a_tainted_node_reads_as_kube_prints_it() {
        let d = Diagnosis {
            pre_filter_msg: None,
            nodes: vec![
                unresolvable("node(s) didn't satisfy plugin(s) [NodeAffinity]"),
                unresolvable("node(s) didn't satisfy plugin(s) [NodeAffinity]"),
                unresolvable("node(s) had untolerated taint {dedicated: gpu}"),
            ],
        };
        assert_eq!(
            unschedulable_message(3, &d),
            "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        );
        let mixed = Diagnosis {
            pre_filter_msg: None,
            nodes: vec![
                unresolvable("node(s) didn't match Pod's node affinity/selector"),
                fit(&["Insufficient cpu"]),
                unresolvable("node(s) had untolerated taint {dedicated: gpu}"),
            ],
        };
        assert_eq!(
            unschedulable_message(3, &mixed),
            "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
        );
    }

    #[test]
    fn node_affinity_pre_filter_narrows_to_the_named_nodes() {
        let pinned = |terms: Value| crate::json::json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}});
        let names = pre_filter_node_names(&pinned(crate::json::json!([
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["c"]}]}
        ])))
        .unwrap()
        .unwrap();
        assert_eq!(names.into_iter().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(
            pre_filter_node_names(&pinned(crate::json::json!([
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]},
                {"matchExpressions": [{"key": "x", "operator": "Exists"}]}
            ]))),
            Ok(None),
            "a term without a name admits every node"
        );
        let conflict = pinned(crate::json::json!([{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["a"]},
            {"key": "metadata.name", "operator": "In", "values": ["b"]}
        ]}]));
        assert_eq!(pre_filter_node_names(&conflict), Err(ERR_REASON_CONFLICT));
        let d = Diagnosis {
            pre_filter_msg: Some(ERR_REASON_CONFLICT.into()),
            nodes: vec![
                NodeFailure {
                    reasons: vec![],
                    unresolvable: true
                };
                2
            ],
        };
        assert_eq!(
            unschedulable_message(2, &d),
            "0/2 nodes are available: pod affinity terms conflict. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
        );
    }
}
