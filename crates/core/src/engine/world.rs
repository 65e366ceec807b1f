//! The simulated world: one `Clone` value holding the clock, the event queue, the seeded RNG,
//! the API server, every controller with its informer and work queue, the environment and the
//! trace. Everything that changes it goes through [`World::apply`] (an [`Input`]) or one of the
//! step granularities, each returning a [`StepReport`].

#![allow(
    clippy::result_large_err,
    reason = "ApiResult, the API contract type, carries kube's full error by value"
)]

use std::collections::BTreeMap;
use std::sync::Arc;

use imbl::{OrdMap, OrdSet, Vector};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::report::{
    diff, EventKind, EventRecord, FeedbackLoop, ObjectChange, RequestRecord, StepReport, StopReason,
};
use super::ApiServer;
use crate::api::meta;
use crate::api::{
    ApiError, ApiRequest, ApiResult, GroupResource, ObjectKey, PatchType, StatusReason, WatchEvent,
    WatchEventType,
};
use crate::controllers::declarative::{DeclarativeController, DeclarativeSpec, Step};
use crate::controllers::{
    database::DatabaseController, deployment::DeploymentController, hpa::HpaController,
    kubelet::Kubelet, naive::NaiveController, replicaset::ReplicaSetController,
    scheduler::Scheduler, util, Controller,
};
use crate::runtime::health::{self, Health};
use crate::runtime::{reconcile, Client, Ctx, Environment, ImageBehaviour, Informer, Reconciler};
use crate::runtime::{ReconcileOutcome, WorkQueue};
use crate::time::SimTime;

/// Generation bumps by controllers must happen within this window to count as a loop.
pub const LOOP_WINDOW_MS: u64 = 60_000;

/// The principal the engine uses to set the cluster up.
pub const ADMIN: &str = "admin";

/// One Node of the simulated cluster.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSpec {
    pub name: String,
    /// CPU quantity, e.g. `4` or `3500m`.
    pub cpu: String,
    /// Memory quantity, e.g. `8Gi`.
    pub memory: String,
    pub pods: u64,
}

impl NodeSpec {
    pub fn new(name: &str, cpu: &str, memory: &str) -> Self {
        NodeSpec {
            name: name.to_owned(),
            cpu: cpu.to_owned(),
            memory: memory.to_owned(),
            pods: 110,
        }
    }
}

/// Which controllers run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControllerSet {
    pub deployment: bool,
    pub replicaset: bool,
    pub scheduler: bool,
    pub kubelets: bool,
    pub hpa: bool,
    pub database: bool,
    /// The naive spec-from-status controller, on this resource.
    pub naive: Option<GroupResource>,
    pub declarative: Vec<DeclarativeSpec>,
}

impl Default for ControllerSet {
    fn default() -> Self {
        ControllerSet {
            deployment: true,
            replicaset: true,
            scheduler: true,
            kubelets: true,
            hpa: true,
            database: true,
            naive: None,
            declarative: Vec::new(),
        }
    }
}

/// Everything needed to build a world; serde-friendly so scenario files can carry it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterConfig {
    pub seed: u64,
    pub nodes: Vec<NodeSpec>,
    /// Default watch delivery latency for every informer.
    pub watch_latency_ms: u64,
    pub env: Environment,
    pub controllers: ControllerSet,
    /// Generation bumps of a top-level object by controllers within [`LOOP_WINDOW_MS`] (no
    /// user write in between) that count as a feedback loop.
    pub feedback_loop_threshold: u32,
    /// Custom resources to register: (group, plural, version, kind, status subresource).
    pub custom_resources: Vec<(String, String, String, String, bool)>,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            seed: 1,
            nodes: vec![
                NodeSpec::new("node-1", "4", "8Gi"),
                NodeSpec::new("node-2", "4", "8Gi"),
                NodeSpec::new("node-3", "4", "8Gi"),
            ],
            watch_latency_ms: 5,
            env: Environment::default(),
            controllers: ControllerSet::default(),
            feedback_loop_threshold: 20,
            custom_resources: Vec::new(),
        }
    }
}

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
}

