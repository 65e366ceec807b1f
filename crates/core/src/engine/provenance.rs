//! Provenance, recorded as events happen: for every object change the write that made it and
//! what sent that write (a reconcile, or a root: a user's request, a fault, the cluster's
//! set-up, the API server's event TTL); for every reconcile the work-queue entries that caused
//! it (watch deliveries, requeues, back-offs, a restart's initial list), all of them when the
//! queue coalesced several. [`crate::engine::why`] walks these records into a chain.
//!
//! Nothing here is guessed afterwards: each record is written by the engine code that did the
//! thing, and a queue entry's causes follow the work queue's own rules (a key already queued is
//! not queued twice, the earliest `add_after` wins), mirrored in [`QueueCauses`] beside each
//! controller's queue. Recording reads the engine's state and never changes it: no RNG draw, no
//! event, no trace line.
//!
//! # Memory bound
//! The world keeps the newest [`WINDOW`] object changes and the newest [`WINDOW`] reconciles
//! (persistent maps, so a world clone shares them). Each change holds the object's versions
//! before and after, shared with the store. A chain that reaches a record older than the window
//! ends in [`Root::Truncated`]. Queue causes are held only while their entry is queued.

use std::sync::Arc;

use crate::json::Value;
use imbl::{OrdMap, OrdSet};
use serde::{Deserialize, Serialize};

use crate::api::{ObjectKey, Subresource, Verb, WatchEventType};
use crate::time::SimTime;

/// How many object changes, and how many reconciles, the world remembers.
pub const WINDOW: usize = 1024;

/// Where a chain starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "root", rename_all = "camelCase")]
pub enum Root {
    /// A user's request (a scenario action, the editor, kubectl): the `input`th entry of
    /// [`crate::engine::World::inputs`], traced at `line`.
    #[serde(rename_all = "camelCase")]
    Request {
        principal: String,
        input: usize,
        line: u64,
        time: SimTime,
    },
    /// An injected fault: a node fault's own requests, or a restarted controller's initial list.
    #[serde(rename_all = "camelCase")]
    Fault {
        input: usize,
        line: u64,
        time: SimTime,
        description: String,
    },
    /// The cluster's set-up (CRDs, RBAC, nodes), before any input.
    Setup,
    /// The API server deleted an Event whose `--event-ttl` lease ran out.
    #[serde(rename_all = "camelCase")]
    EventTtl { line: u64, time: SimTime },
    /// The chain reached a record older than the provenance window ([`WINDOW`]).
    Truncated,
}

/// What sent a write.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "camelCase")]
pub enum Origin {
    /// The reconcile traced at `line` (its own requests, or the events it reported).
    Reconcile {
        line: u64,
    },
    Root(Root),
}

/// One object change (one watch event) and the request that made it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteRec {
    pub resource_version: u64,
    pub key: ObjectKey,
    pub event_type: WatchEventType,
    pub principal: String,
    pub verb: Verb,
    pub subresource: Option<Subresource>,
    /// The object the request named, when it is not the one that changed: a Pod's binding
    /// (`bindings`), the owner whose delete the garbage collector followed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub named: Option<ObjectKey>,
    pub code: u16,
    pub time: SimTime,
    /// The world step whose snapshot first shows the change ([`crate::engine::World::steps`]).
    pub step: u64,
    /// The trace line of the event that sent the request (0-based).
    pub line: u64,
    pub origin: Origin,
    /// How many of its reconcile's explanations were recorded before the request was sent:
    /// the decisions the write carries ([`ReconcileRec::explanations`]).
    pub explained: usize,
    /// Left out of the provenance JSON; a checkpoint keeps them.
    #[serde(
        default,
        skip_serializing_if = "super::checkpoint::outside",
        with = "super::checkpoint::shared_option"
    )]
    pub before: Option<Arc<Value>>,
    #[serde(
        default,
        skip_serializing_if = "super::checkpoint::outside",
        with = "super::checkpoint::shared_option"
    )]
    pub after: Option<Arc<Value>>,
}

impl WriteRec {
    /// The resource the request named: `pods`, `bindings`.
    pub fn resource(&self) -> &str {
        self.named
            .as_ref()
            .unwrap_or(&self.key)
            .gr
            .resource
            .as_str()
    }

    /// The request's `namespace/name` (`name` for cluster-scoped objects).
    pub fn target(&self) -> String {
        crate::engine::world::short_key(self.named.as_ref().unwrap_or(&self.key))
    }
}

