//! Scenario files: a versioned JSON/YAML description of a cluster, objects, faults, timed
//! actions and expectations, shared by `converge run`/`check`, the playground gallery and share
//! links. The format is documented field by field in `docs/scenarios.md`.
//!
//! - [`Scenario::load`] parses and validates a file (errors carry line:column and the field);
//! - [`Scenario::build_world`] gives the world at t=0 (cluster, RBAC, objects);
//! - [`ScenarioRun`] steps the world with the scenario's faults and actions and decides its
//!   expectations; [`Scenario::run`] runs one to the end.
//!
//! Versioning: files carry `apiVersion: converge.dev/v1` and `kind: Scenario`. Every version in
//! [`SUPPORTED_VERSIONS`] keeps loading; a later format adds a version and converts older ones
//! on load, and [`Scenario::to_yaml`]/[`Scenario::to_json`] always write [`API_VERSION`].

mod compile;
pub mod format;
mod load;
pub mod path;
mod run;

use std::fmt;

pub use compile::CONTROLLERS;
pub use format::{
    Action, ActionVerb, ApiFailures, Cluster, Duration, Expectation, FaultEntry,
    ImageBehaviourName, ImagePullFailure, ImageRule, KstatusName, Load, Node, PatchKind, Quantity,
    Rbac, Scenario, Until, WatchLatency, API_VERSION, KIND,
};
pub use path::FieldPath;
pub use run::{
    ActionResponse, AuditRecord, ExpectationResult, RunOptions, RunProblem, ScenarioRun,
};

use crate::engine::{StopReason, World};
use crate::parse::Location;

/// Every `apiVersion` this build loads.
pub const SUPPORTED_VERSIONS: &[&str] = &[API_VERSION];

/// Why a scenario file was refused: where (line:column when known), which field, and why.
/// Displays on one line: `line 12, column 5: actions[2].target: unknown resource "deploymentz"`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioError {
    pub location: Option<Location>,
    /// The field, e.g. `actions[2].target`; empty when the error is not about one field.
    pub path: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            location: None,
            path: path.into(),
            message: message.into(),
        }
    }

    /// Adds the line:column of `path` (or of its nearest parent present) in `text` when the
    /// error has none yet.
    fn located(mut self, text: &str) -> Self {
        // A missing field (`actions[0].patch`) is reported at its parent entry.
        let mut path = self.path.as_str();
        while self.location.is_none() && !path.is_empty() {
            self.location = load::locate(text, path);
            path = match path.rfind(['.', '[']) {
                Some(i) => &path[..i],
                None => "",
            };
        }
        self
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(Location { line, column }) = self.location {
            write!(f, "line {line}, column {column}: ")?;
        }
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// The end of a run: the run itself (world, events, audit) and every expectation's result.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub run: ScenarioRun,
    pub stop: StopReason,
    pub results: Vec<ExpectationResult>,
}

impl RunOutcome {
    /// Every expectation passed and nothing went wrong.
    pub fn passed(&self) -> bool {
        self.results.iter().all(|r| r.passed) && self.run.problems().is_empty()
    }
}

impl Scenario {
    /// Parses a JSON or YAML scenario file and validates it (targets, times, paths, faults,
    /// objects creatable at t=0).
    pub fn load(text: &str) -> Result<Scenario, ScenarioError> {
        load::load(text)
    }

    /// The world at t=0: the cluster's nodes and controllers, RBAC overrides and the scenario's
    /// objects created by `admin`. Faults and actions are applied by [`ScenarioRun`].
    pub fn build_world(&self) -> Result<World, ScenarioError> {
        compile::compile(self).map(|c| c.world)
    }

    /// Runs the scenario to the end (see [`ScenarioRun::run`]).
    pub fn run(&self, options: &RunOptions) -> Result<RunOutcome, ScenarioError> {
        let mut run = ScenarioRun::new(self, options.seed)?;
        let until = options.until.or(self.until).unwrap_or(Until::Converged);
        let stop = run.run(until, options);
        let results = run.results();
        Ok(RunOutcome { run, stop, results })
    }

    /// The file as YAML, in the current version.
    pub fn to_yaml(&self) -> String {
        let mut s = self.clone();
        s.api_version = API_VERSION.to_owned();
        serde_yaml_ng::to_string(&s).unwrap_or_default()
    }

    /// The file as pretty JSON, in the current version.
    pub fn to_json(&self) -> String {
        let mut s = self.clone();
        s.api_version = API_VERSION.to_owned();
        serde_json::to_string_pretty(&s).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
