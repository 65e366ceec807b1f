//! The playground's state and its reducer: one [`Model`], changed only by the closed [`Msg`]
//! through [`Model::update`], which returns what the outside world must do as [`Effect`]
//! values (saving, the address bar, the host page, timers, focus) instead of doing it. No DOM
//! here, and no view: everything is testable natively, and `crate::platform` performs the
//! effects. The world is never edited directly: every change is a [`SessionAction`] performed
//! by core and logged, so replaying the log from the seed reproduces the session.

mod boot;
pub mod checkpoint;
mod effect;
pub mod embed;
pub mod gallery;
pub mod lesson;
mod mechanics;
mod replay;
pub mod terminal;

use std::collections::VecDeque;
use std::rc::Rc;

use converge_core::api::ObjectKey;
use converge_core::engine::{History, Input, StepReport, World};
use converge_core::json::Value;
use converge_core::parse;
use converge_core::view::session::{self, SessionAction, Starter};
use converge_core::view::share::ShareError;
pub use converge_core::view::share::{Target, Theme, Workspace};
use converge_core::view::tree::{Layout, Row, Tree};
use converge_core::view::why::WhyView;
use converge_core::view::{self, Syntax};

pub use boot::{Boot, Booting, Ready, StartingPage};
pub use effect::{Effect, Reaction};
use embed::EmbedConfig;
use gallery::Opened;
use lesson::{LessonMsg, Lessons};
use mechanics::fault_for;
pub use mechanics::{ApplyOutcome, ControllerRow, EditorDrift, TIMELINE_ENTRIES};
use replay::Replay;
pub use terminal::{Terminal, TerminalMsg};

use crate::persist;

/// Snapshots kept for scrubbing.
pub const HISTORY_STEPS: usize = 400;
/// Step reports kept for the timeline.
pub const REPORTS_KEPT: usize = 400;

/// The id of the "Why?" chain's heading, which takes focus when a chain opens.
pub const WHY_HEADING: &str = "why-h";

/// Principals the user can act as.
pub const PRINCIPALS: &[&str] = &[
    "alice",
    "bob",
    "app",
    "admin",
    "system:serviceaccount:kube-system:deployment-controller",
    "system:serviceaccount:kube-system:replicaset-controller",
    "system:kube-scheduler",
    "system:node:node-1",
];

/// Play speeds, in simulated milliseconds per wall-clock second; `None` is "max".
pub const SPEEDS: &[(&str, Option<u64>)] = &[
    ("0.25x", Some(250)),
    ("0.5x", Some(500)),
    ("1x", Some(1000)),
    ("2x", Some(2000)),
    ("4x", Some(4000)),
    ("8x", Some(8000)),
    ("16x", Some(16000)),
    ("max", None),
];
/// Wall-clock milliseconds between play ticks.
pub const TICK_MS: u32 = 100;
/// Events per tick at "max".
pub const MAX_EVENTS_PER_TICK: usize = 25;

/// A fault the fault panel can inject.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultMsg {
    Pause(String),
    Resume(String),
    Crash(String),
    Restart(String),
    WatchLatency(u64),
    ImagePull {
        node: String,
        failing: bool,
    },
    /// A machine joins: the next free `node-<n>`, 4 CPUs and 8Gi like the starters' nodes.
    AddNode,
    /// A machine leaves.
    RemoveNode(String),
}

/// What a "Why?" button asks about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WhyOf {
    /// A field path (`status.readyReplicas`, `status.conditions[type=Available].status`).
    Field(String),
    /// The tree badge: kstatus' verdict over the object as last written.
    Badge,
}

/// How the timeline draws its steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimelineView {
    /// The sequence diagram (`view::sequence`).
    #[default]
    Sequence,
    /// One column of cards per actor (`view::timeline`).
    Cards,
}

