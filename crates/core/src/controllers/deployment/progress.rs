//! Rollout progress [pkg/controller/deployment/progress.go]: the Progressing condition,
//! completion, the progress deadline and requeueing a stuck rollout.

use crate::api::meta::Fields;
use crate::json::path;
use crate::json::{json, Value};

use super::deployment_util::{has_deadline, num};
use super::Sync;
use crate::api::meta::{self, str_at};
use crate::conditions::{self, Cond};
use crate::runtime::{Explanation, ReconcileAction, ReconcileError};

impl Sync<'_, '_> {
    /// `syncRolloutStatus`: status plus the Progressing condition; requeues a stuck rollout.
    pub(super) fn sync_rollout_status(
        &mut self,
        rss: &[Value],
        new_rs: Option<usize>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let now = self.ctx.now;
        let mut status = self.calculate_status(rss, new_rs);
        if !has_deadline(&self.spec) {
            conditions::remove_condition(&mut status, "Progressing");
        }
        let old = self.status_ref();
        let current = conditions::find_condition(old, "Progressing").cloned();
        let is_complete = num(&status, "replicas") == num(&status, "updatedReplicas")
            && current
                .as_ref()
                .is_some_and(|c| str_at(c, path!("/reason")) == "NewReplicaSetAvailable");
        // The messages name the new ReplicaSet, or the Deployment while there is none (mid
        // Recreate, between scaling the old ones down and creating the new one).
        let subject = match new_rs {
            Some(i) => format!("ReplicaSet \"{}\"", meta::name(&rss[i])),
            None => format!("Deployment \"{}\"", meta::name(&self.d)),
        };
        // Why Progressing is set, recorded once `old` is no longer read.
        let mut decided = None;
        if has_deadline(&self.spec) && !is_complete {
            let moved = progress_made(old, &status);
            let (timed_out, deadline_rule) = self.timed_out_rule(&status);
            if let Some(rule) = self.complete_rule(&status) {
                let rule = format!("the rollout is complete: {rule}");
                decided = Some(Explanation::new("Progressing", "True", rule));
                let msg = format!("{subject} has successfully progressed.");
                conditions::set_deployment_condition(
                    &mut status,
                    Cond {
                        type_: "Progressing",
                        status: "True",
                        reason: "NewReplicaSetAvailable",
                        message: &msg,
                    },
                    now,
                );
            } else if let Some(rule) = moved {
                decided = Some(Explanation::new("Progressing", "True", rule));
                let msg = format!("{subject} is progressing.");
                let transition = current
                    .as_ref()
                    .filter(|c| str_at(c, path!("/status")) == "True")
                    .map(|c| str_at(c, path!("/lastTransitionTime")).to_owned());
                conditions::remove_condition(&mut status, "Progressing");
                conditions::set_deployment_condition(
                    &mut status,
                    Cond {
                        type_: "Progressing",
                        status: "True",
                        reason: "ReplicaSetUpdated",
                        message: &msg,
                    },
                    now,
                );
                if let (Some(t), Some(list)) = (
                    transition,
                    status.get_mut("conditions").and_then(Value::as_array_mut),
                ) {
                    if let Some(last) = list.last_mut() {
                        last["lastTransitionTime"] = json!(t);
                    }
                }
            } else if timed_out {
                decided = Some(
                    Explanation::new("Progressing", "False", deadline_rule)
                        .with_input("status.conditions[type=Progressing].lastUpdateTime"),
                );
                let msg = format!("{subject} has timed out progressing.");
                conditions::set_deployment_condition(
                    &mut status,
                    Cond {
                        type_: "Progressing",
                        status: "False",
                        reason: "ProgressDeadlineExceeded",
                        message: &msg,
                    },
                    now,
                );
            }
        }
        match replica_failure(rss, new_rs) {
            Some(c) => conditions::set_deployment_condition(
                &mut status,
                Cond {
                    type_: "ReplicaFailure",
                    status: str_at(&c, path!("/status")),
                    reason: str_at(&c, path!("/reason")),
                    message: str_at(&c, path!("/message")),
                },
                now,
            ),
            None => {
                conditions::remove_condition(&mut status, "ReplicaFailure");
            }
        }
        let unchanged = status == *old;
        if let Some(why) = decided {
            self.ctx.explain(why);
        }
        if unchanged {
            return Ok(self.requeue_stuck(&status));
        }
        self.update_status(status)?;
        Ok(ReconcileAction::AwaitChange)
    }

