//! The ReplicaSet controller [kubernetes pkg/controller/replicaset/replica_set.go,
//! replica_set_utils.go]: creates and deletes Pods to match spec.replicas (slow-start batches,
//! burst 500, creation/deletion expectations so a stale cache never double-creates), and writes
//! status with the ReplicaFailure condition.

use crate::api::meta::Fields;
use crate::json::path;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::json::{json, Value};
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::owner_key;
use super::util::{pods, record_pod_control, replicasets, PodOp};
use crate::api::meta::{self, str_at, JsonPointer};
use crate::api::selector::Selector;
use crate::api::{ApiRequest, GroupResource, ObjectKey, StatusReason, WatchEvent, WatchEventType};
use crate::conditions;
use crate::runtime::client;
use crate::runtime::informer::{pod_is_active, pod_is_ready, Informer};
use crate::runtime::{Ctx, EventApi, Explanation, ReconcileAction, ReconcileError, Reconciler};
use crate::time::SimTime;

/// The ReplicaSet as its events name it.
const RS_REF: (&str, &str) = ("apps/v1", "ReplicaSet");

/// `burstReplicas`: at most this many creations or deletions per sync.
pub const BURST_REPLICAS: i64 = 500;
/// `ExpectationsTimeout`.
pub const EXPECTATIONS_TIMEOUT_MS: u64 = 5 * 60 * 1000;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
/// kube's `ControlleeExpectations` [pkg/controller/controller_utils.go]: the creations and
/// deletions one ReplicaSet still waits to observe.
pub struct ControlleeExpectations {
    pub adds: i64,
    pub dels: i64,
    pub set_at: SimTime,
    /// The pods this controller deleted and has not yet seen go (kube's
    /// `UIDTrackingControllerExpectations`): a deletion is observed once per pod, when its
    /// deletionTimestamp appears or when it is removed, whichever comes first.
    #[serde(default)]
    pub deleting: std::collections::BTreeSet<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ReplicaSetController {
    expectations: BTreeMap<ObjectKey, ControlleeExpectations>,
}

impl ReplicaSetController {
    /// `DeletionObserved`: lowers the expected deletions once for each pod this controller
    /// deleted.
    fn deletion_observed(&mut self, owner: &ObjectKey, pod: &str) {
        if let Some(e) = self.expectations.get_mut(owner) {
            if e.deleting.remove(pod) {
                e.dels -= 1;
            }
        }
    }

    pub fn new() -> Self {
        Self::default()
    }

    fn satisfied(&self, key: &ObjectKey, now: SimTime) -> bool {
        match self.expectations.get(key) {
            None => true,
            Some(e) => {
                (e.adds <= 0 && e.dels <= 0)
                    || now.as_ms() >= e.set_at.as_ms() + EXPECTATIONS_TIMEOUT_MS
            }
        }
    }
}

/// Random 5-character suffix, as the API server's generateName produces.
pub fn random_suffix(rng: &mut impl Rng) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..5)
        .map(|_| ALPHANUMS[rng.random_range(0..ALPHANUMS.len())] as char)
        .collect()
}

/// The annotation that ranks a pod for scale-down (`PodDeletionCost`, on by default).
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";

/// One pod as `ActivePodsWithRanks` sees it: every field `delete_before` compares, read from
/// the pod once, not at each of the sort's comparisons.
#[derive(Clone)]
struct Ranked<'a> {
    node: &'a str,
    phase: u8,
    ready: bool,
    deletion_cost: i64,
    /// Active pods of this ReplicaSet and its siblings on the same node, itself included.
    rank: usize,
    /// Ready's lastTransitionTime when Ready (`podReadyTime`), in Unix ms.
    ready_since_ms: Option<i64>,
    restarts: i64,
    created_ms: Option<i64>,
    uid: &'a str,
}

pub(super) fn phase_ordinal(pod: &Value) -> u8 {
    // `podPhaseToOrdinal`; any other phase reads as 0.
    match str_at(pod, path!("/status/phase")) {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    }
}