/// Everything that can happen to the playground: the reader's input, the play timer, the page
/// (share link, help dialog, leaving) and the host page of an embed.
#[derive(Clone, Debug, PartialEq)]
pub enum Msg {
    Step,
    NextEvent,
    RunUntilConverged,
    TogglePlay,
    /// A timer tick while playing.
    Tick,
    SetSpeed(usize),
    Reset,
    Select(ObjectKey),
    ToggleGroup(ObjectKey),
    /// List another page of a big group's children.
    ShowMore(ObjectKey),
    /// The fault panel's RBAC switch (logged as an action, so replays and links keep it).
    SetRbacEnforced(bool),
    EditorInput(String),
    SetSyntax(Syntax),
    Format,
    Reload,
    Apply,
    SetPrincipal(String),
    SetTarget(Target),
    /// Look at the world after this step (None: the live world).
    Scrub(Option<u64>),
    /// Continue from the scrubbed step, dropping what came after.
    Fork,
    SelectEntry(Option<(u64, u64, String)>),
    /// A "Why?" button: open the chain of this object's field in the shown world.
    Why(ObjectKey, WhyOf),
    CloseWhy,
    /// A hop of the open chain: scrub to its step and select its object.
    FollowHop(u64, ObjectKey),
    SetTimelineView(TimelineView),
    /// Draw the watch deliveries that queued nothing (false: fold them into a count).
    ShowIdleDeliveries(bool),
    Fault(FaultMsg),
    SetTheme(Theme),
    DismissNotice,
    /// The newcomer's "try an edit" hint, closed by its button.
    DismissHint,
    /// The gallery and lesson panel ([`lesson`]).
    Lesson(LessonMsg),
    /// The Share button: put a share link in the address bar and show it.
    Share,
    /// The platform put the share link in the address bar; this is the full link.
    ShareLinkReady(String),
    /// The debounce after a change while a share link shows: the address bar follows.
    SyncHash,
    /// The help dialog is asked for (its button or `?`).
    ShowHelp,
    /// The help dialog closed (its button or Escape): focus goes back where it was.
    HelpClosed,
    /// The page is going away (reload, close, navigation): save now, even mid-play.
    PageHidden,
    /// A line for the notice bar (what the platform could not do).
    Notice(String),
    /// `gallery.json` arrived (its text), or could not be fetched (why).
    GalleryLoaded(Result<String, String>),
    /// The app has drawn itself and listens (embed mode tells the host page).
    Started,
    /// A postMessage from the host page (embed mode): its data as JSON and its origin. Replies
    /// go to its sender ([`Effect::ReplyToSender`]).
    FromHost {
        data: Value,
        origin: String,
    },
    /// The embedded page's content height after a render, in CSS pixels.
    ContentHeight(i32),
    /// The terminal pane ([`terminal`]).
    Terminal(TerminalMsg),
}

/// The whole playground: the session (world, history, action log, editor) and the page around
/// it.
pub struct Model {
    pub starter: Starter,
    pub seed: u64,
    pub actions: Vec<SessionAction>,
    pub world: World,
    pub history: History,
    pub reports: VecDeque<(u64, StepReport)>,
    pub cursor: Option<u64>,
    pub playing: bool,
    pub speed: usize,
    pub selected: Option<ObjectKey>,
    pub layout: Layout,
    /// The shown world's object tree, refreshed incrementally after every update.
    pub tree: Tree,
    /// The tree's visible rows for `layout` (shared with the tree panel's props).
    pub rows: Rc<Vec<Row>>,
    pub editor_text: String,
    pub syntax: Syntax,
    pub diagnostics: Vec<parse::ParseError>,
    pub principal: String,
    pub target: Target,
    pub outcome: Option<ApplyOutcome>,
    pub selected_entry: Option<(u64, u64, String)>,
    /// The open "Why?" chain (or why it could not be walked), kept while its hops are followed.
    pub why: Option<Rc<Result<WhyView, String>>>,
    pub theme: Theme,
    pub notice: Option<String>,
    /// The newcomer's hint (what to try first) is shown. `Model::boot` sets it on a browser's
    /// first starter session; the first edit applied, or its button, ends it for good.
    pub first_edit_hint: bool,
    /// The step the session was read back at from a checkpoint (boot's `Stage::FromCheckpoint`):
    /// its report was not kept, so the timeline says so there instead of "nothing happened".
    pub restored_at: Option<u64>,
    /// The open scenario (None: the starter cluster) and the reader's lesson progress.
    pub lessons: Lessons,
    /// What belongs to the page rather than the session; it outlives opening a scenario.
    pub page: PageState,
    /// The terminal pane: its scrollback and history belong to this tab, not to the session.
    pub terminal: Terminal,
}