    /// `DeploymentComplete`.
    pub(super) fn complete(&self, status: &Value) -> bool {
        self.complete_rule(status).is_some()
    }

    /// [`Self::complete`] with the counts that made it so: `Some` when complete.
    fn complete_rule(&self, status: &Value) -> Option<String> {
        let r = self.spec.replicas;
        let (updated, replicas, available) = (
            num(status, "updatedReplicas"),
            num(status, "replicas"),
            num(status, "availableReplicas"),
        );
        let (observed, generation) = (num(status, "observedGeneration"), meta::generation(&self.d));
        (updated == r && replicas == r && available == r && observed >= generation).then(|| {
            format!(
                "updatedReplicas, replicas and availableReplicas all {r} = spec.replicas, observedGeneration {observed} >= generation {generation}"
            )
        })
    }

    /// `DeploymentTimedOut`, and why.
    fn timed_out_rule(&self, status: &Value) -> (bool, String) {
        let Some(deadline) = self.spec.progress_deadline_seconds else {
            return (false, "no progressDeadlineSeconds".into());
        };
        let Some(c) = conditions::find_condition(status, "Progressing") else {
            return (false, "no Progressing condition yet".into());
        };
        match str_at(c, path!("/reason")) {
            "NewReplicaSetAvailable" => (false, "the rollout completed".into()),
            "ProgressDeadlineExceeded" => (true, "the deadline was already exceeded".into()),
            _ => match last_update_ms(c) {
                None => (false, "the condition has no lastUpdateTime".into()),
                Some(from) => {
                    let now = self.ctx.now.unix_ms();
                    let out = from + deadline * 1000 < now;
                    let rule = format!(
                        "no progress since lastUpdateTime {} ({} ago) {} progressDeadlineSeconds {deadline}",
                        str_at(c, path!("/lastUpdateTime")),
                        seconds((now - from).max(0)),
                        if out { ">" } else { "<=" }
                    );
                    (out, rule)
                }
            },
        }
    }

    /// `requeueStuckDeployment`.
    pub(super) fn requeue_stuck(&self, status: &Value) -> ReconcileAction {
        let Some(deadline) = self.spec.progress_deadline_seconds else {
            return ReconcileAction::AwaitChange;
        };
        let Some(c) = conditions::find_condition(self.status_ref(), "Progressing").cloned() else {
            return ReconcileAction::AwaitChange;
        };
        if self.complete(status) || str_at(&c, path!("/reason")) == "ProgressDeadlineExceeded" {
            return ReconcileAction::AwaitChange;
        }
        let Some(from) = last_update_ms(&c) else {
            return ReconcileAction::AwaitChange;
        };
        let after = from + deadline * 1000 - self.ctx.now.unix_ms();
        if after < 1000 {
            // kube re-adds rate limited; a short fixed delay keeps the same effect here.
            return ReconcileAction::RequeueAfter { ms: 5 };
        }
        ReconcileAction::RequeueAfter {
            ms: (after + 1000) as u64,
        }
    }
}

/// `12.345s`.
fn seconds(ms: i64) -> String {
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}

pub(super) fn last_update_ms(c: &Value) -> Option<i64> {
    crate::time::parse_rfc3339_unix_ms(str_at(c, path!("/lastUpdateTime")))
}

/// `DeploymentProgressing`, with its first reason when there is progress:
/// `readyReplicas 2 > 1 before`.
fn progress_made(old: &Value, new: &Value) -> Option<String> {
    let old_old = num(old, "replicas") - num(old, "updatedReplicas");
    let new_old = num(new, "replicas") - num(new, "updatedReplicas");
    let grew = |field: &str| {
        let (n, o) = (num(new, field), num(old, field));
        (n > o).then(|| format!("{field} {n} > {o} before"))
    };
    grew("updatedReplicas")
        .or_else(|| {
            (new_old < old_old).then(|| format!("old replicas {new_old} < {old_old} before"))
        })
        .or_else(|| grew("readyReplicas"))
        .or_else(|| grew("availableReplicas"))
}

/// `getReplicaFailures`: the new ReplicaSet's ReplicaFailure, else any ReplicaSet's.
pub(super) fn replica_failure(rss: &[Value], new_rs: Option<usize>) -> Option<Value> {
    let find = |rs: &Value| {
        rs.field("status")
            .and_then(|s| conditions::find_condition(s, "ReplicaFailure"))
            .cloned()
    };
    new_rs
        .and_then(|n| find(&rss[n]))
        .or_else(|| rss.iter().find_map(find))
}