/// The closed set of inputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "input", rename_all = "camelCase")]
pub enum Input {
    /// A request sent by a user (its principal is in the request).
    Request {
        request: ApiRequest,
    },
    /// Let simulated time pass, processing everything due.
    Advance {
        ms: u64,
    },
    Fault {
        fault: Fault,
    },
    /// Set the simulated CPU demand (millicores) of a scale target `namespace/name`.
    SetLoad {
        target: String,
        millicores: u64,
    },
    /// Change how an image behaves from now on.
    SetImage {
        image: String,
        behaviour: ImageBehaviour,
    },
    /// Switch the API server's RBAC enforcement on or off (off: every principal may do
    /// everything), to show what the status subresource's protection is worth.
    SetRbac {
        enforced: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunState {
    Running,
    Paused,
    Crashed,
}

#[derive(Clone, Debug)]
enum Event {
    Deliver {
        controller: String,
        event: Arc<WatchEvent>,
        object: Arc<Value>,
    },
    Reconcile {
        controller: String,
    },
    QueueWake {
        controller: String,
        at: SimTime,
    },
    Scheduled {
        input: Input,
    },
}

#[derive(Clone, Debug)]
struct Slot {
    controller: Controller,
    informer: Informer,
    queue: WorkQueue,
    state: RunState,
    latency_ms: u64,
    reconcile_scheduled: bool,
    wake_at: Option<SimTime>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct FailureRule {
    principal: Option<String>,
    remaining: u32,
    code: u16,
}

#[derive(Clone, Debug, Default)]
struct LoopWatch {
    window_start: SimTime,
    bumps: u32,
    writers: OrdSet<String>,
    reported: bool,
}

/// The simulated world. Cloning is cheap (persistent maps), so the UI can snapshot every step.
#[derive(Clone, Debug)]
pub struct World {
    now: SimTime,
    seq: u64,
    seed: u64,
    rng: ChaCha8Rng,
    api: ApiServer,
    events: OrdMap<(SimTime, u64), Event>,
    slots: BTreeMap<String, Slot>,
    env: Environment,
    failures: Vec<FailureRule>,
    /// The latest version of every object, as the watch stream announced it.
    objects: OrdMap<ObjectKey, Arc<Value>>,
    /// Objects whose kstatus is neither Current nor Failed.
    unsettled: OrdSet<ObjectKey>,
    pending_deliveries: u64,
    /// Scheduled inputs not yet applied.
    pending_inputs: u64,
    loops: OrdMap<ObjectKey, LoopWatch>,
    loop_threshold: u32,
    trace: Vector<String>,
    steps: u64,
    inputs: Vector<(SimTime, Input)>,
}

/// The client handed to reconcilers and users: applies injected failures, sends to the API
/// server, records the request and the watch events it caused.
struct Recorder<'a> {
    api: &'a mut ApiServer,
    failures: &'a mut Vec<FailureRule>,
    now: SimTime,
    requests: Vec<RequestRecord>,
    /// (principal, event with a `Null` object, the object as stored)
    events: Vec<(String, WatchEvent, Arc<Value>)>,
}

impl Client for Recorder<'_> {
    fn send(&mut self, mut req: ApiRequest) -> ApiResult {
        let name = if req.name.is_empty() {
            match &req.body {
                crate::api::RequestBody::Object(v) => meta::name(v).to_owned(),
                _ => String::new(),
            }
        } else {
            req.name.clone()
        };
        let injected = self
            .failures
            .iter_mut()
            .find(|r| r.remaining > 0 && r.principal.as_ref().is_none_or(|p| *p == req.principal));
        let audit_before = self.api.audit_len();
        let result = if let Some(rule) = injected {
            rule.remaining -= 1;
            let code = rule.code;
            Err(injected_error(code, &req, &name))
        } else {
            // The body moves to the server; the record below needs only the request's header.
            let body = std::mem::replace(&mut req.body, crate::api::RequestBody::None);
            let header = req.clone();
            req.body = body;
            let result = self.api.handle(self.now, req);
            req = header;
            result
        };
        // Requests the server made itself (garbage collection of dependents) are audited too.
        let server_side: Vec<RequestRecord> = if self.api.audit_len() > audit_before + 1 {
            self.api
                .audit_since(audit_before + 1)
                .map(RequestRecord::from_audit)
                .collect()
        } else {
            Vec::new()
        };
        self.failures.retain(|r| r.remaining > 0);
        let (code, message) = crate::api::response_status(req.verb, &result);
        self.requests
            .push(RequestRecord::new(&req, &name, code, message));
        self.requests.extend(server_side);
        for (ev, object) in self.api.drain_shared_watch_events() {
            self.events.push((req.principal.clone(), ev, object));
        }
        result
    }
}

fn injected_error(code: u16, req: &ApiRequest, name: &str) -> ApiError {
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
        details_group: req.gr.group.clone(),
        details_kind: req.gr.resource.clone(),
        causes: Vec::new(),
    }
}

