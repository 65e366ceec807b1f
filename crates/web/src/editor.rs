//! Stand-in spec editor: a labelled plain textarea with the diagnostics listed under it. The
//! CodeMirror-backed component from the `editor` branch replaces this file with the same
//! interface; nothing else may depend on its internals.

use web_sys::HtmlTextAreaElement;
use yew::prelude::*;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Language {
    #[default]
    Json,
    Yaml,
}

/// A problem at a 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

#[derive(Properties, PartialEq)]
pub struct CodeEditorProps {
    pub value: AttrValue,
    pub language: Language,
    #[prop_or_default]
    pub diagnostics: Vec<Diagnostic>,
    pub on_change: Callback<String>,
    pub on_apply: Callback<()>,
    #[prop_or_default]
    pub readonly: bool,
}

#[function_component(CodeEditor)]
pub fn code_editor(props: &CodeEditorProps) -> Html {
    let on_change = props.on_change.clone();
    let oninput = Callback::from(move |e: InputEvent| {
        let area: HtmlTextAreaElement = e.target_unchecked_into();
        on_change.emit(area.value());
    });
    let on_apply = props.on_apply.clone();
    let onkeydown = Callback::from(move |e: KeyboardEvent| {
        if e.key() == "Enter" && (e.ctrl_key() || e.meta_key()) {
            e.prevent_default();
            on_apply.emit(());
        }
    });
    let label = match props.language {
        Language::Json => "Object (JSON)",
        Language::Yaml => "Object (YAML)",
    };
    html! {
        <div class="code-editor">
            <label class="visually-hidden" for="spec-editor">{ label }</label>
            <textarea id="spec-editor" spellcheck="false" value={props.value.clone()}
                readonly={props.readonly}
                aria-invalid={(!props.diagnostics.is_empty()).to_string()}
                aria-describedby="editor-diagnostics"
                {oninput} {onkeydown} />
            <ul id="editor-diagnostics" class="diagnostics" aria-live="polite">
                { for props.diagnostics.iter().map(|d| html! {
                    <li>{ format!("line {}, column {}: {}", d.line, d.column, d.message) }</li>
                }) }
            </ul>
        </div>
    }
}
