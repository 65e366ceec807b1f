//! wasm tests in headless Chromium: the app mounts into a real DOM.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn the_app_renders_its_header_into_the_document() {
    let document = web_sys::window().unwrap().document().unwrap();
    let root = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&root).unwrap();
    yew::Renderer::<converge_web::app::App>::with_root(root.clone()).render();
    // yew renders on the next microtask/animation tick.
    gloo_timers::future::TimeoutFuture::new(0).await;
    let h1 = root.query_selector("h1").unwrap().expect("header rendered");
    assert_eq!(h1.text_content().as_deref(), Some("Converge"));
}

/// Builds `html` in a fresh element of the document and returns the element matching `pick`.
fn element(html: &str, pick: &str) -> web_sys::Element {
    let document = web_sys::window().unwrap().document().unwrap();
    let root = document.create_element("div").unwrap();
    root.set_inner_html(html);
    document.body().unwrap().append_child(&root).unwrap();
    root.query_selector(pick)
        .unwrap()
        .expect("the picked element")
}

#[wasm_bindgen_test]
fn keys_pressed_where_text_is_edited_are_typing_not_shortcuts() {
    use converge_web::shortcuts::is_typing_target;
    let typing = [
        (
            r#"<div class="cm-content" contenteditable="true"><div class="cm-line"><span>x</span></div></div>"#,
            "span",
        ),
        (r#"<div contenteditable="plaintext-only">x</div>"#, "div"),
        (r#"<div role="textbox" tabindex="0">x</div>"#, "div"),
        (r#"<div role="combobox" tabindex="0">x</div>"#, "div"),
        (r#"<input aria-label="kubectl command">"#, "input"),
        (r#"<textarea></textarea>"#, "textarea"),
        (r#"<select><option>a</option></select>"#, "select"),
        (r#"<button>Apply</button>"#, "button"),
        (r#"<dialog open><p>help</p></dialog>"#, "p"),
    ];
    for (html, pick) in typing {
        assert!(is_typing_target(&element(html, pick)), "typing: {html}");
    }
    let free = [
        (r##"<a href="#x">a link</a>"##, "a"),
        (r#"<p>text</p>"#, "p"),
        (
            r#"<div contenteditable="false"><span>x</span></div>"#,
            "span",
        ),
        // A closed dialog's button can hold focus for a moment after Escape; it takes no keys.
        (r#"<dialog><button>Close</button></dialog>"#, "button"),
    ];
    for (html, pick) in free {
        assert!(
            !is_typing_target(&element(html, pick)),
            "not typing: {html}"
        );
    }
}
