//! Running a scenario: the engine advanced event by event, the scenario's faults and actions
//! applied at their times (after the engine events due at the same time), and each expectation
//! decided as soon as it can be: `at` once time passes it, `within` the first time it holds (or
//! at its deadline), an action's response when the action is sent.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::compile::{Check, Compiled, CompiledAction, CompiledExpectation, Mode, When};
use super::format::{Scenario, Until};
use super::lesson::{LessonGuide, LessonProgress};
use super::ScenarioError;
use crate::api::RequestBody;
use crate::engine::{EventRecord, Input, StepReport, StopReason, World};
use crate::kstatus;
use crate::time::SimTime;

/// How far to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Overrides the scenario's `seed`.
    pub seed: Option<u64>,
    /// Overrides the scenario's `until` (default `converged`).
    pub until: Option<Until>,
    /// Safety bound on processed engine events.
    pub max_events: u64,
    /// With `until: converged`, give up this long after the last scheduled action, fault or
    /// expectation time.
    pub max_extra_ms: u64,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            seed: None,
            until: None,
            max_events: 500_000,
            max_extra_ms: 600_000,
        }
    }
}

/// The answer an action got.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionResponse {
    pub index: usize,
    pub id: Option<String>,
    pub time_ms: u64,
    pub code: u16,
    pub message: String,
}

/// A decided (or undecidable) expectation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectationResult {
    pub index: usize,
    /// `deployments/default/web kstatus is Current within 60s`.
    pub description: String,
    pub passed: bool,
    /// When it was decided (passed: the first time it held).
    pub time_ms: u64,
    pub expected: String,
    /// What was observed at `time_ms`.
    pub got: String,
}

impl ExpectationResult {
    /// `deployments/default/web kstatus is Current within 60s (at t=23.400s)` or
    /// `...: expected Current, got InProgress (at t=60.000s)`.
    pub fn line(&self) -> String {
        let t = SimTime::from_ms(self.time_ms);
        if self.passed {
            format!("{} (at {t})", self.description)
        } else {
            format!(
                "{}: expected {}, got {} (at {t})",
                self.description, self.expected, self.got
            )
        }
    }
}

/// One API request as a client sent it and the answer (the audit log, with requests that an
/// injected fault refused before they reached the server).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    pub time_ms: u64,
    pub principal: String,
    pub verb: String,
    pub group: String,
    pub resource: String,
    pub subresource: Option<String>,
    pub namespace: String,
    pub name: String,
    pub code: u16,
    pub message: String,
}

/// Something that went wrong while running (not an expectation): a missing action target, a
/// `bodyFrom` with nothing to copy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunProblem {
    /// `actions[1]`.
    pub path: String,
    pub time_ms: u64,
    pub message: String,
}

impl std::fmt::Display for RunProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} (at {})",
            self.path,
            self.message,
            SimTime::from_ms(self.time_ms)
        )
    }
}

