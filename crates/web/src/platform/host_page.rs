//! The host page of an embed (docs/embedding.md): listening to its postMessages, posting to
//! it, and measuring the content's height for it. The protocol itself (what is valid, what it
//! does, what is answered) is `crate::state::embed`.

use converge_core::json::Value;

/// Listens for messages from the parent window (the host page); others are ignored.
pub fn listen(
    on: impl Fn(Value, String, Option<web_sys::Window>) + 'static,
) -> Option<wasm_bindgen::closure::Closure<dyn Fn(web_sys::MessageEvent)>> {
    use wasm_bindgen::JsCast;
    let win = web_sys::window()?;
    let parent = win.parent().ok().flatten();
    let handler = wasm_bindgen::closure::Closure::<dyn Fn(web_sys::MessageEvent)>::new(
        move |e: web_sys::MessageEvent| {
            // The parent's window comes from another realm, where `instanceof Window` is false:
            // identity with `window.parent` is the check, so the cast is unchecked.
            let source = e.source().map(|s| s.unchecked_into::<web_sys::Window>());
            let from_parent = match (&source, &parent) {
                (Some(s), Some(p)) => js_sys::Object::is(s, p),
                _ => false,
            };
            if !from_parent {
                return;
            }
            // Anything JSON.stringify cannot express arrives as null and is refused as such.
            let data = js_sys::JSON::stringify(&e.data())
                .ok()
                .and_then(|s| s.as_string())
                .and_then(|s| serde_json::from_str(&s).ok())
                .unwrap_or(Value::Null);
            on(data, e.origin(), source);
        },
    );
    win.add_event_listener_with_callback("message", handler.as_ref().unchecked_ref())
        .ok()?;
    Some(handler)
}

/// Posts `v` to `target` for `origin` only.
pub fn post(target: &web_sys::Window, v: &Value, origin: &str) {
    if let Ok(js) = js_sys::JSON::parse(&v.to_string()) {
        let _ = target.post_message(&js, origin);
    }
}

/// Posts `v` to the parent window (the host page), if there is one, for `origin` only.
pub fn post_to_parent(v: &Value, origin: &str) {
    if let Some(parent) = web_sys::window().and_then(|w| w.parent().ok().flatten()) {
        post(&parent, v, origin);
    }
}

/// The content's height, not the viewport's: the shell has no min-height in embed mode, so
/// resizing the iframe to this height does not change it again.
pub fn content_height() -> Option<i32> {
    web_sys::window()?
        .document()
        .and_then(|d| d.query_selector(".shell").ok().flatten())
        .map(|e| e.scroll_height())
}
