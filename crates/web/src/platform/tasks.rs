//! Long work cut into browser tasks: [`in_tasks`] runs one piece per task, so the main thread
//! answers input and paints between pieces instead of being held for the whole (Lighthouse's
//! total blocking time counts each task's time past 50 ms; BENCHMARKS.md, issue 23).
//!
//! The yield is a `MessageChannel` message: a task of its own at once, without a timer. Timers
//! are clamped when nested, and a test's paused fake clock (Playwright's `page.clock`, which
//! fakes timers and animation frames but not message ports or observers) would stop them. For
//! the same reason [`after_layout`] waits for a frame with a `ResizeObserver`, not an
//! animation frame.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, MessageChannel, ResizeObserver};

/// Runs `piece` on `state` in the next task, then again in the task after on what it returns,
/// until it breaks. Without `MessageChannel` every piece runs now, in this task.
pub fn in_tasks<S, F>(state: S, piece: F)
where
    S: 'static,
    F: FnMut(S) -> ControlFlow<(), S> + 'static,
{
    match MessageChannel::new() {
        Ok(channel) => post(channel, state, piece),
        Err(_) => {
            let mut piece = piece;
            let mut state = state;
            while let ControlFlow::Continue(next) = piece(state) {
                state = next;
            }
        }
    }
}

/// Runs `f` in the next task.
pub fn next_task(f: impl FnOnce() + 'static) {
    in_tasks(f, |f| {
        f();
        ControlFlow::Break(())
    });
}

fn post<S, F>(channel: MessageChannel, state: S, mut piece: F)
where
    S: 'static,
    F: FnMut(S) -> ControlFlow<(), S> + 'static,
{
    let port = channel.port1();
    let sender = channel.port2();
    let run = Closure::once_into_js(move || match piece(state) {
        ControlFlow::Continue(next) => post(channel, next, piece),
        ControlFlow::Break(()) => {
            channel.port1().set_onmessage(None);
            channel.port1().close();
            channel.port2().close();
        }
    });
    // Setting `onmessage` starts the port; the message arrives as a task of its own.
    port.set_onmessage(Some(run.unchecked_ref()));
    let _ = sender.post_message(&JsValue::NULL);
}

/// Runs `f` in a task after the frame that lays `element` out (a `ResizeObserver` reports every
/// element it starts observing once it has been laid out), so what `f` changes is laid out in a
/// frame of its own. Without `ResizeObserver`, in the next task.
pub fn after_layout(element: &Element, f: impl FnOnce() + 'static) {
    let f = Rc::new(RefCell::new(Some(f)));
    let later = Rc::clone(&f);
    // Called once: the observer stops at its first report.
    let seen = Closure::once_into_js(move |_entries: JsValue, observer: ResizeObserver| {
        observer.disconnect();
        if let Some(f) = later.borrow_mut().take() {
            next_task(f);
        }
    });
    match ResizeObserver::new(seen.unchecked_ref()) {
        Ok(observer) => observer.observe(element),
        Err(_) => {
            if let Some(f) = f.borrow_mut().take() {
                next_task(f);
            }
        }
    }
}
