//! The playground's state and its reducer. No DOM here: everything is testable natively. The
//! world is never edited directly: every change is an [`SessionAction`] performed by core and logged,
//! so replaying the log from the seed reproduces the session.

use std::collections::VecDeque;

use converge_core::api::{ApiRequest, ObjectKey};
use converge_core::engine::{Fault, History, Input, StepReport, World};
use converge_core::parse;
use converge_core::view::session::{self, SessionAction, Starter};
use converge_core::view::share::{self, ShareError};
pub use converge_core::view::share::{Target, Theme, Workspace};
use converge_core::view::tree::{Layout, Row, Tree};
use converge_core::view::{self, Syntax};

/// Snapshots kept for scrubbing.
pub const HISTORY_STEPS: usize = 400;
/// Step reports kept for the timeline.
pub const REPORTS_KEPT: usize = 400;

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

/// kube's answer to the last Apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyOutcome {
    pub code: u16,
    pub message: String,
}

impl ApplyOutcome {
    pub fn is_error(&self) -> bool {
        self.code >= 400
    }

    /// kubectl's way of printing it.
    pub fn text(&self) -> String {
        let reason = match self.code {
            403 => "Forbidden",
            404 => "NotFound",
            409 => "Conflict",
            422 => "Invalid",
            400 => "BadRequest",
            _ => "",
        };
        match (self.is_error(), reason) {
            (false, _) => format!("{} OK: applied", self.code),
            (true, "") => format!("Error from server ({}): {}", self.code, self.message),
            (true, r) => format!("Error from server ({r}): {}", self.message),
        }
    }
}

/// A fault the fault panel can inject.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultMsg {
    Pause(String),
    Resume(String),
    Crash(String),
    Restart(String),
    WatchLatency(u64),
    ImagePull { node: String, failing: bool },
}

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
    Fault(FaultMsg),
    SetTheme(Theme),
    DismissNotice,
    /// The newcomer's "try an edit" hint, closed by its button.
    DismissHint,
    /// The gallery and lesson panel (`crate::lesson`).
    Lesson(crate::lesson::LessonMsg),
}

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
    /// The tree's visible rows for `layout`.
    pub rows: Vec<Row>,
    pub editor_text: String,
    pub syntax: Syntax,
    pub diagnostics: Vec<parse::ParseError>,
    pub principal: String,
    pub target: Target,
    pub outcome: Option<ApplyOutcome>,
    pub selected_entry: Option<(u64, u64, String)>,
    pub theme: Theme,
    pub notice: Option<String>,
    /// The newcomer's hint (what to try first) is shown. The app sets it on a browser's first
    /// starter session; the first edit applied, or its button, ends it for good.
    pub first_edit_hint: bool,
    /// The open scenario (None: the starter cluster) and the reader's lesson progress.
    pub lessons: crate::lesson::Lessons,
}

impl Default for Model {
    fn default() -> Self {
        Model::from_workspace(Workspace::default())
    }
}

impl Model {
    /// Rebuilds the session by replaying the workspace's actions from its seed.
    pub fn from_workspace(w: Workspace) -> Self {
        Self::from_workspace_with(w, crate::lesson::Lessons::default())
    }

    /// Rebuilds the session on the open scenario's world (else the starter's), following the
    /// lesson through the replayed actions. For workspaces built in this tab.
    pub fn from_workspace_with(w: Workspace, mut lessons: crate::lesson::Lessons) -> Self {
        let mut history = History::new(HISTORY_STEPS);
        let mut reports = VecDeque::new();
        let base = Self::base_world(&w, &lessons);
        let world = session::replay_on(base, &w.actions, |world, report| {
            history.push(world);
            keep_report(&mut reports, world.steps(), report);
            lessons.follow(world);
        });
        Self::assemble(w, world, history, reports, lessons)
    }

    /// Rebuilds a session read from storage or a link: validated and replayed within
    /// [`share::REPLAY_MAX_EVENTS`], so a hostile or damaged workspace is an error, not a hang.
    pub fn restore(w: Workspace, mut lessons: crate::lesson::Lessons) -> Result<Self, ShareError> {
        let mut history = History::new(HISTORY_STEPS);
        let mut reports = VecDeque::new();
        let base = Self::base_world(&w, &lessons);
        let world = share::replay_on(base, &w, share::REPLAY_MAX_EVENTS, |world, report| {
            history.push(world);
            keep_report(&mut reports, world.steps(), report);
            lessons.follow(world);
        })?;
        Ok(Self::assemble(w, world, history, reports, lessons))
    }

