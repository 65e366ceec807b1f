//! The lesson state behind the gallery and lesson panel: which scenario is open, how far the reader is through its
//! lesson, and the closing question. Progress is core's `LessonTrack`, advanced on the live
//! world after every action the reader takes; the panel shows the progress of the world being
//! looked at, so scrubbing the timeline back shows the step of that moment, and a fork continues
//! from it. This module holds it and changes it; `crate::components::{gallery, lesson}` format
//! it.

use std::rc::Rc;

use converge_core::api::ObjectKey;
use converge_core::engine::World;
use converge_core::scenario::{LessonProgress, LessonTrack};

use super::gallery::{self, Card, Opened};
use super::Model;

/// What the reader does in the gallery and lesson panel.
#[derive(Clone, Debug, PartialEq)]
pub enum LessonMsg {
    ToggleGallery,
    /// Open a gallery scenario by id.
    Open(String),
    /// Open a scenario file's text (from a file the reader picked, or the paste box).
    OpenText(String),
    PasteInput(String),
    /// Back to the starter cluster.
    Close,
    Answer(usize),
    /// Start the scenario and its lesson over.
    Restart,
    DismissError,
}

/// The gallery/lesson part of the model.
#[derive(Clone, Debug, Default)]
pub struct Lessons {
    pub gallery_open: bool,
    /// Filled the first time the gallery is shown.
    pub cards: Vec<Card>,
    pub paste: String,
    pub error: Option<String>,
    pub opened: Option<Rc<Opened>>,
    /// The reader's progress along the session's timeline.
    track: Option<LessonTrack>,
    /// The choice the reader picked for the closing question.
    pub answer: Option<usize>,
    /// The object the current step wants selected, not yet applied.
    pending_focus: Option<ObjectKey>,
}

impl Lessons {
    /// A session over `opened`, its lesson starting at `step` (counted from 0).
    pub fn with(opened: impl Into<Rc<Opened>>, step: usize) -> Self {
        let opened = opened.into();
        let track = opened
            .guide
            .as_ref()
            .map(|g| LessonTrack::start(&opened.base, step.min(g.steps.len().saturating_sub(1))));
        let mut l = Lessons {
            opened: Some(opened),
            track,
            ..Lessons::default()
        };
        l.pending_focus = l.focus();
        l
    }

    /// The scenario id of the session (None: the starter cluster).
    pub fn id(&self) -> Option<&str> {
        self.opened.as_ref().map(|o| o.id.as_str())
    }

    /// Progress on the live world (the latest step of the session).
    pub fn progress(&self) -> Option<&LessonProgress> {
        self.track.as_ref().map(LessonTrack::live)
    }

    /// Progress as it was when `shown` (the live world or a scrubbed snapshot) was live.
    pub fn progress_at(&self, shown: &World) -> Option<LessonProgress> {
        self.track.as_ref().map(|t| t.at(shown))
    }

    /// The object the current step is about.
    pub fn focus(&self) -> Option<ObjectKey> {
        let guide = self.opened.as_ref()?.guide.as_ref()?;
        let step = self.progress()?.step;
        guide.steps.get(step)?.focus.clone()
    }

    /// Advances the lesson on the live world; remembers the new step's focus to select.
    pub fn follow(&mut self, world: &World) {
        let (Some(o), Some(t)) = (&self.opened, &mut self.track) else {
            return;
        };
        let Some(guide) = &o.guide else {
            return;
        };
        if t.follow(guide, world) > 0 {
            self.pending_focus = self.focus();
        }
    }

    /// The session forked at `world`, a snapshot: the lesson continues from its progress then.
    pub fn fork(&mut self, world: &World) {
        if let Some(t) = &mut self.track {
            t.fork(world);
        }
    }

    /// Draws the gallery's cards the first time it is shown with its texts there.
    pub fn fill_cards(&mut self, texts: &gallery::GalleryTexts) {
        if self.gallery_open && self.cards.is_empty() {
            self.cards = gallery::cards(texts);
        }
    }

    /// The object to select now, once.
    pub fn take_focus(&mut self) -> Option<ObjectKey> {
        self.pending_focus.take()
    }

