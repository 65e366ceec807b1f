//! The Job controller [kubernetes 1.32 pkg/controller/job/job_controller.go], for NonIndexed
//! Jobs without a podFailurePolicy or successPolicy: pods are created up to `parallelism`
//! (slow-start batches, creation expectations) until `completions` succeed; each carries the
//! `batch.kubernetes.io/job-tracking` finalizer, which the controller removes once it has
//! counted the finished pod in `status.uncountedTerminatedPods`; failed pods are replaced after
//! the pod-failure back-off (`backoff`); past `backoffLimit` or `activeDeadlineSeconds` the Job
//! gets the interim `FailureTarget` condition, its running pods are deleted, and `Failed`
//! follows once none is terminating; a Job that has its completions gets `SuccessCriteriaMet`,
//! then `Complete` with `completionTime`. `suspend` deletes the active pods and sets
//! `Suspended`. The 1.32 feature gates are those of a default cluster: JobManagedBy,
//! JobPodReplacementPolicy and JobSuccessPolicy on, so terminal conditions are delayed behind
//! their interim ones and terminating pods are counted.
//!
//! Modelled as kube's handlers do: a new Job or a spec change syncs at once; pod events and
//! status-only Job updates sync after the 1 s batch period (`enqueueSyncJobBatched`); errors
//! back off from 1 s to 1 min (`DefaultJobApiBackOff`, `MaxJobApiBackOff`). Pods orphaned from
//! a Job, or of a finished or deleted one, lose the tracking finalizer (`syncOrphanPod`).
//! Not modelled (docs/fidelity.md): Indexed Jobs, podFailurePolicy, successPolicy,
//! backoffLimitPerIndex, adoption of orphans by selector, `ttlSecondsAfterFinished` (the TTL
//! controller).

mod backoff;
mod status;

pub use backoff::BackoffRecord;
pub use status::{is_finished, JobCondition, JobStatus};

use crate::api::meta::Fields;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::json::{json, Value};

use super::replicaset::{
    after_or_zero, max_container_restarts, phase_ordinal, pod_from_template, random_suffix,
    ready_since_ms, time_ms, ControlleeExpectations, EXPECTATIONS_TIMEOUT_MS,
};
use super::util::{jobs, pods, record_pod_control, PodOp};
use crate::api::meta::{self, str_at, JsonPointer};
use crate::api::{
    ApiRequest, GroupResource, ObjectKey, PatchType, StatusReason, WatchEvent, WatchEventType,
};
use crate::runtime::client;
use crate::runtime::informer::{pod_is_active, pod_is_ready, Informer};
use crate::runtime::{
    Ctx, EventApi, EventNote, EventType, ObjectRef, ReconcileAction, ReconcileError, Reconciler,
};
use crate::time::{parse_rfc3339_unix_ms, SimTime};

/// The finalizer a Job's pods carry until the controller has counted them
/// (`batch.JobTrackingFinalizer`).
pub const JOB_TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// `syncJobBatchPeriod`: pod events and status-only Job updates sync this much later.
pub const SYNC_JOB_BATCH_PERIOD_MS: u64 = 1_000;
/// `DefaultJobApiBackOff` and `MaxJobApiBackOff`: the work queue's failure back-off.
pub const JOB_API_BACKOFF_MS: (u64, u64) = (1_000, 60_000);
/// `MaxUncountedPods`: at most this many UIDs in `uncountedTerminatedPods` per sync.
pub const MAX_UNCOUNTED_PODS: usize = 500;
/// `MaxPodCreateDeletePerSync`.
pub const MAX_POD_CREATE_DELETE_PER_SYNC: i64 = 500;
/// The Job as its events and owner references name it.
const JOB_REF: (&str, &str) = ("batch/v1", "Job");

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct JobController {
    /// Pod creations and deletions each Job still waits to observe (`expectations`).
    expectations: BTreeMap<ObjectKey, ControlleeExpectations>,
    /// The pods whose finalizer removal each Job has sent and not yet seen
    /// (`finalizerExpectations`, `expectedRmFinalizers`).
    finalizer_removals: BTreeMap<ObjectKey, BTreeSet<String>>,
    /// Each Job's pod-failure back-off record (`podBackoffStore`).
    backoff: BTreeMap<ObjectKey, BackoffRecord>,
}

/// What one sync knows, kube's `syncJobCtx`.
struct SyncCtx {
    job: Value,
    status: JobStatus,
    pods: Vec<Arc<Value>>,
    active_pods: Vec<Arc<Value>>,
    succeeded: i64,
    failed: i64,
    ready: i64,
    terminating: i64,
    finished: Option<JobCondition>,
    new_backoff: BackoffRecord,
    /// When the Job counts as started, in Unix ms (set this sync, or read back).
    start_unix_ms: Option<i64>,
}

fn spec_i64(job: &Value, field: &str) -> Option<i64> {
    job.at(&format!("/spec/{field}")).and_then(Value::as_i64)
}

fn suspended(job: &Value) -> bool {
    job.at("/spec/suspend").and_then(Value::as_bool) == Some(true)
}

