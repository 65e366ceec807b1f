//! The DaemonSet controller, a port of kube 1.32's pkg/controller/daemon: one Pod per node that
//! should run it (`daemon_controller.go` `syncDaemonSet`, `manage`, `podsShouldBeOnNode`,
//! `NodeShouldRunDaemonPod` with its `predicates`), the rolling update with `maxUnavailable` or
//! `maxSurge` and the revision history in ControllerRevisions (`update.go` `rollingUpdate`,
//! `constructHistory`, `dedupCurHistories`, `cleanupHistory`, `snapshot`), and the status
//! counts (`updateDaemonSetStatus`, `storeDaemonSetStatus`). Pods are created by
//! `generateName` with the node pinned through a `matchFields metadata.name` node affinity, and
//! the scheduler binds them.
//!
//! Simplifications (docs/fidelity.md, "DaemonSet controller"): pods and revisions are claimed
//! by controllerRef only (no adoption of orphans, no release of owned objects whose labels no
//! longer match); nodes are visited in name order where kube's lister has no order, and the
//! rolling update's map walk over nodes is a shuffle from the world's RNG.

use crate::api::meta::Fields;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::json::{json, Map, Value};
use rand::seq::SliceRandom;

use super::node_predicates::{
    first_untolerated_taint, node_taints, pod_tolerations, required_node_affinity_matches,
    schedule_effect, OBJECT_NAME_FIELD,
};
use super::replicaset::pod_available;
use super::util::{nodes, pods, record_pod_control, sort_keys, PodOp};
use crate::api::kinds::daemonset::template_generation;
use crate::api::meta::{self, str_at, JsonPointer};
use crate::api::{
    ApiRequest, GroupResource, ObjectKey, PatchType, StatusReason, WatchEvent, WatchEventType,
};
use crate::runtime::client;
use crate::runtime::informer::{pod_is_ready, Informer};
use crate::runtime::{
    Ctx, EventApi, EventNote, EventType, ObjectRef, ReconcileAction, ReconcileError, Reconciler,
};
use crate::time::SimTime;

pub fn daemonsets() -> GroupResource {
    crate::group_resource!("apps", "daemonsets")
}
pub fn controllerrevisions() -> GroupResource {
    crate::group_resource!("apps", "controllerrevisions")
}

/// The DaemonSet as its events name it.
const DS_REF: (&str, &str) = ("apps/v1", "DaemonSet");

/// `apps.DefaultDaemonSetUniqueLabelKey` (= `ControllerRevisionHashLabelKey`).
pub const HASH_LABEL: &str = "controller-revision-hash";
/// `extensions.DaemonSetTemplateGenerationKey`.
pub const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";
/// `BurstReplicas`: at most this many creations or deletions per sync.
pub const BURST_REPLICAS: usize = 250;
/// `controller.SlowStartInitialBatchSize`.
const SLOW_START_INITIAL_BATCH_SIZE: usize = 1;
/// `ExpectationsTimeout`.
const EXPECTATIONS_TIMEOUT_MS: u64 = 5 * 60 * 1000;
/// The failed-pods back-off kube-controller-manager gives the controller
/// (`flowcontrol.NewBackOff(1*time.Second, 15*time.Minute)`, apps.go
/// startDaemonSetController).
const FAILED_POD_BACKOFF_INITIAL_MS: u64 = 1000;
const FAILED_POD_BACKOFF_MAX_MS: u64 = 15 * 60 * 1000;

/// kube's plain `ControllerExpectations` (not UID-tracking: a pod marked for deletion and then
/// removed is observed twice, as in kube).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Expectations {
    adds: i64,
    dels: i64,
    set_at: SimTime,
}

/// One entry of client-go's `flowcontrol.Backoff`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct BackoffEntry {
    backoff_ms: u64,
    last_update: SimTime,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DaemonSetController {
    expectations: BTreeMap<ObjectKey, Expectations>,
    /// `failedPodsBackoff`, keyed `<uid>/<observedGeneration>/<node>`.
    failed_backoff: BTreeMap<String, BackoffEntry>,
}

/// `AddOrUpdateDaemonPodTolerations` [daemon/util/daemonset_util.go]: the tolerations every
/// daemon pod gets, so node problems neither evict it nor keep it off a node.
pub fn add_daemon_tolerations(spec: &mut Map) {
    let mut wanted = vec![
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ];
    if spec.field("hostNetwork").and_then(Value::as_bool) == Some(true) {
        wanted.push(("node.kubernetes.io/network-unavailable", "NoSchedule"));
    }
    for (key, effect) in wanted {
        let toleration = json!({"key": key, "operator": "Exists", "effect": effect});
        let list = spec.entry("tolerations").or_insert_with(|| json!([]));
        if !list.is_array() {
            *list = json!([]);
        }
        let Some(list) = list.as_array_mut() else {
            continue;
        };
        // AddOrUpdateTolerationInPodSpec: one that `MatchToleration`s (same key, operator,
        // value, effect) is replaced, else the toleration is appended.
        let matches = |t: &Value| {
            str_at(t, "/key") == key
                && str_at(t, "/operator") == "Exists"
                && str_at(t, "/value").is_empty()
                && str_at(t, "/effect") == effect
        };
        match list.iter_mut().find(|t| matches(t)) {
            Some(existing) => *existing = toleration,
            None => list.push(toleration),
        }
    }
}

/// `NewPod`: the daemon pod's spec as the predicates see it: the template's, with `nodeName`
/// set and the daemon tolerations added.
fn new_pod_spec(ds: &Value, node_name: &str) -> Value {
    let mut spec = ds
        .at("/spec/template/spec")
        .cloned()
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    if let Some(m) = spec.as_object_mut() {
        m.insert("nodeName", json!(node_name));
        add_daemon_tolerations(m);
    }
    spec
}

