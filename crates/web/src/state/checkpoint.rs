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

/// Engine events after the cut once it moves; it moves when more than twice this lie after it,
/// so a reload from a checkpoint replays at most about that many (about 0.1 s in a tab): the
/// last actions, whose reports and snapshots the timeline and step-back show.
pub const TAIL_EVENTS: u64 = 1_000;

/// Where a stored checkpoint's bytes are: here, or in the page's memory (the platform's
/// IndexedDB record), read a piece at a time so they are never copied whole into the wasm
/// memory beside the world they become.
pub trait Bytes: std::fmt::Debug {
    /// How many bytes there are.
    fn size(&self) -> usize;
    /// Fills `buf` with the bytes from `at`.
    fn read_at(&self, at: usize, buf: &mut [u8]);
}

impl Bytes for Vec<u8> {
    fn size(&self) -> usize {
        self.len()
    }

    fn read_at(&self, at: usize, buf: &mut [u8]) {
        buf.copy_from_slice(&self[at..at + buf.len()]);
    }
}

impl Bytes for Box<dyn Bytes> {
    fn size(&self) -> usize {
        self.as_ref().size()
    }

    fn read_at(&self, at: usize, buf: &mut [u8]) {
        self.as_ref().read_at(at, buf);
    }
}

/// A checkpoint as web/boot.js read it from IndexedDB (`convergeCheckpoint`), or as
/// [`Checkpointer`] made it (its bytes here).
#[derive(Clone, Debug, PartialEq)]
pub struct Stored<B = Vec<u8>> {
    /// The actions performed before the checkpoint was taken.
    pub cut: usize,
    /// The engine events those actions processed (the replay's bound counts them).
    pub events: u64,
    /// The checkpointed world's `steps()`.
    pub steps: u64,
    /// [`log_hash`] of the workspace at `cut`.
    pub log: String,
    /// `World::checkpoint()`.
    pub bytes: B,
}

/// A stored checkpoint whose bytes are wherever the platform keeps them.
pub type Offered = Stored<Box<dyn Bytes>>;

impl Stored {
    /// The same checkpoint, offered as the page offers one.
    pub fn offered(self) -> Offered {
        Stored {
            cut: self.cut,
            events: self.events,
            steps: self.steps,
            log: self.log,
            bytes: Box::new(self.bytes),
        }
    }
}

impl<B: Bytes> Stored<B> {
    /// Whether this checkpoint was made from `w`'s own actions, on the starter's world, and
    /// leaves the step `w` was looking at in the rebuilt history.
    pub fn fits(&self, w: &Workspace, lessons: &Lessons) -> bool {
        lessons.opened.is_none()
            && self.cut <= w.actions.len()
            && w.cursor.is_none_or(|c| c >= self.steps)
            && log_hash(w, self.cut) == self.log
    }