fn deletion_cost(pod: &Value) -> i64 {
    // `GetDeletionCostFromPodAnnotations`: an int32; missing or invalid counts as 0.
    meta::annotation(pod, POD_DELETION_COST)
        .and_then(|v| v.parse::<i32>().ok())
        .map_or(0, i64::from)
}

pub(super) fn max_container_restarts(pod: &Value) -> i64 {
    pod.at(path!("/status/containerStatuses"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.field("restartCount").and_then(Value::as_i64))
        .max()
        .unwrap_or(0)
}

pub(super) fn time_ms<'p>(pod: &Value, ptr: impl Into<crate::json::Pointer<'p>>) -> Option<i64> {
    pod.at(ptr)
        .and_then(Value::as_str)
        .and_then(crate::time::parse_rfc3339_unix_ms)
}

/// `int64(math.Log2(float64(now - t)))` over nanoseconds, or -1 when `t` is not before now, as
/// `logarithmicRankDiff` buckets times. Computed as the exact integer log (Go's float log can
/// round up to the next bucket within a few nanoseconds of a power of two, from about 13 days
/// on; the exact form is the same on every platform, which the float one is not promised to be).
fn log2_bucket(now_ms: i64, t_ms: i64) -> i64 {
    let ns = (now_ms - t_ms).saturating_mul(1_000_000);
    if ns > 0 {
        i64::from(63 - ns.leading_zeros())
    } else {
        -1
    }
}

/// `afterOrZero`: a missing time first, else the later one first.
pub(super) fn after_or_zero(a: Option<i64>, b: Option<i64>) -> bool {
    match (a, b) {
        (None, _) | (_, None) => a.is_none(),
        (Some(a), Some(b)) => a > b,
    }
}

/// `ActivePodsWithRanks.Less` [kubernetes pkg/controller/controller_utils.go, 1.32 with
/// PodDeletionCost on and LogarithmicScaleDown locked on]: whether `a` goes before `b`.
fn delete_before(a: &Ranked<'_>, b: &Ranked<'_>, now_ms: i64) -> bool {
    let (node_a, node_b) = (a.node, b.node);
    // 1. Unassigned before assigned.
    if node_a != node_b && (node_a.is_empty() || node_b.is_empty()) {
        return node_a.is_empty();
    }
    // 2. Pending < Unknown < Running.
    let (pa, pb) = (a.phase, b.phase);
    if pa != pb {
        return pa < pb;
    }
    // 3. Not ready before ready.
    if a.ready != b.ready {
        return !a.ready;
    }
    // 4. Lower pod-deletion-cost first.
    let (ca, cb) = (a.deletion_cost, b.deletion_cost);
    if ca != cb {
        return ca < cb;
    }
    // 5. Doubled up (more related pods on its node) first.
    if a.rank != b.rank {
        return a.rank > b.rank;
    }
    let by_time = |ta: Option<i64>, tb: Option<i64>| -> Option<bool> {
        if ta == tb {
            return None;
        }
        let (Some(x), Some(y)) = (ta, tb) else {
            return Some(after_or_zero(ta, tb));
        };
        let diff = log2_bucket(now_ms, x) - log2_bucket(now_ms, y);
        Some(if diff == 0 { a.uid < b.uid } else { diff < 0 })
    };
    // 6. Both ready: ready for less time first (logarithmic buckets, then UID).
    if a.ready && b.ready {
        if let Some(first) = by_time(a.ready_since_ms, b.ready_since_ms) {
            return first;
        }
    }
    // 7. More restarts (of any one container) first.
    let (ra, rb) = (a.restarts, b.restarts);
    if ra != rb {
        return ra > rb;
    }
    // 8. Newer first (logarithmic buckets, then UID).
    by_time(a.created_ms, b.created_ms).unwrap_or(false)
}

