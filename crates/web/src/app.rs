//! The playground view: header, controls, object tree, editor, status panel, timeline, faults.
//! It only formats; every decision is in `state` or in core's view models. Side effects (timers,
//! localStorage, the URL, keyboard, the theme attribute) are here, at the edge.

use converge_core::engine::world::key_text;
use converge_core::view::session::Starter;
use converge_core::view::status::status_view;
use converge_core::view::timeline::{self, Lane};
use converge_core::view::tree::{self, health_label, Row};
use converge_core::view::Syntax;
use gloo_timers::callback::{Interval, Timeout};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{HtmlDialogElement, HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use crate::editor::{CodeEditor, Diagnostic, Language};
use crate::embed::{self, EmbedConfig};
use crate::lesson::{LessonMsg, Lessons};
use crate::persist;
use crate::shortcuts::Shortcut;
use crate::state::{FaultMsg, Model, Msg, Target, Theme, Workspace, PRINCIPALS, SPEEDS, TICK_MS};

/// The conditions table's columns (also each cell's label when the table is stacked).
const CONDITION_COLUMNS: [&str; 6] = [
    "type",
    "status",
    "reason",
    "message",
    "lastTransitionTime",
    "observedGeneration",
];
/// Timeline entries shown at once.
const TIMELINE_ENTRIES: usize = 80;
/// Quiet time before the URL hash follows the workspace (replaceState, never pushState).
const HASH_DEBOUNCE_MS: u32 = 800;

pub enum AppMsg {
    Model(Msg),
    Share,
    ShowHelp,
    /// The help dialog closed (its button or Escape): focus goes back where it was.
    HelpClosed,
    SyncHash,
    /// A postMessage from the host page (embed mode): its data as JSON, origin and sender.
    Host {
        data: serde_json::Value,
        origin: String,
        source: Option<web_sys::Window>,
    },
    /// The page is going away (reload, close, navigation): save now, even mid-play.
    Save,
}

impl From<Msg> for AppMsg {
    fn from(m: Msg) -> Self {
        AppMsg::Model(m)
    }
}

pub struct App {
    model: Model,
    player: Option<Interval>,
    help: NodeRef,
    /// What had focus when the help dialog opened, to give it back when it closes.
    help_return: Option<web_sys::HtmlElement>,
    share_url: Option<String>,
    hash_timer: Option<Timeout>,
    keys: Option<Closure<dyn Fn(web_sys::KeyboardEvent)>>,
    pagehide: Option<Closure<dyn Fn(web_sys::Event)>>,
    measuring: bool,
    /// Embed mode (`?embed`): minimal chrome, scoped storage, the host message API.
    embed: Option<EmbedConfig>,
    host: Option<Closure<dyn Fn(web_sys::MessageEvent)>>,
    /// The last height reported to the host page.
    height: i32,
    /// The scenario the URL and storage key were last set for.
    url_scenario: Option<String>,
}

fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

fn storage() -> Option<web_sys::Storage> {
    window().and_then(|w| w.local_storage().ok().flatten())
}

/// The element that has focus, if it is an HTML element.
fn focused_element() -> Option<web_sys::HtmlElement> {
    window()
        .and_then(|w| w.document())
        .and_then(|doc| doc.active_element())
        .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok())
}

fn performance_mark(name: &str) {
    if let Some(p) = window().and_then(|w| w.performance()) {
        let _ = p.mark(name);
    }
}

fn performance_marked(name: &str) -> bool {
    window()
        .and_then(|w| w.performance())
        .is_some_and(|p| p.get_entries_by_name(name).length() > 0)
}

/// Tells web/boot.js the app has drawn itself: a window event `converge-ready` whose
/// `detail.root` is the app's root element (the pre-drawn copy, if any, is the other `.shell`).
fn announce_ready() {
    let Some(w) = window() else { return };
    let root = w.document().and_then(|d| {
        d.query_selector("body > .shell:not([data-snapshot])")
            .ok()
            .flatten()
    });
    let detail = js_sys::Object::new();
    if let Some(root) = root {
        let _ = js_sys::Reflect::set(&detail, &"root".into(), &root);
    }
    let init = web_sys::CustomEventInit::new();
    init.set_detail(&detail);
    if let Ok(e) = web_sys::CustomEvent::new_with_event_init_dict("converge-ready", &init) {
        let _ = w.dispatch_event(&e);
    }
}

/// The scenario a session opens from the URL (`?scenario=<gallery id>`, or `custom` for the
/// last file the reader opened), its lesson, and the localStorage key the session owns.
fn initial_session(embed: Option<&EmbedConfig>) -> (Lessons, String, Option<String>) {
    let search = window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    let id = match embed {
        Some(c) => c.scenario.clone(),
        None => embed::params(&search)
            .into_iter()
            .find(|(k, _)| k == "scenario")
            .map(|(_, v)| v),
    };
    let key = |id: Option<&str>| match (embed, id) {
        (Some(c), id) => c.storage_key(id),
        (None, Some(id)) => crate::lesson::storage_key(id),
        (None, None) => persist::STORAGE_KEY.to_owned(),
    };
    let Some(id) = id.filter(|i| !i.is_empty()) else {
        return (Lessons::default(), key(None), None);
    };
    let opened = if id == crate::gallery::CUSTOM_ID {
        storage()
            .and_then(|s| s.get_item(crate::lesson::CUSTOM_TEXT_KEY).ok().flatten())
            .ok_or_else(|| "no scenario file was opened in this browser".to_owned())
            .and_then(|t| crate::gallery::open_text(&t))
    } else {
        crate::gallery::open(&id)
    };
    match opened {
        Ok(o) => {
            let step = embed.map_or(0, |c| c.step);
            (Lessons::with(o, step), key(Some(&id)), None)
        }
        Err(e) => (
            Lessons::default(),
            key(None),
            Some(format!(
                "The scenario {id:?} could not be opened ({e}); showing the starter cluster."
            )),
        ),
    }
}