/// `NodeShouldRunDaemonPod`: (shouldRun, shouldContinueRunning). A template `nodeName` for
/// another node, or a node affinity/selector miss, rules the node out; an untolerated
/// NoSchedule/NoExecute taint keeps new pods off, and only an untolerated NoExecute one also
/// removes running pods.
pub fn node_should_run(node: &Value, ds: &Value) -> (bool, bool) {
    let name = meta::name(node);
    let template_node = str_at(ds, "/spec/template/spec/nodeName");
    if !(template_node.is_empty() || template_node == name) {
        return (false, false);
    }
    let spec = new_pod_spec(ds, name);
    // predicates: fitsNodeName always holds here (NewPod sets it to the node).
    if !required_node_affinity_matches(&spec, node) {
        return (false, false);
    }
    let taints = node_taints(node);
    let tolerations = pod_tolerations(&spec);
    if first_untolerated_taint(taints, tolerations, schedule_effect).is_some() {
        let no_execute = first_untolerated_taint(taints, tolerations, |e| e == "NoExecute");
        return (false, no_execute.is_none());
    }
    (true, true)
}

/// `GetTargetNodeName`: `spec.nodeName`, or for a pod not yet bound the single value of its
/// `matchFields metadata.name In` requirement.
pub fn target_node_name(pod: &Value) -> Option<String> {
    let node = str_at(pod, "/spec/nodeName");
    if !node.is_empty() {
        return Some(node.to_owned());
    }
    let terms = pod
        .at("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
        .and_then(Value::as_array)?;
    for term in terms {
        for r in term
            .field("matchFields")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if str_at(r, "/key") == OBJECT_NAME_FIELD && str_at(r, "/operator") == "In" {
                let values = r.field("values").and_then(Value::as_array)?;
                // "the matchFields value of 'metadata.name' is not unique": skipped.
                return match values.as_slice() {
                    [v] => v.as_str().map(str::to_owned),
                    _ => None,
                };
            }
        }
    }
    None
}

/// `ReplaceDaemonSetPodNodeNameNodeAffinity`: the required node affinity becomes the one term
/// `matchFields metadata.name In [node]`; preferred terms stay.
fn pin_to_node(spec: &mut Map, node: &str) {
    let required = json!({"nodeSelectorTerms": [{"matchFields": [
        {"key": OBJECT_NAME_FIELD, "operator": "In", "values": [node]}
    ]}]});
    let affinity = spec.entry("affinity").or_insert_with(|| json!({}));
    if !affinity.is_object() {
        *affinity = json!({});
    }
    let Some(a) = affinity.as_object_mut() else {
        return;
    };
    let na = a.entry("nodeAffinity").or_insert_with(|| json!({}));
    if !na.is_object() {
        *na = json!({});
    }
    if let Some(na) = na.as_object_mut() {
        na.insert("requiredDuringSchedulingIgnoredDuringExecution", required);
    }
}

/// `CreatePodTemplate` then `GetPodFromTemplate` with the node affinity: the Pod the controller
/// creates for `node`, named by the API server from `generateName`.
pub fn daemon_pod(ds: &Value, node: &str, hash: &str) -> Value {
    let template = ds.at("/spec/template").cloned().unwrap_or(Value::Null);
    let mut labels: BTreeMap<String, Value> = template
        .at("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
        .unwrap_or_default();
    if let Some(g) = template_generation(ds) {
        labels.insert(TEMPLATE_GENERATION_LABEL.into(), json!(g.to_string()));
    }
    if !hash.is_empty() {
        labels.insert(HASH_LABEL.into(), json!(hash));
    }
    let mut metadata = json!({
        "generateName": format!("{}-", meta::name(ds)),
        "namespace": meta::namespace(ds),
        // Go marshals the label map in key order.
        "labels": labels.into_iter().collect::<Map>(),
    });
    if let Some(a) = template.at("/metadata/annotations") {
        metadata["annotations"] = a.clone();
    }
    metadata["ownerReferences"] = json!([meta::owner_reference(ds, true)]);
    let mut spec = template
        .field("spec")
        .cloned()
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    if let Some(m) = spec.as_object_mut() {
        add_daemon_tolerations(m);
        pin_to_node(m, node);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec})
}

/// `IsPodUpdated`: the pod carries the current revision's hash, or the template generation.
pub fn is_pod_updated(pod: &Value, hash: &str, generation: Option<i64>) -> bool {
    let label = |k: &str| {
        pod.at("/metadata/labels")
            .and_then(|l| l.get(k))
            .and_then(Value::as_str)
    };
    let template_matches = generation
        .is_some_and(|g| label(TEMPLATE_GENERATION_LABEL) == Some(g.to_string().as_str()));
    let hash_matches = !hash.is_empty() && label(HASH_LABEL) == Some(hash);
    hash_matches || template_matches
}

/// `podByCreationTimestampAndPhase`: bound pods first, then older first, then by name.
fn sort_by_creation(pods: &mut [Arc<Value>]) {
    pods.sort_by(|a, b| {
        let bound = |p: &Value| !str_at(p, "/spec/nodeName").is_empty();
        bound(b)
            .cmp(&bound(a))
            .then_with(|| created_ms(a).cmp(&created_ms(b)))
            .then_with(|| meta::name(a).cmp(meta::name(b)))
    });
}

fn created_ms(p: &Value) -> i64 {
    crate::time::parse_rfc3339_unix_ms(str_at(p, "/metadata/creationTimestamp")).unwrap_or(0)
}

fn is_terminal(pod: &Value) -> bool {
    matches!(str_at(pod, "/status/phase"), "Succeeded" | "Failed")
}

/// `GetScaledValueFromIntOrPercent`: an int as is, `N%` of `total` rounded up or down; `None`
/// for anything else.
pub fn scaled_value(v: Option<&Value>, total: i64, round_up: bool) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => {
            let pct: i64 = s.strip_suffix('%')?.parse().ok()?;
            let x = pct * total;
            Some(if round_up { (x + 99) / 100 } else { x / 100 })
        }
        _ => None,
    }
}

fn rolling_update(ds: &Value) -> Option<&Value> {
    (str_at(ds, "/spec/updateStrategy/type") == "RollingUpdate")
        .then(|| ds.at("/spec/updateStrategy/rollingUpdate"))
        .flatten()
        .filter(|r| !r.is_null())
}

/// `SurgeCount`: 0 unless RollingUpdate with a maxSurge (DaemonSetUpdateSurge is GA).
pub fn surge_count(ds: &Value, number_to_schedule: i64) -> i64 {
    rolling_update(ds)
        .and_then(|r| scaled_value(r.field("maxSurge"), number_to_schedule, true))
        .unwrap_or(0)
}