/// `getPodsToDelete` with `getPodsRankedByRelatedPodsOnSameNode` [pkg/controller/replicaset
/// replica_set.go]: `candidates` ordered for deletion, ranked by how many active `related`
/// pods (of every ReplicaSet with the same controller) share their node. kube's `sort.Sort` is
/// not stable; equal pods keep name order here.
fn pods_to_delete(
    mut candidates: Vec<Arc<Value>>,
    related: &[&Arc<Value>],
    now: SimTime,
) -> Vec<Arc<Value>> {
    let mut on_node: BTreeMap<&str, usize> = BTreeMap::new();
    for p in related.iter().filter(|p| pod_is_active(p)) {
        *on_node
            .entry(str_at(p, path!("/spec/nodeName")))
            .or_default() += 1;
    }
    candidates.sort_by(|a, b| meta::name(a).cmp(meta::name(b)));
    let mut ranked: Vec<(Ranked<'_>, usize)> = candidates
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let ready = pod_is_ready(p);
            let node = str_at(p, path!("/spec/nodeName"));
            let ranked = Ranked {
                node,
                phase: phase_ordinal(p),
                ready,
                deletion_cost: deletion_cost(p),
                rank: on_node.get(node).copied().unwrap_or(0),
                ready_since_ms: ready.then(|| ready_since_ms(p)).flatten(),
                restarts: max_container_restarts(p),
                created_ms: time_ms(p, path!("/metadata/creationTimestamp")),
                uid: meta::uid(p),
            };
            (ranked, i)
        })
        .collect();
    let now_ms = now.unix_ms();
    // `delete_before` is not a strict weak order (see `sort_by_less`).
    super::util::sort_by_less(&mut ranked, |(a, _), (b, _)| delete_before(a, b, now_ms));
    ranked
        .into_iter()
        .map(|(_, i)| candidates[i].clone())
        .collect()
}

/// `getIndirectlyRelatedPods`: the pods selected by every ReplicaSet that has the same
/// controller as `rs`, each once [pkg/controller/replicaset replica_set.go]. A ReplicaSet with
/// no controller has none (`getReplicaSetsWithSameController` answers nil), so its pods all
/// rank 0; a selector `LabelSelectorAsSelector` refuses makes the whole answer nil, as kube's
/// error does. One pass over the namespace's pods asks each whether any of the selectors takes
/// it: the set kube builds selector by selector, in the cache's order (only counted per node,
/// so the order is not observable).
fn related_pods<'c>(
    rs: &Value,
    ns: &'c str,
    pod_gr: &'c GroupResource,
    cache: &'c Informer,
) -> Vec<&'c Arc<Value>> {
    let Some((_, _, controller)) = meta::controller_of(rs) else {
        return Vec::new();
    };
    let rs_gr = replicasets();
    let selectors: Result<Vec<Selector>, String> = cache
        .list_in(&rs_gr, ns)
        .filter(|r| meta::controller_of(r).is_some_and(|(_, _, u)| u == controller))
        .filter_map(|r| r.at(path!("/spec/selector")))
        .map(Selector::from_label_selector)
        .collect();
    let Ok(selectors) = selectors else {
        return Vec::new();
    };
    cache
        .list_in(pod_gr, ns)
        .filter(|p| selectors.iter().any(|s| s.matches_object(p)))
        .collect()
}

/// `IsPodAvailable`: Ready and either no minReadySeconds or ready for longer than it.
pub fn pod_available(pod: &Value, min_ready_seconds: i64, now: SimTime) -> bool {
    if !pod_is_ready(pod) {
        return false;
    }
    if min_ready_seconds == 0 {
        return true;
    }
    ready_since_ms(pod).is_some_and(|t| t + min_ready_seconds * 1000 < now.unix_ms())
}

/// The Ready condition's lastTransitionTime in Unix ms (`podReadyTime` for a ready pod).
pub(super) fn ready_since_ms(pod: &Value) -> Option<i64> {
    pod.field("status")
        .and_then(|s| conditions::find_condition(s, "Ready"))
        .map(|c| str_at(c, path!("/lastTransitionTime")))
        .and_then(crate::time::parse_rfc3339_unix_ms)
}

