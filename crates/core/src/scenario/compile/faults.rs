//! A scenario's `faults` entries as engine inputs at their times: each entry names exactly one
//! fault, and every controller, node and target it names exists in the world at t=0.

use crate::json::Value;

use super::cluster::image_behaviour;
use super::err;
use crate::controllers::util;
use crate::engine::{Fault, Input, World};
use crate::scenario::format::Scenario;
use crate::scenario::predicates::resolve_target;
use crate::scenario::ScenarioError;

/// `(at_ms, index of the entry, input)` for every fault entry, in file order.
pub(super) fn compile_faults(
    world: &World,
    s: &Scenario,
    node_names: &[String],
) -> Result<Vec<(u64, usize, Input)>, ScenarioError> {
    let controllers = world.controller_names();
    let mut faults = Vec::new();
    // Nodes as the entries so far leave them (file order), for removeNode to name.
    let mut nodes_now: Vec<String> = node_names.to_vec();
    for (i, f) in s.faults.iter().enumerate() {
        let p = format!("faults[{i}]");
        let mut inputs: Vec<(&str, Input)> = Vec::new();
        let controller = |field: &str, name: &str| -> Result<String, ScenarioError> {
            if controllers.iter().any(|c| c == name) {
                Ok(name.to_owned())
            } else {
                Err(err(
                    format!("{p}.{field}"),
                    format!(
                        "unknown controller {name:?}: this cluster runs {}",
                        controllers.join(", ")
                    ),
                ))
            }
        };
        let fault = |fault: Fault| Input::Fault { fault };
        if let Some(c) = &f.pause {
            inputs.push((
                "pause",
                fault(Fault::PauseController {
                    controller: controller("pause", c)?,
                }),
            ));
        }
        if let Some(c) = &f.resume {
            inputs.push((
                "resume",
                fault(Fault::ResumeController {
                    controller: controller("resume", c)?,
                }),
            ));
        }
        if let Some(c) = &f.crash {
            inputs.push((
                "crash",
                fault(Fault::CrashController {
                    controller: controller("crash", c)?,
                }),
            ));
        }
        if let Some(c) = &f.restart {
            inputs.push((
                "restart",
                fault(Fault::RestartController {
                    controller: controller("restart", c)?,
                }),
            ));
        }
        if let Some(w) = &f.watch_latency {
            let c = match &w.controller {
                Some(c) => Some(controller("watchLatency.controller", c)?),
                None => None,
            };
            inputs.push((
                "watchLatency",
                fault(Fault::WatchLatency {
                    controller: c,
                    ms: w.delay.ms(),
                }),
            ));
        }
        if let Some(a) = &f.api_failures {
            if ![409, 500, 503].contains(&a.code) {
                return Err(err(
                    format!("{p}.apiFailures.code"),
                    format!(
                        "{} is not an injectable failure: use 409, 500 or 503",
                        a.code
                    ),
                ));
            }
            inputs.push((
                "apiFailures",
                fault(Fault::ApiFailures {
                    principal: a.principal.clone(),
                    count: a.count,
                    code: a.code,
                }),
            ));
        }
        if f.clear_api_failures {
            inputs.push(("clearApiFailures", fault(Fault::ClearApiFailures)));
        }
        if let Some(ipf) = &f.image_pull_failure {
            if !node_names.contains(&ipf.node) {
                return Err(err(
                    format!("{p}.imagePullFailure.node"),
                    format!(
                        "unknown node {:?}: the cluster has {}",
                        ipf.node,
                        node_names.join(", ")
                    ),
                ));
            }
            inputs.push((
                "imagePullFailure",
                fault(Fault::ImagePullFailure {
                    node: ipf.node.clone(),
                    failing: ipf.failing,
                }),
            ));
        }
        if let Some(rule) = &f.image {
            inputs.push((
                "image",
                Input::SetImage {
                    image: rule.image.clone(),
                    behaviour: image_behaviour(rule, &format!("{p}.image"))?,
                },
            ));
        }
        if let Some(load) = &f.load {
            let t = resolve_target(world, &load.target)
                .map_err(|m| err(format!("{p}.load.target"), m))?;
            if t.info.gr != util::deployments() || t.name.is_empty() || t.subresource.is_some() {
                return Err(err(
                    format!("{p}.load.target"),
                    "load applies to a Deployment: deployments/<namespace>/<name>",
                ));
            }
            inputs.push((
                "load",
                Input::SetLoad {
                    target: format!("{}/{}", t.namespace, t.name),
                    millicores: crate::api::quantity::cpu_millis(&Value::String(
                        load.cpu.0.as_str().into(),
                    )),
                },
            ));
        }
        if let Some(n) = &f.add_node {
            if n.name.is_empty() {
                return Err(err(format!("{p}.addNode.name"), "must not be empty"));
            }
            if nodes_now.contains(&n.name) {
                return Err(err(
                    format!("{p}.addNode.name"),
                    format!("node {:?} is already in the cluster", n.name),
                ));
            }
            nodes_now.push(n.name.clone());
            let mut node = crate::engine::NodeSpec::new(&n.name, &n.cpu.0, &n.memory.0);
            node.pods = n.pods;
            inputs.push(("addNode", fault(Fault::AddNode { node })));
        }
        if let Some(n) = &f.remove_node {
            if !nodes_now.contains(n) {
                return Err(err(
                    format!("{p}.removeNode"),
                    format!(
                        "unknown node {n:?}: the cluster has {}",
                        nodes_now.join(", ")
                    ),
                ));
            }
            nodes_now.retain(|x| x != n);
            inputs.push(("removeNode", fault(Fault::RemoveNode { node: n.clone() })));
        }
        if let Some(r) = &f.rbac {
            inputs.push((
                "rbac",
                Input::SetRbac {
                    enforced: r.enforce,
                },
            ));
        }
        match inputs.len() {
            1 => {
                if let Some((_, input)) = inputs.pop() {
                    faults.push((f.at.ms(), i, input));
                }
            }
            0 => {
                return Err(err(
                    &p,
                    "names no fault: give one of pause, resume, crash, restart, watchLatency, apiFailures, clearApiFailures, imagePullFailure, image, load, rbac, addNode, removeNode",
                ))
            }
            _ => {
                let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
                return Err(err(
                    &p,
                    format!("give one fault per entry, found {}", names.join(" and ")),
                ));
            }
        }
    }
    Ok(faults)
}
