//! The timeline panel: the scrubber (Live, Fork from here), and up to the shown step either the
//! sequence diagram (the default; geometry from core's `view::sequence`, the same rows as a
//! list for screen readers) or one column of cards per actor with the field changes of the
//! selected entry.

use converge_core::view::sequence::Sequence;
use converge_core::view::timeline::Lane;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::state::{Msg, TimelineView};

/// What the panel draws from.
#[derive(PartialEq)]
pub struct TimelinePanelProps {
    pub view: TimelineView,
    /// The cards (empty in the sequence view).
    pub lanes: Vec<Lane>,
    /// The sequence diagram (None in the card view).
    pub sequence: Option<Sequence>,
    /// The shown step was read back from a checkpoint: its requests were not kept.
    pub restored: bool,
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
        view,
        lanes,
        sequence,
        restored,
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
            <div class="timeline-views" role="group" aria-label="Timeline view">
                <button aria-pressed={(*view == TimelineView::Sequence).to_string()} onclick={send.reform(|_| Msg::SetTimelineView(TimelineView::Sequence))}>{ "Sequence" }</button>
                <button aria-pressed={(*view == TimelineView::Cards).to_string()} onclick={send.reform(|_| Msg::SetTimelineView(TimelineView::Cards))}>{ "Cards" }</button>
            </div>
            if *restored {
                <p class="muted" id="restored-step">{ format!(
                    "Step {upto} was read back from a checkpoint, so its requests and watch events \
                     were not kept; the steps after it show theirs."
                ) }</p>
            }
            if let Some(seq) = sequence.as_ref().filter(|_| !*restored) { { sequence_diagram(seq, send) } }
            if *view == TimelineView::Cards {
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
                                        if let Some(cmd) = &e.command { <p class="command muted">{ "sent by " }<code>{ cmd.clone() }</code></p> }
                                        if !e.message.is_empty() { <p class="message">{ e.message.clone() }</p> }
                                    </li>
                                }
                            }) }
                        </ol>
                    </div>
                }) }
            </div>
            }
            if let Some(e) = detail.filter(|_| *view == TimelineView::Cards) {
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

/// The sequence diagram: lanes' names and lines, one arrow or note per row, and the same rows as
/// an ordered list (visually hidden) for screen readers and tests.
fn sequence_diagram(seq: &Sequence, send: &Callback<Msg>) -> Html {
    let idle = seq.folded;
    let fold_note = if seq.folding {
        format!("{idle} watch deliveries that queued nothing are folded.")
    } else {
        format!("{idle} watch deliveries that queued nothing are drawn.")
    };
    let folding = seq.folding;
    html! {
        <div class="sequence" id="sequence">
            <p class="muted sequence-note">
                if seq.older > 0 { { format!("The newest {} rows; {} older left out. ", seq.rows.len(), seq.older) } }
                <span id="folded">{ fold_note }</span>{ " " }
                <button class="fold" onclick={send.reform(move |_| Msg::ShowIdleDeliveries(folding))}>
                    { if folding { format!("Show them ({idle})") } else { "Fold them".to_owned() } }
                </button>
            </p>
            if seq.rows.is_empty() {
                <p class="muted">{ "Nothing happened in these steps." }</p>
            } else {
                <div class="sequence-scroll" tabindex="0" role="region" aria-label="Sequence diagram (scrolls; the same rows are listed as text)">
                { Html::from_html_unchecked(AttrValue::from(seq.svg())) }
                </div>
            }
            <ol class="visually-hidden" id="sequence-text" aria-label="The sequence diagram as text">
                { for (0..seq.rows.len()).map(|i| html! { <li>{ seq.row_text(i) }</li> }) }
            </ol>
        </div>
    }
}
