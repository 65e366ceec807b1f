//! A small builder for scenarios in Rust (a file format comes with the CLI): a cluster config,
//! inputs at given times, and a run bound. Everything it holds is serde-friendly.

use crate::json::{json, Value};
use serde::{Deserialize, Serialize};

use super::report::StopReason;
use super::world::{ClusterConfig, Input, World};
use crate::api::{ApiRequest, GroupResource, PatchType};
use crate::time::SimTime;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Script {
    pub name: String,
    pub config: ClusterConfig,
    /// Inputs with the simulated time (ms) they happen at.
    pub inputs: Vec<(u64, Input)>,
    /// Stop at this simulated time at the latest.
    pub until_ms: u64,
    /// Run at least this long before checking for convergence (periodic controllers such as
    /// the autoscaler act on their own schedule).
    pub min_ms: u64,
    pub max_events: u64,
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct ScriptResult {
    pub world: World,
    pub stop: StopReason,
}

impl Script {
    pub fn new(name: &str) -> Self {
        Script {
            name: name.to_owned(),
            config: ClusterConfig::default(),
            inputs: Vec::new(),
            until_ms: 600_000,
            min_ms: 0,
            max_events: 200_000,
        }
    }

    pub fn config(mut self, f: impl FnOnce(&mut ClusterConfig)) -> Self {
        f(&mut self.config);
        self
    }

    pub fn at(mut self, ms: u64, input: Input) -> Self {
        self.inputs.push((ms, input));
        self
    }

    pub fn at_least(mut self, ms: u64) -> Self {
        self.min_ms = ms;
        self
    }

    pub fn until(mut self, ms: u64) -> Self {
        self.until_ms = ms;
        self
    }

    /// Builds the world, schedules the inputs, and runs until converged or the bound.
    pub fn run(&self) -> ScriptResult {
        let mut world = World::new(self.config.clone());
        for (ms, input) in &self.inputs {
            world.schedule(SimTime::from_ms(*ms), input.clone());
        }
        if self.min_ms > 0 {
            world.advance(self.min_ms);
        }
        let rest = self.until_ms.saturating_sub(self.min_ms);
        let report = world.run_until_converged(self.max_events, rest);
        ScriptResult {
            world,
            stop: report.stop.unwrap_or(StopReason::Bound),
        }
    }
}

/// `alice` sends a request.
pub fn user(request: crate::api::ApiRequest) -> Input {
    Input::Request { request }
}

pub fn create_as(principal: &str, gr: GroupResource, ns: &str, body: Value) -> Input {
    user(ApiRequest::create(principal, gr, ns, body))
}

pub fn patch_as(principal: &str, gr: GroupResource, ns: &str, name: &str, patch: Value) -> Input {
    user(ApiRequest::patch(
        principal,
        gr,
        ns,
        name,
        PatchType::Merge,
        patch,
    ))
}

/// A Deployment `name` with `replicas` pods of `image`, each requesting 100m CPU and 64Mi.
pub fn deployment(ns: &str, name: &str, replicas: i64, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{
                    "name": "app",
                    "image": image,
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                }]},
            },
        },
    })
}
