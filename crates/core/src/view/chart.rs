//! The convergence chart: the selected object over simulated time. Desired against observed as
//! step lines (`spec.replicas` against `status.updatedReplicas`, `readyReplicas`,
//! `availableReplicas`; `metadata.generation` against `status.observedGeneration`), one band
//! per condition coloured by its status, and a cursor at the shown moment. The values are read
//! from the object's remembered changes ([`crate::engine::provenance`], the newest
//! [`crate::engine::provenance::WINDOW`] writes), so each step of a line is one write. Geometry
//! is decided here; the web crate draws the paths it is given.

use crate::api::meta::Fields;
use crate::json::Value;

use crate::api::ObjectKey;
use crate::engine::World;
use crate::time::SimTime;
use crate::view::escape;

/// Width of the plotting area, in SVG units.
pub const PLOT_W: u32 = 400;
/// Left margin (the y axis' numbers).
pub const LEFT: u32 = 30;
/// Height of the counts plot.
pub const COUNTS_H: u32 = 110;
/// Height of the generations plot.
pub const GENERATIONS_H: u32 = 44;
/// Height of one condition band.
pub const BAND_H: u32 = 16;
/// Room between the parts.
pub const GAP: u32 = 14;

/// The counts a chart draws, desired first: (field path, whether it is the desired value).
const COUNTS: &[(&str, bool)] = &[
    ("spec.replicas", true),
    ("spec.completions", true),
    ("status.desiredNumberScheduled", true),
    ("status.desiredReplicas", true),
    ("status.replicas", false),
    ("status.currentReplicas", false),
    ("status.updatedReplicas", false),
    ("status.readyReplicas", false),
    ("status.availableReplicas", false),
    ("status.currentNumberScheduled", false),
    ("status.updatedNumberScheduled", false),
    ("status.numberReady", false),
    ("status.numberAvailable", false),
    ("status.succeeded", false),
];

const GENERATIONS: &[(&str, bool)] = &[
    ("metadata.generation", true),
    ("status.observedGeneration", false),
];

/// A line's values: (from ms, value), one entry per change.
type Steps = Vec<(u64, Option<i64>)>;

/// One step line.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub field: &'static str,
    pub desired: bool,
    /// Its colour slot (0 desired, 1.. observed), for the stylesheet.
    pub slot: usize,
    /// An SVG path (`M x y H x V y ...`).
    pub path: String,
    /// `spec.replicas: 3 from t=0.000s, 5 from t=10.000s`.
    pub text: String,
}

/// One run of a condition's status.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    pub x: u32,
    pub w: u32,
    /// `True`, `False`, `Unknown`, or empty while the condition is absent.
    pub status: String,
}

/// One condition's band.
#[derive(Clone, Debug, PartialEq)]
pub struct Band {
    pub type_: String,
    pub y: u32,
    pub segments: Vec<Segment>,
    /// `Available: True from t=1.863s, False from t=10.000s`.
    pub text: String,
}

/// The chart of one object.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    pub width: u32,
    pub height: u32,
    pub from: SimTime,
    pub to: SimTime,
    /// The counts plot's top value (its lines are scaled to it).
    pub counts_max: i64,
    pub counts: Vec<Series>,
    /// Top of the generations plot, and its top value.
    pub generations_y: u32,
    pub generations_max: i64,
    pub generations: Vec<Series>,
    pub bands: Vec<Band>,
    /// The shown moment.
    pub cursor: SimTime,
    pub cursor_x: u32,
    /// How many of the object's changes the chart is drawn from.
    pub changes: usize,
}