/// The page around the session: embed mode, the share link and what the address bar and the
/// host page were last told.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageState {
    /// Embed mode (`?embed`): minimal chrome, scoped storage, the host message API.
    pub embed: Option<EmbedConfig>,
    /// The share link shown under the header, once Share was pressed.
    pub share_url: Option<String>,
    /// The scenario the address bar and the custom-scenario key were last set for.
    pub url_scenario: Option<String>,
    /// The content height last reported to the host page.
    pub reported_height: i32,
    /// The timeline's form: the sequence diagram or the cards.
    pub timeline_view: TimelineView,
    /// The sequence diagram draws the deliveries that queued nothing.
    pub idle_deliveries: bool,
    /// The gallery's texts (fetched by the browser's module: `gallery`).
    pub gallery: gallery::GalleryTexts,
    /// What asked for a gallery scenario before its texts were there; done when they arrive.
    pub deferred: Option<Deferred>,
}

/// A request for a gallery scenario that waits for the gallery's texts.
#[derive(Clone, Debug, PartialEq)]
pub enum Deferred {
    /// A card's Open.
    Lesson(String),
    /// An embedding host page's `load`, answered once it is done.
    Host { data: Value, origin: String },
}

impl Default for Model {
    fn default() -> Self {
        Model::from_workspace(Workspace::default())
    }
}

impl Model {
    /// Rebuilds the session by replaying the workspace's actions from its seed.
    pub fn from_workspace(w: Workspace) -> Self {
        Self::from_workspace_with(w, Lessons::default())
    }

    /// Rebuilds the session on the open scenario's world (else the starter's), following the
    /// lesson through the replayed actions. For workspaces built in this tab.
    pub fn from_workspace_with(w: Workspace, lessons: Lessons) -> Self {
        match Replay::trusted(w, lessons).run() {
            Ok(replayed) => replayed.finish(),
            Err(e) => unreachable!("a replay without an event bound cannot exceed it: {e}"),
        }
    }

    /// Rebuilds a session read from storage or a link: validated and replayed within
    /// [`converge_core::view::share::REPLAY_MAX_EVENTS`], so a hostile or damaged workspace is
    /// an error, not a hang.
    pub fn restore(w: Workspace, lessons: Lessons) -> Result<Self, ShareError> {
        Ok(Replay::untrusted(w, lessons)?.run()?.finish())
    }

    /// The world the actions replay on: the open scenario's at t=0, else the starter's.
    pub(super) fn base_world(w: &Workspace, lessons: &Lessons) -> World {
        let mut world = match &lessons.opened {
            Some(o) => o.base.clone(),
            None => World::new(w.starter.config(w.seed)),
        };
        // The timeline shows at most TIMELINE_ENTRIES events; a run until converged of the
        // large starter has about 40,000, each holding the object versions it wrote.
        world.keep_reports_short(TIMELINE_ENTRIES);
        world
    }