    /// The world the actions replay on: the open scenario's at t=0, else the starter's.
    fn base_world(w: &Workspace, lessons: &crate::lesson::Lessons) -> World {
        match &lessons.opened {
            Some(o) => o.base.clone(),
            None => World::new(w.starter.config(w.seed)),
        }
    }

    fn assemble(
        w: Workspace,
        world: World,
        history: History,
        reports: VecDeque<(u64, StepReport)>,
        mut lessons: crate::lesson::Lessons,
    ) -> Self {
        let focus = lessons.take_focus();
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
            rows: Vec::new(),
            editor_text: w.editor_text,
            syntax: w.syntax,
            diagnostics: Vec::new(),
            principal: w.principal,
            target: w.target,
            outcome: None,
            selected_entry: None,
            theme: w.theme,
            notice: None,
            first_edit_hint: false,
            lessons,
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

    /// Applies one message; returns whether the view must re-render.
    pub fn update(&mut self, msg: Msg) -> bool {
        let changed = self.reduce(msg);
        if changed {
            self.refresh_tree();
        }
        changed
    }

    /// Brings the tree up to date with the shown world: only changed objects are recomputed.
    fn refresh_tree(&mut self) {
        let shown = self
            .cursor
            .and_then(|c| self.history.at(c))
            .unwrap_or(&self.world);
        self.tree.refresh(shown);
        self.rows = self.tree.rows(&self.layout);
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
            Msg::Fault(f) => self.perform(SessionAction::Apply {
                input: Input::Fault {
                    fault: fault_for(f),
                },
            }),
            Msg::SetTheme(t) => self.theme = t,
            Msg::DismissNotice => self.notice = None,
            Msg::DismissHint => self.first_edit_hint = false,
            Msg::Lesson(m) => crate::lesson::update(self, m),
        }
        true
    }

