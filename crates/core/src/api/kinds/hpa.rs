//! HorizontalPodAutoscalers (`autoscaling/v2`): bounds and the scale target
//! (pkg/apis/autoscaling/validation).

use crate::json::{json, Value};

use super::super::meta::JsonPointer;
use super::super::typed::{FieldTypes, Ty};
use super::super::validation::FieldError;
use super::common::{default_field, nonneg, obj_mut, MAX_REPLICAS};
use super::{KindStrategy, ResourceInfo};

/// The `HorizontalPodAutoscaler` strategy.
pub(crate) struct HorizontalPodAutoscalerStrategy;

impl KindStrategy for HorizontalPodAutoscalerStrategy {
    fn field_types(&self) -> FieldTypes {
        &[
            (
                "/spec",
                Ty::Object("v2.HorizontalPodAutoscalerSpec"),
                "HorizontalPodAutoscaler.spec",
            ),
            (
                "/spec/minReplicas",
                Ty::Int32,
                "HorizontalPodAutoscalerSpec.spec.minReplicas",
            ),
            (
                "/spec/maxReplicas",
                Ty::Int32,
                "HorizontalPodAutoscalerSpec.spec.maxReplicas",
            ),
            (
                "/spec/scaleTargetRef",
                Ty::Object("v2.CrossVersionObjectReference"),
                "HorizontalPodAutoscalerSpec.spec.scaleTargetRef",
            ),
            (
                "/spec/metrics",
                Ty::Array("[]v2.MetricSpec"),
                "HorizontalPodAutoscalerSpec.spec.metrics",
            ),
            (
                "/status/currentReplicas",
                Ty::Int32,
                "HorizontalPodAutoscalerStatus.status.currentReplicas",
            ),
            (
                "/status/desiredReplicas",
                Ty::Int32,
                "HorizontalPodAutoscalerStatus.status.desiredReplicas",
            ),
        ]
    }

    fn defaults(&self, obj: &mut Value) {
        let Some(spec) = obj_mut(obj, "spec") else {
            return;
        };
        default_field(spec, "minReplicas", json!(1));
    }

    fn validate(&self, _info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
        for k in ["kind", "name"] {
            if obj
                .at(&format!("/spec/scaleTargetRef/{k}"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                errs.push(FieldError::required(format!("spec.scaleTargetRef.{k}"), ""));
            }
        }
        let min = obj
            .at("/spec/minReplicas")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        if min < 1 {
            errs.push(FieldError::invalid(
                "spec.minReplicas",
                json!(min),
                "must be greater than or equal to 1",
            ));
        }
        match obj.at("/spec/maxReplicas").and_then(Value::as_i64) {
            None => errs.push(FieldError::required("spec.maxReplicas", "")),
            Some(max) if max < 1 => errs.push(FieldError::invalid("spec.maxReplicas", json!(max), "must be greater than or equal to 1")),
            Some(max) if max > MAX_REPLICAS => errs.push(FieldError::invalid(
                "spec.maxReplicas",
                json!(max),
                format!("must be less than or equal to {MAX_REPLICAS} (the simulator's per-object replica cap)"),
            )),
            Some(max) if max < min => errs.push(FieldError::invalid("spec.maxReplicas", json!(max), "must be greater than or equal to `minReplicas`")),
            Some(_) => {}
        }
    }

    fn validate_status(&self, obj: &Value, errs: &mut Vec<FieldError>) {
        nonneg(
            obj,
            "/status/currentReplicas",
            "status.currentReplicas",
            errs,
        );
        nonneg(
            obj,
            "/status/desiredReplicas",
            "status.desiredReplicas",
            errs,
        );
    }
}
