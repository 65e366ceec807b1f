//! Reloads of long sessions from a checkpoint of the world (issue 20; ARCHITECTURE.md, "A
//! checkpoint of a long session").
//!
//! A reload replays the session's actions from its seed: for the large starter that is about
//! 40,000 engine events, seconds in a tab. So once a session has run [`WORTH_EVENTS`] events, a
//! Web Worker running the build with the `checkpoint` feature ([`Checkpointer`], driven by
//! web/checkpoint.js) keeps core's checkpoint of the world in IndexedDB, and the next visit reads
//! it back instead of replaying from the seed (boot's `Stage::FromCheckpoint`).
//!
//! What a stored checkpoint is checked against before it is used ([`Stored::fits`]): the hash of
//! the action log that produced it ([`log_hash`]: the starter, the seed and the actions before
//! the cut), the build that wrote it (web/boot.js compares the module's name), and core's own
//! header (format, version, digest). Anything else, and any failure to read it, replays from
//! the seed as before.
//!
//! The checkpoint is of the world a few actions before the end ([`TAIL_EVENTS`]), and the reload
//! replays those actions as a replay would, so their timeline reports and step-back snapshots
//! are rebuilt; what lies before the cut is not kept, and a saved session that was looking at
//! a step before it replays from the seed instead.

use std::collections::VecDeque;

use converge_core::engine::{bytes_hash, World};
use converge_core::view::session::{self, SessionAction, Starter};
use converge_core::view::share::{self, ShareError};

use super::lesson::Lessons;
use super::{Model, Workspace, HISTORY_STEPS};
use crate::persist;

/// Engine events from the seed (lines of the world's trace) after which a session is worth a
/// checkpoint: its replay takes a quarter of a second or more in a tab (about 50 µs an event in
/// wasm, BENCHMARKS.md). The small starter's sessions stay below it.
pub const WORTH_EVENTS: u64 = 5_000;

/// Engine events a reload from a checkpoint replays at most after it: the last actions, whose
/// reports and snapshots the timeline and step-back show (about 0.1 s in a tab).
pub const TAIL_EVENTS: u64 = 2_000;

/// A checkpoint as web/boot.js read it from IndexedDB (`convergeCheckpoint`).
#[derive(Clone, Debug, PartialEq)]
pub struct Stored {
    /// The actions performed before the checkpoint was taken.
    pub cut: usize,
    /// The engine events those actions processed (the replay's bound counts them).
    pub events: u64,
    /// The checkpointed world's `steps()`.
    pub steps: u64,
    /// [`log_hash`] of the workspace at `cut`.
    pub log: String,
    /// `World::checkpoint()`.
    pub bytes: Vec<u8>,
}

impl Stored {
    /// Whether this checkpoint was made from `w`'s own actions, on the starter's world, and
    /// leaves the step `w` was looking at in the rebuilt history.
    pub fn fits(&self, w: &Workspace, lessons: &Lessons) -> bool {
        lessons.opened.is_none()
            && self.cut <= w.actions.len()
            && w.cursor.is_none_or(|c| c >= self.steps)
            && log_hash(w, self.cut) == self.log
    }
}

/// Names the session that produced a world after `cut` actions: FNV-1a 64 of the saved JSON of
/// a workspace holding only its starter, seed and those actions.
pub fn log_hash(w: &Workspace, cut: usize) -> String {
    let prefix = Workspace {
        seed: w.seed,
        actions: w.actions[..cut.min(w.actions.len())].to_vec(),
        ..Workspace::fresh(w.starter)
    };
    bytes_hash(persist::to_json(&prefix).as_bytes())
}

/// A checkpoint made by [`Checkpointer::update`], for web/checkpoint.js to store.
#[derive(Debug)]
pub struct Made {
    pub stored: Stored,
}

/// The worker's side: follows the saved workspace as it grows, performing only the actions it
/// has not seen, and checkpoints the world at the cut ([`TAIL_EVENTS`] before the end).
pub struct Checkpointer {
    /// [`WORTH_EVENTS`] and [`TAIL_EVENTS`] (smaller in the tests, which run unoptimized).
    worth: u64,
    tail: u64,
    kept: Option<Kept>,
    /// The cut and log of the last checkpoint made, so an unchanged one is not written again.
    written: Option<(usize, String)>,
}

