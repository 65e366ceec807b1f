//! The simulated controllers: Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, scheduler,
//! kubelets, pod GC, autoscaler, custom.
//!
//! Each controller looks like a kube-rs reconciler: it is woken with an object key, reads the
//! latest state from its own (possibly stale) informer cache, writes through the API server with
//! its own service account like any client, and returns a [`ReconcileAction`]. It never learns why it
//! was woken (level-triggered). What they are built on (informer, work queue, client, the
//! reconcile contract) is [`crate::runtime`]; nothing here is the engine's.

#![allow(
    clippy::result_large_err,
    reason = "ApiResult, the API contract type, carries kube's full error by value"
)]

pub mod daemonset;
pub mod database;
pub mod declarative;
pub mod deployment;
pub mod endpointslice;
pub mod hpa;
pub mod job;
pub mod kubelet;
pub mod naive;
pub mod node_predicates;
pub mod podgc;
pub mod replicaset;
pub mod scheduler;
pub mod statefulset;
pub mod util;

use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::json::Value;

use crate::api::meta;
use crate::api::{GroupResource, ObjectKey, WatchEvent};
use crate::runtime::Informer;

// The runtime's contract, at the paths controllers and their users have always named it.
pub use crate::runtime::{
    Client, Ctx, Environment, ImageBehaviour, KubeletTiming, ReconcileAction, ReconcileError,
    Reconciler,
};

/// Every controller the engine can run: a closed set, so the world stays one `Clone` value.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Controller {
    Deployment(deployment::DeploymentController),
    DaemonSet(daemonset::DaemonSetController),
    EndpointSlice(endpointslice::EndpointSliceController),
    PodGc(podgc::PodGcController),
    ReplicaSet(replicaset::ReplicaSetController),
    Scheduler(scheduler::Scheduler),
    StatefulSet(statefulset::StatefulSetController),
    Kubelet(kubelet::Kubelet),
    Hpa(hpa::HpaController),
    Job(job::JobController),
    Database(database::DatabaseController),
    Declarative(declarative::DeclarativeController),
    Naive(naive::NaiveController),
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            Controller::Deployment($c) => $e,
            Controller::DaemonSet($c) => $e,
            Controller::EndpointSlice($c) => $e,
            Controller::PodGc($c) => $e,
            Controller::ReplicaSet($c) => $e,
            Controller::Scheduler($c) => $e,
            Controller::StatefulSet($c) => $e,
            Controller::Kubelet($c) => $e,
            Controller::Hpa($c) => $e,
            Controller::Job($c) => $e,
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
    fn event_api(&self) -> Option<crate::runtime::EventApi> {
        dispatch!(self, c => c.event_api())
    }
    fn watches(&self, gr: &GroupResource) -> bool {
        dispatch!(self, c => c.watches(gr))
    }
    fn accepts(&self, gr: &GroupResource, obj: &Value) -> bool {
        dispatch!(self, c => c.accepts(gr, obj))
    }
    fn selected_node(&self, gr: &GroupResource) -> Option<&str> {
        dispatch!(self, c => c.selected_node(gr))
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
    fn keys_after(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        cache: &Informer,
    ) -> Vec<(ObjectKey, u64)> {
        dispatch!(self, c => c.keys_after(ev, old, new, cache))
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
    fn rate_limits(&self) -> Option<(u64, u64)> {
        dispatch!(self, c => c.rate_limits())
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
    let (kind, name, _) = meta::controller_of(obj)?;
    (kind == owner_kind).then(|| ObjectKey::new(owner_gr, &ev_key.namespace, name))
}
