//! The spec editor: a plain `<textarea>` from the first paint, upgraded to CodeMirror 6 once its
//! lazily loaded bundle arrives.
//!
//! The bundle (`web/editor/codemirror.js`, built into `dist/editor-bundle/`) is fetched with a
//! dynamic `import()` after the first render, so it never counts toward the first load. Until it
//! is there, or if it never comes, the textarea does the whole job: typing calls `on_change`,
//! Ctrl/Cmd+Enter calls `on_apply`, diagnostics are listed under it. Both forms carry the
//! accessible name "Object spec" and leave Tab to move focus.

use converge_core::parse::ParseError;
use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::prelude::*;
use web_sys::{Element, HtmlTextAreaElement};
use yew::prelude::*;

/// The id of the editing element (the textarea, then CodeMirror's content element).
pub const EDITOR_ID: &str = "spec-editor";
const LABEL_ID: &str = "spec-editor-label";
const HELP_ID: &str = "spec-editor-help";
const DIAGNOSTICS_ID: &str = "spec-editor-diagnostics";

/// Where the bundle lies relative to the loader snippet, which wasm-bindgen always writes to
/// `snippets/<crate>/inline0.js` under the dist root; index.html copies the bundle to
/// `editor-bundle/`.
const BUNDLE_URL: &str = "../../editor-bundle/codemirror.js";

#[wasm_bindgen(inline_js = r#"
export function loadEditorBundle(url, onReady, onError) {
  // The bundle's evaluation and the editor's creation are two tasks, not one long one
  // (BENCHMARKS.md, Lighthouse: total blocking time).
  const nextTask = (m) => new Promise((ok) => setTimeout(() => ok(m), 0));
  const load = () => import(new URL(url, import.meta.url).href).then(nextTask)
    .then(onReady, (e) => onError(String((e && e.message) || e)));
  // After the first paint: the bundle never competes with the app's own first load.
  requestAnimationFrame(() => setTimeout(load, 0));
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = loadEditorBundle)]
    fn load_editor_bundle(url: &str, on_ready: &JsValue, on_error: &JsValue);

    /// The bundle's module namespace (see web/editor/codemirror.js).
    type EditorModule;
    #[wasm_bindgen(method, catch, js_name = createEditor)]
    fn create_editor(
        this: &EditorModule,
        parent: &Element,
        options: &Object,
        on_change: &Function,
        on_apply: &Function,
    ) -> Result<EditorHandle, JsValue>;

    /// One mounted CodeMirror view.
    type EditorHandle;
    #[wasm_bindgen(method, js_name = setValue)]
    fn set_value(this: &EditorHandle, text: &str);
    #[wasm_bindgen(method, js_name = setDiagnostics)]
    fn set_diagnostics(this: &EditorHandle, diagnostics: &Array);
    #[wasm_bindgen(method, js_name = setLanguage)]
    fn set_language(this: &EditorHandle, language: &str);
    #[wasm_bindgen(method, js_name = setReadonly)]
    fn set_readonly(this: &EditorHandle, readonly: bool);
    #[wasm_bindgen(method)]
    fn destroy(this: &EditorHandle);
}

/// The syntax the editor highlights.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Language {
    Json,
    Yaml,
}

impl Language {
    fn id(self) -> &'static str {
        match self {
            Language::Json => "json",
            Language::Yaml => "yaml",
        }
    }
}