impl Reconciler for ReplicaSetController {
    fn name(&self) -> String {
        "replicaset-controller".into()
    }

    fn event_api(&self) -> Option<EventApi> {
        Some(EventApi::CoreV1 {
            component: "replicaset-controller".into(),
            host: String::new(),
        })
    }

    fn principal(&self) -> String {
        crate::api::principals::REPLICASET_CONTROLLER.into()
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        *gr == replicasets() || *gr == pods()
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        _cache: &Informer,
    ) -> Vec<ObjectKey> {
        if ev.key.gr == replicasets() {
            if ev.event_type == WatchEventType::Deleted {
                self.expectations.remove(&*ev.key);
            }
            return vec![ObjectKey::clone(&ev.key)];
        }
        let Some(owner) = owner_key(new, &ev.key, "ReplicaSet", replicasets()) else {
            return Vec::new();
        };
        match ev.event_type {
            WatchEventType::Added => {
                if let Some(e) = self.expectations.get_mut(&owner) {
                    e.adds -= 1;
                }
            }
            WatchEventType::Deleted => self.deletion_observed(&owner, &ev.key.name),
            WatchEventType::Modified => {
                if old.is_some_and(|o| {
                    str_at(o, path!("/metadata/resourceVersion"))
                        == str_at(new, path!("/metadata/resourceVersion"))
                }) {
                    return Vec::new();
                }
                // updatePod: a pod that got its deletionTimestamp counts as deleted at once, so
                // a replacement need not wait for the kubelet to stop it.
                if meta::is_terminating(new) {
                    self.deletion_observed(&owner, &ev.key.name);
                }
            }
        }
        vec![owner]
    }

