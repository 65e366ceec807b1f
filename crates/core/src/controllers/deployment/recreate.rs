//! The Recreate strategy [pkg/controller/deployment/recreate.go]: every old pod gone before
//! the new ReplicaSet scales up, and the pod-deletion handler that wakes it.

use crate::api::meta::Fields;
use crate::json::Value;

use super::deployment_util::{rs_spec, rs_status};
use super::Sync;
use crate::api::meta::{self, str_at};
use crate::api::{ObjectKey, WatchEvent, WatchEventType};
use crate::controllers::owner_key;
use crate::controllers::util::{deployments, replicasets};
use crate::runtime::Informer;
use crate::runtime::{ReconcileAction, ReconcileError};

impl Sync<'_, '_> {
    pub(super) fn rollout_recreate(
        &mut self,
        rss: &mut Vec<Value>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let mut new_rs = self.new_rs(rss, false)?;
        let mut scaled_down = false;
        for i in 0..rss.len() {
            if Some(i) != new_rs && rs_spec(&rss[i]) > 0 {
                scaled_down |= self.scale_if_needed(rss, i, 0)?;
            }
        }
        if scaled_down {
            return self.sync_rollout_status(rss, new_rs);
        }
        if self.old_pods_running(rss, new_rs) {
            return self.sync_rollout_status(rss, new_rs);
        }
        if new_rs.is_none() {
            new_rs = self.new_rs(rss, true)?;
        }
        // `DeploymentComplete(d, &d.Status)`: the status already stored, not this sync's.
        if self.complete(self.status_ref()) {
            self.cleanup(rss, new_rs)?;
        }
        if let Some(n) = new_rs {
            self.scale_if_needed(rss, n, self.spec.replicas)?;
        }
        self.sync_rollout_status(rss, new_rs)
    }

    /// `oldPodsRunning` [pkg/controller/deployment/recreate.go]: an old ReplicaSet still counts
    /// replicas, or one of its pods has not reached a terminal phase (a Terminating pod still
    /// runs; an Unknown one might).
    pub(super) fn old_pods_running(&self, rss: &[Value], new_rs: Option<usize>) -> bool {
        if (0..rss.len()).any(|i| Some(i) != new_rs && rs_status(&rss[i], "replicas") > 0) {
            return true;
        }
        let new_uid = new_rs.map(|n| meta::uid(&rss[n]));
        rss.iter()
            .map(meta::uid)
            .filter(|uid| Some(*uid) != new_uid)
            .any(|uid| {
                self.ctx.cache.owned_by(uid).any(|p| {
                    p.field("kind").and_then(Value::as_str) == Some("Pod")
                        && !matches!(str_at(p, "/status/phase"), "Failed" | "Succeeded")
                })
            })
    }
}

/// kube's `deletePod` handler: when a pod goes, a Recreate Deployment left with no pods at all
/// is synced (its new ReplicaSet may scale up now).
pub(super) fn recreate_without_pods(
    ev: &WatchEvent,
    pod: &Value,
    cache: &Informer,
) -> Option<ObjectKey> {
    if ev.event_type != WatchEventType::Deleted {
        return None;
    }
    let rs_key = owner_key(pod, &ev.key, "ReplicaSet", replicasets())?;
    let rs = cache.get(&rs_key)?;
    let d_key = owner_key(rs, &rs_key, "Deployment", deployments())?;
    let d = cache.get(&d_key)?;
    if str_at(d, "/spec/strategy/type") != "Recreate" {
        return None;
    }
    let rs_gr = replicasets();
    let d_uid = meta::uid(d);
    let pods_left = cache
        .list(&rs_gr)
        .filter(|r| meta::controller_of(r).is_some_and(|(_, _, u)| u == d_uid))
        .any(|r| {
            cache
                .owned_by(meta::uid(r))
                .any(|p| p.field("kind").and_then(Value::as_str) == Some("Pod"))
        });
    (!pods_left).then_some(d_key)
}