struct Kept {
    starter: Starter,
    seed: u64,
    actions: Vec<SessionAction>,
    world: World,
    /// `events_before[i]`: the engine events of the first `i` actions.
    events_before: Vec<u64>,
    /// The world after each of the last actions, from the earliest cut within
    /// [`TAIL_EVENTS`] of the end to the end itself.
    recent: VecDeque<(usize, World)>,
}

impl Kept {
    fn new(w: &Workspace) -> Kept {
        let world = Model::base_world(w, &Lessons::default());
        Kept {
            starter: w.starter,
            seed: w.seed,
            actions: Vec::new(),
            recent: VecDeque::from([(0, world.clone())]),
            world,
            events_before: vec![0],
        }
    }

    fn continues(&self, w: &Workspace) -> bool {
        self.starter == w.starter && self.seed == w.seed && w.actions.starts_with(&self.actions)
    }

    fn events(&self) -> u64 {
        self.events_before.last().copied().unwrap_or(0)
    }

    /// Drops the snapshots the cut has moved past.
    fn trim(&mut self, tail_events: u64) {
        let end = self.actions.len();
        while self.recent.len() > 1 {
            let first = self.recent[0].0;
            let tail = self.events() - self.events_before[first];
            if tail <= tail_events && end - first < HISTORY_STEPS {
                break;
            }
            self.recent.pop_front();
        }
    }
}

impl Default for Checkpointer {
    fn default() -> Self {
        Checkpointer::with(WORTH_EVENTS, TAIL_EVENTS)
    }
}

impl Checkpointer {
    fn with(worth: u64, tail: u64) -> Self {
        Checkpointer {
            worth,
            tail,
            kept: None,
            written: None,
        }
    }

    /// Brings the world up to `w` (validated and bounded as a reload's replay is) and answers a
    /// checkpoint when the session is worth one and it differs from the last one made.
    pub fn update(&mut self, w: &Workspace) -> Result<Option<Made>, ShareError> {
        w.validate()?;
        if !self.kept.as_ref().is_some_and(|k| k.continues(w)) {
            self.kept = Some(Kept::new(w));
        }
        let Some(kept) = self.kept.as_mut() else {
            return Ok(None);
        };
        while let Some(action) = w.actions.get(kept.actions.len()) {
            let report = session::perform(&mut kept.world, action);
            let events = kept.events().saturating_add(report.processed);
            if events > share::REPLAY_MAX_EVENTS {
                let step = kept.actions.len() + 1;
                self.kept = None;
                return Err(ShareError::ReplayBudget {
                    max_events: share::REPLAY_MAX_EVENTS,
                    step,
                    total: w.actions.len(),
                });
            }
            kept.actions.push(action.clone());
            kept.events_before.push(events);
            kept.recent
                .push_back((kept.actions.len(), kept.world.clone()));
            kept.trim(self.tail);
        }
        if kept.events() < self.worth {
            return Ok(None);
        }
        let Some((cut, world)) = kept.recent.front() else {
            return Ok(None);
        };
        let log = log_hash(w, *cut);
        if self.written.as_ref() == Some(&(*cut, log.clone())) {
            return Ok(None);
        }
        let stored = Stored {
            cut: *cut,
            events: kept.events_before[*cut],
            steps: world.steps(),
            log: log.clone(),
            bytes: world.checkpoint(),
        };
        self.written = Some((*cut, log));
        Ok(Some(Made { stored }))
    }
}

// The reload itself is the `checkpoint` feature's (./dev test runs the web crate's tests with it).
#[cfg(all(test, feature = "checkpoint"))]
mod tests {
    use converge_core::engine::{Fault, Input};

    use super::*;
    use crate::state::boot::tests::boot_with;

    /// The small starter, then `steps` single steps and an advance: "long" for
    /// [`checkpointer`]'s bounds.
    fn long_session(steps: usize) -> Workspace {
        let mut w = Workspace::default();
        w.actions.extend((0..steps).map(|_| SessionAction::Step));
        w.actions
            .push(SessionAction::apply(Input::Advance { ms: 1_000 }));
        w
    }

    /// Worth a checkpoint from 150 events on (the small starter's run until converged is
    /// about 180), with a tail of 12 events.
    fn checkpointer() -> Checkpointer {
        Checkpointer::with(150, 12)
    }

    fn made(c: &mut Checkpointer, w: &Workspace) -> Stored {
        c.update(w)
            .expect("replays")
            .expect("worth a checkpoint")
            .stored
    }