    fn reset(&mut self) {
        self.expectations.clear();
    }

    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        // Shared with the cache; copied only when a status write needs a body.
        let Some(rs) = ctx.cache.get(key).cloned() else {
            self.expectations.remove(key);
            return Ok(ReconcileAction::AwaitChange);
        };
        let principal = self.principal();
        let uid = meta::uid(&rs).to_owned();
        let want = meta::i64_at(&rs, path!("/spec/replicas")).unwrap_or(1);
        let min_ready = meta::i64_at(&rs, path!("/spec/minReadySeconds")).unwrap_or(0);
        let counts = ctx.cache.pod_counts(&uid);
        let active = counts.active as i64;
        let mut manage_err: Option<ReconcileError> = None;
        if self.satisfied(key, ctx.now) && !meta::is_terminating(&rs) {
            let diff = active - want;
            if diff < 0 {
                let n = (-diff).min(BURST_REPLICAS);
                self.expectations.insert(
                    key.clone(),
                    ControlleeExpectations {
                        adds: n,
                        dels: 0,
                        set_at: ctx.now,
                        deleting: Default::default(),
                    },
                );
                let mut remaining = n;
                let mut batch = 1;
                'batches: while remaining > 0 {
                    let size = batch.min(remaining);
                    let mut failed = false;
                    for _ in 0..size {
                        let pod = pod_from_template(&rs, &random_suffix(ctx.rng));
                        let created =
                            ctx.send(ApiRequest::create(&principal, pods(), &key.namespace, pod));
                        record_pod_control(ctx, RS_REF, &rs, PodOp::Create, &created);
                        if let Err(e) = created {
                            failed = true;
                            if let Some(exp) = self.expectations.get_mut(key) {
                                exp.adds -= 1;
                            }
                            manage_err.get_or_insert(e.into());
                        }
                    }
                    remaining -= size;
                    if failed {
                        if let Some(exp) = self.expectations.get_mut(key) {
                            exp.adds -= remaining;
                        }
                        break 'batches;
                    }
                    batch *= 2;
                }
            } else if diff > 0 {
                let n = diff.min(BURST_REPLICAS);
                let candidates: Vec<Arc<Value>> = ctx
                    .cache
                    .owned_by(&uid)
                    .filter(|p| pod_is_active(p))
                    .cloned()
                    .collect();
                let pod_gr = pods();
                let related = related_pods(&rs, &key.namespace, &pod_gr, ctx.cache);
                let candidates = pods_to_delete(candidates, &related, ctx.now);
                let doomed: Vec<&Arc<Value>> = candidates.iter().take(n as usize).collect();
                self.expectations.insert(
                    key.clone(),
                    ControlleeExpectations {
                        adds: 0,
                        dels: n,
                        set_at: ctx.now,
                        deleting: doomed.iter().map(|p| meta::name(p).to_owned()).collect(),
                    },
                );
                for p in doomed {
                    let deleted = ctx.send(ApiRequest::delete(
                        &principal,
                        pods(),
                        &key.namespace,
                        meta::name(p),
                    ));
                    record_pod_control(ctx, RS_REF, &rs, PodOp::Delete(meta::name(p)), &deleted);
                    if let Err(e) = deleted {
                        self.deletion_observed(key, meta::name(p));
                        if e.reason != StatusReason::NotFound {
                            manage_err.get_or_insert(e.into());
                        }
                    }
                }
            }
        }
        // calculateStatus, from the cache as it was before this sync's writes.
        let available = if min_ready == 0 {
            counts.ready as i64
        } else {
            ctx.cache
                .owned_by(&uid)
                .filter(|p| pod_is_active(p) && pod_available(p, min_ready, ctx.now))
                .count() as i64
        };
        let mut status = rs.field("status").cloned().unwrap_or_else(|| json!({}));
        let has_failure = conditions::find_condition(&status, "ReplicaFailure").is_some();
        if let Some(e) = &manage_err {
            if !has_failure {
                let reason = if active < want {
                    "FailedCreate"
                } else {
                    "FailedDelete"
                };
                set_rs_condition(&mut status, reason, &e.to_string(), ctx.now);
            }
        } else if has_failure {
            conditions::remove_condition(&mut status, "ReplicaFailure");
        }
        // ReplicaSetStatus as Go prints it [k8s.io/api apps/v1 types.go]: its fields in order,
        // `replicas` always (no omitempty), the others only when not zero or empty.
        let conditions = status
            .field("conditions")
            .filter(|c| c.as_array().is_some_and(|l| !l.is_empty()))
            .cloned();
        // The counts, each with the rule it was counted by (side data, not in the object).
        let ready = counts.ready as i64;
        ctx.explain(Explanation::new(
            "status.replicas",
            active.to_string(),
            format!("{active} active pods owned (not terminating, not Succeeded or Failed)"),
        ));
        ctx.explain(Explanation::new(
            "status.readyReplicas",
            ready.to_string(),
            format!("{ready} of the {active} active pods have Ready=True"),
        ));
        let available_rule = if min_ready == 0 {
            format!("the {ready} ready pods (minReadySeconds 0)")
        } else {
            format!("{available} of the active pods Ready for at least minReadySeconds {min_ready}")
        };
        ctx.explain(Explanation::new(
            "status.availableReplicas",
            available.to_string(),
            available_rule,
        ));
        let mut fresh = crate::json::Map::new();
        fresh.insert("replicas", json!(active));
        for (field, v) in [
            ("fullyLabeledReplicas", active),
            ("readyReplicas", ready),
            ("availableReplicas", available),
        ] {
            if v != 0 {
                fresh.insert(field, json!(v));
            }
        }
        fresh.insert("observedGeneration", json!(meta::generation(&rs)));
        if let Some(c) = conditions {
            fresh.insert("conditions", c);
        }
        let status = Value::Object(fresh);
        if Some(&status) != rs.field("status") {
            let mut body = rs.as_ref().clone();
            body["status"] = status.clone();
            // updateReplicaSetStatus: on failure, fetch the latest copy and retry once.
            let updated = match ctx.send(client::update_status_object(
                &principal,
                replicasets(),
                body,
            )) {
                Ok(u) => u,
                Err(e) if e.reason == StatusReason::Conflict => {
                    let mut fresh = Arc::unwrap_or_clone(ctx.send(ApiRequest::get(
                        &principal,
                        replicasets(),
                        &key.namespace,
                        &key.name,
                    ))?);
                    // The same newStatus, observedGeneration included: the generation this
                    // sync acted on, not the fresh copy's [replica_set_utils.go
                    // updateReplicaSetStatus].
                    fresh["status"] = status;
                    ctx.send(client::update_status_object(
                        &principal,
                        replicasets(),
                        fresh,
                    ))?
                }
                Err(e) => return Err(e.into()),
            };
            let ready = meta::i64_at(&updated, path!("/status/readyReplicas")).unwrap_or(0);
            let avail = meta::i64_at(&updated, path!("/status/availableReplicas")).unwrap_or(0);
            if manage_err.is_none() && min_ready > 0 && ready == want && avail != want {
                return Ok(ReconcileAction::RequeueAfter {
                    ms: min_ready as u64 * 1000,
                });
            }
        }
        match manage_err {
            Some(e) => Err(e),
            None => Ok(ReconcileAction::AwaitChange),
        }
    }
}

