//! What one step did, for the UI to animate and diff, and the one-line-per-event trace.

use crate::json::Value;
use serde::{Deserialize, Serialize};

use std::sync::Arc;

use crate::api::{
    ApiRequest, AuditEntry, Name, ObjectKey, Subresource, Verb, WatchEvent, WatchEventType,
};
use crate::time::SimTime;

/// What the engine did with a reconcile's result; the runtime's error policy decides it.
pub use crate::runtime::ReconcileOutcome;

/// One API request and the server's answer. Names inline up to 24 bytes: every request has one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    pub principal: Name,
    pub verb: Verb,
    pub resource: Name,
    pub group: Name,
    pub subresource: Option<Subresource>,
    pub namespace: Name,
    pub name: Name,
    pub code: u16,
    /// Empty on success; kube's message on refusal.
    pub message: String,
}

impl RequestRecord {
    pub fn new(req: &ApiRequest, name: &str, code: u16, message: String) -> Self {
        RequestRecord {
            principal: req.principal.as_str().into(),
            verb: req.verb,
            resource: req.gr.resource.clone(),
            group: req.gr.group.clone(),
            subresource: req.subresource,
            namespace: req.namespace.as_str().into(),
            name: name.into(),
            code,
            message,
        }
    }

    pub fn from_audit(e: &AuditEntry) -> Self {
        RequestRecord {
            principal: e.principal.clone(),
            verb: e.verb,
            resource: e.gr.resource.clone(),
            group: e.gr.group.clone(),
            subresource: e.subresource,
            namespace: e.namespace.clone(),
            name: e.name.clone(),
            code: e.code,
            message: e.message.clone(),
        }
    }

    /// `create replicasets default/web-7d9f8 201`, `update deployments/status default/web 409`.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        self.push_summary(&mut out);
        out
    }

    /// Appends [`Self::summary`] (without `format!`: every reconcile line has one per request).
    pub fn push_summary(&self, out: &mut String) {
        out.push_str(self.verb.as_str());
        out.push(' ');
        out.push_str(&self.resource);
        if let Some(s) = self.subresource {
            out.push('/');
            out.push_str(s.as_str());
        }
        out.push(' ');
        if !self.namespace.is_empty() {
            out.push_str(&self.namespace);
            out.push('/');
        }
        out.push_str(&self.name);
        out.push(' ');
        crate::time::push_u64(out, u64::from(self.code));
    }
}

/// One changed field: a JSON pointer with the values before and after (absent = None).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldChange {
    pub path: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

/// How one object changed in a step: the two versions, shared with the store (no copy), and
/// the field-level differences computed when first read ([`ObjectChange::fields`]) and kept:
/// a headless run never reads them, and the playground only for the entries it shows.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectChange {
    pub key: ObjectKey,
    pub event_type: WatchEventType,
    /// Who wrote it.
    pub principal: String,
    pub resource_version: u64,
    /// The version before the write (absent for a create).
    pub before: Option<Arc<Value>>,
    /// The version after the write (absent for a delete).
    pub after: Option<Arc<Value>>,
    /// [`Self::fields`], once read.
    pub(crate) diff: std::sync::OnceLock<Vec<FieldChange>>,
}

impl ObjectChange {
    /// The changed fields, as [`diff`] computes them (once; the timeline reads them on every
    /// render).
    pub fn fields(&self) -> &[FieldChange] {
        self.diff
            .get_or_init(|| diff(self.before.as_deref(), self.after.as_deref()))
    }
}

/// What kind of event a step processed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum EventKind {
    /// A watch event reached a controller's informer.
    Watch {
        event_type: WatchEventType,
        key: ObjectKey,
        resource_version: u64,
        /// Keys the event handlers queued.
        enqueued: Vec<ObjectKey>,
        /// The cache already held a newer version.
        stale: bool,
    },
    /// A controller reconciled one key.
    Reconcile {
        key: ObjectKey,
        outcome: ReconcileOutcome,
    },
    /// A delayed work-queue item became ready.
    QueueWake,
    /// A user request, fault or other input.
    Input { description: String },
    /// A controller's event broadcaster wrote what the reconcile reported: the reasons, in
    /// report order (requests holds the writes; a report the spam filter dropped or a series
    /// counted in memory has none).
    EventsRecorded { reasons: Vec<String> },
    /// The engine noticed something (a feedback loop).
    Notice { description: String },
}

/// One processed event.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRecord {
    pub time: SimTime,
    pub seq: u64,
    /// Timeline lane: `user:alice`, `deployment-controller`, `kubelet/node-1`, `engine`.
    pub lane: String,
    pub kind: EventKind,
    pub requests: Vec<RequestRecord>,
    pub changes: Vec<ObjectChange>,
    /// The trace line for this event (shared with the world's trace).
    pub line: Arc<str>,
}

