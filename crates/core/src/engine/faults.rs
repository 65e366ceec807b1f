//! Fault injection: the faults a scenario or the UI can inject (pause, crash, restart,
//! watch latency, API failures, image pull failures), how the world applies them, and the
//! injected API errors with the real API server's message shapes.

use crate::api::meta::Fields;
use std::sync::Arc;

use crate::json::Value;
use serde::{Deserialize, Serialize};

use super::bootstrap::{node_objects, NodeSpec};
use super::provenance::Cause;
use super::world::{Input, RunState, Slot, World};
use crate::api::meta::{self, JsonPointer};
use crate::api::GroupResource;
use crate::api::{
    ApiError, ApiRequest, ObjectKey, PatchType, StatusReason, WatchEvent, WatchEventType,
};
use crate::controllers::{kubelet::Kubelet, podgc::PodGcController, util, Controller};
use crate::runtime::{Informer, Reconciler, WorkQueue};

/// Faults that can be injected at any time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fault", rename_all = "camelCase")]
pub enum Fault {
    /// The controller stops taking work; its informer keeps filling its queue.
    PauseController {
        controller: String,
    },
    ResumeController {
        controller: String,
    },
    /// The process dies: its queue and cache are lost and it sees no watch events.
    CrashController {
        controller: String,
    },
    /// Starts again with a fresh list of everything it watches (a resync).
    RestartController {
        controller: String,
    },
    /// Watch delivery latency, for one controller or (None) all of them.
    WatchLatency {
        controller: Option<String>,
        ms: u64,
    },
    /// The next `count` requests (from `principal`, or anyone) fail with `code` (500, 503, 409).
    ApiFailures {
        principal: Option<String>,
        count: u32,
        code: u16,
    },
    ClearApiFailures,
    /// The node's kubelet fails (or stops failing) every image pull.
    ImagePullFailure {
        node: String,
        failing: bool,
    },
    /// A machine joins: its Node is created (as `admin`) and its kubelet starts and reports
    /// the node's status, as at bootstrap.
    AddNode {
        node: NodeSpec,
    },
    /// A machine goes away: its kubelet dies with it and its Node is deleted (as `admin`).
    /// Its pods stay until the pod garbage collector finds them orphaned (`podgc`).
    RemoveNode {
        node: String,
    },
}

/// Injected API failures still to come: the next `remaining` requests (from `principal`, or
/// anyone) fail with `code`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct FailureRule {
    pub(super) principal: Option<String>,
    pub(super) remaining: u32,
    pub(super) code: u16,
}

/// A restart fault's description, as its trace line and its provenance root spell it.
fn restart_text(controller: &str) -> String {
    format!("restart {controller}")
}

impl World {
    /// The description of the restart fault that was input `input` (`restart <controller>`),
    /// from the input log: a world that keeps no trace lines ([`World::count_trace_only`])
    /// still has it. Empty if that input was not a restart.
    pub(crate) fn restart_fault_text(&self, input: usize) -> String {
        match self.inputs.get(input) {
            Some((
                _,
                Input::Fault {
                    fault: Fault::RestartController { controller },
                },
            )) => restart_text(controller),
            _ => String::new(),
        }
    }
}