/// Why a key was in a controller's work queue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "camelCase")]
pub enum Cause {
    /// A watch delivery (traced at `line`) whose event handler queued the key, after `delay_ms`
    /// when the handler batches (`AddAfter`).
    #[serde(rename_all = "camelCase")]
    Watch {
        line: u64,
        time: SimTime,
        event_type: WatchEventType,
        key: ObjectKey,
        resource_version: u64,
        delay_ms: u64,
    },
    /// The reconcile at `line` asked to run again after `ms` (`RequeueAfter`: resyncs, the
    /// progress deadline, the HPA's sync period, a kubelet's sync and probe ticks).
    #[serde(rename_all = "camelCase")]
    Requeue { line: u64, time: SimTime, ms: u64 },
    /// The reconcile at `line` failed; the queue's rate limiter retries after `ms`.
    #[serde(rename_all = "camelCase")]
    Backoff { line: u64, time: SimTime, ms: u64 },
    /// A restarted controller's initial list (the fault input traced at `line`) queued the key
    /// for the object at `resource_version`.
    #[serde(rename_all = "camelCase")]
    Restart {
        line: u64,
        time: SimTime,
        input: usize,
        resource_version: u64,
        delay_ms: u64,
    },
}

impl Cause {
    pub fn line(&self) -> u64 {
        match self {
            Cause::Watch { line, .. }
            | Cause::Requeue { line, .. }
            | Cause::Backoff { line, .. }
            | Cause::Restart { line, .. } => *line,
        }
    }
}

pub use crate::runtime::Explanation;

/// One reconcile: which key, what queued it, what it wrote and decided.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReconcileRec {
    pub line: u64,
    pub controller: String,
    pub key: ObjectKey,
    pub time: SimTime,
    pub step: u64,
    /// Every queue entry the reconcile consumed, in the order they were added.
    pub causes: Vec<Cause>,
    /// The index in `causes` of the entry that put the key in the queue; the others were
    /// coalesced into it.
    pub trigger: usize,
    /// The resource versions of the changes its writes made.
    pub writes: Vec<u64>,
    pub explanations: Vec<Explanation>,
}

/// The world's provenance records (see the module docs for the bound).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Provenance {
    writes: OrdMap<u64, Arc<WriteRec>>,
    reconciles: OrdMap<u64, Arc<ReconcileRec>>,
    /// Set while the cluster is being set up: its requests' root is [`Root::Setup`].
    pub(super) setup: bool,
}

impl Provenance {
    pub fn write(&self, resource_version: u64) -> Option<&WriteRec> {
        self.writes.get(&resource_version).map(Arc::as_ref)
    }

    pub fn reconcile(&self, line: u64) -> Option<&ReconcileRec> {
        self.reconciles.get(&line).map(Arc::as_ref)
    }

    /// The remembered reconciles, oldest first.
    pub fn reconciles(&self) -> impl Iterator<Item = &ReconcileRec> {
        self.reconciles.values().map(Arc::as_ref)
    }

    /// The decisions a write carries: of the explanations its reconcile recorded before
    /// sending it, the latest for each subject, in the order they were recorded.
    pub fn explanations_of(&self, write: &WriteRec) -> Vec<Explanation> {
        let Origin::Reconcile { line } = write.origin else {
            return Vec::new();
        };
        let Some(rec) = self.reconcile(line) else {
            return Vec::new();
        };
        let before = &rec.explanations[..write.explained.min(rec.explanations.len())];
        before
            .iter()
            .enumerate()
            .filter(|(i, e)| !before[i + 1..].iter().any(|l| l.subject == e.subject))
            .map(|(_, e)| e.clone())
            .collect()
    }

    /// The remembered changes of one object, oldest first.
    pub fn writes_of<'a>(
        &'a self,
        key: &'a ObjectKey,
    ) -> impl DoubleEndedIterator<Item = &'a WriteRec> + 'a {
        // A scan of the window: a question is rare, a write is not (no per-key index to keep).
        self.writes
            .values()
            .map(Arc::as_ref)
            .filter(move |w| &w.key == key)
    }

    /// How many changes and reconciles are remembered.
    pub fn len(&self) -> (usize, usize) {
        (self.writes.len(), self.reconciles.len())
    }

    pub fn is_empty(&self) -> bool {
        self.writes.is_empty() && self.reconciles.is_empty()
    }

    pub(super) fn add_write(&mut self, rec: WriteRec) {
        self.writes.insert(rec.resource_version, Arc::new(rec));
        if self.writes.len() > WINDOW {
            if let Some(oldest) = self.writes.get_min().map(|(rv, _)| *rv) {
                self.writes.remove(&oldest);
            }
        }
    }

    pub(super) fn add_reconcile(&mut self, rec: ReconcileRec) {
        self.reconciles.insert(rec.line, Arc::new(rec));
        if self.reconciles.len() > WINDOW {
            if let Some(oldest) = self.reconciles.get_min().map(|(line, _)| *line) {
                self.reconciles.remove(&oldest);
            }
        }
    }
}

