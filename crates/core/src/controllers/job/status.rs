//! A Job's status as the controller holds it between writes: `batch/v1 JobStatus` with its
//! fields in the Go struct's order and omitempty rules, and the condition helpers of
//! pkg/controller/job (`newCondition`, `ensureJobConditionStatus`, `IsJobFinished`).

use crate::api::meta::Fields;
use crate::json::{json, Map, Value};

use crate::api::meta::{str_at, JsonPointer};
use crate::time::SimTime;

/// One `JobCondition`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobCondition {
    pub type_: String,
    pub status: String,
    /// `lastProbeTime` and `lastTransitionTime` (kube's `newCondition` sets both to now).
    pub probe: String,
    pub transition: String,
    pub reason: String,
    pub message: String,
}

impl JobCondition {
    /// `newCondition`.
    pub fn new(type_: &str, status: &str, reason: &str, message: &str, now: SimTime) -> Self {
        JobCondition {
            type_: type_.into(),
            status: status.into(),
            probe: now.rfc3339(),
            transition: now.rfc3339(),
            reason: reason.into(),
            message: message.into(),
        }
    }

    fn from_value(c: &Value) -> Self {
        JobCondition {
            type_: str_at(c, "/type").into(),
            status: str_at(c, "/status").into(),
            probe: str_at(c, "/lastProbeTime").into(),
            transition: str_at(c, "/lastTransitionTime").into(),
            reason: str_at(c, "/reason").into(),
            message: str_at(c, "/message").into(),
        }
    }

    /// In the Go struct's field order; reason and message are omitempty.
    fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("type", json!(self.type_));
        m.insert("status", json!(self.status));
        if !self.probe.is_empty() {
            m.insert("lastProbeTime", json!(self.probe));
        }
        if !self.transition.is_empty() {
            m.insert("lastTransitionTime", json!(self.transition));
        }
        if !self.reason.is_empty() {
            m.insert("reason", json!(self.reason));
        }
        if !self.message.is_empty() {
            m.insert("message", json!(self.message));
        }
        Value::Object(m)
    }

    pub fn is_true(&self) -> bool {
        self.status == "True"
    }
}

/// `batch/v1 JobStatus`, the parts a NonIndexed Job uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobStatus {
    pub conditions: Vec<JobCondition>,
    pub start_time: Option<String>,
    pub completion_time: Option<String>,
    pub active: i64,
    pub succeeded: i64,
    pub failed: i64,
    /// A pointer in Go: written (even as 0) once the controller counts terminating pods.
    pub terminating: Option<i64>,
    /// `uncountedTerminatedPods`: None when absent, else the UIDs not yet counted.
    pub uncounted: Option<Uncounted>,
    /// A pointer in Go, like `terminating`.
    pub ready: Option<i64>,
}

/// `UncountedTerminatedPods`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Uncounted {
    pub succeeded: Vec<String>,
    pub failed: Vec<String>,
}