#[derive(Clone, Debug)]
enum Planned {
    Fault(Box<Input>),
    Action(usize),
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
    responses: Vec<Option<ActionResponse>>,
    /// The object each action read or wrote, as the client holds it afterwards.
    copies: Vec<Option<Value>>,
    events: Vec<EventRecord>,
    audit: Vec<AuditRecord>,
    problems: Vec<RunProblem>,
    processed: u64,
    feedback_loop: bool,
    stop: Option<StopReason>,
    /// The request each action sent (its `bodyFrom` copy resolved).
    sent: Vec<Option<crate::api::ApiRequest>>,
    /// The lesson, followed with the scenario's own inputs.
    lesson: Option<(LessonGuide, LessonProgress)>,
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
            .map(|(t, i, input)| (t, i, Planned::Fault(Box::new(input))))
            .collect();
        let fault_count = plan.len();
        plan.extend(
            actions
                .iter()
                .map(|a| (a.at_ms, fault_count + a.index, Planned::Action(a.index))),
        );
        plan.sort_by_key(|(t, order, _)| (*t, *order));
        let audit = world
            .api()
            .audit()
            .map(|e| AuditRecord {
                time_ms: e.time.as_ms(),
                principal: e.principal.clone(),
                verb: e.verb.as_str().to_owned(),
                group: e.gr.group.clone(),
                resource: e.gr.resource.clone(),
                subresource: e.subresource.map(|_| "status".to_owned()),
                namespace: e.namespace.clone(),
                name: e.name.clone(),
                code: e.code,
                message: e.message.clone(),
            })
            .collect();
        let mut run = ScenarioRun {
            world,
            plan: plan.into_iter().map(|(t, _, p)| (t, p)).collect(),
            next: 0,
            results: vec![None; expectations.len()],
            responses: vec![None; actions.len()],
            copies: vec![None; actions.len()],
            actions,
            expectations,
            events: Vec::new(),
            audit,
            problems: Vec::new(),
            processed: 0,
            feedback_loop: false,
            stop: None,
            sent: Vec::new(),
            lesson: None,
        };
        run.sent = vec![None; run.actions.len()];
        for report in setup {
            run.events.extend(report.events);
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

    pub fn now_ms(&self) -> u64 {
        self.world.now().as_ms()
    }

    /// Every event since t=0 (the scenario's objects, faults, actions and the engine's work).
    pub fn events(&self) -> &[EventRecord] {
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
                Planned::Fault(input) => {
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

    fn absorb(&mut self, report: StepReport) {
        if !report.feedback_loops.is_empty() {
            self.feedback_loop = true;
        }
        for ev in report.events {
            for r in &ev.requests {
                self.audit.push(AuditRecord {
                    time_ms: ev.time.as_ms(),
                    principal: r.principal.clone(),
                    verb: r.verb.as_str().to_owned(),
                    group: r.group.clone(),
                    resource: r.resource.clone(),
                    subresource: r.subresource.map(|_| "status".to_owned()),
                    namespace: r.namespace.clone(),
                    name: r.name.clone(),
                    code: r.code,
                    message: r.message.clone(),
                });
            }
            self.events.push(ev);
        }
    }

    fn fire(&mut self, i: usize) {
        let action = self.actions[i].clone();
        let now = self.now_ms();
        let mut request = action.request.clone();
        if let Some(j) = action.body_from {
            let Some(mut copy) = self.copies[j].clone() else {
                self.problems.push(RunProblem {
                    path: format!("actions[{i}].bodyFrom"),
                    time_ms: now,
                    message: format!(
                        "action {} left no copy of the object to start from",
                        self.actions[j].label
                    ),
                });
                return;
            };
            if let Some(edit) = &action.edit {
                json_patch::merge(&mut copy, edit);
            }
            request.body = RequestBody::Object(copy);
        }
        self.sent[i] = Some(request.clone());
        let report = self.world.apply(Input::Request { request });
        let (code, message) = report
            .requests()
            .next()
            .map(|r| (r.code, r.message.clone()))
            .unwrap_or((0, String::new()));
        self.absorb(report);
        let id = action.id.clone();
        if code == 404 && !self.has_response_expectation(i) {
            self.problems.push(RunProblem {
                path: format!("actions[{i}]"),
                time_ms: now,
                message: format!("the target of {} does not exist: {message}", action.label),
            });
        }
        if code < 400 {
            if let Some(key) = &action.key {
                self.copies[i] = self.world.api().get(key).cloned();
            }
        }
        self.responses[i] = Some(ActionResponse {
            index: i,
            id,
            time_ms: now,
            code,
            message: message.clone(),
        });
        for (k, e) in self.expectations.iter().enumerate() {
            if let Check::Response {
                action,
                code: want_code,
                message: want_message,
            } = &e.check
            {
                if *action != i || self.results[k].is_some() {
                    continue;
                }
                let passed = want_code.is_none_or(|c| c == code)
                    && want_message.as_ref().is_none_or(|m| *m == message);
                let expected = response_text(*want_code, want_message.as_deref());
                let got = response_text(
                    want_code.map(|_| code),
                    want_message.as_ref().map(|_| message.as_str()),
                );
                self.results[k] = Some(ExpectationResult {
                    index: k,
                    description: e.description.clone(),
                    passed,
                    time_ms: now,
                    expected,
                    got,
                });
            }
        }
    }

    fn has_response_expectation(&self, i: usize) -> bool {
        self.expectations
            .iter()
            .any(|e| matches!(e.check, Check::Response { action, .. } if action == i))
    }

    /// Decides what time `t` (the next thing to happen) moves past: `at` expectations before
    /// `t`, `within` windows that open or close before `t`. The world does not change between
    /// now and `t`, so its state is the state at those times.
    fn settle_before(&mut self, t: u64) {
        for k in 0..self.expectations.len() {
            if self.results[k].is_some() {
                continue;
            }
            match self.expectations[k].when {
                When::At(at) if at < t => self.decide(k, at, true),
                When::Within { from, deadline } => {
                    if from < t && from >= self.now_ms() {
                        self.decide(k, from, false);
                    }
                    if self.results[k].is_none() && deadline < t {
                        self.decide(k, deadline, true);
                    }
                }
                _ => {}
            }
        }
    }

    /// Checks open `within` windows after the world changed.
    fn check_windows(&mut self) {
        let now = self.now_ms();
        for k in 0..self.expectations.len() {
            if self.results[k].is_some() {
                continue;
            }
            if let When::Within { from, deadline } = self.expectations[k].when {
                if from <= now && now <= deadline {
                    self.decide(k, now, false);
                }
            }
        }
    }

    /// Evaluates expectation `k` at `time_ms`; records it if it holds, or if `final_` (its last
    /// chance).
    fn decide(&mut self, k: usize, time_ms: u64, final_: bool) {
        let e = &self.expectations[k];
        let (holds, expected, got) = evaluate_in(e, &self.world, SimTime::from_ms(time_ms));
        // `always` fails at the first moment the check does not hold, `never` at the first it
        // does; both pass when their window closes.
        let (record, passed, expected) = match e.mode {
            Mode::Eventually => (holds || final_, holds, expected),
            Mode::Always => (!holds || final_, holds, format!("always {expected}")),
            Mode::Never => (holds || final_, !holds, format!("never {expected}")),
        };
        if record {
            self.results[k] = Some(ExpectationResult {
                index: k,
                description: e.description.clone(),
                passed,
                time_ms,
                expected,
                got,
            });
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
                        let (_, expected, got) = evaluate_in(e, &self.world, self.world.now());
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

fn response_text(code: Option<u16>, message: Option<&str>) -> String {
    match (code, message) {
        (Some(c), Some(m)) => format!("{c} {m:?}"),
        (Some(c), None) => c.to_string(),
        (None, Some(m)) => format!("{m:?}"),
        (None, None) => String::new(),
    }
}

fn response_text_for(c: &Check) -> String {
    match c {
        Check::Response { code, message, .. } => response_text(*code, message.as_deref()),
        _ => String::new(),
    }
}

/// Whether an expectation's check holds in `world` at `now`: on its object, or, for a count or
/// requests, on the whole world (requests in a window with `after` are counted from its start).
pub(crate) fn evaluate_in(
    e: &CompiledExpectation,
    world: &World,
    now: SimTime,
) -> (bool, String, String) {
    match &e.check {
        Check::Count {
            gr,
            namespace,
            selector,
            owner,
            bounds,
        } => {
            let owner_uid = owner.as_ref().map(|k| {
                world
                    .api()
                    .get(k)
                    .and_then(|o| o.pointer("/metadata/uid"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
            let n = match owner_uid {
                Some(None) => 0,
                _ => world
                    .objects()
                    .filter(|(k, o)| {
                        k.gr == *gr
                            && (namespace.is_empty() || k.namespace == *namespace)
                            && selector.as_ref().is_none_or(|(s, _)| s.matches_object(o))
                            && owner_uid.as_ref().is_none_or(|u| owned_by(o, u.as_deref()))
                    })
                    .count(),
            };
            (bounds.holds(n as f64), bounds.text(), n.to_string())
        }
        Check::Requests { request, bounds } => {
            let from = match e.when {
                When::Within { from, .. } => from,
                _ => 0,
            };
            let n = world
                .api()
                .audit()
                .filter(|a| (from..=now.as_ms()).contains(&a.time.as_ms()) && request.matches(a))
                .count();
            (bounds.holds(n as f64), bounds.text(), n.to_string())
        }
        check => evaluate(check, e.key.as_ref().and_then(|k| world.api().get(k)), now),
    }
}

/// Whether `obj` names `uid` among its ownerReferences.
fn owned_by(obj: &Value, uid: Option<&str>) -> bool {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter()
                .any(|r| r.get("uid").and_then(Value::as_str) == uid)
        })
}

/// Whether a check holds on an object (None: absent) at a time, with the expected and observed
/// values as text.
pub(crate) fn evaluate(check: &Check, obj: Option<&Value>, now: SimTime) -> (bool, String, String) {
    match check {
        Check::Exists(want) => {
            let has = obj.is_some();
            let text = |b: bool| if b { "present" } else { "absent" }.to_owned();
            (has == *want, text(*want), text(has))
        }
        Check::Kstatus { status, message } => {
            let expected = match message {
                Some(m) => format!("{} {m:?}", status.as_str()),
                None => status.as_str().to_owned(),
            };
            let Some(obj) = obj else {
                return (false, expected, "no such object".into());
            };
            match kstatus::compute_at(obj, now) {
                Ok(r) => {
                    let ok = r.status.as_str() == status.as_str()
                        && message.as_ref().is_none_or(|m| *m == r.message);
                    let got = if message.is_some() || !ok {
                        format!("{} {:?}", r.status.as_str(), r.message)
                    } else {
                        r.status.as_str().to_owned()
                    };
                    (ok, expected, got)
                }
                Err(e) => (false, expected, format!("no verdict: {e}")),
            }
        }
        Check::Field { path, equals } => {
            let expected = equals.to_string();
            let Some(obj) = obj else {
                return (false, expected, "no such object".into());
            };
            // `equals: null` means absent or null, as kube's omitempty fields read.
            match path.get(obj) {
                Some(v) => (v == equals, expected, v.to_string()),
                None if equals.is_null() => (true, expected, "absent".into()),
                None => (false, expected, format!("no field {}", path.text())),
            }
        }
        Check::Condition {
            type_,
            status,
            reason,
            message,
        } => {
            let mut want = Vec::new();
            if let Some(s) = status {
                want.push(format!("status {s}"));
            }
            if let Some(r) = reason {
                want.push(format!("reason {r}"));
            }
            if let Some(m) = message {
                want.push(format!("message {m:?}"));
            }
            let expected = if want.is_empty() {
                format!("condition {type_}")
            } else {
                want.join(", ")
            };
            let Some(obj) = obj else {
                return (false, expected, "no such object".into());
            };
            let found = obj
                .get("status")
                .and_then(|s| s.get("conditions"))
                .and_then(Value::as_array)
                .and_then(|cs| {
                    cs.iter()
                        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_.as_str()))
                });
            let Some(c) = found else {
                return (false, expected, format!("no {type_} condition"));
            };
            let field = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            let ok = status.as_ref().is_none_or(|s| *s == field("status"))
                && reason.as_ref().is_none_or(|r| *r == field("reason"))
                && message.as_ref().is_none_or(|m| *m == field("message"));
            let mut got = Vec::new();
            if status.is_some() || want.is_empty() {
                got.push(format!("status {}", field("status")));
            }
            if reason.is_some() {
                got.push(format!("reason {}", field("reason")));
            }
            if message.is_some() {
                got.push(format!("message {:?}", field("message")));
            }
            (ok, expected, got.join(", "))
        }
        Check::Compare { path, bounds } => {
            let expected = bounds.text();
            let Some(obj) = obj else {
                return (false, expected, "no such object".into());
            };
            match path.get(obj) {
                Some(v) => match v.as_f64() {
                    Some(n) => (bounds.holds(n), expected, v.to_string()),
                    None => (false, expected, format!("{v}, not a number")),
                },
                None => (false, expected, format!("no field {}", path.text())),
            }
        }
        Check::Matches { path, pattern } => {
            let expected = format!("matches {:?}", pattern.0.as_str());
            let Some(obj) = obj else {
                return (false, expected, "no such object".into());
            };
            match path.get(obj) {
                Some(v) => {
                    let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                    (pattern.0.is_match(&text), expected, format!("{text:?}"))
                }
                None => (false, expected, format!("no field {}", path.text())),
            }
        }
        // Counted on the whole world by `evaluate_in`; a lesson predicate is never one.
        Check::Count { .. } | Check::Requests { .. } | Check::Response { .. } => {
            (false, String::new(), String::new())
        }
    }
}
