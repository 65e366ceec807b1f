//! From the file format to what the runner needs: the world at t=0 (cluster, RBAC, objects),
//! resolved requests and faults, and checked expectations. Every semantic error names the field
//! path (`actions[2].target`) so the loader can point at its line.
//!
//! - [`cluster`]: the engine's cluster config (nodes, controllers, images);
//! - [`faults`]: timed faults to engine inputs;
//! - [`requests`]: timed requests to API requests;
//! - [`expectations`]: `expect` entries to timed checks (the checks themselves are
//!   `scenario::predicates`', shared with lessons);
//! - this module: the world at t=0 and the order everything is resolved in, the lesson last.

mod cluster;
mod expectations;
mod faults;
mod requests;

use crate::json::Value;

use super::format::Scenario;
use super::lesson::LessonGuide;
use super::ScenarioError;
use crate::engine::world::ADMIN;
use crate::engine::{Input, StepReport, World};

pub(crate) use cluster::cluster_config;
pub use cluster::CONTROLLERS;
pub(crate) use expectations::{CompiledExpectation, Mode, When};
pub(crate) use requests::CompiledAction;

/// Everything a run starts from.
#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    pub world: World,
    pub setup: Vec<StepReport>,
    pub actions: Vec<CompiledAction>,
    pub faults: Vec<(u64, usize, Input)>,
    pub expectations: Vec<CompiledExpectation>,
    pub lesson: Option<LessonGuide>,
}

fn err(path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path, message)
}

/// Builds the world at t=0 and resolves everything against it.
pub(crate) fn compile(s: &Scenario) -> Result<Compiled, ScenarioError> {
    compile_with_seed(s, s.seed)
}

pub(crate) fn compile_with_seed(s: &Scenario, seed: u64) -> Result<Compiled, ScenarioError> {
    if s.name.trim().is_empty() {
        return Err(err("name", "must not be empty"));
    }
    let config = cluster_config(s, seed)?;
    let node_names: Vec<String> = config.nodes.iter().map(|n| n.name.clone()).collect();
    let mut world = World::new(config);
    let mut setup = Vec::new();
    if let Some(rbac) = &s.rbac {
        world.set_rbac_enforced(rbac.enforce);
    }
    let rbac_objects = s.rbac.iter().flat_map(|r| r.objects.iter());
    let created: Vec<(String, &Value)> = rbac_objects
        .enumerate()
        .map(|(i, o)| (format!("rbac.objects[{i}]"), o))
        .chain(
            s.objects
                .iter()
                .enumerate()
                .map(|(i, o)| (format!("objects[{i}]"), o)),
        )
        .collect();
    for (path, obj) in created {
        let req = world
            .api()
            .create_request_for(ADMIN, obj.clone())
            .map_err(|e| err(&path, e.message))?;
        let report = world.apply(Input::Request { request: req });
        if let Some(r) = report.requests().find(|r| r.code >= 400) {
            return Err(err(
                &path,
                format!("creating it failed: {} {}", r.code, r.message),
            ));
        }
        setup.push(report);
    }

    let faults = faults::compile_faults(&world, s, &node_names)?;

    let mut actions: Vec<CompiledAction> = Vec::new();
    for i in 0..s.actions.len() {
        actions.push(requests::compile_action(&world, s, i, &actions)?);
    }
    let mut expectations = Vec::new();
    for (i, e) in s.expect.iter().enumerate() {
        expectations.push(expectations::compile_expectation(
            &world, s, i, e, &actions,
        )?);
    }
    let lesson = match &s.lesson {
        Some(l) => Some(LessonGuide::compile(&world, l)?),
        None => None,
    };
    Ok(Compiled {
        world,
        setup,
        actions,
        faults,
        expectations,
        lesson,
    })
}

impl LessonGuide {
    /// The scenario's lesson resolved against its world at t=0 (None: it has no lesson). Here,
    /// not in `lesson`, so lessons do not depend on the compiler that calls them.
    pub fn for_scenario(s: &Scenario) -> Result<Option<LessonGuide>, ScenarioError> {
        compile(s).map(|c| c.lesson)
    }
}