impl Chart {
    /// The chart as SVG markup (hidden from screen readers: [`Chart::lines`] is its text),
    /// scaled to its container's width.
    pub fn svg(&self) -> String {
        use std::fmt::Write;
        let right = LEFT + PLOT_W;
        let legend_h = (self.counts.len() as u32).div_ceil(2) * 12 + 6;
        let height = self.height + legend_h;
        let mut o = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {height}" style="max-width:{}px" aria-hidden="true" focusable="false">"#,
            self.width, self.width
        );
        for (i, s) in self.counts.iter().enumerate() {
            let x = LEFT + 4 + (i as u32 % 2) * 200;
            let y = 10 + (i as u32 / 2) * 12;
            let _ = write!(
                o,
                r#"<line class="line s{slot}" x1="{x}" x2="{x2}" y1="{ly}" y2="{ly}"/><text class="tick" x="{tx}" y="{y}">{field}</text>"#,
                slot = s.slot.min(5),
                x2 = x + 14,
                ly = y - 3,
                tx = x + 18,
                field = s.field
            );
        }
        let _ = write!(o, r#"<g transform="translate(0 {legend_h})">"#);
        let plot = |o: &mut String, series: &[Series], top: u32, h: u32, max: i64| {
            if series.is_empty() {
                return;
            }
            let _ = write!(
                o,
                r#"<line class="axis" x1="{LEFT}" x2="{right}" y1="{0}" y2="{0}"/><text class="tick" x="{1}" y="{2}" text-anchor="end">{max}</text><text class="tick" x="{1}" y="{0}" text-anchor="end">0</text>"#,
                top + h,
                LEFT - 4,
                top + 8
            );
            for s in series {
                let _ = write!(
                    o,
                    r#"<path class="line s{}" d="{}"/>"#,
                    s.slot.min(5),
                    s.path
                );
            }
        };
        plot(&mut o, &self.counts, 0, COUNTS_H, self.counts_max);
        if !self.generations.is_empty() {
            let _ = write!(
                o,
                r#"<text class="tick" x="{}" y="{}">metadata.generation (dashed), status.observedGeneration</text>"#,
                LEFT + 4,
                self.generations_y - 3
            );
        }
        plot(
            &mut o,
            &self.generations,
            self.generations_y,
            GENERATIONS_H,
            self.generations_max,
        );
        for b in &self.bands {
            for s in &b.segments {
                let class = match s.status.as_str() {
                    "True" => "true",
                    "False" => "false",
                    "" => "absent",
                    _ => "unknown",
                };
                let _ = write!(
                    o,
                    r#"<rect class="seg {class}" x="{}" y="{}" width="{}" height="{BAND_H}"/>"#,
                    s.x, b.y, s.w
                );
            }
            let _ = write!(
                o,
                r#"<text class="band-name" x="{}" y="{}">{}</text>"#,
                LEFT + 4,
                b.y + 12,
                escape(&b.type_)
            );
        }
        let _ = write!(
            o,
            r#"<line class="cursor" x1="{0}" x2="{0}" y1="0" y2="{1}"/><text class="tick" x="{LEFT}" y="{2}">{3}</text><text class="tick" x="{right}" y="{2}" text-anchor="end">{4}</text></g></svg>"#,
            self.cursor_x,
            self.height - 14,
            self.height - 2,
            self.from,
            self.to
        );
        o
    }

    /// The chart's text alternative, one line each: the range, every line, every band, the
    /// cursor.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "From {} to {}, {} remembered changes.",
            self.from, self.to, self.changes
        )];
        out.extend(self.counts.iter().map(|s| s.text.clone()));
        out.extend(self.generations.iter().map(|s| s.text.clone()));
        out.extend(self.bands.iter().map(|b| b.text.clone()));
        out.push(format!("Cursor at the shown moment, {}.", self.cursor));
        out
    }
}

fn int_at(v: &Value, path: &str) -> Option<i64> {
    let mut cur = v;
    for p in path.split('.') {
        cur = cur.get(p)?;
    }
    cur.as_i64()
}