    fn assemble(
        w: Workspace,
        world: World,
        history: History,
        reports: VecDeque<(u64, StepReport)>,
        mut lessons: Lessons,
    ) -> Self {
        let focus = lessons.take_focus();
        let terminal = Terminal::from_log(&w.actions);
        let mut m = Model {
            starter: w.starter,
            seed: w.seed,
            actions: w.actions,
            world,
            history,
            reports,
            cursor: w.cursor,
            playing: false,
            speed: w.speed.min(SPEEDS.len() - 1),
            selected: w.selected,
            layout: Layout::default(),
            tree: Tree::default(),
            rows: Rc::default(),
            editor_text: w.editor_text,
            syntax: w.syntax,
            diagnostics: Vec::new(),
            principal: w.principal,
            target: w.target,
            outcome: None,
            selected_entry: None,
            why: None,
            theme: w.theme,
            notice: None,
            first_edit_hint: false,
            restored_at: None,
            lessons,
            page: PageState::default(),
            terminal,
        };
        if m.cursor.is_some_and(|c| m.history.at(c).is_none()) {
            m.cursor = None;
        }
        if m.editor_text.is_empty() {
            let key = focus.or_else(|| m.default_selection());
            m.load(key);
        } else {
            m.check_editor();
        }
        m.refresh_tree();
        m
    }

    pub fn workspace(&self) -> Workspace {
        Workspace {
            v: Workspace::VERSION,
            starter: self.starter,
            seed: self.seed,
            actions: self.actions.clone(),
            cursor: self.cursor,
            selected: self.selected.clone(),
            editor_text: self.editor_text.clone(),
            syntax: self.syntax,
            principal: self.principal.clone(),
            target: self.target,
            theme: self.theme,
            speed: self.speed,
        }
    }

    /// The world being looked at: the scrubbed snapshot, else the live one.
    pub fn shown(&self) -> &World {
        self.cursor
            .and_then(|c| self.history.at(c))
            .unwrap_or(&self.world)
    }

    /// The shown world one step earlier, for "what changed".
    pub fn previous(&self) -> Option<&World> {
        let step = self.shown().steps();
        step.checked_sub(1).and_then(|s| self.history.at(s))
    }

    /// The effects to perform before `update(msg)` runs: a step is measured from before the
    /// reducer to the patched DOM (tests/e2e/perf.test.mjs and engine.test.mjs read
    /// `converge-step`).
    pub fn before_update(&self, msg: &Msg) -> Vec<Effect> {
        let measured = match msg {
            Msg::Step | Msg::NextEvent | Msg::RunUntilConverged => true,
            Msg::FromHost { data, origin } => self.host_asks_for_a_step(data, origin),
            _ => false,
        };
        if measured {
            vec![Effect::MarkStepStart]
        } else {
            Vec::new()
        }
    }

    /// Applies one message: whether the view must re-render, and the effects to perform.
    pub fn update(&mut self, msg: Msg) -> Reaction {
        match msg {
            Msg::Share => Reaction::effects(vec![Effect::PublishShareLink {
                hash: persist::to_hash(&self.workspace()),
            }]),
            Msg::ShareLinkReady(url) => {
                self.page.share_url = Some(url);
                Reaction::render()
            }
            Msg::SyncHash => match self.page.share_url {
                Some(_) => Reaction::effects(vec![Effect::ReplaceHash {
                    hash: persist::to_hash(&self.workspace()),
                }]),
                None => Reaction::none(),
            },
            Msg::ShowHelp => Reaction::effects(vec![Effect::OpenHelpDialog]),
            Msg::HelpClosed => Reaction::effects(vec![Effect::ReturnFocusAfterHelp]),
            Msg::PageHidden => Reaction::effects(vec![self.save()]),
            Msg::GalleryLoaded(json) => self.gallery_loaded(json),
            Msg::Started => Reaction::effects(self.announce_to_host()),
            Msg::FromHost { data, origin } => self.on_host_message(&data, &origin),
            Msg::ContentHeight(px) => Reaction::effects(self.report_height(px)),
            Msg::Terminal(TerminalMsg::Toggle) => self.toggle_terminal(),
            msg => self.update_session(msg),
        }
    }

