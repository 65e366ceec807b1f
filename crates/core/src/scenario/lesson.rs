//! Lessons: a scenario's narrated steps, each done when its state predicates hold, evaluated
//! against a [`World`]. `converge check` follows a lesson with the scenario's own inputs (so a
//! lesson that no longer completes fails CI) and the playground follows it with the reader's.

use super::format::{Expectation, Lesson, Predicate};
use super::predicates::{
    check_text, compile_request, evaluate, object_check, resolve_target, Check, RequestCheck,
    Selection,
};
use super::ScenarioError;
use crate::api::ObjectKey;
use crate::engine::World;

fn err(path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path, message)
}

#[derive(Clone, Debug)]
enum Holds {
    Object {
        key: ObjectKey,
        check: Box<Check>,
    },
    /// On the object a `{...}` target picks at the moment the step is checked.
    Selected {
        select: Selection,
        check: Box<Check>,
    },
    Request(RequestCheck),
}

/// One compiled predicate and how it reads (`deployments/default/web status.observedGeneration
/// equals 2`).
#[derive(Clone, Debug)]
struct CompiledPredicate {
    check: Holds,
    description: String,
}

/// One step of a lesson, resolved against the scenario's cluster.
#[derive(Clone, Debug)]
pub struct GuideStep {
    pub text: String,
    pub watch: String,
    /// The object the playground selects for this step.
    pub focus: Option<ObjectKey>,
    predicates: Vec<CompiledPredicate>,
}

impl GuideStep {
    /// What completes the step, one line per predicate.
    pub fn waiting_for(&self) -> Vec<String> {
        self.predicates
            .iter()
            .map(|p| p.description.clone())
            .collect()
    }
}

/// A lesson ready to follow: its steps with their predicates resolved.
#[derive(Clone, Debug)]
pub struct LessonGuide {
    pub title: String,
    pub summary: String,
    pub steps: Vec<GuideStep>,
    pub question: String,
    pub choices: Vec<String>,
    answer: usize,
    pub explanation: String,
}

impl LessonGuide {
    pub(crate) fn compile(world: &World, lesson: &Lesson) -> Result<LessonGuide, ScenarioError> {
        if lesson.title.trim().is_empty() {
            return Err(err("lesson.title", "must not be empty"));
        }
        if lesson.steps.is_empty() {
            return Err(err("lesson.steps", "a lesson needs at least one step"));
        }
        let mut steps = Vec::new();
        for (i, step) in lesson.steps.iter().enumerate() {
            let p = format!("lesson.steps[{i}]");
            if step.text.trim().is_empty() {
                return Err(err(format!("{p}.text"), "must not be empty"));
            }
            if step.until.is_empty() {
                return Err(err(
                    format!("{p}.until"),
                    "needs at least one predicate: the state that completes the step",
                ));
            }
            let mut predicates = Vec::new();
            for (j, pred) in step.until.iter().enumerate() {
                predicates.push(compile_predicate(world, pred, &format!("{p}.until[{j}]"))?);
            }
            let focus = match &step.focus {
                Some(f) => {
                    let t = resolve_target(world, f).map_err(|m| err(format!("{p}.focus"), m))?;
                    let Some(key) = t.key().filter(|_| t.subresource.is_none()) else {
                        return Err(err(
                            format!("{p}.focus"),
                            "names an object: resource/namespace/name",
                        ));
                    };
                    Some(key)
                }
                None => predicates.iter().find_map(|p| match &p.check {
                    Holds::Object { key, .. } => Some(key.clone()),
                    Holds::Selected { .. } => None,
                    Holds::Request(r) if !r.name.is_empty() => {
                        Some(ObjectKey::new(r.gr.clone(), &r.namespace, &r.name))
                    }
                    Holds::Request(_) => None,
                }),
            };
            steps.push(GuideStep {
                text: step.text.clone(),
                watch: step.watch.clone(),
                focus,
                predicates,
            });
        }
        let c = &lesson.check;
        if c.question.trim().is_empty() {
            return Err(err("lesson.check.question", "must not be empty"));
        }
        if c.choices.len() < 2 || c.choices.iter().any(|x| x.trim().is_empty()) {
            return Err(err(
                "lesson.check.choices",
                "give at least two non-empty choices",
            ));
        }
        if c.answer >= c.choices.len() {
            return Err(err(
                "lesson.check.answer",
                format!(
                    "{} is not a choice: answers count from 0 and there are {} choices",
                    c.answer,
                    c.choices.len()
                ),
            ));
        }
        Ok(LessonGuide {
            title: lesson.title.clone(),
            summary: lesson.summary.clone(),
            steps,
            question: c.question.clone(),
            choices: c.choices.clone(),
            answer: c.answer,
            explanation: c.explanation.clone(),
        })
    }

