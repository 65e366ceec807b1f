//! A deliberately wrong controller: it copies `status.observedGeneration` into
//! `spec.lastObservedGeneration` of the objects it watches. Every such spec write bumps
//! `metadata.generation`, the owning controller observes the new generation, and the naive
//! controller writes spec again: the feedback loop the spec/status model exists to prevent. The
//! engine detects the climbing generation and reports it.

use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::json::{json, Value};

use crate::api::meta;
use crate::api::{ApiRequest, GroupResource, ObjectKey, PatchType, WatchEvent};
use crate::runtime::Informer;
use crate::runtime::{Ctx, ReconcileAction, ReconcileError, Reconciler};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NaiveController {
    pub resource: GroupResource,
}

impl NaiveController {
    pub fn new(resource: GroupResource) -> Self {
        NaiveController { resource }
    }
}

impl Reconciler for NaiveController {
    fn name(&self) -> String {
        "naive-controller".into()
    }

    fn principal(&self) -> String {
        "system:serviceaccount:default:naive-controller".into()
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        *gr == self.resource
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        _old: Option<&Arc<Value>>,
        _new: &Arc<Value>,
        _cache: &Informer,
    ) -> Vec<ObjectKey> {
        vec![ObjectKey::clone(&ev.key)]
    }

    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let Some(obj) = ctx.cache.get(key).cloned() else {
            return Ok(ReconcileAction::AwaitChange);
        };
        let Some(observed) = meta::i64_at(&obj, "/status/observedGeneration") else {
            return Ok(ReconcileAction::AwaitChange);
        };
        if meta::i64_at(&obj, "/spec/lastObservedGeneration") == Some(observed) {
            return Ok(ReconcileAction::AwaitChange);
        }
        let patch = json!({"spec": {"lastObservedGeneration": observed}});
        ctx.send(ApiRequest::patch(
            &self.principal(),
            self.resource.clone(),
            &key.namespace,
            &key.name,
            PatchType::Merge,
            patch,
        ))?;
        Ok(ReconcileAction::AwaitChange)
    }
}
