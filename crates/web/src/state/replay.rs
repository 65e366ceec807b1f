//! A session rebuilt a piece at a time: the base world, then the workspace's actions a few at a
//! time, then the model around them. [`Model::restore`] and [`Model::from_workspace_with`] run
//! it to the end at once; the page's boot ([`super::boot`]) runs one piece per browser task, so
//! no single task holds the main thread for the whole replay (BENCHMARKS.md, issue 23).
//!
//! The steps are core's: `session::perform` per action, and for a workspace read from storage
//! or a link `Workspace::validate` first and `share::REPLAY_MAX_EVENTS` as the bound, exactly as
//! `share::replay_on` applies them (a test below compares the two).

use std::collections::VecDeque;

use converge_core::engine::{History, StepReport, World};
use converge_core::view::session;
use converge_core::view::share::{self, ShareError};

use super::lesson::Lessons;
use super::mechanics::keep_report;
use super::{Model, Workspace, HISTORY_STEPS};

/// Engine events one piece replays before it stops (at least one action always runs): about
/// 5 ms of the 4x slower CPU Lighthouse simulates, per BENCHMARKS.md.
pub const PIECE_EVENTS: u64 = 40;

/// What one piece left: more to replay, or the replayed session.
pub enum Piece {
    Pending(Replay),
    Replayed(Replayed),
}

/// A workspace's session being rebuilt.
pub struct Replay {
    workspace: Workspace,
    lessons: Lessons,
    /// `Some(bound)` for a workspace from storage or a link (validated, bounded); `None` for one
    /// built in this tab.
    bound: Option<u64>,
    /// None until the first piece has built the base world.
    world: Option<World>,
    history: History,
    reports: VecDeque<(u64, StepReport)>,
    next_action: usize,
    events: u64,
}

impl Replay {
    /// A workspace read from storage or a link: validated now, replayed within
    /// [`share::REPLAY_MAX_EVENTS`].
    pub fn untrusted(workspace: Workspace, lessons: Lessons) -> Result<Replay, ShareError> {
        workspace.validate()?;
        Ok(Self::new(
            workspace,
            lessons,
            Some(share::REPLAY_MAX_EVENTS),
        ))
    }

    /// A workspace built in this tab (a reset, an opened scenario).
    pub fn trusted(workspace: Workspace, lessons: Lessons) -> Replay {
        Self::new(workspace, lessons, None)
    }

    fn new(workspace: Workspace, lessons: Lessons, bound: Option<u64>) -> Replay {
        Replay {
            workspace,
            lessons,
            bound,
            world: None,
            history: History::new(HISTORY_STEPS),
            reports: VecDeque::new(),
            next_action: 0,
            events: 0,
        }
    }

    /// Goes on from a checkpoint of this workspace's world after its first `cut` actions, which
    /// processed `events` engine events ([`super::checkpoint`]): its snapshot is the oldest the
    /// history holds, and the remaining actions replay as they would from the seed.
    #[cfg(feature = "checkpoint")]
    pub fn resume(mut self, world: World, cut: usize, events: u64) -> Replay {
        self.history.push(&world);
        self.world = Some(world);
        self.next_action = cut;
        self.events = events;
        self
    }

    /// One piece: the base world if it is not built yet, else actions until `piece_events`
    /// engine events have run (at least one action).
    pub fn advance(mut self, piece_events: u64) -> Result<Piece, ShareError> {
        let Some(mut world) = self.world.take() else {
            self.world = Some(Model::base_world(&self.workspace, &self.lessons));
            return Ok(self.piece());
        };
        let mut piece: u64 = 0;
        while let Some(action) = self.workspace.actions.get(self.next_action) {
            let report = session::perform(&mut world, action);
            let events = report.processed;
            self.history.push(&world);
            keep_report(&mut self.reports, world.steps(), report);
            self.lessons.follow(&world);
            self.next_action += 1;
            self.events = self.events.saturating_add(events);
            if let Some(max_events) = self.bound.filter(|max| self.events > *max) {
                return Err(ShareError::ReplayBudget {
                    max_events,
                    step: self.next_action,
                    total: self.workspace.actions.len(),
                });
            }
            piece = piece.saturating_add(events);
            if piece >= piece_events {
                break;
            }
        }
        self.world = Some(world);
        Ok(self.piece())
    }

    fn piece(self) -> Piece {
        match self.world {
            Some(world) if self.next_action >= self.workspace.actions.len() => {
                Piece::Replayed(Replayed {
                    workspace: self.workspace,
                    lessons: self.lessons,
                    world,
                    history: self.history,
                    reports: self.reports,
                })
            }
            world => Piece::Pending(Replay { world, ..self }),
        }
    }

