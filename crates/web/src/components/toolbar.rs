//! The simulation toolbar: Step, Next event, Play/Pause and its speed, Run until converged,
//! Reset, and the shown world's clock, step count and convergence badge.

use converge_core::time::SimTime;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::state::{Msg, TerminalMsg, SPEEDS};

/// What the view draws from.
pub struct SimulationToolbarProps {
    pub playing: bool,
    /// An index into `SPEEDS`.
    pub speed: usize,
    /// The shown world's simulated time, steps taken and convergence.
    pub now: SimTime,
    pub steps: u64,
    pub converged: bool,
    pub terminal_open: bool,
    pub send: Callback<Msg>,
}

/// Drawn directly, not through `super::MemoPanel`: it is a handful of elements (comparing its
/// props would cost about what drawing it does).
pub fn simulation_toolbar(props: &SimulationToolbarProps) -> Html {
    let send = &props.send;
    let converged = props.converged;
    html! {
        <nav class="controls" aria-label="Simulation controls">
            <button id="step" onclick={send.reform(|_| Msg::Step)} title="n">{ "Step" }</button>
            <button id="next-event" onclick={send.reform(|_| Msg::NextEvent)} title="Shift+N">{ "Next event" }</button>
            <button id="play" aria-pressed={props.playing.to_string()} title="Space"
                onclick={send.reform(|_| Msg::TogglePlay)}>
                { if props.playing { "Pause" } else { "Play" } }
            </button>
            <label class="speed"><span>{ "Speed" }</span>
                <select id="speed" onchange={send.reform(|e: Event| {
                    let s: HtmlSelectElement = e.target_unchecked_into();
                    Msg::SetSpeed(s.value().parse().unwrap_or(2))
                })}>
                    { for SPEEDS.iter().enumerate().map(|(i, (l, _))| html! {
                        <option value={i.to_string()} selected={i == props.speed}>{ *l }</option>
                    }) }
                </select>
            </label>
            <button id="run" onclick={send.reform(|_| Msg::RunUntilConverged)} title="r">{ "Run until converged" }</button>
            <button id="reset" onclick={send.reform(|_| Msg::Reset)}>{ "Reset" }</button>
            <button id="terminal-toggle" aria-pressed={props.terminal_open.to_string()} title="t"
                onclick={send.reform(|_| Msg::Terminal(TerminalMsg::Toggle))}>{ "Terminal" }</button>
            <output id="clock" aria-label="Simulated time">{ props.now.to_string() }</output>
            <output id="steps" aria-label="Steps taken">{ format!("{} steps", props.steps) }</output>
            <span class={classes!("badge", if converged { "ok" } else { "warn" })} id="converged">
                { if converged { "converged" } else { "converging" } }
            </span>
        </nav>
    }
}
