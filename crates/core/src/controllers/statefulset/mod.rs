//! The StatefulSet controller, a port of kube 1.32's pkg/controller/statefulset: Pods named
//! `<set>-<ordinal>` created and removed in ordinal order (OrderedReady) or all at once
//! (Parallel), each waiting for its predecessors to be Running, Ready and available; the
//! RollingUpdate that replaces the highest ordinal not at the update revision down to the
//! partition, one Pod at a time, and OnDelete; the revision history in ControllerRevisions;
//! and the status counts with currentRevision/updateRevision, completed when every replica is
//! updated and ready [stateful_set.go `sync`, `syncStatefulSet` and the pod handlers;
//! stateful_set_control.go `UpdateStatefulSet`, `performUpdate`, `updateStatefulSet`,
//! `processReplica`, `processCondemned`, `updateStatefulSetStatus`; stateful_pod_control.go
//! `CreateStatefulPod`, `UpdateStatefulPod`, `DeleteStatefulPod`, `recordPodEvent`;
//! stateful_set_status_updater.go].
//!
//! Simplifications (docs/fidelity.md, "StatefulSet controller"): pods and revisions are
//! claimed by controllerRef only (no adoption of orphans, no release of pods whose labels no
//! longer match); PersistentVolumeClaims are not simulated, so `volumeClaimTemplates` give the
//! Pods their claim volumes but no claims are created; the status write and the revision
//! renumbering and a pod's identity repair are tried once, and a conflict fails the sync to its
//! rate-limited retry (kube retries them against its informer cache within the sync).

pub mod history;
pub mod identity;

use crate::api::meta::Fields;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::json::{json, Map, Value};

use self::identity::{
    apply_revision, identity_matches, in_ordinal_range, is_created, is_healthy, is_member_of,
    is_running_and_available, is_running_and_ready, is_terminal, new_versioned_pod, ordinal,
    pod_revision, replicas, start_ordinal, storage_matches, update_identity, update_storage,
};
use super::daemonset::controllerrevisions;
use super::util::pods;
use crate::api::meta::{self, str_at, JsonPointer};
use crate::api::selector::Selector;
use crate::api::{
    ApiError, ApiRequest, GroupResource, ObjectKey, StatusReason, WatchEvent, WatchEventType,
};
use crate::runtime::client;
use crate::runtime::informer::{pod_is_ready, Informer};
use crate::runtime::{
    Ctx, EventApi, EventNote, EventType, ObjectRef, ReconcileAction, ReconcileError, Reconciler,
};
use crate::time::SimTime;

pub fn statefulsets() -> GroupResource {
    crate::group_resource!("apps", "statefulsets")
}

/// The StatefulSet as its events and owner references name it.
pub(crate) const SET_REF: (&str, &str) = ("apps/v1", "StatefulSet");

/// `MaxBatchSize`: the largest slow-start batch of the Parallel policy.
const MAX_BATCH_SIZE: usize = 500;

/// kube's StatefulSet controller keeps no state between syncs (no expectations: pod names are
/// fixed, so a second create of the same ordinal is `AlreadyExists`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StatefulSetController;

/// The `StatefulSetStatus` one sync computes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetStatus {
    pub observed_generation: i64,
    pub replicas: i64,
    pub ready: i64,
    pub current: i64,
    pub updated: i64,
    pub available: i64,
    pub current_revision: String,
    pub update_revision: String,
    pub collision_count: i64,
}

impl SetStatus {
    /// `updateStatus` over `computeReplicaStatus` of each list: created pods, running and
    /// ready ones, available ones among those, and created, non-terminating pods at the
    /// current and at the update revision.
    fn count<'a>(&mut self, min_ready: i64, now: SimTime, pods: impl Iterator<Item = &'a Value>) {
        (
            self.replicas,
            self.ready,
            self.available,
            self.current,
            self.updated,
        ) = (0, 0, 0, 0, 0);
        for pod in pods {
            if is_created(pod) {
                self.replicas += 1;
            }
            if is_running_and_ready(pod) {
                self.ready += 1;
                if is_running_and_available(pod, min_ready, now) {
                    self.available += 1;
                }
            }
            if is_created(pod) && !meta::is_terminating(pod) {
                let rev = pod_revision(pod);
                if rev == self.current_revision {
                    self.current += 1;
                }
                if rev == self.update_revision {
                    self.updated += 1;
                }
            }
        }
    }

    /// `StatefulSetStatus` as Go encodes it [k8s.io/api apps/v1 types.go]: field order, and
    /// omitempty on all but replicas, the collision count pointer and availableReplicas.
    pub fn to_json(&self) -> Value {
        let mut s = Map::new();
        if self.observed_generation != 0 {
            s.insert("observedGeneration", json!(self.observed_generation));
        }
        s.insert("replicas", json!(self.replicas));
        for (k, v) in [
            ("readyReplicas", self.ready),
            ("currentReplicas", self.current),
            ("updatedReplicas", self.updated),
        ] {
            if v != 0 {
                s.insert(k, json!(v));
            }
        }
        for (k, v) in [
            ("currentRevision", &self.current_revision),
            ("updateRevision", &self.update_revision),
        ] {
            if !v.is_empty() {
                s.insert(k, json!(v));
            }
        }
        s.insert("collisionCount", json!(self.collision_count));
        s.insert("availableReplicas", json!(self.available));
        Value::Object(s)
    }
}