    /// Every remaining piece at once.
    pub fn run(self) -> Result<Replayed, ShareError> {
        let mut replay = self;
        loop {
            match replay.advance(u64::MAX)? {
                Piece::Pending(next) => replay = next,
                Piece::Replayed(done) => return Ok(done),
            }
        }
    }
}

/// A session whose actions have all been replayed.
pub struct Replayed {
    workspace: Workspace,
    lessons: Lessons,
    world: World,
    history: History,
    reports: VecDeque<(u64, StepReport)>,
}

impl Replayed {
    /// The model around the replayed world (what the editor shows, the object tree).
    pub fn finish(self) -> Model {
        Model::assemble(
            self.workspace,
            self.world,
            self.history,
            self.reports,
            self.lessons,
        )
    }
}

#[cfg(test)]
mod tests {
    use converge_core::engine::Input;
    use converge_core::view::session::{SessionAction, Starter};

    use super::*;
    use crate::state::gallery;

    fn trace(m: &Model) -> (u64, String, Vec<u64>) {
        (
            m.world.steps(),
            m.editor_text.clone(),
            m.reports.iter().map(|(s, _)| *s).collect(),
        )
    }

    /// Replays piece by piece: the model (or the error) and the number of pieces.
    fn in_pieces(
        replay: Result<Replay, ShareError>,
        piece_events: u64,
    ) -> (Result<Model, ShareError>, usize) {
        let mut pieces = 0;
        let mut replay = match replay {
            Ok(r) => r,
            Err(e) => return (Err(e), pieces),
        };
        loop {
            pieces += 1;
            match replay.advance(piece_events) {
                Ok(Piece::Pending(next)) => replay = next,
                Ok(Piece::Replayed(done)) => return (Ok(done.finish()), pieces),
                Err(e) => return (Err(e), pieces),
            }
        }
    }

    fn by_core(w: &Workspace, lessons: &Lessons, max_events: u64) -> Result<World, ShareError> {
        let base = Model::base_world(w, lessons);
        share::replay_on(base, w, max_events, |_, _| {})
    }

    #[test]
    fn pieces_replay_the_same_world_as_core_in_one_go() {
        let mut w = Workspace::default();
        w.actions
            .extend([SessionAction::Step, SessionAction::NextEvent]);
        w.actions.extend((0..30).map(|_| SessionAction::Step));
        let whole = by_core(&w, &Lessons::default(), share::REPLAY_MAX_EVENTS).expect("replays");
        let (m, pieces) = in_pieces(Replay::untrusted(w.clone(), Lessons::default()), 5);
        let m = m.expect("within the bound");
        assert!(pieces > 3, "several pieces: {pieces}");
        assert_eq!(m.world.steps(), whole.steps());
        assert_eq!(m.world.now(), whole.now());
        assert_eq!(
            m.world.objects().count(),
            whole.objects().count(),
            "same objects"
        );
        assert_eq!(trace(&m), trace(&Model::from_workspace(w)));
    }

    #[test]
    fn a_scenario_session_follows_its_lesson_piece_by_piece() {
        let opened = std::rc::Rc::new(gallery::open("scale-up").expect("gallery scenario"));
        let lessons = Lessons::with(opened, 0);
        let w = Workspace {
            actions: vec![SessionAction::RunUntilConverged, SessionAction::Step],
            ..Workspace::default()
        };
        let (m, _) = in_pieces(Ok(Replay::trusted(w.clone(), lessons.clone())), 1);
        let m = m.expect("unbounded");
        let whole = Model::from_workspace_with(w, lessons);
        assert_eq!(trace(&m), trace(&whole));
        assert_eq!(
            m.lessons.progress_at(&m.world),
            whole.lessons.progress_at(&whole.world)
        );
    }

    #[test]
    fn the_event_bound_stops_the_replay_where_core_does() {
        let mut w = Workspace::fresh(Starter::Small);
        w.actions
            .extend((0..20).map(|_| SessionAction::apply(Input::Advance { ms: 60_000 })));
        let core = by_core(&w, &Lessons::default(), 10).map(|_| ());
        let (ours, _) = in_pieces(
            Ok(Replay::new(w, Lessons::default(), Some(10))),
            PIECE_EVENTS,
        );
        let ours = ours.map(|_| ());
        assert!(core.is_err(), "the bound is hit: {core:?}");
        assert_eq!(ours, core);
    }

    #[test]
    fn an_invalid_workspace_is_refused_before_anything_is_built() {
        let w = Workspace {
            cursor: Some(99),
            ..Workspace::default()
        };
        assert_eq!(
            Replay::untrusted(w.clone(), Lessons::default()).err(),
            w.validate().err()
        );
    }
}
