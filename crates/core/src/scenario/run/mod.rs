//! Running a scenario: the engine advanced event by event, the scenario's faults and actions
//! applied at their times (after the engine events due at the same time), and each expectation
//! decided as soon as it can be: `at` once time passes it, `within` the first time it holds (or
//! at its deadline), an action's response when the action is sent.
//!
//! - this module: the runner, [`ScenarioRun`]: the plan of faults and actions by time, the loop
//!   that interleaves it with the engine's events, and [`ScenarioRun::run`];
//! - [`fire`]: sending an action's request (its `bodyFrom` copy resolved) and deciding the
//!   expectations on its answer;
//! - [`decide`]: when expectations are decided (`at`, `within` windows, `always`/`never`);
//! - [`evaluate`]: whether an expectation holds on the whole world or its object;
//! - [`results`]: what a run reports (answers, results, the audit log, problems).

mod decide;
mod evaluate;
mod fire;
mod results;

use std::sync::Arc;

use crate::json::Value;

use super::compile::{Compiled, CompiledAction, CompiledExpectation, When};
use super::format::{Scenario, Until};
use super::lesson::{LessonGuide, LessonProgress};
use super::predicates::Check;
use super::ScenarioError;
use crate::api::ObjectKey;
use crate::engine::{EventRecord, Input, RequestRecord, StepReport, StopReason, World};
use crate::time::SimTime;

pub(crate) use evaluate::evaluate_in;
use fire::response_text_for;
use results::Names;
pub use results::{ActionResponse, AuditRecord, ExpectationResult, RunOptions, RunProblem};

#[derive(Clone, Debug)]
enum Planned {
    /// The `index`th fault entry's input.
    Fault(usize, Box<Input>),
    Action(usize),
}

/// Which scenario entry sent one of the world's inputs (`causedBy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    Action(usize),
    Fault(usize),
}

/// What a run keeps of each event for its whole length: the step reports' requests and
/// object versions are dropped once absorbed, so a long run holds one line per event, not every
/// version of every object it touched.
#[derive(Clone, Debug, PartialEq)]
pub struct RunEvent {
    pub time: SimTime,
    /// Timeline lane: `user:alice`, `deployment-controller`, `kubelet/node-1`, `engine` (one
    /// copy per lane, shared by its events).
    pub lane: Arc<str>,
    /// The trace line (shared with the world's trace).
    pub line: Arc<str>,
    /// How many API requests the event sent.
    pub requests: usize,
    /// The objects its writes changed, in write order.
    pub changed: Vec<ObjectKey>,
}

impl RunEvent {
    fn new(ev: EventRecord, names: &mut Names) -> RunEvent {
        // Exactly as long as it is: collected in place, the vector would keep the room of the
        // (larger) changes it came from.
        let mut changed = Vec::with_capacity(ev.changes.len());
        changed.extend(ev.changes.into_iter().map(|c| c.key));
        RunEvent {
            time: ev.time,
            lane: names.intern(&ev.lane),
            requests: ev.requests.len(),
            changed,
            line: ev.line,
        }
    }
}

impl AuditRecord {
    fn new(time_ms: u64, r: &RequestRecord, names: &mut Names) -> AuditRecord {
        AuditRecord {
            time_ms,
            principal: names.intern(&r.principal),
            verb: r.verb,
            group: r.group.as_str().into(),
            resource: r.resource.as_str().into(),
            subresource: r.subresource,
            namespace: r.namespace.as_str().into(),
            name: r.name.as_str().into(),
            code: r.code,
            message: r.message.clone(),
        }
    }
}