fn int(set: &Value, ptr: &str) -> i64 {
    meta::i64_at(set, ptr).unwrap_or(0)
}

/// `completeRollingUpdate`: once every replica is updated and ready, the update revision
/// becomes the current one.
pub fn complete_rolling_update(set: &Value, status: &mut SetStatus) {
    let want = replicas(set);
    if str_at(set, "/spec/updateStrategy/type") == "RollingUpdate"
        && status.updated == want
        && status.ready == want
        && status.replicas == want
    {
        status.current = status.updated;
        status.current_revision = status.update_revision.clone();
    }
}

/// `inconsistentStatus`: whether the computed status differs from the stored one.
pub fn inconsistent_status(set: &Value, status: &SetStatus) -> bool {
    status.observed_generation > int(set, "/status/observedGeneration")
        || status.replicas != int(set, "/status/replicas")
        || status.current != int(set, "/status/currentReplicas")
        || status.ready != int(set, "/status/readyReplicas")
        || status.updated != int(set, "/status/updatedReplicas")
        || status.current_revision != str_at(set, "/status/currentRevision")
        || status.available != int(set, "/status/availableReplicas")
        || status.update_revision != str_at(set, "/status/updateRevision")
}

/// `recordPodEvent`: `Successful<Verb>` or `Failed<Verb>` on the set.
fn record_pod_event<T>(
    ctx: &mut Ctx<'_>,
    set: &Value,
    verb: &str,
    pod: &str,
    result: &Result<T, ApiError>,
) {
    let title = format!("{}{}", verb[..1].to_uppercase(), &verb[1..]);
    let (event_type, reason, message) = match result {
        Ok(_) => (
            EventType::Normal,
            format!("Successful{title}"),
            format!(
                "{verb} Pod {pod} in StatefulSet {} successful",
                meta::name(set)
            ),
        ),
        Err(e) => (
            EventType::Warning,
            format!("Failed{title}"),
            format!(
                "{verb} Pod {pod} in StatefulSet {} failed error: {}",
                meta::name(set),
                e.message
            ),
        ),
    };
    ctx.record(EventNote::new(
        ObjectRef::to(set, SET_REF.0, SET_REF.1),
        event_type,
        &reason,
        message,
    ));
}

/// What one pass over the pods decided: whether to stop this sync, and the first error.
type Step = Result<bool, ReconcileError>;

impl StatefulSetController {
    pub fn new() -> Self {
        Self
    }

    /// `CreateStatefulPod` (no claims to create first): an `AlreadyExists` is returned
    /// without an event.
    fn create_pod(
        &self,
        ctx: &mut Ctx<'_>,
        set: &Value,
        pod: &Value,
    ) -> Result<(), ReconcileError> {
        let created = ctx.send(ApiRequest::create(
            &self.principal(),
            pods(),
            meta::namespace(set),
            pod.clone(),
        ));
        if !matches!(&created, Err(e) if e.reason == StatusReason::AlreadyExists) {
            record_pod_event(ctx, set, "create", meta::name(pod), &created);
        }
        created.map(|_| ()).map_err(Into::into)
    }

    /// `DeleteStatefulPod`.
    fn delete_pod(&self, ctx: &mut Ctx<'_>, set: &Value, pod: &Value) -> Result<(), ApiError> {
        let deleted = ctx.send(ApiRequest::delete(
            &self.principal(),
            pods(),
            meta::namespace(set),
            meta::name(pod),
        ));
        record_pod_event(ctx, set, "delete", meta::name(pod), &deleted);
        deleted.map(|_| ())
    }