impl World {
    /// Builds the cluster: registers resources, creates the Nodes (as `admin`, status written by
    /// each node's kubelet) and starts the controllers.
    pub fn new(config: ClusterConfig) -> World {
        let api = ApiServer::new();
        let mut world = World {
            now: SimTime::ZERO,
            seq: 0,
            seed: config.seed,
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            api,
            events: OrdMap::new(),
            slots: BTreeMap::new(),
            env: config.env.clone(),
            failures: Vec::new(),
            objects: OrdMap::new(),
            unsettled: OrdSet::new(),
            pending_deliveries: 0,
            pending_inputs: 0,
            loops: OrdMap::new(),
            loop_threshold: config.feedback_loop_threshold,
            trace: Vector::new(),
            steps: 0,
            inputs: Vector::new(),
        };
        let c = &config.controllers;
        let mut controllers: Vec<Controller> = Vec::new();
        if c.deployment {
            controllers.push(Controller::Deployment(DeploymentController::new()));
        }
        if c.replicaset {
            controllers.push(Controller::ReplicaSet(ReplicaSetController::new()));
        }
        if c.scheduler {
            controllers.push(Controller::Scheduler(Scheduler::new()));
        }
        if c.kubelets {
            for (i, n) in config.nodes.iter().enumerate() {
                controllers.push(Controller::Kubelet(Kubelet::new(&n.name, i as u32 + 1)));
            }
        }
        if c.hpa {
            controllers.push(Controller::Hpa(HpaController::new()));
        }
        if c.database {
            controllers.push(Controller::Database(DatabaseController::new()));
        }
        if let Some(gr) = &c.naive {
            controllers.push(Controller::Naive(NaiveController::new(gr.clone())));
        }
        for spec in &c.declarative {
            controllers.push(Controller::Declarative(DeclarativeController::new(
                spec.clone(),
            )));
        }
        for controller in controllers {
            world.slots.insert(
                controller.name(),
                Slot {
                    controller,
                    informer: Informer::new(),
                    queue: WorkQueue::new(),
                    state: RunState::Running,
                    latency_ms: config.watch_latency_ms,
                    reconcile_scheduled: false,
                    wake_at: None,
                },
            );
        }
        let mut crds = config.custom_resources.clone();
        if c.database || c.naive.as_ref() == Some(&util::databases()) {
            crds.insert(
                0,
                (
                    "example.com".into(),
                    "databases".into(),
                    "v1".into(),
                    "Database".into(),
                    true,
                ),
            );
        }
        for (group, plural, version, kind, status) in &crds {
            world.request_as_setup(ApiRequest::create(
                ADMIN,
                GroupResource::new("apiextensions.k8s.io", "customresourcedefinitions"),
                "",
                crd(group, plural, version, kind, *status),
            ));
        }
        // Service accounts of data-defined controllers get a role for what they touch.
        let mut grants: Vec<(String, String, Vec<GroupResource>)> = Vec::new();
        if let Some(gr) = &c.naive {
            let principal = NaiveController::new(gr.clone()).principal();
            grants.push((
                "converge:naive-controller".into(),
                principal,
                vec![gr.clone()],
            ));
        }
        for spec in &c.declarative {
            let mut resources = vec![spec.parent.clone()];
            for step in &spec.steps {
                if let Step::CreateChild { resource, .. } | Step::WaitReady { resource, .. } = step
                {
                    resources.push(resource.clone());
                }
            }
            grants.push((
                format!("converge:{}", spec.name),
                spec.principal.clone(),
                resources,
            ));
        }
        for (role, principal, resources) in grants {
            for (gr, body) in rbac_grant(&role, &principal, &resources) {
                world.request_as_setup(ApiRequest::create(ADMIN, gr, "", body));
            }
        }
        for node in &config.nodes {
            let obj = json!({
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": node.name, "labels": {"kubernetes.io/hostname": node.name}},
                "spec": {},
            });
            world.request_as_setup(ApiRequest::create(ADMIN, util::nodes(), "", obj));
            let resources =
                json!({"cpu": node.cpu, "memory": node.memory, "pods": node.pods.to_string()});
            let status = json!({"status": {
                "capacity": resources,
                "allocatable": resources,
                "conditions": [{
                    "type": "Ready", "status": "True", "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                    "lastHeartbeatTime": SimTime::ZERO.rfc3339(),
                    "lastTransitionTime": SimTime::ZERO.rfc3339(),
                }],
            }});
            let mut req = ApiRequest::patch(
                &crate::api::principals::kubelet(&node.name),
                util::nodes(),
                "",
                &node.name,
                PatchType::Merge,
                status,
            );
            req.subresource = Some(crate::api::Subresource::Status);
            world.request_as_setup(req);
        }
        // The set-up is part of the config, not of the replayable input log.
        world.inputs = Vector::new();
        world
    }

