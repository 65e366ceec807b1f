//! Delivery bookkeeping: the client every request goes through (injected failures applied,
//! requests and the watch events they caused recorded), the change records those events make,
//! their fan-out to every informer after its watch latency, and a delivery's arrival at an
//! informer and its event handlers.

#![allow(
    clippy::result_large_err,
    reason = "ApiResult, the API contract type, carries kube's full error by value"
)]

use std::sync::Arc;

use crate::json::path;
use crate::json::Value;

use super::faults::{injected_error, FailureRule};
use super::provenance::{Cause, Origin, Root, WriteRec};
use super::report::{EventKind, EventRecord, ObjectChange, RequestRecord, StepReport};
use super::trace;
use super::world::{Event, RunState, World};
use super::ApiServer;
use crate::api::meta;
use crate::api::DrainedEvent;
use crate::api::{ApiRequest, ApiResult, GroupResource, ObjectKey, WatchEvent, WatchEventType};
use crate::runtime::{Client, EventWrite, Reconciler};
use crate::time::SimTime;

/// The client handed to reconcilers and users: applies injected failures, sends to the API
/// server, records the request and the watch events it caused.
pub(super) struct Recorder<'a> {
    pub(super) api: &'a mut ApiServer,
    pub(super) failures: &'a mut Vec<FailureRule>,
    pub(super) now: SimTime,
    pub(super) requests: Vec<RequestRecord>,
    /// (principal, (event with a `Null` object, the object as stored, the version it replaced))
    pub(super) events: Vec<(String, DrainedEvent)>,
    /// For each of `events`, the index in `requests` of the request that caused it.
    pub(super) origins: Vec<usize>,
    /// For each of `requests`, how many explanations its reconcile had recorded before it.
    pub(super) marks: Vec<usize>,
    /// The latest count [`Client::explained`] was told.
    pub(super) explained: usize,
}

impl Client for Recorder<'_> {
    fn send(&mut self, mut req: ApiRequest) -> ApiResult {
        let name = if req.name.is_empty() {
            match &req.body {
                crate::api::RequestBody::Object(v) => meta::name(v).to_owned(),
                _ => String::new(),
            }
        } else {
            req.name.clone()
        };
        let injected = self
            .failures
            .iter_mut()
            .find(|r| r.remaining > 0 && r.principal.as_ref().is_none_or(|p| *p == req.principal));
        let audit_before = self.api.audit_len();
        let result = if let Some(rule) = injected {
            rule.remaining -= 1;
            let code = rule.code;
            Err(injected_error(code, &req, &name))
        } else {
            // The body moves to the server; the record below needs only the request's header.
            let body = std::mem::replace(&mut req.body, crate::api::RequestBody::None);
            let header = req.clone();
            req.body = body;
            let result = self.api.handle(self.now, req);
            req = header;
            result
        };
        // Requests the server made itself (garbage collection of dependents) are audited too.
        let server_side: Vec<RequestRecord> = if self.api.audit_len() > audit_before + 1 {
            self.api
                .audit_since(audit_before + 1)
                .map(RequestRecord::from_audit)
                .collect()
        } else {
            Vec::new()
        };
        self.failures.retain(|r| r.remaining > 0);
        let (code, message) = crate::api::response_status(req.verb, &result);
        // A create by generateName: the name the server chose.
        let name = match (&result, name.is_empty()) {
            (Ok(created), true) => meta::name(created).to_owned(),
            _ => name,
        };
        let index = self.requests.len();
        self.requests
            .push(RequestRecord::new(&req, &name, code, message));
        self.requests.extend(server_side);
        self.marks.resize(self.requests.len(), self.explained);
        for drained in self.api.drain_shared_watch_events() {
            self.events.push((req.principal.clone(), drained));
            self.origins.push(index);
        }
        result
    }

    fn explained(&mut self, count: usize) {
        self.explained = count;
    }
}

