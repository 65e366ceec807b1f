//! When expectations are decided: `at` once time moves past it, a `within` window the first
//! time it holds (or at its deadline), `always`/`never` at the first moment against them (or
//! when the window closes).

use super::{evaluate_in, ExpectationResult, ScenarioRun};
use crate::engine::World;
use crate::scenario::compile::{CompiledExpectation, Mode, When};
use crate::scenario::predicates::Check;
use crate::time::SimTime;

impl ScenarioRun {
    /// Decides what time `t` (the next thing to happen) moves past: `at` expectations before
    /// `t`, `within` windows that open or close before `t`. The world does not change between
    /// now and `t`, so its state is the state at those times.
    pub(super) fn settle_before(&mut self, t: u64) {
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
    pub(super) fn check_windows(&mut self) {
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
        // An open window is checked after every change, and most checks do not record: a
        // field check on a named object answers whether it holds without writing the texts
        // the result shows (the full evaluation below writes them when it records).
        let rv = self.world.api().resource_version();
        if !final_ {
            if self.unchanged_since[k] == Some(rv) {
                return;
            }
            if let Some(holds) = field_holds(e, &self.world) {
                let records = match e.mode {
                    Mode::Eventually | Mode::Never => holds,
                    Mode::Always => !holds,
                };
                if !records {
                    self.unchanged_since[k] = Some(rv);
                    return;
                }
            }
        }
        let (holds, expected, got) =
            evaluate_in(e, &self.world, SimTime::from_ms(time_ms), &self.sources);
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
        } else if reads_objects_only(&e.check) {
            self.unchanged_since[k] = Some(rv);
        }
    }
}

/// Whether a check's answer follows from the stored objects alone (not from the time, the
/// audit or the record of causes), so that it cannot change until something is written.
fn reads_objects_only(check: &Check) -> bool {
    matches!(
        check,
        Check::Field { .. }
            | Check::Condition { .. }
            | Check::Exists(_)
            | Check::Compare { .. }
            | Check::Matches { .. }
            | Check::Count { .. }
            | Check::Events { .. }
    )
}

/// Whether a field check on a named object holds, as [`evaluate_in`] answers it, without its
/// texts; `None` for any other expectation.
fn field_holds(e: &CompiledExpectation, world: &World) -> Option<bool> {
    let Check::Field { path, equals } = &e.check else {
        return None;
    };
    let obj = world.api().get(e.key.as_ref()?)?;
    // `equals: null` means absent or null, as `evaluate` reads it.
    Some(match path.get(obj) {
        Some(v) => v == equals,
        None => equals.is_null(),
    })
}