    /// `UpdateStatefulPod`: the identity and claim volumes restored, and the pod updated
    /// (once; see the module's simplifications).
    fn update_pod(
        &self,
        ctx: &mut Ctx<'_>,
        update_set: &Value,
        pod: &Value,
    ) -> Result<(), ReconcileError> {
        let mut body = pod.clone();
        if !identity_matches(update_set, &body) {
            update_identity(update_set, &mut body);
        }
        if !storage_matches(update_set, &body) {
            update_storage(update_set, &mut body);
        }
        let updated = ctx.send(client::update_object(&self.principal(), pods(), body));
        record_pod_event(ctx, update_set, "update", meta::name(pod), &updated);
        updated.map(|_| ()).map_err(Into::into)
    }

    /// `processReplica`: true when this sync must stop here.
    fn process_replica(
        &self,
        ctx: &mut Ctx<'_>,
        set: &Value,
        update_set: &Value,
        monotonic: bool,
        pod: &Value,
        min_ready: i64,
    ) -> Step {
        // A Failed or Succeeded pod is deleted; the next sync, after it is gone, makes anew.
        if is_terminal(pod) {
            if !meta::is_terminating(pod) {
                self.delete_pod(ctx, set, pod)?;
            }
            return Ok(true);
        }
        if !is_created(pod) {
            self.create_pod(ctx, set, pod)?;
            if monotonic {
                return Ok(true);
            }
        }
        if meta::is_terminating(pod) && monotonic {
            return Ok(true);
        }
        if !is_running_and_ready(pod) && monotonic {
            return Ok(true);
        }
        if !is_running_and_available(pod, min_ready, ctx.now) && monotonic {
            return Ok(true);
        }
        if identity_matches(set, pod) && storage_matches(set, pod) {
            return Ok(false);
        }
        self.update_pod(ctx, update_set, pod)?;
        Ok(false)
    }

    /// `processCondemned`: true when this sync must stop here.
    fn process_condemned(
        &self,
        ctx: &mut Ctx<'_>,
        set: &Value,
        first_unhealthy: Option<&str>,
        monotonic: bool,
        pod: &Value,
        min_ready: i64,
    ) -> Step {
        if meta::is_terminating(pod) {
            return Ok(monotonic);
        }
        let is_first_unhealthy = first_unhealthy == Some(meta::name(pod));
        if !is_running_and_ready(pod) && monotonic && !is_first_unhealthy {
            return Ok(true);
        }
        if !is_running_and_available(pod, min_ready, ctx.now) && monotonic && !is_first_unhealthy {
            return Ok(true);
        }
        self.delete_pod(ctx, set, pod)?;
        Ok(true)
    }

