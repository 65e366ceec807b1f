//! The timeline panel: the scrubber (Live, Fork from here), and up to the shown step either the
//! sequence diagram (the default; geometry from core's `view::sequence`, the same rows as a
//! list for screen readers) or one column of cards per actor with the field changes of the
//! selected entry.

use converge_core::view::sequence::{ArrowKind, Sequence, LANE_W, ROW_H, TOP};
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
            if let Some(seq) = sequence { { sequence_diagram(seq, send) } }
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
    let (w, h) = (seq.width(), seq.height());
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
                <svg viewBox={format!("0 0 {w} {h}")} width={w.to_string()} height={h.to_string()} aria-hidden="true" focusable="false">
                    <defs>
                        <marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                            <path d="M0 0 L8 4 L0 8 z" class="head" />
                        </marker>
                    </defs>
                    { for seq.lanes.iter().enumerate().map(|(i, l)| {
                        let x = Sequence::lane_x(i);
                        html! {
                            <g>
                                <text class="lane-name" x={x.to_string()} y="16" text-anchor="middle">{ fit_lane(l) }</text>
                                <line class="lifeline" x1={x.to_string()} x2={x.to_string()} y1={(TOP - 6).to_string()} y2={h.to_string()} />
                            </g>
                        }
                    }) }
                    { for seq.rows.iter().enumerate().map(|(i, r)| {
                        let y = Sequence::row_y(i);
                        let cls = classes!(
                            match r.kind { ArrowKind::Request => "req", ArrowKind::Response => "resp", ArrowKind::Delivery => "watch", ArrowKind::Note => "note" },
                            r.refused.then_some("bad"),
                            r.in_chain.then_some("chain"),
                            r.selected.then_some("mine"),
                        );
                        let (x1, x2) = (Sequence::lane_x(r.from), Sequence::lane_x(r.to));
                        if r.kind == ArrowKind::Note {
                            html! {
                                <g class={cls}>
                                    <title>{ r.label.clone() }</title>
                                    <rect x={(x1 - LANE_W / 2 + 4).to_string()} y={(y - ROW_H / 2 + 3).to_string()} width={(LANE_W - 8).to_string()} height={(ROW_H - 6).to_string()} rx="3" />
                                    <text x={x1.to_string()} y={(y + 4).to_string()} text-anchor="middle">{ r.short.clone() }</text>
                                </g>
                            }
                        } else {
                            let mid = (x1 + x2) / 2;
                            html! {
                                <g class={cls}>
                                    <title>{ r.label.clone() }</title>
                                    <line x1={x1.to_string()} x2={x2.to_string()} y1={(y + 4).to_string()} y2={(y + 4).to_string()} marker-end="url(#arrow)" />
                                    <text x={mid.to_string()} y={y.to_string()} text-anchor="middle">{ r.short.clone() }</text>
                                </g>
                            }
                        }
                    }) }
                </svg>
                </div>
            }
            <ol class="visually-hidden" id="sequence-text" aria-label="The sequence diagram as text">
                { for (0..seq.rows.len()).map(|i| html! { <li>{ seq.row_text(i) }</li> }) }
            </ol>
        </div>
    }
}

/// A lane's name cut to its width.
fn fit_lane(name: &str) -> String {
    let room = (LANE_W as usize * 2 / 13).saturating_sub(1);
    if name.chars().count() <= room {
        name.to_owned()
    } else {
        let mut s: String = name.chars().take(room - 1).collect();
        s.push('…');
        s
    }
}
