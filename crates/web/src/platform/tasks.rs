//! Long work cut into browser tasks: [`in_tasks`] runs one piece per task, so the main thread
//! answers input and paints between pieces instead of being held for the whole (Lighthouse's
//! total blocking time counts each task's time past 50 ms; BENCHMARKS.md, issue 23).
//!
//! The yield is a `MessageChannel` message: a task of its own at once, without a timer. Timers
//! are clamped when nested, and a test's paused fake clock (Playwright's `page.clock`, which
//! fakes timers and animation frames but not message ports) would stop them.

use std::ops::ControlFlow;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::MessageChannel;

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
