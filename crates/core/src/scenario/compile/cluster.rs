//! The engine's cluster config for a scenario: nodes, watch latency, disabled controllers, the
//! naive controller and image behaviours.

use super::err;
use crate::api::meta::Fields;
use crate::api::GroupResource;
use crate::controllers::ImageBehaviour;
use crate::engine::{ClusterConfig, NodeSpec};
use crate::scenario::format::{ImageBehaviourName, ImageRule, Scenario};
use crate::scenario::ScenarioError;

/// Controller names a scenario may pause, crash or disable (kubelets are `kubelet/<node>`).
pub const CONTROLLERS: &[&str] = &[
    "deployment-controller",
    "replicaset-controller",
    "scheduler",
    "horizontal-pod-autoscaler",
    "job-controller",
    "database-controller",
    "naive-controller",
];

/// The engine's cluster config for a scenario.
pub(crate) fn cluster_config(s: &Scenario, seed: u64) -> Result<ClusterConfig, ScenarioError> {
    let mut config = ClusterConfig {
        seed,
        ..ClusterConfig::default()
    };
    if s.cluster.nodes.is_empty() {
        return Err(err("cluster.nodes", "a cluster needs at least one node"));
    }
    let mut names = std::collections::BTreeSet::new();
    config.nodes = Vec::new();
    for (i, n) in s.cluster.nodes.iter().enumerate() {
        if n.name.is_empty() {
            return Err(err(format!("cluster.nodes[{i}].name"), "must not be empty"));
        }
        if !names.insert(n.name.clone()) {
            return Err(err(
                format!("cluster.nodes[{i}].name"),
                format!("node {:?} is listed twice", n.name),
            ));
        }
        let mut spec = NodeSpec::new(&n.name, &n.cpu.0, &n.memory.0);
        spec.pods = n.pods;
        config.nodes.push(spec);
    }
    if let Some(l) = s.cluster.watch_latency {
        config.watch_latency_ms = l.ms();
    }
    let c = &mut config.controllers;
    for (i, name) in s.cluster.disabled_controllers.iter().enumerate() {
        match name.as_str() {
            "deployment-controller" => c.deployment = false,
            "replicaset-controller" => c.replicaset = false,
            "scheduler" => c.scheduler = false,
            "kubelet" => c.kubelets = false,
            "horizontal-pod-autoscaler" => c.hpa = false,
            "job-controller" => c.job = false,
            "daemonset-controller" => c.daemonset = false,
            "statefulset-controller" => c.statefulset = false,
            "database-controller" => c.database = false,
            other => {
                return Err(err(
                    format!("cluster.disabledControllers[{i}]"),
                    format!("unknown controller {other:?}: expected one of deployment-controller, replicaset-controller, scheduler, kubelet, horizontal-pod-autoscaler, job-controller, daemonset-controller, statefulset-controller, database-controller"),
                ))
            }
        }
    }
    // The EndpointSlice controller runs in a scenario that names a Service (ControllerSet's
    // `endpointslice`): every other scenario keeps its trace.
    c.endpointslice = mentions_kind(s, "Service", &["services/"]);
    if let Some(naive) = &s.cluster.naive_controller {
        let (plural, group) = naive.split_once('.').unwrap_or((naive.as_str(), ""));
        c.naive = Some(GroupResource::new(group, plural));
    }
    for (i, rule) in s.images.iter().enumerate() {
        config.env.images.insert(
            rule.image.clone(),
            image_behaviour(rule, &format!("images[{i}]"))?,
        );
    }
    Ok(config)
}

/// Whether an object or an action's body is of `kind`, or an action's target starts with one
/// of `targets`.
fn mentions_kind(s: &Scenario, kind: &str, targets: &[&str]) -> bool {
    let is_kind =
        |v: &crate::json::Value| v.field("kind").and_then(crate::json::Value::as_str) == Some(kind);
    s.objects.iter().any(is_kind)
        || s.actions.iter().any(|a| {
            a.body.as_ref().is_some_and(is_kind) || targets.iter().any(|t| a.target.starts_with(t))
        })
}

pub(super) fn image_behaviour(
    rule: &ImageRule,
    path: &str,
) -> Result<ImageBehaviour, ScenarioError> {
    if rule.image.is_empty() {
        return Err(err(format!("{path}.image"), "must not be empty"));
    }
    Ok(match rule.behaviour {
        ImageBehaviourName::Ok => ImageBehaviour::Ok {
            pull_ms: rule.pull_time.map_or(1000, |d| d.ms()),
        },
        ImageBehaviourName::PullFails => ImageBehaviour::PullFails,
        ImageBehaviourName::Crashes => ImageBehaviour::Crashes {
            run_ms: rule.run_time.map_or(1000, |d| d.ms()),
        },
        ImageBehaviourName::Completes => ImageBehaviour::Completes {
            run_ms: rule.run_time.map_or(1000, |d| d.ms()),
        },
        ImageBehaviourName::ProbeFails => ImageBehaviour::ProbeFails,
    })
}
