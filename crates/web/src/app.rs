//! The app shell: header, object list, editor, status panel, step/play controls.

use converge_core::parse::parse_documents;
use gloo_timers::callback::Interval;
use yew::prelude::*;

use crate::editor::{CodeEditor, Diagnostic, Language};
use crate::state::{Model, Msg};

/// Wall-clock milliseconds between automatic steps while playing at 1x.
const PLAY_INTERVAL_MS: u32 = 250;

pub struct App {
    model: Model,
    player: Option<Interval>,
}

impl Component for App {
    type Message = Msg;
    type Properties = ();

    fn create(_ctx: &Context<Self>) -> Self {
        App {
            model: Model::default(),
            player: None,
        }
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Self::Message) -> bool {
        let changed = self.model.update(msg);
        match (self.model.playing, self.player.is_some()) {
            (true, false) => {
                let link = ctx.link().clone();
                self.player = Some(Interval::new(PLAY_INTERVAL_MS, move || {
                    link.send_message(Msg::Tick)
                }));
            }
            (false, true) => self.player = None,
            _ => {}
        }
        changed
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let m = &self.model;
        let on_input = link.callback(Msg::EditorInput);
        let object_label = object_label(&m.editor_text);
        html! {
            <div class="shell">
                <header class="topbar">
                    <h1>{ "Converge" }</h1>
                    <p class="tagline">{ "Kubernetes spec/status playground" }</p>
                </header>
                <nav class="controls" aria-label="Simulation controls">
                    <button id="step" onclick={link.callback(|_| Msg::Step)}>{ "Step" }</button>
                    <button id="play" aria-pressed={m.playing.to_string()}
                        onclick={link.callback(|_| Msg::TogglePlay)}>
                        { if m.playing { "Pause" } else { "Play" } }
                    </button>
                    <button id="reset" onclick={link.callback(|_| Msg::Reset)}>{ "Reset" }</button>
                    <output id="clock" aria-label="Simulated time">{ m.clock.to_string() }</output>
                    <output id="steps" aria-label="Steps taken">{ format!("{} steps", m.steps) }</output>
                </nav>
                <main class="panes">
                    <section class="pane objects" aria-labelledby="objects-h">
                        <h2 id="objects-h">{ "Objects" }</h2>
                        <ul class="object-list">
                            <li>{ object_label }</li>
                        </ul>
                    </section>
                    <SpecPane text={AttrValue::from(m.editor_text.clone())} {on_input} />
                    <section class="pane status" aria-labelledby="status-h">
                        <h2 id="status-h">{ "Status" }</h2>
                        <dl class="status-fields">
                            <dt>{ "simulated time" }</dt><dd>{ m.clock.rfc3339() }</dd>
                        </dl>
                    </section>
                </main>
            </div>
        }
    }
}

#[derive(Properties, PartialEq)]
struct SpecPaneProps {
    text: AttrValue,
    on_input: Callback<String>,
}

/// The spec editor with parse errors marked as you type, Format (JSON, one object), and a
/// stand-in for Apply (Ctrl/Cmd+Enter) that only reports whether the text parses, until applying
/// goes through the API server. Text starting with `{` is JSON, anything else YAML (as kubectl).
#[function_component(SpecPane)]
fn spec_pane(props: &SpecPaneProps) -> Html {
    let applied = use_state(String::new);
    let parsed = parse_documents(&props.text);
    let diagnostics: Vec<Diagnostic> = parsed
        .as_ref()
        .err()
        .map(Diagnostic::from)
        .into_iter()
        .collect();
    let language = if props.text.trim_start().starts_with('{') {
        Language::Json
    } else {
        Language::Yaml
    };
    let formatted = match (&parsed, language) {
        (Ok(docs), Language::Json) => match docs.as_slice() {
            [doc] => serde_json::to_string_pretty(doc).ok(),
            _ => None,
        },
        _ => None,
    };
    let on_format = {
        let on_input = props.on_input.clone();
        let formatted = formatted.clone();
        Callback::from(move |_: MouseEvent| {
            if let Some(text) = &formatted {
                on_input.emit(text.clone());
            }
        })
    };
    let on_apply = {
        let (applied, text) = (applied.clone(), props.text.clone());
        Callback::from(move |()| {
            applied.set(match parse_documents(&text) {
                Ok(_) => "applied".to_owned(),
                Err(e) => format!("not applied: {e}"),
            })
        })
    };
    html! {
        <section class="pane editor" aria-labelledby="editor-h">
            <h2 id="editor-h">{ "Spec" }</h2>
            <CodeEditor value={props.text.clone()} {language} {diagnostics}
                on_change={props.on_input.clone()} {on_apply} />
            <button id="format" onclick={on_format} disabled={formatted.is_none()}>{ "Format" }</button>
            <output id="apply-status" aria-live="polite">{ (*applied).clone() }</output>
        </section>
    }
}

/// `Deployment default/web`, or a note when the editor does not hold a parseable object.
fn object_label(text: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => {
            let s = |p: &str| {
                v.pointer(p)
                    .and_then(|x| x.as_str())
                    .unwrap_or("?")
                    .to_owned()
            };
            format!(
                "{} {}/{}",
                s("/kind"),
                s("/metadata/namespace"),
                s("/metadata/name")
            )
        }
        Err(e) => format!("(editor does not parse: {e})"),
    }
}
