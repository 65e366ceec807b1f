//! A local adapter for the kstatus verdict (issue 3's `kstatus::compute` lives on branch
//! `kstatus`): the generic checks and the Deployment, ReplicaSet and Pod rules the engine needs
//! to decide "converged" (every object Current or Failed).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::controllers::util::{find_condition, i64_at, is_terminating, str_at};
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Health {
    InProgress,
    Failed,
    Current,
    Terminating,
}

impl Health {
    /// Current or Failed: nothing more will happen without a change.
    pub fn is_settled(self) -> bool {
        matches!(self, Health::Current | Health::Failed)
    }
}

fn cond_is(obj: &Value, type_: &str, status: &str) -> bool {
    obj.get("status")
        .and_then(|s| find_condition(s, type_))
        .is_some_and(|c| str_at(c, "/status") == status)
}

pub fn compute(obj: &Value, now: SimTime) -> Health {
    if is_terminating(obj) {
        return Health::Terminating;
    }
    if let (Some(g), Some(o)) = (
        i64_at(obj, "/metadata/generation"),
        i64_at(obj, "/status/observedGeneration"),
    ) {
        if g != o {
            return Health::InProgress;
        }
    }
    if cond_is(obj, "Reconciling", "True") {
        return Health::InProgress;
    }
    if cond_is(obj, "Stalled", "True") {
        return Health::Failed;
    }
    let n = |p: &str| i64_at(obj, p).unwrap_or(0);
    let kind = str_at(obj, "/kind");
    let group = str_at(obj, "/apiVersion")
        .rsplit_once('/')
        .map_or("", |(g, _)| g);
    match (group, kind) {
        ("apps", "Deployment") => {
            let progressing = obj
                .get("status")
                .and_then(|s| find_condition(s, "Progressing"));
            if progressing.is_some_and(|c| str_at(c, "/reason") == "ProgressDeadlineExceeded") {
                return Health::Failed;
            }
            let spec = i64_at(obj, "/spec/replicas").unwrap_or(1);
            let deadline = i64_at(obj, "/spec/progressDeadlineSeconds");
            let has_progressed = deadline.is_none_or(|d| d == 2_147_483_647)
                || progressing.is_some_and(|c| {
                    str_at(c, "/status") == "True"
                        && str_at(c, "/reason") == "NewReplicaSetAvailable"
                });
            let (replicas, updated, available, ready) = (
                n("/status/replicas"),
                n("/status/updatedReplicas"),
                n("/status/availableReplicas"),
                n("/status/readyReplicas"),
            );
            // An HPA-less spec with no status yet is still in progress.
            if spec > replicas
                || spec > updated
                || replicas > spec
                || updated > available
                || spec > ready
                || !has_progressed
                || !cond_is(obj, "Available", "True")
            {
                return Health::InProgress;
            }
            Health::Current
        }
        ("apps", "ReplicaSet") => {
            if cond_is(obj, "ReplicaFailure", "True") {
                return Health::Failed;
            }
            let spec = i64_at(obj, "/spec/replicas").unwrap_or(1);
            if spec > n("/status/fullyLabeledReplicas")
                || spec > n("/status/availableReplicas")
                || spec > n("/status/readyReplicas")
                || n("/status/replicas") > spec
            {
                return Health::InProgress;
            }
            Health::Current
        }
        ("", "Pod") => match str_at(obj, "/status/phase") {
            "Succeeded" | "Failed" => Health::Current,
            "Running" => {
                if cond_is(obj, "Ready", "True") {
                    return Health::Current;
                }
                let crash = obj
                    .pointer("/status/containerStatuses")
                    .and_then(Value::as_array)
                    .is_some_and(|cs| {
                        cs.iter()
                            .any(|c| str_at(c, "/state/waiting/reason") == "CrashLoopBackOff")
                    });
                if crash {
                    Health::Failed
                } else {
                    Health::InProgress
                }
            }
            "Pending" => {
                let unschedulable = obj
                    .get("status")
                    .and_then(|s| find_condition(s, "PodScheduled"))
                    .is_some_and(|c| {
                        str_at(c, "/status") == "False" && str_at(c, "/reason") == "Unschedulable"
                    });
                let created =
                    crate::time::parse_rfc3339_unix_ms(str_at(obj, "/metadata/creationTimestamp"))
                        .unwrap_or(0);
                if unschedulable && now.unix_ms() - created > 15_000 {
                    Health::Failed
                } else {
                    Health::InProgress
                }
            }
            _ => Health::InProgress,
        },
        _ => match obj.get("status").and_then(|s| find_condition(s, "Ready")) {
            Some(c) if str_at(c, "/status") != "True" => Health::InProgress,
            _ => Health::Current,
        },
    }
}