/// `UnavailableCount`: 0 unless RollingUpdate.
pub fn unavailable_count(ds: &Value, number_to_schedule: i64) -> i64 {
    rolling_update(ds)
        .and_then(|r| scaled_value(r.field("maxUnavailable"), number_to_schedule, true))
        .unwrap_or(0)
}

/// `AllowsSurge`.
fn allows_surge(ds: &Value) -> bool {
    surge_count(ds, 1) > 0
}

/// Daemon pods by target node (`getNodesToDaemonPods`): pods this DaemonSet controls, without
/// the terminal ones already being deleted unless `include_deleted_terminal`.
pub fn nodes_to_daemon_pods(
    cache: &Informer,
    ds: &Value,
    include_deleted_terminal: bool,
) -> BTreeMap<String, Vec<Arc<Value>>> {
    let mut out: BTreeMap<String, Vec<Arc<Value>>> = BTreeMap::new();
    let uid = meta::uid(ds);
    for p in cache.owned_by(uid) {
        if meta::controller_of(p).is_none_or(|(kind, _, u)| kind != "DaemonSet" || u != uid) {
            continue;
        }
        if !include_deleted_terminal && is_terminal(p) && meta::is_terminating(p) {
            continue;
        }
        if let Some(node) = target_node_name(p) {
            out.entry(node).or_default().push(p.clone());
        }
    }
    out
}

/// The status counts `updateDaemonSetStatus` computes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatusCounts {
    pub desired: i64,
    pub current: i64,
    pub misscheduled: i64,
    pub ready: i64,
    pub updated: i64,
    pub available: i64,
    pub unavailable: i64,
}

/// `updateDaemonSetStatus`'s arithmetic: per node that should run the pod, the oldest daemon
/// pod decides ready, available and updated; a pod on a node that should not run it is
/// misscheduled; unavailable = desired - available.
pub fn status_counts(
    ds: &Value,
    node_list: &[Arc<Value>],
    node_to_pods: &BTreeMap<String, Vec<Arc<Value>>>,
    hash: &str,
    now: SimTime,
) -> StatusCounts {
    let mut c = StatusCounts::default();
    let min_ready = meta::i64_at(ds, "/spec/minReadySeconds").unwrap_or(0);
    let generation = template_generation(ds);
    for node in node_list {
        let (should_run, _) = node_should_run(node, ds);
        let pods = node_to_pods.get(meta::name(node));
        let scheduled = pods.is_some_and(|p| !p.is_empty());
        if should_run {
            c.desired += 1;
            let Some(pods) = pods.filter(|_| scheduled) else {
                continue;
            };
            c.current += 1;
            let mut pods = pods.clone();
            sort_by_creation(&mut pods);
            let pod = &pods[0];
            if pod_is_ready(pod) {
                c.ready += 1;
                if pod_available(pod, min_ready, now) {
                    c.available += 1;
                }
            }
            if is_pod_updated(pod, hash, generation) {
                c.updated += 1;
            }
        } else if scheduled {
            c.misscheduled += 1;
        }
    }
    c.unavailable = c.desired - c.available;
    c
}

/// `findUpdatedPodsOnNode`: the node's one new and one old non-deleted pod, or `None` when it
/// has more than one of either (the manage loop prunes those first).
#[allow(
    clippy::type_complexity,
    reason = "the pair of optional pods is kube's return shape"
)]
fn find_updated_pods_on_node<'a>(
    pods: &'a [Arc<Value>],
    hash: &str,
    generation: Option<i64>,
) -> Option<(Option<&'a Arc<Value>>, Option<&'a Arc<Value>>)> {
    let (mut new, mut old) = (None, None);
    for p in pods.iter().filter(|p| !meta::is_terminating(p)) {
        let slot = if is_pod_updated(p, hash, generation) {
            &mut new
        } else {
            &mut old
        };
        if slot.is_some() {
            return None;
        }
        *slot = Some(p);
    }
    Some((new, old))
}

/// What `rollingUpdate` decides: old pods to delete and nodes to create a new pod on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RollingPlan {
    pub delete: Vec<String>,
    pub create: Vec<String>,
}

