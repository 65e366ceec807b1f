//! The terminal pane: a kubectl command line (`kubectl command`) over a log of what each
//! command printed (`role="log"`), with its exit code. Its own keys: Enter runs the line, Up
//! and Down walk the history, Tab completes (when something is typed; an empty line lets Tab
//! move focus on), Ctrl+C stops a `-w` or drops the line. Being a text input, it is typing to
//! the playground's shortcuts (platform/shortcuts.rs), which never fire here.

use web_sys::{HtmlInputElement, KeyboardEvent};
use yew::prelude::*;

use crate::state::terminal::Entry;
use crate::state::{Msg, TerminalMsg};

#[derive(PartialEq)]
pub struct TerminalPanelProps {
    pub entries: Vec<Entry>,
    pub input: AttrValue,
    pub completions: Vec<String>,
    pub watching: bool,
    pub send: Callback<Msg>,
}

fn entry(e: &Entry) -> Html {
    let status = match e.code {
        None => html! { <span class="term-exit running">{ "watching… Ctrl+C stops" }</span> },
        Some(0) => html! { <span class="term-exit ok">{ "exit 0" }</span> },
        Some(c) => html! { <span class="term-exit fail">{ format!("exit {c}") }</span> },
    };
    html! {
        <div class="term-entry">
            <div class="term-cmd"><span class="term-prompt" aria-hidden="true">{ "$ " }</span>{ e.command.clone() }</div>
            if !e.stdout.is_empty() { <pre class="term-out">{ e.stdout.clone() }</pre> }
            if !e.stderr.is_empty() { <pre class="term-err">{ e.stderr.clone() }</pre> }
            { status }
        </div>
    }
}

/// Drawn through `super::MemoPanel`, so only when these props change.
pub fn terminal_panel(p: &TerminalPanelProps) -> Html {
    let send = &p.send;
    let watching = p.watching;
    let onkeydown = send.reform(move |e: KeyboardEvent| {
        let input: HtmlInputElement = e.target_unchecked_into();
        let key = e.key();
        let msg = match key.as_str() {
            "Enter" => Some(TerminalMsg::Submit),
            "ArrowUp" => Some(TerminalMsg::HistoryPrev),
            "ArrowDown" => Some(TerminalMsg::HistoryNext),
            "Tab" if !e.shift_key() && !input.value().is_empty() => Some(TerminalMsg::Complete),
            "c" | "C" if e.ctrl_key() => {
                let selected = input
                    .selection_start()
                    .ok()
                    .flatten()
                    .zip(input.selection_end().ok().flatten())
                    .is_some_and(|(a, b)| a != b);
                (watching || !selected).then_some(TerminalMsg::Interrupt)
            }
            _ => None,
        };
        match msg {
            Some(m) => {
                e.prevent_default();
                Msg::Terminal(m)
            }
            // A key the terminal leaves alone: the input's own text editing (`oninput`).
            None => Msg::Terminal(TerminalMsg::Input(input.value())),
        }
    });
    let oninput = send.reform(|e: InputEvent| {
        let input: HtmlInputElement = e.target_unchecked_into();
        Msg::Terminal(TerminalMsg::Input(input.value()))
    });
    html! {
        <section class="pane terminal" aria-labelledby="terminal-h">
            <h2 id="terminal-h">{ "Terminal" }</h2>
            <p class="muted term-note">{ "kubectl against the simulated cluster, as admin (--as switches). Writes go through the API server and into the timeline; get -w streams as the simulation steps or plays." }</p>
            // The scroller is the log, and focusable, so the keyboard can scroll it too.
            <div class="term-scroll" role="log" aria-label="kubectl output" tabindex="0">
                <div class="term-log">
                    { for p.entries.iter().map(entry) }
                </div>
            </div>
            if !p.completions.is_empty() {
                <p class="term-completions" aria-live="polite">{ p.completions.join("  ") }</p>
            }
            <div class="term-line">
                <span class="term-prompt" aria-hidden="true">{ "$" }</span>
                <input id="terminal-input" type="text" aria-label="kubectl command"
                    placeholder="kubectl get pods" autocomplete="off" spellcheck="false"
                    autocapitalize="off" value={p.input.clone()} {oninput} {onkeydown} />
            </div>
        </section>
    }
}
