//! The pod garbage collector's orphan rule, a port of kube 1.32's pkg/controller/podgc
//! `gcOrphaned`: a pod bound to a node that no longer exists is marked `Failed` with a
//! `DisruptionTarget` condition and deleted with grace 0, once the node has stayed missing
//! through the quarantine.
//!
//! Timing as kube's: the collector runs every `gcCheckPeriod` (20 s, from its start at t=0); the
//! first run that finds the orphan puts its node in quarantine for `quarantineTime` (40 s,
//! `nodeQueue.AddAfter`); the run at the end of it asks the API server for the node
//! (`checkIfNodeExists`) and, when it is gone, deletes the node's pods. A pod is therefore
//! removed 40 to 60 s after its node. Not modelled: `gcTerminated` (the terminated-pod
//! threshold), `gcUnscheduledTerminating` and `gcTerminating` (out-of-service taint).

use crate::json::path;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::json::{json, Value};

use super::util::{nodes, pods};
use crate::api::meta::{self, str_at};
use crate::api::WatchEventType;
use crate::api::{ApiRequest, GroupResource, ObjectKey, PatchType, StatusReason, WatchEvent};
use crate::runtime::informer::Informer;
use crate::runtime::{Ctx, ReconcileAction, ReconcileError, Reconciler};

/// `gcCheckPeriod`.
pub const GC_CHECK_PERIOD_MS: u64 = 20_000;
/// `quarantineTime`.
pub const QUARANTINE_MS: u64 = 40_000;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PodGcController {
    /// Nodes in quarantine and when they come out of it (`nodeQueue`).
    quarantine: BTreeMap<String, u64>,
}

impl PodGcController {
    pub fn new() -> Self {
        Self::default()
    }
}

fn node_exists(cache: &Informer, node: &str) -> bool {
    cache.get(&ObjectKey::new(nodes(), "", node)).is_some()
}

impl Reconciler for PodGcController {
    fn name(&self) -> String {
        "pod-garbage-collector".into()
    }

    fn principal(&self) -> String {
        crate::api::principals::POD_GC_CONTROLLER.into()
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        *gr == pods() || *gr == nodes()
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        _old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        cache: &Informer,
    ) -> Vec<ObjectKey> {
        if ev.key.gr == nodes() {
            if ev.event_type != WatchEventType::Deleted {
                return Vec::new();
            }
            let gone = meta::name(new);
            let pod_gr = pods();
            return cache
                .list(&pod_gr)
                .filter(|p| str_at(p, path!("/spec/nodeName")) == gone)
                .map(|p| ObjectKey::new(pods(), meta::namespace(p), meta::name(p)))
                .collect();
        }
        let node = str_at(new, path!("/spec/nodeName"));
        if ev.event_type != WatchEventType::Deleted && !node.is_empty() && !node_exists(cache, node)
        {
            return vec![ObjectKey::clone(&ev.key)];
        }
        Vec::new()
    }

    fn reset(&mut self) {
        self.quarantine.clear();
    }

    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let Some(pod) = ctx.cache.get(key).cloned() else {
            return Ok(ReconcileAction::AwaitChange);
        };
        let node = str_at(&pod, path!("/spec/nodeName")).to_owned();
        if node.is_empty() || node_exists(ctx.cache, &node) {
            self.quarantine.remove(&node);
            return Ok(ReconcileAction::AwaitChange);
        }
        // The collector acts only on its 20 s runs.
        let now = ctx.now.as_ms();
        let next_run = now.div_ceil(GC_CHECK_PERIOD_MS) * GC_CHECK_PERIOD_MS;
        if next_run > now {
            return Ok(ReconcileAction::RequeueAfter { ms: next_run - now });
        }
        let ready_at = *self
            .quarantine
            .entry(node.clone())
            .or_insert(now + QUARANTINE_MS);
        if now < ready_at {
            return Ok(ReconcileAction::RequeueAfter { ms: ready_at - now });
        }
        // discoverDeletedNodes: the node is asked for, not trusted to the cache.
        let principal = self.principal();
        match ctx.send(ApiRequest::get(&principal, nodes(), "", &node)) {
            Ok(_) => {
                self.quarantine.remove(&node);
                return Ok(ReconcileAction::AwaitChange);
            }
            Err(e) if e.reason == StatusReason::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        // markFailedAndDeletePodWithCondition.
        let phase = str_at(&pod, path!("/status/phase"));
        if phase != "Succeeded" && phase != "Failed" {
            let patch = json!({"status": {
                "phase": "Failed",
                "conditions": [{
                    "type": "DisruptionTarget",
                    "status": "True",
                    "lastTransitionTime": ctx.now.rfc3339(),
                    "reason": "DeletionByPodGC",
                    "message": "PodGC: node no longer exists",
                }],
            }});
            match ctx.send(ApiRequest::patch_status(
                &principal,
                pods(),
                &key.namespace,
                &key.name,
                PatchType::Strategic,
                patch,
            )) {
                Ok(_) => {}
                Err(e) if e.reason == StatusReason::NotFound => {
                    return Ok(ReconcileAction::AwaitChange)
                }
                Err(e) => return Err(e.into()),
            }
        }
        match ctx.send(ApiRequest::delete_with_options(
            &principal,
            pods(),
            &key.namespace,
            &key.name,
            json!({"gracePeriodSeconds": 0}),
        )) {
            Ok(_) => Ok(ReconcileAction::AwaitChange),
            Err(e) if e.reason == StatusReason::NotFound => Ok(ReconcileAction::AwaitChange),
            Err(e) => Err(e.into()),
        }
    }
}
