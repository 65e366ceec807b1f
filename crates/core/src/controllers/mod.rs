//! The simulated controllers: Deployment, ReplicaSet, scheduler, kubelets, autoscaler, custom.
//!
//! Each controller looks like a kube-rs reconciler: it is woken with an object key, reads the
//! latest state from its own (possibly stale) informer cache, writes through the API server with
//! its own service account like any client, and returns an [`ReconcileAction`]. It never learns why it was
//! woken (level-triggered).

#![allow(
    clippy::result_large_err,
    reason = "ApiResult, the API contract type, carries kube's full error by value"
)]

pub mod database;
pub mod declarative;
pub mod deployment;
pub mod hpa;
pub mod kubelet;
pub mod naive;
pub mod replicaset;
pub mod scheduler;
pub mod util;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::api::{ApiError, ApiRequest, ApiResult, GroupResource, ObjectKey, WatchEvent};
use crate::engine::informer::Informer;
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

/// How one container image behaves when a kubelet runs it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "behaviour")]
pub enum ImageBehaviour {
    /// Pulls in `pull_ms` and runs.
    Ok { pull_ms: u64 },
    /// The registry does not have it: ErrImagePull, then ImagePullBackOff.
    PullFails,
    /// Starts, then exits with code 1 after `run_ms`: CrashLoopBackOff.
    Crashes { run_ms: u64 },
}

/// Timings of the simulated kubelet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KubeletTiming {
    /// Image pull time range in ms for images without a configured behaviour.
    pub pull_min_ms: u64,
    pub pull_max_ms: u64,
    /// From pulled to container running.
    pub start_ms: u64,
    /// From running to the readiness probe passing (when the container has no probe).
    pub ready_ms: u64,
    /// From SIGTERM (after any preStop hook) to the container's exit, when a pod is deleted.
    #[serde(default = "default_stop_ms")]
    pub stop_ms: u64,
}

fn default_stop_ms() -> u64 {
    KubeletTiming::default().stop_ms
}

impl Default for KubeletTiming {
    fn default() -> Self {
        KubeletTiming {
            pull_min_ms: 500,
            pull_max_ms: 1500,
            start_ms: 300,
            ready_ms: 200,
            stop_ms: 500,
        }
    }
}

/// The world outside the API server that controllers can observe: image registry, kubelet
/// timings and faults, and the simulated load the autoscaler reads as a metric.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Environment {
    pub images: BTreeMap<String, ImageBehaviour>,
    pub kubelet: KubeletTiming,
    /// Nodes whose kubelet fails every image pull.
    pub pull_failing_nodes: BTreeSet<String>,
    /// Total CPU demand in millicores per scale target (`namespace/name` of a Deployment).
    pub load_millicores: BTreeMap<String, u64>,
}

/// The client a reconciler writes through; the engine records every request and applies faults.
pub trait Client {
    fn send(&mut self, req: ApiRequest) -> ApiResult;
}

/// Everything a reconcile may look at or use.
pub struct Ctx<'a> {
    pub now: SimTime,
    pub cache: &'a Informer,
    pub client: &'a mut dyn Client,
    pub rng: &'a mut ChaCha8Rng,
    pub env: &'a Environment,
}

impl Ctx<'_> {
    pub fn send(&mut self, req: ApiRequest) -> ApiResult {
        self.client.send(req)
    }
}

/// The behaviour every controller implements.
pub trait Reconciler {
    /// The lane shown in timelines and traces, e.g. `deployment-controller`, `kubelet/node-1`.
    fn name(&self) -> String;
    /// The user the controller authenticates as.
    fn principal(&self) -> String;
    /// Whether this controller's informer holds objects of `gr`.
    fn watches(&self, gr: &GroupResource) -> bool;
    /// A per-object filter on top of `watches` (a kubelet only sees its node's pods).
    fn accepts(&self, _gr: &GroupResource, _obj: &Value) -> bool {
        true
    }
    /// The keys to enqueue for one delivered event (event handlers), after the cache applied it.
    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        cache: &Informer,
    ) -> Vec<ObjectKey>;
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
    /// Requeues that are periodic background work (resync), not pending convergence work.
    fn periodic(&self) -> bool {
        false
    }
}

/// Every controller the engine can run: a closed set, so the world stays one `Clone` value.
#[derive(Clone, Debug)]
pub enum Controller {
    Deployment(deployment::DeploymentController),
    ReplicaSet(replicaset::ReplicaSetController),
    Scheduler(scheduler::Scheduler),
    Kubelet(kubelet::Kubelet),
    Hpa(hpa::HpaController),
    Database(database::DatabaseController),
    Declarative(declarative::DeclarativeController),
    Naive(naive::NaiveController),
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            Controller::Deployment($c) => $e,
            Controller::ReplicaSet($c) => $e,
            Controller::Scheduler($c) => $e,
            Controller::Kubelet($c) => $e,
            Controller::Hpa($c) => $e,
            Controller::Database($c) => $e,
            Controller::Declarative($c) => $e,
            Controller::Naive($c) => $e,
        }
    };
}

impl Reconciler for Controller {
    fn name(&self) -> String {
        dispatch!(self, c => c.name())
    }
    fn principal(&self) -> String {
        dispatch!(self, c => c.principal())
    }
    fn watches(&self, gr: &GroupResource) -> bool {
        dispatch!(self, c => c.watches(gr))
    }
    fn accepts(&self, gr: &GroupResource, obj: &Value) -> bool {
        dispatch!(self, c => c.accepts(gr, obj))
    }
    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        cache: &Informer,
    ) -> Vec<ObjectKey> {
        dispatch!(self, c => c.keys_for(ev, old, new, cache))
    }
    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        dispatch!(self, c => c.reconcile(key, ctx))
    }
    fn reset(&mut self) {
        dispatch!(self, c => c.reset())
    }
    fn max_retries(&self) -> Option<u32> {
        dispatch!(self, c => c.max_retries())
    }
    fn periodic(&self) -> bool {
        dispatch!(self, c => c.periodic())
    }
}

/// The key of the object's controller owner if it has the given kind.
pub fn owner_key(
    obj: &Value,
    ev_key: &ObjectKey,
    owner_kind: &str,
    owner_gr: GroupResource,
) -> Option<ObjectKey> {
    let (kind, name, _) = util::controller_of(obj)?;
    (kind == owner_kind).then(|| ObjectKey::new(owner_gr, &ev_key.namespace, name))
}
