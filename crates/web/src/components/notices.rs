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

/// Drawn directly, not through `super::MemoPanel`: it is a handful of elements (comparing its
/// props would cost about what drawing it does).
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
