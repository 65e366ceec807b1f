//! What a scenario run reports: the options it ran with, each action's answer, each
//! expectation's result, the audit log and the problems met on the way.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::api::{Name, Subresource, Verb};

use crate::scenario::format::Until;
use crate::time::SimTime;

/// How far to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Overrides the scenario's `seed`.
    pub seed: Option<u64>,
    /// Overrides the scenario's `until` (default `converged`).
    pub until: Option<Until>,
    /// Safety bound on processed engine events.
    pub max_events: u64,
    /// With `until: converged`, give up this long after the last scheduled action, fault or
    /// expectation time.
    pub max_extra_ms: u64,
    /// Whether the run keeps its per-event records: the world's trace, and the run's
    /// [`ScenarioRun::events`](super::ScenarioRun::events) and
    /// [`ScenarioRun::audit`](super::ScenarioRun::audit). A caller that reads only the results
    /// (`converge check`) turns it off, so a long run's memory is the world's, not its history's;
    /// the run itself and its results do not change. The API server's own audit log goes too,
    /// unless an expectation counts requests or a lesson follows them
    /// ([`ScenarioRun::keep_no_records`](super::ScenarioRun::keep_no_records)).
    pub records: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            seed: None,
            until: None,
            max_events: 500_000,
            max_extra_ms: 600_000,
            records: true,
        }
    }
}

/// The answer an action got.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionResponse {
    pub index: usize,
    pub id: Option<String>,
    pub time_ms: u64,
    pub code: u16,
    pub message: String,
}

/// A decided (or undecidable) expectation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectationResult {
    pub index: usize,
    /// `deployments/default/web kstatus is Current within 60s`.
    pub description: String,
    pub passed: bool,
    /// When it was decided (passed: the first time it held).
    pub time_ms: u64,
    pub expected: String,
    /// What was observed at `time_ms`.
    pub got: String,
}

impl ExpectationResult {
    /// `deployments/default/web kstatus is Current within 60s (at t=23.400s)` or
    /// `...: expected Current, got InProgress (at t=60.000s)`.
    pub fn line(&self) -> String {
        let t = SimTime::from_ms(self.time_ms);
        if self.passed {
            format!("{} (at {t})", self.description)
        } else {
            format!(
                "{}: expected {}, got {} (at {t})",
                self.description, self.expected, self.got
            )
        }
    }
}

/// One API request as a client sent it and the answer (the audit log, with requests that an
/// injected fault refused before they reached the server). A run keeps one per request for its
/// whole length, so the parts are small: the principal shared with every other record of the
/// same client, the verb and subresource as the enums (serialized as the same lowercase words),
/// names inline when short.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    pub time_ms: u64,
    pub principal: Arc<str>,
    pub verb: Verb,
    pub group: Name,
    pub resource: Name,
    pub subresource: Option<Subresource>,
    pub namespace: Name,
    pub name: Name,
    pub code: u16,
    pub message: String,
}

/// One shared copy of each distinct lane and principal a run records (a few dozen), so its
/// per-event and per-request records hold a pointer, not a string each.
#[derive(Clone, Debug, Default)]
pub(super) struct Names(BTreeSet<Arc<str>>);

impl Names {
    pub(super) fn intern(&mut self, s: &str) -> Arc<str> {
        if let Some(shared) = self.0.get(s) {
            return Arc::clone(shared);
        }
        let shared: Arc<str> = Arc::from(s);
        self.0.insert(Arc::clone(&shared));
        shared
    }
}

/// Something that went wrong while running (not an expectation): a missing action target, a
/// `bodyFrom` with nothing to copy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunProblem {
    /// `actions[1]`.
    pub path: String,
    pub time_ms: u64,
    pub message: String,
}

impl std::fmt::Display for RunProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} (at {})",
            self.path,
            self.message,
            SimTime::from_ms(self.time_ms)
        )
    }
}