/// A scenario in progress: the world plus the scenario's pending inputs and expectations. The
/// playground steps it like a world; `converge run` and `check` call [`ScenarioRun::run`].
#[derive(Clone, Debug)]
pub struct ScenarioRun {
    world: World,
    /// Faults and actions by time, then file order (faults first at equal times).
    plan: Vec<(u64, Planned)>,
    next: usize,
    actions: Vec<CompiledAction>,
    expectations: Vec<CompiledExpectation>,
    results: Vec<Option<ExpectationResult>>,
    /// For each expectation whose check (one that reads only stored objects) last held its
    /// answer without recording, the API server's resourceVersion then: it cannot answer
    /// otherwise until something is written, so the steps between writes (most deliver a watch
    /// event or reconcile without writing) do not read it again.
    unchanged_since: Vec<Option<u64>>,
    responses: Vec<Option<ActionResponse>>,
    /// The object each action read or wrote, as the client holds it afterwards.
    copies: Vec<Option<Value>>,
    events: Vec<RunEvent>,
    audit: Vec<AuditRecord>,
    /// The lanes and principals `events` and `audit` share.
    names: Names,
    problems: Vec<RunProblem>,
    processed: u64,
    feedback_loop: bool,
    stop: Option<StopReason>,
    /// The request each action sent (its `bodyFrom` copy resolved).
    sent: Vec<Option<crate::api::ApiRequest>>,
    /// The lesson, followed with the scenario's own inputs.
    lesson: Option<(LessonGuide, LessonProgress)>,
    /// Watch events not yet taken by [`ScenarioRun::take_watch_events`] (a served session's
    /// watches); empty unless someone takes them.
    watch: Vec<(crate::api::WatchEvent, std::sync::Arc<crate::json::Value>)>,
    /// Whether watch events are kept for [`ScenarioRun::take_watch_events`].
    keep_watch: bool,
    /// Whether later events and requests go into `events` and `audit`
    /// ([`ScenarioRun::keep_no_records`]).
    records: bool,
    /// For each input an action or a fault sent, its index in the world's input log and which
    /// entry it was, in time order (what `causedBy` traces roots to).
    sources: Vec<(usize, Source)>,
}

impl ScenarioRun {
    /// The world at t=0 with everything scheduled.
    pub fn new(scenario: &Scenario, seed: Option<u64>) -> Result<ScenarioRun, ScenarioError> {
        let compiled = super::compile::compile_with_seed(scenario, seed.unwrap_or(scenario.seed))?;
        Ok(ScenarioRun::from_compiled(compiled))
    }

    fn from_compiled(c: Compiled) -> ScenarioRun {
        let Compiled {
            world,
            setup,
            actions,
            faults,
            expectations,
            lesson,
        } = c;
        let mut plan: Vec<(u64, usize, Planned)> = faults
            .into_iter()
            .map(|(t, i, input)| (t, i, Planned::Fault(i, Box::new(input))))
            .collect();
        let fault_count = plan.len();
        plan.extend(
            actions
                .iter()
                .map(|a| (a.at_ms, fault_count + a.index, Planned::Action(a.index))),
        );
        plan.sort_by_key(|(t, order, _)| (*t, *order));
        let mut names = Names::default();
        let audit = world
            .api()
            .audit()
            .map(|e| AuditRecord {
                time_ms: e.time.as_ms(),
                principal: names.intern(&e.principal),
                verb: e.verb,
                group: e.gr.group.clone(),
                resource: e.gr.resource.clone(),
                subresource: e.subresource,
                namespace: e.namespace.as_str().into(),
                name: e.name.as_str().into(),
                code: e.code,
                message: e.message.clone(),
            })
            .collect();
        let mut run = ScenarioRun {
            world,
            plan: plan.into_iter().map(|(t, _, p)| (t, p)).collect(),
            next: 0,
            results: vec![None; expectations.len()],
            unchanged_since: vec![None; expectations.len()],
            responses: vec![None; actions.len()],
            copies: vec![None; actions.len()],
            actions,
            expectations,
            events: Vec::new(),
            audit,
            names,
            problems: Vec::new(),
            processed: 0,
            feedback_loop: false,
            stop: None,
            sent: Vec::new(),
            lesson: None,
            watch: Vec::new(),
            keep_watch: false,
            records: true,
            sources: Vec::new(),
        };
        run.sent = vec![None; run.actions.len()];
        for report in setup {
            for ev in report.events {
                let ev = RunEvent::new(ev, &mut run.names);
                run.events.push(ev);
            }
        }
        run.lesson = lesson.map(|g| {
            let mut progress = LessonProgress::start(&run.world, 0);
            progress.advance(&g, &run.world);
            (g, progress)
        });
        run
    }

