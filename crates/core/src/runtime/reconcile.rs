//! The reconcile contract (kube-runtime's `reconciler` and `error_policy`): what a reconciler
//! is asked, what it answers, and what the work queue does with the answer.

#![allow(
    clippy::result_large_err,
    reason = "ApiResult, the API contract type, carries kube's full error by value"
)]

use std::sync::Arc;

use crate::json::Value;
use serde::{Deserialize, Serialize};

use super::client::Ctx;
use super::events::EventApi;
use super::informer::Informer;
use super::workqueue::WorkQueue;
use crate::api::{ApiError, GroupResource, ObjectKey, WatchEvent};
use crate::time::SimTime;

/// What a reconciler asks of the engine after a successful run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReconcileAction {
    /// Nothing more to do until something the controller watches changes.
    AwaitChange,
    /// Run again after this many milliseconds (client-go `AddAfter` after `Forget`).
    RequeueAfter { ms: u64 },
}

/// A failed reconcile; the engine re-queues the key with per-key exponential backoff.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReconcileError {
    #[error("{0}")]
    Api(Box<ApiError>),
    #[error("{0}")]
    Other(String),
}

impl From<ApiError> for ReconcileError {
    fn from(e: ApiError) -> Self {
        ReconcileError::Api(Box::new(e))
    }
}

/// What the engine did with one reconcile's result, as the trace and reports show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReconcileOutcome {
    AwaitChange,
    RequeueAfter {
        ms: u64,
    },
    /// Failed; re-queued with backoff after `retry_ms`, or dropped after too many retries.
    Error {
        message: String,
        retry_ms: Option<u64>,
    },
}

/// The behaviour every controller implements.
pub trait Reconciler {
    /// The lane shown in timelines and traces, e.g. `deployment-controller`, `kubelet/node-1`.
    fn name(&self) -> String;
    /// The user the controller authenticates as.
    fn principal(&self) -> String;
    /// The event recorder the controller reports through, if it records events.
    fn event_api(&self) -> Option<EventApi> {
        None
    }
    /// Whether this controller's informer holds objects of `gr`.
    fn watches(&self, gr: &GroupResource) -> bool;
    /// A per-object filter on top of `watches` (a kubelet only sees its node's pods).
    fn accepts(&self, _gr: &GroupResource, _obj: &Value) -> bool {
        true
    }
    /// The node whose Pods alone the watch of `gr` takes, where `accepts` is a watch's field
    /// selector on `spec.nodeName` (a kubelet's): a field that, once set, never changes. Then an
    /// object it does not accept had no previous version it accepted, and the API server sends
    /// the watcher nothing for it: the cacher sends a watcher an event only when the object or
    /// its previous version matches (`cacheWatcher.convertToWatchEvent`). Its cache is not
    /// asked: it may still hold an object of the same name deleted a moment ago, whose deletion
    /// has not reached it, and the new object is none of its business. Otherwise (`None`) an
    /// object the cache holds still reaches it after `accepts` turns false, so it learns of the
    /// change. The fan-out reads an event's node once for all such watches, as the cacher
    /// indexes its watchers by the node (`NodeNameTriggerFunc`, pkg/registry/core/pod
    /// strategy.go).
    fn selected_node(&self, _gr: &GroupResource) -> Option<&str> {
        None
    }
    /// The keys to enqueue for one delivered event (event handlers), after the cache applied it.
    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        cache: &Informer,
    ) -> Vec<ObjectKey>;
    /// The keys to enqueue for one delivered event, each with a delay in milliseconds (client-go
    /// `AddAfter`; 0 adds at once). Handlers that batch events (the Job controller's
    /// `enqueueSyncJobBatched`) say so here; the default is [`Self::keys_for`], all at once.
    fn keys_after(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        cache: &Informer,
    ) -> Vec<(ObjectKey, u64)> {
        self.keys_for(ev, old, new, cache)
            .into_iter()
            .map(|k| (k, 0))
            .collect()
    }
    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError>;
    /// Forgets in-memory state (a crash).
    fn reset(&mut self) {}
    /// client-go controllers that drop a key after this many failed retries.
    fn max_retries(&self) -> Option<u32> {
        None
    }
    /// The work queue's per-key failure back-off as (base, max) in ms, when it is not
    /// client-go's default item limiter (5 ms to 1000 s).
    fn rate_limits(&self) -> Option<(u64, u64)> {
        None
    }
    /// Requeues that are periodic background work (resync), not pending convergence work.
    fn periodic(&self) -> bool {
        false
    }
}

/// The error policy: a success forgets the key's failures (and requeues it when asked); a
/// failure re-queues it with the queue's per-key backoff, unless the controller drops keys after
/// `max_retries` failures, as client-go controllers do with `NumRequeues` [client-go
/// util/workqueue, e.g. deployment_controller.go `handleErr`]. Call after `queue.done(key)`.
pub fn settle(
    queue: &mut WorkQueue,
    key: &ObjectKey,
    result: Result<ReconcileAction, ReconcileError>,
    max_retries: Option<u32>,
    rate_limits: Option<(u64, u64)>,
    now: SimTime,
) -> ReconcileOutcome {
    match result {
        Ok(ReconcileAction::AwaitChange) => {
            queue.forget(key);
            ReconcileOutcome::AwaitChange
        }
        Ok(ReconcileAction::RequeueAfter { ms }) => {
            queue.forget(key);
            queue.add_after(key.clone(), now.plus_ms(ms), now);
            ReconcileOutcome::RequeueAfter { ms }
        }
        Err(e) => {
            if max_retries.is_some_and(|m| queue.num_requeues(key) >= m) {
                queue.forget(key);
                ReconcileOutcome::Error {
                    message: e.to_string(),
                    retry_ms: None,
                }
            } else {
                let delay = match rate_limits {
                    Some((base, max)) => queue.when_limited(key, base, max),
                    None => queue.when(key),
                };
                queue.add_after(key.clone(), now.plus_ms(delay), now);
                ReconcileOutcome::Error {
                    message: e.to_string(),
                    retry_ms: Some(delay),
                }
            }
        }
    }
}