impl Uncounted {
    pub fn len(&self) -> usize {
        self.succeeded.len() + self.failed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

impl JobStatus {
    pub fn read(job: &Value) -> Self {
        let s = job.field("status").cloned().unwrap_or_else(|| json!({}));
        let int = |k: &str| s.get(k).and_then(Value::as_i64);
        let text = |k: &str| s.get(k).and_then(Value::as_str).map(str::to_owned);
        JobStatus {
            conditions: s
                .field("conditions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(JobCondition::from_value)
                .collect(),
            start_time: text("startTime"),
            completion_time: text("completionTime"),
            active: int("active").unwrap_or(0),
            succeeded: int("succeeded").unwrap_or(0),
            failed: int("failed").unwrap_or(0),
            terminating: int("terminating"),
            uncounted: s
                .field("uncountedTerminatedPods")
                .filter(|u| u.is_object())
                .map(|u| Uncounted {
                    succeeded: strings(u.field("succeeded")),
                    failed: strings(u.field("failed")),
                }),
            ready: int("ready"),
        }
    }

    /// The status as kube's JSON encoding writes it: Go field order, omitempty.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        if !self.conditions.is_empty() {
            let list: Vec<Value> = self.conditions.iter().map(JobCondition::to_value).collect();
            m.insert("conditions", Value::Array(list.into()));
        }
        if let Some(t) = &self.start_time {
            m.insert("startTime", json!(t));
        }
        if let Some(t) = &self.completion_time {
            m.insert("completionTime", json!(t));
        }
        for (k, v) in [
            ("active", self.active),
            ("succeeded", self.succeeded),
            ("failed", self.failed),
        ] {
            if v != 0 {
                m.insert(k, json!(v));
            }
        }
        if let Some(t) = self.terminating {
            m.insert("terminating", json!(t));
        }
        if let Some(u) = &self.uncounted {
            let mut um = Map::new();
            if !u.succeeded.is_empty() {
                um.insert("succeeded", json!(u.succeeded));
            }
            if !u.failed.is_empty() {
                um.insert("failed", json!(u.failed));
            }
            m.insert("uncountedTerminatedPods", Value::Object(um));
        }
        if let Some(r) = self.ready {
            m.insert("ready", json!(r));
        }
        Value::Object(m)
    }

    pub fn condition(&self, type_: &str) -> Option<&JobCondition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    /// A condition of this type with status True.
    pub fn has_true(&self, type_: &str) -> bool {
        self.condition(type_).is_some_and(JobCondition::is_true)
    }

    /// `ensureJobConditionStatus`: replaces a condition of the type whose status, reason or
    /// message differ (with new times), appends a missing one unless its status is False.
    /// Whether anything changed.
    pub fn ensure_condition(
        &mut self,
        type_: &str,
        status: &str,
        reason: &str,
        message: &str,
        now: SimTime,
    ) -> bool {
        let fresh = JobCondition::new(type_, status, reason, message, now);
        if let Some(c) = self.conditions.iter_mut().find(|c| c.type_ == type_) {
            if c.status != status || c.reason != reason || c.message != message {
                *c = fresh;
                return true;
            }
            return false;
        }
        if status != "False" {
            self.conditions.push(fresh);
            return true;
        }
        false
    }
}

/// `util.IsJobFinished`: a Complete or Failed condition that is True.
pub fn is_finished(job: &Value) -> bool {
    job.at("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| {
            matches!(str_at(c, "/type"), "Complete" | "Failed") && str_at(c, "/status") == "True"
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_job_status_round_trips_in_go_field_order() {
        let s = JobStatus {
            start_time: Some("2025-01-01T00:00:00Z".into()),
            active: 1,
            terminating: Some(0),
            uncounted: Some(Uncounted::default()),
            ready: Some(0),
            ..JobStatus::default()
        };
        let v = s.to_value();
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"startTime":"2025-01-01T00:00:00Z","active":1,"terminating":0,"uncountedTerminatedPods":{},"ready":0}"#
        );
        assert_eq!(JobStatus::read(&json!({ "status": v })), s);
    }

    #[test]
    fn ensure_condition_appends_replaces_and_skips_a_missing_false() {
        let mut s = JobStatus::default();
        let t0 = SimTime::from_ms(0);
        let t1 = SimTime::from_ms(5_000);
        assert!(!s.ensure_condition("Suspended", "False", "JobResumed", "Job resumed", t0));
        assert!(s.ensure_condition("Suspended", "True", "JobSuspended", "Job suspended", t0));
        assert!(!s.ensure_condition("Suspended", "True", "JobSuspended", "Job suspended", t1));
        assert!(s.ensure_condition("Suspended", "False", "JobResumed", "Job resumed", t1));
        assert_eq!(s.conditions.len(), 1);
        assert_eq!(s.conditions[0].transition, t1.rfc3339());
    }
}
