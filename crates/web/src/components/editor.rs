//! The spec editor: a plain `<textarea>` from the first paint, upgraded to CodeMirror 6 once its
//! lazily loaded bundle arrives.
//!
//! The bundle (`web/editor/codemirror.js` in parts, built into `dist/editor-bundle/`) is fetched
//! with dynamic `import()`s after the first render, so it never counts toward the first load.
//! Until it is there, or if it never comes, the textarea does the whole job: typing calls
//! `on_change`, Ctrl/Cmd+Enter calls `on_apply`, diagnostics are listed under it. Both forms carry
//! the accessible name "Object spec" and leave Tab to move focus.
//!
//! The upgrade is cut into browser tasks, so none holds the main thread long (BENCHMARKS.md,
//! issue 23): each part of the bundle is evaluated in a task of its own, then the editor's state
//! is built ([`Stage::Preparing`]), then its view, apart from the document ([`Stage::Mounted`]),
//! then it replaces the textarea, taking over its text, caret and focus.

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
const BUNDLE_DIR: &str = "../../editor-bundle/";

#[wasm_bindgen(inline_js = r#"
// The bundle's parts in dependency order (web/editor/build.mjs, PARTS), then the module the
// editor drives.
const PARTS = ['state', 'view', 'language', 'extras', 'languages', 'codemirror'];
const nextTask = () => new Promise((ok) => {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => { channel.port1.close(); ok(); };
  channel.port2.postMessage(null);
});
export function loadEditorBundle(dir, onReady, onError) {
  const urls = PARTS.map((part) => new URL(`${dir}${part}.js`, import.meta.url).href);
  const load = async () => {
    // Fetched at once, evaluated a part per task.
    for (const href of urls) {
      const link = document.createElement('link');
      link.rel = 'modulepreload';
      link.href = href;
      document.head.append(link);
    }
    let module;
    for (const href of urls) {
      await nextTask();
      module = await import(href);
    }
    return module;
  };
  const settled = () => dispatchEvent(new Event('converge-editor-settled')); // web/boot.js
  const start = () => requestAnimationFrame(() => setTimeout(() => load().then(
    (module) => { settled(); onReady(module); },
    (e) => { settled(); onError(String((e && e.message) || e)); }), 0));
  // Once the app is drawn (crates/web/src/app.rs announces converge-ready when its root stops
  // being busy), and after a paint: the bundle never competes with the app's own first load.
  if (document.querySelector('.shell[aria-busy="true"]')) {
    addEventListener('converge-ready', start, { once: true });
  } else {
    start();
  }
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = loadEditorBundle)]
    fn load_editor_bundle(dir: &str, on_ready: &JsValue, on_error: &JsValue);

    /// The bundle's module namespace (see web/editor/codemirror.js).
    type EditorModule;
    #[wasm_bindgen(method, catch, js_name = prepareEditor)]
    fn prepare_editor(
        this: &EditorModule,
        options: &Object,
        on_change: &Function,
        on_apply: &Function,
    ) -> Result<EditorDraft, JsValue>;

    /// An editor's state, not yet shown.
    type EditorDraft;
    #[wasm_bindgen(method, catch)]
    fn mount(this: &EditorDraft) -> Result<EditorHandle, JsValue>;

    /// One mounted CodeMirror view.
    type EditorHandle;
    #[wasm_bindgen(method)]
    fn attach(this: &EditorHandle, parent: &Element);
    #[wasm_bindgen(method, js_name = takeOver)]
    fn take_over(this: &EditorHandle, text: &str, selection: u32, focus: bool);
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
enum Stage {
    /// The textarea, while the bundle loads.
    Loading,
    /// The bundle is evaluated and the editor's state built; its view comes in the next task.
    Preparing(Prepared),
    /// CodeMirror's view is built, not yet in the document; it replaces the textarea in the next
    /// task.
    Mounted(Mounted),
    /// CodeMirror is shown and the textarea gone.
    Ready(Mounted),
    /// The bundle did not load (or did not start): the textarea stays, with a notice.
    Failed(String),
}

pub enum CodeEditorMsg {
    /// The user changed the text (in either form).
    Edited(String),
    Apply,
    BundleLoaded(JsValue),
    BundleFailed(String),
    /// The task after [`Stage::Preparing`]: build the view.
    Mount,
    /// The task after [`Stage::Mounted`]: replace the textarea.
    Show,
}

/// The callbacks an editor holds into Rust, kept alive as long as it is.
struct Callbacks {
    _on_change: Closure<dyn FnMut(String)>,
    _on_apply: Closure<dyn FnMut()>,
}

/// An editor's state, and the props it was built with (the view gets any change since).
struct Prepared {
    draft: EditorDraft,
    callbacks: Callbacks,
    language: Language,
    readonly: bool,
    diagnostics: Vec<Diagnostic>,
}

/// A CodeMirror view and the callbacks it holds into Rust.
struct Mounted {
    handle: EditorHandle,
    _callbacks: Callbacks,
}

/// What the textarea had when CodeMirror replaced it: CodeMirror takes it over once shown.
struct Handover {
    selection: u32,
    focused: bool,
}

pub struct CodeEditor {
    /// The editor's current text, as the user left it or the parent last set it.
    text: String,
    stage: Stage,
    host: NodeRef,
    textarea: NodeRef,
    handover: Option<Handover>,
}