    /// A message that may change the session, and what follows from the change: the hint
    /// remembered, the theme applied, the play timer, the address bar, the
    /// save (play ticks are not saved one by one) and the share link following.
    fn update_session(&mut self, msg: Msg) -> Reaction {
        let mut effects = Vec::new();
        let theme_before = self.theme;
        let playing_before = self.playing;
        let is_tick = matches!(msg, Msg::Tick);
        let opens_why = matches!(msg, Msg::Why(..));
        let hinted = self.first_edit_hint;
        let changed = self.reduce(msg);
        if opens_why {
            effects.push(Effect::FocusAfterRender(WHY_HEADING));
        }
        if changed {
            self.follow_watch();
            self.refresh_tree();
        }
        if hinted && !self.first_edit_hint {
            effects.push(Effect::MarkHintDone);
        }
        if self.theme != theme_before {
            effects.push(Effect::ApplyTheme(self.theme));
        }
        match (playing_before, self.playing) {
            (false, true) => effects.push(Effect::StartTicking),
            (true, false) => effects.push(Effect::StopTicking),
            _ => {}
        }
        self.sync_scenario_url(&mut effects);
        if changed {
            if !is_tick || !self.playing {
                effects.push(self.save());
            }
            if self.page.share_url.is_some() {
                effects.push(Effect::ScheduleHashSync);
            }
        }
        Reaction {
            render: changed,
            effects,
        }
    }

    /// The gallery's texts arrived: the cards are drawn, and a deferred Open or host `load` is
    /// done now.
    fn gallery_loaded(&mut self, json: Result<String, String>) -> Reaction {
        let deferred = self.page.deferred.take();
        match json.and_then(|j| gallery::GalleryTexts::from_json(&j)) {
            Ok(texts) => self.page.gallery = texts,
            Err(e) => {
                self.notice = Some(format!("The gallery could not be loaded ({e})."));
                return Reaction::render();
            }
        }
        self.lessons.fill_cards(&self.page.gallery);
        match deferred {
            Some(Deferred::Lesson(id)) => self.update(Msg::Lesson(LessonMsg::Open(id))),
            Some(Deferred::Host { data, origin }) => self.on_host_message(&data, &origin),
            None => Reaction::render(),
        }
    }

    /// The localStorage key of the current session: per embed, per scenario, or the starter's.
    pub fn storage_key(&self) -> String {
        match (&self.page.embed, self.lessons.id()) {
            (Some(c), id) => c.storage_key(id),
            (None, Some(id)) => persist::scenario_storage_key(id),
            (None, None) => persist::STORAGE_KEY.to_owned(),
        }
    }

    fn save(&self) -> Effect {
        Effect::SaveWorkspace {
            key: self.storage_key(),
            workspace: Box::new(self.workspace()),
            worth_checkpoint: self.page.embed.is_none()
                && self.lessons.opened.is_none()
                && self.world.trace().len() as u64 >= checkpoint::WORTH_EVENTS,
        }
    }

    /// After a scenario was opened or closed: `?scenario=<id>` in the address bar (so a reload
    /// or a share link opens it again), and the opened file's text kept for `custom`.
    fn sync_scenario_url(&mut self, effects: &mut Vec<Effect>) {
        let id = self.lessons.id().map(str::to_owned);
        if id == self.page.url_scenario || self.page.embed.is_some() {
            return;
        }
        if let Some(o) = &self.lessons.opened {
            if o.id == gallery::CUSTOM_ID {
                effects.push(Effect::KeepCustomScenario {
                    text: o.text.clone(),
                });
            }
        }
        self.page.share_url = None;
        effects.push(Effect::ShowScenarioInUrl {
            scenario: id.clone(),
        });
        self.page.url_scenario = id;
    }

    /// Brings the tree up to date with the shown world: only changed objects are recomputed.
    fn refresh_tree(&mut self) {
        let shown = self
            .cursor
            .and_then(|c| self.history.at(c))
            .unwrap_or(&self.world);
        self.tree.refresh(shown);
        self.rows = Rc::new(self.tree.rows(&self.layout));
    }