fn has_finalizer(pod: &Value) -> bool {
    meta::finalizers(pod)
        .iter()
        .any(|f| f == JOB_TRACKING_FINALIZER)
}

fn phase(pod: &Value) -> &str {
    str_at(pod, "/status/phase")
}

/// `onlyReplaceFailedPods`: `podReplacementPolicy: Failed`, or a podFailurePolicy.
fn only_replace_failed(job: &Value) -> bool {
    str_at(job, "/spec/podReplacementPolicy") == "Failed"
        || job
            .at("/spec/podFailurePolicy")
            .is_some_and(|p| !p.is_null())
}

/// `isPodFailed`: Failed, or (unless only failed pods are replaced) deleted before it
/// succeeded, so pods that never reach a phase are counted too.
fn is_pod_failed(pod: &Value, job: &Value) -> bool {
    if phase(pod) == "Failed" {
        return true;
    }
    if only_replace_failed(job) {
        return false;
    }
    meta::is_terminating(pod) && phase(pod) != "Succeeded"
}

/// `IsPodTerminating`: deleted and not yet in a terminal phase.
fn is_terminating_pod(pod: &Value) -> bool {
    meta::is_terminating(pod) && !matches!(phase(pod), "Succeeded" | "Failed")
}

/// `managedByExternalController`: a `spec.managedBy` other than the built-in controller's.
fn managed_externally(job: &Value) -> bool {
    let by = str_at(job, "/spec/managedBy");
    !by.is_empty() && by != "kubernetes.io/job-controller"
}

/// The Job that controls `obj`, when it is a `batch/v1` Job in the cache with that UID
/// (`resolveControllerRef`).
fn controlling_job<'a>(obj: &Value, ns: &str, cache: &'a Informer) -> Option<&'a Arc<Value>> {
    let (kind, name, uid) = meta::controller_of(obj)?;
    if kind != "Job" {
        return None;
    }
    let owner_api = meta::owner_refs(obj)
        .iter()
        .find(|r| r.field("controller").and_then(Value::as_bool) == Some(true))
        .map(|r| str_at(r, "/apiVersion").to_owned())
        .unwrap_or_default();
    if owner_api != "batch/v1" {
        return None;
    }
    cache
        .get(&ObjectKey::new(jobs(), ns, name))
        .filter(|j| meta::uid(j) == uid)
}

/// `controller.ActivePods.Less`: which pod of a Job goes first when some are removed.
fn remove_before(a: &Value, b: &Value) -> bool {
    let (na, nb) = (str_at(a, "/spec/nodeName"), str_at(b, "/spec/nodeName"));
    if na != nb && (na.is_empty() || nb.is_empty()) {
        return na.is_empty();
    }
    let (pa, pb) = (phase_ordinal(a), phase_ordinal(b));
    if pa != pb {
        return pa < pb;
    }
    let (ra, rb) = (pod_is_ready(a), pod_is_ready(b));
    if ra != rb {
        return !ra;
    }
    if ra && rb {
        let (ta, tb) = (ready_since_ms(a), ready_since_ms(b));
        if ta != tb {
            return after_or_zero(ta, tb);
        }
    }
    let (ca, cb) = (max_container_restarts(a), max_container_restarts(b));
    if ca != cb {
        return ca > cb;
    }
    let (ta, tb) = (
        time_ms(a, "/metadata/creationTimestamp"),
        time_ms(b, "/metadata/creationTimestamp"),
    );
    ta != tb && after_or_zero(ta, tb)
}

/// `removeTrackingFinalizerPatch`: a strategic merge patch that takes the finalizer away.
fn remove_finalizer_request(principal: &str, pod: &Value) -> ApiRequest {
    ApiRequest::patch(
        principal,
        pods(),
        meta::namespace(pod),
        meta::name(pod),
        PatchType::Strategic,
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER]}}),
    )
}

/// `pastBackoffLimitOnFailure`: with restartPolicy OnFailure, the restarts of the Job's running
/// and pending pods reach `backoffLimit` (any restart, for a limit of 0).
fn past_backoff_limit_on_failure(job: &Value, pods: &[Arc<Value>]) -> bool {
    if str_at(job, "/spec/template/spec/restartPolicy") != "OnFailure" {
        return false;
    }
    let restarts: i64 = pods
        .iter()
        .filter(|p| matches!(phase(p), "Running" | "Pending"))
        .flat_map(|p| {
            ["/status/initContainerStatuses", "/status/containerStatuses"]
                .into_iter()
                .filter_map(|ptr| p.at(ptr).and_then(Value::as_array))
                .flatten()
                .filter_map(|c| c.field("restartCount").and_then(Value::as_i64))
                .collect::<Vec<_>>()
        })
        .sum();
    let limit = spec_i64(job, "backoffLimit").unwrap_or(6);
    if limit == 0 {
        restarts > 0
    } else {
        restarts >= limit
    }
}

impl JobController {
    pub fn new() -> Self {
        Self::default()
    }

    /// `SatisfiedExpectations`.
    fn satisfied(&self, key: &ObjectKey, now: SimTime) -> bool {
        self.expectations.get(key).is_none_or(|e| {
            (e.adds <= 0 && e.dels <= 0)
                || now.as_ms() >= e.set_at.as_ms() + EXPECTATIONS_TIMEOUT_MS
        })
    }