    fn request_as_setup(&mut self, req: ApiRequest) {
        let mut report = StepReport::default();
        self.process_input(Input::Request { request: req }, &mut report);
    }

    // ---- read access ----------------------------------------------------------------

    pub fn now(&self) -> SimTime {
        self.now
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn api(&self) -> &ApiServer {
        &self.api
    }

    /// Switches the API server's RBAC enforcement (scenario files' `rbac.enforce: false`): with
    /// it off every principal may do everything, which shows what status spoofing would do.
    pub fn set_rbac_enforced(&mut self, enforced: bool) {
        self.api.set_rbac_enforced(enforced);
    }

    pub fn env(&self) -> &Environment {
        &self.env
    }

    /// The latest stored version of an object.
    pub fn object(&self, key: &ObjectKey) -> Option<&Value> {
        self.objects.get(key).map(|v| v.as_ref())
    }

    pub fn objects(&self) -> impl Iterator<Item = (&ObjectKey, &Arc<Value>)> {
        self.objects.iter()
    }

    pub fn object_count(&self) -> usize {
        self.objects.len()
    }

    pub fn health(&self, key: &ObjectKey) -> Option<Health> {
        self.objects.get(key).map(|o| health::compute(o, self.now))
    }

    /// The whole trace so far, one line per event.
    pub fn trace(&self) -> &Vector<String> {
        &self.trace
    }

    pub fn trace_text(&self) -> String {
        let mut s = String::new();
        for l in &self.trace {
            s.push_str(l);
            s.push('\n');
        }
        s
    }

    /// Every input applied so far, with its time: replaying them on a fresh world with the same
    /// config reproduces this one.
    pub fn inputs(&self) -> &Vector<(SimTime, Input)> {
        &self.inputs
    }

    pub fn steps(&self) -> u64 {
        self.steps
    }

    pub fn controller_names(&self) -> Vec<String> {
        self.slots.keys().cloned().collect()
    }

    /// A controller's in-memory state.
    pub fn controller(&self, name: &str) -> Option<&Controller> {
        self.slots.get(name).map(|s| &s.controller)
    }

    pub fn controller_state(&self, name: &str) -> Option<&RunState> {
        self.slots.get(name).map(|s| &s.state)
    }

    /// A controller's informer cache (possibly stale).
    pub fn cache(&self, controller: &str) -> Option<&Informer> {
        self.slots.get(controller).map(|s| &s.informer)
    }

    /// (ready, waiting) work-queue lengths of a controller.
    pub fn queue_len(&self, controller: &str) -> Option<(usize, usize)> {
        self.slots
            .get(controller)
            .map(|s| (s.queue.len(), s.queue.waiting_len()))
    }

    /// Time of the next scheduled event.
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.events.get_min().map(|((t, _), _)| *t)
    }

    pub fn pending_events(&self) -> usize {
        self.events.len()
    }

    /// Nothing queued (no deliveries in flight, no ready work, no scheduled inputs) and every
    /// object Current or Failed. Delayed requeues (resyncs, kubelet timers) do not count.
    pub fn is_converged(&self) -> bool {
        if self.pending_deliveries > 0 {
            return false;
        }
        if self
            .slots
            .values()
            .any(|s| s.state != RunState::Crashed && (!s.queue.is_empty() || s.reconcile_scheduled))
        {
            return false;
        }
        if self.pending_inputs > 0 {
            return false;
        }
        self.unsettled.iter().all(|k| {
            self.objects
                .get(k)
                .is_none_or(|o| health::compute(o, self.now).is_settled())
        })
    }

    // ---- inputs and steps -------------------------------------------------------------

    /// Schedules an input at a future time (scenario actions).
    pub fn schedule(&mut self, at: SimTime, input: Input) {
        let at = at.max(self.now);
        self.pending_inputs += 1;
        self.push(at, Event::Scheduled { input });
    }

    /// Applies one input now and returns what happened. `Advance` processes everything due.
    pub fn apply(&mut self, input: Input) -> StepReport {
        let mut report = self.start_report();
        if let Input::Advance { ms } = input {
            self.inputs.push_back((self.now, input.clone()));
            return self.advance(ms);
        }
        self.process_input(input, &mut report);
        self.finish(report)
    }

    /// Processes exactly one event.
    pub fn step(&mut self) -> StepReport {
        let mut report = self.start_report();
        if !self.process_next(&mut report) {
            report.stop = Some(StopReason::Idle);
        }
        self.finish(report)
    }

