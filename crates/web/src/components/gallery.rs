//! The gallery panel: the lesson cards, a file picker and a paste box, and which scenario is
//! open. It formats `crate::state::lesson::Lessons`; the file is read by the platform.

use web_sys::{HtmlInputElement, HtmlTextAreaElement};
use yew::prelude::*;

use crate::state::gallery::Card;
use crate::state::lesson::LessonMsg;
use crate::state::Msg;

/// What the panel draws from.
#[derive(PartialEq)]
pub struct GalleryPanelProps {
    pub gallery_open: bool,
    pub cards: Vec<Card>,
    /// The paste box's text.
    pub paste: AttrValue,
    pub error: Option<AttrValue>,
    /// The open scenario's name (None: the starter cluster).
    pub open_scenario: Option<AttrValue>,
    /// The file the reader picked, to read and open.
    pub on_file: Callback<web_sys::File>,
    pub send: Callback<Msg>,
}

/// Drawn through `super::MemoPanel`, so only when these props change.
pub fn gallery_panel(props: &GalleryPanelProps) -> Html {
    let send = &props.send;
    let toggle = send.reform(|_| Msg::Lesson(LessonMsg::ToggleGallery));
    let on_file = {
        let on_file = props.on_file.clone();
        Callback::from(move |e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            if let Some(file) = input.files().and_then(|f| f.get(0)) {
                on_file.emit(file);
            }
        })
    };
    html! {
        <section class="pane gallery" aria-labelledby="gallery-h">
            <div class="gallery-head">
                <h2 id="gallery-h">{ "Lessons" }</h2>
                <button id="gallery-toggle" aria-expanded={props.gallery_open.to_string()} aria-controls="gallery-body" onclick={toggle}>
                    { if props.gallery_open { "Hide the gallery" } else { "Open the gallery" } }
                </button>
                if let Some(name) = &props.open_scenario {
                    <span class="muted" id="open-scenario">{ format!("Open: {name}") }</span>
                    <button id="close-scenario" onclick={send.reform(|_| Msg::Lesson(LessonMsg::Close))}>{ "Back to the starter cluster" }</button>
                }
            </div>
            if let Some(e) = &props.error {
                <p class="outcome bad" role="alert" id="scenario-error">{ e.clone() }
                    <button onclick={send.reform(|_| Msg::Lesson(LessonMsg::DismissError))}>{ "Dismiss" }</button></p>
            }
            if props.gallery_open {
                <div id="gallery-body">
                    if props.cards.is_empty() {
                        <p class="muted" role="status">{ "Loading the lessons…" }</p>
                    }
                    <ol class="cards">
                        { for props.cards.iter().map(|c| {
                            let id = c.id.to_owned();
                            html! {
                                <li class="card" data-scenario={c.id}>
                                    <h3>{ format!("{}. {}", c.number, c.title) }</h3>
                                    <p class="muted">{ c.summary.clone() }</p>
                                    <button class="primary" aria-label={format!("Open lesson {}: {}", c.number, c.title)}
                                        onclick={send.reform(move |_| Msg::Lesson(LessonMsg::Open(id.clone())))}>{ "Open" }</button>
                                </li>
                            }
                        }) }
                    </ol>
                    <div class="open-file">
                        <label for="scenario-file">{ "Open a scenario file (YAML or JSON) " }</label>
                        <input id="scenario-file" type="file" accept=".yaml,.yml,.json,application/json,text/yaml" onchange={on_file} />
                    </div>
                    <div class="paste">
                        <label for="scenario-paste">{ "…or paste one" }</label>
                        <textarea id="scenario-paste" rows="6" spellcheck="false" value={props.paste.clone()}
                            oninput={send.reform(|e: InputEvent| {
                                let t: HtmlTextAreaElement = e.target_unchecked_into();
                                Msg::Lesson(LessonMsg::PasteInput(t.value()))
                            })} />
                        <button id="open-pasted" onclick={{
                            let text = props.paste.to_string();
                            send.reform(move |_| Msg::Lesson(LessonMsg::OpenText(text.clone())))
                        }}>{ "Open pasted scenario" }</button>
                    </div>
                </div>
            }
        </section>
    }
}
