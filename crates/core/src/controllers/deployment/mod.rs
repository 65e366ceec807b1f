//! The Deployment controller [kubernetes pkg/controller/deployment: deployment_controller.go,
//! sync.go, rolling.go, recreate.go, progress.go, util/deployment_util.go].
//!
//! One ReplicaSet per pod-template-hash; rolling update bounded by maxSurge (rounded up) and
//! maxUnavailable (rounded down); Recreate; proportional scaling of active ReplicaSets when
//! spec.replicas changes mid-rollout; pause/resume; the revision annotation; the progress
//! deadline; the exact status arithmetic and the Available/Progressing/ReplicaFailure conditions
//! with kube's reasons and messages.
//!
//! Split along kube's files: this module is deployment_controller.go (the event handlers and
//! `syncDeployment`); `deployment_util`, `sync`, `progress`, `rolling` and `recreate` are
//! their namesakes.

mod deployment_util;
mod progress;
mod recreate;
mod rolling;
mod sync;

pub use deployment_util::{
    equal_ignore_hash, new_rs_new_replicas, pod_template_hash, proportion, replica_set_fraction,
    resolve_fenceposts, scaled_value, status_counts, DeploymentSpec, RsCounts,
};

use crate::api::meta::Fields;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::json::{json, Map, Value};

use crate::api::meta::{self, str_at, JsonPointer};
use crate::api::{GroupResource, ObjectKey, WatchEvent};
use crate::controllers::owner_key;
use crate::controllers::util::{deployments, pods, replicasets};
use crate::runtime::client;
use crate::runtime::Informer;
use crate::runtime::Reconciler;
use crate::runtime::{
    Ctx, EventApi, EventNote, EventType, ObjectRef, ReconcileAction, ReconcileError,
};

use deployment_util::{by_creation, num, rs_spec};
use recreate::recreate_without_pods;

pub const REVISION: &str = "deployment.kubernetes.io/revision";
pub const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
pub const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";
const MAX_INT32: i64 = 2_147_483_647;
/// The revisions a rolled-back-to ReplicaSet had before, comma separated.
pub const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
/// `maxRevHistoryLengthInChars`: the history keeps its newest entries within this length.
const MAX_REVISION_HISTORY_CHARS: usize = 2000;

const ANNOTATIONS_NOT_COPIED: [&str; 6] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    REVISION_HISTORY,
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    "deprecated.deployment.rollback.to",
];

// ---- the controller -------------------------------------------------------------------

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeploymentController {}

impl DeploymentController {
    pub fn new() -> Self {
        Self::default()
    }
}

/// One sync's working state: the deployment as last written and its ReplicaSets.
struct Sync<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    d: Value,
    spec: DeploymentSpec,
    principal: String,
}

impl Sync<'_, '_> {
    /// A copy of the status to change and write.
    fn status(&self) -> Value {
        self.status_ref().clone()
    }

    /// The status to read (an empty object when absent), without a copy.
    fn status_ref(&self) -> &Value {
        static EMPTY: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| json!({}));
        self.d.field("status").unwrap_or(&EMPTY)
    }

    /// `dc.eventRecorder.Eventf(d, ...)`: an event about the Deployment.
    fn event(&mut self, event_type: EventType, reason: &str, message: String) {
        let regarding = ObjectRef::to(&self.d, "apps/v1", "Deployment");
        self.ctx
            .record(EventNote::new(regarding, event_type, reason, message));
    }

    fn update_status(&mut self, status: Value) -> Result<(), ReconcileError> {
        let mut body = self.d.clone();
        body["status"] = status;
        self.d = Arc::unwrap_or_clone(self.ctx.send(client::update_status_object(
            &self.principal,
            deployments(),
            body,
        ))?);
        Ok(())
    }

    fn update_rs(&mut self, rs: Value) -> Result<Value, ReconcileError> {
        Ok(Arc::unwrap_or_clone(self.ctx.send(
            client::update_object(&self.principal, replicasets(), rs),
        )?))
    }
}