impl World {
    /// Hands a reconcile's event reports to the controller's broadcaster and sends the writes
    /// it answers, as the controller's principal. Injected API failures are for the
    /// controller's own requests; the broadcaster's go through (kube's is a separate client
    /// whose failures never reach the controller). A PATCH of an event that is gone becomes a
    /// create (`recordEvent`); any other refusal drops the event, as kube never retries a
    /// server's rejection.
    pub(super) fn write_events(
        &mut self,
        controller: &str,
        notes: &[crate::runtime::EventNote],
        report: &mut StepReport,
        origin: &Origin,
    ) {
        if notes.is_empty() {
            return;
        }
        let Some(mut broadcaster) = self
            .slots
            .get_mut(controller)
            .and_then(|s| s.broadcaster.take())
        else {
            return;
        };
        let seq = self.seq;
        let mut no_failures = Vec::new();
        let mut rec = Recorder {
            api: &mut self.api,
            failures: &mut no_failures,
            now: self.now,
            requests: Vec::new(),
            events: Vec::new(),
            origins: Vec::new(),
            marks: Vec::new(),
            explained: 0,
        };
        let mut reports = Vec::new();
        for note in notes {
            let writes = broadcaster.write(self.now, note);
            let before = rec.requests.len();
            let dropped = writes.is_empty() && broadcaster.drops_when_silent();
            for w in writes {
                // The bodies move to the server: the stored Event is the request's own body,
                // not a copy of it.
                let EventWrite {
                    request,
                    create_if_missing,
                    key,
                } = w;
                let mut answer = rec.send(request);
                if let (Err(e), Some(create)) = (&answer, create_if_missing) {
                    if e.reason == crate::api::StatusReason::NotFound {
                        answer = rec.send(create);
                    }
                }
                if let Ok(stored) = answer {
                    broadcaster.written(&key, &stored);
                }
            }
            reports.push((
                note.reason.clone(),
                rec.requests[before..].to_vec(),
                dropped,
            ));
        }
        let (requests, events, origins) = (rec.requests, rec.events, rec.origins);
        let marks = vec![0; requests.len()];
        if let Some(slot) = self.slots.get_mut(controller) {
            slot.broadcaster = Some(broadcaster);
        }
        let changes = self.absorb(events, report, false);
        let line = trace::events_line(controller, &reports);
        let rec = EventRecord {
            time: self.now,
            seq,
            lane: controller.to_owned(),
            kind: EventKind::EventsRecorded {
                reasons: notes.iter().map(|n| n.reason.clone()).collect(),
            },
            requests,
            changes,
            line: line.into(),
        };
        self.note_writes(&rec, &origins, &marks, origin);
        self.record(report, rec);
    }

    /// Records the provenance of an event's changes (before its line is traced: the changes
    /// are absorbed, so its line is the next one): each change with the request in `origins`
    /// that made it, what sent that request, and (`marks`, per request) how many explanations
    /// its reconcile had recorded before it. Returns their resource versions.
    pub(super) fn note_writes(
        &mut self,
        rec: &EventRecord,
        origins: &[usize],
        marks: &[usize],
        origin: &Origin,
    ) -> Vec<u64> {
        let line = self.trace_len();
        let step = self.steps + 1;
        let mut rvs = Vec::with_capacity(rec.changes.len());
        for (i, change) in rec.changes.iter().enumerate() {
            let Some(&index) = origins.get(i) else {
                continue;
            };
            let Some(request) = rec.requests.get(index) else {
                continue;
            };
            rvs.push(change.resource_version);
            self.provenance.add_write(WriteRec {
                resource_version: change.resource_version,
                key: change.key.clone(),
                event_type: change.event_type,
                principal: change.principal.clone(),
                verb: request.verb,
                subresource: request.subresource,
                named: (request.resource != change.key.gr.resource.as_str()
                    || request.namespace != change.key.namespace.as_str()
                    || request.name != change.key.name.as_str())
                .then(|| {
                    ObjectKey::new(
                        GroupResource::new(&request.group, &request.resource),
                        &request.namespace,
                        &request.name,
                    )
                }),
                code: request.code,
                time: rec.time,
                step,
                line,
                origin: origin.clone(),
                explained: marks.get(index).copied().unwrap_or(0),
                before: change.before.clone(),
                after: change.after.clone(),
            });
        }
        rvs
    }

    /// Records the provenance of the API server's own deletes of expired Events: no request
    /// sent them, their root is the TTL.
    pub(super) fn note_ttl_deletes(&mut self, rec: &EventRecord) {
        let line = self.trace_len();
        let root = Root::EventTtl {
            line,
            time: rec.time,
        };
        for change in &rec.changes {
            self.provenance.add_write(WriteRec {
                resource_version: change.resource_version,
                key: change.key.clone(),
                event_type: change.event_type,
                principal: change.principal.clone(),
                verb: crate::api::Verb::Delete,
                subresource: None,
                named: None,
                code: 200,
                time: rec.time,
                step: self.steps + 1,
                line,
                origin: Origin::Root(root.clone()),
                explained: 0,
                before: change.before.clone(),
                after: change.after.clone(),
            });
        }
    }

