//! The playground's single-key shortcuts (Space, n, N, r, t, ?), and the one rule that decides
//! whether a key press is a shortcut or the person's typing.
//!
//! A key belongs to whatever takes text or keys where it was pressed: a form field, anything
//! editable (CodeMirror's content is a contenteditable element), anything with a text-entry role
//! (`textbox`, `searchbox`, `combobox`), a button (Space presses it) or an open dialog. There a
//! shortcut neither acts nor calls `preventDefault`. tests/e2e/typing.test.mjs types every
//! printable character into the editor to hold it to that.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement, KeyboardEvent};

/// What a shortcut asks the playground to do.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Shortcut {
    TogglePlay,
    Step,
    NextEvent,
    RunUntilConverged,
    Help,
    ToggleTerminal,
}

/// Elements whose keys are their own, by tag or role. `[contenteditable]` covers an editable
/// host before `isContentEditable` is true (it is false while the element is disconnected).
pub(crate) const TYPING: &str =
    "input, textarea, select, button, [contenteditable]:not([contenteditable='false']), \
     [role='textbox'], [role='searchbox'], [role='combobox'], dialog[open]";

/// Whether a key pressed on `el` is typing (or another control's own key), never a shortcut.
pub fn is_typing_target(el: &Element) -> bool {
    // A control in a closed dialog is hidden: it can hold focus for a moment after the dialog
    // closes (until the app moves focus back), but it takes no keys.
    if el.closest("dialog:not([open])").ok().flatten().is_some() {
        return false;
    }
    if el
        .dyn_ref::<HtmlElement>()
        .is_some_and(HtmlElement::is_content_editable)
    {
        return true;
    }
    el.closest(TYPING).ok().flatten().is_some()
}

/// The shortcut a key press stands for, unless it is typing or carries a modifier other than
/// Shift. Key presses already handled elsewhere (`defaultPrevented`) or inside an IME
/// composition are never shortcuts.
pub fn shortcut(e: &KeyboardEvent) -> Option<Shortcut> {
    if e.ctrl_key() || e.meta_key() || e.alt_key() || e.default_prevented() || e.is_composing() {
        return None;
    }
    let typing = e
        .target()
        .and_then(|t| t.dyn_into::<Element>().ok())
        .is_some_and(|el| is_typing_target(&el));
    if typing {
        return None;
    }
    match e.key().as_str() {
        " " => Some(Shortcut::TogglePlay),
        "n" => Some(Shortcut::Step),
        "N" => Some(Shortcut::NextEvent),
        "r" => Some(Shortcut::RunUntilConverged),
        "?" => Some(Shortcut::Help),
        "t" => Some(Shortcut::ToggleTerminal),
        _ => None,
    }
}
