//! The status panel: generation against observedGeneration, the rollout line, the status fields
//! (changed ones highlighted) and the conditions table of the selected object, from core's
//! `StatusView`.

use std::rc::Rc;

use converge_core::api::ObjectKey;
use converge_core::view::chart::Chart;
use converge_core::view::events::EventRow;
use converge_core::view::status::StatusView;
use converge_core::view::why::{condition_field_path, status_field_path, WhyView};
use yew::prelude::*;

use super::chart::convergence_chart;
use super::why::{why_button, why_chain};
use crate::state::{Msg, WhyOf};

/// The conditions table's columns (also each cell's label when the table is stacked).
const CONDITION_COLUMNS: [&str; 6] = [
    "type",
    "status",
    "reason",
    "message",
    "lastTransitionTime",
    "observedGeneration",
];

/// The Events table's columns, as `kubectl describe` heads them.
const EVENT_COLUMNS: [&str; 5] = ["Type", "Reason", "Age", "From", "Message"];

/// What the panel draws from.
#[derive(PartialEq)]
pub struct StatusPanelProps {
    /// The selected object's status (None: nothing selected, or it is gone).
    pub view: Option<StatusView>,
    /// The Events about the selected object, oldest first.
    pub events: Vec<EventRow>,
    pub selected: Option<ObjectKey>,
    /// The open "Why?" chain.
    pub why: Option<Rc<Result<WhyView, String>>>,
    /// The shown step, and the oldest one the history keeps.
    pub step: u64,
    pub first_step: u64,
    /// The selected object's convergence chart.
    pub chart: Option<Chart>,
    pub send: Callback<Msg>,
}

/// Drawn through `super::MemoPanel`, so only when these props change.
pub fn status_panel(props: &StatusPanelProps) -> Html {
    let send = &props.send;
    let why = props.why.as_ref().map(|w| {
        why_chain(
            w,
            props.step,
            props.first_step,
            props.selected.as_ref(),
            send,
        )
    });
    let (Some(v), Some(key)) = (&props.view, &props.selected) else {
        return html! {
            <section class="pane status" aria-labelledby="status-h">
                <h2 id="status-h">{ "Status" }</h2>
                { why.unwrap_or_default() }
                <p class="muted">{ "Select an object." }</p>
            </section>
        };
    };
    let ask = |field: String| Msg::Why(key.clone(), WhyOf::Field(field));
    let num = |x: Option<i64>| x.map_or("–".to_owned(), |n| n.to_string());
    html! {
        <section class="pane status" aria-labelledby="status-h">
            <h2 id="status-h">{ "Status" }</h2>
            <div class="generations">
                <div><span class="muted">{ "generation" }</span><strong id="generation">{ num(v.generation) }</strong>
                    if let Some(g) = v.generation { { why_button(format!("Why is metadata.generation {g}?"), ask("metadata.generation".into()), send) } }
                </div>
                <div><span class="muted">{ "observedGeneration" }</span><strong id="observed-generation">{ num(v.observed_generation) }</strong></div>
                if v.generation.is_some() && !v.reports_observed {
                    <span id="generation-badge" class="badge">{ "not in this kind's status" }</span>
                } else if v.generation.is_some() {
                    <span id="generation-badge" class={classes!("badge", if v.stale { "warn" } else { "ok" })}>
                        { if v.stale { "stale" } else { "caught up" } }
                    </span>
                }
            </div>
            { why.unwrap_or_default() }
            if let Some(line) = &v.rollout {
                <p class="rollout"><span class="muted">{ "kubectl rollout status: " }</span><code id="rollout">{ line.clone() }</code></p>
            }
            <table class="fields">
                <caption class="visually-hidden">{ "status fields; changed in the last step are highlighted" }</caption>
                <tbody>
                { for v.fields.iter().map(|f| {
                    let endpoints = !v.reports_observed && f.path.starts_with("/endpoints");
                    let path = status_field_path(&f.path, endpoints);
                    let label = format!("Why is {path} {}?", f.value);
                    html! {
                        <tr class={classes!(f.changed.then_some("changed"))} data-field={f.path.clone()}>
                            <th scope="row">{ field_path(&f.path) }</th>
                            <td>{ f.value.clone() }{ if f.changed { html!{ <span class="visually-hidden">{ " (changed)" }</span> } } else { html!{} } }</td>
                            <td class="why-cell">{ why_button(label, ask(path), send) }</td>
                        </tr>
                    }
                }) }
                </tbody>
            </table>
            if !v.conditions.is_empty() {
                <div class="table-scroll">
                <table class="conditions" id="conditions" role="table">
                    <caption>{ "Conditions" }</caption>
                    <thead role="rowgroup"><tr role="row">{ for CONDITION_COLUMNS.iter().map(|c| html! { <th role="columnheader" scope="col">{ *c }</th> }) }</tr></thead>
                    <tbody role="rowgroup">
                    { for v.conditions.iter().map(|c| html! {
                        <tr role="row" class={classes!(c.changed.then_some("changed"))} data-condition={c.type_.clone()}>
                            <td role="cell" data-label={CONDITION_COLUMNS[0]}><span>{ c.type_.clone() }{ " " }{ why_button(format!("Why is {} {}?", c.type_, c.status), ask(condition_field_path(&c.type_)), send) }</span></td>
                            <td role="cell" data-label={CONDITION_COLUMNS[1]} class={classes!(match c.status.as_str() { "True" => "ok", "False" => "bad", _ => "warn" })}>{ c.status.clone() }</td>
                            <td role="cell" data-label={CONDITION_COLUMNS[2]}>{ c.reason.clone() }</td>
                            <td role="cell" data-label={CONDITION_COLUMNS[3]}>{ c.message.clone() }</td>
                            <td role="cell" data-label={CONDITION_COLUMNS[4]}><span>{ c.last_transition.clone() }{ " " }<span class="muted">{ format!("({})", c.ago) }</span></span></td>
                            <td role="cell" data-label={CONDITION_COLUMNS[5]}><span>{ num(c.observed_generation) }{ if c.stale { html!{ <>{ " " }<span class="badge warn">{ "stale" }</span></> } } else { html!{} } }</span></td>
                        </tr>
                    }) }
                    </tbody>
                </table>
                </div>
            }
            if let Some(c) = &props.chart { { convergence_chart(c) } }
            { events_table(&props.events) }
        </section>
    }
}

