//! The engine's checkers: convergence (nothing queued and every object's kstatus settled,
//! tracked incrementally in the unsettled set) and feedback-loop detection (a top-level
//! object's generation climbing with no user write).

use crate::json::Value;
use imbl::OrdSet;
use serde::{Deserialize, Serialize};

use super::report::{EventKind, EventRecord, FeedbackLoop, StepReport};
use super::trace;
use super::world::{RunState, World};
use crate::api::meta;
use crate::api::{ObjectKey, WatchEvent, WatchEventType};
use crate::runtime::health;
use crate::time::SimTime;

/// Generation bumps by controllers must happen within this window to count as a loop.
pub const LOOP_WINDOW_MS: u64 = 60_000;

/// Generation bumps of one object by controllers within the current window.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct LoopWatch {
    window_start: SimTime,
    bumps: u32,
    writers: OrdSet<String>,
    reported: bool,
}

impl World {
    /// Nothing queued (no deliveries in flight, no ready work, no scheduled inputs) and every
    /// object Current or Failed, and no Job still running (`health::settles`). Delayed
    /// requeues (resyncs, kubelet timers) do not count.
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
        self.unsettled
            .iter()
            .all(|k| self.object(k).is_none_or(|o| health::settles(o, self.now)))
    }

    /// Keeps the unsettled set: objects whose kstatus is neither Current nor Failed.
    pub(super) fn track_settled(&mut self, key: &ObjectKey, after: Option<&Value>) {
        match after {
            Some(o) => {
                if health::settles(o, self.now) {
                    self.unsettled.remove(key);
                } else {
                    self.unsettled.insert(key.clone());
                }
            }
            None => {
                self.unsettled.remove(key);
                self.loops.remove(key);
            }
        }
    }

    /// Feedback loops: generation bumped by controllers with no user write in between, reported
    /// once per object when the bumps within [`LOOP_WINDOW_MS`] reach the threshold.
    pub(super) fn watch_for_feedback_loop(
        &mut self,
        ev: &WatchEvent,
        principal: &str,
        before: Option<&Value>,
        after: Option<&Value>,
        by_user: bool,
        report: &mut StepReport,
    ) {
        if by_user || ev.event_type != WatchEventType::Modified {
            return;
        }
        let gen_before = before.map(meta::generation).unwrap_or(0);
        let gen_after = after.map(meta::generation).unwrap_or(0);
        // Objects with a controller owner (ReplicaSets, Pods) have their spec managed by
        // that owner; only spec writes to top-level objects count, within a time window.
        if gen_after <= gen_before || after.and_then(meta::controller_ref).is_some() {
            return;
        }
        let threshold = self.loop_threshold;
        let now = self.now;
        let w = self.loops.entry(ObjectKey::clone(&ev.key)).or_default();
        if now.as_ms() > w.window_start.as_ms() + LOOP_WINDOW_MS {
            w.window_start = now;
            w.bumps = 0;
        }
        w.bumps += 1;
        w.writers.insert(principal.to_owned());
        if w.bumps >= threshold && !w.reported {
            w.reported = true;
            let fl = FeedbackLoop {
                key: ObjectKey::clone(&ev.key),
                generation: gen_after,
                writers: w.writers.iter().cloned().collect(),
            };
            let line = trace::feedback_loop_line(&ev.key, gen_after, &fl.writers);
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
                line: line.into(),
            };
            self.record(report, rec);
        }
    }
}
