//! The object list: the shown world's objects grouped by ownerReferences, with their kstatus
//! badges, the worst descendant's trouble, group toggles and "show more" rows (rows from core's
//! `view::tree`). Arrow keys move through it (`tree_keys`).

use std::rc::Rc;

use converge_core::api::ObjectKey;
use converge_core::engine::world::key_text;
use converge_core::view::tree::{self, health_label, Row};
use yew::prelude::*;

use super::why::why_button;
use crate::state::{Msg, WhyOf};

/// What the panel draws from.
#[derive(PartialEq)]
pub struct ObjectTreeProps {
    /// The visible rows (shared with the model: unchanged rows compare in one pointer check).
    pub rows: Rc<Vec<Row>>,
    /// Objects in the shown world.
    pub count: usize,
    pub selected: Option<ObjectKey>,
    pub send: Callback<Msg>,
}

/// Drawn through `super::MemoPanel`, so only when these props change.
pub fn object_tree(props: &ObjectTreeProps) -> Html {
    let send = &props.send;
    let count = props.count;
    html! {
        <section class="pane objects" aria-labelledby="objects-h">
            <h2 id="objects-h">{ "Objects" }</h2>
            <p class="muted" id="object-count">{ format!("{count} objects") }</p>
            <p class="visually-hidden" id="objects-keys">{ "Arrow keys move between objects; Right opens a group, Left closes it." }</p>
            <ul class="object-list" aria-labelledby="objects-h" aria-describedby="objects-keys"
                onkeydown={Callback::from(|e: KeyboardEvent| super::tree_keys::on_key(&e))}>
                { for props.rows.iter().map(|row| match row {
                    Row::More { parent, depth, hidden } => {
                        let row_key = format!("more {}", key_text(parent));
                        let parent = parent.clone();
                        let page = (*hidden).min(tree::CHILDREN_PAGE);
                        html! {
                            <li key={row_key} class="more" style={format!("--depth:{depth}")}>
                                <button class="show-more" onclick={send.reform(move |_| Msg::ShowMore(parent.clone()))}>
                                    { format!("Show {page} more ({hidden} not listed)") }
                                </button>
                            </li>
                        }
                    }
                    Row::Object(r) => {
                        let selected = props.selected.as_ref() == Some(&r.key);
                        let key = r.key.clone();
                        let key2 = r.key.clone();
                        let label = health_label(r.health);
                        html! {
                            <li key={key_text(&r.key)} class={classes!("row", selected.then_some("selected"))}
                                style={format!("--depth:{}", r.depth)}>
                                if r.children > 0 {
                                    <button class="twisty" aria-expanded={r.expanded.to_string()}
                                        aria-label={format!("{} children of {} {}", r.children, r.kind, r.name)}
                                        onclick={send.reform(move |_| Msg::ToggleGroup(key2.clone()))}>
                                        { if r.expanded { "▾" } else { "▸" } }
                                    </button>
                                }
                                <button class="object" aria-current={selected.then_some("true")}
                                    onclick={send.reform(move |_| Msg::Select(key.clone()))}>
                                    <span class="kind">{ r.kind.clone() }</span>{ " " }
                                    <span class="name">{ r.name.clone() }</span>
                                </button>
                                <span class={classes!("badge", badge_class(label))}>{ label }</span>
                                { why_button(format!("Why is {} {} {label}?", r.kind, r.name), Msg::Why(r.key.clone(), WhyOf::Badge), send) }
                                if let Some((who, h)) = &r.trouble {
                                    <span class="trouble">{ format!("{}: {}", health_label(*h), who) }</span>
                                }
                            </li>
                        }
                    }
                }) }
            </ul>
        </section>
    }
}

fn badge_class(label: &str) -> &'static str {
    match label {
        "Current" => "ok",
        "Failed" => "bad",
        "Terminating" => "muted",
        _ => "warn",
    }
}
