//! The page header: the title, the theme picker, Share and the shortcuts button.

use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::state::{Msg, Theme};

/// What the view draws from.
pub struct TopbarProps {
    pub theme: Theme,
    pub send: Callback<Msg>,
}

/// Drawn directly, not through `super::MemoPanel`: it is a handful of elements (comparing its
/// props would cost about what drawing it does).
pub fn topbar(props: &TopbarProps) -> Html {
    let send = &props.send;
    html! {
        <header class="topbar">
            <h1>{ "Converge" }</h1>
            <p class="tagline">{ "Kubernetes spec/status playground" }</p>
            <div class="header-tools">
                <label for="theme">{ "Theme" }</label>
                <select id="theme" onchange={send.reform(|e: Event| {
                    let s: HtmlSelectElement = e.target_unchecked_into();
                    Msg::SetTheme(match s.value().as_str() {
                        "light" => Theme::Light,
                        "dark" => Theme::Dark,
                        _ => Theme::System,
                    })
                })}>
                    { for [(Theme::System, "system", "System"), (Theme::Light, "light", "Light"), (Theme::Dark, "dark", "Dark")]
                        .into_iter().map(|(t, v, l)| html! {
                            <option value={v} selected={props.theme == t}>{ l }</option>
                        }) }
                </select>
                <button id="share" onclick={send.reform(|_| Msg::Share)}>{ "Share" }</button>
                <button id="help-button" aria-haspopup="dialog" onclick={send.reform(|_| Msg::ShowHelp)}>{ "Shortcuts (?)" }</button>
            </div>
        </header>
    }
}