/// `SetCondition` for ReplicaSets (ReplicaFailure True).
fn set_rs_condition(status: &mut Value, reason: &str, message: &str, now: SimTime) {
    let mut list: Vec<Value> = status
        .field("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(c) = list
        .iter()
        .find(|c| str_at(c, path!("/type")) == "ReplicaFailure")
    {
        if str_at(c, path!("/status")) == "True" && str_at(c, path!("/reason")) == reason {
            return;
        }
    }
    list.retain(|c| str_at(c, path!("/type")) != "ReplicaFailure");
    list.push(json!({
        "type": "ReplicaFailure",
        "status": "True",
        "lastTransitionTime": now.rfc3339(),
        "reason": reason,
        "message": message,
    }));
    status["conditions"] = Value::Array(list.into());
}

/// The Pod a ReplicaSet creates: the template's labels, annotations and spec, owned by the RS.
pub fn pod_from_template(rs: &Value, suffix: &str) -> Value {
    let template = rs.at(path!("/spec/template")).unwrap_or(&Value::Null);
    // Values are put in place after the `json!` shape is built: `json!` would copy each through
    // its serializer (the template's spec is the biggest part of a Pod).
    let mut meta = json!({
        "name": format!("{}-{suffix}", meta::name(rs)),
        "generateName": format!("{}-", meta::name(rs)),
        "namespace": meta::namespace(rs),
        "ownerReferences": [null],
    });
    meta["ownerReferences"][0] = meta::owner_reference(rs, true);
    for f in ["labels", "annotations"] {
        if let Some(v) = template.field("metadata").and_then(|m| m.get(f)) {
            meta[f] = v.clone();
        }
    }
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": null,
        "spec": null,
    });
    pod["metadata"] = meta;
    pod["spec"] = template.field("spec").cloned().unwrap_or_else(|| json!({}));
    pod
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Running pod on `node`, created `created` seconds and Ready since `ready` seconds after
    /// the epoch (None: not ready), with these container restart counts.
    fn pod(
        name: &str,
        uid: &str,
        node: &str,
        created: u64,
        ready: Option<u64>,
        restarts: &[i64],
    ) -> Arc<Value> {
        let t = |s: u64| SimTime::from_ms(s * 1000).rfc3339();
        let mut p = json!({
            "metadata": {"name": name, "namespace": "default", "uid": uid, "creationTimestamp": t(created)},
            "spec": {"nodeName": node},
            "status": {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": if ready.is_some() { "True" } else { "False" },
                    "lastTransitionTime": t(ready.unwrap_or(created))}],
                "containerStatuses": restarts.iter().map(|r| json!({"restartCount": r})).collect::<Vec<_>>(),
            },
        });
        if node.is_empty() {
            p["spec"] = json!({});
        }
        Arc::new(p)
    }

    /// `getIndirectlyRelatedPods`: the pods the selectors of every ReplicaSet with the same
    /// controller take (`matchExpressions` included), in its namespace only; none at all for a
    /// ReplicaSet without a controller, whose pods then all rank 0.
    #[test]
    fn related_pods_are_those_of_the_replicasets_with_the_same_controller() {
        let owned = |uid: &str| json!([{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": uid, "controller": true}]);
        let rs = |name: &str, ns: &str, owner: Option<&str>, selector: Value| {
            let mut r = json!({"metadata": {"name": name, "namespace": ns, "uid": format!("{ns}-{name}")},
                "spec": {"selector": selector}});
            if let Some(uid) = owner {
                r["metadata"]["ownerReferences"] = owned(uid);
            }
            (replicasets(), r)
        };
        let pod = |name: &str, ns: &str, labels: Value| {
            (
                pods(),
                json!({"metadata": {"name": name, "namespace": ns, "uid": format!("{ns}-{name}"), "labels": labels}}),
            )
        };
        let cache = Informer::of(&[
            rs(
                "new",
                "default",
                Some("d1"),
                json!({"matchLabels": {"app": "web", "hash": "b"}}),
            ),
            rs(
                "old",
                "default",
                Some("d1"),
                json!({"matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "hash", "operator": "In", "values": ["a"]}]}),
            ),
            rs(
                "other",
                "default",
                Some("d2"),
                json!({"matchLabels": {"app": "db"}}),
            ),
            rs(
                "alone",
                "default",
                None,
                json!({"matchLabels": {"app": "web"}}),
            ),
            pod("a1", "default", json!({"app": "web", "hash": "a"})),
            pod("b1", "default", json!({"app": "web", "hash": "b"})),
            pod("c1", "default", json!({"app": "web", "hash": "c"})),
            pod("db", "default", json!({"app": "db"})),
            pod("a2", "elsewhere", json!({"app": "web", "hash": "a"})),
        ]);
        let pod_gr = pods();
        let names = |rs_name: &str| {
            let key = ObjectKey::new(replicasets(), "default", rs_name);
            let rs = cache.get(&key).expect("cached").clone();
            related_pods(&rs, "default", &pod_gr, &cache)
                .into_iter()
                .map(|p| meta::name(p).to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(names("new"), ["a1", "b1"]);
        assert_eq!(names("old"), ["a1", "b1"]);
        assert_eq!(names("other"), ["db"]);
        assert!(names("alone").is_empty(), "{:?}", names("alone"));
    }

    fn first_deleted(pods: Vec<Arc<Value>>, now_s: u64) -> String {
        let copy = pods.clone();
        let related: Vec<&Arc<Value>> = copy.iter().collect();
        let order = pods_to_delete(pods, &related, SimTime::from_ms(now_s * 1000));
        meta::name(&order[0]).to_owned()
    }

    /// The cases below are worked from `ActivePodsWithRanks.Less`, rule by rule.
    #[test]
    fn scale_down_prefers_a_lower_pod_deletion_cost() {
        let mut b = pod("b", "u2", "node-2", 10, Some(20), &[0]);
        let a = pod("a", "u1", "node-1", 50, Some(60), &[0]);
        Arc::make_mut(&mut b)["metadata"]["annotations"] = json!({POD_DELETION_COST: "-100"});
        // Without the cost the newer (a) would go; the cost ranks before age.
        assert_eq!(first_deleted(vec![a.clone(), b], 1000), "b");
        let mut a = a;
        Arc::make_mut(&mut a)["metadata"]["annotations"] = json!({POD_DELETION_COST: "100"});
        assert_eq!(
            first_deleted(vec![a, pod("b", "u2", "node-2", 10, Some(20), &[0])], 1000),
            "b"
        );
    }

    #[test]
    fn scale_down_prefers_pods_doubled_up_on_a_node() {
        // p3 is the newest, but p1 and p2 share node-a: rank 2 beats rank 1.
        let pods = vec![
            pod("p1", "u1", "node-a", 10, Some(20), &[0]),
            pod("p2", "u2", "node-a", 10, Some(20), &[0]),
            pod("p3", "u3", "node-b", 50, Some(60), &[0]),
        ];
        assert_eq!(first_deleted(pods, 1000), "p1");
    }

    #[test]
    fn scale_down_prefers_the_pod_ready_for_less_time() {
        // At 1000 s: a has been ready 2 s (bucket floor(log2 2e9) = 30), b 100 s (36), though a
        // was created first; the shorter ready time goes first.
        let pods = vec![
            pod("a", "u1", "node-1", 10, Some(998), &[0]),
            pod("b", "u2", "node-2", 500, Some(900), &[0]),
        ];
        assert_eq!(first_deleted(pods, 1000), "a");
        assert_eq!(log2_bucket(1_000_000, 998_000), 30);
        assert_eq!(log2_bucket(1_000_000, 900_000), 36);
    }

    #[test]
    fn scale_down_compares_the_most_restarts_of_one_container_not_their_sum() {
        // a: max 3 (sum 3); b: max 2 (sum 4). kube deletes a.
        let pods = vec![
            pod("a", "u1", "node-1", 10, None, &[3, 0]),
            pod("b", "u2", "node-2", 10, None, &[2, 2]),
        ];
        assert_eq!(first_deleted(pods, 1000), "a");
    }

    #[test]
    fn scale_down_buckets_creation_times_and_breaks_ties_by_uid() {
        // At 1000 s, a was created 5 s ago, b 7 s ago: floor(log2 5e9) = floor(log2 7e9) = 32, the
        // same bucket, so the smaller UID (b's) goes first, not the newer pod.
        let pods = vec![
            pod("a", "uid-b", "node-1", 995, None, &[0]),
            pod("b", "uid-a", "node-2", 993, None, &[0]),
        ];
        assert_eq!(first_deleted(pods, 1000), "b");
        // Different buckets: 5 s (32) against 100 s (36): the newer goes first.
        let pods = vec![
            pod("a", "uid-b", "node-1", 995, None, &[0]),
            pod("b", "uid-a", "node-2", 900, None, &[0]),
        ];
        assert_eq!(first_deleted(pods, 1000), "a");
    }

    #[test]
    fn scale_down_takes_unassigned_then_pending_then_not_ready_first() {
        let mut pending = pod("pending", "u2", "node-1", 10, None, &[0]);
        Arc::make_mut(&mut pending)["status"]["phase"] = json!("Pending");
        let pods = vec![
            pod("ready", "u1", "node-1", 10, Some(20), &[0]),
            pending.clone(),
            pod("unassigned", "u3", "", 10, None, &[0]),
        ];
        assert_eq!(first_deleted(pods, 1000), "unassigned");
        let pods = vec![pod("ready", "u1", "node-1", 10, Some(20), &[0]), pending];
        assert_eq!(first_deleted(pods, 1000), "pending");
        let pods = vec![
            pod("ready", "u1", "node-1", 900, Some(990), &[0]),
            pod("unready", "u2", "node-2", 10, None, &[0]),
        ];
        assert_eq!(first_deleted(pods, 1000), "unready");
    }

    use rand::SeedableRng;

    #[test]
    fn generated_suffixes_use_kubes_alphabet_and_are_seeded() {
        let mut a = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut b = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let s = random_suffix(&mut a);
        assert_eq!(s.len(), 5);
        assert_eq!(s, random_suffix(&mut b));
    }

    #[test]
    fn a_pod_is_available_only_after_min_ready_seconds_strictly() {
        let pod = json!({"status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:10Z"}]}});
        assert!(pod_available(&pod, 0, SimTime(10_000)));
        assert!(!pod_available(&pod, 5, SimTime(15_000)));
        assert!(pod_available(&pod, 5, SimTime(15_001)));
    }
}
