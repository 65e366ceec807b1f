//! The gallery and lesson panel: which scenario is open, how far the reader is through its
//! lesson, and the closing question. Progress is core's `LessonTrack`, advanced on the live
//! world after every action the reader takes; the panel shows the progress of the world being
//! looked at, so scrubbing the timeline back shows the step of that moment, and a fork continues
//! from it. This module only holds it and formats it.

use converge_core::api::ObjectKey;
use converge_core::engine::world::key_text;
use converge_core::engine::World;
use converge_core::scenario::{LessonProgress, LessonTrack};
use web_sys::HtmlTextAreaElement;
use yew::prelude::*;

use crate::gallery::{self, Card, Opened};
use crate::state::{Model, Msg};

/// Where the last scenario file the reader opened or pasted is kept (`?scenario=custom`).
pub const CUSTOM_TEXT_KEY: &str = "converge.scenario.custom";

/// The localStorage key of a session on scenario `id` (the starter's is `persist::STORAGE_KEY`).
pub fn storage_key(id: &str) -> String {
    format!("{}.scenario.{id}", crate::persist::STORAGE_KEY)
}

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
    pub opened: Option<Opened>,
    /// The reader's progress along the session's timeline.
    track: Option<LessonTrack>,
    /// The choice the reader picked for the closing question.
    pub answer: Option<usize>,
    /// The object the current step wants selected, not yet applied.
    pending_focus: Option<ObjectKey>,
}

