//! Watch and audit: every persisted write leaves a pending watch event (the object shared with
//! the store, not copied) for the engine to drain and deliver, and every request leaves an audit
//! entry.

use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::json::Value;

use super::server::ApiServer;
use super::types::{AuditEntry, ObjectKey, WatchEvent, WatchEventType};
use crate::time::SimTime;

/// A watch event not yet drained: the event (its `object` left `Null`) and the object, shared
/// with the store rather than copied, and the version the write replaced.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct PendingEvent {
    pub(super) event: WatchEvent,
    #[serde(with = "crate::engine::checkpoint::shared")]
    pub(super) object: Arc<Value>,
    /// The version announced before this one (none for a create). Drained right after the
    /// request that wrote it, so never in a checkpoint: not written.
    #[serde(skip)]
    pub(super) before: Option<Arc<Value>>,
}

/// A drained watch event: the event (its `object` left `Null`), the object as stored, and the
/// version it replaced, as announced before it (none for a create).
pub type DrainedEvent = (WatchEvent, Arc<Value>, Option<Arc<Value>>);

impl ApiServer {
    /// Watch events of every persisted write since the last drain, in order.
    pub fn drain_watch_events(&mut self) -> Vec<WatchEvent> {
        self.drain_shared_watch_events()
            .into_iter()
            .map(|(event, object, _)| WatchEvent {
                object: Arc::unwrap_or_clone(object),
                ..event
            })
            .collect()
    }

    /// [`Self::drain_watch_events`] without copying objects: each event (its `object` left
    /// `Null`) with the object as stored, shared, and the version it replaced.
    pub fn drain_shared_watch_events(&mut self) -> Vec<DrainedEvent> {
        let pending = std::mem::take(&mut self.state.pending);
        pending
            .into_iter()
            .map(|e| {
                let e = Arc::unwrap_or_clone(e);
                (e.event, e.object, e.before)
            })
            .collect()
    }

    /// Number of watch events waiting to be drained.
    pub fn pending_watch_events(&self) -> usize {
        self.state.pending.len()
    }

    /// The audit log, oldest first: all of it, or after [`ApiServer::keep_no_audit`] the
    /// entries kept.
    pub fn audit(&self) -> impl Iterator<Item = &AuditEntry> {
        self.state.audit.iter().map(AsRef::as_ref)
    }

    /// Number of audit entries, kept or let go.
    pub fn audit_len(&self) -> usize {
        (self.audit_unkept.unwrap_or(0) as usize) + self.state.audit.len()
    }

    /// Audit entries from index `from` on (for incremental display): those of them still kept.
    pub fn audit_since(&self, from: usize) -> impl Iterator<Item = &AuditEntry> {
        let unkept = self.audit_unkept.unwrap_or(0) as usize;
        self.state
            .audit
            .iter()
            .skip(from.saturating_sub(unkept))
            .map(AsRef::as_ref)
    }

    pub(super) fn emit(
        &mut self,
        now: SimTime,
        event_type: WatchEventType,
        key: Arc<ObjectKey>,
        object: Arc<Value>,
        rv: u64,
        before: Option<Arc<Value>>,
    ) {
        self.state.pending.push_back(Arc::new(PendingEvent {
            event: WatchEvent {
                event_type,
                key,
                object: Value::Null,
                resource_version: rv,
                time: now,
            },
            object,
            before,
        }));
    }
}
