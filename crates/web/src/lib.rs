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

use std::ops::ControlFlow;

use state::{Boot, Booting, Ready};

/// Installs the panic panel, builds the first model one piece per browser task, then mounts the
/// app on `<body>` in a task of its own (ARCHITECTURE.md, "First load").
pub fn start() {
    // The checkpointing build is also what web/checkpoint-worker.js runs in a Web Worker, which
    // has no page to start.
    #[cfg(feature = "checkpoint")]
    if web_sys::window().is_none() {
        return;
    }
    platform::panic_panel::install();
    if platform::deliberate_panic_requested() {
        // Lets the browser tests (and anyone curious) see the error panel on demand.
        panic!("deliberate panic requested by the ?debug-panic URL parameter");
    }
    let booting = Box::new(platform::with_starting_page(Booting::start));
    platform::tasks::in_tasks(Starting::Booting(booting), |starting| match starting {
        Starting::Booting(booting) => ControlFlow::Continue(match booting.advance() {
            Boot::Pending(next) => Starting::Booting(next),
            Boot::Ready(ready) => Starting::Mounting(ready),
        }),
        Starting::Mounting(ready) => {
            let booted = app::Booted::new(*ready);
            yew::Renderer::<app::App>::with_props(app::AppProps { booted }).render();
            ControlFlow::Break(())
        }
    });
}

/// Where the page's start has got.
enum Starting {
    Booting(Box<Booting>),
    Mounting(Box<Ready>),
}
