//! The convergence chart of the selected object (geometry from core's `view::chart`): desired
//! against observed as step lines, condition bands, a cursor at the shown moment. The SVG is
//! hidden from screen readers; the same lines are a list beside it.

use converge_core::view::chart::{Chart, Series, BAND_H, COUNTS_H, GENERATIONS_H, LEFT, PLOT_W};
use yew::prelude::*;

fn slot(s: &Series) -> String {
    format!("s{}", s.slot.min(5))
}

fn lines(series: &[Series]) -> Html {
    html! {
        { for series.iter().map(|s| html! {
            <path class={classes!("line", slot(s))} d={s.path.clone()} />
        }) }
    }
}

/// The legend: two keys a row.
fn legend(series: &[Series]) -> Html {
    html! {
        { for series.iter().enumerate().map(|(i, s)| {
            let x = LEFT + 4 + (i as u32 % 2) * 200;
            let y = 10 + (i as u32 / 2) * 12;
            html! {
                <g>
                    <line class={classes!("line", slot(s))} x1={x.to_string()} x2={(x + 14).to_string()} y1={(y - 3).to_string()} y2={(y - 3).to_string()} />
                    <text class="tick" x={(x + 18).to_string()} y={y.to_string()}>{ s.field }</text>
                </g>
            }
        }) }
    }
}

pub fn convergence_chart(c: &Chart) -> Html {
    let right = LEFT + PLOT_W;
    let gy = c.generations_y;
    let band_class = |s: &str| match s {
        "True" => "true",
        "False" => "false",
        "" => "absent",
        _ => "unknown",
    };
    let axis = |top: u32, h: u32, max: i64| {
        html! {
            <>
                <line class="axis" x1={LEFT.to_string()} x2={right.to_string()} y1={(top + h).to_string()} y2={(top + h).to_string()} />
                <text class="tick" x={(LEFT - 4).to_string()} y={(top + 8).to_string()} text-anchor="end">{ max }</text>
                <text class="tick" x={(LEFT - 4).to_string()} y={(top + h).to_string()} text-anchor="end">{ "0" }</text>
            </>
        }
    };
    let legend_h = (c.counts.len() as u32).div_ceil(2) * 12 + 6;
    let height = c.height + legend_h;
    html! {
        <figure class="chart" id="chart">
            <figcaption>{ "Convergence over simulated time (dashed: desired)" }</figcaption>
            <div class="chart-scroll" tabindex="0" role="region" aria-label="Convergence chart (scrolls; the same lines are listed as text)">
            <svg viewBox={format!("0 0 {} {height}", c.width)} style={format!("max-width:{}px", c.width)} aria-hidden="true" focusable="false">
                { legend(&c.counts) }
                <g transform={format!("translate(0 {legend_h})")}>
                    if !c.counts.is_empty() {
                        { axis(0, COUNTS_H, c.counts_max) }
                        { lines(&c.counts) }
                    }
                    if !c.generations.is_empty() {
                        { axis(gy, GENERATIONS_H, c.generations_max) }
                        <text class="tick" x={(LEFT + 4).to_string()} y={(gy + 8).to_string()}>{ "metadata.generation (dashed), status.observedGeneration" }</text>
                        { lines(&c.generations) }
                    }
                    { for c.bands.iter().map(|b| html! {
                        <g>
                            { for b.segments.iter().map(|s| html! {
                                <rect class={classes!("seg", band_class(&s.status))} x={format!("{:.1}", s.x)} y={b.y.to_string()} width={format!("{:.1}", s.w)} height={BAND_H.to_string()} />
                            }) }
                            <text class="band-name" x={(LEFT + 4).to_string()} y={(b.y + 12).to_string()}>{ b.type_.clone() }</text>
                        </g>
                    }) }
                    <line class="cursor" x1={format!("{:.1}", c.cursor_x)} x2={format!("{:.1}", c.cursor_x)} y1="0" y2={(c.height - 14).to_string()} />
                    <text class="tick" x={LEFT.to_string()} y={(c.height - 2).to_string()}>{ c.from.to_string() }</text>
                    <text class="tick" x={right.to_string()} y={(c.height - 2).to_string()} text-anchor="end">{ c.to.to_string() }</text>
                </g>
            </svg>
            </div>
            <ul class="visually-hidden" id="chart-text" aria-label="The convergence chart as text">
                { for c.lines().into_iter().map(|l| html! { <li>{ l }</li> }) }
            </ul>
        </figure>
    }
}