    /// `updateStatefulSet`: the status, and the pod operations in kube's order (scaling
    /// before updating). The status is returned with the error that ended the pass, if any.
    fn update_stateful_set(
        &self,
        ctx: &mut Ctx<'_>,
        set: &Value,
        revs: &history::Revisions,
        claimed: &[Arc<Value>],
    ) -> (SetStatus, Result<(), ReconcileError>) {
        let (current_name, update_name) = (meta::name(&revs.current), meta::name(&revs.update));
        let current_set = apply_revision(set, revs.current.field("data").unwrap_or(&Value::Null));
        let update_set = apply_revision(set, revs.update.field("data").unwrap_or(&Value::Null));
        let min_ready = int(set, "/spec/minReadySeconds");
        let now = ctx.now;
        let mut status = SetStatus {
            observed_generation: meta::generation(set),
            current_revision: current_name.to_owned(),
            update_revision: update_name.to_owned(),
            collision_count: revs.collision_count,
            ..SetStatus::default()
        };
        status.count(min_ready, now, claimed.iter().map(AsRef::as_ref));

        // The replicas by ordinal, placeholders at the right revision for the missing ones,
        // and the condemned pods (valid ordinals outside the range), highest first.
        let start = start_ordinal(set);
        let mut slots: Vec<Option<Value>> = vec![None; replicas(set).max(0) as usize];
        let mut condemned: Vec<Value> = Vec::new();
        for pod in claimed {
            if in_ordinal_range(pod, set) {
                slots[(ordinal(pod) - start) as usize] = Some(pod.as_ref().clone());
            } else if ordinal(pod) >= 0 {
                condemned.push(pod.as_ref().clone());
            }
        }
        let replica_pods: Vec<Value> = slots
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                p.unwrap_or_else(|| {
                    let ord = start + i as i64;
                    new_versioned_pod(&current_set, &update_set, current_name, update_name, ord)
                })
            })
            .collect();
        condemned.sort_by_key(|p| std::cmp::Reverse(ordinal(p)));
        // The first unhealthy replica, else the lowest-ordinal unhealthy condemned pod.
        let first_unhealthy: Option<String> = replica_pods
            .iter()
            .chain(condemned.iter().rev())
            .find(|p| !is_healthy(p))
            .map(|p| meta::name(p).to_owned());
        if meta::is_terminating(set) {
            return (status, Ok(()));
        }
        let monotonic = str_at(set, "/spec/podManagementPolicy") != "Parallel";
        let all = |status: &mut SetStatus| {
            status.count(min_ready, now, replica_pods.iter().chain(condemned.iter()));
        };
        let replicas_pass = run_for_all(replica_pods.len(), monotonic, |i| {
            self.process_replica(
                ctx,
                set,
                &update_set,
                monotonic,
                &replica_pods[i],
                min_ready,
            )
        });
        if !matches!(replicas_pass, Ok(false)) {
            all(&mut status);
            return (status, replicas_pass.map(|_| ()));
        }
        // (fixPodClaim has nothing to do: there are no claims.)
        let condemned_pass = run_for_all(condemned.len(), monotonic, |i| {
            let first = first_unhealthy.as_deref();
            self.process_condemned(ctx, set, first, monotonic, &condemned[i], min_ready)
        });
        if !matches!(condemned_pass, Ok(false)) {
            all(&mut status);
            return (status, condemned_pass.map(|_| ()));
        }
        all(&mut status);
        if str_at(set, "/spec/updateStrategy/type") == "OnDelete" {
            return (status, Ok(()));
        }
        // The rolling update: from the highest index down to the partition, the first pod
        // not at the update revision goes; an unhealthy one on the way makes it wait.
        let update_min = set
            .at("/spec/updateStrategy/rollingUpdate")
            .filter(|v| !v.is_null())
            .map_or(0, |ru| {
                ru.field("partition").and_then(Value::as_i64).unwrap_or(0)
            });
        for target in (0..replica_pods.len()).rev() {
            if (target as i64) < update_min {
                break;
            }
            let pod = &replica_pods[target];
            if pod_revision(pod) != update_name && !meta::is_terminating(pod) {
                if let Err(e) = self.delete_pod(ctx, set, pod) {
                    if e.reason != StatusReason::NotFound {
                        return (status, Err(e.into()));
                    }
                }
                status.current -= 1;
                return (status, Ok(()));
            }
            if !is_healthy(pod) {
                return (status, Ok(()));
            }
        }
        (status, Ok(()))
    }

    /// The pods the set controls whose names make them members and whose labels it selects
    /// (`getPodsForStatefulSet` without adoption or release).
    fn claimed_pods(cache: &Informer, set: &Value, selector: &Selector) -> Vec<Arc<Value>> {
        let uid = meta::uid(set);
        let mut out: Vec<Arc<Value>> = cache
            .owned_by(uid)
            .filter(|p| meta::controller_of(p).is_some_and(|(k, _, u)| k == SET_REF.1 && u == uid))
            .filter(|p| is_member_of(set, p))
            .filter(|p| selector.matches(p.at("/metadata/labels").and_then(Value::as_object)))
            .cloned()
            .collect();
        out.sort_by(|a, b| meta::name(a).cmp(meta::name(b)));
        out
    }
}

