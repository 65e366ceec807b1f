//! The HorizontalPodAutoscaler controller (autoscaling/v2, CPU utilization) [kubernetes
//! pkg/controller/podautoscaler/horizontal.go, replica_calculator.go]: every 15 s it reads the
//! simulated load of its target, computes `ceil(usageRatio × readyPods)` with a 10 % tolerance,
//! clamps to min/max and the default scale-up rate (max of 2× and +4 per period), applies the
//! 300 s downscale stabilization window, writes the target's `spec.replicas` and its own status
//! and AbleToScale/ScalingActive/ScalingLimited conditions.
//!
//! The metric is the world's simulated load (environment), not a metrics API. Deviation: the
//! target is scaled with a merge patch of the Deployment, not through `/scale`.
//! Deviation: the ready count is the target's `status.readyReplicas`; kube reads the scale's
//! selector, lists the Pods and counts each Pod's Ready condition, never the Deployment status.

use crate::api::meta::JsonPointer;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};

use super::util::{self, deployments, hpas, str_at};
use super::{Action, Ctx, ReconcileError, Reconciler};
use crate::api::{GroupResource, ObjectKey, WatchEvent};
use crate::engine::informer::Informer;
use crate::time::SimTime;

pub const SYNC_PERIOD_MS: u64 = 15_000;
pub const TOLERANCE: f64 = 0.1;
pub const DOWNSCALE_STABILIZATION_MS: u64 = 300_000;

#[derive(Clone, Debug, Default)]
pub struct HpaController {
    /// Recent recommendations per HPA, for the downscale stabilization window.
    recommendations: BTreeMap<ObjectKey, Vec<(SimTime, i64)>>,
}

impl HpaController {
    pub fn new() -> Self {
        Self::default()
    }
}

/// The replica count the utilization asks for, or None within tolerance.
pub fn desired_replicas(
    total_usage_millis: u64,
    ready: i64,
    request_millis: u64,
    target_pct: i64,
) -> Option<i64> {
    if ready <= 0 || request_millis == 0 || target_pct <= 0 {
        return None;
    }
    let utilization = total_usage_millis as f64 * 100.0 / (ready as f64 * request_millis as f64);
    let ratio = utilization / target_pct as f64;
    if (ratio - 1.0).abs() <= TOLERANCE {
        return None;
    }
    Some((ratio * ready as f64).ceil() as i64)
}

