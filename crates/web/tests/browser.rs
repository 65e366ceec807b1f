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