/// `runForAll`: `Ok(true)` when the pass stopped early (monotonic) or failed.
fn run_for_all(n: usize, monotonic: bool, mut f: impl FnMut(usize) -> Step) -> Step {
    if monotonic {
        for i in 0..n {
            if f(i)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    // slowStartBatch(1, n, fn): batches of 1, 2, 4, ... (at most MaxBatchSize); a batch with an
    // error ends the pass with it.
    let mut pos = 0;
    let mut batch = n.min(1);
    while batch > 0 {
        let mut first_err = None;
        for i in pos..pos + batch {
            if let Err(e) = f(i) {
                first_err.get_or_insert(e);
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        pos += batch;
        batch = (2 * batch).min(n - pos).min(MAX_BATCH_SIZE);
    }
    Ok(false)
}

impl Reconciler for StatefulSetController {
    fn name(&self) -> String {
        "statefulset-controller".into()
    }

    fn event_api(&self) -> Option<EventApi> {
        Some(EventApi::CoreV1 {
            component: "statefulset-controller".into(),
            host: String::new(),
        })
    }

    fn principal(&self) -> String {
        crate::api::principals::STATEFUL_SET_CONTROLLER.into()
    }

    /// Sets and pods have handlers; revisions are read from the lister only.
    fn watches(&self, gr: &GroupResource) -> bool {
        *gr == statefulsets() || *gr == pods() || *gr == controllerrevisions()
    }

    /// The pod informer holds only pods a StatefulSet controls (orphans are not adopted here),
    /// the revision informer only a StatefulSet's.
    fn accepts(&self, gr: &GroupResource, obj: &Value) -> bool {
        if *gr == pods() || *gr == controllerrevisions() {
            return meta::controller_kind(obj) == Some(SET_REF.1);
        }
        true
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        cache: &Informer,
    ) -> Vec<ObjectKey> {
        self.keys_after(ev, old, new, cache)
            .into_iter()
            .filter(|(_, ms)| *ms == 0)
            .map(|(k, _)| k)
            .collect()
    }

    /// The set's handlers enqueue it; `addPod`, `updatePod` and `deletePod` enqueue the pod's
    /// controlling set (`resolveControllerRef`: same name and UID), and `updatePod` again
    /// minReadySeconds + 1 s after the pod turns ready.
    fn keys_after(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        cache: &Informer,
    ) -> Vec<(ObjectKey, u64)> {
        let gr = &ev.key.gr;
        if *gr == statefulsets() {
            return vec![(ObjectKey::clone(&ev.key), 0)];
        }
        if *gr != pods() {
            return Vec::new();
        }
        let resolve = |pod: &Value| -> Option<(ObjectKey, Arc<Value>)> {
            let (kind, name, uid) = meta::controller_of(pod)?;
            if kind != SET_REF.1 {
                return None;
            }
            let key = ObjectKey::new(statefulsets(), meta::namespace(pod), name);
            let set = cache.get(&key).filter(|s| meta::uid(s) == uid)?.clone();
            Some((key, set))
        };
        let mut keys = Vec::new();
        if ev.event_type == WatchEventType::Modified {
            let Some(o) = old else {
                return keys;
            };
            if str_at(o, "/metadata/resourceVersion") == str_at(new, "/metadata/resourceVersion") {
                return keys;
            }
            if meta::controller_ref(o) != meta::controller_ref(new) {
                if let Some((k, _)) = resolve(o) {
                    keys.push((k, 0));
                }
            }
            if let Some((k, set)) = resolve(new) {
                keys.push((k.clone(), 0));
                let min_ready = int(&set, "/spec/minReadySeconds");
                if !pod_is_ready(o) && pod_is_ready(new) && min_ready > 0 {
                    keys.push((k, min_ready as u64 * 1000 + 1000));
                }
            }
            return keys;
        }
        keys.extend(resolve(new).map(|(k, _)| (k, 0)));
        keys
    }

    /// `sync` and `syncStatefulSet` with `UpdateStatefulSet`: revisions, pods, status, history;
    /// then one more sync after minReadySeconds while replicas are not all available.
    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let Some(set) = ctx.cache.get(key).cloned() else {
            return Ok(ReconcileAction::AwaitChange);
        };
        // A selector that does not parse is not retried.
        let Ok(selector) =
            Selector::from_label_selector(set.at("/spec/selector").unwrap_or(&Value::Null))
        else {
            return Ok(ReconcileAction::AwaitChange);
        };
        let principal = self.principal();
        let claimed = Self::claimed_pods(ctx.cache, &set, &selector);
        let revisions = history::list(ctx, &set);
        let revs = match history::current_and_update(ctx, &principal, &set, &revisions) {
            Ok(r) => r,
            Err(e) => {
                history::truncate(ctx, &principal, &set, &claimed, &revisions, &[])?;
                return Err(e);
            }
        };
        let (mut status, pods_result) = self.update_stateful_set(ctx, &set, &revs, &claimed);
        // updateStatefulSetStatus, even after an error in the pass.
        complete_rolling_update(&set, &mut status);
        let status_result = if inconsistent_status(&set, &status) {
            let mut body = set.as_ref().clone();
            body["status"] = status.to_json();
            ctx.send(client::update_status_object(
                &principal,
                statefulsets(),
                body,
            ))
            .map(|_| ())
            .map_err(ReconcileError::from)
        } else {
            Ok(())
        };
        let live = [meta::name(&revs.current), meta::name(&revs.update)];
        let truncated = history::truncate(ctx, &principal, &set, &claimed, &revisions, &live);
        pods_result?;
        status_result?;
        truncated?;
        let min_ready = int(&set, "/spec/minReadySeconds");
        if min_ready > 0 && status.available != replicas(&set) {
            return Ok(ReconcileAction::RequeueAfter {
                ms: min_ready as u64 * 1000,
            });
        }
        Ok(ReconcileAction::AwaitChange)
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