    fn reduce(&mut self, msg: Msg) -> bool {
        match msg {
            Msg::Step => self.perform(SessionAction::Step),
            Msg::NextEvent => self.perform(SessionAction::NextEvent),
            Msg::RunUntilConverged => self.perform(SessionAction::RunUntilConverged),
            Msg::TogglePlay => self.playing = !self.playing,
            Msg::Tick if self.playing => self.tick(),
            Msg::Tick => return false,
            Msg::SetSpeed(i) => self.speed = i.min(SPEEDS.len() - 1),
            Msg::Reset => {
                let opened = self.lessons.opened.clone();
                self.open_scenario(opened, 0);
            }
            Msg::Select(key) => self.load(Some(key)),
            Msg::ToggleGroup(key) => self.layout.toggle(&key),
            Msg::ShowMore(key) => self.layout.show_more(&key),
            Msg::SetRbacEnforced(enforced) => self.perform(session::set_rbac(enforced)),
            Msg::EditorInput(text) => {
                self.editor_text = text;
                self.check_editor();
            }
            Msg::SetSyntax(s) => {
                self.syntax = s;
                if let Ok(text) = view::format(&self.editor_text, s) {
                    self.editor_text = text;
                }
                self.check_editor();
            }
            Msg::Format => match view::format(&self.editor_text, self.syntax) {
                Ok(text) => {
                    self.editor_text = text;
                    self.diagnostics.clear();
                }
                Err(e) => self.diagnostics = vec![e],
            },
            Msg::Reload => self.load(self.selected.clone()),
            Msg::Apply => self.apply(),
            Msg::SetPrincipal(p) => self.principal = p,
            Msg::SetTarget(t) => self.target = t,
            Msg::Scrub(step) => {
                self.playing = false;
                self.cursor = step.filter(|s| *s < self.world.steps());
            }
            Msg::Fork => self.fork(),
            Msg::SelectEntry(e) => self.selected_entry = e,
            Msg::Why(key, of) => {
                self.open_why(key, of);
                return true;
            }
            Msg::CloseWhy => self.why = None,
            Msg::FollowHop(step, key) => self.follow_hop(step, key),
            Msg::SetTimelineView(v) => self.page.timeline_view = v,
            Msg::ShowIdleDeliveries(on) => self.page.idle_deliveries = on,
            Msg::Fault(f) => {
                let fault = fault_for(f, &self.node_names());
                self.perform(SessionAction::apply(Input::Fault { fault }))
            }
            Msg::SetTheme(t) => self.theme = t,
            Msg::DismissNotice => self.notice = None,
            Msg::Notice(text) => self.notice = Some(text),
            Msg::DismissHint => self.first_edit_hint = false,
            Msg::Lesson(m) => lesson::update(self, m),
            Msg::Terminal(m) => return self.on_terminal(m),
            // The page's messages never reach the session reducer (see `update`).
            Msg::Share
            | Msg::ShareLinkReady(_)
            | Msg::SyncHash
            | Msg::ShowHelp
            | Msg::HelpClosed
            | Msg::PageHidden
            | Msg::GalleryLoaded(_)
            | Msg::Started
            | Msg::FromHost { .. }
            | Msg::ContentHeight(_) => return false,
        }
        true
    }

    /// Starts a fresh session on `opened` (None: the starter cluster) with its lesson at `step`,
    /// keeping the reader's theme, principal, syntax and speed.
    pub fn open_scenario(&mut self, opened: Option<Rc<Opened>>, step: usize) {
        let fresh = Workspace {
            theme: self.theme,
            principal: self.principal.clone(),
            syntax: self.syntax,
            speed: self.speed,
            ..Workspace::fresh(self.starter)
        };
        let (w, lessons) = match opened {
            Some(o) => {
                let seed = o.scenario.seed;
                (
                    Workspace {
                        seed,
                        actions: Vec::new(),
                        ..fresh
                    },
                    Lessons::with(o, step),
                )
            }
            None => (fresh, Lessons::default()),
        };
        let gallery_open = self.lessons.gallery_open;
        let cards = std::mem::take(&mut self.lessons.cards);
        let page = std::mem::take(&mut self.page);
        let mut terminal = std::mem::take(&mut self.terminal);
        terminal.watch = None;
        *self = Model::from_workspace_with(w, lessons);
        self.terminal = terminal;
        self.lessons.gallery_open = gallery_open;
        self.lessons.cards = cards;
        self.page = page;
    }
}
