//! A readable error panel instead of a blank page when the wasm module panics.
//!
//! With `panic = "abort"` the module is dead after the hook returns, so the panel is built with
//! plain DOM calls (no yew) and says what to do next.

use std::panic::PanicHookInfo;

/// Routes panics to the console and to a visible panel.
pub fn install() {
    std::panic::set_hook(Box::new(on_panic));
}

fn on_panic(info: &PanicHookInfo<'_>) {
    let text = describe(info);
    web_sys::console::error_1(&format!("Converge panicked: {text}").into());
    show(&text);
}

/// The panic message and its source location, e.g. `index out of bounds (src/app.rs:10:5)`.
pub fn describe(info: &PanicHookInfo<'_>) -> String {
    let payload = info.payload();
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    match info.location() {
        Some(loc) => format!("{message} ({}:{}:{})", loc.file(), loc.line(), loc.column()),
        None => message,
    }
}

fn show(text: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Some(body) = document.body() else {
        return;
    };
    let Ok(panel) = document.create_element("section") else {
        return;
    };
    panel.set_id("panic-panel");
    let _ = panel.set_attribute("role", "alert");
    let heading = document.create_element("h2").ok();
    let detail = document.create_element("pre").ok();
    let advice = document.create_element("p").ok();
    if let Some(h) = heading {
        h.set_text_content(Some("Converge stopped because of an internal error"));
        let _ = panel.append_child(&h);
    }
    if let Some(p) = advice {
        p.set_text_content(Some(
            "Reload the page to start again. \
             If this keeps happening, copy the details below into a bug report.",
        ));
        let _ = panel.append_child(&p);
    }
    if let Some(pre) = detail {
        // set_text_content: the message is shown as text, never parsed as HTML.
        pre.set_text_content(Some(text));
        let _ = panel.append_child(&pre);
    }
    let _ = body.prepend_with_node_1(&panel);
    // web/boot.js: index.html's skeleton and its "Starting the simulator" line go, as they
    // would now be untrue.
    if let Ok(e) = web_sys::Event::new("converge-panic") {
        if let Some(w) = web_sys::window() {
            let _ = w.dispatch_event(&e);
        }
    }
}
