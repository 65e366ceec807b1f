//! The HorizontalPodAutoscaler controller (autoscaling/v2, CPU utilization) [kubernetes
//! pkg/controller/podautoscaler/horizontal.go, replica_calculator.go, metrics/utilization.go].
//!
//! Every 15 s (`--horizontal-pod-autoscaler-sync-period`) it reads its target's scale
//! (`spec.replicas` and `spec.selector` of the Deployment), lists the Pods the selector matches
//! from its own Pod informer, and runs kube's replica calculator on them: `groupPods` ignores
//! Pods being deleted and terminal Pods (Failed, Succeeded); *unready* are Pending Pods, Pods
//! without a Ready condition or start time, and, within the 5 min CPU initialization period,
//! Pods whose Ready is False or became True less than one metric window ago (after that period,
//! a Pod whose Ready is False only if it has never been Ready); Running Pods without a sample are
//! *missing*. The utilization of the ready
//! Pods, `Σ usage × 100 / Σ request` (integer division, as kube's `int32`), over the target
//! gives the usage ratio; within the 10 % tolerance nothing changes, else `ceil(ratio × ready)`.
//! When there are unready Pods on a scale-up, or missing Pods, kube recomputes with unready
//! Pods at 0 % (scale-up only), missing Pods at 0 % on a scale-up and at max(100 %, target) of
//! their request on a scale-down, and keeps the current count when the recomputed ratio is
//! within tolerance or flips direction. Then `normalizeDesiredReplicas` (no `spec.behavior`):
//! the highest recommendation of the last 300 s (downscale stabilization), clamped to min/max
//! and to the scale-up limit `max(2 × current, 4)`. Status, conditions, reasons and messages are
//! kube's (`SucceededGetScale`, `ValidMetricFound`, `FailedGetResourceMetric`, `ReadyForNewScale`,
//! `ScaleDownStabilized`, `SucceededRescale`, `DesiredWithinRange`, `ScaleUpLimit`, ...).
//!
//! The metric (simulated metrics-server): the world's load for the target
//! (`Environment::load_millicores`, total CPU demand in millicores) is served by the target's
//! Pods in phase Running that are not being deleted, split evenly in integer millicores (the
//! remainder goes one millicore each to the first Pods by name). Every Running Pod has a sample
//! (a terminating one reads 0m); Pending Pods have none. A sample is taken at the sync
//! (timestamp = now) over a 15 s window (metrics-server's default resolution).
//!
//! Deviations from kube:
//! The target's scale is read and written through its `/scale` subresource, as kube's
//! `scaleNamespacer` does: a GET every sync, a PUT of the Scale read when the count changes.
//!
//! - Which Pods have a sample, and which Pods share the load, is read from the Pods' phase in
//!   the API (metrics-server asks the kubelets); a Pod's Ready condition is read from its status,
//!   exactly as kube's calculator does.
//! - Only the `Resource` cpu metric with a `Utilization` target is modelled (the first one in
//!   `spec.metrics`; 80 % when there is none, kube's default). `spec.behavior` is not modelled,
//!   nor the `AmbiguousSelector` check, nor Events (`SuccessfulRescale`, ...).
//! - A failed sync is retried on the next 15 s period, as kube's HPA rate limiter does, so the
//!   trace shows the failure in the HPA's status conditions, not as a reconcile error.
//!
//! As in kube without its newer `HPAGeneration` feature gate, HPAs have no generation here: the status
//! has no `observedGeneration`, and a spec change waits for the next period.

use crate::api::meta::Fields;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::json::{json, Value};

use super::util::{deployments, hpas, pods};
use crate::api::meta::{self, str_at, JsonPointer};
use crate::api::{ApiRequest, GroupResource, ObjectKey, Subresource, WatchEvent, WatchEventType};
use crate::conditions;
use crate::runtime::client;
use crate::runtime::Informer;
use crate::runtime::{
    Ctx, EventApi, EventNote, EventType, Explanation, ObjectRef, ReconcileAction, ReconcileError,
    Reconciler,
};
use crate::time::SimTime;

/// `--horizontal-pod-autoscaler-sync-period`.
pub const SYNC_PERIOD_MS: u64 = 15_000;
/// `--horizontal-pod-autoscaler-tolerance`.
pub const TOLERANCE: f64 = 0.1;
/// `--horizontal-pod-autoscaler-downscale-stabilization`.
pub const DOWNSCALE_STABILIZATION_MS: u64 = 300_000;
/// `--horizontal-pod-autoscaler-cpu-initialization-period`.
pub const CPU_INITIALIZATION_PERIOD_MS: u64 = 300_000;
/// `--horizontal-pod-autoscaler-initial-readiness-delay`.
pub const INITIAL_READINESS_DELAY_MS: u64 = 30_000;
/// The window of a simulated metrics-server sample (its default `--metric-resolution`).
pub const METRIC_WINDOW_MS: u64 = 15_000;
/// kube's default target when `spec.metrics` names no CPU utilization.
pub const DEFAULT_CPU_UTILIZATION: i64 = 80;

const SCALE_UP_LIMIT_FACTOR: i64 = 2;
const SCALE_UP_LIMIT_MINIMUM: i64 = 4;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HpaController {
    /// Unstabilized recommendations per HPA (kube's `recommendations`), for the downscale
    /// stabilization window.
    recommendations: BTreeMap<ObjectKey, Vec<(SimTime, i64)>>,
}

