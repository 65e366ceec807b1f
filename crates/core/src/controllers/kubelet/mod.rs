//! A kubelet for one Node: runs the Pods bound to it through simulated image pulls, container
//! start and readiness, and reports Pod status the way kubelet's status generation does
//! [kubernetes pkg/kubelet/status/generate.go, kuberuntime]: phase, the PodReadyToStartContainers,
//! Initialized, ContainersReady and Ready conditions, container states with ContainerCreating,
//! ErrImagePull/ImagePullBackOff and CrashLoopBackOff (back-off 10 s doubling to 5 min).
//!
//! Like kubelet's status manager [kubernetes pkg/kubelet/status/status_manager.go], it keeps the
//! status it last reported per Pod and is the source of truth for the parts it owns (phase,
//! container statuses, and the PodScheduled, PodReadyToStartContainers, Initialized,
//! ContainersReady and Ready conditions): its own changes are written at once (`syncBatch` on
//! change), and a different status written by someone else is put back at the next periodic sync
//! (`syncBatch(all)` every 10 s, `needsReconcile`), keeping conditions kubelet does not own.
//! The 10 s ticks count from t=0 (every kubelet starts with the world).//!
//! Split like kube's kubelet: `container_runtime` (kuberuntime: pulls, starts, back-off,
//! termination) and `status` (status generation and the status manager); this module is the
//! reconciler that drives them.

mod container_runtime;
mod prober;
mod status;

pub use container_runtime::normalized_image;
pub use status::{go_duration, STATUS_SYNC_PERIOD_MS};

use crate::api::meta::Fields;
use crate::json::path;
use container_runtime::{PodRuntime, Reported, Stage};
use serde::{Deserialize, Serialize};
use status::{next_status_sync, owned_equal};

use std::sync::Arc;

use crate::json::Value;
use imbl::OrdMap;

use crate::api::meta::{self, json_eq_opt, str_at};
use crate::api::{
    ApiRequest, GroupResource, ObjectKey, PatchType, RequestBody, StatusReason, Subresource, Verb,
    WatchEvent, WatchEventType,
};
use crate::controllers::util::pods;
use crate::runtime::Informer;
use crate::runtime::{Ctx, EventApi, ReconcileAction, ReconcileError, Reconciler};
use crate::time::SimTime;

/// kubelet's initial image-pull and container-restart back-off.
pub const BACKOFF_INITIAL_MS: u64 = 10_000;
/// kubelet's maximum back-off (`MaxContainerBackOff`).
pub const BACKOFF_MAX_MS: u64 = 300_000;
/// How long ErrImagePull shows before the next sync reports ImagePullBackOff.
const ERR_IMAGE_PULL_VISIBLE_MS: u64 = 1_000;
/// A back-off entry older than this at a container's exit is forgotten, so a container that ran
/// for more than ten minutes restarts at once again (client-go `flowcontrol.Backoff` hasExpired:
/// `eventTime - lastUpdate > 2 * maxDuration`, the kubelet's `MaxContainerBackOff` of 5 min).
const BACKOFF_EXPIRY_MS: u64 = 2 * BACKOFF_MAX_MS;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Kubelet {
    node: String,
    node_index: u32,
    pods: OrdMap<ObjectKey, PodRuntime>,
    next_ip: u32,
}

impl Kubelet {
    pub fn new(node: &str, node_index: u32) -> Self {
        Kubelet {
            node: node.to_owned(),
            node_index,
            pods: OrdMap::new(),
            next_ip: 0,
        }
    }

    pub fn node(&self) -> &str {
        &self.node
    }
}

impl Reconciler for Kubelet {
    fn name(&self) -> String {
        format!("kubelet/{}", self.node)
    }

    fn principal(&self) -> String {
        crate::api::principals::kubelet(&self.node)
    }

    fn event_api(&self) -> Option<EventApi> {
        Some(EventApi::CoreV1 {
            component: "kubelet".into(),
            host: self.node.clone(),
        })
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        *gr == pods()
    }

    fn accepts(&self, _gr: &GroupResource, obj: &Value) -> bool {
        str_at(obj, path!("/spec/nodeName")) == self.node
    }

