//! The health verdict the engine uses to decide "converged" (every object Current or Failed):
//! kstatus' `compute` from [`crate::kstatus`], reduced to the four statuses.

use crate::api::meta::Fields;
use crate::json::Value;
use serde::{Deserialize, Serialize};

use crate::kstatus::{self, Status};
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

/// Whether the object has nothing more coming on its own, for the engine's "converged": its
/// kstatus verdict is settled, and it is not a Job still running. kstatus reads a started Job
/// as Current ("Job in progress"), which is its verdict to show; but a Job's pods are still
/// working until it is Complete, Failed or suspended.
pub fn settles(obj: &Value, now: SimTime) -> bool {
    compute(obj, now).is_settled() && !running_job(obj)
}

fn running_job(obj: &Value) -> bool {
    if obj.field("kind").and_then(Value::as_str) != Some("Job")
        || !obj
            .field("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|v| v.starts_with("batch/"))
    {
        return false;
    }
    let conditions = obj
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let holds = |t: &str| {
        conditions.iter().any(|c| {
            c.field("type").and_then(Value::as_str) == Some(t)
                && c.field("status").and_then(Value::as_str) == Some("True")
        })
    };
    let suspended = obj.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true);
    !(holds("Complete") || holds("Failed") || suspended && holds("Suspended"))
}

/// kstatus' verdict; an object kstatus cannot read counts as InProgress.
pub fn compute(obj: &Value, now: SimTime) -> Health {
    match kstatus::compute(obj, now.unix_ms()) {
        Ok(r) => match r.status {
            Status::InProgress => Health::InProgress,
            Status::Failed => Health::Failed,
            Status::Current => Health::Current,
            Status::Terminating => Health::Terminating,
        },
        Err(_) => Health::InProgress,
    }
}
