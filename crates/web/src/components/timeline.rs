//! The timeline panel: the scrubber (Live, Fork from here), one lane per actor up to the shown
//! step, and the field changes of the selected entry.

use converge_core::view::timeline::Lane;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::state::Msg;

/// What the panel draws from.
#[derive(PartialEq)]
pub struct TimelinePanelProps {
    pub lanes: Vec<Lane>,
    /// The shown step.
    pub upto: u64,
    /// The first step the scrubber reaches back to.
    pub min: u64,
    /// The live world's step.
    pub max: u64,
    /// A snapshot is shown rather than the live world.
    pub scrubbed: bool,
    /// The entry whose changes are shown: (step, sequence, label).
    pub selected: Option<(u64, u64, String)>,
    pub send: Callback<Msg>,
}

/// Drawn through `super::MemoPanel`, so only when these props change.
pub fn timeline_panel(props: &TimelinePanelProps) -> Html {
    let TimelinePanelProps {
        lanes,
        upto,
        min,
        max,
        scrubbed,
        selected,
        send,
    } = props;
    let max = *max;
    let detail = selected.as_ref().and_then(|(s, q, l)| {
        lanes
            .iter()
            .flat_map(|lane| lane.entries.iter())
            .find(|e| e.step == *s && e.seq == *q && &e.label == l)
    });
    html! {
        <section class="pane timeline" aria-labelledby="timeline-h">
            <h2 id="timeline-h">{ "Timeline" }</h2>
            <div class="scrub">
                <label for="scrub">{ format!("Step {upto} of {max}") }</label>
                <input id="scrub" type="range" min={min.to_string()} max={max.to_string()} value={upto.to_string()}
                    oninput={send.reform(move |e: InputEvent| {
                        let i: HtmlInputElement = e.target_unchecked_into();
                        let s = i.value().parse::<u64>().unwrap_or(max);
                        Msg::Scrub((s < max).then_some(s))
                    })} />
                <button onclick={send.reform(|_| Msg::Scrub(None))} disabled={!scrubbed}>{ "Live" }</button>
                <button id="fork" onclick={send.reform(|_| Msg::Fork)} disabled={!scrubbed}>{ "Fork from here" }</button>
            </div>
            <div class="lanes">
                { for lanes.iter().map(|lane| html! {
                    <div class="lane">
                        <h3>{ lane.actor.clone() }</h3>
                        <ol>
                            { for lane.entries.iter().map(|e| {
                                let id = (e.step, e.seq, e.label.clone());
                                let pressed = selected.as_ref() == Some(&id);
                                let cls = match e.code { Some(c) if c >= 400 => "bad", Some(_) => "ok", None => "watch" };
                                html! {
                                    <li>
                                        <button class={classes!("entry", cls)} aria-pressed={pressed.to_string()}
                                            onclick={send.reform(move |_| Msg::SelectEntry(if pressed { None } else { Some(id.clone()) }))}>
                                            <span class="muted">{ format!("#{} {:.3}s ", e.step, e.time_ms as f64 / 1000.0) }</span>
                                            { e.label.clone() }
                                        </button>
                                        if !e.message.is_empty() { <p class="message">{ e.message.clone() }</p> }
                                    </li>
                                }
                            }) }
                        </ol>
                    </div>
                }) }
            </div>
            if let Some(e) = detail {
                <div class="diff" id="entry-diff" role="region" aria-label="Changes caused by the selected entry">
                    <h3>{ e.label.clone() }</h3>
                    if e.changes.is_empty() { <p class="muted">{ "No object changed." }</p> }
                    { for e.changes.iter().map(|(obj, fields)| html! {
                        <>
                        <h4>{ obj.clone() }</h4>
                        <ul>
                            { for fields.iter().map(|f| html! {
                                <li><code>{ f.path.clone() }</code>{ ": " }
                                    <del>{ f.before.as_ref().map(|v| v.to_string()).unwrap_or_else(|| "(absent)".into()) }</del>{ " → " }
                                    <ins>{ f.after.as_ref().map(|v| v.to_string()).unwrap_or_else(|| "(absent)".into()) }</ins></li>
                            }) }
                        </ul>
                        </>
                    }) }
                </div>
            }
        </section>
    }
}
