//! The "Why?" chain, in the status pane: one row per hop from the write that set the value back
//! to its root (rows from core's `view::why`). Each hop with a step is a button that scrubs the
//! timeline to that step and selects the hop's object; the hop being looked at is marked.

use std::rc::Rc;

use converge_core::api::ObjectKey;
use converge_core::view::why::{HopKind, WhyView};
use yew::prelude::*;

use crate::state::{Msg, WHY_HEADING};

/// The chain; `step` and `selected` are the shown step and object, `first` the oldest step the
/// history keeps.
pub fn why_chain(
    why: &Rc<Result<WhyView, String>>,
    step: u64,
    first: u64,
    selected: Option<&ObjectKey>,
    send: &Callback<Msg>,
) -> Html {
    let body = match why.as_ref() {
        Err(e) => html! { <p class="bad" id="why-error">{ e.clone() }</p> },
        Ok(v) => html! {
            <>
            <p class="why-title" id="why-title"><code>{ v.title.clone() }</code></p>
            <p class="muted why-help">{ "Newest first: the write that set the value, what sent it, what queued that, back to the root. A hop shows the world after its step, its object selected." }</p>
            <ol class="why-hops" aria-labelledby={WHY_HEADING}>
                { for v.rows.iter().map(|r| {
                    let kind = match r.kind {
                        HopKind::Write => "write",
                        HopKind::Reconcile => "reconcile",
                        HopKind::Repeat => "repeat",
                        HopKind::Root => "root",
                        HopKind::Note => "note",
                    };
                    let cls = classes!("hop", kind, (r.depth > 0).then_some("input"), r.refused.then_some("bad"));
                    match (r.step, r.object.clone()) {
                        (Some(s), Some(key)) => {
                            let here = s == step && selected == Some(&key);
                            let kept = s >= first;
                            html! {
                                <li class={cls}>
                                    <button class="hop-go" aria-current={here.then_some("step")} disabled={!kept}
                                        title={if kept { "Show the world after this step, its object selected" } else { "Older than the kept history" }}
                                        onclick={send.reform(move |_| Msg::FollowHop(s, key.clone()))}>
                                        { r.text.clone() }
                                    </button>
                                </li>
                            }
                        }
                        _ => html! { <li class={cls}><span>{ r.text.clone() }</span></li> },
                    }
                }) }
            </ol>
            </>
        },
    };
    html! {
        <section class="why" id="why" aria-labelledby={WHY_HEADING}>
            <div class="why-head">
                <h3 id={WHY_HEADING} tabindex="-1">{ "Why?" }</h3>
                <button class="why-close" onclick={send.reform(|_| Msg::CloseWhy)}>{ "Close" }</button>
            </div>
            { body }
        </section>
    }
}

/// A small "Why?" button, named for what it asks (`Why is status.readyReplicas 5?`).
pub fn why_button(label: String, msg: Msg, send: &Callback<Msg>) -> Html {
    html! {
        <button class="why-btn" aria-label={label} onclick={send.reform(move |_| msg.clone())}>{ "Why?" }</button>
    }
}
