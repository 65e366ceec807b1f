//! The Converge playground: a thin yew shell over `converge-core`, as a one-way Elm loop.
//!
//! This crate is the only one that knows the DOM, Trunk, localStorage and the URL. Its modules
//! depend one way: `app` (the root component) wires [`state`], [`components`] and [`platform`];
//! `components` and `platform` use `state`'s types; `state` uses neither (nor yew nor web-sys),
//! only core and [`persist`]. State lives in [`state::Model`], changed only by [`state::Msg`]
//! through [`state::Model::update`], which returns [`state::Effect`]s that [`platform`]
//! performs; the views in [`components`] only format.

pub mod app;
pub mod components;
pub mod persist;
pub mod platform;
pub mod state;

/// The keyboard-shortcut rule, where the browser tests look for it.
pub use platform::shortcuts;

/// Installs the panic panel and mounts the app on `<body>`.
pub fn start() {
    platform::panic_panel::install();
    if platform::deliberate_panic_requested() {
        // Lets the browser tests (and anyone curious) see the error panel on demand.
        panic!("deliberate panic requested by the ?debug-panic URL parameter");
    }
    yew::Renderer::<app::App>::new().render();
}
