//! Arrow keys in the object list: Up/Down move focus to the previous/next row, Home/End to the
//! first/last, Right opens a collapsed group and Left closes an open one (through the row's
//! toggle button, so the change goes through the reducer like a click). Tab still leaves the
//! list; this only adds a quicker way through long groups. Pure DOM focus handling, no state.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement, KeyboardEvent};

/// The focusable control of a row: its object button, or a "show more" button.
const ROW_TARGET: &str = "button.object, button.show-more";

/// Handles a keydown that bubbled to the object list.
pub fn on_key(e: &KeyboardEvent) {
    if e.ctrl_key() || e.meta_key() || e.alt_key() || e.shift_key() {
        return;
    }
    let Some(row) = e
        .target()
        .and_then(|t| t.dyn_into::<Element>().ok())
        .and_then(|el| el.closest("li").ok().flatten())
    else {
        return;
    };
    let next = match e.key().as_str() {
        "ArrowDown" => sibling_row(&row, Element::next_element_sibling),
        "ArrowUp" => sibling_row(&row, Element::previous_element_sibling),
        "Home" => row
            .parent_element()
            .and_then(|l| first_row(l.first_element_child(), Element::next_element_sibling)),
        "End" => row
            .parent_element()
            .and_then(|l| first_row(l.last_element_child(), Element::previous_element_sibling)),
        "ArrowRight" | "ArrowLeft" => {
            let want_open = e.key() == "ArrowRight";
            if let Some(toggle) = row
                .query_selector("button.twisty")
                .ok()
                .flatten()
                .and_then(|b| b.dyn_into::<HtmlElement>().ok())
            {
                let open = toggle.get_attribute("aria-expanded").as_deref() == Some("true");
                if open != want_open {
                    toggle.click();
                }
                e.prevent_default();
            }
            return;
        }
        _ => return,
    };
    e.prevent_default();
    if let Some(target) = next {
        let _ = target.focus();
    }
}

/// The focus target of the nearest row from `row` in the direction of `step`.
fn sibling_row(row: &Element, step: fn(&Element) -> Option<Element>) -> Option<HtmlElement> {
    first_row(step(row), step)
}

/// The first row from `start` (inclusive) in the direction of `step` that has a focus target.
fn first_row(
    mut at: Option<Element>,
    step: fn(&Element) -> Option<Element>,
) -> Option<HtmlElement> {
    while let Some(li) = at {
        if let Some(t) = li
            .query_selector(ROW_TARGET)
            .ok()
            .flatten()
            .and_then(|b| b.dyn_into::<HtmlElement>().ok())
        {
            return Some(t);
        }
        at = step(&li);
    }
    None
}
