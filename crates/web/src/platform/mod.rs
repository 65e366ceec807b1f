//! The browser edge: performs the state's [`Effect`]s (localStorage through `crate::persist`,
//! the address bar and history, postMessage to the host page, performance marks, the theme
//! attribute, timers, focus) and turns the page's events (keys, `pagehide`, host messages)
//! into messages, and cuts the boot into browser tasks ([`tasks`]). The only module that calls
//! web-sys for those; the state decides, this does.

#[cfg(feature = "checkpoint")]
pub mod checkpointer;
pub mod host_page;
pub mod panic_panel;
pub mod shortcuts;
pub mod tasks;

use gloo_timers::callback::{Interval, Timeout};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{HtmlDialogElement, HtmlElement, Window};
use yew::{Callback, NodeRef};

use crate::persist;
use crate::state::{Effect, Msg, StartingPage, Theme, TICK_MS};
use shortcuts::Shortcut;

/// Quiet time before the URL hash follows the workspace (replaceState, never pushState).
const HASH_DEBOUNCE_MS: u32 = 800;

fn window() -> Option<Window> {
    web_sys::window()
}

fn storage() -> Option<web_sys::Storage> {
    window().and_then(|w| w.local_storage().ok().flatten())
}

fn session_storage() -> Option<web_sys::Storage> {
    window().and_then(|w| w.session_storage().ok().flatten())
}

/// Reads one localStorage item (None: absent, or no storage).
pub fn stored(key: &str) -> Option<String> {
    storage().and_then(|s| s.get_item(key).ok().flatten())
}

/// Whether the browser offers localStorage at all.
pub fn has_storage() -> bool {
    storage().is_some()
}

/// `location.search` and `location.hash` as the app started.
pub fn location_parts() -> (String, String) {
    let location = window().map(|w| w.location());
    let part = |f: fn(&web_sys::Location) -> Result<String, wasm_bindgen::JsValue>| {
        location
            .as_ref()
            .and_then(|l| f(l).ok())
            .unwrap_or_default()
    };
    (
        part(web_sys::Location::search),
        part(web_sys::Location::hash),
    )
}

/// Calls `f` with what the page holds as the app starts: the address and the storage.
pub fn with_starting_page<T>(f: impl FnOnce(&StartingPage<'_>) -> T) -> T {
    let (search, hash) = location_parts();
    let read: &dyn Fn(&str) -> Option<String> = &stored;
    #[cfg(feature = "checkpoint")]
    let (checkpoint, checkpoint_shipped) = checkpointer::prefetched().unzip();
    #[cfg(not(feature = "checkpoint"))]
    let (checkpoint, checkpoint_shipped) = (None, None);
    f(&StartingPage {
        search,
        hash,
        storage: has_storage().then_some(read),
        gallery: prefetched_gallery(),
        checkpoint: std::cell::Cell::new(checkpoint),
        checkpoint_shipped: checkpoint_shipped.unwrap_or(false),
    })
}

/// `gallery.json` as web/boot.js fetched it before starting the app (`convergeGallery`, when
/// the address names a gallery scenario).
fn prefetched_gallery() -> Option<String> {
    let w = window()?;
    js_sys::Reflect::get(&w, &"convergeGallery".into())
        .ok()?
        .as_string()
}

/// Fetches `gallery.json` (the gallery's texts, web/gallery-bundle.mjs) and answers with
/// [`Msg::GalleryLoaded`].
pub fn fetch_gallery(send: Callback<Msg>) {
    wasm_bindgen_futures::spawn_local(async move {
        let text = async {
            let w = window().ok_or("no window")?;
            let response = wasm_bindgen_futures::JsFuture::from(w.fetch_with_str("gallery.json"))
                .await
                .map_err(|_| "offline?")?;
            let response: web_sys::Response = response.dyn_into().map_err(|_| "no response")?;
            if !response.ok() {
                return Err("the server has no gallery.json");
            }
            let text = response.text().map_err(|_| "unreadable")?;
            wasm_bindgen_futures::JsFuture::from(text)
                .await
                .ok()
                .and_then(|t| t.as_string())
                .ok_or("unreadable")
        };
        send.emit(Msg::GalleryLoaded(text.await.map_err(str::to_owned)));
    });
}

/// Whether the URL asks for a deliberate panic (`?debug-panic`), so the browser tests (and
/// anyone curious) can see the error panel on demand.
pub fn deliberate_panic_requested() -> bool {
    location_parts()
        .0
        .trim_start_matches('?')
        .split('&')
        .any(|p| p == "debug-panic")
}

/// The element that has focus, if it is an HTML element.
fn focused_element() -> Option<HtmlElement> {
    window()
        .and_then(|w| w.document())
        .and_then(|doc| doc.active_element())
        .and_then(|el| el.dyn_into::<HtmlElement>().ok())
}

fn performance_mark(name: &str) {
    if let Some(p) = window().and_then(|w| w.performance()) {
        let _ = p.mark(name);
    }
}

fn replace_url(url: &str) {
    if let Some(h) = window().and_then(|w| w.history().ok()) {
        let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(url));
    }
}

