//! The Converge playground: a thin yew shell over `converge-core`.
//!
//! This crate is the only one that knows the DOM, Trunk, localStorage and the URL. State lives in
//! [`state::Model`], changed only by [`state::Msg`] through [`state::Model::update`]; the view in
//! [`app`] only formats.

pub mod app;
pub mod editor;
pub mod embed;
pub mod gallery;
pub mod lesson;
pub mod panic_panel;
pub mod persist;
pub mod shortcuts;
pub mod state;
mod tree_keys;

/// Installs the panic panel and mounts the app on `<body>`.
pub fn start() {
    panic_panel::install();
    if deliberate_panic_requested() {
        // Lets the browser tests (and anyone curious) see the error panel on demand.
        panic!("deliberate panic requested by the ?debug-panic URL parameter");
    }
    yew::Renderer::<app::App>::new().render();
}

fn deliberate_panic_requested() -> bool {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .is_some_and(|q| {
            q.trim_start_matches('?')
                .split('&')
                .any(|p| p == "debug-panic")
        })
}
