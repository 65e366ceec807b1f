//! The Converge playground: a thin yew shell over `converge-core`.
//!
//! This crate is the only one that knows the DOM, Trunk, localStorage and the URL. State lives in
//! [`state::Model`], changed only by [`state::Msg`] through [`state::Model::update`]; the view in
//! [`app`] only formats.

pub mod app;
pub mod panic_panel;
pub mod state;

/// Installs the panic panel and mounts the app on `<body>`.
pub fn start() {
    panic_panel::install();
    yew::Renderer::<app::App>::new().render();
}