    /// Starts a fresh session on `opened` (None: the starter cluster) with its lesson at `step`,
    /// keeping the reader's theme, principal, syntax and speed.
    pub fn open_scenario(&mut self, opened: Option<crate::gallery::Opened>, step: usize) {
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
                    crate::lesson::Lessons::with(o, step),
                )
            }
            None => (fresh, crate::lesson::Lessons::default()),
        };
        let gallery_open = self.lessons.gallery_open;
        let cards = std::mem::take(&mut self.lessons.cards);
        *self = Model::from_workspace_with(w, lessons);
        self.lessons.gallery_open = gallery_open;
        self.lessons.cards = cards;
    }

    fn tick(&mut self) {
        match SPEEDS.get(self.speed).and_then(|s| s.1) {
            Some(per_second) => self.perform(SessionAction::Apply {
                input: Input::Advance {
                    ms: per_second * u64::from(TICK_MS) / 1000,
                },
            }),
            None => {
                for _ in 0..MAX_EVENTS_PER_TICK {
                    if self.world.is_converged() || self.world.next_event_time().is_none() {
                        self.playing = false;
                        break;
                    }
                    self.perform(SessionAction::NextEvent);
                }
            }
        }
    }

    /// Runs one action on the live world (forking first when scrubbed back) and logs it.
    fn perform(&mut self, action: SessionAction) {
        if self.cursor.is_some() {
            self.fork();
        }
        let report = session::perform(&mut self.world, &action);
        self.actions.push(action);
        self.history.push(&self.world);
        keep_report(&mut self.reports, self.world.steps(), report);
        self.lessons.follow(&self.world);
        if let Some(key) = self.lessons.take_focus() {
            if self.selected.as_ref() != Some(&key) {
                self.load(Some(key));
            }
        }
    }

    fn fork(&mut self) {
        let Some(step) = self.cursor.take() else {
            return;
        };
        if let Some(world) = self.history.fork(step) {
            // Each action is one world step, on top of the steps that built the base world (a
            // scenario's objects): keep the actions that led to the snapshot.
            let base_steps = self.world.steps().saturating_sub(self.actions.len() as u64);
            self.lessons.fork(&world);
            self.world = world;
            self.actions
                .truncate(step.saturating_sub(base_steps) as usize);
            self.reports.retain(|(s, _)| *s <= step);
            self.notice = Some(format!("Forked at step {step}: later steps were dropped."));
        }
    }

    fn default_selection(&self) -> Option<ObjectKey> {
        self.selected.clone().or_else(|| {
            self.world
                .objects()
                .map(|(k, _)| k)
                .find(|k| k.gr.resource == "deployments")
                .cloned()
        })
    }

    /// Loads `key` from the shown world into the editor and the status panel.
    fn load(&mut self, key: Option<ObjectKey>) {
        self.outcome = None;
        self.selected = key;
        if let Some(obj) = self.selected.as_ref().and_then(|k| self.shown().object(k)) {
            self.editor_text = view::print(&view::editable(obj), self.syntax);
        }
        self.check_editor();
    }

    fn check_editor(&mut self) {
        self.diagnostics = match parse::parse_documents(&self.editor_text) {
            Ok(_) => Vec::new(),
            Err(e) => vec![e],
        };
    }

    /// Sends the editor's object as an update (or a create, if it does not exist) through the
    /// API server as the chosen principal. The editor keeps the text on refusal.
    fn apply(&mut self) {
        let doc = match parse::parse_documents(&self.editor_text) {
            Ok(docs) => docs.into_iter().next(),
            Err(e) => {
                self.diagnostics = vec![e];
                return;
            }
        };
        let Some(doc) = doc else {
            self.outcome = Some(ApplyOutcome {
                code: 400,
                message: "the editor holds no object".into(),
            });
            return;
        };
        let world = self.shown();
        let key = match world.api().key_for_manifest(&doc) {
            Ok(k) => k,
            Err(e) => {
                self.outcome = Some(ApplyOutcome {
                    code: e.code(),
                    message: e.message,
                });
                return;
            }
        };
        let p = self.principal.as_str();
        let request = match (world.api().get(&key).is_some(), self.target) {
            (false, _) => ApiRequest::create(p, key.gr.clone(), &key.namespace, doc),
            (true, Target::Main) => {
                ApiRequest::update(p, key.gr.clone(), &key.namespace, &key.name, doc)
            }
            (true, Target::Status) => {
                ApiRequest::update_status(p, key.gr.clone(), &key.namespace, &key.name, doc)
            }
        };
        self.perform(SessionAction::Apply {
            input: Input::Request { request },
        });
        let answer = self
            .reports
            .back()
            .and_then(|(_, r)| r.requests().next().cloned());
        if let Some(rec) = answer {
            self.outcome = Some(ApplyOutcome {
                code: rec.code,
                message: rec.message,
            });
            if rec.code < 400 {
                self.first_edit_hint = false;
                let outcome = self.outcome.take();
                self.load(Some(key));
                self.outcome = outcome;
            }
        }
    }
}

fn keep_report(reports: &mut VecDeque<(u64, StepReport)>, step: u64, report: StepReport) {
    if reports.len() == REPORTS_KEPT {
        reports.pop_front();
    }
    reports.push_back((step, report));
}