/// The workspace to start from: a share link, else localStorage (under `key`), else a fresh
/// one; with a notice when something could not be read.
fn initial_workspace(key: &str, opened: bool) -> (Workspace, Option<String>) {
    let location = window().map(|w| w.location());
    let search = location
        .as_ref()
        .and_then(|l| l.search().ok())
        .unwrap_or_default();
    let fresh = || {
        if opened {
            Workspace {
                actions: Vec::new(),
                ..Workspace::default()
            }
        } else {
            Workspace::default()
        }
    };
    if search.contains("starter=large") {
        return (Workspace::fresh(Starter::Large), None);
    }
    let hash = location
        .as_ref()
        .and_then(|l| l.hash().ok())
        .unwrap_or_default();
    if persist::is_share_link(&hash) {
        return match persist::from_hash(&hash) {
            Ok(w) => (w, Some("Loaded the shared workspace from the link.".into())),
            Err(e) => (
                fresh(),
                Some(format!(
                    "The share link could not be opened ({e}); started fresh."
                )),
            ),
        };
    }
    match storage().and_then(|s| s.get_item(key).ok().flatten()) {
        None => (fresh(), None),
        Some(text) => match persist::from_json(&text) {
            Ok(w) => (w, None),
            Err(e) => (
                fresh(),
                Some(format!(
                    "Your saved workspace could not be restored ({e}); started a fresh one."
                )),
            ),
        },
    }
}

fn apply_theme(theme: Theme) {
    let Some(root) = window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    else {
        return;
    };
    let _ = match theme {
        Theme::System => root.remove_attribute("data-theme"),
        Theme::Light => root.set_attribute("data-theme", "light"),
        Theme::Dark => root.set_attribute("data-theme", "dark"),
    };
}

impl Component for App {
    type Message = AppMsg;
    type Properties = ();