fn set_item(key: &str, value: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item(key, value);
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

/// Reads a file the reader picked and hands its text on (None: it could not be read).
pub fn read_file_text(file: web_sys::File, then: Callback<Option<String>>) {
    yew::platform::spawn_local(async move {
        let text = wasm_bindgen_futures::JsFuture::from(file.text())
            .await
            .ok()
            .and_then(|v| v.as_string());
        then.emit(text);
    });
}

/// Performs effects and holds what performing them needs: the timers, the page listeners, the
/// help dialog and what had focus before it opened.
pub struct Platform {
    /// Where timers and answering effects send their messages.
    send: Callback<Msg>,
    ticker: Option<Interval>,
    hash_timer: Option<Timeout>,
    /// A step was marked as started: measure it once the DOM is patched.
    measuring_step: bool,
    help: NodeRef,
    /// What had focus when the help dialog opened, to give it back when it closes.
    help_return: Option<HtmlElement>,
    /// The element to focus once the view is drawn (`Effect::FocusAfterRender`).
    focus_after_render: Option<&'static str>,
    keys: Option<Closure<dyn Fn(web_sys::KeyboardEvent)>>,
    pagehide: Option<Closure<dyn Fn(web_sys::Event)>>,
    host: Option<Closure<dyn Fn(web_sys::MessageEvent)>>,
}

impl Platform {
    /// `help` is the help dialog's element.
    pub fn new(send: Callback<Msg>, help: NodeRef) -> Self {
        Platform {
            send,
            ticker: None,
            hash_timer: None,
            measuring_step: false,
            help,
            help_return: None,
            focus_after_render: None,
            keys: None,
            pagehide: None,
            host: None,
        }
    }

    /// Performs one effect; `sender` is the window whose message is being handled, if any.
    /// Returns the message an effect answers with.
    pub fn perform(&mut self, effect: Effect, sender: Option<&Window>) -> Option<Msg> {
        match effect {
            Effect::SaveWorkspace {
                key,
                workspace,
                worth_checkpoint,
            } => {
                set_item(&key, &persist::to_json(&workspace));
                // web/boot.js: a long session gets a checkpoint (web/checkpoint.js); a short
                // one no longer needs one.
                if key == persist::STORAGE_KEY {
                    dispatch(if worth_checkpoint {
                        "converge-saved"
                    } else {
                        "converge-saved-short"
                    });
                }
            }
            Effect::MarkHintDone => set_item(persist::HINT_DONE_KEY, "done"),
            Effect::KeepCustomScenario { text } => set_item(persist::CUSTOM_TEXT_KEY, &text),
            Effect::ShowScenarioInUrl { scenario } => {
                let path = window()
                    .and_then(|w| w.location().pathname().ok())
                    .unwrap_or_default();
                let url = match scenario {
                    Some(id) => format!("{path}?scenario={id}"),
                    None => path,
                };
                replace_url(&url);
            }
            Effect::ReplaceHash { hash } => replace_url(&hash),
            Effect::PublishShareLink { hash } => {
                let w = window()?;
                let loc = w.location();
                let base = format!(
                    "{}{}{}",
                    loc.origin().unwrap_or_default(),
                    loc.pathname().unwrap_or_default(),
                    loc.search().unwrap_or_default()
                );
                replace_url(&hash);
                return Some(Msg::ShareLinkReady(format!("{base}{hash}")));
            }
            Effect::ScheduleHashSync => {
                let send = self.send.clone();
                self.hash_timer = Some(Timeout::new(HASH_DEBOUNCE_MS, move || {
                    send.emit(Msg::SyncHash)
                }));
            }
            Effect::StartTicking => {
                let send = self.send.clone();
                self.ticker = Some(Interval::new(TICK_MS, move || send.emit(Msg::Tick)));
            }
            Effect::StopTicking => self.ticker = None,
            Effect::ApplyTheme(theme) => apply_theme(theme),
            // web/boot.js deletes it (web/checkpoint.js).
            Effect::ForgetCheckpoint => dispatch("converge-checkpoint-unused"),
            Effect::MarkStepStart => {
                performance_mark("converge-step-start");
                self.measuring_step = true;
            }
            Effect::PostToHost {
                message,
                target_origin,
            } => host_page::post_to_parent(&message, &target_origin),
            Effect::ReplyToSender { message, origin } => match sender {
                Some(s) => host_page::post(s, &message, &origin),
                // A deferred `load` (state::Deferred), answered once the gallery arrived: the
                // host that sent it is the parent page, for `origin` only.
                None => host_page::post_to_parent(&message, &origin),
            },
            Effect::OpenHelpDialog => {
                if let Some(d) = self.help.cast::<HtmlDialogElement>() {
                    if !d.open() {
                        self.help_return = focused_element();
                        let _ = d.show_modal();
                    }
                }
            }
            Effect::ReturnFocusAfterHelp => self.return_focus_after_help(),
            Effect::FocusTerminal => self.focus_after_render = Some("terminal-input"),
            Effect::LoadTerminalBuild => return load_terminal_build().err().map(Msg::Notice),
            Effect::FocusAfterRender(id) => self.focus_after_render = Some(id),
        }
        None
    }

    fn return_focus_after_help(&mut self) {
        // The dialog's button keeps focus while the dialog is hidden, and Chromium gives it back
        // only to an element (not to the page) and only later: until then every key would land
        // on that hidden button and a shortcut pressed right after Escape would be lost. Focus
        // returns to what had it, or leaves the page's controls.
        let back = self
            .help_return
            .take()
            .filter(|el| el.is_connected() && el.tag_name() != "BODY" && el.tag_name() != "HTML");
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
    }

    /// After every render: a step marked as started is measured now that the DOM is patched.
    pub fn rendered(&mut self) {
        if let Some(id) = self.focus_after_render.take() {
            if let Some(el) = window()
                .and_then(|w| w.document())
                .and_then(|d| d.get_element_by_id(id))
                .and_then(|e| e.dyn_into::<HtmlElement>().ok())
            {
                let _ = el.focus();
            }
        }
        if self.measuring_step {
            self.measuring_step = false;
            performance_mark("converge-step-end");
            if let Some(p) = window().and_then(|w| w.performance()) {
                let _ = p.measure_with_start_mark_and_end_mark(
                    "converge-step",
                    "converge-step-start",
                    "converge-step-end",
                );
            }
        }
    }

    /// Listens for the single-key shortcuts on the document.
    pub fn listen_for_shortcuts(&mut self, on: impl Fn(Shortcut) + 'static) {
        let handler =
            Closure::<dyn Fn(web_sys::KeyboardEvent)>::new(move |e: web_sys::KeyboardEvent| {
                if let Some(s) = shortcuts::shortcut(&e) {
                    e.prevent_default();
                    on(s);
                }
            });
        if let Some(doc) = window().and_then(|w| w.document()) {
            let _ =
                doc.add_event_listener_with_callback("keydown", handler.as_ref().unchecked_ref());
        }
        self.keys = Some(handler);
    }

    /// Ticks while playing are not saved one by one; a reload mid-play must still come back at
    /// the step it left: `Msg::PageHidden` on `pagehide`.
    pub fn listen_for_pagehide(&mut self) {
        let send = self.send.clone();
        let on_hide = Closure::<dyn Fn(web_sys::Event)>::new(move |_: web_sys::Event| {
            send.emit(Msg::PageHidden)
        });
        if let Some(w) = window() {
            let _ =
                w.add_event_listener_with_callback("pagehide", on_hide.as_ref().unchecked_ref());
        }
        self.pagehide = Some(on_hide);
    }

    /// Embed mode: listens for the host page's messages.
    pub fn listen_to_host(
        &mut self,
        on: impl Fn(converge_core::json::Value, String, Option<Window>) + 'static,
    ) {
        self.host = host_page::listen(on);
    }

    /// Tells web/boot.js the app has drawn itself and listens: the `converge-ready` mark (what
    /// tests/e2e/first-load.test.mjs times), then the window event `converge-ready`, on which
    /// boot.js registers the service worker.
    pub fn announce_ready(&self) {
        performance_mark("converge-ready");
        dispatch("converge-ready");
    }
}

/// The boot script's `data-terminal-wasm`: the terminal's build, when this site has one
/// (web/terminal-build.mjs writes it; a `trunk serve` build has the terminal itself).
fn terminal_build() -> Option<String> {
    window()?
        .document()?
        .query_selector("script[data-converge-boot]")
        .ok()??
        .get_attribute("data-terminal-wasm")
}

/// Reloads the page into the terminal's build (the session is saved; the pagehide handler
/// saves it again). The share-link hash is dropped from the address, so the reload opens the
/// saved session rather than the link it started from.
fn load_terminal_build() -> Result<(), String> {
    let w = window().ok_or("no window")?;
    if terminal_build().is_none() {
        return Err("This build of Converge has no kubectl terminal.".into());
    }
    let (Some(local), Some(session)) = (storage(), session_storage()) else {
        return Err(
            "The kubectl terminal needs this site's storage to load: the page reloads \
                    into it with your session saved."
                .into(),
        );
    };
    local
        .set_item(persist::BUILD_KEY, "terminal")
        .and_then(|()| session.set_item(persist::OPEN_TERMINAL_KEY, "1"))
        .map_err(|_| "The kubectl terminal could not be loaded: storage is full.".to_owned())?;
    let loc = w.location();
    let url = format!(
        "{}{}",
        loc.pathname().unwrap_or_default(),
        loc.search().unwrap_or_default()
    );
    replace_url(&url);
    loc.reload()
        .map_err(|_| "The page could not reload.".to_owned())
}

/// Whether the page was reloaded to open the terminal ([`load_terminal_build`]); the request
/// is used up. The caller opens it, or in a build without it (its download failed and boot.js
/// fell back) says so.
pub fn take_open_terminal_request() -> bool {
    let Some(s) = session_storage() else {
        return false;
    };
    let asked = s
        .get_item(persist::OPEN_TERMINAL_KEY)
        .ok()
        .flatten()
        .is_some();
    let _ = s.remove_item(persist::OPEN_TERMINAL_KEY);
    asked
}

/// Tells web/boot.js the app is shown: the window event `converge-shown`, on which it removes
/// index.html's skeleton.
pub fn announce_shown() {
    dispatch("converge-shown");
}

fn dispatch(event: &str) {
    if let (Some(w), Ok(e)) = (window(), web_sys::Event::new(event)) {
        let _ = w.dispatch_event(&e);
    }
}