impl Lessons {
    /// A session over `opened`, its lesson starting at `step` (counted from 0).
    pub fn with(opened: Opened, step: usize) -> Self {
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
            if m.lessons.gallery_open && m.lessons.cards.is_empty() {
                m.lessons.cards = gallery::cards();
            }
        }
        LessonMsg::Open(id) => match gallery::open(&id) {
            Ok(o) => m.open_scenario(Some(o), 0),
            Err(e) => m.lessons.error = Some(e),
        },
        LessonMsg::OpenText(text) => match gallery::open_text(&text) {
            Ok(o) => m.open_scenario(Some(o), 0),
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

/// The gallery: cards, a file picker and a paste box. `on_file` is the file input's handler
/// (the App reads the file).
pub fn view_gallery(m: &Model, send: &Callback<Msg>, on_file: Callback<Event>) -> Html {
    let l = &m.lessons;
    let toggle = send.reform(|_| Msg::Lesson(LessonMsg::ToggleGallery));
    html! {
        <section class="pane gallery" aria-labelledby="gallery-h">
            <div class="gallery-head">
                <h2 id="gallery-h">{ "Lessons" }</h2>
                <button id="gallery-toggle" aria-expanded={l.gallery_open.to_string()} aria-controls="gallery-body" onclick={toggle}>
                    { if l.gallery_open { "Hide the gallery" } else { "Open the gallery" } }
                </button>
                if let Some(o) = &l.opened {
                    <span class="muted" id="open-scenario">{ format!("Open: {}", o.scenario.name) }</span>
                    <button id="close-scenario" onclick={send.reform(|_| Msg::Lesson(LessonMsg::Close))}>{ "Back to the starter cluster" }</button>
                }
            </div>
            if let Some(e) = &l.error {
                <p class="outcome bad" role="alert" id="scenario-error">{ e.clone() }
                    <button onclick={send.reform(|_| Msg::Lesson(LessonMsg::DismissError))}>{ "Dismiss" }</button></p>
            }
            if l.gallery_open {
                <div id="gallery-body">
                    <ol class="cards">
                        { for l.cards.iter().map(|c| {
                            let id = c.id.to_owned();
                            html! {
                                <li class="card" data-scenario={c.id}>
                                    <h3>{ format!("{}. {}", c.number, c.title) }</h3>
                                    <p class="muted">{ c.summary.clone() }</p>
                                    <button class="primary" aria-label={format!("Open lesson {}: {}", c.number, c.title)}
                                        onclick={send.reform(move |_| Msg::Lesson(LessonMsg::Open(id.clone())))}>{ "Open" }</button>
                                </li>
                            }
                        }) }
                    </ol>
                    <div class="open-file">
                        <label for="scenario-file">{ "Open a scenario file (YAML or JSON) " }</label>
                        <input id="scenario-file" type="file" accept=".yaml,.yml,.json,application/json,text/yaml" onchange={on_file} />
                    </div>
                    <div class="paste">
                        <label for="scenario-paste">{ "…or paste one" }</label>
                        <textarea id="scenario-paste" rows="6" spellcheck="false" value={l.paste.clone()}
                            oninput={send.reform(|e: InputEvent| {
                                let t: HtmlTextAreaElement = e.target_unchecked_into();
                                Msg::Lesson(LessonMsg::PasteInput(t.value()))
                            })} />
                        <button id="open-pasted" onclick={{
                            let text = l.paste.clone();
                            send.reform(move |_| Msg::Lesson(LessonMsg::OpenText(text.clone())))
                        }}>{ "Open pasted scenario" }</button>
                    </div>
                </div>
            }
        </section>
    }
}

/// The lesson panel: the current step's narration, what completes it, and the closing check,
/// as they were at the moment shown (a scrubbed snapshot, else the live world).
pub fn view_lesson(m: &Model, send: &Callback<Msg>) -> Html {
    let l = &m.lessons;
    let (Some(o), Some(p)) = (&l.opened, l.progress_at(m.shown())) else {
        return html! {};
    };
    let Some(guide) = &o.guide else {
        return html! {
            <section class="pane lesson" aria-labelledby="lesson-h">
                <h2 id="lesson-h">{ o.scenario.name.clone() }</h2>
                <p>{ o.scenario.description.clone() }</p>
            </section>
        };
    };
    let total = guide.steps.len();
    let finished = p.finished(guide);
    html! {
        <section class="pane lesson" aria-labelledby="lesson-h" id="lesson">
            <div class="lesson-head">
                <h2 id="lesson-h">{ guide.title.clone() }</h2>
                <span id="lesson-progress" class="muted">{
                    if finished { format!("All {total} steps done") } else { format!("Step {} of {total}", p.step + 1) }
                }</span>
                <button id="lesson-restart" onclick={send.reform(|_| Msg::Lesson(LessonMsg::Restart))}>{ "Restart lesson" }</button>
            </div>
            if !guide.summary.is_empty() { <p class="summary">{ guide.summary.clone() }</p> }
            <ol class="steps" aria-label="Lesson steps">
                { for guide.steps.iter().enumerate().map(|(i, s)| {
                    let state = if i < p.step { "done" } else if i == p.step { "current" } else { "todo" };
                    html! {
                        <li class={classes!("step", state)} aria-current={(i == p.step).then_some("step")} data-step={i.to_string()}>
                            if i <= p.step {
                                <p class="do">{ s.text.clone() }</p>
                                if !s.watch.is_empty() { <p class="watch"><span class="muted">{ "Watch: " }</span>{ s.watch.clone() }</p> }
                                if i == p.step {
                                    <p class="waiting muted">{ "Continues when: " }{ s.waiting_for().join("; ") }</p>
                                    if let Some(f) = &s.focus { <p class="muted focus">{ format!("Selected: {}", key_text(f)) }</p> }
                                }
                            } else {
                                <p class="muted">{ format!("Step {}", i + 1) }</p>
                            }
                        </li>
                    }
                }) }
            </ol>
            if finished {
                <fieldset class="check" id="lesson-check">
                    <legend>{ guide.question.clone() }</legend>
                    { for guide.choices.iter().enumerate().map(|(i, c)| html! {
                        <label class="choice">
                            <input type="radio" name="lesson-answer" value={i.to_string()} checked={l.answer == Some(i)}
                                onchange={send.reform(move |_| Msg::Lesson(LessonMsg::Answer(i)))} />
                            { c.clone() }
                        </label>
                    }) }
                    if let Some(a) = l.answer {
                        if guide.is_right(a) {
                            <p id="lesson-done" class="outcome ok" role="status">{ "✓ Done. " }{ guide.explanation.clone() }</p>
                        } else {
                            <p id="lesson-wrong" class="outcome bad" role="status">{ "Not quite: look again at what you watched, and try another answer." }</p>
                        }
                    }
                </fieldset>
            }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Workspace;

    fn opened(id: &str) -> Model {
        let mut m = Model::default();
        m.update(Msg::Lesson(LessonMsg::Open(id.into())));
        m
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