    /// Whether `choice` (from 0) answers the closing question.
    pub fn is_right(&self, choice: usize) -> bool {
        choice == self.answer
    }

    /// Whether every predicate of step `i` holds in `world`, counting requests in the audit log
    /// from index `audit_from` on.
    fn holds(&self, i: usize, world: &World, audit_from: usize) -> bool {
        let Some(step) = self.steps.get(i) else {
            return false;
        };
        step.predicates.iter().all(|p| match &p.check {
            Holds::Object { key, check } => evaluate(check, world.api().get(key), world.now()).0,
            Holds::Selected { select, check } => {
                let key = select.pick(world);
                evaluate(
                    check,
                    key.as_ref().and_then(|k| world.api().get(k)),
                    world.now(),
                )
                .0
            }
            Holds::Request(r) => world.api().audit_since(audit_from).any(|e| r.matches(e)),
        })
    }
}

fn compile_predicate(
    world: &World,
    pred: &Predicate,
    p: &str,
) -> Result<CompiledPredicate, ScenarioError> {
    if let Some(r) = &pred.request {
        for (f, set) in [
            ("target", pred.target.is_some()),
            ("kstatus", pred.kstatus.is_some()),
            ("field", pred.field.is_some()),
            ("equals", pred.equals.is_some()),
            ("condition", pred.condition.is_some()),
            ("status", pred.status.is_some()),
            ("reason", pred.reason.is_some()),
            ("message", pred.message.is_some()),
            ("exists", pred.exists.is_some()),
        ] {
            if set {
                return Err(err(
                    format!("{p}.{f}"),
                    "is not used with request (a request predicate has its own target)",
                ));
            }
        }
        let (request, description) = compile_request(world, r, &format!("{p}.request"))?;
        return Ok(CompiledPredicate {
            check: Holds::Request(request),
            description,
        });
    }
    let Some(target) = &pred.target else {
        return Err(err(p, "names neither a target (an object) nor a request"));
    };
    let t = resolve_target(world, target).map_err(|m| err(format!("{p}.target"), m))?;
    if t.subresource.is_some() {
        return Err(err(
            format!("{p}.target"),
            format!(
                "predicates look at the whole object: drop {}",
                t.subresource_path()
            ),
        ));
    }
    if !t.names_one() {
        return Err(err(format!("{p}.target"), "needs an object name"));
    }
    let as_expectation = Expectation {
        target: pred.target.clone(),
        kstatus: pred.kstatus,
        field: pred.field.clone(),
        equals: pred.equals.clone(),
        condition: pred.condition.clone(),
        status: pred.status.clone(),
        reason: pred.reason.clone(),
        message: pred.message.clone(),
        exists: pred.exists,
        ..Expectation::default()
    };
    let check = object_check(&as_expectation, p)?;
    Ok(CompiledPredicate {
        description: format!("{target} {}", check_text(&check)),
        check: match (t.key(), t.selection) {
            (Some(key), _) => Holds::Object {
                key,
                check: Box::new(check),
            },
            (None, Some(select)) => Holds::Selected {
                select,
                check: Box::new(check),
            },
            (None, None) => return Err(err(format!("{p}.target"), "needs an object name")),
        },
    })
}

/// How far a reader (or a run) has come through a lesson.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LessonProgress {
    /// The current step (equal to the number of steps when every step is done).
    pub step: usize,
    /// When each finished step was reached, in simulated milliseconds.
    pub reached_ms: Vec<u64>,
    /// The audit log index where the current step began (request predicates look from here).
    audit_from: usize,
    /// The audit log length at the previous evaluation.
    audit_seen: usize,
}

impl LessonProgress {
    /// Progress at `step` of a lesson over `world` (0: the start; an embed may start later).
    /// Requests before now do not count.
    pub fn start(world: &World, step: usize) -> Self {
        let len = world.api().audit_len();
        LessonProgress {
            step,
            reached_ms: Vec::new(),
            audit_from: len,
            audit_seen: len,
        }
    }