impl HpaController {
    pub fn new() -> Self {
        Self::default()
    }

    /// kube's `stabilizeRecommendation`: the highest recommendation not older than the window
    /// (this one included); this one replaces an expired sample or is appended.
    fn stabilize(&mut self, key: &ObjectKey, recommendation: i64, now: SimTime) -> i64 {
        let recs = self.recommendations.entry(key.clone()).or_default();
        let mut highest = recommendation;
        let mut old = None;
        for (i, (t, r)) in recs.iter().enumerate() {
            if t.as_ms() + DOWNSCALE_STABILIZATION_MS < now.as_ms() {
                old = Some(i);
            } else if *r > highest {
                highest = *r;
            }
        }
        match old {
            Some(i) => recs[i] = (now, recommendation),
            None => recs.push((now, recommendation)),
        }
        highest
    }
}

/// Whether a usage ratio is within kube's default tolerance, as 1.32's replica calculator
/// tests it [pkg/controller/podautoscaler/replica_calculator.go GetResourceReplicas:
/// `math.Abs(1.0-usageRatio) <= c.tolerance`]. In float64 `1.0 - 1.1` is
/// -0.10000000000000009, so a ratio of exactly 1.1 is outside and scales up, while 0.9 is
/// inside (1.33's `Tolerances.isWithin` made both inside).
fn within_tolerance(ratio: f64) -> bool {
    (1.0 - ratio).abs() <= TOLERANCE
}

/// What the replica calculator proposes for one CPU utilization metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proposal {
    pub replicas: i64,
    /// The ready Pods' utilization in percent of their requests (`currentMetrics`).
    pub utilization: i64,
    /// Their average usage in millicores.
    pub average_millis: i64,
}

/// The simulated metrics-server: one sample per Running Pod, in millicores, sharing
/// `load_millis` among the Running Pods that are not being deleted (see the module docs).
pub fn pod_metrics(pods: &[&Value], load_millis: u64) -> BTreeMap<String, u64> {
    let running: Vec<&Value> = pods
        .iter()
        .copied()
        .filter(|p| str_at(p, "/status/phase") == "Running")
        .collect();
    let mut serving: Vec<&str> = running
        .iter()
        .filter(|p| !meta::is_terminating(p))
        .map(|p| meta::name(p))
        .collect();
    serving.sort_unstable();
    let mut metrics: BTreeMap<String, u64> = running
        .iter()
        .map(|p| (meta::name(p).to_owned(), 0))
        .collect();
    let n = serving.len() as u64;
    if n > 0 {
        for (i, name) in serving.iter().enumerate() {
            let extra = u64::from((i as u64) < load_millis % n);
            metrics.insert((*name).to_owned(), load_millis / n + extra);
        }
    }
    metrics
}