    pub(super) fn deliver(
        &mut self,
        seq: u64,
        controller: &str,
        event: &Arc<WatchEvent>,
        object: &Arc<Value>,
        report: &mut StepReport,
    ) {
        self.pending_deliveries = self.pending_deliveries.saturating_sub(1);
        // This delivery's line is the next one.
        let line = self.trace_len();
        let Some(slot) = self.slots.get_mut(controller) else {
            return;
        };
        if slot.state == RunState::Crashed {
            return;
        }
        let replaced = slot.informer.apply_replacing(event, object);
        let applied = replaced.is_some();
        let keyed = match replaced {
            Some(old) => slot
                .controller
                .keys_after(event, old.as_ref(), object, &slot.informer),
            None => Vec::new(),
        };
        let now = self.now;
        for (k, ms) in &keyed {
            slot.queue.add_after(k.clone(), now.plus_ms(*ms), now);
            let cause = Cause::Watch {
                line,
                time: now,
                event_type: event.event_type,
                key: ObjectKey::clone(&event.key),
                resource_version: event.resource_version,
                delay_ms: *ms,
            };
            slot.causes.add_after(k, now.plus_ms(*ms), now, cause);
        }
        let keys: Vec<crate::api::ObjectKey> = keyed.into_iter().map(|(k, _)| k).collect();
        let line = trace::watch_line(controller, event, applied, &keys);
        let rec = EventRecord {
            time: self.now,
            seq,
            lane: controller.to_owned(),
            kind: EventKind::Watch {
                event_type: event.event_type,
                key: ObjectKey::clone(&event.key),
                resource_version: event.resource_version,
                enqueued: keys,
                stale: !applied,
            },
            requests: Vec::new(),
            changes: Vec::new(),
            line: line.into(),
        };
        self.record(report, rec);
        self.kick(controller);
    }

    /// Takes the watch events a request caused: records each change (the version before is the
    /// one its write replaced), updates health tracking and loop detection, and schedules
    /// deliveries to every informer.
    pub(super) fn absorb(
        &mut self,
        events: Vec<(String, DrainedEvent)>,
        report: &mut StepReport,
        by_user: bool,
    ) -> Vec<ObjectChange> {
        let mut changes = Vec::with_capacity(events.len());
        for (principal, (ev, object, announced_before)) in events {
            if self.report_events.is_none() {
                report.watch.push((ev.clone(), Arc::clone(&object)));
            }
            let after = (ev.event_type != WatchEventType::Deleted).then(|| object.clone());
            // The version the write replaced, as the watch announced it: none for an object
            // the API server made when it started, announced now for the first time.
            let before = if self.first_announced(&ev.key) {
                None
            } else {
                announced_before
            };
            changes.push(ObjectChange {
                key: ObjectKey::clone(&ev.key),
                event_type: ev.event_type,
                principal: principal.clone(),
                resource_version: ev.resource_version,
                before: before.clone(),
                after: after.clone(),
                diff: Default::default(),
            });
            self.track_settled(&ev.key, after.as_deref());
            self.watch_for_feedback_loop(
                &ev,
                &principal,
                before.as_deref(),
                after.as_deref(),
                by_user,
                report,
            );
            self.fan_out(ev, &object);
        }
        changes
    }

    /// Whether `key` names an object the API server made when it started, announced now for
    /// the first time (it then stops being [`World::unannounced`]).
    fn first_announced(&mut self, key: &ObjectKey) -> bool {
        if self.unannounced.is_empty() {
            return false;
        }
        if self.unannounced_resources.is_empty() {
            self.unannounced_resources = self.unannounced.iter().map(|k| k.gr.clone()).collect();
            self.unannounced_resources.dedup();
        }
        // A read first: a remove copies the set's path even for a key it lacks.
        if !self.unannounced_resources.contains(&key.gr) || !self.unannounced.contains(key) {
            return false;
        }
        self.unannounced.remove(key);
        self.unannounced_resources.clear();
        true
    }

    /// Schedules the event's delivery to every running informer that watches its resource and
    /// accepts the object (or already holds it, so it learns of the change), after that
    /// informer's latency.
    fn fan_out(&mut self, ev: WatchEvent, object: &Arc<Value>) {
        let shared = Arc::new(ev);
        let mut deliveries = Vec::new();
        // The object's node, read once for every kubelet (`Reconciler::selected_node`).
        let mut node: Option<&str> = None;
        for (name, slot) in &self.slots {
            if slot.state == RunState::Crashed || !slot.controller.watches(&shared.key.gr) {
                continue;
            }
            let gr = &shared.key.gr;
            let takes = match slot.controller.selected_node(gr) {
                Some(selected) => {
                    selected
                        == *node
                            .get_or_insert_with(|| meta::str_at(object, path!("/spec/nodeName")))
                }
                None => {
                    slot.controller.accepts(gr, object) || slot.informer.get(&shared.key).is_some()
                }
            };
            if takes {
                deliveries.push((self.now.plus_ms(slot.latency_ms), name.clone()));
            }
        }
        for (t, controller) in deliveries {
            self.pending_deliveries += 1;
            self.push(
                t,
                Event::Deliver {
                    controller,
                    event: shared.clone(),
                    object: object.clone(),
                },
            );
        }
    }
}