    /// Moves past every step whose predicates hold in `world`, in order; returns how many.
    ///
    /// A step that completes here began, for the next step's request predicates, when the world
    /// was last evaluated: one Play tick or "Run until converged" can hold several steps' worth
    /// of requests, and the next step must still see the ones after the previous evaluation.
    pub fn advance(&mut self, guide: &LessonGuide, world: &World) -> usize {
        let mut moved = 0;
        while self.step < guide.steps.len() && guide.holds(self.step, world, self.audit_from) {
            self.step += 1;
            self.reached_ms.push(world.now().as_ms());
            self.audit_from = self.audit_seen;
            moved += 1;
        }
        self.audit_seen = world.api().audit_len();
        moved
    }

    /// Every step is done (the closing question is the reader's).
    pub fn finished(&self, guide: &LessonGuide) -> bool {
        self.step >= guide.steps.len()
    }
}

/// Lesson progress along a session's timeline: where the reader was after each world step, so
/// scrubbing back to a step shows the lesson as it was then, and forking there continues from
/// that progress (the playground's history keeps snapshots; this keeps what the lesson said).
///
/// Only the steps where the lesson moved are stored; in between, progress differs only in how
/// much of the audit log it has seen, which is the snapshot's own audit length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LessonTrack {
    /// (world step, progress) where the lesson started and wherever it moved, oldest first.
    moves: Vec<(u64, LessonProgress)>,
    /// Progress after the latest world followed.
    live: LessonProgress,
}

impl LessonTrack {
    /// A track starting at lesson step `step` on `world` (see [`LessonProgress::start`]).
    pub fn start(world: &World, step: usize) -> Self {
        let live = LessonProgress::start(world, step);
        LessonTrack {
            moves: vec![(world.steps(), live.clone())],
            live,
        }
    }

    /// Advances on the live world after one more step; returns how many lesson steps it moved.
    pub fn follow(&mut self, guide: &LessonGuide, world: &World) -> usize {
        let moved = self.live.advance(guide, world);
        if moved > 0 {
            self.moves.push((world.steps(), self.live.clone()));
        }
        moved
    }

    /// Progress after the latest world followed.
    pub fn live(&self) -> &LessonProgress {
        &self.live
    }

    /// Progress as it was when `world`, a snapshot of this session's timeline, was live.
    pub fn at(&self, world: &World) -> LessonProgress {
        let step = world.steps();
        let mut p = self
            .moves
            .iter()
            .rev()
            .find(|(s, _)| *s <= step)
            .or(self.moves.first())
            .map_or_else(|| self.live.clone(), |(_, p)| p.clone());
        p.audit_seen = world.api().audit_len();
        p
    }