    pub fn world(&self) -> &World {
        &self.world
    }

    /// Swaps in another world: the checkpoint tests' read-back copy of the run's own.
    #[cfg(test)]
    pub(crate) fn replace_world(&mut self, world: World) {
        self.world = world;
    }

    pub fn now_ms(&self) -> u64 {
        self.world.now().as_ms()
    }

    /// The object a target names now (`deployments/default/web`, `pods/default/{app=web}`),
    /// as expectations resolve targets; the error says what is wrong with it.
    pub fn resolve_key(&self, target: &str) -> Result<ObjectKey, String> {
        let t = crate::scenario::predicates::resolve_target(&self.world, target)?;
        if t.subresource.is_some() {
            return Err(format!(
                "the target {target:?} names a subresource; name the object"
            ));
        }
        match (&t.selection, t.key()) {
            (Some(sel), _) => sel
                .pick(&self.world)
                .ok_or_else(|| format!("no object matches the target {target:?}")),
            (None, Some(key)) => Ok(key),
            (None, None) => Err(format!("the target {target:?} names no object")),
        }
    }

    /// Every event since t=0 (the scenario's objects, faults, actions and the engine's work).
    pub fn events(&self) -> &[RunEvent] {
        &self.events
    }

    /// Every API request since the cluster was set up.
    pub fn audit(&self) -> &[AuditRecord] {
        &self.audit
    }

    pub fn problems(&self) -> &[RunProblem] {
        &self.problems
    }

    pub fn responses(&self) -> impl Iterator<Item = &ActionResponse> {
        self.responses.iter().flatten()
    }

    /// Results in file order; expectations not decided yet are absent.
    pub fn decided(&self) -> impl Iterator<Item = &ExpectationResult> {
        self.results.iter().flatten()
    }

    pub fn stop_reason(&self) -> Option<&StopReason> {
        self.stop.as_ref()
    }

    /// Every expectation's result after [`ScenarioRun::run`] (undecided ones as failures),
    /// then the lesson's: whether the scenario's own inputs take a reader through every step.
    pub fn results(&self) -> Vec<ExpectationResult> {
        let mut all: Vec<ExpectationResult> = self.results.iter().flatten().cloned().collect();
        if let Some(r) = self.lesson_result() {
            all.push(r);
        }
        all
    }

    /// The lesson and how far the scenario's own inputs have taken it.
    pub fn lesson(&self) -> Option<(&LessonGuide, &LessonProgress)> {
        self.lesson.as_ref().map(|(g, p)| (g, p))
    }

    /// The request action `i` sent, if it was sent.
    pub fn sent_request(&self, i: usize) -> Option<&crate::api::ApiRequest> {
        self.sent.get(i).and_then(Option::as_ref)
    }

    fn lesson_result(&self) -> Option<ExpectationResult> {
        let (guide, progress) = self.lesson.as_ref()?;
        let total = guide.steps.len();
        let passed = progress.finished(guide);
        let got = match guide.steps.get(progress.step) {
            None => format!("all {total} steps"),
            Some(step) => format!(
                "stuck at step {} of {total}, waiting for {}",
                progress.step + 1,
                step.waiting_for().join(" and ")
            ),
        };
        Some(ExpectationResult {
            index: self.expectations.len(),
            description: format!(
                "lesson {:?}: the scenario's own inputs complete all {total} steps",
                guide.title
            ),
            passed,
            time_ms: if passed {
                progress.reached_ms.last().copied().unwrap_or(0)
            } else {
                self.now_ms()
            },
            expected: format!("all {total} steps"),
            got,
        })
    }

    fn next_plan_ms(&self) -> Option<u64> {
        self.plan.get(self.next).map(|(t, _)| *t)
    }