    /// Jumps to the next scheduled time and processes every event due then.
    pub fn step_to_next_time(&mut self) -> StepReport {
        let mut report = self.start_report();
        match self.next_event_time() {
            None => report.stop = Some(StopReason::Idle),
            Some(t) => {
                while self.next_event_time() == Some(t) {
                    self.process_next(&mut report);
                }
            }
        }
        self.finish(report)
    }

    /// Processes every event due within `ms`, then sets the clock to now + ms.
    pub fn advance(&mut self, ms: u64) -> StepReport {
        let mut report = self.start_report();
        let until = self.now.plus_ms(ms);
        while self.next_event_time().is_some_and(|t| t <= until) {
            self.process_next(&mut report);
        }
        self.now = until;
        report.stop = Some(StopReason::Done);
        self.finish(report)
    }

    /// Steps until converged, a feedback loop, nothing scheduled, or the bounds.
    pub fn run_until_converged(&mut self, max_events: u64, max_ms: u64) -> StepReport {
        let mut report = self.start_report();
        let deadline = self.now.plus_ms(max_ms);
        let mut n = 0;
        let stop = loop {
            if self.is_converged() {
                break StopReason::Converged;
            }
            if !report.feedback_loops.is_empty() {
                break StopReason::FeedbackLoop;
            }
            match self.next_event_time() {
                None => break StopReason::Idle,
                Some(t) if t > deadline => {
                    self.now = deadline;
                    break StopReason::Bound;
                }
                Some(_) if n >= max_events => break StopReason::Bound,
                Some(_) => {}
            }
            self.process_next(&mut report);
            n += 1;
        };
        report.stop = Some(stop);
        self.finish(report)
    }

    fn start_report(&self) -> StepReport {
        StepReport {
            from: self.now,
            to: self.now,
            ..StepReport::default()
        }
    }

    fn finish(&mut self, mut report: StepReport) -> StepReport {
        self.steps += 1;
        report.to = self.now;
        report
    }

    fn push(&mut self, at: SimTime, ev: Event) {
        self.seq += 1;
        self.events.insert((at, self.seq), ev);
    }

    fn process_next(&mut self, report: &mut StepReport) -> bool {
        let Some(((t, seq), ev)) = self.events.get_min().map(|(k, v)| (*k, v.clone())) else {
            return false;
        };
        self.events.remove(&(t, seq));
        self.now = self.now.max(t);
        match ev {
            Event::Deliver {
                controller,
                event,
                object,
            } => self.deliver(seq, &controller, &event, &object, report),
            Event::Reconcile { controller } => self.reconcile(seq, &controller, report),
            Event::QueueWake { controller, at } => {
                if let Some(slot) = self.slots.get_mut(&controller) {
                    if slot.wake_at == Some(at) {
                        slot.wake_at = None;
                    }
                    slot.queue.promote(self.now);
                }
                self.kick(&controller);
            }
            Event::Scheduled { input } => {
                self.pending_inputs = self.pending_inputs.saturating_sub(1);
                if let Input::Advance { .. } = input {
                } else {
                    self.process_input(input, report);
                }
            }
        }
        true
    }

    /// Records an input with no requests (a fault or a change to the environment) on `lane`.
    fn record_input(&mut self, report: &mut StepReport, seq: u64, lane: &str, description: String) {
        let rec = EventRecord {
            time: self.now,
            seq,
            lane: lane.into(),
            line: format!("{lane} {description}"),
            kind: EventKind::Input { description },
            requests: Vec::new(),
            changes: Vec::new(),
        };
        self.record(report, rec);
    }

    fn record(&mut self, report: &mut StepReport, mut rec: EventRecord) {
        rec.line = format!("{} {}", rec.time, rec.line);
        self.trace.push_back(rec.line.clone());
        report.events.push(rec);
    }