impl CodeEditor {
    /// The CodeMirror view, once built (shown or not).
    fn handle(&self) -> Option<&EditorHandle> {
        match &self.stage {
            Stage::Mounted(m) | Stage::Ready(m) => Some(&m.handle),
            Stage::Loading | Stage::Preparing(_) | Stage::Failed(_) => None,
        }
    }
}

/// Sends `msg` to the editor in the next browser task.
fn in_next_task(ctx: &Context<CodeEditor>, msg: CodeEditorMsg) {
    let link = ctx.link().clone();
    crate::platform::tasks::next_task(move || link.send_message(msg));
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
            handover: None,
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
                match self.prepare(ctx, module.unchecked_into()) {
                    Ok(prepared) => {
                        self.stage = Stage::Preparing(prepared);
                        in_next_task(ctx, CodeEditorMsg::Mount);
                        false
                    }
                    Err(why) => {
                        self.stage = Stage::Failed(why);
                        true
                    }
                }
            }
            CodeEditorMsg::Mount => {
                let Stage::Preparing(prepared) = std::mem::replace(&mut self.stage, Stage::Loading)
                else {
                    return false;
                };
                match self.mount(ctx, prepared) {
                    Ok(mounted) => {
                        self.stage = Stage::Mounted(mounted);
                        in_next_task(ctx, CodeEditorMsg::Show);
                        false
                    }
                    Err(why) => {
                        self.stage = Stage::Failed(why);
                        true
                    }
                }
            }
            CodeEditorMsg::Show => {
                let Stage::Mounted(mounted) = std::mem::replace(&mut self.stage, Stage::Loading)
                else {
                    return false;
                };
                // Into the host while it is hidden, so the render that shows it and removes the
                // textarea swaps the two at once: no frame shows the pane without either.
                let Some(host) = self.host.cast::<Element>() else {
                    self.stage = Stage::Failed("the editor host element is missing".into());
                    return true;
                };
                mounted.handle.attach(&host);
                self.handover = Some(self.textarea_state());
                self.stage = Stage::Ready(mounted);
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
            if let Some(h) = self.handle() {
                h.set_value(&self.text);
            }
        }
        // (A view still to be built gets these when it is: `mount`.)
        if let Some(h) = self.handle() {
            if new.diagnostics != old.diagnostics {
                h.set_diagnostics(&diagnostics_to_js(&new.diagnostics));
            }
            if new.language != old.language {
                h.set_language(new.language.id());
            }
            if new.readonly != old.readonly {
                h.set_readonly(new.readonly);
            }
        }
        true
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        let props = ctx.props();
        let ready = matches!(self.stage, Stage::Ready(_));
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
                BUNDLE_DIR,
                &Closure::once_into_js(move |module: JsValue| {
                    ok.send_message(CodeEditorMsg::BundleLoaded(module))
                }),
                &Closure::once_into_js(move |why: String| {
                    fail.send_message(CodeEditorMsg::BundleFailed(why))
                }),
            );
        }
        // CodeMirror is shown: it takes over the textarea's text (typed meanwhile), caret and
        // focus.
        if let (Some(handover), Some(h)) = (self.handover.take(), self.handle()) {
            h.take_over(&self.text, handover.selection, handover.focused);
        }
    }

    fn destroy(&mut self, _ctx: &Context<Self>) {
        if let Some(h) = self.handle() {
            h.destroy();
        }
    }
}

impl CodeEditor {
    /// Builds the editor's state with the current text, in this task.
    fn prepare(&self, ctx: &Context<Self>, module: EditorModule) -> Result<Prepared, String> {
        let props = ctx.props();
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
        ] {
            Reflect::set(target, &key.into(), &value).map_err(describe)?;
        }

        let link = ctx.link().clone();
        let on_change = Closure::<dyn FnMut(String)>::new(move |text| {
            link.send_message(CodeEditorMsg::Edited(text));
        });
        let link = ctx.link().clone();
        let on_apply = Closure::<dyn FnMut()>::new(move || link.send_message(CodeEditorMsg::Apply));
        let draft = module
            .prepare_editor(
                &options,
                on_change.as_ref().unchecked_ref(),
                on_apply.as_ref().unchecked_ref(),
            )
            .map_err(describe)?;
        Ok(Prepared {
            draft,
            callbacks: Callbacks {
                _on_change: on_change,
                _on_apply: on_apply,
            },
            language: props.language,
            readonly: props.readonly,
            diagnostics: props.diagnostics.clone(),
        })
    }

    /// Builds the view (apart from the document), with what changed since the state was built.
    fn mount(&self, ctx: &Context<Self>, prepared: Prepared) -> Result<Mounted, String> {
        let props = ctx.props();
        let handle = prepared.draft.mount().map_err(describe)?;
        if props.diagnostics != prepared.diagnostics {
            handle.set_diagnostics(&diagnostics_to_js(&props.diagnostics));
        }
        if props.language != prepared.language {
            handle.set_language(props.language.id());
        }
        if props.readonly != prepared.readonly {
            handle.set_readonly(props.readonly);
        }
        Ok(Mounted {
            handle,
            _callbacks: prepared.callbacks,
        })
    }

    /// The textarea's caret and whether it has focus, for CodeMirror to take over.
    fn textarea_state(&self) -> Handover {
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
        Handover { selection, focused }
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