/// A spec that keeps changing with no user asking: generation climbing without end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedbackLoop {
    pub key: ObjectKey,
    pub generation: i64,
    pub writers: Vec<String>,
}

/// Why a multi-event step stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StopReason {
    /// Nothing queued and every object Current or Failed.
    Converged,
    /// The event or time bound was reached first.
    Bound,
    /// Nothing is scheduled at all (e.g. a crashed controller leaves work undone).
    Idle,
    /// A feedback loop was detected.
    FeedbackLoop,
    /// The requested duration or event count was processed.
    Done,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepReport {
    pub from: SimTime,
    pub to: SimTime,
    pub events: Vec<EventRecord>,
    /// How many events the step processed: `events.len()`, unless the world keeps its reports
    /// short ([`crate::engine::World::keep_reports_short`]). What replay budgets count.
    pub processed: u64,
    pub feedback_loops: Vec<FeedbackLoop>,
    pub stop: Option<StopReason>,
    /// Every watch event the step's writes caused, in resourceVersion order, with the object
    /// as stored (shared): what a watch on the API server would have seen (`converge serve`).
    pub watch: Vec<(WatchEvent, Arc<Value>)>,
}

impl StepReport {
    pub fn lines(&self) -> impl Iterator<Item = &str> {
        self.events.iter().map(|e| &*e.line)
    }

    pub fn requests(&self) -> impl Iterator<Item = &RequestRecord> {
        self.events.iter().flat_map(|e| e.requests.iter())
    }

    /// Drops what a viewer that shows only the newest `n` events can never show: the events
    /// between the first (an Apply's answer is read from it) and the newest `n`, and the watch
    /// events (only `converge serve` reads them, and it takes them before this).
    pub fn keep_newest(&mut self, n: usize) {
        if self.events.len() > n + 1 {
            let end = self.events.len() - n;
            self.events.drain(1..end);
        }
        self.watch = Vec::new();
    }

    pub fn extend(&mut self, other: StepReport) {
        self.to = other.to;
        self.events.extend(other.events);
        self.processed += other.processed;
        self.feedback_loops.extend(other.feedback_loops);
        self.watch.extend(other.watch);
        if other.stop.is_some() {
            self.stop = other.stop;
        }
    }
}

/// Field-level differences between two versions of an object (JSON pointers), skipping
/// `metadata.managedFields`. Arrays are compared element by element.
pub fn diff(before: Option<&Value>, after: Option<&Value>) -> Vec<FieldChange> {
    let mut out = Vec::new();
    walk("", before, after, &mut out);
    out
}

fn walk(path: &str, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<FieldChange>) {
    if a == b || path == "/metadata/managedFields" {
        return;
    }
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let mut keys: Vec<&crate::json::Key> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let (p, q) = (x.get(k.as_str()), y.get(k.as_str()));
                // Equal members add nothing: skip them before building their path.
                if p == q {
                    continue;
                }
                let path = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
                walk(&path, p, q, out);
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                if p != q {
                    walk(&format!("{path}/{i}"), Some(p), Some(q), out);
                }
            }
        }
        _ => out.push(FieldChange {
            path: path.to_owned(),
            before: a.cloned(),
            after: b.cloned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json;

    fn event(seq: u64) -> EventRecord {
        EventRecord {
            time: SimTime::ZERO,
            seq,
            lane: "engine".into(),
            kind: EventKind::QueueWake,
            requests: Vec::new(),
            changes: Vec::new(),
            line: format!("event {seq}").into(),
        }
    }

    #[test]
    fn keep_newest_keeps_the_first_event_and_the_newest_n() {
        let mut r = StepReport {
            events: (0..10).map(event).collect(),
            ..StepReport::default()
        };
        r.keep_newest(3);
        let seqs: Vec<u64> = r.events.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, vec![0, 7, 8, 9]);
        let mut short = StepReport {
            events: (0..4).map(event).collect(),
            ..StepReport::default()
        };
        short.keep_newest(3);
        assert_eq!(short.events.len(), 4, "first + 3 newest is everything");
    }

    #[test]
    fn diff_reports_changed_leaves_as_json_pointers() {
        let a = json!({"spec": {"replicas": 3}, "status": {"conditions": [{"type": "A", "status": "False"}]}});
        let b = json!({"spec": {"replicas": 5}, "status": {"conditions": [{"type": "A", "status": "True"}]}, "x": 1});
        let d = diff(Some(&a), Some(&b));
        let paths: Vec<&str> = d.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            vec!["/spec/replicas", "/status/conditions/0/status", "/x"]
        );
    }
}