impl Reconciler for DeploymentController {
    fn name(&self) -> String {
        "deployment-controller".into()
    }

    fn principal(&self) -> String {
        crate::api::principals::DEPLOYMENT_CONTROLLER.into()
    }

    fn event_api(&self) -> Option<EventApi> {
        Some(EventApi::CoreV1 {
            component: "deployment-controller".into(),
            host: String::new(),
        })
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        // Pods too, for Recreate (kube's deployment controller has a pod informer with a delete
        // handler only).
        *gr == deployments() || *gr == replicasets() || *gr == pods()
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        cache: &Informer,
    ) -> Vec<ObjectKey> {
        if ev.key.gr == deployments() {
            return vec![ObjectKey::clone(&ev.key)];
        }
        if ev.key.gr == pods() {
            return recreate_without_pods(ev, new, cache).into_iter().collect();
        }
        // ReplicaSet resyncs (same resourceVersion) are ignored.
        if old.is_some_and(|o| {
            str_at(o, "/metadata/resourceVersion") == str_at(new, "/metadata/resourceVersion")
        }) {
            return Vec::new();
        }
        let mut keys: Vec<ObjectKey> = owner_key(new, &ev.key, "Deployment", deployments())
            .into_iter()
            .collect();
        if let Some(o) = old.and_then(|o| owner_key(o, &ev.key, "Deployment", deployments())) {
            if !keys.contains(&o) {
                keys.push(o);
            }
        }
        keys
    }

    fn max_retries(&self) -> Option<u32> {
        Some(15)
    }

    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let Some(d) = ctx.cache.get(key).map(|d| d.as_ref().clone()) else {
            return Ok(ReconcileAction::AwaitChange);
        };
        let spec = DeploymentSpec::from_object(&d);
        let principal = self.principal();
        let uid = meta::uid(&d).to_owned();
        let mut rss: Vec<Value> = ctx
            .cache
            .owned_by(&uid)
            .filter(|o| o.field("kind").and_then(Value::as_str) == Some("ReplicaSet"))
            .map(|o| o.as_ref().clone())
            .collect();
        rss.sort_by(by_creation);
        let mut sync = Sync {
            ctx,
            d,
            spec,
            principal,
        };
        let selector_empty = sync
            .d
            .at("/spec/selector")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty);
        if selector_empty {
            // syncDeployment: a selector that selects everything is refused with a warning.
            sync.event(
                EventType::Warning,
                "SelectingAll",
                "This deployment is selecting all pods. A non-empty selector is required.".into(),
            );
            let generation = meta::generation(&sync.d);
            let mut status = sync.status();
            if num(&status, "observedGeneration") < generation {
                status["observedGeneration"] = json!(generation);
                sync.update_status(status)?;
            }
            return Ok(ReconcileAction::AwaitChange);
        }
        if meta::is_terminating(&sync.d) {
            let new_rs = sync.new_rs(&mut rss, false)?;
            return sync.sync_status(&rss, new_rs);
        }
        sync.check_paused()?;
        if sync.spec.paused {
            let new_rs = sync.new_rs(&mut rss, false)?;
            sync.proportional_scale(&mut rss, new_rs)?;
            sync.cleanup(&rss, new_rs)?;
            return sync.sync_status(&rss, new_rs);
        }
        // isScalingEvent
        let new_rs = sync.new_rs(&mut rss, false)?;
        let scaling = rss.iter().any(|rs| {
            rs_spec(rs) > 0
                && meta::annotation(rs, DESIRED_REPLICAS)
                    .and_then(|s| s.parse::<i64>().ok())
                    .is_some_and(|d| d != sync.spec.replicas)
        });
        if scaling {
            sync.proportional_scale(&mut rss, new_rs)?;
            return sync.sync_status(&rss, new_rs);
        }
        if sync.spec.recreate {
            sync.rollout_recreate(&mut rss)
        } else {
            sync.rollout_rolling(&mut rss)
        }
    }
}