/// `rollingUpdate` with `updatedDesiredNodeCounts` [update.go]. `node_order` is the order the
/// nodes with pods (or that should have one) are visited in, kube's map walk.
pub fn rolling_update_plan(
    ds: &Value,
    node_list: &[Arc<Value>],
    mut node_to_pods: BTreeMap<String, Vec<Arc<Value>>>,
    hash: &str,
    now: SimTime,
    shuffle: impl FnOnce(&mut Vec<String>),
) -> RollingPlan {
    let min_ready = meta::i64_at(ds, "/spec/minReadySeconds").unwrap_or(0);
    let generation = template_generation(ds);
    // updatedDesiredNodeCounts: every node that should run the pod gets an entry.
    let mut desired = 0i64;
    for node in node_list {
        if node_should_run(node, ds).0 {
            desired += 1;
            node_to_pods.entry(meta::name(node).to_owned()).or_default();
        }
    }
    let max_unavailable = unavailable_count(ds, desired);
    let max_surge = surge_count(ds, desired);
    let max_unavailable = if desired > 0 && max_unavailable == 0 && max_surge == 0 {
        1
    } else {
        max_unavailable
    };
    let available = |p: &Value| pod_available(p, min_ready, now);
    let mut order: Vec<String> = node_to_pods.keys().cloned().collect();
    shuffle(&mut order);
    let node_by_name = |n: &str| node_list.iter().find(|x| meta::name(x) == n);
    let mut plan = RollingPlan::default();
    if max_surge == 0 {
        // Delete just enough old pods to stay under maxUnavailable; manage creates the new.
        let mut num_unavailable = 0i64;
        let mut allowed: Vec<String> = Vec::new();
        let mut candidates: Vec<String> = Vec::new();
        for node in &order {
            let Some((new, old)) = find_updated_pods_on_node(&node_to_pods[node], hash, generation)
            else {
                num_unavailable += 1;
                continue;
            };
            match (new, old) {
                (None, None) | (Some(_), Some(_)) => num_unavailable += 1,
                (Some(n), None) => {
                    if !available(n) {
                        num_unavailable += 1;
                    }
                }
                (None, Some(o)) => {
                    if !available(o) {
                        allowed.push(meta::name(o).to_owned());
                        num_unavailable += 1;
                    } else if num_unavailable < max_unavailable {
                        candidates.push(meta::name(o).to_owned());
                    }
                }
            }
        }
        let remaining = (max_unavailable - num_unavailable).clamp(0, candidates.len() as i64);
        plan.delete = allowed;
        plan.delete
            .extend(candidates.into_iter().take(remaining as usize));
        return plan;
    }
    // Surging: a new pod next to each old one, up to maxSurge at a time; the old goes once the
    // new is available.
    let mut should_not_run_to_delete: Vec<String> = Vec::new();
    let mut candidate_new: Vec<String> = Vec::new();
    let mut allowed_new: Vec<String> = Vec::new();
    let (mut num_surge, mut num_available) = (0i64, 0i64);
    for node in &order {
        let Some((new, old)) = find_updated_pods_on_node(&node_to_pods[node], hash, generation)
        else {
            num_surge += 1;
            continue;
        };
        if let Some(o) = old {
            if available(o) {
                num_available += 1;
            }
        } else if let Some(n) = new {
            if available(n) {
                num_available += 1;
            }
        }
        let should_run = || node_by_name(node).is_some_and(|n| node_should_run(n, ds).0);
        match (new, old) {
            (_, None) => {}
            (None, Some(o)) => {
                if !available(o) {
                    if !should_run() {
                        plan.delete.push(meta::name(o).to_owned());
                        continue;
                    }
                    allowed_new.push(node.clone());
                } else {
                    if !should_run() {
                        should_not_run_to_delete.push(meta::name(o).to_owned());
                        continue;
                    }
                    if num_surge >= max_surge {
                        continue;
                    }
                    candidate_new.push(node.clone());
                }
            }
            (Some(n), Some(o)) => {
                if !available(n) {
                    num_surge += 1;
                    continue;
                }
                plan.delete.push(meta::name(o).to_owned());
            }
        }
    }
    let remaining = (max_surge - num_surge).clamp(0, candidate_new.len() as i64);
    // With maxSurge the owner expects full availability: a pod on a node that should no longer
    // run it goes only while more pods are available than desired.
    let deletable = (num_available - desired).clamp(0, should_not_run_to_delete.len() as i64);
    plan.delete.extend(
        should_not_run_to_delete
            .into_iter()
            .take(deletable as usize),
    );
    plan.create = allowed_new;
    plan.create
        .extend(candidate_new.into_iter().take(remaining as usize));
    plan
}

/// `getPatch`: the revision's data, `{"spec":{"template":{...,"$patch":"replace"}}}` with every
/// map's keys in order, as Go marshals a `map[string]interface{}`.
pub fn history_patch(ds: &Value) -> Value {
    let mut template = ds.at("/spec/template").cloned().unwrap_or(json!({}));
    if let Some(m) = template.as_object_mut() {
        m.insert("$patch", json!("replace"));
    }
    sort_keys(&json!({"spec": {"template": template}}))
}

/// A ControllerRevision's `revision` number.
pub fn revision_of(r: &Value) -> i64 {
    meta::i64_at(r, "/revision").unwrap_or(0)
}

fn label_of<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.at("/metadata/labels")
        .and_then(|l| l.get(key))
        .and_then(Value::as_str)
}

impl DaemonSetController {
    pub fn new() -> Self {
        Self::default()
    }

    fn satisfied(&self, key: &ObjectKey, now: SimTime) -> bool {
        self.expectations.get(key).is_none_or(|e| {
            (e.adds <= 0 && e.dels <= 0)
                || now.as_ms() >= e.set_at.as_ms() + EXPECTATIONS_TIMEOUT_MS
        })
    }

    fn creation_observed(&mut self, key: &ObjectKey) {
        if let Some(e) = self.expectations.get_mut(key) {
            e.adds -= 1;
        }
    }

    fn deletion_observed(&mut self, key: &ObjectKey) {
        if let Some(e) = self.expectations.get_mut(key) {
            e.dels -= 1;
        }
    }

    /// `failedPodsBackoff.IsInBackOffSinceUpdate`.
    fn in_backoff(&self, key: &str, now: SimTime) -> Option<u64> {
        let e = self.failed_backoff.get(key)?;
        (now.as_ms() < e.last_update.as_ms() + e.backoff_ms).then_some(e.backoff_ms)
    }

    /// `failedPodsBackoff.Next`: start at 1 s, double up to 15 min; an entry idle for twice the
    /// maximum starts over.
    fn backoff_next(&mut self, key: &str, now: SimTime) {
        let e = self.failed_backoff.get(key).copied();
        let backoff_ms = match e {
            Some(e) if now.as_ms() <= e.last_update.as_ms() + 2 * FAILED_POD_BACKOFF_MAX_MS => {
                (e.backoff_ms * 2).min(FAILED_POD_BACKOFF_MAX_MS)
            }
            _ => FAILED_POD_BACKOFF_INITIAL_MS,
        };
        self.failed_backoff.insert(
            key.to_owned(),
            BackoffEntry {
                backoff_ms,
                last_update: now,
            },
        );
    }