/// The selected object's Events, or `Events: <none>` as describe says it.
fn events_table(events: &[EventRow]) -> Html {
    if events.is_empty() {
        return html! { <p class="muted" id="events-none">{ "Events: <none>" }</p> };
    }
    html! {
        <div class="table-scroll">
        <table class="conditions events" id="events" role="table">
            <caption>{ "Events" }</caption>
            <thead role="rowgroup"><tr role="row">{ for EVENT_COLUMNS.iter().map(|c| html! { <th role="columnheader" scope="col">{ *c }</th> }) }</tr></thead>
            <tbody role="rowgroup">
            { for events.iter().map(|e| html! {
                <tr role="row" data-reason={e.reason.clone()}>
                    <td role="cell" data-label={EVENT_COLUMNS[0]} class={classes!((e.type_ == "Warning").then_some("bad"))}>{ e.type_.clone() }</td>
                    <td role="cell" data-label={EVENT_COLUMNS[1]}>{ e.reason.clone() }</td>
                    <td role="cell" data-label={EVENT_COLUMNS[2]}>{ e.age.clone() }</td>
                    <td role="cell" data-label={EVENT_COLUMNS[3]}>{ e.from.clone() }</td>
                    <td role="cell" data-label={EVENT_COLUMNS[4]}>{ e.message.clone() }</td>
                </tr>
            }) }
            </tbody>
        </table>
        </div>
    }
}

/// A status field's JSON pointer as a dotted path that may wrap after each dot, never inside a
/// field name (`containerStatuses.0.imageID`). The root (an empty or scalar status) is `status`:
/// a row header is never empty.
fn field_path(pointer: &str) -> Html {
    if pointer.is_empty() {
        return html! { "status" };
    }
    let mut parts = pointer.trim_start_matches('/').split('/');
    let first = parts.next().unwrap_or_default().to_owned();
    html! {
        <>{ first }{ for parts.map(|p| html! { <>{ "." }<wbr/>{ p.to_owned() }</> }) }</>
    }
}