    fn process_input(&mut self, input: Input, report: &mut StepReport) {
        self.inputs.push_back((self.now, input.clone()));
        let seq = self.seq;
        match input {
            Input::Request { request } => {
                let lane = format!("user:{}", request.principal);
                let key = ObjectKey::new(request.gr.clone(), &request.namespace, &request.name);
                self.loops.remove(&key);
                let (requests, events) = {
                    let mut rec = Recorder {
                        api: &mut self.api,
                        failures: &mut self.failures,
                        now: self.now,
                        requests: Vec::new(),
                        events: Vec::new(),
                    };
                    let _ = rec.send(request);
                    (rec.requests, rec.events)
                };
                for (_, ev, _) in &events {
                    self.loops.remove(&ev.key);
                }
                let changes = self.absorb(events, report, true);
                let line = format!(
                    "{lane} request -> {}",
                    requests
                        .iter()
                        .map(|r| r.summary())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                let rec = EventRecord {
                    time: self.now,
                    seq,
                    lane,
                    kind: EventKind::Input {
                        description: "request".into(),
                    },
                    requests,
                    changes,
                    line,
                };
                self.record(report, rec);
            }
            Input::Advance { .. } => {}
            Input::Fault { fault } => {
                let description = self.apply_fault(&fault);
                self.record_input(report, seq, "fault", description);
            }
            Input::SetLoad { target, millicores } => {
                self.env.load_millicores.insert(target.clone(), millicores);
                let description = format!("load {target} = {millicores}m");
                self.record_input(report, seq, "environment", description);
            }
            Input::SetImage { image, behaviour } => {
                let description = format!("image {image} = {behaviour:?}");
                self.env.images.insert(image, behaviour);
                self.record_input(report, seq, "environment", description);
            }
            Input::SetRbac { enforced } => {
                self.api.set_rbac_enforced(enforced);
                let description = format!("rbac {}", if enforced { "enforced" } else { "off" });
                self.record_input(report, seq, "environment", description);
            }
        }
    }

    fn apply_fault(&mut self, fault: &Fault) -> String {
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
                    s.reconcile_scheduled = false;
                    s.wake_at = None;
                    s.controller.reset();
                }
                format!("crash {controller}")
            }
            Fault::RestartController { controller } => {
                self.restart(controller);
                format!("restart {controller}")
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
        }
    }

    /// A restarted controller lists everything it watches (an informer's initial sync) and
    /// queues every key its handlers map the objects to.
    fn restart(&mut self, controller: &str) {
        let objects = self.objects.clone();
        let Some(slot) = self.slots.get_mut(controller) else {
            return;
        };
        slot.state = RunState::Running;
        slot.queue = WorkQueue::new();
        slot.controller.reset();
        let watched: Vec<(&ObjectKey, &Arc<Value>)> = objects
            .iter()
            .filter(|(k, v)| slot.controller.watches(&k.gr) && slot.controller.accepts(&k.gr, v))
            .collect();
        slot.informer.replace(watched.iter().copied());
        for (k, v) in watched {
            let rv = meta::str_at(v, "/metadata/resourceVersion")
                .parse()
                .unwrap_or(0);
            let ev = WatchEvent {
                event_type: WatchEventType::Added,
                key: k.clone(),
                object: Value::Null,
                resource_version: rv,
                time: self.now,
            };
            for key in slot.controller.keys_for(&ev, None, v, &slot.informer) {
                slot.queue.add(key);
            }
        }
        self.kick(controller);
    }

    /// Schedules work for a controller: a reconcile now if keys are ready, a wake-up for the
    /// earliest delayed key.
    fn kick(&mut self, controller: &str) {
        let now = self.now;
        let Some(slot) = self.slots.get_mut(controller) else {
            return;
        };
        if slot.state == RunState::Crashed {
            return;
        }
        let mut to_push = Vec::new();
        if slot.state == RunState::Running && !slot.queue.is_empty() && !slot.reconcile_scheduled {
            slot.reconcile_scheduled = true;
            to_push.push((
                now,
                Event::Reconcile {
                    controller: controller.to_owned(),
                },
            ));
        }
        if let Some(t) = slot.queue.next_ready_at() {
            if slot.wake_at.is_none_or(|w| t < w) {
                slot.wake_at = Some(t);
                to_push.push((
                    t,
                    Event::QueueWake {
                        controller: controller.to_owned(),
                        at: t,
                    },
                ));
            }
        }
        for (t, ev) in to_push {
            self.push(t, ev);
        }
    }

    fn deliver(
        &mut self,
        seq: u64,
        controller: &str,
        event: &Arc<WatchEvent>,
        object: &Arc<Value>,
        report: &mut StepReport,
    ) {
        self.pending_deliveries = self.pending_deliveries.saturating_sub(1);
        let Some(slot) = self.slots.get_mut(controller) else {
            return;
        };
        if slot.state == RunState::Crashed {
            return;
        }
        let old = slot.informer.get(&event.key).cloned();
        let applied = slot.informer.apply(event, object);
        let keys = if applied {
            slot.controller
                .keys_for(event, old.as_ref(), object, &slot.informer)
        } else {
            Vec::new()
        };
        for k in &keys {
            slot.queue.add(k.clone());
        }
        let ev_name = match event.event_type {
            WatchEventType::Added => "ADDED",
            WatchEventType::Modified => "MODIFIED",
            WatchEventType::Deleted => "DELETED",
        };
        let mut line = format!(
            "{controller} watch {ev_name} {} rv={}",
            key_text(&event.key),
            event.resource_version
        );
        if !applied {
            line.push_str(" (stale, ignored)");
        } else if !keys.is_empty() {
            let ks: Vec<String> = keys.iter().map(short_key).collect();
            line.push_str(&format!(" -> queue {}", ks.join(", ")));
        }
        let rec = EventRecord {
            time: self.now,
            seq,
            lane: controller.to_owned(),
            kind: EventKind::Watch {
                event_type: event.event_type,
                key: event.key.clone(),
                resource_version: event.resource_version,
                enqueued: keys,
                stale: !applied,
            },
            requests: Vec::new(),
            changes: Vec::new(),
            line,
        };
        self.record(report, rec);
        self.kick(controller);
    }

    fn reconcile(&mut self, seq: u64, controller: &str, report: &mut StepReport) {
        let now = self.now;
        let Some(slot) = self.slots.get_mut(controller) else {
            return;
        };
        slot.reconcile_scheduled = false;
        if slot.state != RunState::Running {
            return;
        }
        let Some(key) = slot.queue.get() else {
            return;
        };
        let mut recorder = Recorder {
            api: &mut self.api,
            failures: &mut self.failures,
            now,
            requests: Vec::new(),
            events: Vec::new(),
        };
        let result = {
            let mut ctx = Ctx {
                now,
                cache: &slot.informer,
                client: &mut recorder,
                rng: &mut self.rng,
                env: &self.env,
            };
            slot.controller.reconcile(&key, &mut ctx)
        };
        let (requests, events) = (recorder.requests, recorder.events);
        slot.queue.done(&key);
        let max_retries = slot.controller.max_retries();
        let outcome = reconcile::settle(&mut slot.queue, &key, result, max_retries, now);
        let changes = self.absorb(events, report, false);
        let mut line = format!("{controller} reconcile {}", short_key(&key));
        if requests.is_empty() {
            line.push_str(" -> no writes");
        } else {
            let parts: Vec<String> = requests.iter().map(|r| r.summary()).collect();
            line.push_str(&format!(" -> {}", parts.join(", ")));
        }
        match &outcome {
            ReconcileOutcome::AwaitChange => {}
            ReconcileOutcome::RequeueAfter { ms } => {
                line.push_str(&format!("; requeue after {}", ms_text(*ms)))
            }
            ReconcileOutcome::Error { message, retry_ms } => {
                line.push_str(&format!("; error: {message}"));
                match retry_ms {
                    Some(ms) => line.push_str(&format!("; retry after {}", ms_text(*ms))),
                    None => line.push_str("; dropped after too many retries"),
                }
            }
        }
        let rec = EventRecord {
            time: now,
            seq,
            lane: controller.to_owned(),
            kind: EventKind::Reconcile { key, outcome },
            requests,
            changes,
            line,
        };
        self.record(report, rec);
        self.kick(controller);
    }

    /// Takes the watch events a request caused: updates the object mirror, health tracking and
    /// loop detection, computes field changes, and schedules deliveries to every informer.
    fn absorb(
        &mut self,
        events: Vec<(String, WatchEvent, Arc<Value>)>,
        report: &mut StepReport,
        by_user: bool,
    ) -> Vec<ObjectChange> {
        let mut changes = Vec::with_capacity(events.len());
        for (principal, ev, object) in events {
            let before = self.objects.get(&ev.key).cloned();
            let after = (ev.event_type != WatchEventType::Deleted).then(|| object.clone());
            changes.push(ObjectChange {
                key: ev.key.clone(),
                event_type: ev.event_type,
                principal: principal.clone(),
                resource_version: ev.resource_version,
                fields: diff(before.as_deref(), after.as_deref()),
            });
            match &after {
                Some(o) => {
                    self.objects.insert(ev.key.clone(), o.clone());
                    if health::compute(o, self.now).is_settled() {
                        self.unsettled.remove(&ev.key);
                    } else {
                        self.unsettled.insert(ev.key.clone());
                    }
                }
                None => {
                    self.objects.remove(&ev.key);
                    self.unsettled.remove(&ev.key);
                    self.loops.remove(&ev.key);
                }
            }
            // Feedback loops: generation bumped by controllers with no user write in between.
            let gen_before = before.as_deref().map(meta::generation).unwrap_or(0);
            let gen_after = after.as_deref().map(meta::generation).unwrap_or(0);
            // Objects with a controller owner (ReplicaSets, Pods) have their spec managed by
            // that owner; only spec writes to top-level objects count, within a time window.
            let owned = after.as_deref().and_then(meta::controller_of).is_some();
            if !by_user
                && !owned
                && ev.event_type == WatchEventType::Modified
                && gen_after > gen_before
            {
                let threshold = self.loop_threshold;
                let now = self.now;
                let w = self.loops.entry(ev.key.clone()).or_default();
                if now.as_ms() > w.window_start.as_ms() + LOOP_WINDOW_MS {
                    w.window_start = now;
                    w.bumps = 0;
                }
                w.bumps += 1;
                w.writers.insert(principal.clone());
                if w.bumps >= threshold && !w.reported {
                    w.reported = true;
                    let fl = FeedbackLoop {
                        key: ev.key.clone(),
                        generation: gen_after,
                        writers: w.writers.iter().cloned().collect(),
                    };
                    let line = format!(
                        "engine feedback-loop {} generation {gen_after} climbing with no user write, written by {}",
                        key_text(&ev.key),
                        fl.writers.join(", ")
                    );
                    report.feedback_loops.push(fl);
                    let rec = EventRecord {
                        time: self.now,
                        seq: self.seq,
                        lane: "engine".into(),
                        kind: EventKind::Notice {
                            description: "feedback loop".into(),
                        },
                        requests: Vec::new(),
                        changes: Vec::new(),
                        line,
                    };
                    self.record(report, rec);
                }
            }
            let shared = Arc::new(ev);
            let mut deliveries = Vec::new();
            for (name, slot) in &self.slots {
                if slot.state == RunState::Crashed || !slot.controller.watches(&shared.key.gr) {
                    continue;
                }
                if slot.controller.accepts(&shared.key.gr, &object)
                    || slot.informer.get(&shared.key).is_some()
                {
                    deliveries.push((self.now.plus_ms(slot.latency_ms), name.clone()));
                }
            }
            for (t, controller) in deliveries {
                self.pending_deliveries += 1;
                self.push(
                    t,
                    Event::Deliver {
                        controller,
                        event: shared.clone(),
                        object: object.clone(),
                    },
                );
            }
        }
        changes
    }
}