    fn expect(&mut self, key: &ObjectKey, adds: i64, dels: i64, now: SimTime) {
        self.expectations.insert(
            key.clone(),
            ControlleeExpectations {
                adds,
                dels,
                set_at: now,
                deleting: BTreeSet::new(),
            },
        );
    }

    fn lower(&mut self, key: &ObjectKey, adds: i64, dels: i64) {
        if let Some(e) = self.expectations.get_mut(key) {
            e.adds -= adds;
            e.dels -= dels;
        }
    }

    fn removal_observed(&mut self, key: &ObjectKey, uid: &str) {
        if let Some(set) = self.finalizer_removals.get_mut(key) {
            set.remove(uid);
            if set.is_empty() {
                self.finalizer_removals.remove(key);
            }
        }
    }

    /// The pod handlers (`addPod`, `updatePod`, `deletePod`): expectations observed, then the
    /// owning Job batched; a pod with the finalizer and no live, unfinished Job goes to the
    /// orphan sync.
    fn pod_keys(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        pod: &Arc<Value>,
        cache: &Informer,
    ) -> Vec<(ObjectKey, u64)> {
        if ev.event_type == WatchEventType::Modified
            && old.is_some_and(|o| meta::resource_version(o) == meta::resource_version(pod))
        {
            return Vec::new();
        }
        let ns = ev.key.namespace.to_string();
        let orphan = || {
            if has_finalizer(pod) && ev.event_type != WatchEventType::Deleted {
                vec![(ObjectKey::clone(&ev.key), 0)]
            } else {
                Vec::new()
            }
        };
        let Some(job) = controlling_job(pod, &ns, cache) else {
            return orphan();
        };
        let deleted = ev.event_type == WatchEventType::Deleted;
        if (deleted || meta::is_terminating(pod)) && is_finished(job) {
            // deletePod: syncJob will not take this finalizer off.
            return orphan();
        }
        let key = ObjectKey::new(jobs(), &ns, meta::name(job));
        if deleted || meta::is_terminating(pod) {
            // deletePod, also for each update of a pod being deleted.
            self.lower(&key, 0, 1);
            if deleted || !has_finalizer(pod) {
                self.removal_observed(&key, meta::uid(pod));
            }
        } else {
            if ev.event_type == WatchEventType::Added {
                self.lower(&key, 1, 0);
            }
            if !has_finalizer(pod) {
                self.removal_observed(&key, meta::uid(pod));
            }
        }
        vec![(key, SYNC_JOB_BATCH_PERIOD_MS)]
    }

