//! The notice bar: the one-line notice (a link that could not be opened, a fork...) with its
//! Dismiss button, and the share link once Share was pressed.

use yew::prelude::*;

use crate::state::Msg;

/// What the view draws from.
pub struct NoticeBarProps {
    pub notice: Option<AttrValue>,
    pub share_url: Option<AttrValue>,
    pub send: Callback<Msg>,
}

/// A plain view function, not a component: it is cheap to draw, and every component costs the
/// wasm module its own copy of yew's lifecycle code (tests/e2e/first-load.test.mjs bounds it).
pub fn notice_bar(props: &NoticeBarProps) -> Html {
    html! {
        <>
        if let Some(n) = &props.notice {
            <div class="notice" role="status">
                <span>{ n.clone() }</span>
                <button onclick={props.send.reform(|_| Msg::DismissNotice)}>{ "Dismiss" }</button>
            </div>
        }
        if let Some(url) = &props.share_url {
            <div class="notice share">
                <label for="share-url">{ "Share link (also in the address bar)" }</label>
                <input id="share-url" readonly=true value={url.clone()} />
            </div>
        }
        </>
    }
}