/// A CustomResourceDefinition for `plural.group`, schemaless, optionally with `/status`.
fn crd(group: &str, plural: &str, version: &str, kind: &str, status: bool) -> Value {
    let mut v = json!({
        "name": version, "served": true, "storage": true,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
    });
    if status {
        v["subresources"] = json!({"status": {}});
    }
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {
            "group": group,
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind, "listKind": format!("{kind}List")},
            "scope": "Namespaced",
            "versions": [v],
        },
    })
}

/// A ClusterRole allowing everything on `resources` (and their `/status`) and its binding to
/// `principal` (a service account `system:serviceaccount:ns:name`, or a user).
fn rbac_grant(
    role: &str,
    principal: &str,
    resources: &[GroupResource],
) -> Vec<(GroupResource, Value)> {
    let rules: Vec<Value> = resources
        .iter()
        .map(|gr| {
            json!({"apiGroups": [gr.group], "resources": [gr.resource, format!("{}/status", gr.resource)], "verbs": ["*"]})
        })
        .collect();
    let subject = match principal
        .strip_prefix("system:serviceaccount:")
        .and_then(|r| r.split_once(':'))
    {
        Some((ns, name)) => json!({"kind": "ServiceAccount", "name": name, "namespace": ns}),
        None => json!({"kind": "User", "name": principal, "apiGroup": "rbac.authorization.k8s.io"}),
    };
    vec![
        (
            GroupResource::new("rbac.authorization.k8s.io", "clusterroles"),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": role}, "rules": rules}),
        ),
        (
            GroupResource::new("rbac.authorization.k8s.io", "clusterrolebindings"),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": role},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": [subject]}),
        ),
    ]
}

/// `deployments default/web`, `nodes node-1`.
pub fn key_text(k: &ObjectKey) -> String {
    if k.namespace.is_empty() {
        format!("{} {}", k.gr.resource, k.name)
    } else {
        format!("{} {}/{}", k.gr.resource, k.namespace, k.name)
    }
}

fn short_key(k: &ObjectKey) -> String {
    if k.namespace.is_empty() {
        k.name.clone()
    } else {
        format!("{}/{}", k.namespace, k.name)
    }
}

/// `5ms`, `1.250s`.
pub fn ms_text(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{}.{:03}s", ms / 1000, ms % 1000)
    }
}