    /// `syncOrphanPod`: takes the finalizer off a pod no unfinished Job controls.
    fn sync_orphan_pod(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let Some(pod) = ctx.cache.get(key).cloned() else {
            return Ok(ReconcileAction::AwaitChange);
        };
        if let Some((kind, _, _)) = meta::controller_of(&pod) {
            if kind != "Job" {
                return Ok(ReconcileAction::AwaitChange);
            }
            if let Some(job) = controlling_job(&pod, &key.namespace, ctx.cache) {
                if managed_externally(job) || !is_finished(job) {
                    return Ok(ReconcileAction::AwaitChange);
                }
            }
        }
        if has_finalizer(&pod) {
            match ctx.send(remove_finalizer_request(&self.principal(), &pod)) {
                Ok(_) => {}
                Err(e) if e.reason == StatusReason::NotFound => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(ReconcileAction::AwaitChange)
    }

    /// `syncJob`.
    fn sync_job(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let Some(shared) = ctx.cache.get(key).cloned() else {
            self.expectations.remove(key);
            self.finalizer_removals.remove(key);
            self.backoff.remove(key);
            return Ok(ReconcileAction::AwaitChange);
        };
        if managed_externally(&shared) {
            return Ok(ReconcileAction::AwaitChange);
        }
        if is_finished(&shared) {
            self.backoff.remove(key);
            return Ok(ReconcileAction::AwaitChange);
        }
        // Indexed Jobs are accepted by the API server but not simulated (docs/fidelity.md).
        if str_at(&shared, "/spec/completionMode") == "Indexed" {
            return Ok(ReconcileAction::AwaitChange);
        }
        let job = Value::clone(&shared);
        let now = ctx.now;
        let mut status = JobStatus::read(&job);
        if status.uncounted.is_none() {
            status.uncounted = Some(Default::default());
        }
        let uncounted = status.uncounted.clone().unwrap_or_default();
        let satisfied = self.satisfied(key, now);
        let pods: Vec<Arc<Value>> = ctx
            .cache
            .owned_by(meta::uid(&job))
            .filter(|p| p.field("kind").and_then(Value::as_str) == Some("Pod"))
            .cloned()
            .collect();
        let active_pods: Vec<Arc<Value>> =
            pods.iter().filter(|p| pod_is_active(p)).cloned().collect();
        let ready = active_pods.iter().filter(|p| pod_is_ready(p)).count() as i64;
        let terminating = pods.iter().filter(|p| is_terminating_pod(p)).count() as i64;
        // getNewFinishedPods: pods still holding the finalizer, not yet listed as uncounted.
        let expected_rm = self
            .finalizer_removals
            .get(key)
            .cloned()
            .unwrap_or_default();
        let tracked = |p: &&Arc<Value>| has_finalizer(p) && !expected_rm.contains(meta::uid(p));
        let new_succeeded: Vec<Arc<Value>> = pods
            .iter()
            .filter(tracked)
            .filter(|p| !uncounted.succeeded.iter().any(|u| u == meta::uid(p)))
            .filter(|p| phase(p) == "Succeeded")
            .cloned()
            .collect();
        let new_failed: Vec<Arc<Value>> = pods
            .iter()
            .filter(tracked)
            .filter(|p| !uncounted.failed.iter().any(|u| u == meta::uid(p)))
            .filter(|p| is_pod_failed(p, &job))
            .cloned()
            .collect();
        let succeeded =
            status.succeeded + new_succeeded.len() as i64 + uncounted.succeeded.len() as i64;
        let failed = status.failed + new_failed.len() as i64 + uncounted.failed.len() as i64;
        let mut start_unix_ms = status.start_time.as_deref().and_then(parse_rfc3339_unix_ms);
        if status.start_time.is_none() && !suspended(&job) {
            status.start_time = Some(now.rfc3339());
            start_unix_ms = Some(now.unix_ms());
        }
        let new_backoff = BackoffRecord::next(self.backoff.get(key), &new_succeeded, &new_failed);
        let backoff_limit = spec_i64(&job, "backoffLimit").unwrap_or(6);
        let mut sc = SyncCtx {
            job,
            status,
            pods,
            active_pods,
            succeeded,
            failed,
            ready,
            terminating,
            finished: None,
            new_backoff,
            start_unix_ms,
        };
        let mut requeue: Option<u64> = None;
        sc.finished = sc
            .status
            .condition("SuccessCriteriaMet")
            .filter(|c| c.is_true())
            .cloned();
        if sc.finished.is_none() {
            if let Some(target) = sc.status.condition("FailureTarget").filter(|c| c.is_true()) {
                // newFailedConditionForFailureTarget.
                sc.finished = Some(JobCondition::new(
                    "Failed",
                    "True",
                    &target.reason,
                    &target.message,
                    now,
                ));
            }
        }
        let ads = spec_i64(&sc.job, "activeDeadlineSeconds");
        if sc.finished.is_none() {
            if sc.failed > backoff_limit || past_backoff_limit_on_failure(&sc.job, &sc.pods) {
                sc.finished = Some(failure_condition(
                    "BackoffLimitExceeded",
                    "Job has reached the specified backoff limit",
                    now,
                ));
            } else if let (Some(ads), Some(start), false) =
                (ads, sc.start_unix_ms, suspended(&sc.job))
            {
                // pastActiveDeadline, else a sync when the deadline comes.
                let since = now.unix_ms() - start;
                if since >= ads * 1000 {
                    sc.finished = Some(failure_condition(
                        "DeadlineExceeded",
                        "Job was active longer than specified deadline",
                        now,
                    ));
                } else {
                    requeue = Some((ads * 1000 - since) as u64);
                }
            }
        }
        let mut active = sc.active_pods.len() as i64;
        let mut manage_err: Option<ReconcileError> = None;
        let mut suspend_changed = false;
        if sc.finished.is_some() {
            let (deleted_ready, deleted, err) = self.delete_active_pods(&sc, ctx);
            if deleted != active || !satisfied {
                // Not finished yet: some pod or finalizer may not be in the cache yet.
                sc.finished = None;
            }
            active -= deleted;
            sc.terminating += deleted;
            sc.ready -= deleted_ready;
            manage_err = err;
        } else {
            let mut manage_called = false;
            if satisfied && !meta::is_terminating(&sc.job) {
                let (a, err, wait) = self.manage_job(key, &mut sc, ctx);
                active = a;
                manage_err = err;
                if let Some(w) = wait {
                    requeue = Some(requeue.map_or(w, |r| r.min(w)));
                }
                manage_called = true;
            }
            let complete = match spec_i64(&sc.job, "completions") {
                None => sc.succeeded > 0 && active == 0,
                Some(c) => sc.succeeded >= c && active == 0,
            };
            if complete {
                // newSuccessCondition: SuccessCriteriaMet first, with JobSuccessPolicy's reason.
                sc.finished = Some(JobCondition::new(
                    "SuccessCriteriaMet",
                    "True",
                    "CompletionsReached",
                    "Reached expected number of succeeded pods",
                    now,
                ));
            } else if manage_called {
                suspend_changed = self.suspend_condition(&mut sc, ctx);
            }
        }
        let needs_status_update = suspend_changed
            || active != sc.status.active
            || Some(sc.ready) != sc.status.ready
            || Some(sc.terminating) != sc.status.terminating;
        sc.status.active = active;
        sc.status.ready = Some(sc.ready);
        sc.status.terminating = Some(sc.terminating);
        self.track_status_and_remove_finalizers(key, &mut sc, needs_status_update, ctx)?;
        match manage_err {
            Some(e) => Err(e),
            None => Ok(requeue.map_or(ReconcileAction::AwaitChange, |ms| {
                ReconcileAction::RequeueAfter { ms: ms.max(1) }
            })),
        }
    }

    /// The Suspended condition and its events, when manageJob ran (`syncJob`).
    fn suspend_condition(&mut self, sc: &mut SyncCtx, ctx: &mut Ctx<'_>) -> bool {
        let now = ctx.now;
        if suspended(&sc.job) {
            let changed = sc.status.ensure_condition(
                "Suspended",
                "True",
                "JobSuspended",
                "Job suspended",
                now,
            );
            if changed {
                record_job(
                    ctx,
                    &sc.job,
                    EventType::Normal,
                    "Suspended",
                    "Job suspended",
                );
            }
            changed
        } else {
            let changed =
                sc.status
                    .ensure_condition("Suspended", "False", "JobResumed", "Job resumed", now);
            if changed {
                record_job(ctx, &sc.job, EventType::Normal, "Resumed", "Job resumed");
                // A resumed Job's active deadline counts from now.
                sc.status.start_time = Some(now.rfc3339());
                sc.start_unix_ms = Some(now.unix_ms());
            }
            changed
        }
    }

    /// `manageJob` for a NonIndexed Job: the active count it leaves, its first error, and how
    /// long a replacement waits out the pod-failure back-off.
    fn manage_job(
        &mut self,
        key: &ObjectKey,
        sc: &mut SyncCtx,
        ctx: &mut Ctx<'_>,
    ) -> (i64, Option<ReconcileError>, Option<u64>) {
        let now = ctx.now;
        let mut active = sc.active_pods.len() as i64;
        let parallelism = spec_i64(&sc.job, "parallelism").unwrap_or(1);
        if suspended(&sc.job) {
            let doomed = pods_for_removal(&sc.active_pods, sc.active_pods.len());
            self.expect(key, 0, doomed.len() as i64, now);
            let (removed, removed_ready, err) = self.delete_job_pods(key, &sc.job, &doomed, ctx);
            sc.terminating += removed;
            sc.ready -= removed_ready;
            return (active - removed, err, None);
        }
        let want_active = match spec_i64(&sc.job, "completions") {
            None if sc.succeeded > 0 => active,
            None => parallelism,
            Some(c) => (c - sc.succeeded).min(parallelism).max(0),
        };
        let rm_at_least = (active - want_active).max(0);
        if rm_at_least > 0 {
            let n = rm_at_least.min(MAX_POD_CREATE_DELETE_PER_SYNC) as usize;
            let doomed = pods_for_removal(&sc.active_pods, n);
            self.expect(key, 0, doomed.len() as i64, now);
            let (removed, removed_ready, err) = self.delete_job_pods(key, &sc.job, &doomed, ctx);
            sc.terminating += removed;
            sc.ready -= removed_ready;
            return (active - removed, err, None);
        }
        let terminating = if only_replace_failed(&sc.job) {
            sc.terminating
        } else {
            0
        };
        let diff = want_active - terminating - active;
        if diff <= 0 {
            return (active, None, None);
        }
        let remaining = sc.new_backoff.remaining_ms(now.unix_ms());
        if remaining > 0 {
            // enqueueSyncJobWithDelay, at least the batch period; kube reports 0 active here.
            return (0, None, Some(remaining.max(SYNC_JOB_BATCH_PERIOD_MS)));
        }
        let diff = diff.min(MAX_POD_CREATE_DELETE_PER_SYNC);
        self.expect(key, diff, 0, now);
        active += diff;
        let principal = self.principal();
        let mut first_err: Option<ReconcileError> = None;
        let mut remaining = diff;
        let mut batch = 1;
        while remaining > 0 {
            let size = batch.min(remaining);
            let mut failed_batch = false;
            for _ in 0..size {
                let pod = job_pod(&sc.job, &random_suffix(ctx.rng));
                let created = ctx.send(ApiRequest::create(&principal, pods(), &key.namespace, pod));
                record_pod_control(ctx, JOB_REF, &sc.job, PodOp::Create, &created);
                match created {
                    // A terminating namespace: kube's create goroutine just returns.
                    Err(e) if e.namespace_terminating() => {}
                    Err(e) => {
                        failed_batch = true;
                        self.lower(key, 1, 0);
                        active -= 1;
                        first_err.get_or_insert(e.into());
                    }
                    Ok(_) => {}
                }
            }
            remaining -= size;
            if failed_batch {
                self.lower(key, remaining, 0);
                active -= remaining;
                break;
            }
            batch = (batch * 2).min(remaining.max(1));
        }
        (active, first_err, None)
    }

    /// `deleteActivePods`: DELETE each active pod (its finalizer kept); how many were ready,
    /// how many are gone or going, and the first error.
    fn delete_active_pods(
        &mut self,
        sc: &SyncCtx,
        ctx: &mut Ctx<'_>,
    ) -> (i64, i64, Option<ReconcileError>) {
        let principal = self.principal();
        let (mut ready, mut deleted, mut err) = (0, 0, None);
        for pod in &sc.active_pods {
            let result = ctx.send(ApiRequest::delete(
                &principal,
                pods(),
                meta::namespace(pod),
                meta::name(pod),
            ));
            record_pod_control(
                ctx,
                JOB_REF,
                &sc.job,
                PodOp::Delete(meta::name(pod)),
                &result,
            );
            match result {
                Ok(_) => deleted += 1,
                Err(e) if e.reason == StatusReason::NotFound => deleted += 1,
                Err(e) => {
                    err.get_or_insert(e.into());
                }
            }
            if pod_is_ready(pod) {
                ready += 1;
            }
        }
        (ready, deleted, err)
    }

    /// `deleteJobPods`: for each pod, the finalizer off, then DELETE; how many went, how many
    /// of those were ready, and the first error.
    fn delete_job_pods(
        &mut self,
        key: &ObjectKey,
        job: &Value,
        doomed: &[Arc<Value>],
        ctx: &mut Ctx<'_>,
    ) -> (i64, i64, Option<ReconcileError>) {
        let principal = self.principal();
        let (mut removed, mut removed_ready) = (0, 0);
        let mut first_err: Option<ReconcileError> = None;
        for pod in doomed {
            let mut result = Ok(());
            if has_finalizer(pod) {
                result = ctx
                    .send(remove_finalizer_request(&principal, pod))
                    .map(|_| ());
            }
            if result.is_ok() {
                let deleted = ctx.send(ApiRequest::delete(
                    &principal,
                    pods(),
                    meta::namespace(pod),
                    meta::name(pod),
                ));
                record_pod_control(ctx, JOB_REF, job, PodOp::Delete(meta::name(pod)), &deleted);
                result = deleted.map(|_| ());
            }
            match result {
                Ok(()) => {}
                // failDelete: the informer will not see this deletion.
                Err(e) => {
                    self.lower(key, 0, 1);
                    if e.reason != StatusReason::NotFound {
                        first_err.get_or_insert(e.into());
                        continue;
                    }
                }
            }
            removed += 1;
            if pod_is_ready(pod) {
                removed_ready += 1;
            }
        }
        (removed, removed_ready, first_err)
    }

    /// `trackJobStatusAndRemoveFinalizers` with `flushUncountedAndRemoveFinalizers` and
    /// `enactJobFinished`: finished pods are listed as uncounted and written, their finalizers
    /// removed, then counted and written again, with the terminal condition once nothing is
    /// uncounted or terminating.
    fn track_status_and_remove_finalizers(
        &mut self,
        key: &ObjectKey,
        sc: &mut SyncCtx,
        mut needs_flush: bool,
        ctx: &mut Ctx<'_>,
    ) -> Result<(), ReconcileError> {
        let now = ctx.now;
        let expected_rm = self
            .finalizer_removals
            .get(key)
            .cloned()
            .unwrap_or_default();
        let mut with_finalizer: BTreeSet<String> = sc
            .pods
            .iter()
            .filter(|p| has_finalizer(p) && !expected_rm.contains(meta::uid(p)))
            .map(|p| meta::uid(p).to_owned())
            .collect();
        if clean_uncounted(&mut sc.status, &with_finalizer) {
            needs_flush = true;
        }
        let job_deleting = meta::is_terminating(&sc.job);
        let finished_not_success = sc
            .finished
            .as_ref()
            .is_some_and(|c| c.type_ != "SuccessCriteriaMet");
        let mut to_remove: Vec<Arc<Value>> = Vec::new();
        let mut reached_max = false;
        let mut uncounted = sc.status.uncounted.take().unwrap_or_default();
        for pod in &sc.pods {
            let uid = meta::uid(pod);
            if !has_finalizer(pod) || expected_rm.contains(uid) {
                continue;
            }
            let failed = is_pod_failed(pod, &sc.job);
            let succeeded = phase(pod) == "Succeeded";
            if !(job_deleting || sc.finished.is_some() || succeeded || failed) {
                continue;
            }
            to_remove.push(pod.clone());
            let listed = |list: &Vec<String>| list.iter().any(|u| u == uid);
            if succeeded && !listed(&uncounted.failed) {
                if !listed(&uncounted.succeeded) {
                    uncounted.succeeded.push(uid.to_owned());
                    needs_flush = true;
                }
            } else if (failed || finished_not_success) && !listed(&uncounted.failed) {
                uncounted.failed.push(uid.to_owned());
                needs_flush = true;
            }
            if uncounted.len() >= MAX_UNCOUNTED_PODS {
                reached_max = true;
                break;
            }
        }
        sc.status.uncounted = Some(uncounted);
        if let Some(c) = sc.finished.clone() {
            if c.type_ == "FailureTarget" {
                // The interim condition goes in before the finalizers come off.
                sc.status.conditions.push(c.clone());
                needs_flush = true;
                sc.finished = Some(JobCondition::new(
                    "Failed", "True", &c.reason, &c.message, now,
                ));
            } else if c.type_ == "SuccessCriteriaMet" {
                if !sc.status.has_true("SuccessCriteriaMet") {
                    sc.status.conditions.push(c.clone());
                    needs_flush = true;
                }
                sc.finished = Some(JobCondition::new(
                    "Complete", "True", &c.reason, &c.message, now,
                ));
            }
        }
        // flushUncountedAndRemoveFinalizers.
        if needs_flush {
            self.write_status(sc, ctx).map_err(|e| {
                ReconcileError::Other(format!(
                    "tracking status: adding uncounted pods to status: {e}"
                ))
            })?;
            self.backoff.insert(key.clone(), sc.new_backoff);
            needs_flush = false;
        }
        let mut rm_err: Option<crate::api::ApiError> = None;
        if !to_remove.is_empty() {
            let principal = self.principal();
            self.finalizer_removals
                .entry(key.clone())
                .or_default()
                .extend(to_remove.iter().map(|p| meta::uid(p).to_owned()));
            for pod in &to_remove {
                let uid = meta::uid(pod).to_owned();
                match ctx.send(remove_finalizer_request(&principal, pod)) {
                    Ok(_) => {
                        with_finalizer.remove(&uid);
                    }
                    Err(e) => {
                        self.removal_observed(key, &uid);
                        if e.reason == StatusReason::NotFound {
                            with_finalizer.remove(&uid);
                        } else {
                            rm_err.get_or_insert(e);
                        }
                    }
                }
            }
        }
        if clean_uncounted(&mut sc.status, &with_finalizer) {
            needs_flush = true;
        }
        if let Some(e) = rm_err {
            if needs_flush {
                self.write_status(sc, ctx).map_err(|e| {
                    ReconcileError::Other(format!(
                        "tracking status: removing uncounted pods from status: {e}"
                    ))
                })?;
            }
            return Err(ReconcileError::Other(format!("tracking status: {e}")));
        }
        let finished = !reached_max && enact_finished(sc, now);
        if finished {
            needs_flush = true;
        }
        if needs_flush {
            self.write_status(sc, ctx).map_err(|e| {
                ReconcileError::Other(format!(
                    "tracking status: removing uncounted pods from status: {e}"
                ))
            })?;
            if finished {
                record_job_finished(ctx, sc);
            }
        }
        Ok(())
    }

    /// `updateJobStatus`: PUT /status with the status as held; the answer is the Job from now on.
    fn write_status(
        &self,
        sc: &mut SyncCtx,
        ctx: &mut Ctx<'_>,
    ) -> Result<(), crate::api::ApiError> {
        let mut body = sc.job.clone();
        body["status"] = sc.status.to_value();
        let updated = ctx.send(client::update_status_object(
            &self.principal(),
            jobs(),
            body,
        ))?;
        sc.job = Value::clone(&updated);
        Ok(())
    }
}

/// `enactJobFinished`: the terminal condition, once nothing is uncounted or terminating;
/// Complete also sets `completionTime` to the condition's transition time.
fn enact_finished(sc: &mut SyncCtx, now: SimTime) -> bool {
    let Some(c) = sc.finished.clone() else {
        return false;
    };
    if sc.status.uncounted.as_ref().is_some_and(|u| !u.is_empty()) || sc.terminating > 0 {
        return false;
    }
    sc.status
        .ensure_condition(&c.type_, &c.status, &c.reason, &c.message, now);
    if c.type_ == "Complete" {
        sc.status.completion_time = Some(now.rfc3339());
    }
    true
}

/// `newFailureCondition`: with the terminal condition delayed (1.32), `FailureTarget`.
fn failure_condition(reason: &str, message: &str, now: SimTime) -> JobCondition {
    JobCondition::new("FailureTarget", "True", reason, message, now)
}

/// `cleanUncountedPodsWithoutFinalizers`: UIDs whose pod has lost its finalizer (or is gone)
/// move from uncounted into the counters. Whether anything moved.
fn clean_uncounted(status: &mut JobStatus, with_finalizer: &BTreeSet<String>) -> bool {
    let Some(u) = status.uncounted.as_mut() else {
        return false;
    };
    let before = u.len();
    let (keep_s, gone_s): (Vec<String>, Vec<String>) = u
        .succeeded
        .drain(..)
        .partition(|uid| with_finalizer.contains(uid));
    let (keep_f, gone_f): (Vec<String>, Vec<String>) = u
        .failed
        .drain(..)
        .partition(|uid| with_finalizer.contains(uid));
    u.succeeded = keep_s;
    u.failed = keep_f;
    status.succeeded += gone_s.len() as i64;
    status.failed += gone_f.len() as i64;
    status.uncounted.as_ref().map_or(0, Uncounted::len) != before
}

use status::Uncounted;

/// `activePodsForRemoval` for a NonIndexed Job: the first `n` in `ActivePods` order.
fn pods_for_removal(active: &[Arc<Value>], n: usize) -> Vec<Arc<Value>> {
    let mut sorted: Vec<Arc<Value>> = active.to_vec();
    super::util::sort_by_less(&mut sorted, |a, b| remove_before(a, b));
    sorted.truncate(n);
    sorted
}

/// The pod a Job creates (`GetPodFromTemplate`): its template's labels, annotations,
/// finalizers plus the tracking finalizer, named `<job>-<5 random characters>` (the base cut to
/// the 58 characters the API server's name generator keeps).
fn job_pod(job: &Value, suffix: &str) -> Value {
    let mut pod = pod_from_template(job, suffix);
    let mut base = format!("{}-", meta::name(job));
    base.truncate(58);
    let mut finalizers: Vec<Value> = job
        .at("/spec/template/metadata/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !finalizers.iter().any(|f| f == JOB_TRACKING_FINALIZER) {
        finalizers.push(json!(JOB_TRACKING_FINALIZER));
    }
    if let Some(m) = pod.get_mut("metadata").and_then(Value::as_object_mut) {
        m.insert("name", json!(format!("{base}{suffix}")));
        m.insert("generateName", json!(base));
        m.insert("finalizers", Value::Array(finalizers.into()));
    }
    pod
}

/// An event on the Job from the controller's recorder.
fn record_job(ctx: &mut Ctx<'_>, job: &Value, event_type: EventType, reason: &str, message: &str) {
    let regarding = ObjectRef::to(job, JOB_REF.0, JOB_REF.1);
    ctx.record(EventNote::new(
        regarding,
        event_type,
        reason,
        message.to_owned(),
    ));
}

/// `recordJobFinished`: `Completed` (and `TooManySucceededPods`), or the failure's reason and
/// message as a Warning.
fn record_job_finished(ctx: &mut Ctx<'_>, sc: &SyncCtx) {
    let Some(c) = &sc.finished else {
        return;
    };
    if c.type_ == "Complete" {
        if spec_i64(&sc.job, "completions").is_some_and(|n| sc.status.succeeded > n) {
            record_job(
                ctx,
                &sc.job,
                EventType::Warning,
                "TooManySucceededPods",
                "Too many succeeded pods running after completion count reached",
            );
        }
        record_job(
            ctx,
            &sc.job,
            EventType::Normal,
            "Completed",
            "Job completed",
        );
    } else {
        record_job(ctx, &sc.job, EventType::Warning, &c.reason, &c.message);
    }
}

impl Reconciler for JobController {
    fn name(&self) -> String {
        "job-controller".into()
    }

    fn principal(&self) -> String {
        crate::api::principals::JOB_CONTROLLER.into()
    }

    fn event_api(&self) -> Option<EventApi> {
        Some(EventApi::CoreV1 {
            component: "job-controller".into(),
            host: String::new(),
        })
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        *gr == jobs() || *gr == pods()
    }

    /// Its pod informer holds the pods a Job controls and those with the tracking finalizer.
    fn accepts(&self, gr: &GroupResource, obj: &Value) -> bool {
        *gr == jobs() || meta::controller_kind(obj) == Some("Job") || has_finalizer(obj)
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
            .map(|(k, _)| k)
            .collect()
    }

    /// `addJob` (at once), `updateJob` (at once for a new generation, else batched; a finished
    /// Job's pods that still hold the finalizer go to the orphan sync; a changed
    /// activeDeadlineSeconds syncs when it runs out), `deleteJob`, and the pod handlers.
    fn keys_after(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        cache: &Informer,
    ) -> Vec<(ObjectKey, u64)> {
        if ev.key.gr == pods() {
            return self.pod_keys(ev, old, new, cache);
        }
        let key = ObjectKey::clone(&ev.key);
        match (ev.event_type, old) {
            (WatchEventType::Deleted, _) => {
                let mut keys = vec![(key.clone(), 0)];
                keys.extend(
                    cache
                        .owned_by(meta::uid(new))
                        .filter(|p| has_finalizer(p))
                        .map(|p| (ObjectKey::new(pods(), meta::namespace(p), meta::name(p)), 0)),
                );
                keys
            }
            (WatchEventType::Modified, Some(o)) => {
                let delay = if meta::generation(o) == meta::generation(new) {
                    SYNC_JOB_BATCH_PERIOD_MS
                } else {
                    0
                };
                let mut keys = vec![(key.clone(), delay)];
                if is_finished(new) {
                    keys.extend(
                        cache
                            .owned_by(meta::uid(new))
                            .filter(|p| has_finalizer(p))
                            .map(|p| {
                                (ObjectKey::new(pods(), meta::namespace(p), meta::name(p)), 0)
                            }),
                    );
                }
                let ads = |j: &Value| j.at("/spec/activeDeadlineSeconds").and_then(Value::as_i64);
                let started = new
                    .at("/status/startTime")
                    .and_then(Value::as_str)
                    .and_then(parse_rfc3339_unix_ms);
                if let (Some(start), Some(cur)) = (started, ads(new)) {
                    if ads(o) != Some(cur) {
                        let passed = ev.time.unix_ms() - start;
                        keys.push((key, (cur * 1000 - passed).max(0) as u64));
                    }
                }
                keys
            }
            _ => vec![(key, 0)],
        }
    }

    fn reset(&mut self) {
        *self = JobController::default();
    }

    fn rate_limits(&self) -> Option<(u64, u64)> {
        Some(JOB_API_BACKOFF_MS)
    }

    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        if key.gr == pods() {
            self.sync_orphan_pod(key, ctx)
        } else {
            self.sync_job(key, ctx)
        }
    }
}
