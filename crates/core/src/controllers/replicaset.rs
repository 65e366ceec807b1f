//! The ReplicaSet controller [kubernetes pkg/controller/replicaset/replica_set.go,
//! replica_set_utils.go]: creates and deletes Pods to match spec.replicas (slow-start batches,
//! burst 500, creation/deletion expectations so a stale cache never double-creates), and writes
//! status with the ReplicaFailure condition.

use crate::api::meta::JsonPointer;
use std::collections::BTreeMap;
use std::sync::Arc;

use rand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::util::{self, pods, replicasets, str_at};
use super::{owner_key, Action, Ctx, ReconcileError, Reconciler};
use crate::api::{GroupResource, ObjectKey, StatusReason, WatchEvent, WatchEventType};
use crate::engine::informer::{pod_is_active, pod_is_ready, Informer};
use crate::time::SimTime;

/// `burstReplicas`: at most this many creations or deletions per sync.
pub const BURST_REPLICAS: i64 = 500;
/// `ExpectationsTimeout`.
pub const EXPECTATIONS_TIMEOUT_MS: u64 = 5 * 60 * 1000;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expectation {
    pub adds: i64,
    pub dels: i64,
    pub set_at: SimTime,
}

#[derive(Clone, Debug, Default)]
pub struct ReplicaSetController {
    expectations: BTreeMap<ObjectKey, Expectation>,
}

impl ReplicaSetController {
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

/// Deletion preference (`getPodsToDelete` ranking, simplified): unassigned before assigned,
/// Pending before Running, not ready before ready, more restarts first, newer first.
fn deletion_rank(pod: &Value) -> (u8, u8, u8, i64, std::cmp::Reverse<String>, String) {
    let assigned = u8::from(!str_at(pod, "/spec/nodeName").is_empty());
    let phase = match str_at(pod, "/status/phase") {
        "Pending" => 0,
        "Unknown" => 1,
        _ => 2,
    };
    let restarts: i64 = pod
        .at("/status/containerStatuses")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .filter_map(|c| c.get("restartCount").and_then(Value::as_i64))
                .sum()
        })
        .unwrap_or(0);
    (
        assigned,
        phase,
        u8::from(pod_is_ready(pod)),
        -restarts,
        std::cmp::Reverse(str_at(pod, "/metadata/creationTimestamp").to_owned()),
        util::name(pod).to_owned(),
    )
}

/// `IsPodAvailable`: Ready and either no minReadySeconds or ready for longer than it.
pub fn pod_available(pod: &Value, min_ready_seconds: i64, now: SimTime) -> bool {
    if !pod_is_ready(pod) {
        return false;
    }
    if min_ready_seconds == 0 {
        return true;
    }
    let since = pod
        .get("status")
        .and_then(|s| util::find_condition(s, "Ready"))
        .map(|c| str_at(c, "/lastTransitionTime"))
        .and_then(crate::time::parse_rfc3339_unix_ms);
    since.is_some_and(|t| t + min_ready_seconds * 1000 < now.unix_ms())
}