/// The causes of one queued key: those of its ready entry, and of its waiting (`add_after`)
/// entry with that entry's time.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Pending {
    // Plain vectors, not `imbl::Vector`s: one of those holding more than one `Cause` takes a
    // whole 64-entry chunk (6 KB), and a queued key seldom has more than a few.
    ready: Vec<Cause>,
    ready_trigger: usize,
    waiting: Option<(SimTime, Vec<Cause>, usize)>,
}

/// The causes of a controller's queued keys, kept by the work queue's rules: the engine calls
/// it wherever it calls the queue.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct QueueCauses {
    pending: OrdMap<ObjectKey, Pending>,
    by_time: OrdSet<(SimTime, ObjectKey)>,
}

impl QueueCauses {
    /// `WorkQueue::add_after(key, at, now)` (an `add` when `at <= now`), because of `cause`.
    pub(super) fn add_after(&mut self, key: &ObjectKey, at: SimTime, now: SimTime, cause: Cause) {
        let p = self.pending.entry(key.clone()).or_default();
        if at <= now {
            // Already queued: coalesced into that entry; otherwise this one queues the key.
            if p.ready.is_empty() {
                p.ready_trigger = 0;
            }
            p.ready.push(cause);
            return;
        }
        match &mut p.waiting {
            // An earlier (or equal) pending time wins: this request rides on it.
            Some((t, causes, _)) if *t <= at => causes.push(cause),
            waiting => {
                let mut causes = match waiting.take() {
                    Some((t, causes, _)) => {
                        self.by_time.remove(&(t, key.clone()));
                        causes
                    }
                    None => Vec::new(),
                };
                let trigger = causes.len();
                causes.push(cause);
                *waiting = Some((at, causes, trigger));
                self.by_time.insert((at, key.clone()));
            }
        }
    }

    /// `WorkQueue::promote(now)`: waiting entries whose time has come join the ready ones.
    pub(super) fn promote(&mut self, now: SimTime) {
        while let Some((t, key)) = self.by_time.get_min().cloned() {
            if t > now {
                break;
            }
            self.by_time.remove(&(t, key.clone()));
            let Some(p) = self.pending.get_mut(&key) else {
                continue;
            };
            if let Some((_, causes, trigger)) = p.waiting.take() {
                if p.ready.is_empty() {
                    p.ready_trigger = trigger;
                }
                p.ready.extend(causes);
            }
        }
    }

    /// `WorkQueue::get()` handed out `key`: its ready entry's causes and trigger.
    pub(super) fn take(&mut self, key: &ObjectKey) -> (Vec<Cause>, usize) {
        let Some(p) = self.pending.get_mut(key) else {
            return (Vec::new(), 0);
        };
        let causes = std::mem::take(&mut p.ready);
        let trigger = p.ready_trigger.min(causes.len().saturating_sub(1));
        p.ready_trigger = 0;
        if p.waiting.is_none() {
            self.pending.remove(key);
        }
        (causes, trigger)
    }

    /// The queue was replaced (a crash or a restart).
    pub(super) fn clear(&mut self) {
        *self = QueueCauses::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::GroupResource;

    fn key(n: &str) -> ObjectKey {
        ObjectKey::new(GroupResource::new("apps", "deployments"), "default", n)
    }

    fn requeue(line: u64) -> Cause {
        Cause::Requeue {
            line,
            time: SimTime(0),
            ms: 1,
        }
    }

    #[test]
    fn a_key_queued_twice_lists_both_causes_with_the_first_as_trigger() {
        let mut q = QueueCauses::default();
        q.add_after(&key("a"), SimTime(5), SimTime(5), requeue(1));
        q.add_after(&key("a"), SimTime(5), SimTime(5), requeue(2));
        assert_eq!(q.take(&key("a")), (vec![requeue(1), requeue(2)], 0));
        assert_eq!(q.take(&key("a")), (vec![], 0));
    }

    #[test]
    fn the_earliest_waiting_time_is_the_trigger_and_later_requests_ride_on_it() {
        let mut q = QueueCauses::default();
        q.add_after(&key("a"), SimTime(900), SimTime(0), requeue(1));
        q.add_after(&key("a"), SimTime(100), SimTime(0), requeue(2));
        q.add_after(&key("a"), SimTime(500), SimTime(0), requeue(3));
        q.promote(SimTime(99));
        assert_eq!(q.take(&key("a")), (vec![], 0));
        q.promote(SimTime(100));
        assert_eq!(
            q.take(&key("a")),
            (vec![requeue(1), requeue(2), requeue(3)], 1)
        );
    }

    #[test]
    fn a_promoted_entry_joining_a_queued_key_is_coalesced_into_it() {
        let mut q = QueueCauses::default();
        q.add_after(&key("a"), SimTime(10), SimTime(0), requeue(1));
        q.add_after(&key("a"), SimTime(10), SimTime(10), requeue(2));
        q.promote(SimTime(10));
        assert_eq!(q.take(&key("a")), (vec![requeue(2), requeue(1)], 0));
    }
}