    /// Processes one thing: the next engine event, or the next fault or action when it is due
    /// first. Returns false when nothing at all is left.
    pub fn step(&mut self) -> bool {
        let next_plan = self.next_plan_ms();
        let next_event = self.world.next_event_time().map(SimTime::as_ms);
        let engine_first = match (next_event, next_plan) {
            (None, None) => return false,
            (Some(e), Some(p)) => e <= p,
            (Some(_), None) => true,
            (None, Some(_)) => false,
        };
        let t = if engine_first { next_event } else { next_plan }.unwrap_or(0);
        self.settle_before(t);
        if engine_first {
            let report = self.world.step();
            self.processed += 1;
            self.absorb(report);
        } else {
            let now = self.now_ms();
            if t > now {
                let report = self.world.apply(Input::Advance { ms: t - now });
                self.absorb(report);
            }
            let (_, item) = self.plan[self.next].clone();
            self.next += 1;
            match item {
                Planned::Fault(i, input) => {
                    self.sources
                        .push((self.world.inputs().len(), Source::Fault(i)));
                    let report = self.world.apply(*input);
                    self.absorb(report);
                }
                Planned::Action(i) => self.fire(i),
            }
        }
        self.check_windows();
        if let Some((guide, progress)) = &mut self.lesson {
            progress.advance(guide, &self.world);
        }
        true
    }

    /// From now on keeps no per-event records: the world's trace lines are counted, not kept
    /// ([`World::count_trace_only`]), and `events` and `audit` stop growing
    /// ([`super::RunOptions::records`]). Unless an expectation counts requests or a lesson
    /// follows them, the API server's audit log goes too ([`World::keep_no_audit`]). The run
    /// goes on exactly as before.
    pub fn keep_no_records(&mut self) {
        self.records = false;
        self.world.count_trace_only();
        let reads_audit = self
            .expectations
            .iter()
            .any(|e| matches!(e.check, Check::Requests { .. }));
        if !reads_audit && self.lesson.is_none() {
            self.world.keep_no_audit();
        }
    }

    /// Keeps the watch events of every later step for [`Self::take_watch_events`].
    pub fn keep_watch_events(&mut self) {
        self.keep_watch = true;
    }

    /// The watch events since the last call (see [`Self::keep_watch_events`]).
    pub fn take_watch_events(
        &mut self,
    ) -> Vec<(crate::api::WatchEvent, std::sync::Arc<crate::json::Value>)> {
        std::mem::take(&mut self.watch)
    }