fn set_condition(
    status: &mut Value,
    type_: &str,
    s: &str,
    reason: &str,
    message: &str,
    now: SimTime,
) {
    let mut list: Vec<Value> = status
        .get("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut transition = now.rfc3339();
    if let Some(old) = list.iter().find(|c| str_at(c, "/type") == type_) {
        if str_at(old, "/status") == s {
            transition = str_at(old, "/lastTransitionTime").to_owned();
        }
    }
    let entry = json!({
        "type": type_, "status": s, "lastTransitionTime": transition, "reason": reason, "message": message,
    });
    match list.iter_mut().find(|c| str_at(c, "/type") == type_) {
        Some(c) => *c = entry,
        None => list.push(entry),
    }
    status["conditions"] = Value::Array(list);
}

impl Reconciler for HpaController {
    fn name(&self) -> String {
        "horizontal-pod-autoscaler".into()
    }

    fn principal(&self) -> String {
        crate::api::principals::HPA_CONTROLLER.into()
    }

    fn watches(&self, gr: &GroupResource) -> bool {
        *gr == hpas() || *gr == deployments()
    }

    fn keys_for(
        &mut self,
        ev: &WatchEvent,
        _old: Option<&Arc<Value>>,
        _new: &Arc<Value>,
        _cache: &Informer,
    ) -> Vec<ObjectKey> {
        // The HPA works on its resync period; only its own objects wake it.
        if ev.key.gr == hpas() {
            return vec![ev.key.clone()];
        }
        Vec::new()
    }

    fn periodic(&self) -> bool {
        true
    }

    fn reset(&mut self) {
        self.recommendations.clear();
    }

    fn reconcile(&mut self, key: &ObjectKey, ctx: &mut Ctx<'_>) -> Result<Action, ReconcileError> {
        let Some(hpa) = ctx.cache.get(key).map(|h| h.as_ref().clone()) else {
            self.recommendations.remove(key);
            return Ok(Action::AwaitChange);
        };
        let now = ctx.now;
        let target_name = str_at(&hpa, "/spec/scaleTargetRef/name").to_owned();
        let target_key = ObjectKey::new(deployments(), &key.namespace, &target_name);
        let min = util::i64_at(&hpa, "/spec/minReplicas").unwrap_or(1);
        let max = util::i64_at(&hpa, "/spec/maxReplicas").unwrap_or(min);
        let target_pct = hpa
            .at("/spec/metrics")
            .and_then(Value::as_array)
            .and_then(|ms| {
                ms.iter()
                    .find_map(|m| m.at("/resource/target/averageUtilization"))
            })
            .and_then(Value::as_i64)
            .unwrap_or(80);
        let mut status = hpa.get("status").cloned().unwrap_or_else(|| json!({}));
        let principal = self.principal();
        let Some(dep) = ctx.cache.get(&target_key).map(|d| d.as_ref().clone()) else {
            set_condition(&mut status, "AbleToScale", "False", "FailedGetScale",
                &format!("the HPA controller was unable to get the target's current scale: deployments.apps \"{target_name}\" not found"), now);
            let mut body = hpa.clone();
            body["status"] = status;
            if Some(&body) != Some(&hpa) {
                ctx.send(util::update_status(&principal, hpas(), body))?;
            }
            return Ok(Action::RequeueAfter { ms: SYNC_PERIOD_MS });
        };
        let current = util::i64_at(&dep, "/spec/replicas").unwrap_or(1);
        let ready = util::i64_at(&dep, "/status/readyReplicas").unwrap_or(0);
        let (request, _) = util::pod_requests(
            &json!({"spec": dep.at("/spec/template/spec").cloned().unwrap_or(Value::Null)}),
        );
        let load = ctx
            .env
            .load_millicores
            .get(&format!("{}/{}", key.namespace, target_name))
            .copied()
            .unwrap_or(0);
        let metric_ok = ready > 0 && request > 0;
        let mut desired = if metric_ok {
            desired_replicas(load, ready, request, target_pct).unwrap_or(current)
        } else {
            current
        };
        if metric_ok {
            let utilization =
                (load as f64 * 100.0 / (ready as f64 * request as f64)).round() as i64;
            status["currentMetrics"] = json!([{"type": "Resource", "resource": {"name": "cpu", "current": {
                "averageUtilization": utilization,
                "averageValue": format!("{}m", load / ready as u64),
            }}}]);
            set_condition(&mut status, "ScalingActive", "True", "ValidMetricFound",
                "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)", now);
        } else {
            set_condition(
                &mut status,
                "ScalingActive",
                "False",
                "FailedGetResourceMetric",
                "the HPA was unable to compute the replica count: no recommendation",
                now,
            );
        }
        // Downscale stabilization: the highest recommendation of the last 300 s.
        let recs = self.recommendations.entry(key.clone()).or_default();
        recs.retain(|(t, _)| now.as_ms() < t.as_ms() + DOWNSCALE_STABILIZATION_MS);
        recs.push((now, desired));
        let stabilized = recs.iter().map(|(_, r)| *r).max().unwrap_or(desired);
        let mut able = (
            "ReadyForNewScale",
            "recommended size matches current size".to_owned(),
        );
        let raw = desired;
        desired = current.max(raw).min(stabilized);
        if desired != raw {
            able = ("ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation".to_owned());
        }
        let scale_up_limit = (current * 2).max(current + 4);
        let limited = if desired > max {
            desired = max;
            Some((
                "TooManyReplicas",
                "the desired replica count is more than the maximum replica count",
            ))
        } else if desired < min {
            desired = min;
            Some((
                "TooFewReplicas",
                "the desired replica count is less than the minimum replica count",
            ))
        } else if desired > scale_up_limit {
            desired = scale_up_limit;
            Some((
                "ScaleUpLimit",
                "the desired replica count is increasing faster than the maximum scale rate",
            ))
        } else {
            None
        };
        match limited {
            Some((r, m)) => set_condition(&mut status, "ScalingLimited", "True", r, m, now),
            None => set_condition(
                &mut status,
                "ScalingLimited",
                "False",
                "DesiredWithinRange",
                "the desired count is within the acceptable range",
                now,
            ),
        }
        if desired != current {
            let patch = json!({"spec": {"replicas": desired}});
            match ctx.send(util::patch(
                &principal,
                deployments(),
                &key.namespace,
                &target_name,
                patch,
            )) {
                Ok(_) => {
                    able = (
                        "SucceededRescale",
                        format!(
                            "the HPA controller was able to update the target scale to {desired}"
                        ),
                    );
                    status["lastScaleTime"] = json!(now.rfc3339());
                }
                Err(e) => {
                    set_condition(
                        &mut status,
                        "AbleToScale",
                        "False",
                        "FailedUpdateScale",
                        &format!("the HPA controller was unable to update the target scale: {e}"),
                        now,
                    );
                    let mut body = hpa.clone();
                    body["status"] = status;
                    let _ = ctx.send(util::update_status(&principal, hpas(), body));
                    return Err(e.into());
                }
            }
        }
        set_condition(&mut status, "AbleToScale", "True", able.0, &able.1, now);
        status["observedGeneration"] = json!(util::generation(&hpa));
        status["currentReplicas"] = json!(current);
        status["desiredReplicas"] = json!(desired);
        order(&mut status);
        if Some(&status) != hpa.get("status") {
            let mut body = hpa.clone();
            body["status"] = status;
            ctx.send(util::update_status(&principal, hpas(), body))?;
        }
        Ok(Action::RequeueAfter { ms: SYNC_PERIOD_MS })
    }
}

fn order(status: &mut Value) {
    const ORDER: [&str; 3] = ["AbleToScale", "ScalingActive", "ScalingLimited"];
    if let Some(list) = status.get_mut("conditions").and_then(Value::as_array_mut) {
        list.sort_by_key(|c| {
            ORDER
                .iter()
                .position(|t| *t == str_at(c, "/type"))
                .unwrap_or(3)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utilization_above_target_scales_up_by_the_ratio() {
        // 2 pods requesting 100m each, 400m used: 200 % of request vs 50 % target -> 8 pods.
        assert_eq!(desired_replicas(400, 2, 100, 50), Some(8));
    }

    #[test]
    fn a_ratio_within_ten_percent_is_left_alone() {
        assert_eq!(desired_replicas(105, 2, 100, 50), None);
    }
}