/// kube's `groupPods` for the cpu resource: (ready count, unready, missing, ignored).
fn group_pods(
    pods: &[&Value],
    metrics: &BTreeMap<String, u64>,
    now: SimTime,
) -> (usize, BTreeSet<String>, BTreeSet<String>, BTreeSet<String>) {
    let (mut ready, mut unready, mut missing, mut ignored) =
        (0, BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for pod in pods {
        let name = meta::name(pod).to_owned();
        let phase = str_at(pod, "/status/phase");
        // kube's `podutil.IsPodTerminal`: Failed or Succeeded.
        if meta::is_terminating(pod) || phase == "Failed" || phase == "Succeeded" {
            ignored.insert(name);
            continue;
        }
        if phase == "Pending" {
            unready.insert(name);
            continue;
        }
        if !metrics.contains_key(&name) {
            missing.insert(name);
            continue;
        }
        let condition = pod
            .at("/status")
            .and_then(|s| conditions::find_condition(s, "Ready"));
        let start = SimTime::parse_rfc3339(str_at(pod, "/status/startTime"));
        let is_unready = match (condition, start) {
            (Some(c), Some(start)) => {
                let status = str_at(c, "/status");
                let since = SimTime::parse_rfc3339(str_at(c, "/lastTransitionTime"))
                    .unwrap_or(SimTime::ZERO);
                if start.as_ms() + CPU_INITIALIZATION_PERIOD_MS > now.as_ms() {
                    // Within the initialization period: unready, or ready for less than one
                    // metric window (the sample may predate readiness).
                    status == "False" || now.as_ms() < since.as_ms() + METRIC_WINDOW_MS
                } else {
                    // Later: unready only if it has never been ready.
                    status == "False" && start.as_ms() + INITIAL_READINESS_DELAY_MS > since.as_ms()
                }
            }
            _ => true,
        };
        if is_unready {
            unready.insert(name);
        } else {
            ready += 1;
        }
    }
    (ready, unready, missing, ignored)
}

/// kube's `calculateRequests` for cpu: each Pod's containers' requests (restartable init
/// containers included), or the error naming the first container without one.
fn pod_requests(pods: &[&Value]) -> Result<BTreeMap<String, u64>, String> {
    let mut requests = BTreeMap::new();
    for pod in pods {
        let spec = pod.field("spec").unwrap_or(&Value::Null);
        let sidecars = spec
            .field("initContainers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|c| str_at(c, "/restartPolicy") == "Always");
        let containers = spec
            .field("containers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .chain(sidecars);
        let mut sum = 0;
        for c in containers {
            let Some(q) = c.at("/resources/requests/cpu") else {
                return Err(format!(
                    "missing request for cpu in container {} of Pod {}",
                    str_at(c, "/name"),
                    meta::name(pod)
                ));
            };
            sum += crate::api::quantity::cpu_millis(q);
        }
        requests.insert(meta::name(pod).to_owned(), sum);
    }
    Ok(requests)
}

/// kube's `GetResourceUtilizationRatio`: (ratio, utilization %, average millicores).
fn utilization_ratio(
    metrics: &BTreeMap<String, u64>,
    requests: &BTreeMap<String, u64>,
    target_pct: i64,
) -> Result<(f64, i64, i64), String> {
    let (mut total, mut requested, mut entries) = (0_i64, 0_i64, 0_i64);
    for (name, usage) in metrics {
        let Some(request) = requests.get(name) else {
            continue;
        };
        total += *usage as i64;
        requested += *request as i64;
        entries += 1;
    }
    if requested == 0 {
        return Err("no metrics returned matched known pods".into());
    }
    let utilization = total * 100 / requested;
    Ok((
        utilization as f64 / target_pct as f64,
        utilization,
        total / entries,
    ))
}

/// kube's `GetResourceReplicas` for cpu: the replica count for `target_pct` utilization given
/// the selected Pods and their samples; the error text is kube's.
pub fn resource_replicas(
    current: i64,
    target_pct: i64,
    pods: &[&Value],
    metrics: &BTreeMap<String, u64>,
    now: SimTime,
) -> Result<Proposal, String> {
    if metrics.is_empty() {
        return Err(
            "unable to get metrics for resource cpu: no metrics returned from resource metrics API"
                .into(),
        );
    }
    if pods.is_empty() {
        return Err("no pods returned by selector while calculating replica count".into());
    }
    let (ready, unready, missing, ignored) = group_pods(pods, metrics, now);
    let mut metrics = metrics.clone();
    metrics.retain(|name, _| !ignored.contains(name) && !unready.contains(name));
    if metrics.is_empty() {
        return Err("did not receive metrics for targeted pods (pods might be unready)".into());
    }
    let requests = pod_requests(pods)?;
    let (ratio, utilization, average_millis) = utilization_ratio(&metrics, &requests, target_pct)?;
    let proposal = |replicas| Proposal {
        replicas,
        utilization,
        average_millis,
    };
    let scale_up_with_unready = !unready.is_empty() && ratio > 1.0;
    if !scale_up_with_unready && missing.is_empty() {
        if within_tolerance(ratio) {
            return Ok(proposal(current));
        }
        return Ok(proposal((ratio * ready as f64).ceil() as i64));
    }
    if !missing.is_empty() {
        let fallback = target_pct.max(100) as u64;
        for name in &missing {
            let request = requests.get(name).copied().unwrap_or(0);
            if ratio < 1.0 {
                metrics.insert(name.clone(), request * fallback / 100);
            } else if ratio > 1.0 {
                metrics.insert(name.clone(), 0);
            }
        }
    }
    if scale_up_with_unready {
        for name in &unready {
            metrics.insert(name.clone(), 0);
        }
    }
    let (new_ratio, _, _) = utilization_ratio(&metrics, &requests, target_pct)?;
    if within_tolerance(new_ratio)
        || (ratio < 1.0 && new_ratio > 1.0)
        || (ratio > 1.0 && new_ratio < 1.0)
    {
        return Ok(proposal(current));
    }
    let replicas = (new_ratio * metrics.len() as f64).ceil() as i64;
    if (new_ratio < 1.0 && replicas > current) || (new_ratio > 1.0 && replicas < current) {
        return Ok(proposal(current));
    }
    Ok(proposal(replicas))
}

/// kube's `convertDesiredReplicasWithRules`: (replicas, ScalingLimited reason, message).
pub fn limit_replicas(
    current: i64,
    desired: i64,
    min: i64,
    max: i64,
) -> (i64, &'static str, &'static str) {
    let scale_up_limit = (SCALE_UP_LIMIT_FACTOR * current).max(SCALE_UP_LIMIT_MINIMUM);
    let (allowed_max, reason, message) = if max > scale_up_limit {
        (
            scale_up_limit,
            "ScaleUpLimit",
            "the desired replica count is increasing faster than the maximum scale rate",
        )
    } else {
        (
            max,
            "TooManyReplicas",
            "the desired replica count is more than the maximum replica count",
        )
    };
    if desired < min {
        (
            min,
            "TooFewReplicas",
            "the desired replica count is less than the minimum replica count",
        )
    } else if desired > allowed_max {
        (allowed_max, reason, message)
    } else {
        (
            desired,
            "DesiredWithinRange",
            "the desired count is within the acceptable range",
        )
    }
}

/// kube's `setStatus`: the status rebuilt from the replica counts and metric statuses, keeping
/// `lastScaleTime` (now, after a rescale) and the conditions.
fn rebuilt_status(
    old: &Value,
    current: i64,
    desired: i64,
    metrics: Option<Value>,
    rescaled_at: Option<SimTime>,
) -> Value {
    let mut s = json!({});
    match rescaled_at {
        Some(t) => s["lastScaleTime"] = json!(t.rfc3339()),
        None => {
            if let Some(t) = old.field("lastScaleTime") {
                s["lastScaleTime"] = t.clone();
            }
        }
    }
    s["currentReplicas"] = json!(current);
    s["desiredReplicas"] = json!(desired);
    if let Some(m) = metrics {
        s["currentMetrics"] = m;
    }
    if let Some(c) = old
        .field("conditions")
        .filter(|c| c.as_array().is_some_and(|a| !a.is_empty()))
    {
        s["conditions"] = c.clone();
    }
    s
}

/// A cpu quantity as `resource.NewMilliQuantity(m, DecimalSI)` prints it.
/// The cpu metric's name in messages (`computeStatusForResourceMetricGeneric`).
const CPU_METRIC_NAME: &str = "cpu resource utilization (percentage of request)";

/// `a.eventRecorder.Event(hpa, ...)`.
/// Sets one of the HPA's conditions, `(type, status, reason)` with kube's message, and records
/// the rule and inputs that decided it with the same values.
fn decide(
    ctx: &mut Ctx<'_>,
    status: &mut Value,
    (type_, value, reason): (&str, &str, &str),
    message: &str,
    rule: String,
) {
    conditions::set_hpa_condition(status, type_, value, reason, message, ctx.now);
    ctx.explain(Explanation::new(type_, format!("{value}/{reason}"), rule));
}

fn record(ctx: &mut Ctx<'_>, hpa: &Value, event_type: EventType, reason: &str, message: String) {
    let regarding = ObjectRef::to(hpa, "autoscaling/v2", "HorizontalPodAutoscaler");
    ctx.record(EventNote::new(regarding, event_type, reason, message));
}

fn milli_quantity(m: i64) -> String {
    if m % 1000 == 0 {
        format!("{}", m / 1000)
    } else {
        format!("{m}m")
    }
}

impl HpaController {
    /// After a failed metric or rescale: kube's `setCurrentReplicasAndMetricsInStatus` (the
    /// previous `desiredReplicas` kept) and `updateStatusIfNeeded`; retried next period.
    fn write_failure(
        &self,
        ctx: &mut Ctx<'_>,
        hpa: &Value,
        status: &Value,
        current: i64,
        metrics: Option<Value>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let desired = meta::i64_at(status, "/desiredReplicas").unwrap_or(0);
        ctx.explain(Explanation::new(
            "desiredReplicas",
            desired.to_string(),
            "kept from the previous status (0 when none): this sync failed",
        ));
        let s = rebuilt_status(status, current, desired, metrics, None);
        self.write_status(ctx, hpa, s);
        Ok(ReconcileAction::RequeueAfter { ms: SYNC_PERIOD_MS })
    }

    /// Sends the status if it changed (kube's `updateStatusIfNeeded`). A refused write (a 409
    /// from a stale cache) is only logged by kube and retried on the next period; the trace
    /// shows the request and its code.
    fn write_status(&self, ctx: &mut Ctx<'_>, hpa: &Value, status: Value) {
        if Some(&status) != hpa.field("status") {
            let mut body = hpa.clone();
            body["status"] = status;
            let _refused_until_next_period = ctx.send(client::update_status_object(
                &self.principal(),
                hpas(),
                body,
            ));
        }
    }
}

impl Reconciler for HpaController {
    fn name(&self) -> String {
        "horizontal-pod-autoscaler".into()
    }

    fn event_api(&self) -> Option<EventApi> {
        Some(EventApi::CoreV1 {
            component: "horizontal-pod-autoscaler".into(),
            host: String::new(),
        })
    }

    fn principal(&self) -> String {
        crate::api::principals::HPA_CONTROLLER.into()
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        *gr == hpas() || *gr == pods()
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        old: Option<&Arc<Value>>,
        new: &Arc<Value>,
        _cache: &Informer,
    ) -> Vec<ObjectKey> {
        // The HPA works on its resync period. A new HPA is synced at once (kube's enqueueHPA);
        // an update, its own status writes included, waits for the next period
        // (enqueueRateLimited), unless it brings a new generation (kube with HPAGeneration).
        // Pods are in its cache for reading (kube's pod lister); the target's scale is read
        // from the API server.
        if ev.key.gr != hpas() {
            return Vec::new();
        }
        let respec = old.is_none_or(|o| meta::generation(o) != meta::generation(new));
        if ev.event_type == WatchEventType::Modified && !respec {
            return Vec::new();
        }
        vec![ObjectKey::clone(&ev.key)]
    }

    fn periodic(&self) -> bool {
        true
    }

    fn reset(&mut self) {
        self.recommendations.clear();
    }

    fn reconcile(
        &mut self,
        key: &ObjectKey,
        ctx: &mut Ctx<'_>,
    ) -> Result<ReconcileAction, ReconcileError> {
        let Some(hpa) = ctx.cache.get(key).map(|h| h.as_ref().clone()) else {
            self.recommendations.remove(key);
            return Ok(ReconcileAction::AwaitChange);
        };
        let requeue = Ok(ReconcileAction::RequeueAfter { ms: SYNC_PERIOD_MS });
        let now = ctx.now;
        let mut status = hpa.field("status").cloned().unwrap_or_else(|| json!({}));
        let target_name = str_at(&hpa, "/spec/scaleTargetRef/name").to_owned();
        // kube's `scaleNamespacer.Get`: the target's Scale, fresh from the API server.
        let get_scale = {
            let mut r = ApiRequest::get(
                &self.principal(),
                deployments(),
                &key.namespace,
                &target_name,
            );
            r.subresource = Some(Subresource::Scale);
            r
        };
        let scale = match ctx.send(get_scale) {
            Ok(scale) => scale,
            Err(e) => {
                record(
                    ctx,
                    &hpa,
                    EventType::Warning,
                    "FailedGetScale",
                    e.to_string(),
                );
                decide(
                    ctx,
                    &mut status,
                    ("AbleToScale", "False", "FailedGetScale"),
                    &format!(
                        "the HPA controller was unable to get the target's current scale: {e}"
                    ),
                    format!(
                        "reading the Scale of deployments {}/{target_name} failed: {e}",
                        key.namespace
                    ),
                );
                self.write_status(ctx, &hpa, status);
                return requeue;
            }
        };
        let current = meta::i64_at(&scale, "/spec/replicas").unwrap_or(1);
        decide(
            ctx,
            &mut status,
            ("AbleToScale", "True", "SucceededGetScale"),
            "the HPA controller was able to get the target's current scale",
            format!(
                "the Scale of deployments {}/{target_name} reads spec.replicas {current}",
                key.namespace
            ),
        );
        self.recommendations
            .entry(key.clone())
            .or_insert_with(|| vec![(now, current)]);
        let min = meta::i64_at(&hpa, "/spec/minReplicas").unwrap_or(1);
        let max = meta::i64_at(&hpa, "/spec/maxReplicas").unwrap_or(min);
        let mut metric_status = None;
        // `rescaleReason`: a clamp to the spec's bounds, or what the metric proposed.
        let mut rescale_reason = String::new();
        // How `desired` was reached, for its explanation.
        let mut desired_rule;
        let desired = if current == 0 {
            decide(
                ctx,
                &mut status,
                ("ScalingActive", "False", "ScalingDisabled"),
                "scaling is disabled since the replica count of the target is zero",
                "the target's spec.replicas is 0".into(),
            );
            desired_rule = "scaling is disabled (target replicas 0)".to_owned();
            0
        } else if current > max {
            rescale_reason = "Current number of replicas above Spec.MaxReplicas".into();
            desired_rule = format!("current replicas {current} > maxReplicas {max}: maxReplicas");
            max
        } else if current < min {
            rescale_reason = "Current number of replicas below Spec.MinReplicas".into();
            desired_rule = format!("current replicas {current} < minReplicas {min}: minReplicas");
            min
        } else {
            let target_pct = hpa
                .at("/spec/metrics")
                .and_then(Value::as_array)
                .and_then(|ms| {
                    ms.iter()
                        .filter(|m| str_at(m, "/resource/name") == "cpu")
                        .find_map(|m| m.at("/resource/target/averageUtilization"))
                })
                .and_then(Value::as_i64)
                .unwrap_or(DEFAULT_CPU_UTILIZATION);
            // The Scale's `status.selector`, as kube parses it for the pod lister.
            let selector =
                crate::api::Selector::parse(str_at(&scale, "/status/selector")).unwrap_or_default();
            let pod_gr = pods();
            let selected: Vec<&Value> = ctx
                .cache
                .list(&pod_gr)
                .map(|p| p.as_ref())
                .filter(|p| meta::namespace(p) == key.namespace && selector.matches_object(p))
                .collect();
            let load = ctx
                .env
                .load_millicores
                .get(&format!("{}/{}", key.namespace, target_name))
                .copied()
                .unwrap_or(0);
            let metrics = pod_metrics(&selected, load);
            match resource_replicas(current, target_pct, &selected, &metrics, now) {
                Err(e) => {
                    // getUnableComputeReplicaCountCondition's event, then reconcileAutoscaler's
                    // for the metrics as a whole (one metric, so one invalid out of one).
                    let err = format!("failed to get cpu utilization: {e}");
                    record(
                        ctx,
                        &hpa,
                        EventType::Warning,
                        "FailedGetResourceMetric",
                        err.clone(),
                    );
                    record(
                        ctx,
                        &hpa,
                        EventType::Warning,
                        "FailedComputeMetricsReplicas",
                        // computeReplicasForMetric wraps the error once more.
                        format!("invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: {err}"),
                    );
                    decide(
                        ctx,
                        &mut status,
                        ("ScalingActive", "False", "FailedGetResourceMetric"),
                        &format!("the HPA was unable to compute the replica count: {err}"),
                        err.clone(),
                    );
                    // kube's statuses slice holds one empty entry per failed metric.
                    let metrics = Some(json!([{"type": ""}]));
                    return self.write_failure(ctx, &hpa, &status, current, metrics);
                }
                Ok(p) => {
                    decide(
                        ctx,
                        &mut status,
                        ("ScalingActive", "True", "ValidMetricFound"),
                        &format!("the HPA was able to successfully calculate a replica count from {CPU_METRIC_NAME}"),
                        format!(
                            "cpu utilization {}% (average {}m) of target {target_pct}% over {} selected pods proposes {} replicas",
                            p.utilization,
                            p.average_millis,
                            selected.len(),
                            p.replicas
                        ),
                    );
                    metric_status = Some(
                        json!([{"type": "Resource", "resource": {"name": "cpu", "current": {
                            "averageValue": milli_quantity(p.average_millis),
                            "averageUtilization": p.utilization,
                        }}}]),
                    );
                    let proposed = p.replicas.max(0);
                    if proposed > current {
                        rescale_reason = format!("{CPU_METRIC_NAME} above target");
                    } else if proposed < current {
                        rescale_reason = "All metrics below target".into();
                    }
                    let stabilized = self.stabilize(key, proposed, now);
                    if stabilized != proposed {
                        decide(
                            ctx,
                            &mut status,
                            ("AbleToScale", "True", "ScaleDownStabilized"),
                            "recent recommendations were higher than current one, applying the highest recent recommendation",
                            format!("proposal {proposed} < {stabilized}, the highest recommendation of the stabilization window"),
                        );
                    } else {
                        decide(
                            ctx,
                            &mut status,
                            ("AbleToScale", "True", "ReadyForNewScale"),
                            "recommended size matches current size",
                            format!("proposal {proposed} is the highest recommendation of the stabilization window"),
                        );
                    }
                    let (desired, reason, message) = limit_replicas(current, stabilized, min, max);
                    let limited = if desired == stabilized {
                        "False"
                    } else {
                        "True"
                    };
                    decide(
                        ctx,
                        &mut status,
                        ("ScalingLimited", limited, reason),
                        message,
                        format!(
                            "recommendation {stabilized} within minReplicas {min}, maxReplicas {max} and the scale-up limit {} (max(2 x current {current}, 4)) is {desired}",
                            (SCALE_UP_LIMIT_FACTOR * current).max(SCALE_UP_LIMIT_MINIMUM)
                        ),
                    );
                    desired_rule = format!(
                        "proposal {proposed}, stabilized {stabilized}, limited ({reason}) {desired}"
                    );
                    desired
                }
            }
        };
        let rescale = current != 0 && desired != current;
        let mut rescaled_at = None;
        if rescale {
            // kube's `scaleNamespacer.Update`: the Scale it read, with the new replicas.
            let mut body = Value::clone(&scale);
            body["spec"]["replicas"] = json!(desired);
            let mut req = ApiRequest::update(
                &self.principal(),
                deployments(),
                &key.namespace,
                &target_name,
                body,
            );
            req.subresource = Some(Subresource::Scale);
            if let Err(e) = ctx.send(req) {
                record(
                    ctx,
                    &hpa,
                    EventType::Warning,
                    "FailedRescale",
                    format!("New size: {desired}; reason: {rescale_reason}; error: {e}"),
                );
                decide(
                    ctx,
                    &mut status,
                    ("AbleToScale", "False", "FailedUpdateScale"),
                    &format!("the HPA controller was unable to update the target scale: {e}"),
                    format!("updating the Scale to {desired} failed: {e}"),
                );
                return self.write_failure(ctx, &hpa, &status, current, metric_status);
            }
            decide(
                ctx,
                &mut status,
                ("AbleToScale", "True", "SucceededRescale"),
                &format!("the HPA controller was able to update the target scale to {desired}"),
                format!("the Scale was updated from {current} to {desired}"),
            );
            record(
                ctx,
                &hpa,
                EventType::Normal,
                "SuccessfulRescale",
                format!("New size: {desired}; reason: {rescale_reason}"),
            );
            rescaled_at = Some(now);
        }
        let desired = if rescale {
            desired
        } else {
            if current != 0 {
                desired_rule = format!("{desired_rule} = current replicas: no rescale");
            }
            current
        };
        ctx.explain(Explanation::new(
            "desiredReplicas",
            desired.to_string(),
            desired_rule,
        ));
        let s = rebuilt_status(&status, current, desired, metric_status, rescaled_at);
        self.write_status(ctx, &hpa, s);
        requeue
    }
}

#[cfg(test)]
mod tests {
    //! Each case is worked by hand from kube's replica_calculator.go, with 100m requests and a
    //! 50 % target unless said otherwise.
    use super::*;

    fn t(s: u64) -> SimTime {
        SimTime::from_ms(s * 1000)
    }

    /// A Pod started at 0 s, requesting 100m, in `phase`, with a Ready condition `(status,
    /// lastTransitionTime in s)` if given.
    fn pod(name: &str, phase: &str, ready: Option<(&str, u64)>) -> Value {
        let mut p = json!({
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "100m"}}}]},
            "status": {"phase": phase, "startTime": t(0).rfc3339(), "conditions": []},
        });
        if let Some((s, since)) = ready {
            p["status"]["conditions"] =
                json!([{"type": "Ready", "status": s, "lastTransitionTime": t(since).rfc3339()}]);
        }
        p
    }

    fn ready(name: &str) -> Value {
        pod(name, "Running", Some(("True", 1)))
    }

    fn samples(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
        pairs.iter().map(|(n, m)| ((*n).to_owned(), *m)).collect()
    }

    fn propose(
        current: i64,
        pods: &[Value],
        metrics: &[(&str, u64)],
        now: SimTime,
    ) -> Result<Proposal, String> {
        let refs: Vec<&Value> = pods.iter().collect();
        resource_replicas(current, 50, &refs, &samples(metrics), now)
    }

    fn replicas(current: i64, pods: &[Value], metrics: &[(&str, u64)]) -> Result<i64, String> {
        propose(current, pods, metrics, t(30)).map(|p| p.replicas)
    }

    fn proposal(replicas: i64, utilization: i64, average_millis: i64) -> Proposal {
        Proposal {
            replicas,
            utilization,
            average_millis,
        }
    }

    #[test]
    fn all_pods_ready_scale_to_ceil_of_ratio_times_ready_pods() {
        // (125 + 125) × 100 / 200 = 125 %, 125 / 50 = 2.5, ceil(2.5 × 2) = 5.
        let pods = [ready("a"), ready("b")];
        let p = propose(2, &pods, &[("a", 125), ("b", 125)], t(30));
        assert_eq!(p, Ok(proposal(5, 125, 125)));
        // 4 pods at 10m: 10 % / 50 % = 0.2, ceil(0.2 × 4) = 1.
        let four = [ready("a"), ready("b"), ready("c"), ready("d")];
        let m = [("a", 10), ("b", 10), ("c", 10), ("d", 10)];
        assert_eq!(replicas(4, &four, &m), Ok(1));
    }

    #[test]
    fn a_ratio_within_ten_percent_keeps_the_current_count() {
        // 45 % / 50 % = 0.9: |1 - 0.9| = 0.09999999999999998, within the tolerance. 55 % / 50 %
        // = 1.1: |1 - 1.1| = 0.10000000000000009 in float64, outside in 1.32, so
        // ceil(1.1 × 2) = 3.
        let pods = [ready("a"), ready("b")];
        assert_eq!(replicas(2, &pods, &[("a", 45), ("b", 45)]), Ok(2));
        assert_eq!(replicas(2, &pods, &[("a", 55), ("b", 55)]), Ok(3));
        // 54 % / 50 % = 1.08: within.
        assert_eq!(replicas(2, &pods, &[("a", 54), ("b", 54)]), Ok(2));
        // 56 % / 50 % = 1.12: ceil(1.12 × 2) = 3.
        assert_eq!(replicas(2, &pods, &[("a", 56), ("b", 56)]), Ok(3));
    }

    #[test]
    fn utilization_is_integer_percent_as_kube_truncates_it() {
        // 109 / 200 → 54 % (not 54.5, nor 55 rounded), so 1.08: within tolerance; rounded
        // to 55 % it would be 1.1, outside.
        let pods = [ready("a"), ready("b")];
        assert_eq!(replicas(2, &pods, &[("a", 55), ("b", 54)]), Ok(2));
    }

    #[test]
    fn on_a_scale_up_unready_pods_count_as_using_nothing() {
        // Ready a: 150 % → 3.0 > 1 with b unready; b at 0: 150 / 200 = 75 % → 1.5,
        // ceil(1.5 × 2) = 3 (not ceil(3.0 × 1)); the reported utilization is a's own.
        let pods = [ready("a"), pod("b", "Running", Some(("False", 20)))];
        let p = propose(2, &pods, &[("a", 150), ("b", 150)], t(30));
        assert_eq!(p, Ok(proposal(3, 150, 150)));
    }

    #[test]
    fn on_a_scale_down_unready_pods_are_left_out() {
        // 20 % / 50 % = 0.4 from a alone; no rebalancing below 1: ceil(0.4 × 1) = 1.
        let pods = [ready("a"), pod("b", "Running", Some(("False", 20)))];
        assert_eq!(replicas(2, &pods, &[("a", 20), ("b", 20)]), Ok(1));
    }

    #[test]
    fn pending_pods_and_pods_without_a_ready_condition_are_unready() {
        let pods = [
            ready("a"),
            pod("b", "Pending", None),
            pod("c", "Running", None),
        ];
        // a: 150 % → 3.0; b and c at 0: 150 / 300 = 50 % → 1.0, within tolerance: keep 3.
        assert_eq!(replicas(3, &pods, &[("a", 150), ("c", 150)]), Ok(3));
    }

    #[test]
    fn a_pod_ready_for_less_than_one_metric_window_is_unready_during_initialization() {
        // b became ready at 20 s; the sample at 30 s is within 15 s of it: unready.
        let pods = [ready("a"), pod("b", "Running", Some(("True", 20)))];
        assert_eq!(replicas(2, &pods, &[("a", 150), ("b", 150)]), Ok(3));
        // At 36 s it counts: 150 % → 3.0, ceil(3.0 × 2) = 6.
        let p = propose(2, &pods, &[("a", 150), ("b", 150)], t(36));
        assert_eq!(p.map(|p| p.replicas), Ok(6));
    }

    #[test]
    fn after_initialization_only_a_pod_that_was_never_ready_is_unready() {
        let now = t(400);
        let fell = pod("b", "Running", Some(("False", 100)));
        let never = pod("b", "Running", Some(("False", 10)));
        let a = ready("a");
        let m = samples(&[("a", 150), ("b", 150)]);
        // b was ready and fell over at 100 s (after start + 30 s): counted, 150 % → ceil(3 × 2).
        let p = resource_replicas(2, 50, &[&a, &fell], &m, now);
        assert_eq!(p.map(|p| p.replicas), Ok(6));
        // b has been unready since 10 s (within start + 30 s): never ready, unready: 3.
        let p = resource_replicas(2, 50, &[&a, &never], &m, now);
        assert_eq!(p.map(|p| p.replicas), Ok(3));
    }

    #[test]
    fn on_a_scale_up_missing_pods_count_as_using_nothing() {
        // b runs but has no sample: a alone 150 % → 3.0; b at 0: 75 % → 1.5, ceil(1.5 × 2) = 3.
        let pods = [ready("a"), ready("b")];
        assert_eq!(replicas(2, &pods, &[("a", 150)]), Ok(3));
    }

    #[test]
    fn on_a_scale_down_missing_pods_count_as_their_whole_request() {
        // a, b, c at 10 %: 0.2; d missing at 100m: 130 / 400 = 32 % → 0.64, ceil(0.64 × 4) = 3.
        let pods = [ready("a"), ready("b"), ready("c"), ready("d")];
        let m = [("a", 10), ("b", 10), ("c", 10)];
        assert_eq!(replicas(4, &pods, &m), Ok(3));
        // The same with only 2 wanted: 3 would be a scale-up on a falling ratio, so keep 2.
        assert_eq!(replicas(2, &pods, &m), Ok(2));
    }

    #[test]
    fn a_recomputed_ratio_within_tolerance_or_across_1_keeps_the_current_count() {
        // a 108 % → 2.16; b unready at 0: 108 / 200 = 54 % → 1.08, within tolerance.
        let pods = [ready("a"), pod("b", "Running", Some(("False", 20)))];
        assert_eq!(replicas(2, &pods, &[("a", 108)]), Ok(2));
        // a 110 %: 55 % → 1.1, outside in 1.32's float test, so ceil(1.1 × 2) = 3.
        assert_eq!(replicas(2, &pods, &[("a", 110)]), Ok(3));
        // a 60 % → 1.2; b at 0: 30 % → 0.6, the direction flips: keep 2.
        assert_eq!(replicas(2, &pods, &[("a", 60)]), Ok(2));
        // a 20 % → 0.4; b missing at 100 %: 120 / 200 = 60 % → 1.2, flips: keep 2.
        let both = [ready("a"), ready("b")];
        assert_eq!(replicas(2, &both, &[("a", 20)]), Ok(2));
    }

    #[test]
    fn pods_being_deleted_and_terminal_pods_are_ignored() {
        let mut deleting = ready("c");
        deleting["metadata"]["deletionTimestamp"] = json!(t(25).rfc3339());
        let pods = [
            ready("a"),
            pod("b", "Failed", None),
            deleting,
            pod("d", "Succeeded", None),
        ];
        // a alone: 125 % → 2.5, ceil(2.5 × 1) = 3.
        assert_eq!(
            replicas(3, &pods, &[("a", 125), ("c", 0), ("d", 100)]),
            Ok(3)
        );
    }

    #[test]
    fn calculator_errors_are_kubes() {
        let pods = [ready("a")];
        assert_eq!(
            replicas(1, &pods, &[]),
            Err("unable to get metrics for resource cpu: no metrics returned from resource metrics API".into())
        );
        assert_eq!(
            replicas(1, &[], &[("a", 10)]),
            Err("no pods returned by selector while calculating replica count".into())
        );
        let unready = [pod("a", "Running", Some(("False", 5)))];
        assert_eq!(
            replicas(1, &unready, &[("a", 10)]),
            Err("did not receive metrics for targeted pods (pods might be unready)".into())
        );
        let mut no_request = ready("a");
        no_request["spec"]["containers"][0]["resources"] = json!({});
        assert_eq!(
            replicas(1, &[no_request], &[("a", 10)]),
            Err("missing request for cpu in container app of Pod a".into())
        );
    }

    #[test]
    fn the_load_is_split_over_running_pods_in_whole_millicores() {
        let mut leaving = ready("e");
        leaving["metadata"]["deletionTimestamp"] = json!(t(25).rfc3339());
        let pods = [
            ready("d"),
            ready("b"),
            ready("a"),
            ready("c"),
            pod("p", "Pending", None),
            leaving,
        ];
        let refs: Vec<&Value> = pods.iter().collect();
        assert_eq!(
            pod_metrics(&refs, 250),
            samples(&[("a", 63), ("b", 63), ("c", 62), ("d", 62), ("e", 0)])
        );
    }

    #[test]
    fn the_scale_up_limit_is_twice_current_or_four() {
        assert_eq!(
            limit_replicas(2, 5, 1, 6),
            (
                4,
                "ScaleUpLimit",
                "the desired replica count is increasing faster than the maximum scale rate"
            )
        );
        assert_eq!(limit_replicas(2, 5, 1, 3).1, "TooManyReplicas");
        assert_eq!(
            limit_replicas(3, 0, 1, 6),
            (
                1,
                "TooFewReplicas",
                "the desired replica count is less than the minimum replica count"
            )
        );
        assert_eq!(limit_replicas(5, 7, 1, 10).1, "DesiredWithinRange");
    }

    #[test]
    fn downscale_stabilization_applies_the_highest_recommendation_of_300_seconds() {
        let mut c = HpaController::new();
        let key = ObjectKey::new(hpas(), "default", "web");
        assert_eq!(c.stabilize(&key, 5, t(0)), 5);
        assert_eq!(c.stabilize(&key, 2, t(100)), 5);
        assert_eq!(
            c.stabilize(&key, 2, t(300)),
            5,
            "a sample exactly 300 s old still counts"
        );
        assert_eq!(c.stabilize(&key, 2, t(301)), 2);
    }

    #[test]
    fn cpu_quantities_print_as_decimal_si() {
        assert_eq!(milli_quantity(125), "125m");
        assert_eq!(milli_quantity(1000), "1");
        assert_eq!(milli_quantity(0), "0");
    }
}