    /// The world it holds, if it is this build's, undamaged and the world it says it is.
    pub fn world(&self) -> Option<World> {
        let world = World::from_checkpoint_at(self.bytes.size(), &mut |at, buf| {
            self.bytes.read_at(at, buf);
        })
        .ok()?;
        (world.steps() == self.steps).then_some(world)
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

/// The worker's side: follows the saved workspace as it grows, performing only the actions it
/// has not seen, and checkpoints the world at the cut, which stays put until more than twice
/// [`TAIL_EVENTS`] (or [`HISTORY_STEPS`] actions) lie after it and then moves to the earliest
/// action within [`TAIL_EVENTS`] of the end, so a growing session is not rewritten after every
/// action.
pub struct Checkpointer {
    /// [`WORTH_EVENTS`] and [`TAIL_EVENTS`] (smaller in the tests, which run unoptimized).
    worth: u64,
    tail: u64,
    kept: Option<Kept>,
    /// The cut and log of the checkpoint last made, until web/checkpoint.js says it is stored.
    made: Option<(usize, String)>,
    /// The cut and log of the checkpoint stored, so an unchanged one is not made again.
    stored: Option<(usize, String)>,
}

struct Kept {
    starter: Starter,
    seed: u64,
    actions: Vec<SessionAction>,
    world: World,
    /// The first action performed here: 0 from the seed, the cut from a checkpoint.
    base: usize,
    /// `events_before[i - base]`: the engine events of the first `i` actions.
    events_before: Vec<u64>,
    /// The world after each of the last actions, from the cut to the end itself.
    recent: VecDeque<(usize, World)>,
}

impl Kept {
    fn new(w: &Workspace) -> Kept {
        let world = Model::base_world(w, &Lessons::default());
        Kept::at(w, 0, 0, world)
    }

    /// The world after `w`'s first `cut` actions, which processed `events` engine events.
    fn at(w: &Workspace, cut: usize, events: u64, world: World) -> Kept {
        Kept {
            starter: w.starter,
            seed: w.seed,
            actions: w.actions[..cut].to_vec(),
            recent: VecDeque::from([(cut, world.clone())]),
            world,
            base: cut,
            events_before: vec![events],
        }
    }

    fn continues(&self, w: &Workspace) -> bool {
        self.starter == w.starter && self.seed == w.seed && w.actions.starts_with(&self.actions)
    }

    fn events(&self) -> u64 {
        self.events_before.last().copied().unwrap_or(0)
    }

    /// The engine events after action `i` (performed here).
    fn events_after(&self, i: usize) -> u64 {
        self.events() - self.events_before[i - self.base]
    }

    /// Moves the cut once the actions after it are more than the reload should replay.
    fn trim(&mut self, tail_events: u64) {
        let end = self.actions.len();
        let too_long = |k: &Kept, first: usize, events: u64| {
            k.events_after(first) > events || end - first >= HISTORY_STEPS
        };
        if !too_long(self, self.recent[0].0, tail_events.saturating_mul(2)) {
            return;
        }
        while self.recent.len() > 1 && too_long(self, self.recent[0].0, tail_events) {
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
            made: None,
            stored: None,
        }
    }

    /// Brings the world up to `w` (validated and bounded as a reload's replay is) and answers a
    /// checkpoint when the session is worth one and it differs from the one stored. `stored` is
    /// the checkpoint the worker found in IndexedDB: when this checkpointer has not followed `w`
    /// so far and it fits, the world is read back from it instead of replayed from the seed.
    /// Else `shipped`, the large starter's checkpoint the release ships, when it fits: read back
    /// the same way, but not stored in this browser yet.
    pub fn update(
        &mut self,
        w: &Workspace,
        stored: Option<Offered>,
        shipped: Option<Offered>,
    ) -> Result<Option<Stored>, ShareError> {
        w.validate()?;
        if !self.kept.as_ref().is_some_and(|k| k.continues(w)) {
            self.kept = Some(self.start(w, stored, shipped));
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
        let this = (*cut, log_hash(w, *cut));
        if self.stored.as_ref() == Some(&this) {
            return Ok(None);
        }
        let made = Stored {
            cut: *cut,
            events: kept.events_before[*cut - kept.base],
            steps: world.steps(),
            log: this.1.clone(),
            bytes: world.checkpoint(),
        };
        self.made = Some(this);
        Ok(Some(made))
    }

    /// The checkpoint last made is in IndexedDB now (or was already): it is not made again.
    pub fn confirm(&mut self) {
        if let Some(made) = self.made.take() {
            self.stored = Some(made);
        }
    }

    /// Where to follow `w` from: the stored checkpoint if it fits and reads back, else the
    /// shipped one if it does, else the seed.
    fn start(&mut self, w: &Workspace, stored: Option<Offered>, shipped: Option<Offered>) -> Kept {
        self.made = None;
        self.stored = None;
        let read = |c: Option<Offered>| {
            let c = c.filter(|c| c.fits(w, &Lessons::default()))?;
            let world = c.world()?;
            Some((Kept::at(w, c.cut, c.events, world), (c.cut, c.log)))
        };
        if let Some((kept, stored)) = read(stored) {
            self.stored = Some(stored);
            return kept;
        }
        read(shipped).map_or_else(|| Kept::new(w), |(kept, _)| kept)
    }
}

// The reload itself is the `checkpoint` feature's (./dev test runs the web crate's tests with it).
#[cfg(all(test, feature = "checkpoint"))]
mod tests {
    use converge_core::engine::{Fault, Input};

    use super::*;
    use crate::state::boot::tests::boot_with;
    use crate::state::Effect;

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

    /// The checkpoint `c` makes of `w`, stored.
    fn made(c: &mut Checkpointer, w: &Workspace) -> Stored {
        let stored = c
            .update(w, None, None)
            .expect("replays")
            .expect("worth a checkpoint");
        c.confirm();
        stored
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
        let (resumed, effects) = boot_with(&text, Some(stored.clone()));
        assert!(!effects.contains(&Effect::ForgetCheckpoint));
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

    /// Boots the address `search` with `checkpoint` offered and nothing saved.
    fn visit(search: &str, checkpoint: Option<Stored>) -> (Model, Vec<Effect>) {
        Model::boot(&super::super::StartingPage {
            search: search.into(),
            hash: String::new(),
            storage: Some(&|_: &str| None),
            gallery: None,
            checkpoint_shipped: checkpoint.is_some(),
            checkpoint: std::cell::Cell::new(checkpoint.map(Stored::offered)),
        })
    }

    #[test]
    fn the_large_starter_opens_from_the_checkpoint_a_release_ships() {
        // What web/starter-checkpoint.mjs asks the worker's checkpointer for, with its bounds.
        let fresh = Workspace::fresh(Starter::Large);
        let shipped = made(&mut Checkpointer::default(), &fresh);
        // The starter's two actions are one long run: the cut is after both, so nothing is
        // replayed on the page.
        assert_eq!(shipped.cut, fresh.actions.len());
        let (replayed, _) = visit("?starter=large", None);
        let (opened, effects) = visit("?starter=large", Some(shipped.clone()));
        assert!(!effects.contains(&Effect::ForgetCheckpoint));
        assert!(effects.contains(&Effect::ShowScenarioInUrl { scenario: None }));
        assert_eq!(seen(&opened), seen(&replayed));
        assert_eq!(
            opened.notice.as_deref(),
            Some(
                format!(
                    "Opened the large starter from the checkpoint this version ships at step {}; \
                     the timeline and step-back start there.",
                    shipped.steps
                )
                .as_str()
            )
        );
        assert_eq!(opened.history.len(), 1);
        // Its one step has no report: the timeline says it was read back, not that nothing
        // happened; the replayed one has its report.
        assert!(opened.shown_step_restored());
        assert!(!replayed.shown_step_restored());
        let mut stepped = opened;
        stepped.update(super::super::Msg::Step);
        assert!(!stepped.shown_step_restored());
        // A session that went on from the starter fits it too; the small starter's does not.
        let mut grown = fresh.clone();
        grown.actions.push(SessionAction::Step);
        assert!(shipped.fits(&grown, &Lessons::default()));
        assert!(!shipped.fits(&Workspace::default(), &Lessons::default()));
        // Its reload, saved and at the plain address, goes on from the shipped one too.
        let text = persist::to_json(&grown);
        let read = |k: &str| (k == persist::STORAGE_KEY).then(|| text.clone());
        let (reloaded, effects) = Model::boot(&super::super::StartingPage {
            search: String::new(),
            hash: String::new(),
            storage: Some(&read),
            gallery: None,
            checkpoint: std::cell::Cell::new(Some(shipped.clone().offered())),
            checkpoint_shipped: true,
        });
        let (from_seed, _) = boot_with(&text, None);
        assert_eq!(seen(&reloaded), seen(&from_seed));
        assert_eq!(reloaded.restored_at, Some(shipped.steps));
        assert!(reloaded
            .notice
            .as_deref()
            .is_some_and(|n| n.starts_with("Opened the large starter")));
        assert!(!effects.iter().any(|e| matches!(
            e,
            Effect::ForgetCheckpoint | Effect::ShowScenarioInUrl { .. }
        )));
        // Offered to a session it does not fit, it is replayed past and not forgotten.
        let small = persist::to_json(&Workspace::default());
        let read = |k: &str| (k == persist::STORAGE_KEY).then(|| small.clone());
        let (_, effects) = Model::boot(&super::super::StartingPage {
            search: String::new(),
            hash: String::new(),
            storage: Some(&read),
            gallery: None,
            checkpoint: std::cell::Cell::new(Some(shipped.offered())),
            checkpoint_shipped: true,
        });
        assert!(!effects.contains(&Effect::ForgetCheckpoint));
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
        let (m, effects) = boot_with(&persist::to_json(&w), Some(damaged));
        assert_eq!(seen(&m), seen(&from_seed));
        assert_eq!(m.notice, None);
        // Neither it nor one that does not fit is of use again: the page forgets them.
        assert!(effects.contains(&Effect::ForgetCheckpoint));
        let other = Workspace {
            seed: 2,
            ..w.clone()
        };
        let (_, effects) = boot_with(&persist::to_json(&other), Some(stored.clone()));
        assert!(effects.contains(&Effect::ForgetCheckpoint));
        let (_, effects) = boot_with(&persist::to_json(&other), None);
        assert!(!effects.contains(&Effect::ForgetCheckpoint));
        assert_eq!(m.history.len(), from_seed.history.len());
    }

    #[test]
    fn the_checkpointer_follows_a_growing_session_and_skips_short_ones() {
        let mut c = checkpointer();
        let nothing = Workspace {
            actions: Vec::new(),
            ..Workspace::default()
        };
        assert!(c.update(&nothing, None, None).expect("replays").is_none());
        let first = made(&mut c, &long_session(3));
        // Unchanged: nothing new to write.
        assert!(c
            .update(&long_session(3), None, None)
            .expect("replays")
            .is_none());
        // Grown by more events than the tail holds: the cut moves on, and matches a checkpointer that
        // replayed the whole session at once.
        let mut grown = long_session(3);
        busy(&mut grown, 10);
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

    /// Restarts every controller in turn, each followed by a run until converged: events.
    fn busy(w: &mut Workspace, rounds: usize) {
        let controllers = Model::default().world.controller_names();
        for controller in controllers.iter().cycle().take(rounds).cloned() {
            let restart = Fault::RestartController { controller };
            w.actions.extend([
                SessionAction::apply(Input::Fault { fault: restart }),
                SessionAction::RunUntilConverged,
            ]);
        }
    }

    #[test]
    fn a_checkpoint_not_confirmed_stored_is_made_again() {
        let w = long_session(3);
        let mut c = checkpointer();
        let first = c
            .update(&w, None, None)
            .expect("replays")
            .expect("worth one");
        let again = c
            .update(&w, None, None)
            .expect("replays")
            .expect("not stored yet");
        assert_eq!(again, first);
        c.confirm();
        assert!(c.update(&w, None, None).expect("replays").is_none());
    }

    #[test]
    fn a_new_worker_goes_on_from_the_stored_checkpoint() {
        let w = long_session(3);
        let stored = made(&mut checkpointer(), &w);
        let mut grown = w.clone();
        busy(&mut grown, 10);
        let from_seed = made(&mut checkpointer(), &grown);
        // The stored one is not made again; grown, the same checkpoint as from the seed.
        let mut c = checkpointer();
        assert!(c
            .update(&w, Some(stored.clone().offered()), None)
            .expect("reads")
            .is_none());
        let mut d = checkpointer();
        let resumed = d
            .update(&grown, Some(stored.clone().offered()), None)
            .expect("reads")
            .expect("the cut moved");
        assert_eq!(resumed, from_seed);
        // A stored checkpoint that does not fit (another seed), or damaged, is not used.
        let other = Workspace { seed: 5, ..grown };
        let mut damaged = stored;
        let at = damaged.bytes.len() / 3;
        damaged.bytes[at] ^= 1;
        for stored in [Some(damaged.offered()), None] {
            assert_eq!(
                checkpointer()
                    .update(&other, stored, None)
                    .expect("replays"),
                Some(made(&mut checkpointer(), &other))
            );
        }
    }

    #[test]
    fn a_worker_goes_on_from_the_shipped_checkpoint_and_stores_its_own() {
        // The shipped one stands for the starter's world; the session went on from it.
        let w = long_session(3);
        let shipped = made(&mut checkpointer(), &w);
        let mut grown = w.clone();
        busy(&mut grown, 10);
        let from_seed = made(&mut checkpointer(), &grown);
        let mut c = checkpointer();
        let resumed = c
            .update(&grown, None, Some(shipped.clone().offered()))
            .expect("reads")
            .expect("not stored here yet");
        assert_eq!(resumed, from_seed);
        // Read back from it, not replayed from the seed.
        assert_eq!(c.kept.as_ref().map(|k| k.base), Some(shipped.cut));
        // Unchanged since it was shipped: still this browser's to store, unlike a stored one.
        let mut d = checkpointer();
        let same = d
            .update(&w, None, Some(shipped.clone().offered()))
            .expect("reads");
        assert_eq!(same, Some(shipped.clone()));
        // A stored one that fits comes first.
        let mut e = checkpointer();
        assert!(e
            .update(&w, Some(shipped.clone().offered()), Some(shipped.offered()))
            .expect("reads")
            .is_none());
    }

    #[test]
    fn the_cut_waits_for_twice_the_tail_before_it_moves() {
        let mut w = long_session(0);
        // A tail of 4 events: a restart and its run until converged are a few.
        let mut c = Checkpointer::with(150, 4);
        let mut cuts = vec![made(&mut c, &w).cut];
        let mut rounds = 0;
        for _ in 0..30 {
            busy(&mut w, 1);
            let moved = c.update(&w, None, None).expect("replays");
            let kept = c.kept.as_ref().expect("following");
            let cut = kept.recent[0].0;
            rounds += 1;
            match moved {
                // Moved: at most the tail after it.
                Some(m) => {
                    assert_eq!(m.cut, cut);
                    assert!(kept.events_after(cut) <= 4);
                    cuts.push(cut);
                    c.confirm();
                }
                // Stayed: at most twice the tail after it.
                None => assert!(kept.events_after(cut) <= 8),
            }
        }
        assert!(
            cuts.len() > 2 && cuts.len() < rounds,
            "moved now and then, not after every action: {cuts:?}"
        );
    }
}
