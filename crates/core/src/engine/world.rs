//! The simulated world and its event loop: one `Clone` value holding the clock, the event
//! queue, the seeded RNG, the API server, every controller with its informer and work queue,
//! the environment and the trace. Everything that changes it goes through [`World::apply`] (an
//! [`Input`]) or one of the step granularities, each returning a [`StepReport`].
//!
//! The loop's parts live beside it: `bootstrap` builds the initial world,
//! `faults` applies injected faults, `delivery` records requests and delivers watch events,
//! `checks` detects convergence and feedback loops, and `trace` spells the trace lines.

#![allow(
    clippy::result_large_err,
    reason = "ApiResult, the API contract type, carries kube's full error by value"
)]

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::json::Value;
use imbl::{OrdMap, OrdSet, Vector};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::checks::LoopWatch;
use super::delivery::Recorder;
use super::faults::FailureRule;
use super::provenance::{Cause, Origin, Provenance, QueueCauses, ReconcileRec, Root};
use super::report::{EventKind, EventRecord, StepReport, StopReason};
use super::trace;
use super::ApiServer;
use crate::api::{ApiRequest, ApiResult, GroupResource, ObjectKey, WatchEvent};
use crate::controllers::Controller;
use crate::runtime::health::{self, Health};
use crate::runtime::{
    reconcile, Client, Ctx, Environment, ImageBehaviour, Informer, ReconcileOutcome, Reconciler,
};
use crate::runtime::{EventBroadcaster, WorkQueue};
use crate::time::SimTime;

// The world's parts moved beside it; their old paths stay.
pub use super::bootstrap::{ClusterConfig, ControllerSet, NodeSpec, ADMIN};
pub use super::checks::LOOP_WINDOW_MS;
pub use super::faults::Fault;
pub use super::trace::{key_text, ms_text, short_key};

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

/// What the event queue holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) enum Event {
    Deliver {
        controller: String,
        event: Arc<WatchEvent>,
        #[serde(with = "super::checkpoint::shared")]
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
    /// The earliest Event lease runs out (kube-apiserver's `--event-ttl`).
    EventsExpire {
        at: SimTime,
    },
}

/// One running controller with its informer cache, work queue and scheduling state.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Slot {
    pub(super) controller: Controller,
    pub(super) informer: Informer,
    pub(super) queue: WorkQueue,
    pub(super) state: RunState,
    pub(super) latency_ms: u64,
    pub(super) reconcile_scheduled: bool,
    pub(super) wake_at: Option<SimTime>,
    /// The controller's event broadcaster, if it records events.
    pub(super) broadcaster: Option<EventBroadcaster>,
    /// Why each queued key is queued (provenance), kept beside the queue by its rules.
    pub(super) causes: QueueCauses,
}

impl Slot {
    pub(super) fn new(controller: Controller, latency_ms: u64) -> Slot {
        let broadcaster = controller
            .event_api()
            .map(|api| EventBroadcaster::new(api, &controller.principal()));
        Slot {
            broadcaster,
            controller,
            informer: Informer::new(),
            queue: WorkQueue::new(),
            state: RunState::Running,
            latency_ms,
            reconcile_scheduled: false,
            wake_at: None,
            causes: QueueCauses::default(),
        }
    }
}

