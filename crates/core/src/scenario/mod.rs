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
pub mod export;
pub mod format;
pub mod gallery;
mod lesson;
mod load;
pub mod path;
mod predicates;
mod run;

use std::fmt;

pub use compile::CONTROLLERS;
pub use format::{
    ActionVerb, ApiFailures, Cluster, Duration, Expectation, FaultEntry, ImageBehaviourName,
    ImagePullFailure, ImageRule, KstatusName, Lesson, LessonCheck, LessonStep, Load, Node,
    PatchKind, Predicate, Quantity, Rbac, RbacSwitch, RequestMatch, Scenario, TimedRequest, Until,
    WatchLatency, API_VERSION, KIND,
};
pub use lesson::{GuideStep, LessonGuide, LessonProgress, LessonTrack};
pub use path::FieldPath;
pub use run::{
    ActionResponse, AuditRecord, ExpectationResult, RunEvent, RunOptions, RunProblem, ScenarioRun,
};

use crate::engine::{Input, StopReason, World};
use crate::parse::Location;
use crate::time::SimTime;

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

    /// A scenario from plain Kubernetes manifests (one object, a `List`, or a multi-document
    /// stream): the default cluster with the objects created at t=0 by `admin`, in order, run
    /// until converged. `None` when the text is not manifests (a document without `apiVersion`
    /// and `kind`, or a `converge.dev` scenario), so the caller reports the scenario error.
    pub fn from_manifests(text: &str, name: &str) -> Option<Result<Scenario, ScenarioError>> {
        load::from_manifests(text, name)
    }

    /// The world at t=0: the cluster's nodes and controllers, RBAC overrides and the scenario's
    /// objects created by `admin`. Faults and actions are applied by [`ScenarioRun`].
    pub fn build_world(&self) -> Result<World, ScenarioError> {
        compile::compile(self).map(|c| c.world)
    }

    /// Runs the scenario to the end (see [`ScenarioRun::run`]).
    pub fn run(&self, options: &RunOptions) -> Result<RunOutcome, ScenarioError> {
        let mut run = ScenarioRun::new(self, options.seed)?;
        if !options.records {
            run.keep_no_records();
        }
        let until = options.until.or(self.until).unwrap_or(Until::Converged);
        let stop = run.run(until, options);
        let results = run.results();
        Ok(RunOutcome { run, stop, results })
    }

    /// The world the playground opens this scenario as: the world at t=0 with every fault and
    /// action scheduled at its time, so stepping, playing and "run until converged" go through
    /// them like the runner does. A `bodyFrom` update is scheduled with the copy the scenario's
    /// own run sent (the client's copy is what it read then, whatever the reader does), and an
    /// action whose target is a `{...}` selection with the object that run picked.
    pub fn playground_world(&self, seed: Option<u64>) -> Result<World, ScenarioError> {
        let seed = seed.unwrap_or(self.seed);
        let compiled = compile::compile_with_seed(self, seed)?;
        let decided_by_run =
            |a: &compile::CompiledAction| a.body_from.is_some() || a.select.is_some();
        let copies = if compiled.actions.iter().any(decided_by_run) {
            let mut run = ScenarioRun::new(self, Some(seed))?;
            let last = compiled.actions.iter().map(|a| a.at_ms).max().unwrap_or(0);
            run.run(Until::Time(format::Duration(last)), &RunOptions::default());
            Some(run)
        } else {
            None
        };
        let mut world = compiled.world;
        for (t, _, input) in compiled.faults {
            world.schedule(SimTime::from_ms(t), input);
        }
        for a in &compiled.actions {
            let request = match &copies {
                Some(run) if decided_by_run(a) => {
                    run.sent_request(a.index).cloned().ok_or_else(|| {
                        let (field, why) = if a.body_from.is_some() {
                            (
                                "bodyFrom",
                                "the action it copies from left no copy to start from",
                            )
                        } else {
                            ("target", "no object matched the target when it fired")
                        };
                        ScenarioError::new(format!("actions[{}].{field}", a.index), why)
                    })?
                }
                _ => a.request.clone(),
            };
            world.schedule(SimTime::from_ms(a.at_ms), Input::Request { request });
        }
        Ok(world)
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

/// Loads a scenario file, runs it to its end with `seed` (default options otherwise) and returns
/// the [`crate::engine::trace_hash`] of the world's trace: the value the native and the wasm
/// builds compare (`tests/determinism/hashes.txt`).
pub fn trace_hash_of(text: &str, seed: u64) -> Result<String, ScenarioError> {
    let scenario = Scenario::load(text)?;
    let options = RunOptions {
        seed: Some(seed),
        ..RunOptions::default()
    };
    let outcome = scenario.run(&options)?;
    Ok(outcome.run.world().trace_hash())
}

#[cfg(test)]
mod tests;