    fn create(_ctx: &Context<Self>) -> Self {
        let search = window()
            .and_then(|w| w.location().search().ok())
            .unwrap_or_default();
        let (embed, embed_error) = match embed::parse_query(&search) {
            Some(Ok(c)) => (Some(c), None),
            Some(Err(e)) => (None, Some(format!("The embed URL is not valid: {e}."))),
            None => (None, None),
        };
        let (lessons, key, scenario_error) = initial_session(embed.as_ref());
        let opened = lessons.opened.is_some();
        let (mut workspace, notice) = initial_workspace(&key, opened);
        if let Some(t) = embed.as_ref().and_then(|c| c.theme) {
            workspace.theme = t;
        }
        let url_scenario = lessons.id().map(str::to_owned);
        let (mut model, notice) = match Model::restore(workspace, lessons.clone()) {
            Ok(m) => (m, notice),
            Err(e) => {
                let mut fresh = Workspace::default();
                if opened {
                    fresh.actions.clear();
                }
                (
                    Model::from_workspace_with(fresh, lessons),
                    Some(format!(
                        "The saved session could not be replayed ({e}); started a fresh one."
                    )),
                )
            }
        };
        model.notice = embed_error.or(scenario_error).or(notice);
        model.first_edit_hint = embed.is_none()
            && model.lessons.id().is_none()
            && storage()
                .is_some_and(|s| s.get_item(persist::HINT_DONE_KEY).ok().flatten().is_none());
        apply_theme(model.theme);
        App {
            model,
            player: None,
            help: NodeRef::default(),
            help_return: None,
            share_url: None,
            hash_timer: None,
            keys: None,
            pagehide: None,
            measuring: false,
            embed,
            host: None,
            height: 0,
            url_scenario,
        }
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Self::Message) -> bool {
        let msg = match msg {
            AppMsg::Model(m) => m,
            AppMsg::ShowHelp => {
                if let Some(d) = self.help.cast::<HtmlDialogElement>() {
                    if !d.open() {
                        self.help_return = focused_element();
                        let _ = d.show_modal();
                    }
                }
                return false;
            }
            AppMsg::HelpClosed => {
                // The dialog's button keeps focus while the dialog is hidden, and Chromium gives it
                // back only to an element (not to the page) and only later: until then every key
                // would land on that hidden button and a shortcut pressed right after Escape would
                // be lost. Focus returns to what had it, or leaves the page's controls.
                let back = self.help_return.take().filter(|el| {
                    el.is_connected() && el.tag_name() != "BODY" && el.tag_name() != "HTML"
                });
                match back {
                    Some(el) => {
                        let _ = el.focus();
                    }
                    None => {
                        if let Some(el) = focused_element() {
                            let _ = el.blur();
                        }
                    }
                }
                return false;
            }
            AppMsg::Share => {
                let hash = persist::to_hash(&self.model.workspace());
                if let Some(w) = window() {
                    let loc = w.location();
                    let base = format!(
                        "{}{}{}",
                        loc.origin().unwrap_or_default(),
                        loc.pathname().unwrap_or_default(),
                        loc.search().unwrap_or_default()
                    );
                    if let Ok(h) = w.history() {
                        let _ =
                            h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&hash));
                    }
                    self.share_url = Some(format!("{base}{hash}"));
                }
                return true;
            }
            AppMsg::Host {
                data,
                origin,
                source,
            } => {
                let Some(cfg) = self.embed.clone() else {
                    return false;
                };
                let reply = |v: serde_json::Value| {
                    if let Some(s) = &source {
                        embed::post(s, &v, &origin);
                    }
                };
                if !cfg.allows(&origin) {
                    reply(embed::error(
                        &cfg.id,
                        serde_json::Value::Null,
                        &format!("origin {origin} may not drive this embed"),
                    ));
                    return false;
                }
                let envelope = match embed::parse_message(&data) {
                    Ok(e) => e,
                    Err((id, message)) => {
                        reply(embed::error(&cfg.id, id, &message));
                        return false;
                    }
                };
                let changed = match &envelope.request {
                    embed::Request::Load { scenario, step } => match crate::gallery::open(scenario)
                    {
                        Ok(o) => {
                            self.player = None;
                            self.model.open_scenario(Some(o), step - 1);
                            self.save();
                            true
                        }
                        Err(e) => {
                            reply(embed::error(&cfg.id, envelope.request_id, &e));
                            return false;
                        }
                    },
                    r => match embed::to_msg(&self.model, r) {
                        Some(m) => Component::update(self, ctx, AppMsg::Model(m)),
                        None => false,
                    },
                };
                let mut state = embed::state(&self.model, &cfg.id);
                state["requestId"] = envelope.request_id;
                reply(state);
                return changed;
            }
            AppMsg::Save => {
                self.save();
                return false;
            }
            AppMsg::SyncHash => {
                self.hash_timer = None;
                if self.share_url.is_some() {
                    let hash = persist::to_hash(&self.model.workspace());
                    if let Some(h) = window().and_then(|w| w.history().ok()) {
                        let _ =
                            h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&hash));
                    }
                }
                return false;
            }
        };
        let measured = matches!(msg, Msg::Step | Msg::NextEvent);
        if measured {
            performance_mark("converge-step-start");
            self.measuring = true;
        }
        let theme_before = self.model.theme;
        let is_tick = matches!(msg, Msg::Tick);
        let hinted = self.model.first_edit_hint;
        let changed = self.model.update(msg);
        if hinted && !self.model.first_edit_hint {
            if let Some(s) = storage() {
                let _ = s.set_item(persist::HINT_DONE_KEY, "done");
            }
        }
        if self.model.theme != theme_before {
            apply_theme(self.model.theme);
        }
        match (self.model.playing, self.player.is_some()) {
            (true, false) => {
                let link = ctx.link().clone();
                self.player = Some(Interval::new(TICK_MS, move || {
                    link.send_message(AppMsg::Model(Msg::Tick))
                }));
            }
            (false, true) => self.player = None,
            _ => {}
        }
        self.sync_scenario_url();
        if changed {
            if !is_tick || !self.model.playing {
                self.save();
            }
            if self.share_url.is_some() {
                let link = ctx.link().clone();
                self.hash_timer = Some(Timeout::new(HASH_DEBOUNCE_MS, move || {
                    link.send_message(AppMsg::SyncHash)
                }));
            }
        }
        changed
    }

    fn rendered(&mut self, ctx: &Context<Self>, first_render: bool) {
        if self.measuring {
            self.measuring = false;
            performance_mark("converge-step-end");
            if let Some(p) = window().and_then(|w| w.performance()) {
                let _ = p.measure_with_start_mark_and_end_mark(
                    "converge-step",
                    "converge-step-start",
                    "converge-step-end",
                );
            }
        }
        if first_render {
            // The playground is drawn and its controls listen. On a first visit web/boot.js has
            // marked `converge-interactive` already, on the pre-drawn copy of this screen; it
            // swaps the copy for this one on `converge-ready` and replays what the person did.
            // tests/e2e/first-load.test.mjs measures what loads before each mark.
            if !performance_marked("converge-interactive") {
                performance_mark("converge-interactive");
            }
            let link = ctx.link().clone();
            let handler =
                Closure::<dyn Fn(web_sys::KeyboardEvent)>::new(move |e: web_sys::KeyboardEvent| {
                    if let Some(m) = shortcut(&e) {
                        e.prevent_default();
                        link.send_message(m);
                    }
                });
            if let Some(doc) = window().and_then(|w| w.document()) {
                let _ = doc
                    .add_event_listener_with_callback("keydown", handler.as_ref().unchecked_ref());
            }
            self.keys = Some(handler);
            // Ticks while playing are not saved one by one; a reload mid-play must still come
            // back at the step it left.
            let link = ctx.link().clone();
            let on_hide = Closure::<dyn Fn(web_sys::Event)>::new(move |_: web_sys::Event| {
                link.send_message(AppMsg::Save)
            });
            if let Some(w) = window() {
                let _ = w
                    .add_event_listener_with_callback("pagehide", on_hide.as_ref().unchecked_ref());
            }
            self.pagehide = Some(on_hide);
            if self.embed.is_some() {
                let link = ctx.link().clone();
                self.host = embed::listen(move |data, origin, source| {
                    link.send_message(AppMsg::Host {
                        data,
                        origin,
                        source,
                    })
                });
                if let Some(cfg) = &self.embed {
                    embed::announce(cfg, self.model.lessons.id());
                }
            }
            // Last: every listener is in place before boot.js replays into this screen.
            performance_mark("converge-ready");
            announce_ready();
        }
        if let Some(cfg) = &self.embed {
            self.height = embed::report_height(cfg, self.height);
        }
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        if self.embed.is_some() {
            return self.view_embed(ctx);
        }
        let link = ctx.link();
        let m = &self.model;
        let shown = m.shown();
        let scrubbed = m.cursor.is_some();
        let send = link.callback(AppMsg::Model);
        html! {
            <div class="shell">
                <a class="skip" href="#spec-editor">{ "Skip to the editor" }</a>
                <header class="topbar">
                    <h1>{ "Converge" }</h1>
                    <p class="tagline">{ "Kubernetes spec/status playground" }</p>
                    <div class="header-tools">
                        <label for="theme">{ "Theme" }</label>
                        <select id="theme" onchange={link.callback(|e: Event| {
                            let s: HtmlSelectElement = e.target_unchecked_into();
                            Msg::SetTheme(match s.value().as_str() {
                                "light" => Theme::Light,
                                "dark" => Theme::Dark,
                                _ => Theme::System,
                            })
                        })}>
                            { for [(Theme::System, "system", "System"), (Theme::Light, "light", "Light"), (Theme::Dark, "dark", "Dark")]
                                .into_iter().map(|(t, v, l)| html! {
                                    <option value={v} selected={m.theme == t}>{ l }</option>
                                }) }
                        </select>
                        <button id="share" onclick={link.callback(|_| AppMsg::Share)}>{ "Share" }</button>
                        <button id="help-button" aria-haspopup="dialog" onclick={link.callback(|_| AppMsg::ShowHelp)}>{ "Shortcuts (?)" }</button>
                    </div>
                </header>
                { self.view_notice(ctx) }
                { crate::lesson::view_gallery(m, &send, self.on_file(ctx)) }
                { self.view_controls(ctx) }
                { crate::lesson::view_lesson(m, &send) }
                <main class="panes">
                    { self.view_tree(ctx) }
                    { self.view_editor(ctx) }
                    { self.view_status(ctx) }
                </main>
                { self.view_timeline(ctx) }
                { self.view_faults(ctx) }
                { self.view_help(ctx) }
                if scrubbed {
                    <p class="scrub-note" role="status">{ format!("Viewing step {} of {}: steps and edits fork from here.", shown.steps(), m.world.steps()) }</p>
                }
            </div>
        }
    }
}