    /// `podsShouldBeOnNode`: (create a pod here?, pods to delete here), plus the earliest
    /// back-off requeue for failed pods.
    fn pods_should_be_on_node(
        &mut self,
        ctx: &mut Ctx<'_>,
        node: &Value,
        node_to_pods: &BTreeMap<String, Vec<Arc<Value>>>,
        ds: &Value,
        hash: &str,
        requeue: &mut Option<u64>,
    ) -> (bool, Vec<String>) {
        let (should_run, should_continue) = node_should_run(node, ds);
        let node_name = meta::name(node);
        let daemon_pods = node_to_pods.get(node_name);
        let mut to_delete = Vec::new();
        match daemon_pods {
            None if should_run => return (true, to_delete),
            Some(daemon_pods) if should_continue => {
                let mut running: Vec<Arc<Value>> = Vec::new();
                for pod in daemon_pods {
                    if meta::is_terminating(pod) {
                        continue;
                    }
                    match str_at(pod, "/status/phase") {
                        "Failed" => {
                            // Back off deleting failed pods so the controller does not fight a
                            // kubelet that rejects them.
                            let key = format!(
                                "{}/{}/{node_name}",
                                meta::uid(ds),
                                meta::i64_at(ds, "/status/observedGeneration").unwrap_or(0)
                            );
                            if let Some(delay) = self.in_backoff(&key, ctx.now) {
                                *requeue = Some(requeue.map_or(delay, |r| r.min(delay)));
                                continue;
                            }
                            self.backoff_next(&key, ctx.now);
                            ctx.record(EventNote::new(
                                ObjectRef::to(ds, "apps/v1", "DaemonSet"),
                                EventType::Warning,
                                "FailedDaemonPod",
                                format!(
                                    "Found failed daemon pod {}/{} on node {node_name}, will try to kill it",
                                    meta::namespace(pod),
                                    meta::name(pod)
                                ),
                            ));
                            to_delete.push(meta::name(pod).to_owned());
                        }
                        "Succeeded" => {
                            ctx.record(EventNote::new(
                                ObjectRef::to(ds, "apps/v1", "DaemonSet"),
                                EventType::Normal,
                                "SucceededDaemonPod",
                                format!(
                                    "Found succeeded daemon pod {}/{} on node {node_name}, will try to delete it",
                                    meta::namespace(pod),
                                    meta::name(pod)
                                ),
                            ));
                            to_delete.push(meta::name(pod).to_owned());
                        }
                        _ => running.push(pod.clone()),
                    }
                }
                sort_by_creation(&mut running);
                if !allows_surge(ds) {
                    // More than one running pod: all but the oldest go.
                    to_delete.extend(running.iter().skip(1).map(|p| meta::name(p).to_owned()));
                    return (false, to_delete);
                }
                if running.len() <= 1 {
                    return (running.is_empty() && should_run, to_delete);
                }
                // Surging: keep the oldest new and the oldest old pod while the new one is not
                // yet available and the old one is ready; delete every other.
                let (mut oldest_new, mut oldest_old) = (None, None);
                for pod in &running {
                    let slot = if label_of(pod, HASH_LABEL) == Some(hash) {
                        &mut oldest_new
                    } else {
                        &mut oldest_old
                    };
                    if slot.is_none() {
                        *slot = Some(pod.clone());
                    } else {
                        to_delete.push(meta::name(pod).to_owned());
                    }
                }
                if let (Some(new), Some(old)) = (oldest_new, oldest_old) {
                    let min_ready = meta::i64_at(ds, "/spec/minReadySeconds").unwrap_or(0);
                    if !pod_is_ready(&old) || pod_available(&new, min_ready, ctx.now) {
                        to_delete.push(meta::name(&old).to_owned());
                    }
                }
            }
            Some(daemon_pods) if !should_continue => {
                to_delete.extend(
                    daemon_pods
                        .iter()
                        .filter(|p| !meta::is_terminating(p))
                        .map(|p| meta::name(p).to_owned()),
                );
            }
            _ => {}
        }
        (false, to_delete)
    }