    /// Every step done and the question answered correctly.
    pub fn done(&self) -> bool {
        match (&self.opened, self.progress(), self.answer) {
            (Some(o), Some(p), Some(a)) => o
                .guide
                .as_ref()
                .is_some_and(|g| p.finished(g) && g.is_right(a)),
            _ => false,
        }
    }
}

/// Handles a [`LessonMsg`]; opening or closing a scenario rebuilds the session.
pub fn update(m: &mut Model, msg: LessonMsg) {
    match msg {
        LessonMsg::ToggleGallery => {
            m.lessons.gallery_open = !m.lessons.gallery_open;
            m.lessons.fill_cards(&m.page.gallery);
        }
        LessonMsg::Open(id) if !m.page.gallery.loaded() => {
            m.page.deferred = Some(super::Deferred::Lesson(id));
        }
        LessonMsg::Open(id) => match gallery::open_in(&m.page.gallery, &id) {
            Ok(o) => m.open_scenario(Some(Rc::new(o)), 0),
            Err(e) => m.lessons.error = Some(e),
        },
        LessonMsg::OpenText(text) => match gallery::open_text(&text) {
            Ok(o) => m.open_scenario(Some(Rc::new(o)), 0),
            Err(e) => {
                m.lessons.error = Some(format!("The scenario could not be opened: {e}"));
                m.lessons.paste = text;
                m.lessons.gallery_open = true;
            }
        },
        LessonMsg::PasteInput(t) => m.lessons.paste = t,
        LessonMsg::Close => m.open_scenario(None, 0),
        LessonMsg::Answer(i) => m.lessons.answer = Some(i),
        LessonMsg::Restart => {
            let opened = m.lessons.opened.clone();
            m.open_scenario(opened, 0);
        }
        LessonMsg::DismissError => m.lessons.error = None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Msg, Workspace};
    use converge_core::engine::world::key_text;

    fn opened(id: &str) -> Model {
        let mut m = Model::default();
        m.update(Msg::Lesson(LessonMsg::Open(id.into())));
        m
    }

    #[test]
    fn a_card_opened_before_the_gallerys_texts_arrive_opens_when_they_do() {
        let mut m = Model::default();
        m.page.gallery = gallery::GalleryTexts::not_loaded();
        m.update(Msg::Lesson(LessonMsg::ToggleGallery));
        assert!(m.lessons.cards.is_empty());
        m.update(Msg::Lesson(LessonMsg::Open("paused-controller".into())));
        assert_eq!(m.lessons.id(), None, "nothing to open yet");
        let json = serde_json::to_string(
            &converge_core::scenario::gallery::GALLERY
                .iter()
                .map(|e| (e.id, e.text))
                .collect::<std::collections::BTreeMap<_, _>>(),
        )
        .unwrap_or_default();
        m.update(Msg::GalleryLoaded(Ok(json)));
        assert_eq!(m.lessons.id(), Some("paused-controller"));
        assert!(
            m.page.gallery.loaded(),
            "the texts outlive opening a scenario"
        );
        assert_eq!(m.page.deferred, None);
    }

    #[test]
    fn a_gallery_that_cannot_be_fetched_says_so() {
        let mut m = Model::default();
        m.page.gallery = gallery::GalleryTexts::not_loaded();
        m.update(Msg::GalleryLoaded(Err("offline?".into())));
        assert_eq!(
            m.notice.as_deref(),
            Some("The gallery could not be loaded (offline?).")
        );
        m.update(Msg::GalleryLoaded(Ok("{\"scale-up\": \"\"}".into())));
        assert!(!m.page.gallery.loaded());
        assert!(m
            .notice
            .as_deref()
            .is_some_and(|n| n.contains("has no \"feedback-loop\"")));
    }

    #[test]
    fn opening_a_gallery_scenario_starts_its_world_and_its_lesson() {
        let m = opened("paused-controller");
        assert_eq!(m.lessons.id(), Some("paused-controller"));
        assert_eq!(m.world.now().as_ms(), 0);
        assert!(m.actions.is_empty());
        assert_eq!(m.lessons.progress().map(|p| p.step), Some(0));
        assert_eq!(
            m.selected.as_ref().map(key_text),
            Some("deployments default/web".to_owned())
        );
    }

    #[test]
    fn the_lesson_advances_as_the_reader_steps_and_is_done_after_the_right_answer() {
        let mut m = opened("paused-controller");
        let mut guard = 0;
        while m.lessons.progress().is_none_or(|p| p.step != 3) && guard < 2_000 {
            m.update(Msg::NextEvent);
            guard += 1;
        }
        assert_eq!(m.lessons.progress().map(|p| p.step), Some(3));
        assert!(!m.lessons.done());
        m.update(Msg::Lesson(LessonMsg::Answer(0)));
        assert!(
            !m.lessons.done(),
            "a wrong answer does not finish the lesson"
        );
        m.update(Msg::Lesson(LessonMsg::Answer(1)));
        assert!(m.lessons.done());
    }

    #[test]
    fn a_reload_replays_the_actions_on_the_scenario_and_restores_progress() {
        let mut m = opened("scale-up");
        for _ in 0..40 {
            m.update(Msg::NextEvent);
        }
        let step = m.lessons.progress().map(|p| p.step);
        assert!(step.is_some_and(|s| s > 0), "{step:?}");
        let again = Model::from_workspace_with(
            m.workspace(),
            Lessons::with(
                gallery::open("scale-up").unwrap_or_else(|e| panic!("{e}")),
                0,
            ),
        );
        assert_eq!(again.world.trace_text(), m.world.trace_text());
        assert_eq!(again.lessons.progress().map(|p| p.step), step);
    }

    #[test]
    fn scrubbing_back_shows_the_earlier_step_and_a_fork_continues_from_it() {
        let mut m = opened("scale-up");
        let mut guard = 0;
        while m.lessons.progress().is_none_or(|p| p.step == 0) && guard < 2_000 {
            m.update(Msg::NextEvent);
            guard += 1;
        }
        let moved_at = m.world.steps();
        assert!(m.lessons.progress().is_some_and(|p| p.step >= 1));
        m.update(Msg::Scrub(Some(moved_at - 1)));
        let shown = m.lessons.progress_at(m.shown()).map(|p| p.step);
        assert_eq!(
            shown,
            Some(0),
            "the panel shows step 1 of the scrubbed moment"
        );
        m.update(Msg::Scrub(None));
        assert!(m
            .lessons
            .progress_at(m.shown())
            .is_some_and(|p| p.step >= 1));
        m.update(Msg::Scrub(Some(moved_at - 1)));
        m.update(Msg::Fork);
        assert_eq!(m.lessons.progress().map(|p| p.step), Some(0));
        m.update(Msg::NextEvent);
        assert_eq!(m.world.steps(), moved_at);
        assert!(
            m.lessons.progress().is_some_and(|p| p.step >= 1),
            "the same next event completes step 1 again"
        );
        // The forked session's log replays to the same world (a reload, a share link).
        let again = Model::from_workspace_with(
            m.workspace(),
            Lessons::with(
                gallery::open("scale-up").unwrap_or_else(|e| panic!("{e}")),
                0,
            ),
        );
        assert_eq!(again.world.trace_text(), m.world.trace_text());
    }

    #[test]
    fn reset_keeps_the_scenario_and_restarts_the_lesson() {
        let mut m = opened("scale-up");
        m.update(Msg::RunUntilConverged);
        m.update(Msg::Reset);
        assert_eq!(m.lessons.id(), Some("scale-up"));
        assert_eq!(m.world.now().as_ms(), 0);
        assert_eq!(m.lessons.progress().map(|p| p.step), Some(0));
    }

    #[test]
    fn a_bad_pasted_scenario_keeps_the_session_and_shows_the_error() {
        let mut m = Model::default();
        let before = m.world.trace_text();
        m.update(Msg::Lesson(LessonMsg::OpenText("name: [".into())));
        assert!(
            m.lessons
                .error
                .as_deref()
                .is_some_and(|e| e.starts_with("The scenario could not be opened: line ")),
            "{:?}",
            m.lessons.error
        );
        assert_eq!(m.world.trace_text(), before);
        assert_eq!(m.lessons.id(), None);
        let _ = Workspace::default();
    }

    #[test]
    fn closing_goes_back_to_the_starter() {
        let mut m = opened("scale-up");
        m.update(Msg::Lesson(LessonMsg::Close));
        assert_eq!(m.lessons.id(), None);
        assert!(m.world.object_count() > 0);
    }
}
