//! The playground's "Why?": a [`crate::why::Chain`] as rows to draw, each hop with the step to
//! scrub to and the object to select, and the trace lines of the chain, which the sequence view
//! highlights.

use crate::api::meta::Fields;
use std::sync::Arc;

use crate::json::Value;

use crate::api::ObjectKey;
use crate::engine::provenance::{Cause, Root};
use crate::engine::world::key_text;
use crate::engine::World;
use crate::scenario::path::FieldPath;
use crate::why::{root_text, Chain, Hop};

/// What a row of the chain is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HopKind {
    Write,
    Reconcile,
    Repeat,
    Root,
    /// A note: a tree badge's verdict, or the heading of a decision's input chain.
    Note,
}

/// One row of a chain: its text, and where following it goes.
#[derive(Clone, Debug, PartialEq)]
pub struct WhyRow {
    pub kind: HopKind,
    pub text: String,
    /// The world step whose snapshot first shows the hop (None: nothing to scrub to).
    pub step: Option<u64>,
    /// The object the hop wrote or reconciled.
    pub object: Option<ObjectKey>,
    /// 0 for the main chain, 1 for a decision's input chain.
    pub depth: u8,
    /// A refused write (code >= 400).
    pub refused: bool,
}

/// A chain, ready to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct WhyView {
    /// `deployments default/web status.readyReplicas = 5 at t=30.000s`.
    pub title: String,
    pub rows: Vec<WhyRow>,
    /// The trace lines of the chain's events (the requests, reconciles and watch deliveries it
    /// passes through), shared with the world's trace: the sequence view's highlight.
    pub lines: Vec<Arc<str>>,
}

impl WhyView {
    /// Whether `line` (an event's trace line) is part of the chain.
    pub fn has_line(&self, line: &Arc<str>) -> bool {
        self.lines
            .iter()
            .any(|l| Arc::ptr_eq(l, line) || **l == **line)
    }
}

