//! The sequence view: the timeline's events as a sequence diagram. One lane per actor (the
//! users, the API server, each controller, the scheduler, the kubelets), one row per arrow: a
//! request to the API server, its answer (refusals with their code), a watch delivery from the
//! API server to a controller, or a note on a lane (a reconcile that wrote nothing, a fault).
//! Deliveries that queued nothing are folded unless asked for, and counted. Geometry is decided
//! here, so the web crate only draws what it is given.

use crate::api::{ObjectKey, WatchEventType};
use crate::engine::world::key_text;
use crate::engine::{EventKind, StepReport};
use crate::view::escape;
use crate::view::why::WhyView;

/// The API server's lane.
pub const API_SERVER: &str = "API server";
/// Width of one lane, in SVG units.
pub const LANE_W: u32 = 150;
/// Height of one row.
pub const ROW_H: u32 = 22;
/// Room above the first row for the lanes' names.
pub const TOP: u32 = 30;
/// Rows drawn at most (the newest).
pub const MAX_ROWS: usize = 100;

/// What a row draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrowKind {
    /// A client's request to the API server.
    Request,
    /// The API server's answer.
    Response,
    /// A watch event delivered to a controller's informer.
    Delivery,
    /// Something on one lane: a reconcile that wrote nothing, a fault, an engine notice.
    Note,
}

/// One row of the diagram.
#[derive(Clone, Debug, PartialEq)]
pub struct SeqRow {
    pub step: u64,
    pub time_ms: u64,
    pub kind: ArrowKind,
    /// Lane indices; equal for a note.
    pub from: usize,
    pub to: usize,
    /// The whole label: `update replicasets default/web-x`, `409 Conflict: ...`.
    pub label: String,
    /// The label cut to fit between the lanes it spans.
    pub short: String,
    /// A refused request's answer (code >= 400).
    pub refused: bool,
    /// Part of the open "Why?" chain.
    pub in_chain: bool,
    /// Touches the selected object.
    pub selected: bool,
}

/// The diagram for a range of steps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sequence {
    pub lanes: Vec<String>,
    pub rows: Vec<SeqRow>,
    /// Deliveries that queued nothing, left out (all of them when folded).
    pub folded: usize,
    /// Whether those deliveries are left out.
    pub folding: bool,
    /// Older rows left out beyond [`MAX_ROWS`].
    pub older: usize,
}

impl Sequence {
    pub fn width(&self) -> u32 {
        LANE_W * self.lanes.len().max(1) as u32
    }

    pub fn height(&self) -> u32 {
        TOP + ROW_H * self.rows.len() as u32 + ROW_H / 2
    }

    /// The x of lane `i`'s line.
    pub fn lane_x(i: usize) -> u32 {
        LANE_W * i as u32 + LANE_W / 2
    }

    /// The y of row `i`'s arrow.
    pub fn row_y(i: usize) -> u32 {
        TOP + ROW_H * i as u32 + ROW_H / 2
    }