    /// The kubelet's watch is `fieldSelector=spec.nodeName=<node>` (`NewSourceApiserver`), and
    /// a Pod's `spec.nodeName`, once bound, never changes (`ValidatePodUpdate`; a binding of a
    /// bound Pod is refused).
    fn selected_node(&self, _gr: &GroupResource) -> Option<&str> {
        Some(&self.node)
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        _cache: &Informer,
    ) -> Vec<ObjectKey> {
        if ev.event_type == WatchEventType::Deleted {
            self.pods.remove(&*ev.key);
            return Vec::new();
        }
        // Our own status writes come back as events: a sync is needed for a spec change, a new
        // deletionTimestamp, or when someone else changed the status kubelet owns (put back at
        // the periodic sync).
        let newly_deleting =
            meta::is_terminating(new) && old.is_some_and(|o| !meta::is_terminating(o));
        if !newly_deleting && old.is_some_and(|o| json_eq_opt(o.field("spec"), new.field("spec"))) {
            let foreign = self.pods.get(&*ev.key).is_some_and(|rt| {
                rt.reported
                    .as_ref()
                    .is_some_and(|r| !owned_equal(Some(r.status()), new.field("status")))
            });
            if !foreign {
                return Vec::new();
            }
        }
        vec![ObjectKey::clone(&ev.key)]
    }

    fn reset(&mut self) {
        self.pods = OrdMap::new();
    }

    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let Some(pod) = ctx.cache.get(key).cloned() else {
            self.pods.remove(key);
            return Ok(ReconcileAction::AwaitChange);
        };
        let mut rt = match self.pods.get(key) {
            Some(rt) => rt.clone(),
            None => self.start(&pod, ctx),
        };
        self.advance(&mut rt, &pod, ctx);
        if meta::is_terminating(&pod) {
            self.terminate(&mut rt, &pod, ctx);
            self.advance(&mut rt, &pod, ctx);
        }
        let status = self.status(&rt, &pod, ctx);
        let mut wake = Self::next_wake(&rt);
        let mut diverged = !json_eq_opt(Some(&status), pod.field("status"));
        let reported = json_eq_opt(rt.reported.as_ref().map(Reported::status), Some(&status));
        if diverged && reported && owned_equal(Some(&status), pod.field("status")) {
            // Someone else changed only what the status manager does not compare (a
            // condition's times): left alone, as kube's `needsReconcile` leaves it.
            diverged = false;
        } else if diverged && reported {
            // Only someone else's write differs from what kubelet reported: its status manager
            // writes the truth back at the next periodic sync.
            let due = *rt.status_sync_at.get_or_insert(next_status_sync(ctx.now));
            if due > ctx.now {
                wake = Some(wake.map_or(due, |w| w.min(due)));
                self.pods.insert(key.clone(), rt);
                return Ok(requeue(wake, ctx.now));
            }
        }
        rt.status_sync_at = None;
        if !diverged {
            rt.reported = Some(Reported::of(status.clone(), Some(&pod)));
        }
        self.pods.insert(key.clone(), rt);
        if diverged {
            let req = ApiRequest {
                principal: self.principal(),
                verb: Verb::Patch,
                gr: pods(),
                namespace: key.namespace.to_string(),
                name: key.name.to_string(),
                subresource: Some(Subresource::Status),
                // A plain copy of the status: `json!` would rebuild it through its serializer.
                body: RequestBody::Patch(PatchType::Merge, status_patch(status.clone())),
                label_selector: None,
            };
            match ctx.send(req) {
                Ok(stored) => {
                    if let Some(rt) = self.pods.get_mut(key) {
                        rt.reported = Some(Reported::of(status, Some(&stored)));
                    }
                }
                Err(e) if e.reason == StatusReason::NotFound => {
                    self.pods.remove(key);
                    return Ok(ReconcileAction::AwaitChange);
                }
                Err(e) => return Err(e.into()),
            }
        }
        // A stopped pod, or a terminal one someone deletes, goes once its status is in the API
        // (the status manager's `canBeDeleted`).
        let stage = self.pods.get(key).map(|r| &r.stage);
        if matches!(stage, Some(Stage::Stopped { .. }))
            || matches!(stage, Some(Stage::Exited { .. })) && meta::is_terminating(&pod)
        {
            return self.delete_stopped(key, &pod, ctx);
        }
        Ok(requeue(wake, ctx.now))
    }
}

/// `{"status": status}`, the status manager's merge patch.
fn status_patch(status: Value) -> Value {
    let mut body = crate::json::Map::new();
    body.insert("status", status);
    Value::Object(body)
}

fn requeue(wake: Option<SimTime>, now: SimTime) -> ReconcileAction {
    match wake {
        Some(t) => ReconcileAction::RequeueAfter {
            ms: t.as_ms().saturating_sub(now.as_ms()).max(1),
        },
        None => ReconcileAction::AwaitChange,
    }
}