impl World {
    pub(super) fn apply_fault(&mut self, fault: &Fault) -> String {
        match fault {
            Fault::PauseController { controller } => {
                if let Some(s) = self.slots.get_mut(controller) {
                    if s.state == RunState::Running {
                        s.state = RunState::Paused;
                    }
                }
                format!("pause {controller}")
            }
            Fault::ResumeController { controller } => {
                if let Some(s) = self.slots.get_mut(controller) {
                    if s.state == RunState::Paused {
                        s.state = RunState::Running;
                    }
                }
                self.kick(controller);
                format!("resume {controller}")
            }
            Fault::CrashController { controller } => {
                if let Some(s) = self.slots.get_mut(controller) {
                    s.state = RunState::Crashed;
                    s.informer = Informer::new();
                    s.queue = WorkQueue::new();
                    s.causes.clear();
                    s.reconcile_scheduled = false;
                    s.wake_at = None;
                    s.controller.reset();
                    if let Some(b) = &mut s.broadcaster {
                        b.reset();
                    }
                }
                format!("crash {controller}")
            }
            Fault::RestartController { controller } => {
                self.restart(controller);
                restart_text(controller)
            }
            Fault::WatchLatency { controller, ms } => {
                for (name, s) in self.slots.iter_mut() {
                    if controller.as_ref().is_none_or(|c| c == name) {
                        s.latency_ms = *ms;
                    }
                }
                format!(
                    "watch-latency {} {ms}ms",
                    controller.as_deref().unwrap_or("all")
                )
            }
            Fault::ApiFailures {
                principal,
                count,
                code,
            } => {
                self.failures.push(FailureRule {
                    principal: principal.clone(),
                    remaining: *count,
                    code: *code,
                });
                format!(
                    "api-failures {} x{count} code {code}",
                    principal.as_deref().unwrap_or("anyone")
                )
            }
            Fault::ClearApiFailures => {
                self.failures.clear();
                "api-failures cleared".into()
            }
            Fault::ImagePullFailure { node, failing } => {
                if *failing {
                    self.env.pull_failing_nodes.insert(node.clone());
                } else {
                    self.env.pull_failing_nodes.remove(node);
                }
                format!("image-pull-failure {node} {failing}")
            }
            Fault::AddNode { node } => {
                let kubelets = self.slots.keys().any(|k| k.starts_with("kubelet/"));
                // A name already in the cluster keeps its kubelet (the create is refused, 409).
                let exists = self
                    .object(&ObjectKey::new(util::nodes(), "", &node.name))
                    .is_some();
                if kubelets && !exists {
                    let latency = self.slots.values().map(|s| s.latency_ms).max().unwrap_or(5);
                    let kubelet = Kubelet::new(&node.name, self.next_node_index());
                    self.slots.insert(
                        kubelet.name(),
                        Slot::new(Controller::Kubelet(kubelet), latency),
                    );
                    self.restart(&format!("kubelet/{}", node.name));
                }
                format!("add-node {}", node.name)
            }
            Fault::RemoveNode { node } => {
                // The pod garbage collector has nothing to collect until a node goes: it starts
                // with the first removal (its role comes in `node_fault_requests`).
                let gc = PodGcController::new().name();
                if !self.slots.contains_key(&gc) {
                    let latency = self.slots.values().map(|s| s.latency_ms).max().unwrap_or(5);
                    self.slots.insert(
                        gc.clone(),
                        Slot::new(Controller::PodGc(PodGcController::new()), latency),
                    );
                    self.restart(&gc);
                }
                if let Some(s) = self.slots.get_mut(&format!("kubelet/{node}")) {
                    s.state = RunState::Crashed;
                    s.informer = Informer::new();
                    s.queue = WorkQueue::new();
                    s.causes.clear();
                    s.reconcile_scheduled = false;
                    s.wake_at = None;
                    s.controller.reset();
                }
                format!("remove-node {node}")
            }
        }
    }

    /// The requests a node fault sends after it is recorded: a new Node and its kubelet's first
    /// status, or the Node's deletion.
    pub(super) fn node_fault_requests(&self, fault: &Fault) -> Vec<ApiRequest> {
        match fault {
            Fault::AddNode { node } => {
                let (obj, status) = node_objects(node, self.next_node_index());
                vec![
                    ApiRequest::create(super::bootstrap::ADMIN, util::nodes(), "", obj),
                    ApiRequest::patch_status(
                        &crate::api::principals::kubelet(&node.name),
                        util::nodes(),
                        "",
                        &node.name,
                        PatchType::Merge,
                        status,
                    ),
                ]
            }
            Fault::RemoveNode { node } => {
                let mut requests = Vec::new();
                let role = ObjectKey::new(
                    GroupResource::new("rbac.authorization.k8s.io", "clusterroles"),
                    "",
                    "system:controller:pod-garbage-collector",
                );
                if self.object(&role).is_none() {
                    for obj in crate::api::rbac::pod_gc_controller_policy() {
                        let resource = if obj.member("kind") == "ClusterRole" {
                            "clusterroles"
                        } else {
                            "clusterrolebindings"
                        };
                        let gr = GroupResource::new("rbac.authorization.k8s.io", resource);
                        requests.push(ApiRequest::create(super::bootstrap::ADMIN, gr, "", obj));
                    }
                }
                requests.push(ApiRequest::delete(
                    super::bootstrap::ADMIN,
                    util::nodes(),
                    "",
                    node,
                ));
                requests
            }
            _ => Vec::new(),
        }
    }