    /// The diagram as SVG markup (hidden from screen readers: [`Sequence::row_text`] is its
    /// text). Every label is escaped.
    pub fn svg(&self) -> String {
        use std::fmt::Write;
        let (w, h) = (self.width(), self.height());
        let mut o = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" aria-hidden="true" focusable="false"><defs><marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" markerUnits="userSpaceOnUse" orient="auto-start-reverse"><path d="M0 0 L8 4 L0 8 z" class="head"/></marker></defs>"#
        );
        for (i, l) in self.lanes.iter().enumerate() {
            let x = Self::lane_x(i);
            let _ = write!(
                o,
                r#"<text class="lane-name" x="{x}" y="16" text-anchor="middle">{}</text><line class="lifeline" x1="{x}" x2="{x}" y1="{}" y2="{h}"/>"#,
                escape(&fit(l, 1)),
                TOP - 6
            );
        }
        for (i, r) in self.rows.iter().enumerate() {
            let y = Self::row_y(i);
            let kind = match r.kind {
                ArrowKind::Request => "req",
                ArrowKind::Response => "resp",
                ArrowKind::Delivery => "watch",
                ArrowKind::Note => "note",
            };
            let _ = write!(
                o,
                r#"<g class="{kind}{}{}{}"><title>{}</title>"#,
                if r.refused { " bad" } else { "" },
                if r.in_chain { " chain" } else { "" },
                if r.selected { " mine" } else { "" },
                escape(&r.label)
            );
            let (x1, x2) = (Self::lane_x(r.from), Self::lane_x(r.to));
            if r.kind == ArrowKind::Note {
                let _ = write!(
                    o,
                    r#"<rect x="{}" y="{}" width="{}" height="{}" rx="3"/><text x="{x1}" y="{}" text-anchor="middle">{}</text>"#,
                    x1 - LANE_W / 2 + 4,
                    y - ROW_H / 2 + 3,
                    LANE_W - 8,
                    ROW_H - 6,
                    y + 4,
                    escape(&r.short)
                );
            } else {
                let _ = write!(
                    o,
                    r#"<line x1="{x1}" x2="{x2}" y1="{0}" y2="{0}" marker-end="url(#arrow)"/><text x="{1}" y="{y}" text-anchor="middle">{2}</text>"#,
                    y + 4,
                    (x1 + x2) / 2,
                    escape(&r.short)
                );
            }
            o.push_str("</g>");
        }
        o.push_str("</svg>");
        o
    }

    /// Row `i` as one line of text, for screen readers and tests:
    /// `step 12, t=10.005s: deployment-controller → API server: update replicasets default/web-x`.
    pub fn row_text(&self, i: usize) -> String {
        let Some(r) = self.rows.get(i) else {
            return String::new();
        };
        let lane = |i: usize| self.lanes.get(i).map_or("", String::as_str);
        let who = match r.kind {
            ArrowKind::Note => lane(r.from).to_owned(),
            _ => format!("{} → {}", lane(r.from), lane(r.to)),
        };
        let what = match r.kind {
            ArrowKind::Request => "request",
            ArrowKind::Response if r.refused => "refused",
            ArrowKind::Response => "response",
            ArrowKind::Delivery => "watch delivery",
            ArrowKind::Note => "note",
        };
        let mut s = format!(
            "step {}, {}, {what}: {who}: {}",
            r.step,
            crate::time::SimTime::from_ms(r.time_ms),
            r.label
        );
        if r.in_chain {
            s.push_str(" (in the Why? chain)");
        }
        s
    }
}

/// Where a lane sorts: users, the API server, controllers, the scheduler, kubelets, the rest.
fn lane_rank(lane: &str) -> u8 {
    if lane.starts_with("user:") {
        0
    } else if lane == API_SERVER {
        1
    } else if lane == "engine" {
        5
    } else if lane.starts_with("kubelet") {
        4
    } else if lane.contains("scheduler") {
        3
    } else {
        2
    }
}

