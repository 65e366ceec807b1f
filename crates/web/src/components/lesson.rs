//! The lesson panel: the current step's narration, what completes it, and the closing check,
//! as they were at the moment shown (a scrubbed snapshot, else the live world).

use std::rc::Rc;

use converge_core::engine::world::key_text;
use converge_core::scenario::LessonProgress;
use yew::prelude::*;

use crate::state::gallery::Opened;
use crate::state::lesson::LessonMsg;
use crate::state::Msg;

/// What the panel draws from.
#[derive(PartialEq)]
pub struct LessonPanelProps {
    pub opened: Rc<Opened>,
    /// Progress at the shown moment.
    pub progress: LessonProgress,
    /// The reader's choice for the closing question.
    pub answer: Option<usize>,
    pub send: Callback<Msg>,
}

/// Drawn through `super::MemoPanel`, so only when these props change.
pub fn lesson_panel(props: &LessonPanelProps) -> Html {
    let (o, p, send) = (&props.opened, &props.progress, &props.send);
    let Some(guide) = &o.guide else {
        return html! {
            <section class="pane lesson" aria-labelledby="lesson-h">
                <h2 id="lesson-h">{ o.scenario.name.clone() }</h2>
                <p>{ o.scenario.description.clone() }</p>
            </section>
        };
    };
    let total = guide.steps.len();
    let finished = p.finished(guide);
    html! {
        <section class="pane lesson" aria-labelledby="lesson-h" id="lesson">
            <div class="lesson-head">
                <h2 id="lesson-h">{ guide.title.clone() }</h2>
                <span id="lesson-progress" class="muted">{
                    if finished { format!("All {total} steps done") } else { format!("Step {} of {total}", p.step + 1) }
                }</span>
                <button id="lesson-restart" onclick={send.reform(|_| Msg::Lesson(LessonMsg::Restart))}>{ "Restart lesson" }</button>
            </div>
            if !guide.summary.is_empty() { <p class="summary">{ guide.summary.clone() }</p> }
            <ol class="steps" aria-label="Lesson steps">
                { for guide.steps.iter().enumerate().map(|(i, s)| {
                    let state = if i < p.step { "done" } else if i == p.step { "current" } else { "todo" };
                    html! {
                        <li class={classes!("step", state)} aria-current={(i == p.step).then_some("step")} data-step={i.to_string()}>
                            if i <= p.step {
                                <p class="do">{ s.text.clone() }</p>
                                if !s.watch.is_empty() { <p class="watch"><span class="muted">{ "Watch: " }</span>{ s.watch.clone() }</p> }
                                if i == p.step {
                                    <p class="waiting muted">{ "Continues when: " }{ s.waiting_for().join("; ") }</p>
                                    if let Some(f) = &s.focus { <p class="muted focus">{ format!("Selected: {}", key_text(f)) }</p> }
                                }
                            } else {
                                <p class="muted">{ format!("Step {}", i + 1) }</p>
                            }
                        </li>
                    }
                }) }
            </ol>
            if finished {
                <fieldset class="check" id="lesson-check">
                    <legend>{ guide.question.clone() }</legend>
                    { for guide.choices.iter().enumerate().map(|(i, c)| html! {
                        <label class="choice">
                            <input type="radio" name="lesson-answer" value={i.to_string()} checked={props.answer == Some(i)}
                                onchange={send.reform(move |_| Msg::Lesson(LessonMsg::Answer(i)))} />
                            { c.clone() }
                        </label>
                    }) }
                    if let Some(a) = props.answer {
                        if guide.is_right(a) {
                            <p id="lesson-done" class="outcome ok" role="status">{ "✓ Done. " }{ guide.explanation.clone() }</p>
                        } else {
                            <p id="lesson-wrong" class="outcome bad" role="status">{ "Not quite: look again at what you watched, and try another answer." }</p>
                        }
                    }
                </fieldset>
            }
        </section>
    }
}
