//! The spec panel: the newcomer's hint, who to act as and what to write (object or /status),
//! the syntax, Format/Reload/Apply, the code editor, the resourceVersion drift warning and kube's
//! answer to the last Apply.

use converge_core::api::ObjectKey;
use converge_core::engine::world::key_text;
use converge_core::view::Syntax;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::editor::{CodeEditor, Diagnostic, Language};
use crate::state::{ApplyOutcome, EditorDrift, Msg, Target, PRINCIPALS};

/// What the panel draws from.
#[derive(PartialEq)]
pub struct EditorPanelProps {
    pub text: AttrValue,
    pub syntax: Syntax,
    pub diagnostics: Vec<Diagnostic>,
    pub principal: AttrValue,
    pub target: Target,
    pub outcome: Option<ApplyOutcome>,
    pub selected: Option<ObjectKey>,
    pub drift: Option<EditorDrift>,
    /// The newcomer's "try an edit" hint shows.
    pub first_edit_hint: bool,
    pub send: Callback<Msg>,
}

/// Drawn through `super::MemoPanel`, so only when these props change.
pub fn editor_panel(props: &EditorPanelProps) -> Html {
    let send = &props.send;
    let syntax = props.syntax;
    let language = match syntax {
        Syntax::Json => Language::Json,
        Syntax::Yaml => Language::Yaml,
    };
    html! {
        <section class="pane editor" aria-labelledby="editor-h">
            <h2 id="editor-h">{ "Spec" }</h2>
            if props.first_edit_hint {
                <aside id="first-edit-hint" class="hint" aria-labelledby="first-edit-hint-h">
                    <p><strong id="first-edit-hint-h">{ "Try it: " }</strong>
                        { "in the editor below, change " }<code>{ if syntax == Syntax::Yaml { "replicas: 3" } else { "\"replicas\": 3" } }</code>{ " to 5 and press " }
                        <strong>{ "Apply" }</strong>{ " (Ctrl+Enter). Then " }<strong>{ "Step" }</strong>{ " (n) or " }
                        <strong>{ "Play" }</strong>{ " (Space) and watch status catch up with spec." }</p>
                    <button id="first-edit-hint-dismiss" onclick={send.reform(|_| Msg::DismissHint)}>{ "Dismiss hint" }</button>
                </aside>
            }
            <p class="muted">{ props.selected.as_ref().map(key_text).unwrap_or_else(|| "no object selected".into()) }</p>
            <div class="editor-tools">
                <label>{ "Act as " }
                    <select id="principal" onchange={send.reform(|e: Event| {
                        let s: HtmlSelectElement = e.target_unchecked_into();
                        Msg::SetPrincipal(s.value())
                    })}>
                        { for PRINCIPALS.iter().map(|p| html! {
                            <option value={*p} selected={props.principal == *p}>{ *p }</option>
                        }) }
                    </select>
                </label>
                <label>{ "Write " }
                    <select id="target" onchange={send.reform(|e: Event| {
                        let s: HtmlSelectElement = e.target_unchecked_into();
                        Msg::SetTarget(if s.value() == "status" { Target::Status } else { Target::Main })
                    })}>
                        <option value="main" selected={props.target == Target::Main}>{ "object (spec, metadata)" }</option>
                        <option value="status" selected={props.target == Target::Status}>{ "/status subresource" }</option>
                    </select>
                </label>
                <fieldset class="syntax">
                    <legend class="visually-hidden">{ "Syntax" }</legend>
                    <button aria-pressed={(syntax == Syntax::Json).to_string()} onclick={send.reform(|_| Msg::SetSyntax(Syntax::Json))}>{ "JSON" }</button>
                    <button aria-pressed={(syntax == Syntax::Yaml).to_string()} onclick={send.reform(|_| Msg::SetSyntax(Syntax::Yaml))}>{ "YAML" }</button>
                </fieldset>
                <button onclick={send.reform(|_| Msg::Format)}>{ "Format" }</button>
                <button onclick={send.reform(|_| Msg::Reload)}>{ "Reload" }</button>
                <button id="apply" class="primary" onclick={send.reform(|_| Msg::Apply)} title="Ctrl/Cmd+Enter">{ "Apply" }</button>
            </div>
            <CodeEditor value={props.text.clone()} {language} diagnostics={props.diagnostics.clone()}
                on_change={send.reform(Msg::EditorInput)}
                on_apply={send.reform(|_: ()| Msg::Apply)} readonly={false} />
            if let Some(d) = &props.drift {
                <p class="muted" id="outdated">{ format!("The stored object changed since you loaded it (resourceVersion {} → {}); Apply will be refused with 409 Conflict. Reload to edit the latest.", d.in_editor, d.stored) }</p>
            }
            if let Some(o) = &props.outcome {
                <p id="apply-result" role="status" class={classes!("outcome", if o.is_error() { "bad" } else { "ok" })}>{ o.text() }</p>
                if let Some(cmd) = &o.equivalent {
                    <p class="muted equivalent" id="apply-equivalent">{ "On a real cluster: " }<code>{ cmd.clone() }</code>{ " (the editor's text on stdin)" }</p>
                }
            }
        </section>
    }
}