fn fault_for(f: FaultMsg) -> Fault {
    match f {
        FaultMsg::Pause(controller) => Fault::PauseController { controller },
        FaultMsg::Resume(controller) => Fault::ResumeController { controller },
        FaultMsg::Crash(controller) => Fault::CrashController { controller },
        FaultMsg::Restart(controller) => Fault::RestartController { controller },
        FaultMsg::WatchLatency(ms) => Fault::WatchLatency {
            controller: None,
            ms,
        },
        FaultMsg::ImagePull { node, failing } => Fault::ImagePullFailure { node, failing },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn deployment(m: &Model) -> Value {
        m.world
            .objects()
            .find(|(k, _)| k.gr.resource == "deployments")
            .map(|(_, o)| o.as_ref().clone())
            .unwrap_or(Value::Null)
    }

    #[test]
    fn the_starter_loads_the_deployment_into_the_editor() {
        let m = Model::default();
        assert!(
            m.editor_text.contains("\"replicas\": 3"),
            "{}",
            m.editor_text
        );
        assert!(m.diagnostics.is_empty());
    }

    #[test]
    fn scaling_to_five_bumps_generation_and_converges() {
        let mut m = Model::default();
        let text = m.editor_text.replace("\"replicas\": 3", "\"replicas\": 5");
        m.update(Msg::EditorInput(text));
        m.update(Msg::Apply);
        assert_eq!(m.outcome.as_ref().map(|o| o.code), Some(200));
        assert_eq!(
            deployment(&m).pointer("/metadata/generation"),
            Some(&Value::from(2))
        );
        m.update(Msg::RunUntilConverged);
        assert_eq!(
            deployment(&m).pointer("/status/readyReplicas"),
            Some(&Value::from(5))
        );
    }

    #[test]
    fn a_stale_edit_is_refused_with_409_and_the_text_is_kept() {
        let mut m = Model::default();
        let text = m.editor_text.replace("\"replicas\": 3", "\"replicas\": 4");
        m.update(Msg::EditorInput(text));
        m.update(Msg::Apply);
        let loaded = m.editor_text.clone();
        m.update(Msg::RunUntilConverged);
        let edited = loaded.replace("\"replicas\": 4", "\"replicas\": 6");
        m.update(Msg::EditorInput(edited.clone()));
        m.update(Msg::Apply);
        assert_eq!(
            m.outcome.as_ref().map(|o| o.code),
            Some(409),
            "{:?}",
            m.outcome
        );
        assert_eq!(m.editor_text, edited);
    }

    #[test]
    fn app_may_not_write_status() {
        let mut m = Model::default();
        m.update(Msg::SetPrincipal("app".into()));
        m.update(Msg::SetTarget(Target::Status));
        m.update(Msg::Apply);
        let o = m.outcome.clone().unwrap_or(ApplyOutcome {
            code: 0,
            message: String::new(),
        });
        assert_eq!(o.code, 403);
        assert!(
            o.text().starts_with("Error from server (Forbidden): "),
            "{}",
            o.text()
        );
    }

    #[test]
    fn scrubbing_back_and_forking_drops_later_steps() {
        let mut m = Model::default();
        m.update(Msg::Step);
        m.update(Msg::Step);
        assert_eq!(m.world.steps(), 4);
        m.update(Msg::Scrub(Some(2)));
        assert_eq!(m.shown().steps(), 2);
        m.update(Msg::Fork);
        assert_eq!(m.world.steps(), 2);
        assert_eq!(m.actions.len(), 2);
    }

    #[test]
    fn the_workspace_replays_to_the_same_trace() {
        let mut m = Model::default();
        m.update(Msg::Step);
        m.update(Msg::NextEvent);
        let again = Model::from_workspace(m.workspace());
        assert_eq!(again.world.trace_text(), m.world.trace_text());
    }

    #[test]
    fn the_rbac_switch_is_logged_and_survives_a_replay() {
        let mut m = Model::default();
        m.update(Msg::SetRbacEnforced(false));
        assert!(!m.world.api().rbac_enforced());
        m.update(Msg::SetPrincipal("app".into()));
        m.update(Msg::SetTarget(Target::Status));
        m.update(Msg::Apply);
        assert_eq!(
            m.outcome.as_ref().map(|o| o.code),
            Some(200),
            "{:?}",
            m.outcome
        );
        let again = Model::from_workspace(m.workspace());
        assert!(!again.world.api().rbac_enforced());
        assert_eq!(again.world.trace_text(), m.world.trace_text());
    }

    #[test]
    fn the_tree_follows_the_world_and_the_scrubbed_snapshot() {
        let mut m = Model::default();
        let pods = |m: &Model| {
            m.rows
                .iter()
                .filter(|r| matches!(r, Row::Object(o) if o.kind == "Pod"))
                .count()
        };
        assert_eq!(pods(&m), 3);
        let text = m.editor_text.replace("\"replicas\": 3", "\"replicas\": 5");
        m.update(Msg::EditorInput(text));
        m.update(Msg::Apply);
        m.update(Msg::RunUntilConverged);
        assert_eq!(pods(&m), 5);
        m.update(Msg::Scrub(Some(2)));
        assert_eq!(pods(&m), 3);
    }
}
