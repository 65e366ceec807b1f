//! The app shell: header, object list, editor, status panel, step/play controls.

use gloo_timers::callback::Interval;
use web_sys::HtmlTextAreaElement;
use yew::prelude::*;

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
        let on_input = link.callback(|e: InputEvent| {
            let area: HtmlTextAreaElement = e.target_unchecked_into();
            Msg::EditorInput(area.value())
        });
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
                    <section class="pane editor" aria-labelledby="editor-h">
                        <h2 id="editor-h">{ "Spec" }</h2>
                        <label class="visually-hidden" for="spec-editor">{ "Object spec (JSON)" }</label>
                        <textarea id="spec-editor" spellcheck="false" value={m.editor_text.clone()}
                            oninput={on_input} />
                    </section>
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
