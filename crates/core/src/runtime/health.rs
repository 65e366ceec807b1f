//! The health verdict the engine uses to decide "converged" (every object Current or Failed):
//! kstatus' `compute` from [`crate::kstatus`], reduced to the four statuses.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