    /// The index a joining node's kubelet gets (its address, its pods' IPs): one past every
    /// Node's, read back from the InternalIP bootstrap gave it.
    fn next_node_index(&self) -> u32 {
        let gr = util::nodes();
        self.objects_of(&gr, None)
            .filter_map(|(_, n)| {
                n.at("/status/addresses")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .find(|a| meta::str_at(a, "/type") == "InternalIP")
                    .and_then(|a| meta::str_at(a, "/address").strip_prefix("192.168.0."))
                    .and_then(|n| n.parse::<u32>().ok())
            })
            .map(|ip| ip.saturating_sub(10))
            .max()
            .unwrap_or(0)
            + 1
    }

    /// A restarted controller lists everything it watches (an informer's initial sync) and
    /// queues every key its handlers map the objects to.
    fn restart(&mut self, controller: &str) {
        let objects: Vec<(Arc<ObjectKey>, Arc<Value>)> = (self.api.store().iter_shared())
            .filter(|(k, _)| !self.unannounced.contains(k.as_ref()))
            .map(|(k, v)| (Arc::clone(k), Arc::clone(v)))
            .collect();
        // The restart fault's line is the next one; its input is the newest.
        let (line, input) = (self.trace_len(), self.inputs.len().saturating_sub(1));
        let Some(slot) = self.slots.get_mut(controller) else {
            return;
        };
        slot.state = RunState::Running;
        slot.queue = WorkQueue::new();
        slot.causes.clear();
        slot.controller.reset();
        let watched: Vec<(&Arc<ObjectKey>, &Arc<Value>)> = objects
            .iter()
            .map(|(k, v)| (k, v))
            .filter(|(k, v)| slot.controller.watches(&k.gr) && slot.controller.accepts(&k.gr, v))
            .collect();
        slot.informer.replace(watched.iter().copied());
        for (k, v) in watched {
            let ev = WatchEvent {
                event_type: WatchEventType::Added,
                key: Arc::clone(k),
                object: Value::Null,
                resource_version: meta::resource_version(v),
                time: self.now,
            };
            for (key, ms) in slot.controller.keys_after(&ev, None, v, &slot.informer) {
                let cause = Cause::Restart {
                    line,
                    time: self.now,
                    input,
                    resource_version: ev.resource_version,
                    delay_ms: ms,
                };
                let at = self.now.plus_ms(ms);
                slot.causes.add_after(&key, at, self.now, cause);
                slot.queue.add_after(key, at, self.now);
            }
        }
        self.kick(controller);
    }
}

/// The error an injected failure answers with, shaped as the API server's own.
pub(super) fn injected_error(code: u16, req: &ApiRequest, name: &str) -> ApiError {
    let (reason, message) = match code {
        409 => (
            StatusReason::Conflict,
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                req.gr.qualified()
            ),
        ),
        503 => (
            StatusReason::ServiceUnavailable,
            "the server is currently unable to handle the request".to_owned(),
        ),
        _ => (
            StatusReason::InternalError,
            "Internal error occurred: injected fault".to_owned(),
        ),
    };
    ApiError {
        reason,
        message,
        details_name: name.to_owned(),
        details_group: req.gr.group.to_string(),
        details_kind: req.gr.resource.to_string(),
        causes: Vec::new(),
    }
}