/// The message for a keyboard shortcut (`crate::shortcuts`), unless the person is typing.
fn shortcut(e: &web_sys::KeyboardEvent) -> Option<AppMsg> {
    Some(match crate::shortcuts::shortcut(e)? {
        Shortcut::TogglePlay => Msg::TogglePlay.into(),
        Shortcut::Step => Msg::Step.into(),
        Shortcut::NextEvent => Msg::NextEvent.into(),
        Shortcut::RunUntilConverged => Msg::RunUntilConverged.into(),
        Shortcut::Help => AppMsg::ShowHelp,
    })
}

impl App {
    /// The localStorage key of the current session: per embed, per scenario, or the starter's.
    fn storage_key(&self) -> String {
        match (&self.embed, self.model.lessons.id()) {
            (Some(c), id) => c.storage_key(id),
            (None, Some(id)) => crate::lesson::storage_key(id),
            (None, None) => persist::STORAGE_KEY.to_owned(),
        }
    }

    fn save(&self) {
        if let Some(s) = storage() {
            let _ = s.set_item(
                &self.storage_key(),
                &persist::to_json(&self.model.workspace()),
            );
        }
    }

    /// After a scenario was opened or closed: `?scenario=<id>` in the address bar (so a reload
    /// or a share link opens it again), and the opened file's text kept for `custom`.
    fn sync_scenario_url(&mut self) {
        let id = self.model.lessons.id().map(str::to_owned);
        if id == self.url_scenario || self.embed.is_some() {
            return;
        }
        if let (Some(o), Some(s)) = (&self.model.lessons.opened, storage()) {
            if o.id == crate::gallery::CUSTOM_ID {
                let _ = s.set_item(crate::lesson::CUSTOM_TEXT_KEY, &o.text);
            }
        }
        self.share_url = None;
        if let Some(w) = window() {
            let path = w.location().pathname().unwrap_or_default();
            let url = match &id {
                Some(id) => format!("{path}?scenario={id}"),
                None => path,
            };
            if let Ok(h) = w.history() {
                let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
            }
        }
        self.url_scenario = id;
    }