/// A problem at a 1-based line and column of the editor's text.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Diagnostic {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl Diagnostic {
    fn to_js(&self) -> Object {
        let o = Object::new();
        // Setting a property on a fresh plain object cannot fail.
        let _ = Reflect::set(&o, &"line".into(), &self.line.into());
        let _ = Reflect::set(&o, &"column".into(), &self.column.into());
        let _ = Reflect::set(&o, &"message".into(), &self.message.as_str().into());
        o
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

/// A parse error at its position; one without a position is put at the start of the text.
impl From<&ParseError> for Diagnostic {
    fn from(e: &ParseError) -> Self {
        let (line, column) = e.location.map_or((1, 1), |l| (l.line, l.column));
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Diagnostic {
            line: clamp(line),
            column: clamp(column),
            message: e.message.clone(),
        }
    }
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

/// How far the CodeMirror upgrade has got.
#[derive(Clone, PartialEq, Debug)]
enum Stage {
    /// The textarea, while the bundle loads.
    Loading,
    /// CodeMirror is mounted and the textarea gone.
    Ready,
    /// The bundle did not load (or did not start): the textarea stays, with a notice.
    Failed(String),
}

pub enum CodeEditorMsg {
    /// The user changed the text (in either form).
    Edited(String),
    Apply,
    BundleLoaded(JsValue),
    BundleFailed(String),
}

/// The live CodeMirror view and the callbacks it holds into Rust.
struct Mounted {
    handle: EditorHandle,
    _on_change: Closure<dyn FnMut(String)>,
    _on_apply: Closure<dyn FnMut()>,
}

pub struct CodeEditor {
    /// The editor's current text, as the user left it or the parent last set it.
    text: String,
    stage: Stage,
    host: NodeRef,
    textarea: NodeRef,
    mounted: Option<Mounted>,
}

impl Component for CodeEditor {
    type Message = CodeEditorMsg;
    type Properties = CodeEditorProps;

    fn create(ctx: &Context<Self>) -> Self {
        CodeEditor {
            text: ctx.props().value.to_string(),
            stage: Stage::Loading,
            host: NodeRef::default(),
            textarea: NodeRef::default(),
            mounted: None,
        }
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Self::Message) -> bool {
        match msg {
            CodeEditorMsg::Edited(text) => {
                if text == self.text {
                    return false;
                }
                self.text = text.clone();
                ctx.props().on_change.emit(text);
                // The textarea shows the text itself; CodeMirror owns its document.
                false
            }
            CodeEditorMsg::Apply => {
                ctx.props().on_apply.emit(());
                false
            }
            CodeEditorMsg::BundleLoaded(module) => {
                match self.mount(ctx, module.unchecked_into()) {
                    Ok(mounted) => {
                        self.mounted = Some(mounted);
                        self.stage = Stage::Ready;
                    }
                    Err(why) => self.stage = Stage::Failed(why),
                }
                true
            }
            CodeEditorMsg::BundleFailed(why) => {
                self.stage = Stage::Failed(why);
                true
            }
        }
    }

    fn changed(&mut self, ctx: &Context<Self>, old: &Self::Properties) -> bool {
        let new = ctx.props();
        // Only a value the parent changed replaces the text; a parent that does not echo
        // on_change back must not reset the user's edits on every render.
        if new.value != old.value && new.value.as_str() != self.text {
            self.text = new.value.to_string();
            if let Some(m) = &self.mounted {
                m.handle.set_value(&self.text);
            }
        }
        if let Some(m) = &self.mounted {
            if new.diagnostics != old.diagnostics {
                m.handle
                    .set_diagnostics(&diagnostics_to_js(&new.diagnostics));
            }
            if new.language != old.language {
                m.handle.set_language(new.language.id());
            }
            if new.readonly != old.readonly {
                m.handle.set_readonly(new.readonly);
            }
        }
        true
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        let props = ctx.props();
        let ready = self.stage == Stage::Ready;
        let invalid = !props.diagnostics.is_empty();
        let textarea = (!ready).then(|| {
            let oninput = ctx.link().callback(|e: InputEvent| {
                let area: HtmlTextAreaElement = e.target_unchecked_into();
                CodeEditorMsg::Edited(area.value())
            });
            let onkeydown = ctx.link().batch_callback(|e: KeyboardEvent| {
                // Escape leaves the text, as in CodeMirror: the page's shortcuts work again.
                if e.key() == "Escape" {
                    let area: HtmlTextAreaElement = e.target_unchecked_into();
                    let _ = area.blur();
                    return None;
                }
                is_apply_chord(&e).then(|| {
                    e.prevent_default();
                    CodeEditorMsg::Apply
                })
            });
            html! {
                <textarea id={EDITOR_ID} ref={self.textarea.clone()} spellcheck="false"
                    aria-describedby={format!("{HELP_ID} {DIAGNOSTICS_ID}")}
                    aria-invalid={invalid.to_string()}
                    readonly={props.readonly} value={self.text.clone()} {oninput} {onkeydown} />
            }
        });
        let notice = match &self.stage {
            Stage::Failed(why) => html! {
                <p class="editor-notice" role="status">
                    { format!("The code editor could not load ({why}); editing as plain text.") }
                </p>
            },
            _ => html! {},
        };
        let help = if ready {
            "Ctrl+Enter (⌘+Enter on a Mac) applies. Tab moves to the next control and Escape \
             leaves the editor; Ctrl+] and Ctrl+[ indent, Ctrl+Z undoes, Ctrl+Shift+Z redoes."
        } else {
            "Ctrl+Enter (⌘+Enter on a Mac) applies. Tab moves to the next control and Escape \
             leaves the editor."
        };
        html! {
            <div class="code-editor" data-editor={if ready { "codemirror" } else { "textarea" }}>
                <label id={LABEL_ID} class="visually-hidden" for={EDITOR_ID}>{ "Object spec" }</label>
                { for textarea }
                // CodeMirror mounts its own DOM in here; yew never renders children into it.
                <div class="code-editor-host" ref={self.host.clone()} hidden={!ready} />
                { notice }
                <p id={HELP_ID} class="editor-help">{ help }</p>
                <ul id={DIAGNOSTICS_ID} class="editor-diagnostics" aria-live="polite">
                    { for props.diagnostics.iter().map(|d| html! { <li>{ d.to_string() }</li> }) }
                </ul>
            </div>
        }
    }

    fn rendered(&mut self, ctx: &Context<Self>, first_render: bool) {
        if first_render {
            let ok = ctx.link().clone();
            let fail = ctx.link().clone();
            load_editor_bundle(
                BUNDLE_URL,
                &Closure::once_into_js(move |module: JsValue| {
                    ok.send_message(CodeEditorMsg::BundleLoaded(module))
                }),
                &Closure::once_into_js(move |why: String| {
                    fail.send_message(CodeEditorMsg::BundleFailed(why))
                }),
            );
        }
    }

    fn destroy(&mut self, _ctx: &Context<Self>) {
        if let Some(m) = self.mounted.take() {
            m.handle.destroy();
        }
    }
}

impl CodeEditor {
    /// Mounts CodeMirror in the host element with the current text, taking over the textarea's
    /// focus and cursor so a person typing during the swap does not notice it.
    fn mount(&self, ctx: &Context<Self>, module: EditorModule) -> Result<Mounted, String> {
        let props = ctx.props();
        let host = self
            .host
            .cast::<Element>()
            .ok_or("the editor host element is missing")?;
        let area = self.textarea.cast::<HtmlTextAreaElement>();
        let focused = area.as_ref().is_some_and(|a| {
            let active = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.active_element());
            active.is_some_and(|el| el.is_same_node(Some(a)))
        });
        let selection = area
            .as_ref()
            .and_then(|a| a.selection_start().ok().flatten())
            .unwrap_or(0);

        let attributes = Object::new();
        let options = Object::new();
        for (target, key, value) in [
            (&attributes, "id", JsValue::from(EDITOR_ID)),
            (&attributes, "aria-labelledby", LABEL_ID.into()),
            (
                &attributes,
                "aria-describedby",
                format!("{HELP_ID} {DIAGNOSTICS_ID}").into(),
            ),
            (&options, "doc", self.text.as_str().into()),
            (&options, "language", props.language.id().into()),
            (&options, "readonly", props.readonly.into()),
            (
                &options,
                "diagnostics",
                diagnostics_to_js(&props.diagnostics).into(),
            ),
            (&options, "contentAttributes", attributes.clone().into()),
            (&options, "focus", focused.into()),
            (&options, "selection", selection.into()),
        ] {
            Reflect::set(target, &key.into(), &value).map_err(describe)?;
        }

        let link = ctx.link().clone();
        let on_change = Closure::<dyn FnMut(String)>::new(move |text| {
            link.send_message(CodeEditorMsg::Edited(text));
        });
        let link = ctx.link().clone();
        let on_apply = Closure::<dyn FnMut()>::new(move || link.send_message(CodeEditorMsg::Apply));
        let handle = module
            .create_editor(
                &host,
                &options,
                on_change.as_ref().unchecked_ref(),
                on_apply.as_ref().unchecked_ref(),
            )
            .map_err(describe)?;
        Ok(Mounted {
            handle,
            _on_change: on_change,
            _on_apply: on_apply,
        })
    }
}

/// Ctrl+Enter, or Cmd+Enter on a Mac.
fn is_apply_chord(e: &KeyboardEvent) -> bool {
    e.key() == "Enter" && (e.ctrl_key() || e.meta_key())
}

fn diagnostics_to_js(diagnostics: &[Diagnostic]) -> Array {
    diagnostics.iter().map(Diagnostic::to_js).collect()
}

fn describe(e: JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "unknown error".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use converge_core::parse::parse_documents;

    #[test]
    fn a_parse_error_becomes_a_diagnostic_at_its_position() {
        let e = parse_documents("{\n  \"kind\": ,\n}").expect_err("malformed JSON");
        let d = Diagnostic::from(&e);
        assert_eq!((d.line, d.column), (2, 11));
        assert_eq!(d.to_string(), e.to_string());
    }

    #[test]
    fn a_parse_error_without_a_position_is_put_at_the_start() {
        let e = parse_documents("   ").expect_err("empty input");
        let d = Diagnostic::from(&e);
        assert_eq!((d.line, d.column), (1, 1));
    }
}