    /// A request from outside the scenario (a client of `converge serve`), sent now: part of
    /// the run's events and audit like an action's, and answered.
    #[allow(
        clippy::result_large_err,
        reason = "ApiResult is the API server's answer (metav1.Status), passed through as is"
    )]
    pub fn request(&mut self, request: crate::api::ApiRequest) -> crate::api::ApiResult {
        let (answer, report) = self.world.request(request);
        self.absorb(report);
        self.check_windows();
        if let Some((guide, progress)) = &mut self.lesson {
            progress.advance(guide, &self.world);
        }
        answer
    }

    fn absorb(&mut self, mut report: StepReport) {
        if self.keep_watch {
            self.watch.append(&mut report.watch);
        }
        if !report.feedback_loops.is_empty() {
            self.feedback_loop = true;
        }
        if !self.records {
            return;
        }
        for ev in report.events {
            for r in &ev.requests {
                let record = AuditRecord::new(ev.time.as_ms(), r, &mut self.names);
                self.audit.push(record);
            }
            let ev = RunEvent::new(ev, &mut self.names);
            self.events.push(ev);
        }
    }

    fn pending(&self) -> bool {
        self.next < self.plan.len() || self.results.iter().any(Option::is_none)
    }

    /// The latest time the scenario names (action, fault or expectation).
    fn horizon_ms(&self) -> u64 {
        let plan = self.plan.last().map_or(0, |(t, _)| *t);
        let exp = self
            .expectations
            .iter()
            .map(|e| match e.when {
                When::At(t) => t,
                When::Within { deadline, .. } => deadline,
                When::OnAction => 0,
            })
            .max()
            .unwrap_or(0);
        plan.max(exp)
    }

    /// Runs to the end: `until` a time, or until converged (every action sent, every
    /// expectation decided, the world converged), within the options' bounds. Expectations still
    /// undecided at the end fail with what was last observed.
    pub fn run(&mut self, until: Until, options: &RunOptions) -> StopReason {
        let stop = match until {
            Until::Time(d) => {
                let end = d.ms();
                let mut bounded = false;
                loop {
                    let next = [
                        self.next_plan_ms(),
                        self.world.next_event_time().map(SimTime::as_ms),
                    ]
                    .into_iter()
                    .flatten()
                    .min();
                    match next {
                        Some(t) if t <= end => {
                            if self.processed >= options.max_events {
                                bounded = true;
                                break;
                            }
                            self.step();
                        }
                        _ => break,
                    }
                }
                if bounded {
                    StopReason::Bound
                } else {
                    self.settle_before(end.saturating_add(1));
                    let now = self.now_ms();
                    if end > now {
                        // Nothing is due before `end` any more: this only moves the clock.
                        let report = self.world.apply(Input::Advance { ms: end - now });
                        self.absorb(report);
                    }
                    StopReason::Done
                }
            }
            Until::Converged => {
                let cap = self.horizon_ms().saturating_add(options.max_extra_ms);
                loop {
                    // Expectations due before the next event are decided now, so a quiet world
                    // is not run on to its next periodic resync just to pass their times.
                    if let Some(t) = [
                        self.next_plan_ms(),
                        self.world.next_event_time().map(SimTime::as_ms),
                    ]
                    .into_iter()
                    .flatten()
                    .min()
                    {
                        self.settle_before(t);
                    }
                    if !self.pending() && (self.world.is_converged() || self.feedback_loop) {
                        // The clock moves on to the latest time an expectation looked at.
                        let horizon = self
                            .results
                            .iter()
                            .flatten()
                            .map(|r| r.time_ms)
                            .max()
                            .unwrap_or(0);
                        let now = self.now_ms();
                        let quiet = self
                            .world
                            .next_event_time()
                            .is_none_or(|t| t.as_ms() > horizon);
                        if horizon > now && quiet {
                            let report = self.world.apply(Input::Advance { ms: horizon - now });
                            self.absorb(report);
                        }
                        break if self.feedback_loop {
                            StopReason::FeedbackLoop
                        } else {
                            StopReason::Converged
                        };
                    }
                    if self.processed >= options.max_events {
                        break StopReason::Bound;
                    }
                    let next = [
                        self.next_plan_ms(),
                        self.world.next_event_time().map(SimTime::as_ms),
                    ]
                    .into_iter()
                    .flatten()
                    .min();
                    match next {
                        Some(t) if t > cap => break StopReason::Bound,
                        Some(_) => {
                            self.step();
                        }
                        None => {
                            // Nothing will happen any more: time passes to the last expectation.
                            let horizon = self.horizon_ms();
                            self.settle_before(horizon.saturating_add(1));
                            let now = self.now_ms();
                            if horizon > now {
                                let report = self.world.apply(Input::Advance { ms: horizon - now });
                                self.absorb(report);
                            }
                            break StopReason::Idle;
                        }
                    }
                }
            }
        };
        let now = self.now_ms();
        self.settle_before(now.saturating_add(1));
        for k in 0..self.expectations.len() {
            if self.results[k].is_none() {
                let e = &self.expectations[k];
                let (expected, got) = match e.check {
                    Check::Response { action, .. } => (
                        response_text_for(&e.check),
                        format!(
                            "no response: action {} was not sent",
                            self.actions[action].label
                        ),
                    ),
                    _ => {
                        let (_, expected, got) =
                            evaluate_in(e, &self.world, self.world.now(), &self.sources);
                        (expected, format!("{got} when the run stopped"))
                    }
                };
                self.results[k] = Some(ExpectationResult {
                    index: k,
                    description: e.description.clone(),
                    passed: false,
                    time_ms: now,
                    expected,
                    got,
                });
            }
        }
        self.stop = Some(stop.clone());
        stop
    }
}