/// Cuts `label` to what fits in `lanes` lane widths (about 6.5 SVG units a character).
fn fit(label: &str, lanes: usize) -> String {
    let room = (lanes.max(1) * LANE_W as usize * 2 / 13).saturating_sub(2);
    if label.chars().count() <= room {
        label.to_owned()
    } else {
        let mut s: String = label.chars().take(room.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

struct Raw {
    step: u64,
    time_ms: u64,
    kind: ArrowKind,
    from: String,
    to: String,
    label: String,
    refused: bool,
    in_chain: bool,
    selected: bool,
}

/// The diagram of `reports` (step, report; oldest first), as the timeline shows them: the newest
/// events, `fold` leaving out deliveries that queued nothing; `why` highlights its chain and
/// `selected` the rows that touch that object.
pub fn sequence(
    reports: &[(u64, &StepReport)],
    fold: bool,
    why: Option<&WhyView>,
    selected: Option<&ObjectKey>,
) -> Sequence {
    let mut raw: Vec<Raw> = Vec::new();
    let mut folded = 0;
    for (step, r) in reports {
        for e in &r.events {
            let lane = if e.lane == "api-server" {
                API_SERVER.to_owned()
            } else {
                e.lane.clone()
            };
            let in_chain = why.is_some_and(|w| w.has_line(&e.line));
            let touches = |k: &ObjectKey| selected == Some(k);
            let mine = e.changes.iter().any(|c| touches(&c.key));
            let row = |kind, from: &str, to: &str, label: String, refused, selected| Raw {
                step: *step,
                time_ms: e.time.as_ms(),
                kind,
                from: from.to_owned(),
                to: to.to_owned(),
                label,
                refused,
                in_chain,
                selected,
            };
            if !e.requests.is_empty() {
                for req in &e.requests {
                    let target = if req.namespace.is_empty() {
                        req.name.to_string()
                    } else {
                        format!("{}/{}", req.namespace, req.name)
                    };
                    let sub = req
                        .subresource
                        .map_or(String::new(), |s| format!("/{}", s.as_str()));
                    let ask = format!("{} {}{sub} {target}", req.verb.as_str(), req.resource);
                    let mine = mine
                        || selected.is_some_and(|k| {
                            k.name == req.name
                                && k.namespace == req.namespace
                                && k.gr.resource == req.resource
                        });
                    if lane == API_SERVER {
                        raw.push(row(ArrowKind::Note, &lane, &lane, ask, false, mine));
                        continue;
                    }
                    let refused = req.code >= 400;
                    let answer = if refused && !req.message.is_empty() {
                        format!("{} {}", req.code, req.message)
                    } else {
                        req.code.to_string()
                    };
                    raw.push(row(ArrowKind::Request, &lane, API_SERVER, ask, false, mine));
                    raw.push(row(
                        ArrowKind::Response,
                        API_SERVER,
                        &lane,
                        answer,
                        refused,
                        mine,
                    ));
                }
                continue;
            }
            match &e.kind {
                EventKind::Watch {
                    event_type,
                    key,
                    enqueued,
                    ..
                } => {
                    if enqueued.is_empty() && fold {
                        folded += 1;
                        continue;
                    }
                    if enqueued.is_empty() {
                        folded += 1;
                    }
                    let queued = match enqueued.len() {
                        0 => " (queued nothing)".to_owned(),
                        1 => String::new(),
                        n => format!(" (queued {n} keys)"),
                    };
                    let name = match event_type {
                        WatchEventType::Added => "ADDED",
                        WatchEventType::Modified => "MODIFIED",
                        WatchEventType::Deleted => "DELETED",
                    };
                    let label = format!("watch {name} {}{queued}", key_text(key));
                    let mine = touches(key) || enqueued.iter().any(touches);
                    raw.push(row(
                        ArrowKind::Delivery,
                        API_SERVER,
                        &lane,
                        label,
                        false,
                        mine,
                    ));
                }
                EventKind::Reconcile { key, .. } => {
                    let label = format!("reconcile {} (no writes)", key_text(key));
                    raw.push(row(
                        ArrowKind::Note,
                        &lane,
                        &lane,
                        label,
                        false,
                        touches(key),
                    ));
                }
                EventKind::Input { description } | EventKind::Notice { description } => {
                    raw.push(row(
                        ArrowKind::Note,
                        &lane,
                        &lane,
                        description.clone(),
                        false,
                        false,
                    ));
                }
                EventKind::QueueWake | EventKind::EventsRecorded { .. } => {}
            }
        }
    }
    let older = raw.len().saturating_sub(MAX_ROWS);
    let raw = raw.split_off(older);
    let mut lanes: Vec<String> = Vec::new();
    for r in &raw {
        for l in [&r.from, &r.to] {
            if !lanes.contains(l) {
                lanes.push(l.clone());
            }
        }
    }
    if !lanes.iter().any(|l| l == API_SERVER) && !raw.is_empty() {
        lanes.push(API_SERVER.to_owned());
    }
    lanes.sort_by(|a, b| (lane_rank(a), a).cmp(&(lane_rank(b), b)));
    let index = |l: &str| lanes.iter().position(|x| x == l).unwrap_or(0);
    let rows = raw
        .into_iter()
        .map(|r| {
            let (from, to) = (index(&r.from), index(&r.to));
            let span = from.abs_diff(to).max(1);
            SeqRow {
                step: r.step,
                time_ms: r.time_ms,
                kind: r.kind,
                from,
                to,
                short: fit(&r.label, span),
                label: r.label,
                refused: r.refused,
                in_chain: r.in_chain,
                selected: r.selected,
            }
        })
        .collect();
    Sequence {
        lanes,
        rows,
        folded,
        folding: fold,
        older,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;
    use crate::view::why::tests::{scaled, web};
    use crate::view::why::why_view;

    #[test]
    fn lanes_run_from_the_user_through_the_api_server_to_the_kubelets() {
        let (_, reports) = scaled();
        let refs: Vec<(u64, &StepReport)> = reports.iter().map(|(s, r)| (*s, r)).collect();
        // The scale: alice's request and its answer.
        let s = sequence(&refs[refs.len() - 2..refs.len() - 1], true, None, None);
        assert_eq!(
            s.lanes,
            vec!["user:alice".to_owned(), API_SERVER.to_owned()]
        );
        assert_eq!(s.rows[0].kind, ArrowKind::Request);
        assert_eq!((s.rows[0].from, s.rows[0].to), (0, 1));
        assert_eq!(s.rows[0].label, "update deployments default/web");
        assert_eq!(s.rows[1].kind, ArrowKind::Response);
        assert_eq!(s.rows[1].label, "200");
        assert_eq!(
            s.row_text(0),
            format!(
                "step {}, {}, request: user:alice → API server: update deployments default/web",
                s.rows[0].step,
                SimTime::from_ms(s.rows[0].time_ms)
            )
        );
        // The run after it: controllers, then the scheduler, then kubelets, after the API server.
        let all = sequence(&refs, true, None, None);
        // (The newest 60 rows hold no request of alice's: the API server's lane comes first.)
        assert_eq!(all.lanes[0], API_SERVER);
        assert!(all.lanes.iter().any(|l| l.starts_with("kubelet/")));
        let rank: Vec<u8> = all.lanes.iter().map(|l| lane_rank(l)).collect();
        assert!(rank.windows(2).all(|w| w[0] <= w[1]), "{:?}", all.lanes);
        assert!(all.rows.len() <= MAX_ROWS);
        assert!(all.older > 0);
    }

    #[test]
    fn deliveries_that_queued_nothing_fold_with_a_count() {
        let (_, reports) = scaled();
        let refs: Vec<(u64, &StepReport)> = reports.iter().map(|(s, r)| (*s, r)).collect();
        let folded = sequence(&refs, true, None, None);
        let open = sequence(&refs, false, None, None);
        assert!(folded.folded > 0);
        assert_eq!(folded.folded, open.folded);
        assert!(folded
            .rows
            .iter()
            .all(|r| !r.label.ends_with("(queued nothing)")));
        assert!(open
            .rows
            .iter()
            .any(|r| r.kind == ArrowKind::Delivery && r.label.ends_with("(queued nothing)")));
    }

    #[test]
    fn the_why_chain_and_the_selected_object_are_highlighted() {
        let (world, reports) = scaled();
        let why = why_view(&world, &web(), "status.readyReplicas", None).unwrap();
        let refs: Vec<(u64, &StepReport)> = reports.iter().map(|(s, r)| (*s, r)).collect();
        let s = sequence(&refs[refs.len() - 2..], true, Some(&why), Some(&web()));
        let chain: Vec<&SeqRow> = s.rows.iter().filter(|r| r.in_chain).collect();
        assert!(!chain.is_empty());
        assert!(s.rows.iter().any(|r| !r.in_chain));
        // The last write of the chain, the deployment controller's status update, is drawn.
        assert!(chain
            .iter()
            .any(|r| r.label == "update deployments/status default/web"));
        assert!(s.rows.iter().any(|r| r.selected));
        // The markup marks the chain and escapes what it draws.
        let svg = s.svg();
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>"));
        assert!(svg.contains(r#"<g class="req chain"#) || svg.contains(r#"<g class="resp chain"#));
        // A label too long for its lanes is cut.
        assert_eq!(fit("abcdef", 1), "abcdef");
        assert!(fit(&"x".repeat(100), 1).ends_with('…'));
    }
}