    /// Continues from `world`, a snapshot of this timeline: later progress is dropped.
    pub fn fork(&mut self, world: &World) {
        self.live = self.at(world);
        let step = world.steps();
        if self.moves.len() > 1 {
            self.moves.retain(|(s, _)| *s <= step);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::json::json;

    use super::super::format::Until;
    use super::super::gallery::GALLERY;
    use super::super::{RunOptions, Scenario};
    use super::*;
    use crate::engine::Input;

    fn load(text: &str) -> Scenario {
        Scenario::load(text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn lesson_passes(s: &Scenario) -> (bool, String) {
        let outcome = s
            .run(&RunOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let last = outcome.results.last().cloned().expect("a lesson result");
        assert!(
            last.description.starts_with("lesson "),
            "{}",
            last.description
        );
        (last.passed, last.line())
    }

    #[test]
    fn the_gallery_has_fourteen_lessons_that_the_scenarios_own_inputs_complete() {
        assert_eq!(GALLERY.len(), 14);
        for entry in GALLERY {
            let s = load(entry.text);
            assert_eq!(s.name, entry.id, "a gallery id is its scenario's name");
            assert!(s.lesson.is_some(), "{} has a lesson", entry.id);
            let (passed, line) = lesson_passes(&s);
            assert!(passed, "{}: {line}", entry.id);
        }
    }

    /// Changes a predicate so that it cannot hold any more.
    fn break_predicate(p: &mut Predicate) {
        if let Some(r) = &mut p.request {
            r.code = Some(599);
        } else if p.equals.is_some() {
            p.equals = Some(json!("never"));
        } else if p.condition.is_some() {
            p.condition = Some("NeverSeen".into());
        } else if let Some(k) = p.kstatus {
            p.kstatus = Some(match k {
                crate::scenario::KstatusName::Terminating => crate::scenario::KstatusName::Failed,
                _ => crate::scenario::KstatusName::Terminating,
            });
        } else if let Some(e) = p.exists {
            p.exists = Some(!e);
        }
    }

    #[test]
    fn every_step_of_every_gallery_lesson_can_fail() {
        for entry in GALLERY {
            let s = load(entry.text);
            let steps = s.lesson.as_ref().map_or(0, |l| l.steps.len());
            for i in 0..steps {
                let mut broken = s.clone();
                if let Some(l) = &mut broken.lesson {
                    for p in &mut l.steps[i].until {
                        break_predicate(p);
                    }
                }
                let (passed, line) = lesson_passes(&broken);
                assert!(!passed, "{} step {i} still passes: {line}", entry.id);
                assert!(
                    line.contains(&format!("stuck at step {} of {steps}", i + 1)),
                    "{line}"
                );
            }
        }
    }

    fn follow(world: &mut World, guide: &LessonGuide, mut act: impl FnMut(&mut World)) -> usize {
        let mut progress = LessonProgress::start(world, 0);
        progress.advance(guide, world);
        for _ in 0..5_000 {
            if progress.finished(guide) || world.now().as_ms() > 200_000 {
                break;
            }
            act(world);
            progress.advance(guide, world);
        }
        progress.step
    }

    #[test]
    fn every_gallery_lesson_completes_in_the_playground_by_next_event_and_by_play() {
        for entry in GALLERY {
            let s = load(entry.text);
            let guide = LessonGuide::for_scenario(&s)
                .unwrap_or_else(|e| panic!("{e}"))
                .expect("a lesson");
            let base = s.playground_world(None).unwrap_or_else(|e| panic!("{e}"));
            let mut w = base.clone();
            let reached = follow(&mut w, &guide, |w| {
                w.step_to_next_time();
            });
            assert_eq!(reached, guide.steps.len(), "{} by Next event", entry.id);
            // Play at 1x: 100 ms of simulated time per tick.
            let mut w = base.clone();
            let reached = follow(&mut w, &guide, |w| {
                w.apply(Input::Advance { ms: 100 });
            });
            assert_eq!(reached, guide.steps.len(), "{} by Play at 1x", entry.id);
        }
    }

    #[test]
    fn scrubbing_back_shows_the_step_of_that_moment_and_a_fork_continues_from_it() {
        let s = load(super::super::gallery::find("scale-up").expect("entry").text);
        let guide = LessonGuide::for_scenario(&s).unwrap().expect("a lesson");
        let mut world = s.playground_world(None).unwrap();
        let mut track = LessonTrack::start(&world, 0);
        let mut snapshots = vec![world.clone()];
        while !track.live().finished(&guide) && world.now().as_ms() < 200_000 {
            world.step_to_next_time();
            track.follow(&guide, &world);
            snapshots.push(world.clone());
        }
        assert_eq!(track.live().step, guide.steps.len());
        // Replaying the same snapshots one by one gives the progress `at` reports for each.
        let mut fresh = LessonProgress::start(&snapshots[0], 0);
        for snap in &snapshots[1..] {
            fresh.advance(&guide, snap);
            assert_eq!(track.at(snap), fresh, "at step {}", snap.steps());
        }
        // The first snapshot where step 1 was done, and the one before it.
        let first_done = snapshots
            .iter()
            .position(|w| track.at(w).step >= 1)
            .expect("step 1 was done");
        let before = &snapshots[first_done - 1];
        assert_eq!(
            track.at(before).step,
            0,
            "scrubbed back, the lesson is at step 1 again"
        );
        // Fork there: the lesson is live at step 1 again and completes on the forked world.
        track.fork(before);
        assert_eq!(track.live().step, 0);
        let mut w = before.clone();
        while !track.live().finished(&guide) && w.now().as_ms() < 200_000 {
            w.step_to_next_time();
            track.follow(&guide, &w);
        }
        assert_eq!(track.live().step, guide.steps.len());
        assert_eq!(
            track.live().reached_ms,
            fresh.reached_ms,
            "same inputs, same moments"
        );
    }

    #[test]
    fn the_playground_world_sends_a_body_from_copy_and_gets_the_409() {
        let entry = super::super::gallery::find("optimistic-concurrency").expect("entry");
        let s = load(entry.text);
        let mut w = s.playground_world(None).unwrap_or_else(|e| panic!("{e}"));
        w.run_until_converged(100_000, 600_000);
        let bob: Vec<u16> = w
            .api()
            .audit()
            .filter(|e| e.principal == "bob")
            .map(|e| e.code)
            .collect();
        assert_eq!(bob, vec![200, 409]);
    }

    #[test]
    fn a_request_before_the_step_began_does_not_complete_it() {
        let s = load(
            super::super::gallery::find("status-protection")
                .expect("entry")
                .text,
        );
        let guide = LessonGuide::for_scenario(&s).unwrap().expect("a lesson");
        let mut w = s.playground_world(None).unwrap();
        w.apply(Input::Advance { ms: 12_000 });
        // Both refused forgeries of step 1 happened before the reader started following.
        let mut late = LessonProgress::start(&w, 0);
        late.advance(&guide, &w);
        assert_eq!(late.step, 0, "app's patches came before the lesson began");
        let mut early = LessonProgress::start(&s.playground_world(None).unwrap(), 0);
        early.advance(&guide, &w);
        assert_eq!(early.step, 1);
        assert_eq!(early.reached_ms, vec![12_000]);
    }

    const LESSON_BASE: &str = "apiVersion: converge.dev/v1
kind: Scenario
name: t
objects:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: c, namespace: default}
lesson:
  title: T
  steps:
    - text: look
      until:
        - {target: configmaps/default/c, exists: true}
  check:
    question: Q?
    choices: [a, b]
    answer: 1
";

    #[test]
    fn a_lesson_with_an_answer_out_of_range_is_refused_at_its_line() {
        let text = LESSON_BASE.replace("answer: 1", "answer: 2");
        let e = Scenario::load(&text).unwrap_err();
        assert_eq!(e.path, "lesson.check.answer");
        assert_eq!(
            e.to_string(),
            "line 17, column 13: lesson.check.answer: 2 is not a choice: answers count from 0 and there are 2 choices"
        );
    }

    #[test]
    fn lesson_mistakes_name_the_field_and_line() {
        let cases = [
            (
                LESSON_BASE.replace("text: look", "text: look\n      wach: typo"),
                "line 12, column 7: lesson.steps[0]: unknown field `wach`",
            ),
            (
                LESSON_BASE.replace("{target: configmaps/default/c, exists: true}", "{target: configmapz/default/c, exists: true}"),
                "lesson.steps[0].until[0].target: unknown resource \"configmapz\"",
            ),
            (
                LESSON_BASE.replace(
                    "{target: configmaps/default/c, exists: true}",
                    "{target: configmaps/default/c, request: {target: configmaps/default/c}}",
                ),
                "lesson.steps[0].until[0].target: is not used with request",
            ),
            (
                LESSON_BASE.replace("{target: configmaps/default/c, exists: true}", "{target: configmaps/default/c}"),
                "lesson.steps[0].until[0]: give exactly one of kstatus, field (with equals), condition, exists",
            ),
            (
                LESSON_BASE.replace("      until:\n        - {target: configmaps/default/c, exists: true}\n", "      until: []\n"),
                "lesson.steps[0].until: needs at least one predicate",
            ),
            (
                LESSON_BASE.replace("choices: [a, b]", "choices: [a]").replace("answer: 1", "answer: 0"),
                "lesson.check.choices: give at least two non-empty choices",
            ),
        ];
        for (text, want) in cases {
            let e = Scenario::load(&text).unwrap_err().to_string();
            assert!(e.contains(want), "{e:?} should contain {want:?}");
        }
    }

    #[test]
    fn a_scenario_without_a_lesson_still_loads_and_writes_no_lesson_field() {
        let text = LESSON_BASE.split("lesson:").next().unwrap_or_default();
        let s = load(text);
        assert!(s.lesson.is_none());
        assert!(!s.to_yaml().contains("lesson"));
        let with = load(LESSON_BASE);
        assert_eq!(load(&with.to_yaml()), with);
    }

    #[test]
    fn an_rbac_fault_switches_enforcement_at_its_time() {
        let s = load(
            super::super::gallery::find("status-protection")
                .expect("entry")
                .text,
        );
        let mut run = super::super::ScenarioRun::new(&s, None).unwrap();
        run.run(
            Until::Time(super::super::format::Duration(42_000)),
            &RunOptions::default(),
        );
        let codes: Vec<u16> = run
            .world()
            .api()
            .audit()
            .filter(|e| e.principal == "app")
            .map(|e| e.code)
            .collect();
        assert_eq!(codes, vec![403, 403, 200]);
        assert!(run
            .events()
            .iter()
            .any(|e| &*e.line == "t=21.000s environment rbac off"));
    }
}