/// The field path of a status field the status panel lists by its JSON pointer under `status`
/// (`/readyReplicas` is `status.readyReplicas`; with a list index, the pointer
/// `/status/containerStatuses/0/ready`). An EndpointSlice's endpoints stand in for its status,
/// so their pointers are already from the object's root.
pub fn status_field_path(pointer: &str, endpoints: bool) -> String {
    let parts: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    let plain = parts.iter().all(|p| {
        !p.is_empty()
            && p.parse::<usize>().is_err()
            && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    match (plain, endpoints) {
        (true, true) => parts.join("."),
        (true, false) => format!("status.{}", parts.join(".")),
        (false, true) => pointer.to_owned(),
        (false, false) => format!("/status{pointer}"),
    }
}

/// The field path of a condition row's status: `status.conditions[type=Available].status`.
pub fn condition_field_path(type_: &str) -> String {
    format!("status.conditions[type={type_}].status")
}

/// The field a tree badge's Why? asks about. The badge is kstatus' verdict over the object as
/// last written, so: its `status` (the write that last changed it), or for an object without
/// status its `metadata.resourceVersion` (its last write).
pub fn badge_field_path(obj: &Value) -> &'static str {
    if obj.field("status").is_some_and(|s| !s.is_null()) {
        "status"
    } else {
        "metadata.resourceVersion"
    }
}

/// kstatus' verdict over `obj` with its rule, the first row of a badge's chain.
pub fn badge_note(obj: &Value, now_unix_ms: i64) -> Option<String> {
    crate::kstatus::compute_explained(obj, now_unix_ms)
        .ok()
        .map(|(_, e)| e.to_string())
}

/// Why `field` of `key` has its value in `world` now, as rows; the error as one line. A `note`
/// (a tree badge's verdict) comes first.
pub fn why_view(
    world: &World,
    key: &ObjectKey,
    field: &str,
    note: Option<String>,
) -> Result<WhyView, String> {
    let path = FieldPath::parse(field)?;
    let chain = world.why(key, &path, None).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    if let Some(text) = note {
        rows.push(WhyRow {
            kind: HopKind::Note,
            text,
            step: None,
            object: None,
            depth: 0,
            refused: false,
        });
    }
    let mut lines = Vec::new();
    push_chain(world, &chain, 0, &mut rows, &mut lines);
    for input in &chain.inputs {
        rows.push(WhyRow {
            kind: HopKind::Note,
            text: format!(
                "decided from {} = {}, as read then:",
                input.field, input.value
            ),
            step: None,
            object: None,
            depth: 1,
            refused: false,
        });
        push_chain(world, input, 1, &mut rows, &mut lines);
    }
    Ok(WhyView {
        title: format!(
            "{} {} = {} at {}",
            key_text(key),
            chain.field,
            chain.value,
            chain.at
        ),
        rows,
        lines,
    })
}

fn push_chain(
    world: &World,
    chain: &Chain,
    depth: u8,
    rows: &mut Vec<WhyRow>,
    lines: &mut Vec<Arc<str>>,
) {
    let trace = world.trace();
    let mut line_of = |n: u64| {
        if let Some(l) = trace.get(n as usize) {
            lines.push(l.clone());
        }
    };
    let mut last_write: Option<(u64, ObjectKey)> = None;
    for hop in &chain.hops {
        let (kind, step, object, refused) = match hop {
            Hop::Write { write, .. } => {
                line_of(write.line);
                last_write = Some((write.step, write.key.clone()));
                (
                    HopKind::Write,
                    Some(write.step),
                    Some(write.key.clone()),
                    write.code >= 400,
                )
            }
            Hop::Reconcile {
                line,
                step,
                key,
                via,
                causes,
                ..
            } => {
                line_of(*line);
                if let Some(c @ Cause::Watch { .. }) = causes.get(*via) {
                    line_of(c.line());
                }
                (HopKind::Reconcile, Some(*step), Some(key.clone()), false)
            }
            Hop::Repeat { .. } => (HopKind::Repeat, None, None, false),
        };
        rows.push(WhyRow {
            kind,
            text: hop.text(),
            step,
            object,
            depth,
            refused,
        });
    }
    // A user's request or a fault is the event of the last write (the request's own change):
    // following the root goes there.
    let (step, object) = match (&chain.root, last_write) {
        (Root::Request { .. } | Root::Fault { .. }, Some((s, k))) => (Some(s), Some(k)),
        _ => (None, None),
    };
    rows.push(WhyRow {
        kind: HopKind::Root,
        text: root_text(&chain.root),
        step,
        object,
        depth,
        refused: false,
    });
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::api::{ApiRequest, GroupResource};
    use crate::engine::Input;
    use crate::view::session::{perform, replay, SessionAction, Starter};

    /// The small starter, converged, then alice scales web from 3 to 5 and it converges again.
    pub(crate) fn scaled() -> (World, Vec<(u64, crate::engine::StepReport)>) {
        let mut reports = Vec::new();
        let mut world = replay(Starter::Small, 1, &Starter::Small.actions(), |w, r| {
            reports.push((w.steps(), r))
        });
        let key = web();
        let mut obj = world.object(&key).cloned().unwrap_or_default();
        obj["spec"]["replicas"] = 5.into();
        let request = ApiRequest::update("alice", key.gr.clone(), "default", "web", obj);
        let r = perform(
            &mut world,
            &SessionAction::apply(Input::Request { request }),
        );
        reports.push((world.steps(), r));
        let r = perform(&mut world, &SessionAction::RunUntilConverged);
        reports.push((world.steps(), r));
        (world, reports)
    }

    pub(crate) fn web() -> ObjectKey {
        ObjectKey::new(GroupResource::new("apps", "deployments"), "default", "web")
    }

    #[test]
    fn status_fields_and_conditions_name_their_field_paths() {
        assert_eq!(
            status_field_path("/readyReplicas", false),
            "status.readyReplicas"
        );
        assert_eq!(
            status_field_path("/containerStatuses/0/ready", false),
            "/status/containerStatuses/0/ready"
        );
        assert_eq!(
            status_field_path("/endpoints/0/conditions/ready", true),
            "/endpoints/0/conditions/ready"
        );
        assert_eq!(
            condition_field_path("Available"),
            "status.conditions[type=Available].status"
        );
        assert_eq!(
            badge_field_path(&crate::json::json!({"spec": {}})),
            "metadata.resourceVersion"
        );
    }

    #[test]
    fn ready_replicas_after_a_scale_reaches_alices_request_through_steps_to_scrub_to() {
        let (world, _) = scaled();
        let v = why_view(&world, &web(), "status.readyReplicas", None).unwrap();
        assert!(
            v.title
                .ends_with(&format!("status.readyReplicas = 5 at {}", world.now())),
            "{}",
            v.title
        );
        let first = &v.rows[0];
        assert_eq!(first.kind, HopKind::Write);
        assert_eq!(first.object.as_ref(), Some(&web()));
        assert!(
            first
                .text
                .contains("update deployments/status default/web 200"),
            "{}",
            first.text
        );
        let root = v.rows.iter().rfind(|r| r.depth == 0).unwrap();
        assert_eq!(root.kind, HopKind::Root);
        assert!(
            root.text.contains("root: request by alice"),
            "{}",
            root.text
        );
        // The root leads to alice's change of web.
        assert_eq!(root.object.as_ref(), Some(&web()));
        // Every hop has a step within the world, and they go back in time.
        let steps: Vec<u64> = v
            .rows
            .iter()
            .filter(|r| r.depth == 0)
            .filter_map(|r| r.step)
            .collect();
        assert!(steps.iter().all(|s| *s <= world.steps()));
        assert!(steps.windows(2).all(|w| w[0] >= w[1]), "{steps:?}");
        // The chain passes through a pod, the scheduler and a kubelet.
        assert!(v
            .rows
            .iter()
            .any(|r| r.object.as_ref().is_some_and(|k| k.gr.resource == "pods")));
        assert!(v
            .rows
            .iter()
            .any(|r| r.text.contains("scheduler reconcile")));
        assert!(v.rows.iter().any(|r| r.text.contains("kubelet/")));
        // Its trace lines are the world's own.
        assert!(!v.lines.is_empty());
        assert!(v
            .lines
            .iter()
            .all(|l| world.trace().iter().any(|t| Arc::ptr_eq(t, l))));
    }

    #[test]
    fn a_field_the_object_lacks_is_an_error_line() {
        let (world, _) = scaled();
        let e = why_view(&world, &web(), "status.nothing", None).unwrap_err();
        assert!(e.contains("status.nothing is not set"), "{e}");
        assert!(why_view(&world, &web(), "status..x", None).is_err());
    }

    #[test]
    fn a_badge_chain_leads_with_the_verdict() {
        let (world, _) = scaled();
        let obj = world.object(&web()).cloned().unwrap_or_default();
        let note = badge_note(&obj, world.now().unix_ms());
        assert!(
            note.as_deref()
                .is_some_and(|n| n.starts_with("kstatus=Current")),
            "{note:?}"
        );
        let v = why_view(&world, &web(), badge_field_path(&obj), note).unwrap();
        assert_eq!(v.rows[0].kind, HopKind::Note);
        assert_eq!(v.rows[1].kind, HopKind::Write);
    }
}