/// The simulated world. Cloning is cheap (persistent maps), so the UI can snapshot every step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct World {
    pub(super) now: SimTime,
    pub(super) seq: u64,
    pub(super) seed: u64,
    pub(super) rng: ChaCha8Rng,
    pub(super) api: ApiServer,
    pub(super) events: OrdMap<(SimTime, u64), Event>,
    pub(super) slots: BTreeMap<String, Slot>,
    pub(super) env: Environment,
    pub(super) failures: Vec<FailureRule>,
    /// The objects the API server made for itself when it started (namespaces, service
    /// accounts, the default RBAC policy) that no watch event has announced since. The world's
    /// objects are the store's, as the watch stream announced them: every write after the
    /// start is announced as soon as its request ends, so they are the store's objects but
    /// these (ARCHITECTURE.md, "Invariants").
    pub(super) unannounced: OrdSet<ObjectKey>,
    /// The resources of the [`Self::unannounced`] objects, each once: a change of any other
    /// resource (nearly every change) is told apart by a compare or two, not a search.
    /// Made again from them when they change, and after a checkpoint is read.
    #[serde(skip)]
    pub(super) unannounced_resources: Vec<GroupResource>,
    /// Objects whose kstatus is neither Current nor Failed.
    pub(super) unsettled: OrdSet<ObjectKey>,
    pub(super) pending_deliveries: u64,
    /// Scheduled inputs not yet applied.
    pub(super) pending_inputs: u64,
    pub(super) loops: OrdMap<ObjectKey, LoopWatch>,
    pub(super) loop_threshold: u32,
    /// One line per event; the event's record shares it.
    pub(super) trace: Vector<Arc<str>>,
    pub(super) steps: u64,
    pub(super) inputs: Vector<(SimTime, Input)>,
    /// When the queued [`Event::EventsExpire`] fires, if one is queued.
    pub(super) expiry_at: Option<SimTime>,
    /// Set by [`World::keep_reports_short`]: how many of a step's newest events its report
    /// keeps (with its first).
    pub(super) report_events: Option<usize>,
    /// What caused every recent write and reconcile ([`super::provenance`]).
    pub(super) provenance: Provenance,
    /// Set by [`World::count_trace_only`]: how many lines were counted and not kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) unkept_lines: Option<u64>,
}

impl World {
    /// A world with no controllers and an empty API server; [`World::new`] builds on it.
    pub(super) fn blank(config: &ClusterConfig) -> World {
        let api = ApiServer::new();
        let unannounced = api.store().iter().map(|(k, _)| k.clone()).collect();
        World {
            now: SimTime::ZERO,
            seq: 0,
            seed: config.seed,
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            api,
            events: OrdMap::new(),
            slots: BTreeMap::new(),
            env: config.env.clone(),
            failures: Vec::new(),
            unannounced,
            unannounced_resources: Vec::new(),
            unsettled: OrdSet::new(),
            pending_deliveries: 0,
            pending_inputs: 0,
            loops: OrdMap::new(),
            loop_threshold: config.feedback_loop_threshold,
            trace: Vector::new(),
            steps: 0,
            inputs: Vector::new(),
            expiry_at: None,
            report_events: None,
            provenance: Provenance::default(),
            unkept_lines: None,
        }
    }

    /// For a viewer that shows only the newest `n` events of a step (the playground's
    /// timeline): from now on each step's report keeps its first event and the newest `n`, and
    /// no watch events, so a long run holds no more in memory than can be shown. The trace
    /// keeps every line; the world's behaviour does not change.
    pub fn keep_reports_short(&mut self, n: usize) {
        self.report_events = Some(n);
    }

    /// For a caller that reads no trace (`converge check`): from now on each line is counted
    /// and not kept, so the trace stops growing while line numbers (provenance's, the reports')
    /// go on as before. Everything else, the reports' lines included, is unchanged.
    pub fn count_trace_only(&mut self) {
        self.unkept_lines.get_or_insert(0);
    }

    /// From now on the API server keeps its audit log only as long as the engine reads it
    /// ([`ApiServer::keep_no_audit`]).
    pub fn keep_no_audit(&mut self) {
        self.api.keep_no_audit();
    }

    /// How many lines the trace has had, kept or only counted: the next line's number.
    pub(super) fn trace_len(&self) -> u64 {
        self.trace.len() as u64 + self.unkept_lines.unwrap_or(0)
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
        self.object_shared(key).map(AsRef::as_ref)
    }

    /// [`Self::object`], shared.
    pub(super) fn object_shared(&self, key: &ObjectKey) -> Option<&Arc<Value>> {
        if !self.unannounced.is_empty() && self.unannounced.contains(key) {
            return None;
        }
        self.api.store().get(key)
    }