    /// What a person sees of a model: the world's trace, the steps, the editor, the object
    /// tree.
    fn seen(m: &Model) -> (String, u64, String, usize, usize) {
        (
            m.world.trace_hash(),
            m.world.steps(),
            m.editor_text.clone(),
            m.world.object_count(),
            m.rows.len(),
        )
    }

    /// The steps of the timeline's reports after `step`.
    fn reports_after(m: &Model, step: u64) -> Vec<u64> {
        m.reports
            .iter()
            .map(|(s, _)| *s)
            .filter(|s| *s > step)
            .collect()
    }

    #[test]
    fn a_reload_from_the_checkpoint_shows_what_the_replay_shows() {
        let w = long_session(30);
        let mut c = checkpointer();
        let stored = made(&mut c, &w);
        assert!(
            stored.cut > 1 && stored.cut < w.actions.len(),
            "{}",
            stored.cut
        );
        let text = persist::to_json(&w);
        let (from_seed, _) = boot_with(&text, None);
        let (resumed, _) = boot_with(&text, Some(stored.clone()));
        assert_eq!(seen(&resumed), seen(&from_seed));
        assert!(
            resumed
                .notice
                .as_deref()
                .is_some_and(|n| n.contains("checkpoint")),
            "{:?}",
            resumed.notice
        );
        // The tail's reports and snapshots are there to look at and step back to; what lies
        // before the cut is not.
        let tail = reports_after(&from_seed, stored.steps);
        assert!(!tail.is_empty());
        assert_eq!(reports_after(&resumed, 0), tail);
        assert_eq!(resumed.history.len(), w.actions.len() - stored.cut + 1);
        assert!(resumed.history.at(stored.steps).is_some());
        assert!(from_seed.history.len() > resumed.history.len());
        // Acting on it goes on exactly as on the replayed session.
        let (mut a, mut b) = (resumed, from_seed);
        a.update(super::super::Msg::Step);
        b.update(super::super::Msg::Step);
        assert_eq!(seen(&a), seen(&b));
    }

    #[test]
    fn a_checkpoint_that_does_not_fit_is_not_used() {
        let w = long_session(3);
        let stored = made(&mut checkpointer(), &w);
        let (from_seed, _) = boot_with(&persist::to_json(&w), None);
        let cases = [
            // Another seed, another action log, a session looking at a step before the cut.
            Workspace {
                seed: 2,
                ..w.clone()
            },
            Workspace {
                actions: w.actions[..stored.cut - 1].to_vec(),
                ..w.clone()
            },
            Workspace {
                cursor: Some(stored.steps - 1),
                ..w.clone()
            },
        ];
        for other in cases {
            assert!(!stored.fits(&other, &Lessons::default()), "{other:?}");
        }
        // Damaged bytes behind a hash that fits: replayed from the seed, no notice.
        let mut damaged = stored.clone();
        let at = damaged.bytes.len() / 2;
        damaged.bytes[at] ^= 0x40;
        let (m, _) = boot_with(&persist::to_json(&w), Some(damaged));
        assert_eq!(seen(&m), seen(&from_seed));
        assert_eq!(m.notice, None);
        assert_eq!(m.history.len(), from_seed.history.len());
    }

    #[test]
    fn the_checkpointer_follows_a_growing_session_and_skips_short_ones() {
        let mut c = checkpointer();
        let nothing = Workspace {
            actions: Vec::new(),
            ..Workspace::default()
        };
        assert!(c.update(&nothing).expect("replays").is_none());
        let first = made(&mut c, &long_session(3));
        // Unchanged: nothing new to write.
        assert!(c.update(&long_session(3)).expect("replays").is_none());
        // Grown by more events than the tail holds: the cut moves on, and matches a checkpointer that
        // replayed the whole session at once.
        let mut grown = long_session(3);
        let controllers = Model::default().world.controller_names();
        for controller in controllers.iter().cycle().take(10).cloned() {
            let restart = Fault::RestartController { controller };
            grown.actions.extend([
                SessionAction::apply(Input::Fault { fault: restart }),
                SessionAction::RunUntilConverged,
            ]);
        }
        let later = made(&mut c, &grown);
        assert!(later.cut > first.cut, "{} > {}", later.cut, first.cut);
        assert_eq!(later, made(&mut checkpointer(), &grown));
        // A different session starts over.
        let small = Workspace {
            seed: 9,
            ..long_session(3)
        };
        assert_eq!(made(&mut c, &small), made(&mut checkpointer(), &small));
    }
}
