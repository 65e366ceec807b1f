//! What the reducer asks the outside world to do, as values: `Model::update` returns them and
//! `crate::platform` performs them, so every decision stays testable natively and the browser
//! calls sit in one place.

use serde_json::Value;

use super::{Theme, Workspace};

/// One side effect, decided by the state and performed by the platform.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Write the workspace to localStorage under `key` (core's versioned JSON).
    SaveWorkspace {
        key: String,
        workspace: Box<Workspace>,
    },
    /// Remember that the newcomer's hint has gone (`persist::HINT_DONE_KEY`).
    MarkHintDone,
    /// Keep the text of the scenario file the reader opened, so `?scenario=custom` reopens it.
    KeepCustomScenario { text: String },
    /// Put `?scenario=<id>` (None: no query) in the address bar with replaceState.
    ShowScenarioInUrl { scenario: Option<String> },
    /// Put this share-link hash in the address bar with replaceState.
    ReplaceHash { hash: String },
    /// Put the share link in the address bar and answer with `Msg::ShareLinkReady(full url)`.
    PublishShareLink { hash: String },
    /// (Re)start the quiet period after which the address bar follows the workspace
    /// (`Msg::SyncHash`); a newer change restarts it.
    ScheduleHashSync,
    /// Start the play timer (`Msg::Tick` every `TICK_MS`).
    StartTicking,
    /// Stop the play timer.
    StopTicking,
    /// Set the page's colour theme (`data-theme` on the root element).
    ApplyTheme(Theme),
    /// Mark `converge-step-start`; the step is measured once the DOM is patched.
    MarkStepStart,
    /// Post a message to the embedding host page, for `target_origin` only (`*`: any).
    PostToHost {
        message: Value,
        target_origin: String,
    },
    /// Answer the window whose message is being handled, for `origin` only.
    ReplyToSender { message: Value, origin: String },
    /// Open the help dialog, remembering what had focus.
    OpenHelpDialog,
    /// The help dialog closed: give focus back to what had it.
    ReturnFocusAfterHelp,
}

/// What one update did: whether the view must re-render, and the effects to perform in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reaction {
    pub render: bool,
    pub effects: Vec<Effect>,
}

impl Reaction {
    /// Nothing to draw, nothing to do.
    pub fn none() -> Self {
        Reaction::default()
    }

    /// Effects only, no re-render.
    pub fn effects(effects: Vec<Effect>) -> Self {
        Reaction {
            render: false,
            effects,
        }
    }

    /// A re-render and no effect.
    pub fn render() -> Self {
        Reaction {
            render: true,
            effects: Vec::new(),
        }
    }
}