    pub fn objects(&self) -> impl Iterator<Item = (&ObjectKey, &Arc<Value>)> {
        announced(self.api.store().iter(), self.unannounced.iter())
    }

    /// The objects whose keys fall in `range`, in key order.
    pub fn objects_in(
        &self,
        range: std::ops::Range<ObjectKey>,
    ) -> impl Iterator<Item = (&ObjectKey, &Arc<Value>)> {
        announced(
            self.api.store().range_of_keys(range.clone()),
            self.unannounced.range(range),
        )
    }

    /// The objects of resource `gr`, in one namespace or in all (`None`), in key order: a range
    /// of the key-ordered map, not a scan of every object.
    pub fn objects_of<'a>(
        &'a self,
        gr: &GroupResource,
        namespace: Option<&str>,
    ) -> impl Iterator<Item = (&'a ObjectKey, &'a Arc<Value>)> {
        // The least key after every key with this prefix: the prefix with a NUL appended.
        let (from, to) = match namespace {
            Some(ns) => (
                ObjectKey::new(gr.clone(), ns, ""),
                ObjectKey::new(gr.clone(), &format!("{ns}\u{0}"), ""),
            ),
            None => {
                let after = GroupResource::new(&gr.group, &format!("{}\u{0}", gr.resource));
                (
                    ObjectKey::new(gr.clone(), "", ""),
                    ObjectKey::new(after, "", ""),
                )
            }
        };
        self.objects_in(from..to)
    }

    pub fn object_count(&self) -> usize {
        debug_assert!(
            self.unannounced.len() <= self.api.store().len(),
            "the unannounced objects are stored objects"
        );
        self.api.store().len() - self.unannounced.len()
    }

    pub fn health(&self, key: &ObjectKey) -> Option<Health> {
        self.object(key).map(|o| health::compute(o, self.now))
    }

    /// What caused the recent writes and reconciles; [`World::why`] walks it.
    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }

    /// The whole trace so far, one line per event (after [`World::count_trace_only`], only the
    /// lines before it).
    pub fn trace(&self) -> &Vector<Arc<str>> {
        &self.trace
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

    /// Sends one request now, exactly as `apply(Input::Request { .. })` does (same trace, same
    /// input log), and also returns the API server's answer: what an HTTP client of the
    /// simulated cluster receives (`converge serve`).
    pub fn request(&mut self, request: ApiRequest) -> (ApiResult, StepReport) {
        let mut report = self.start_report();
        let answer = self
            .process_input_answered(Input::Request { request }, &mut report)
            .unwrap_or_else(|| {
                Err(crate::api::ApiError::new(
                    crate::api::StatusReason::InternalError,
                    "the request was not processed",
                ))
            });
        (answer, self.finish(report))
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

    pub(super) fn push(&mut self, at: SimTime, ev: Event) {
        self.seq += 1;
        self.events.insert((at, self.seq), ev);
    }

    fn process_next(&mut self, report: &mut StepReport) -> bool {
        // Taken out of the queue, not copied out and then removed.
        let Some(&((t, seq), _)) = self.events.get_min() else {
            return false;
        };
        let Some((_, ev)) = self.events.remove_with_key(&(t, seq)) else {
            return false;
        };
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
                    slot.causes.promote(self.now);
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
            Event::EventsExpire { at } => {
                if self.expiry_at == Some(at) {
                    self.expiry_at = None;
                }
                self.expire_events(seq, report);
            }
        }
        self.arm_event_expiry();
        true
    }

    /// Queues the next Event lease's expiry, unless an earlier one is queued.
    fn arm_event_expiry(&mut self) {
        if let Some(t) = self.api.next_event_expiry() {
            if self.expiry_at.is_none_or(|q| t < q) {
                self.expiry_at = Some(t);
                self.push(t, Event::EventsExpire { at: t });
            }
        }
    }

    /// The API server deletes the Events whose leases ran out; watchers see them go.
    fn expire_events(&mut self, seq: u64, report: &mut StepReport) {
        let gone = self.api.expire_events(self.now);
        if gone.is_empty() {
            return;
        }
        let events: Vec<_> = self
            .api
            .drain_shared_watch_events()
            .into_iter()
            .map(|drained| ("system:apiserver".to_owned(), drained))
            .collect();
        let changes = self.absorb(events, report, false);
        let names: Vec<String> = gone.iter().map(trace::key_text).collect();
        let rec = EventRecord {
            time: self.now,
            seq,
            lane: "api-server".into(),
            kind: EventKind::Notice {
                description: format!("event-ttl expired {}", names.join(", ")),
            },
            requests: Vec::new(),
            changes,
            line: format!("api-server event-ttl expired {}", names.join(", ")).into(),
        };
        self.note_ttl_deletes(&rec);
        self.record(report, rec);
    }

    pub(super) fn process_input(&mut self, input: Input, report: &mut StepReport) {
        self.process_input_answered(input, report);
    }

    /// [`Self::process_input`], with the API server's answer when the input is a request.
    fn process_input_answered(
        &mut self,
        input: Input,
        report: &mut StepReport,
    ) -> Option<ApiResult> {
        self.inputs.push_back((self.now, input.clone()));
        let seq = self.seq;
        let input_index = self.inputs.len() - 1;
        match input {
            Input::Request { request } => {
                // Its line is set once the request's events are absorbed.
                let root = Root::Request {
                    principal: request.principal.clone(),
                    input: input_index,
                    line: 0,
                    time: self.now,
                };
                return Some(self.handle_request(request, report, seq, root));
            }
            Input::Advance { .. } => {}
            Input::Fault { fault } => {
                let description = self.apply_fault(&fault);
                let root = Root::Fault {
                    input: input_index,
                    line: self.trace_len(),
                    time: self.now,
                    description: description.clone(),
                };
                self.record_input(report, seq, "fault", description);
                // A node fault's own requests follow it; replaying the fault sends them again.
                for request in self.node_fault_requests(&fault) {
                    let seq = self.seq;
                    // Its answer is in the trace; a refused node write is the scenario's to see.
                    let _answer = self.handle_request(request, report, seq, root.clone());
                }
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
                let description = format!("rbac {}", if enforced { "enforced" } else { "off" });
                self.api.set_rbac_enforced(enforced);
                self.record_input(report, seq, "environment", description);
            }
        }
        None
    }

    /// One request as its principal, with its trace line and the watch events it caused.
    fn handle_request(
        &mut self,
        request: ApiRequest,
        report: &mut StepReport,
        seq: u64,
        root: Root,
    ) -> ApiResult {
        {
            {
                let lane = format!("user:{}", request.principal);
                let key = ObjectKey::new(request.gr.clone(), &request.namespace, &request.name);
                self.loops.remove(&key);
                let (requests, events, origins, answer) = {
                    let mut rec = Recorder {
                        api: &mut self.api,
                        failures: &mut self.failures,
                        now: self.now,
                        requests: Vec::new(),
                        events: Vec::new(),
                        origins: Vec::new(),
                        marks: Vec::new(),
                        explained: 0,
                    };
                    let answer = rec.send(request);
                    (rec.requests, rec.events, rec.origins, answer)
                };
                for (_, (ev, _, _)) in &events {
                    self.loops.remove(&*ev.key);
                }
                let changes = self.absorb(events, report, true);
                let line = trace::request_line(&lane, &requests);
                let rec = EventRecord {
                    time: self.now,
                    seq,
                    lane,
                    kind: EventKind::Input {
                        description: "request".into(),
                    },
                    requests,
                    changes,
                    line: line.into(),
                };
                let root = match root {
                    _ if self.provenance.setup => Root::Setup,
                    Root::Request {
                        principal,
                        input,
                        time,
                        ..
                    } => Root::Request {
                        principal,
                        input,
                        line: self.trace_len(),
                        time,
                    },
                    other => other,
                };
                let marks = vec![0; rec.requests.len()];
                self.note_writes(&rec, &origins, &marks, &Origin::Root(root));
                self.record(report, rec);
                answer
            }
        }
    }

    /// Schedules work for a controller: a reconcile now if keys are ready, a wake-up for the
    /// earliest delayed key.
    pub(super) fn kick(&mut self, controller: &str) {
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
        let (causes, trigger) = slot.causes.take(&key);
        let mut recorder = Recorder {
            api: &mut self.api,
            failures: &mut self.failures,
            now,
            requests: Vec::new(),
            events: Vec::new(),
            origins: Vec::new(),
            marks: Vec::new(),
            explained: 0,
        };
        let mut notes = Vec::new();
        let mut explanations = Vec::new();
        let result = {
            let mut ctx = Ctx {
                now,
                cache: &slot.informer,
                client: &mut recorder,
                rng: &mut self.rng,
                env: &self.env,
                events: &mut notes,
                explanations: &mut explanations,
            };
            slot.controller.reconcile(&key, &mut ctx)
        };
        let (requests, events, origins, marks) = (
            recorder.requests,
            recorder.events,
            recorder.origins,
            recorder.marks,
        );
        slot.queue.done(&key);
        let max_retries = slot.controller.max_retries();
        let limits = slot.controller.rate_limits();
        let outcome = reconcile::settle(&mut slot.queue, &key, result, max_retries, limits, now);
        // What the queue does next with the key, for the provenance of its next run.
        let again = match &outcome {
            ReconcileOutcome::AwaitChange | ReconcileOutcome::Error { retry_ms: None, .. } => None,
            ReconcileOutcome::RequeueAfter { ms } => Some((false, *ms)),
            ReconcileOutcome::Error {
                retry_ms: Some(ms), ..
            } => Some((true, *ms)),
        };
        let changes = self.absorb(events, report, false);
        let line = trace::reconcile_line(controller, &key, &requests, &outcome);
        let rec = EventRecord {
            time: now,
            seq,
            lane: controller.to_owned(),
            kind: EventKind::Reconcile {
                key: key.clone(),
                outcome,
            },
            requests,
            changes,
            line: line.into(),
        };
        // The reconcile's own line: the next one (absorbing its events may have traced a
        // feedback loop before it).
        let rline = self.trace_len();
        if let Some((backoff, ms)) = again {
            let (line, time) = (rline, now);
            let cause = if backoff {
                Cause::Backoff { line, time, ms }
            } else {
                Cause::Requeue { line, time, ms }
            };
            if let Some(slot) = self.slots.get_mut(controller) {
                slot.causes.add_after(&key, now.plus_ms(ms), now, cause);
            }
        }
        let origin = Origin::Reconcile { line: rline };
        let writes = self.note_writes(&rec, &origins, &marks, &origin);
        self.record(report, rec);
        self.provenance.add_reconcile(ReconcileRec {
            line: rline,
            controller: controller.to_owned(),
            key,
            time: now,
            step: self.steps + 1,
            causes,
            trigger,
            writes,
            explanations,
        });
        self.write_events(controller, &notes, report, &origin);
        self.kick(controller);
    }
}

/// `items` (ordered by key) but those whose keys `hidden` (ordered by key, a subset of theirs)
/// holds: one walk of both, a compare an item at most.
fn announced<'a>(
    items: impl Iterator<Item = (&'a ObjectKey, &'a Arc<Value>)> + 'a,
    hidden: impl Iterator<Item = &'a ObjectKey> + 'a,
) -> impl Iterator<Item = (&'a ObjectKey, &'a Arc<Value>)> + 'a {
    let mut hidden = hidden.peekable();
    items.filter(move |(k, _)| {
        while hidden.next_if(|h| h < k).is_some() {}
        hidden.next_if(|h| h == k).is_none()
    })
}