fn condition_status(v: &Value, type_: &str) -> Option<String> {
    v.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.field("type").and_then(Value::as_str) == Some(type_))
        .and_then(|c| c.field("status"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// Runs of equal values: (from ms, value), each a change.
fn runs<T: PartialEq + Clone>(points: &[(u64, T)]) -> Vec<(u64, T)> {
    let mut out: Vec<(u64, T)> = Vec::new();
    for (t, v) in points {
        match out.last_mut() {
            Some((lt, lv)) if lv == v => {
                let _ = lt;
            }
            Some((lt, lv)) if *lt == *t => *lv = v.clone(),
            _ => out.push((*t, v.clone())),
        }
    }
    out
}

fn secs(ms: u64) -> String {
    SimTime::from_ms(ms).to_string()
}

/// The chart of `key` from the live `world`'s remembered changes, the cursor at `shown` (the
/// shown snapshot's time). None when none of its changes is remembered.
pub fn chart(world: &World, key: &ObjectKey, shown: SimTime) -> Option<Chart> {
    let versions: Vec<(u64, &Value)> = world
        .provenance()
        .writes_of(key)
        .filter_map(|w| w.after.as_deref().map(|a| (w.time.as_ms(), a)))
        .collect();
    let (first, _) = *versions.first()?;
    let to = world.now().as_ms().max(first + 1);
    // Integer SVG units: whole pixels are fine at this size, and the wasm keeps no float
    // formatting for them.
    let span = to - first;
    let x = |t: u64| LEFT + (t.saturating_sub(first) * u64::from(PLOT_W) / span) as u32;
    let end_x = x(to);

    let series = |fields: &[(&'static str, bool)], top: u32, height: u32| {
        let found: Vec<(&'static str, bool, Steps)> = fields
            .iter()
            .filter_map(|(f, desired)| {
                let pts: Vec<(u64, Option<i64>)> =
                    versions.iter().map(|(t, v)| (*t, int_at(v, f))).collect();
                pts.iter()
                    .any(|(_, v)| v.is_some())
                    .then(|| (*f, *desired, runs(&pts)))
            })
            .collect();
        let max = found
            .iter()
            .flat_map(|(_, _, r)| r.iter().filter_map(|(_, v)| *v))
            .max()
            .unwrap_or(0)
            .max(1);
        let y = |v: i64| top + height - (v.clamp(0, max) * i64::from(height) / max) as u32;
        // Equal values would hide each other: each observed line sits a little higher.
        let lift = |slot: usize| (slot as u32 * 3 / 2).min(top + height);
        let mut observed = 0;
        let out: Vec<Series> = found
            .into_iter()
            .map(|(field, desired, r)| {
                let slot = if desired {
                    0
                } else {
                    observed += 1;
                    observed
                };
                let mut path = String::new();
                let mut drawing = false;
                for (i, (t, v)) in r.iter().enumerate() {
                    let next = r.get(i + 1).map_or(end_x, |(n, _)| x(*n));
                    match v {
                        Some(v) => {
                            let (x0, y0) = (x(*t), y(*v).saturating_sub(lift(slot)));
                            if drawing {
                                path.push_str(&format!(" H{x0} V{y0}"));
                            } else {
                                path.push_str(&format!(" M{x0} {y0}"));
                            }
                            path.push_str(&format!(" H{next}"));
                            drawing = true;
                        }
                        None => drawing = false,
                    }
                }
                let text = r
                    .iter()
                    .map(|(t, v)| match v {
                        Some(v) => format!("{v} from {}", secs(*t)),
                        None => format!("unset from {}", secs(*t)),
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                Series {
                    field,
                    desired,
                    slot,
                    path: path.trim_start().to_owned(),
                    text: format!("{field}: {text}"),
                }
            })
            .collect();
        (out, max)
    };

    let (counts, counts_max) = series(COUNTS, 0, COUNTS_H);
    let generations_y = COUNTS_H + GAP;
    let (generations, generations_max) = series(GENERATIONS, generations_y, GENERATIONS_H);

    let mut types: Vec<String> = Vec::new();
    for (_, v) in &versions {
        for c in v
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(t) = c.field("type").and_then(Value::as_str) {
                if !types.iter().any(|x| x == t) {
                    types.push(t.to_owned());
                }
            }
        }
    }
    let bands_y = generations_y + GENERATIONS_H + GAP;
    let bands: Vec<Band> = types
        .into_iter()
        .enumerate()
        .map(|(i, type_)| {
            let pts: Vec<(u64, String)> = versions
                .iter()
                .map(|(t, v)| (*t, condition_status(v, &type_).unwrap_or_default()))
                .collect();
            let r = runs(&pts);
            let segments = r
                .iter()
                .enumerate()
                .map(|(j, (t, s))| {
                    let next = r.get(j + 1).map_or(end_x, |(n, _)| x(*n));
                    Segment {
                        x: x(*t),
                        w: next.saturating_sub(x(*t)).max(1),
                        status: s.clone(),
                    }
                })
                .collect();
            let text = r
                .iter()
                .map(|(t, s)| {
                    let s = if s.is_empty() { "absent" } else { s.as_str() };
                    format!("{s} from {}", secs(*t))
                })
                .collect::<Vec<_>>()
                .join(", ");
            Band {
                y: bands_y + i as u32 * (BAND_H + 4),
                text: format!("{type_}: {text}"),
                type_,
                segments,
            }
        })
        .collect();
    let height = bands_y + bands.len() as u32 * (BAND_H + 4) + 18;
    let cursor = shown.min(SimTime::from_ms(to));
    Some(Chart {
        width: LEFT + PLOT_W + 8,
        height,
        from: SimTime::from_ms(first),
        to: SimTime::from_ms(to),
        counts_max,
        counts,
        generations_y,
        generations_max,
        generations,
        bands,
        cursor,
        cursor_x: x(cursor.as_ms().max(first)),
        changes: versions.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::why::tests::{scaled, web};

    #[test]
    fn a_scale_draws_desired_above_observed_until_they_meet() {
        let (world, _) = scaled();
        let c = chart(&world, &web(), world.now()).unwrap();
        let names: Vec<&str> = c.counts.iter().map(|s| s.field).collect();
        assert_eq!(
            names,
            vec![
                "spec.replicas",
                "status.replicas",
                "status.updatedReplicas",
                "status.readyReplicas",
                "status.availableReplicas"
            ]
        );
        assert!(c.counts[0].desired && !c.counts[1].desired);
        assert_eq!(c.counts_max, 5);
        let scale = world
            .provenance()
            .writes_of(&web())
            .find(|w| w.principal == "alice" && w.verb.as_str() == "update")
            .map(|w| w.time)
            .unwrap();
        assert_eq!(
            c.counts[0].text,
            format!("spec.replicas: 3 from t=0.000s, 5 from {scale}")
        );
        let ready = &c.counts[3].text;
        assert!(ready.starts_with("status.readyReplicas: "), "{ready}");
        assert!(
            ready.ends_with(&"5 from t=".to_string()) || ready.contains(", 5 from t="),
            "{ready}"
        );
        let g: Vec<&str> = c.generations.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(
            g[0],
            format!("metadata.generation: 1 from t=0.000s, 2 from {scale}")
        );
        assert!(g[1].starts_with("status.observedGeneration: "), "{}", g[1]);
        // Bands for the Deployment's two conditions.
        let types: Vec<&str> = c.bands.iter().map(|b| b.type_.as_str()).collect();
        assert_eq!(types, vec!["Progressing", "Available"]);
        assert!(
            c.bands[1]
                .text
                .starts_with("Available: absent from t=0.000s, False from"),
            "{}",
            c.bands[1].text
        );
        // The cursor is at the end; scrubbed back, it moves left.
        assert_eq!(c.cursor_x, LEFT + PLOT_W);
        let back = chart(&world, &web(), scale).unwrap();
        assert!(back.cursor_x < c.cursor_x);
        assert_eq!(
            back.lines().last().map(String::as_str),
            Some(format!("Cursor at the shown moment, {scale}.").as_str())
        );
        let svg = c.svg();
        assert!(svg.contains(r#"<text class="band-name" x="34" y=""#) && svg.ends_with("</svg>"));
        // Paths are step lines.
        assert!(c.counts[0].path.starts_with('M') && c.counts[0].path.contains(" V"));
    }

    #[test]
    fn an_object_without_remembered_changes_has_no_chart() {
        let (world, _) = scaled();
        let nothing = ObjectKey::new(
            crate::api::GroupResource::new("apps", "deployments"),
            "default",
            "nope",
        );
        assert!(chart(&world, &nothing, world.now()).is_none());
    }
}