    /// The file picker's handler: reads the chosen file and opens it as a scenario.
    fn on_file(&self, ctx: &Context<Self>) -> Callback<Event> {
        let link = ctx.link().clone();
        Callback::from(move |e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            let Some(file) = input.files().and_then(|f| f.get(0)) else {
                return;
            };
            let link = link.clone();
            yew::platform::spawn_local(async move {
                let text = wasm_bindgen_futures::JsFuture::from(file.text())
                    .await
                    .ok()
                    .and_then(|v| v.as_string());
                let msg = match text {
                    Some(t) => LessonMsg::OpenText(t),
                    None => LessonMsg::OpenText(String::new()),
                };
                link.send_message(AppMsg::Model(Msg::Lesson(msg)));
            });
        })
    }

    /// Embed mode: the scenario's name, the controls, the lesson (with `lesson`), the objects
    /// and status; the editor only without `readonly`.
    fn view_embed(&self, ctx: &Context<Self>) -> Html {
        let m = &self.model;
        let Some(cfg) = &self.embed else {
            return html! {};
        };
        let send = ctx.link().callback(AppMsg::Model);
        let title = m
            .lessons
            .opened
            .as_ref()
            .map(|o| o.scenario.name.clone())
            .unwrap_or_else(|| "Converge".into());
        let full = match m.lessons.id() {
            Some(id) => format!("./?scenario={id}"),
            None => "./".into(),
        };
        html! {
            <div class={classes!("shell", "embed", cfg.readonly.then_some("readonly"))} data-embed={cfg.id.clone()}>
                <header class="embed-bar">
                    <h1>{ title }</h1>
                    <a href={full} target="_blank" rel="noopener">{ "Open in Converge ↗" }</a>
                </header>
                { self.view_notice(ctx) }
                { self.view_controls(ctx) }
                if cfg.lesson { { crate::lesson::view_lesson(m, &send) } }
                <main class="panes">
                    { self.view_tree(ctx) }
                    if !cfg.readonly { { self.view_editor(ctx) } }
                    { self.view_status(ctx) }
                </main>
            </div>
        }
    }

    fn view_notice(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        html! {
            <>
            if let Some(n) = &self.model.notice {
                <div class="notice" role="status">
                    <span>{ n.clone() }</span>
                    <button onclick={link.callback(|_| Msg::DismissNotice)}>{ "Dismiss" }</button>
                </div>
            }
            if let Some(url) = &self.share_url {
                <div class="notice share">
                    <label for="share-url">{ "Share link (also in the address bar)" }</label>
                    <input id="share-url" readonly=true value={url.clone()} />
                </div>
            }
            </>
        }
    }

    fn view_controls(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let m = &self.model;
        let w = m.shown();
        let converged = w.is_converged();
        html! {
            <nav class="controls" aria-label="Simulation controls">
                <button id="step" onclick={link.callback(|_| Msg::Step)} title="n">{ "Step" }</button>
                <button id="next-event" onclick={link.callback(|_| Msg::NextEvent)} title="Shift+N">{ "Next event" }</button>
                <button id="play" aria-pressed={m.playing.to_string()} title="Space"
                    onclick={link.callback(|_| Msg::TogglePlay)}>
                    { if m.playing { "Pause" } else { "Play" } }
                </button>
                <label class="speed"><span>{ "Speed" }</span>
                    <select id="speed" onchange={link.callback(|e: Event| {
                        let s: HtmlSelectElement = e.target_unchecked_into();
                        Msg::SetSpeed(s.value().parse().unwrap_or(2))
                    })}>
                        { for SPEEDS.iter().enumerate().map(|(i, (l, _))| html! {
                            <option value={i.to_string()} selected={i == m.speed}>{ *l }</option>
                        }) }
                    </select>
                </label>
                <button id="run" onclick={link.callback(|_| Msg::RunUntilConverged)} title="r">{ "Run until converged" }</button>
                <button id="reset" onclick={link.callback(|_| Msg::Reset)}>{ "Reset" }</button>
                <output id="clock" aria-label="Simulated time">{ w.now().to_string() }</output>
                <output id="steps" aria-label="Steps taken">{ format!("{} steps", w.steps()) }</output>
                <span class={classes!("badge", if converged { "ok" } else { "warn" })} id="converged">
                    { if converged { "converged" } else { "converging" } }
                </span>
            </nav>
        }
    }

    fn view_tree(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let m = &self.model;
        let count = m.tree.len();
        html! {
            <section class="pane objects" aria-labelledby="objects-h">
                <h2 id="objects-h">{ "Objects" }</h2>
                <p class="muted" id="object-count">{ format!("{count} objects") }</p>
                <p class="visually-hidden" id="objects-keys">{ "Arrow keys move between objects; Right opens a group, Left closes it." }</p>
                <ul class="object-list" aria-labelledby="objects-h" aria-describedby="objects-keys"
                    onkeydown={Callback::from(|e: KeyboardEvent| crate::tree_keys::on_key(&e))}>
                    { for m.rows.iter().map(|row| match row {
                        Row::More { parent, depth, hidden } => {
                            let row_key = format!("more {}", key_text(parent));
                            let parent = parent.clone();
                            let page = (*hidden).min(tree::CHILDREN_PAGE);
                            html! {
                                <li key={row_key} class="more" style={format!("--depth:{depth}")}>
                                    <button class="show-more" onclick={link.callback(move |_| Msg::ShowMore(parent.clone()))}>
                                        { format!("Show {page} more ({hidden} not listed)") }
                                    </button>
                                </li>
                            }
                        }
                        Row::Object(r) => {
                            let selected = m.selected.as_ref() == Some(&r.key);
                            let key = r.key.clone();
                            let key2 = r.key.clone();
                            let label = health_label(r.health);
                            html! {
                                <li key={key_text(&r.key)} class={classes!("row", selected.then_some("selected"))}
                                    style={format!("--depth:{}", r.depth)}>
                                    if r.children > 0 {
                                        <button class="twisty" aria-expanded={r.expanded.to_string()}
                                            aria-label={format!("{} children of {} {}", r.children, r.kind, r.name)}
                                            onclick={link.callback(move |_| Msg::ToggleGroup(key2.clone()))}>
                                            { if r.expanded { "▾" } else { "▸" } }
                                        </button>
                                    }
                                    <button class="object" aria-current={selected.then_some("true")}
                                        onclick={link.callback(move |_| Msg::Select(key.clone()))}>
                                        <span class="kind">{ r.kind.clone() }</span>{ " " }
                                        <span class="name">{ r.name.clone() }</span>
                                    </button>
                                    <span class={classes!("badge", badge_class(label))}>{ label }</span>
                                    if let Some((who, h)) = &r.trouble {
                                        <span class="trouble">{ format!("{}: {}", health_label(*h), who) }</span>
                                    }
                                </li>
                            }
                        }
                    }) }
                </ul>
            </section>
        }
    }

    fn view_editor(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let m = &self.model;
        let diagnostics: Vec<Diagnostic> = m
            .diagnostics
            .iter()
            .map(|e| Diagnostic {
                line: e.location.map_or(1, |l| l.line as u32),
                column: e.location.map_or(1, |l| l.column as u32),
                message: e.message.clone(),
            })
            .collect();
        let language = match m.syntax {
            Syntax::Json => Language::Json,
            Syntax::Yaml => Language::Yaml,
        };
        let loaded_rv = m
            .selected
            .as_ref()
            .and_then(|k| m.shown().object(k))
            .and_then(|o| {
                o.pointer("/metadata/resourceVersion")
                    .and_then(|v| v.as_str())
                    .map(str::to_owned)
            });
        let text_rv = converge_core::parse::parse_documents(&m.editor_text)
            .ok()
            .and_then(|d| d.into_iter().next())
            .and_then(|o| {
                o.pointer("/metadata/resourceVersion")
                    .and_then(|v| v.as_str())
                    .map(str::to_owned)
            });
        let outdated = loaded_rv.is_some() && text_rv.is_some() && loaded_rv != text_rv;
        html! {
            <section class="pane editor" aria-labelledby="editor-h">
                <h2 id="editor-h">{ "Spec" }</h2>
                if m.first_edit_hint {
                    <aside id="first-edit-hint" class="hint" aria-labelledby="first-edit-hint-h">
                        <p><strong id="first-edit-hint-h">{ "Try it: " }</strong>
                            { "in the editor below, change " }<code>{ if m.syntax == Syntax::Yaml { "replicas: 3" } else { "\"replicas\": 3" } }</code>{ " to 5 and press " }
                            <strong>{ "Apply" }</strong>{ " (Ctrl+Enter). Then " }<strong>{ "Step" }</strong>{ " (n) or " }
                            <strong>{ "Play" }</strong>{ " (Space) and watch status catch up with spec." }</p>
                        <button id="first-edit-hint-dismiss" onclick={link.callback(|_| Msg::DismissHint)}>{ "Dismiss hint" }</button>
                    </aside>
                }
                <p class="muted">{ m.selected.as_ref().map(key_text).unwrap_or_else(|| "no object selected".into()) }</p>
                <div class="editor-tools">
                    <label>{ "Act as " }
                        <select id="principal" onchange={link.callback(|e: Event| {
                            let s: HtmlSelectElement = e.target_unchecked_into();
                            Msg::SetPrincipal(s.value())
                        })}>
                            { for PRINCIPALS.iter().map(|p| html! {
                                <option value={*p} selected={m.principal == *p}>{ *p }</option>
                            }) }
                        </select>
                    </label>
                    <label>{ "Write " }
                        <select id="target" onchange={link.callback(|e: Event| {
                            let s: HtmlSelectElement = e.target_unchecked_into();
                            Msg::SetTarget(if s.value() == "status" { Target::Status } else { Target::Main })
                        })}>
                            <option value="main" selected={m.target == Target::Main}>{ "object (spec, metadata)" }</option>
                            <option value="status" selected={m.target == Target::Status}>{ "/status subresource" }</option>
                        </select>
                    </label>
                    <fieldset class="syntax">
                        <legend class="visually-hidden">{ "Syntax" }</legend>
                        <button aria-pressed={(m.syntax == Syntax::Json).to_string()} onclick={link.callback(|_| Msg::SetSyntax(Syntax::Json))}>{ "JSON" }</button>
                        <button aria-pressed={(m.syntax == Syntax::Yaml).to_string()} onclick={link.callback(|_| Msg::SetSyntax(Syntax::Yaml))}>{ "YAML" }</button>
                    </fieldset>
                    <button onclick={link.callback(|_| Msg::Format)}>{ "Format" }</button>
                    <button onclick={link.callback(|_| Msg::Reload)}>{ "Reload" }</button>
                    <button id="apply" class="primary" onclick={link.callback(|_| Msg::Apply)} title="Ctrl/Cmd+Enter">{ "Apply" }</button>
                </div>
                <CodeEditor value={AttrValue::from(m.editor_text.clone())} {language} {diagnostics}
                    on_change={link.callback(|t: String| Msg::EditorInput(t))}
                    on_apply={link.callback(|_: ()| Msg::Apply)} readonly={false} />
                if outdated {
                    <p class="muted" id="outdated">{ format!("The stored object changed since you loaded it (resourceVersion {} → {}); Apply will be refused with 409 Conflict. Reload to edit the latest.", text_rv.unwrap_or_default(), loaded_rv.unwrap_or_default()) }</p>
                }
                if let Some(o) = &m.outcome {
                    <p id="apply-result" role="status" class={classes!("outcome", if o.is_error() { "bad" } else { "ok" })}>{ o.text() }</p>
                }
            </section>
        }
    }

    fn view_status(&self, _ctx: &Context<Self>) -> Html {
        let m = &self.model;
        let w = m.shown();
        let obj = m.selected.as_ref().and_then(|k| w.object(k));
        let Some(obj) = obj else {
            return html! {
                <section class="pane status" aria-labelledby="status-h">
                    <h2 id="status-h">{ "Status" }</h2>
                    <p class="muted">{ "Select an object." }</p>
                </section>
            };
        };
        let before = m
            .selected
            .as_ref()
            .and_then(|k| m.previous().and_then(|p| p.object(k)));
        let v = status_view(obj, before, w.now());
        let num = |x: Option<i64>| x.map_or("–".to_owned(), |n| n.to_string());
        html! {
            <section class="pane status" aria-labelledby="status-h">
                <h2 id="status-h">{ "Status" }</h2>
                <div class="generations">
                    <div><span class="muted">{ "generation" }</span><strong id="generation">{ num(v.generation) }</strong></div>
                    <div><span class="muted">{ "observedGeneration" }</span><strong id="observed-generation">{ num(v.observed_generation) }</strong></div>
                    if v.generation.is_some() {
                        <span id="generation-badge" class={classes!("badge", if v.stale { "warn" } else { "ok" })}>
                            { if v.stale { "stale" } else { "caught up" } }
                        </span>
                    }
                </div>
                if let Some(line) = &v.rollout {
                    <p class="rollout"><span class="muted">{ "kubectl rollout status: " }</span><code id="rollout">{ line.clone() }</code></p>
                }
                <table class="fields">
                    <caption class="visually-hidden">{ "status fields; changed in the last step are highlighted" }</caption>
                    <tbody>
                    { for v.fields.iter().map(|f| html! {
                        <tr class={classes!(f.changed.then_some("changed"))} data-field={f.path.clone()}>
                            <th scope="row">{ field_path(&f.path) }</th>
                            <td>{ f.value.clone() }{ if f.changed { html!{ <span class="visually-hidden">{ " (changed)" }</span> } } else { html!{} } }</td>
                        </tr>
                    }) }
                    </tbody>
                </table>
                if !v.conditions.is_empty() {
                    <div class="table-scroll">
                    <table class="conditions" id="conditions" role="table">
                        <caption>{ "Conditions" }</caption>
                        <thead role="rowgroup"><tr role="row">{ for CONDITION_COLUMNS.iter().map(|c| html! { <th role="columnheader" scope="col">{ *c }</th> }) }</tr></thead>
                        <tbody role="rowgroup">
                        { for v.conditions.iter().map(|c| html! {
                            <tr role="row" class={classes!(c.changed.then_some("changed"))} data-condition={c.type_.clone()}>
                                <td role="cell" data-label={CONDITION_COLUMNS[0]}>{ c.type_.clone() }</td>
                                <td role="cell" data-label={CONDITION_COLUMNS[1]} class={classes!(match c.status.as_str() { "True" => "ok", "False" => "bad", _ => "warn" })}>{ c.status.clone() }</td>
                                <td role="cell" data-label={CONDITION_COLUMNS[2]}>{ c.reason.clone() }</td>
                                <td role="cell" data-label={CONDITION_COLUMNS[3]}>{ c.message.clone() }</td>
                                <td role="cell" data-label={CONDITION_COLUMNS[4]}><span>{ c.last_transition.clone() }{ " " }<span class="muted">{ format!("({})", c.ago) }</span></span></td>
                                <td role="cell" data-label={CONDITION_COLUMNS[5]}><span>{ num(c.observed_generation) }{ if c.stale { html!{ <>{ " " }<span class="badge warn">{ "stale" }</span></> } } else { html!{} } }</span></td>
                            </tr>
                        }) }
                        </tbody>
                    </table>
                    </div>
                }
            </section>
        }
    }

    fn view_timeline(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let m = &self.model;
        let upto = m.shown().steps();
        let shown_reports: Vec<(u64, &converge_core::engine::StepReport)> = m
            .reports
            .iter()
            .filter(|(s, _)| *s <= upto)
            .map(|(s, r)| (*s, r))
            .collect();
        let lanes: Vec<Lane> = timeline::lanes(&shown_reports, TIMELINE_ENTRIES);
        let steps: Vec<u64> = m.history.steps().collect();
        let min = steps.first().copied().unwrap_or(0);
        let max = m.world.steps();
        let selected = m.selected_entry.clone();
        let detail = selected.as_ref().and_then(|(s, q, l)| {
            lanes
                .iter()
                .flat_map(|lane| lane.entries.iter())
                .find(|e| e.step == *s && e.seq == *q && &e.label == l)
        });
        html! {
            <section class="pane timeline" aria-labelledby="timeline-h">
                <h2 id="timeline-h">{ "Timeline" }</h2>
                <div class="scrub">
                    <label for="scrub">{ format!("Step {upto} of {max}") }</label>
                    <input id="scrub" type="range" min={min.to_string()} max={max.to_string()} value={upto.to_string()}
                        oninput={link.callback(move |e: InputEvent| {
                            let i: HtmlInputElement = e.target_unchecked_into();
                            let s = i.value().parse::<u64>().unwrap_or(max);
                            Msg::Scrub((s < max).then_some(s))
                        })} />
                    <button onclick={link.callback(|_| Msg::Scrub(None))} disabled={m.cursor.is_none()}>{ "Live" }</button>
                    <button id="fork" onclick={link.callback(|_| Msg::Fork)} disabled={m.cursor.is_none()}>{ "Fork from here" }</button>
                </div>
                <div class="lanes">
                    { for lanes.iter().map(|lane| html! {
                        <div class="lane">
                            <h3>{ lane.actor.clone() }</h3>
                            <ol>
                                { for lane.entries.iter().map(|e| {
                                    let id = (e.step, e.seq, e.label.clone());
                                    let pressed = selected.as_ref() == Some(&id);
                                    let cls = match e.code { Some(c) if c >= 400 => "bad", Some(_) => "ok", None => "watch" };
                                    html! {
                                        <li>
                                            <button class={classes!("entry", cls)} aria-pressed={pressed.to_string()}
                                                onclick={link.callback(move |_| Msg::SelectEntry(if pressed { None } else { Some(id.clone()) }))}>
                                                <span class="muted">{ format!("#{} {:.3}s ", e.step, e.time_ms as f64 / 1000.0) }</span>
                                                { e.label.clone() }
                                            </button>
                                            if !e.message.is_empty() { <p class="message">{ e.message.clone() }</p> }
                                        </li>
                                    }
                                }) }
                            </ol>
                        </div>
                    }) }
                </div>
                if let Some(e) = detail {
                    <div class="diff" id="entry-diff" role="region" aria-label="Changes caused by the selected entry">
                        <h3>{ e.label.clone() }</h3>
                        if e.changes.is_empty() { <p class="muted">{ "No object changed." }</p> }
                        { for e.changes.iter().map(|(obj, fields)| html! {
                            <>
                            <h4>{ obj.clone() }</h4>
                            <ul>
                                { for fields.iter().map(|f| html! {
                                    <li><code>{ f.path.clone() }</code>{ ": " }
                                        <del>{ f.before.as_ref().map(|v| v.to_string()).unwrap_or_else(|| "(absent)".into()) }</del>{ " → " }
                                        <ins>{ f.after.as_ref().map(|v| v.to_string()).unwrap_or_else(|| "(absent)".into()) }</ins></li>
                                }) }
                            </ul>
                            </>
                        }) }
                    </div>
                }
            </section>
        }
    }

    fn view_faults(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let w = &self.model.world;
        let nodes: Vec<String> = w
            .objects()
            .filter(|(k, _)| k.gr.resource == "nodes")
            .map(|(k, _)| k.name.clone())
            .collect();
        let rbac = w.api().rbac_enforced();
        html! {
            <section class="pane faults" aria-labelledby="faults-h">
                <h2 id="faults-h">{ "Faults" }</h2>
                <table>
                    <caption class="visually-hidden">{ "Controllers" }</caption>
                    <tbody>
                    { for w.controller_names().into_iter().map(|c| {
                        let state = w.controller_state(&c).map(|s| format!("{s:?}")).unwrap_or_default();
                        let (a, b, d) = (c.clone(), c.clone(), c.clone());
                        let e = c.clone();
                        html! {
                            <tr>
                                <th scope="row">{ c.clone() }</th>
                                <td class="state">{ state }</td>
                                <td>
                                    <button onclick={link.callback(move |_| Msg::Fault(FaultMsg::Pause(a.clone())))} aria-label={format!("Pause {c}")}>{ "Pause" }</button>
                                    <button onclick={link.callback(move |_| Msg::Fault(FaultMsg::Resume(b.clone())))} aria-label={format!("Resume {c}")}>{ "Resume" }</button>
                                    <button onclick={link.callback(move |_| Msg::Fault(FaultMsg::Crash(d.clone())))} aria-label={format!("Crash {c}")}>{ "Crash" }</button>
                                    <button onclick={link.callback(move |_| Msg::Fault(FaultMsg::Restart(e.clone())))} aria-label={format!("Restart {c}")}>{ "Restart" }</button>
                                </td>
                            </tr>
                        }
                    }) }
                    </tbody>
                </table>
                <label>{ "Watch latency (all controllers) " }
                    <select id="latency" onchange={link.callback(|e: Event| {
                        let s: HtmlSelectElement = e.target_unchecked_into();
                        Msg::Fault(FaultMsg::WatchLatency(s.value().parse().unwrap_or(5)))
                    })}>
                        <option value="" selected=true disabled=true>{ "change…" }</option>
                        { for [5u64, 100, 1000, 5000].into_iter().map(|ms| html! { <option value={ms.to_string()}>{ format!("{ms} ms") }</option> }) }
                    </select>
                </label>
                <ul class="image-pull">
                    { for nodes.into_iter().map(|n| {
                        let (a, b) = (n.clone(), n.clone());
                        html! {
                            <li>{ format!("kubelet on {n}: image pulls ") }
                                <button onclick={link.callback(move |_| Msg::Fault(FaultMsg::ImagePull { node: a.clone(), failing: true }))} aria-label={format!("Fail image pulls on {n}")}>{ "fail" }</button>
                                <button onclick={link.callback(move |_| Msg::Fault(FaultMsg::ImagePull { node: b.clone(), failing: false }))} aria-label={format!("Heal image pulls on {n}")}>{ "heal" }</button>
                            </li>
                        }
                    }) }
                </ul>
                <label class="switch">
                    <input type="checkbox" id="rbac-enforced" checked={rbac}
                        onchange={link.callback(|e: Event| {
                            let i: HtmlInputElement = e.target_unchecked_into();
                            Msg::SetRbacEnforced(i.checked())
                        })} />
                    { " Enforce RBAC in the API server" }
                </label>
                <p class="muted" id="rbac-note">{ if rbac {
                    "To see RBAC at work, pick \"Act as app\" and \"/status subresource\" in the editor and Apply: 403. Act as the deployment controller and the same write succeeds."
                } else {
                    "RBAC is off: every principal may write everything, status included (what status spoofing would look like). Turn it back on to restore the default policy."
                } }</p>
            </section>
        }
    }

    fn view_help(&self, ctx: &Context<Self>) -> Html {
        let help = self.help.clone();
        let close = Callback::from(move |_| {
            if let Some(d) = help.cast::<HtmlDialogElement>() {
                d.close();
            }
        });
        html! {
            <dialog ref={self.help.clone()} id="help" aria-labelledby="help-h" onclose={ctx.link().callback(|_| AppMsg::HelpClosed)}>
                <h2 id="help-h">{ "Keyboard shortcuts" }</h2>
                <dl class="shortcuts">
                    <dt><kbd>{ "Space" }</kbd></dt><dd>{ "Play / pause" }</dd>
                    <dt><kbd>{ "n" }</kbd></dt><dd>{ "Step (one event)" }</dd>
                    <dt><kbd>{ "Shift" }</kbd>{ "+" }<kbd>{ "N" }</kbd></dt><dd>{ "Next event time" }</dd>
                    <dt><kbd>{ "r" }</kbd></dt><dd>{ "Run until converged" }</dd>
                    <dt><kbd>{ "?" }</kbd></dt><dd>{ "This help" }</dd>
                    <dt><kbd>{ "↑" }</kbd>{ " " }<kbd>{ "↓" }</kbd>{ " " }<kbd>{ "Home" }</kbd>{ " " }<kbd>{ "End" }</kbd></dt><dd>{ "Move between objects in the object list" }</dd>
                    <dt><kbd>{ "→" }</kbd>{ " " }<kbd>{ "←" }</kbd></dt><dd>{ "Open / close the group in the object list" }</dd>
                    <dt><kbd>{ "Ctrl/Cmd" }</kbd>{ "+" }<kbd>{ "Enter" }</kbd></dt><dd>{ "Apply the editor (while editing)" }</dd>
                    <dt><kbd>{ "Escape" }</kbd></dt><dd>{ "Leave the editor, so the keys above are shortcuts again" }</dd>
                </dl>
                <p class="muted">{ "Shortcuts are ignored while typing in a field. Escape closes this dialog." }</p>
                <h3 id="about-h">{ "About" }</h3>
                <p id="about">{ format!(
                    "Converge models Kubernetes v{}: its API server, controllers, scheduler and kubelets run in this tab, deterministically, from the seed.",
                    converge_core::KUBERNETES_VERSION
                ) }</p>
                <button onclick={close} autofocus=true>{ "Close" }</button>
            </dialog>
        }
    }
}

/// A status field's JSON pointer as a dotted path that may wrap after each dot, never inside a
/// field name (`containerStatuses.0.imageID`).
fn field_path(pointer: &str) -> Html {
    let mut parts = pointer.trim_start_matches('/').split('/');
    let first = parts.next().unwrap_or_default().to_owned();
    html! {
        <>{ first }{ for parts.map(|p| html! { <>{ "." }<wbr/>{ p.to_owned() }</> }) }</>
    }
}

fn badge_class(label: &str) -> &'static str {
    match label {
        "Current" => "ok",
        "Failed" => "bad",
        "Terminating" => "muted",
        _ => "warn",
    }
}