impl Reconciler for ReplicaSetController {
    fn name(&self) -> String {
        "replicaset-controller".into()
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
                self.expectations.remove(&ev.key);
            }
            return vec![ev.key.clone()];
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
            WatchEventType::Deleted => {
                if let Some(e) = self.expectations.get_mut(&owner) {
                    e.dels -= 1;
                }
            }
            WatchEventType::Modified => {
                if old.is_some_and(|o| {
                    str_at(o, "/metadata/resourceVersion")
                        == str_at(new, "/metadata/resourceVersion")
                }) {
                    return Vec::new();
                }
            }
        }
        vec![owner]
    }

    fn reset(&mut self) {
        self.expectations.clear();
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Result<Action, ReconcileError> {
        // Shared with the cache; copied only when a status write needs a body.
        let Some(rs) = ctx.cache.get(key).cloned() else {
            self.expectations.remove(key);
            return Ok(Action::AwaitChange);
        };
        let principal = self.principal();
        let uid = util::uid(&rs).to_owned();
        let want = util::i64_at(&rs, "/spec/replicas").unwrap_or(1);
        let min_ready = util::i64_at(&rs, "/spec/minReadySeconds").unwrap_or(0);
        let counts = ctx.cache.pod_counts(&uid);
        let active = counts.active as i64;
        let mut manage_err: Option<ReconcileError> = None;
        if self.satisfied(key, ctx.now) && !util::is_terminating(&rs) {
            let diff = active - want;
            if diff < 0 {
                let n = (-diff).min(BURST_REPLICAS);
                self.expectations.insert(
                    key.clone(),
                    Expectation {
                        adds: n,
                        dels: 0,
                        set_at: ctx.now,
                    },
                );
                let mut remaining = n;
                let mut batch = 1;
                'batches: while remaining > 0 {
                    let size = batch.min(remaining);
                    let mut failed = false;
                    for _ in 0..size {
                        let pod = pod_from_template(&rs, &random_suffix(ctx.rng));
                        if let Err(e) =
                            ctx.send(util::create(&principal, pods(), &key.namespace, pod))
                        {
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
                let mut candidates: Vec<Arc<Value>> = ctx
                    .cache
                    .owned_by(&uid)
                    .filter(|p| pod_is_active(p))
                    .cloned()
                    .collect();
                candidates.sort_by_cached_key(|p| deletion_rank(p));
                self.expectations.insert(
                    key.clone(),
                    Expectation {
                        adds: 0,
                        dels: n,
                        set_at: ctx.now,
                    },
                );
                for p in candidates.iter().take(n as usize) {
                    if let Err(e) = ctx.send(util::delete(
                        &principal,
                        pods(),
                        &key.namespace,
                        util::name(p),
                    )) {
                        if let Some(exp) = self.expectations.get_mut(key) {
                            exp.dels -= 1;
                        }
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
        let mut status = rs.get("status").cloned().unwrap_or_else(|| json!({}));
        let has_failure = util::find_condition(&status, "ReplicaFailure").is_some();
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
            util::remove_condition(&mut status, "ReplicaFailure");
        }
        // ReplicaSetStatus as Go prints it [k8s.io/api apps/v1 types.go]: its fields in order,
        // `replicas` always (no omitempty), the others only when not zero or empty.
        let conditions = status
            .get("conditions")
            .filter(|c| c.as_array().is_some_and(|l| !l.is_empty()))
            .cloned();
        let mut fresh = serde_json::Map::new();
        fresh.insert("replicas".into(), json!(active));
        for (field, v) in [
            ("fullyLabeledReplicas", active),
            ("readyReplicas", counts.ready as i64),
            ("availableReplicas", available),
        ] {
            if v != 0 {
                fresh.insert(field.into(), json!(v));
            }
        }
        fresh.insert("observedGeneration".into(), json!(util::generation(&rs)));
        if let Some(c) = conditions {
            fresh.insert("conditions".into(), c);
        }
        let status = Value::Object(fresh);
        if Some(&status) != rs.get("status") {
            let mut body = rs.as_ref().clone();
            body["status"] = status.clone();
            // updateReplicaSetStatus: on failure, fetch the latest copy and retry once.
            let updated = match ctx.send(util::update_status(&principal, replicasets(), body)) {
                Ok(u) => u,
                Err(e) if e.reason == StatusReason::Conflict => {
                    let mut fresh = ctx.send(util::get(
                        &principal,
                        replicasets(),
                        &key.namespace,
                        &key.name,
                    ))?;
                    // The same newStatus, observedGeneration included: the generation this
                    // sync acted on, not the fresh copy's [replica_set_utils.go
                    // updateReplicaSetStatus].
                    fresh["status"] = status;
                    ctx.send(util::update_status(&principal, replicasets(), fresh))?
                }
                Err(e) => return Err(e.into()),
            };
            let ready = util::i64_at(&updated, "/status/readyReplicas").unwrap_or(0);
            let avail = util::i64_at(&updated, "/status/availableReplicas").unwrap_or(0);
            if manage_err.is_none() && min_ready > 0 && ready == want && avail != want {
                return Ok(Action::RequeueAfter {
                    ms: min_ready as u64 * 1000,
                });
            }
        }
        match manage_err {
            Some(e) => Err(e),
            None => Ok(Action::AwaitChange),
        }
    }
}

/// `SetCondition` for ReplicaSets (ReplicaFailure True).
fn set_rs_condition(status: &mut Value, reason: &str, message: &str, now: SimTime) {
    let mut list: Vec<Value> = status
        .get("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(c) = list.iter().find(|c| str_at(c, "/type") == "ReplicaFailure") {
        if str_at(c, "/status") == "True" && str_at(c, "/reason") == reason {
            return;
        }
    }
    list.retain(|c| str_at(c, "/type") != "ReplicaFailure");
    list.push(json!({
        "type": "ReplicaFailure",
        "status": "True",
        "lastTransitionTime": now.rfc3339(),
        "reason": reason,
        "message": message,
    }));
    status["conditions"] = Value::Array(list);
}

/// The Pod a ReplicaSet creates: the template's labels, annotations and spec, owned by the RS.
pub fn pod_from_template(rs: &Value, suffix: &str) -> Value {
    let template = rs.at("/spec/template").cloned().unwrap_or(Value::Null);
    let mut meta = json!({
        "name": format!("{}-{suffix}", util::name(rs)),
        "generateName": format!("{}-", util::name(rs)),
        "namespace": util::namespace(rs),
        "ownerReferences": [util::owner_reference(rs)],
    });
    for f in ["labels", "annotations"] {
        if let Some(v) = template.at(&format!("/metadata/{f}")) {
            meta[f] = v.clone();
        }
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": template.get("spec").cloned().unwrap_or_else(|| json!({})),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
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

    #[test]
    fn unassigned_and_pending_pods_are_deleted_first() {
        let running = json!({"metadata": {"name": "a"}, "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}});
        let pending =
            json!({"metadata": {"name": "b"}, "spec": {}, "status": {"phase": "Pending"}});
        assert!(deletion_rank(&pending) < deletion_rank(&running));
    }
}