    /// `syncNodes`: sets expectations, creates pods in slow-start batches (stopping after a
    /// batch with a failure) and deletes pods, each with `RealPodControl`'s event.
    fn sync_nodes(
        &mut self,
        ctx: &mut Ctx<'_>,
        key: &ObjectKey,
        ds: &Value,
        to_delete: &[String],
        to_create: &[String],
        hash: &str,
    ) -> Result<(), ReconcileError> {
        let principal = self.principal();
        let create_diff = to_create.len().min(BURST_REPLICAS);
        let delete_diff = to_delete.len().min(BURST_REPLICAS);
        self.expectations.insert(
            key.clone(),
            Expectations {
                adds: create_diff as i64,
                dels: delete_diff as i64,
                set_at: ctx.now,
            },
        );
        let mut first_err: Option<ReconcileError> = None;
        let mut batch = create_diff.min(SLOW_START_INITIAL_BATCH_SIZE);
        let mut pos = 0;
        while pos < create_diff {
            let mut failed = false;
            for node in &to_create[pos..pos + batch] {
                let pod = daemon_pod(ds, node, hash);
                let created = ctx.send(ApiRequest::create(&principal, pods(), &key.namespace, pod));
                record_pod_control(ctx, DS_REF, ds, PodOp::Create, &created);
                if let Err(e) = created {
                    if e.namespace_terminating() {
                        continue;
                    }
                    self.creation_observed(key);
                    failed = true;
                    first_err.get_or_insert(e.into());
                }
            }
            let next = (2 * batch).min(create_diff - (pos + batch));
            let skipped = create_diff - (pos + batch);
            pos += batch;
            batch = next;
            if failed && skipped > 0 {
                if let Some(e) = self.expectations.get_mut(key) {
                    e.adds -= skipped as i64;
                }
                break;
            }
        }
        for name in &to_delete[..delete_diff] {
            let deleted = ctx.send(ApiRequest::delete(&principal, pods(), &key.namespace, name));
            record_pod_control(ctx, DS_REF, ds, PodOp::Delete(name), &deleted);
            if let Err(e) = deleted {
                self.deletion_observed(key);
                if e.reason != StatusReason::NotFound {
                    first_err.get_or_insert(e.into());
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// `constructHistory`: the DaemonSet's revisions split into the current one (created by
    /// `snapshot` when none matches the template, deduplicated, its revision raised above the
    /// old ones) and the old ones.
    fn construct_history(
        &mut self,
        ctx: &mut Ctx<'_>,
        ds: &Value,
    ) -> Result<(Arc<Value>, Vec<Arc<Value>>), ReconcileError> {
        let principal = self.principal();
        let ns = meta::namespace(ds).to_owned();
        let uid = meta::uid(ds);
        let patch = history_patch(ds);
        let cr_gr = controllerrevisions();
        let mut current: Vec<Arc<Value>> = Vec::new();
        let mut old: Vec<Arc<Value>> = Vec::new();
        let histories: Vec<Arc<Value>> = ctx
            .cache
            .list(&cr_gr)
            .filter(|h| meta::namespace(h) == ns)
            .filter(|h| {
                meta::controller_of(h).is_some_and(|(kind, _, u)| kind == "DaemonSet" && u == uid)
            })
            .cloned()
            .collect();
        for mut history in histories {
            // The unique label, from the revision's name, where it is missing.
            if label_of(&history, HASH_LABEL).is_none() {
                let mut body = history.as_ref().clone();
                body["metadata"]["labels"][HASH_LABEL] = json!(meta::name(&history));
                history = ctx.send(client::update_object(&principal, cr_gr.clone(), body))?;
            }
            if history.field("data") == Some(&patch) {
                current.push(history);
            } else {
                old.push(history);
            }
        }
        let curr_revision = old.iter().map(|h| revision_of(h)).max().unwrap_or(0) + 1;
        let cur = if current.is_empty() {
            self.snapshot(ctx, ds, curr_revision, patch)?
        } else {
            let cur = self.dedup_cur_histories(ctx, ds, current)?;
            if revision_of(&cur) < curr_revision {
                let mut body = cur.as_ref().clone();
                body["revision"] = json!(curr_revision);
                ctx.send(client::update_object(&principal, cr_gr, body))?
            } else {
                cur
            }
        };
        Ok((cur, old))
    }

    /// `snapshot`: creates the revision `<ds>-<hash>`; a name taken by a matching revision is
    /// that revision, one taken by another template bumps `status.collisionCount` and fails the
    /// sync so the next one hashes anew.
    fn snapshot(
        &mut self,
        ctx: &mut Ctx<'_>,
        ds: &Value,
        revision: i64,
        patch: Value,
    ) -> Result<Arc<Value>, ReconcileError> {
        let principal = self.principal();
        let ns = meta::namespace(ds).to_owned();
        let template = ds.at("/spec/template").cloned().unwrap_or(Value::Null);
        let collision = meta::i64_at(ds, "/status/collisionCount");
        let hash = super::deployment::pod_template_hash(&template, collision);
        let name = format!("{}-{hash}", meta::name(ds));
        let mut labels: Map = template
            .at("/metadata/labels")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        labels.insert(HASH_LABEL, json!(hash));
        let mut metadata = json!({"name": name, "namespace": ns, "labels": labels});
        if let Some(a) = ds.at("/metadata/annotations") {
            metadata["annotations"] = a.clone();
        }
        metadata["ownerReferences"] = json!([meta::owner_reference(ds, true)]);
        let body = json!({
            "apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": metadata, "data": patch, "revision": revision,
        });
        match ctx.send(ApiRequest::create(
            &principal,
            controllerrevisions(),
            &ns,
            body,
        )) {
            Ok(h) => Ok(h),
            Err(e) if e.reason == StatusReason::AlreadyExists => {
                let existing = ctx.send(ApiRequest::get(
                    &principal,
                    controllerrevisions(),
                    &ns,
                    &name,
                ))?;
                if existing.field("data") == Some(&history_patch(ds)) {
                    return Ok(existing);
                }
                let mut fresh = Arc::unwrap_or_clone(ctx.send(ApiRequest::get(
                    &principal,
                    daemonsets(),
                    &ns,
                    meta::name(ds),
                ))?);
                let next = meta::i64_at(&fresh, "/status/collisionCount").unwrap_or(0) + 1;
                fresh["status"]["collisionCount"] = json!(next);
                ctx.send(client::update_status_object(
                    &principal,
                    daemonsets(),
                    fresh,
                ))?;
                Err(e.into())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// `dedupCurHistories`: of several revisions matching the template, the highest revision
    /// stays; pods carrying another one's hash are relabelled, then the duplicates deleted.
    fn dedup_cur_histories(
        &mut self,
        ctx: &mut Ctx<'_>,
        ds: &Value,
        current: Vec<Arc<Value>>,
    ) -> Result<Arc<Value>, ReconcileError> {
        if current.len() == 1 {
            return Ok(current[0].clone());
        }
        let principal = self.principal();
        let ns = meta::namespace(ds).to_owned();
        let mut keep = current[0].clone();
        for c in &current {
            if revision_of(c) >= revision_of(&keep) {
                keep = c.clone();
            }
        }
        let keep_hash = label_of(&keep, HASH_LABEL).unwrap_or("").to_owned();
        for c in current
            .iter()
            .filter(|c| meta::name(c) != meta::name(&keep))
        {
            let daemon_pods: Vec<Arc<Value>> = nodes_to_daemon_pods(ctx.cache, ds, true)
                .into_values()
                .flatten()
                .collect();
            for pod in daemon_pods {
                if label_of(&pod, HASH_LABEL) != Some(keep_hash.as_str()) {
                    ctx.send(ApiRequest::patch(
                        &principal,
                        pods(),
                        &ns,
                        meta::name(&pod),
                        PatchType::Merge,
                        json!({"metadata": {"labels": {HASH_LABEL: keep_hash}}}),
                    ))?;
                }
            }
            ctx.send(ApiRequest::delete(
                &principal,
                controllerrevisions(),
                &ns,
                meta::name(c),
            ))?;
        }
        Ok(keep)
    }

    /// `cleanupHistory`: old revisions beyond `revisionHistoryLimit` go, oldest first, except
    /// those a live pod (deleted terminal ones included) still carries the hash of.
    fn cleanup_history(
        &mut self,
        ctx: &mut Ctx<'_>,
        ds: &Value,
        mut old: Vec<Arc<Value>>,
    ) -> Result<(), ReconcileError> {
        let to_keep = meta::i64_at(ds, "/spec/revisionHistoryLimit").unwrap_or(10);
        let mut to_kill = old.len() as i64 - to_keep;
        if to_kill <= 0 {
            return Ok(());
        }
        let live: std::collections::BTreeSet<String> = nodes_to_daemon_pods(ctx.cache, ds, true)
            .values()
            .flatten()
            .filter_map(|p| label_of(p, HASH_LABEL).map(str::to_owned))
            .collect();
        old.sort_by_key(|h| revision_of(h));
        let principal = self.principal();
        for h in old {
            if to_kill <= 0 {
                break;
            }
            if label_of(&h, HASH_LABEL).is_some_and(|x| live.contains(x)) {
                continue;
            }
            ctx.send(ApiRequest::delete(
                &principal,
                controllerrevisions(),
                meta::namespace(&h),
                meta::name(&h),
            ))
            .map_err(|e| {
                ReconcileError::Other(format!(
                    "failed to clean up revisions of DaemonSet: {}",
                    e.message
                ))
            })?;
            to_kill -= 1;
        }
        Ok(())
    }

    /// `updateDaemonSetStatus` and `storeDaemonSetStatus`: the counts, written only when one
    /// differs or observedGeneration is behind; a failed write is retried once on a fresh copy.
    /// Returns a requeue after minReadySeconds while ready pods are not yet available.
    fn update_status(
        &mut self,
        ctx: &mut Ctx<'_>,
        ds: &Arc<Value>,
        node_list: &[Arc<Value>],
        hash: &str,
        update_observed_gen: bool,
    ) -> Result<Option<u64>, ReconcileError> {
        let node_to_pods = nodes_to_daemon_pods(ctx.cache, ds, false);
        let c = status_counts(ds, node_list, &node_to_pods, hash, ctx.now);
        let stored = |f: &str| meta::i64_at(ds, &format!("/status/{f}")).unwrap_or(0);
        let generation = meta::generation(ds);
        let same = stored("desiredNumberScheduled") == c.desired
            && stored("currentNumberScheduled") == c.current
            && stored("numberMisscheduled") == c.misscheduled
            && stored("numberReady") == c.ready
            && stored("updatedNumberScheduled") == c.updated
            && stored("numberAvailable") == c.available
            && stored("numberUnavailable") == c.unavailable
            && stored("observedGeneration") >= generation;
        if !same {
            let principal = self.principal();
            let observed = if update_observed_gen {
                generation
            } else {
                stored("observedGeneration")
            };
            let status = |base: &Value| daemon_set_status(base, &c, observed);
            let mut body = ds.as_ref().clone();
            body["status"] = status(ds);
            let first = ctx.send(client::update_status_object(&principal, daemonsets(), body));
            if first.is_err() {
                // StatusUpdateRetries = 1: one more try on the latest copy.
                let mut fresh = Arc::unwrap_or_clone(ctx.send(ApiRequest::get(
                    &principal,
                    daemonsets(),
                    meta::namespace(ds),
                    meta::name(ds),
                ))?);
                fresh["status"] = status(&fresh);
                ctx.send(client::update_status_object(
                    &principal,
                    daemonsets(),
                    fresh,
                ))?;
            }
        }
        let min_ready = meta::i64_at(ds, "/spec/minReadySeconds").unwrap_or(0);
        Ok((min_ready > 0 && c.ready != c.available).then_some(min_ready as u64 * 1000))
    }
}

/// `updatePod`'s `enqueueDaemonSetAfter(ds, minReadySeconds + 1s)` when a pod turns ready: the
/// handler here cannot delay a key, so the sync asks for the same wake-up, counted from the
/// pod's Ready transition, for every pod that is ready but not yet available.
fn ready_not_yet_available_requeue(cache: &Informer, ds: &Value, now: SimTime) -> Option<u64> {
    let min_ready = meta::i64_at(ds, "/spec/minReadySeconds").unwrap_or(0);
    if min_ready <= 0 {
        return None;
    }
    let now_ms = now.unix_ms();
    nodes_to_daemon_pods(cache, ds, false)
        .values()
        .flatten()
        .filter(|p| pod_is_ready(p) && !pod_available(p, min_ready, now))
        .filter_map(|p| {
            let since = p
                .field("status")
                .and_then(|s| crate::conditions::find_condition(s, "Ready"))
                .map(|c| str_at(c, "/lastTransitionTime"))
                .and_then(crate::time::parse_rfc3339_unix_ms)?;
            let due = since + min_ready * 1000 + 1000;
            (due > now_ms).then(|| (due - now_ms) as u64)
        })
        .min()
}

/// `DaemonSetStatus` as Go prints it [k8s.io/api apps/v1 types.go]: the four counts without
/// omitempty always, then observedGeneration, updatedNumberScheduled, numberAvailable and
/// numberUnavailable only when not zero, then the stored collisionCount and conditions.
fn daemon_set_status(base: &Value, c: &StatusCounts, observed_generation: i64) -> Value {
    let mut s = Map::new();
    s.insert("currentNumberScheduled", json!(c.current));
    s.insert("numberMisscheduled", json!(c.misscheduled));
    s.insert("desiredNumberScheduled", json!(c.desired));
    s.insert("numberReady", json!(c.ready));
    for (k, v) in [
        ("observedGeneration", observed_generation),
        ("updatedNumberScheduled", c.updated),
        ("numberAvailable", c.available),
        ("numberUnavailable", c.unavailable),
    ] {
        if v != 0 {
            s.insert(k, json!(v));
        }
    }
    if let Some(cc) = base.at("/status/collisionCount").filter(|v| !v.is_null()) {
        s.insert("collisionCount", cc.clone());
    }
    if let Some(conds) = base
        .at("/status/conditions")
        .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
    {
        s.insert("conditions", conds.clone());
    }
    Value::Object(s)
}

/// `nodeInSameCondition` and `shouldIgnoreNodeUpdate`: a node update matters unless only its
/// resourceVersion and the timestamps of conditions that stayed the same changed.
fn should_ignore_node_update(old: &Value, new: &Value) -> bool {
    let true_types = |n: &Value| -> std::collections::BTreeSet<String> {
        n.at("/status/conditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|c| str_at(c, "/status") == "True")
            .map(|c| str_at(c, "/type").to_owned())
            .collect()
    };
    if true_types(old) != true_types(new) {
        return false;
    }
    let strip = |n: &Value| {
        let mut n = n.clone();
        if let Some(m) = n.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("resourceVersion");
        }
        if let Some(s) = n.get_mut("status").and_then(Value::as_object_mut) {
            s.remove("conditions");
        }
        n
    };
    strip(old) == strip(new)
}

impl Reconciler for DaemonSetController {
    fn name(&self) -> String {
        "daemonset-controller".into()
    }

    fn event_api(&self) -> Option<EventApi> {
        Some(EventApi::CoreV1 {
            component: "daemonset-controller".into(),
            host: String::new(),
        })
    }

    fn principal(&self) -> String {
        crate::api::principals::DAEMON_SET_CONTROLLER.into()
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        *gr == daemonsets() || *gr == controllerrevisions() || *gr == pods() || *gr == nodes()
    }

    /// The pod informer holds only pods a DaemonSet controls (orphans are not adopted here).
    fn accepts(&self, gr: &GroupResource, obj: &Value) -> bool {
        *gr != pods() || meta::controller_kind(obj) == Some("DaemonSet")
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        cache: &Informer,
    ) -> Vec<ObjectKey> {
        let gr = &ev.key.gr;
        if *gr == daemonsets() {
            if ev.event_type == WatchEventType::Deleted {
                self.expectations.remove(&*ev.key);
            }
            return vec![ObjectKey::clone(&ev.key)];
        }
        if *gr == nodes() {
            // addNode / updateNode (kube has no handler for deleted nodes).
            let ds_gr = daemonsets();
            return match (ev.event_type, old) {
                (WatchEventType::Added, _) => cache
                    .list(&ds_gr)
                    .filter(|ds| node_should_run(new, ds).0)
                    .map(|ds| ObjectKey::new(ds_gr.clone(), meta::namespace(ds), meta::name(ds)))
                    .collect(),
                (WatchEventType::Modified, Some(o)) if !should_ignore_node_update(o, new) => cache
                    .list(&ds_gr)
                    .filter(|ds| node_should_run(o, ds) != node_should_run(new, ds))
                    .map(|ds| ObjectKey::new(ds_gr.clone(), meta::namespace(ds), meta::name(ds)))
                    .collect(),
                _ => Vec::new(),
            };
        }
        // Pods and ControllerRevisions: their controlling DaemonSet.
        let Some(owner) = super::owner_key(new, &ev.key, "DaemonSet", daemonsets()) else {
            return Vec::new();
        };
        if *gr == pods() {
            match ev.event_type {
                WatchEventType::Added if meta::is_terminating(new) => {
                    self.deletion_observed(&owner)
                }
                WatchEventType::Added => self.creation_observed(&owner),
                WatchEventType::Deleted => self.deletion_observed(&owner),
                WatchEventType::Modified => {
                    if old.is_some_and(|o| {
                        str_at(o, "/metadata/resourceVersion")
                            == str_at(new, "/metadata/resourceVersion")
                    }) {
                        return Vec::new();
                    }
                    if meta::is_terminating(new) {
                        self.deletion_observed(&owner);
                    }
                }
            }
        }
        vec![owner]
    }

    fn reset(&mut self) {
        self.expectations.clear();
    }

    /// `syncDaemonSet`.
    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let Some(ds) = ctx.cache.get(key).cloned() else {
            self.expectations.remove(key);
            return Ok(ReconcileAction::AwaitChange);
        };
        let node_list: Vec<Arc<Value>> = ctx.cache.list(&nodes()).cloned().collect();
        let selector = ds.at("/spec/selector");
        let empty = |f: &str| {
            selector.and_then(|s| s.get(f)).is_none_or(|v| {
                v.is_null()
                    || v.as_object().is_some_and(Map::is_empty)
                    || v.as_array().is_some_and(Vec::is_empty)
            })
        };
        if empty("matchLabels") && empty("matchExpressions") {
            ctx.record(EventNote::new(
                ObjectRef::to(&ds, "apps/v1", "DaemonSet"),
                EventType::Warning,
                "SelectingAll",
                "This daemon set is selecting all pods. A non-empty selector is required.".into(),
            ));
            return Ok(ReconcileAction::AwaitChange);
        }
        // A DaemonSet being deleted: its revisions may be going too, so no status either.
        if meta::is_terminating(&ds) {
            return Ok(ReconcileAction::AwaitChange);
        }
        let (cur, old) = self.construct_history(ctx, &ds)?;
        let hash = label_of(&cur, HASH_LABEL).unwrap_or("").to_owned();
        if !self.satisfied(key, ctx.now) {
            // Only the status; observedGeneration stays, as this generation was not acted on.
            let requeue = self.update_status(ctx, &ds, &node_list, &hash, false)?;
            return Ok(requeue.map_or(ReconcileAction::AwaitChange, |ms| {
                ReconcileAction::RequeueAfter { ms }
            }));
        }
        // updateDaemonSet: manage, then the rolling update once expectations hold, then history.
        let mut requeue: Option<u64> = None;
        let result = (|| -> Result<(), ReconcileError> {
            let node_to_pods = nodes_to_daemon_pods(ctx.cache, &ds, false);
            let mut to_create = Vec::new();
            let mut to_delete = Vec::new();
            for node in &node_list {
                let (create, delete) =
                    self.pods_should_be_on_node(ctx, node, &node_to_pods, &ds, &hash, &mut requeue);
                if create {
                    to_create.push(meta::name(node).to_owned());
                }
                to_delete.extend(delete);
            }
            // getUnscheduledPodsWithoutNode: unbound pods for nodes that no longer exist.
            for (node, pods) in &node_to_pods {
                if node_list.iter().any(|n| meta::name(n) == node) {
                    continue;
                }
                to_delete.extend(
                    pods.iter()
                        .filter(|p| str_at(p, "/spec/nodeName").is_empty())
                        .map(|p| meta::name(p).to_owned()),
                );
            }
            self.sync_nodes(ctx, key, &ds, &to_delete, &to_create, &hash)?;
            if self.satisfied(key, ctx.now)
                && str_at(&ds, "/spec/updateStrategy/type") == "RollingUpdate"
            {
                let node_to_pods = nodes_to_daemon_pods(ctx.cache, &ds, false);
                let rng = &mut *ctx.rng;
                let plan =
                    rolling_update_plan(&ds, &node_list, node_to_pods, &hash, ctx.now, |o| {
                        o.shuffle(rng)
                    });
                self.sync_nodes(ctx, key, &ds, &plan.delete, &plan.create, &hash)?;
            }
            self.cleanup_history(ctx, &ds, old)
        })();
        let status = self.update_status(ctx, &ds, &node_list, &hash, true);
        result?;
        if let Some(ms) = status? {
            requeue = Some(requeue.map_or(ms, |r| r.min(ms)));
        }
        if let Some(ms) = ready_not_yet_available_requeue(ctx.cache, &ds, ctx.now) {
            requeue = Some(requeue.map_or(ms, |r| r.min(ms)));
        }
        Ok(requeue.map_or(ReconcileAction::AwaitChange, |ms| {
            ReconcileAction::RequeueAfter { ms }
        }))
    }
}

#[cfg(test)]
#[path = "daemonset_tests.rs"]
mod tests;
