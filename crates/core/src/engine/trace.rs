//! Trace text: the one-line-per-event trace format (see the module docs of [`crate::engine`])
//! and the key and duration spellings it uses. Snapshots and docs rely on these bytes.

use std::sync::Arc;

use super::report::{EventKind, EventRecord, ReconcileOutcome, RequestRecord, StepReport};
use super::world::World;
use crate::api::{ObjectKey, WatchEvent, WatchEventType};

impl World {
    pub fn trace_text(&self) -> String {
        let mut s = String::new();
        for l in &self.trace {
            s.push_str(l);
            s.push('\n');
        }
        s
    }

    /// Records an input with no requests (a fault or a change to the environment) on `lane`.
    pub(super) fn record_input(
        &mut self,
        report: &mut StepReport,
        seq: u64,
        lane: &str,
        description: String,
    ) {
        let rec = EventRecord {
            time: self.now,
            seq,
            lane: lane.into(),
            line: format!("{lane} {description}").into(),
            kind: EventKind::Input { description },
            requests: Vec::new(),
            changes: Vec::new(),
        };
        self.record(report, rec);
    }

    pub(super) fn record(&mut self, report: &mut StepReport, mut rec: EventRecord) {
        let mut line = String::with_capacity(rec.line.len() + 12);
        rec.time.push_to(&mut line);
        line.push(' ');
        line.push_str(&rec.line);
        rec.line = line.into();
        match &mut self.unkept_lines {
            Some(n) => *n += 1,
            None => self.trace.push_back(Arc::clone(&rec.line)),
        }
        report.events.push(rec);
        report.processed += 1;
        if let Some(n) = self.report_events {
            if report.events.len() > n + 1 {
                report.events.remove(1);
            }
        }
    }
}

/// `<controller> watch <TYPE> <key> rv=<rv>`, then ` (stale, ignored)` or ` -> queue <keys>`.
pub(super) fn watch_line(
    controller: &str,
    event: &WatchEvent,
    applied: bool,
    keys: &[ObjectKey],
) -> String {
    let ev_name = match event.event_type {
        WatchEventType::Added => "ADDED",
        WatchEventType::Modified => "MODIFIED",
        WatchEventType::Deleted => "DELETED",
    };
    let mut line = String::with_capacity(96);
    for part in [controller, " watch ", ev_name, " "] {
        line.push_str(part);
    }
    push_key_text(&mut line, &event.key);
    line.push_str(" rv=");
    crate::time::push_u64(&mut line, event.resource_version);
    if !applied {
        line.push_str(" (stale, ignored)");
    } else if !keys.is_empty() {
        line.push_str(" -> queue ");
        for (i, k) in keys.iter().enumerate() {
            if i > 0 {
                line.push_str(", ");
            }
            push_short_key(&mut line, k);
        }
    }
    line
}

/// `<controller> reconcile <key> -> <requests or "no writes">[; requeue after ..|; error: ..]`.
pub(super) fn reconcile_line(
    controller: &str,
    key: &ObjectKey,
    requests: &[RequestRecord],
    outcome: &ReconcileOutcome,
) -> String {
    let mut line = String::with_capacity(96);
    line.push_str(controller);
    line.push_str(" reconcile ");
    push_short_key(&mut line, key);
    if requests.is_empty() {
        line.push_str(" -> no writes");
    } else {
        line.push_str(" -> ");
        for (i, r) in requests.iter().enumerate() {
            if i > 0 {
                line.push_str(", ");
            }
            r.push_summary(&mut line);
        }
    }
    match outcome {
        ReconcileOutcome::AwaitChange => {}
        ReconcileOutcome::RequeueAfter { ms } => {
            line.push_str(&format!("; requeue after {}", ms_text(*ms)))
        }
        ReconcileOutcome::Error { message, retry_ms } => {
            line.push_str(&format!("; error: {message}"));
            match retry_ms {
                Some(ms) => line.push_str(&format!("; retry after {}", ms_text(*ms))),
                None => line.push_str("; dropped after too many retries"),
            }
        }
    }
    line
}

/// `<lane> request -> <request summaries>`.
pub(super) fn request_line(lane: &str, requests: &[RequestRecord]) -> String {
    format!(
        "{lane} request -> {}",
        requests
            .iter()
            .map(|r| r.summary())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `<controller> events <reason> -> <writes>; <reason> -> ...`: each report with the writes it
/// caused, `dropped` when the spam filter let it through to nobody, `counted` when a series
/// keeps it in memory.
pub(super) fn events_line(
    controller: &str,
    reports: &[(String, Vec<RequestRecord>, bool)],
) -> String {
    let parts: Vec<String> = reports
        .iter()
        .map(|(reason, requests, dropped)| {
            let writes = if requests.is_empty() {
                if *dropped {
                    "dropped".to_owned()
                } else {
                    "counted".to_owned()
                }
            } else {
                requests
                    .iter()
                    .map(|r| r.summary())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            format!("{reason} -> {writes}")
        })
        .collect();
    format!("{controller} events {}", parts.join("; "))
}

/// `engine feedback-loop <key> generation <n> climbing with no user write, written by <who>`.
pub(super) fn feedback_loop_line(key: &ObjectKey, generation: i64, writers: &[String]) -> String {
    format!(
        "engine feedback-loop {} generation {generation} climbing with no user write, written by {}",
        key_text(key),
        writers.join(", ")
    )
}

/// `deployments default/web`, `nodes node-1`.
pub fn key_text(k: &ObjectKey) -> String {
    let mut out = String::new();
    push_key_text(&mut out, k);
    out
}

/// Appends [`key_text`]'s form (without `format!`: the trace writes one per watch event).
fn push_key_text(out: &mut String, k: &ObjectKey) {
    out.push_str(&k.gr.resource);
    out.push(' ');
    push_short_key(out, k);
}

/// `default/web`, `node-1`.
pub fn short_key(k: &ObjectKey) -> String {
    let mut out = String::new();
    push_short_key(&mut out, k);
    out
}

/// Appends [`short_key`]'s form.
fn push_short_key(out: &mut String, k: &ObjectKey) {
    if !k.namespace.is_empty() {
        out.push_str(&k.namespace);
        out.push('/');
    }
    out.push_str(&k.name);
}

/// `5ms`, `1.250s`.
pub fn ms_text(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{}.{:03}s", ms / 1000, ms % 1000)
    }
}
