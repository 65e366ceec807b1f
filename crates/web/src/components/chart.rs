//! The convergence chart of the selected object: desired against observed as step lines,
//! condition bands, a cursor at the shown moment. Core's `view::chart` draws the SVG markup
//! (escaped) and its text; the SVG is hidden from screen readers, the same lines are a list
//! beside it.

use converge_core::view::chart::Chart;
use yew::prelude::*;

pub fn convergence_chart(c: &Chart) -> Html {
    html! {
        <figure class="chart" id="chart">
            <figcaption>{ "Convergence over simulated time (dashed: desired)" }</figcaption>
            <div class="chart-scroll">{ Html::from_html_unchecked(AttrValue::from(c.svg())) }</div>
            <ul class="visually-hidden" id="chart-text" aria-label="The convergence chart as text">
                { for c.lines().into_iter().map(|l| html! { <li>{ l }</li> }) }
            </ul>
        </figure>
    }
}
