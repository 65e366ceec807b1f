//! Deployments (`apps/v1`), as kube's pkg/registry/apps/deployment/strategy.go and
//! pkg/apis/apps/validation define them.

use crate::api::meta::Fields;
use crate::json::{json, Value};

use super::super::meta::JsonPointer;
use super::super::meta::{meta_mut, set_or_remove};
use super::super::typed::{FieldTypes, Ty};
use super::super::validation::FieldError;
use super::common::{
    default_field, immutable, nonneg, obj_mut, replicas_in_range, TEMPLATE_CONTAINERS,
};
use super::pod::default_pod_spec;
use super::workload::{
    validate_selector_and_template, validate_workload_status, WORKLOAD_STATUS_TYPES,
};
use super::{KindStrategy, ResourceInfo};

/// The `Deployment` strategy.
pub(crate) struct DeploymentStrategy;

impl KindStrategy for DeploymentStrategy {
    fn field_types(&self) -> FieldTypes {
        &[
            ("/spec", Ty::Object("v1.DeploymentSpec"), "Deployment.spec"),
            ("/spec/replicas", Ty::Int32, "DeploymentSpec.spec.replicas"),
            (
                "/spec/minReadySeconds",
                Ty::Int32,
                "DeploymentSpec.spec.minReadySeconds",
            ),
            (
                "/spec/revisionHistoryLimit",
                Ty::Int32,
                "DeploymentSpec.spec.revisionHistoryLimit",
            ),
            (
                "/spec/progressDeadlineSeconds",
                Ty::Int32,
                "DeploymentSpec.spec.progressDeadlineSeconds",
            ),
            ("/spec/paused", Ty::Bool, "DeploymentSpec.spec.paused"),
            (
                "/spec/selector",
                Ty::Object("v1.LabelSelector"),
                "DeploymentSpec.spec.selector",
            ),
            (
                "/spec/selector/matchLabels",
                Ty::StrMap,
                "LabelSelector.spec.selector.matchLabels",
            ),
            (
                "/spec/template",
                Ty::Object("v1.PodTemplateSpec"),
                "DeploymentSpec.spec.template",
            ),
            (
                "/spec/template/metadata/labels",
                Ty::StrMap,
                "ObjectMeta.spec.template.metadata.labels",
            ),
            (
                "/spec/template/spec/containers",
                Ty::Array("[]v1.Container"),
                "PodSpec.spec.template.spec.containers",
            ),
            (
                "/spec/strategy",
                Ty::Object("v1.DeploymentStrategy"),
                "DeploymentSpec.spec.strategy",
            ),
            (
                "/spec/strategy/type",
                Ty::Str,
                "DeploymentStrategy.spec.strategy.type",
            ),
            (
                "/status",
                Ty::Object("v1.DeploymentStatus"),
                "Deployment.status",
            ),
        ]
    }

    fn status_types(&self) -> FieldTypes {
        WORKLOAD_STATUS_TYPES
    }

    fn containers(&self) -> Option<(&'static str, &'static str)> {
        Some(TEMPLATE_CONTAINERS)
    }

    fn has_generation(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        let Some(spec) = obj_mut(obj, "spec") else {
            return;
        };
        default_field(spec, "replicas", json!(1));
        default_field(spec, "revisionHistoryLimit", json!(10));
        default_field(spec, "progressDeadlineSeconds", json!(600));
        let strategy = spec.entry("strategy").or_insert_with(|| json!({}));
        if let Some(st) = strategy.as_object_mut() {
            default_field(st, "type", json!("RollingUpdate"));
            if st.field("type").and_then(Value::as_str) == Some("RollingUpdate") {
                let ru = st.entry("rollingUpdate").or_insert_with(|| json!({}));
                if let Some(ru) = ru.as_object_mut() {
                    default_field(ru, "maxSurge", json!("25%"));
                    default_field(ru, "maxUnavailable", json!("25%"));
                }
            }
        }
        if let Some(t) = spec.get_mut("template").and_then(|t| t.get_mut("spec")) {
            default_pod_spec(t);
        }
    }

    fn generation_bumps(&self, old: &Value, new: &Value) -> bool {
        old.field("spec") != new.field("spec")
            || old.at("/metadata/annotations") != new.at("/metadata/annotations")
    }

    fn validate(&self, _info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
        replicas_in_range(obj, "/spec/replicas", "spec.replicas", errs);
        validate_selector_and_template(obj, errs);
        let st_type = obj
            .at("/spec/strategy/type")
            .and_then(Value::as_str)
            .unwrap_or("RollingUpdate");
        let ru = obj
            .at("/spec/strategy/rollingUpdate")
            .filter(|v| !v.is_null());
        match st_type {
            "Recreate" => {
                if ru.is_some() {
                    errs.push(FieldError::forbidden(
                        "spec.strategy.rollingUpdate",
                        "may not be specified when strategy `type` is 'Recreate'",
                    ));
                }
            }
            "RollingUpdate" => {
                let surge0 = validate_int_or_percent(
                    ru.and_then(|r| r.field("maxSurge")),
                    "spec.strategy.rollingUpdate.maxSurge",
                    errs,
                );
                let mu = ru.and_then(|r| r.field("maxUnavailable"));
                let unavail0 =
                    validate_int_or_percent(mu, "spec.strategy.rollingUpdate.maxUnavailable", errs);
                if let Some(pct) = mu
                    .and_then(Value::as_str)
                    .and_then(|s| s.strip_suffix('%'))
                    .and_then(|d| d.parse::<u64>().ok())
                {
                    if pct > 100 {
                        errs.push(FieldError::invalid(
                            "spec.strategy.rollingUpdate.maxUnavailable",
                            mu.cloned().unwrap_or_default(),
                            "must not be greater than 100%",
                        ));
                    }
                }
                if surge0 == Some(true) && unavail0 == Some(true) {
                    errs.push(FieldError::invalid(
                        "spec.strategy.rollingUpdate.maxUnavailable",
                        mu.cloned().unwrap_or_default(),
                        "may not be 0 when `maxSurge` is 0",
                    ));
                }
            }
            other => errs.push(FieldError::not_supported(
                "spec.strategy.type",
                json!(other),
                &["Recreate", "RollingUpdate"],
            )),
        }
        nonneg(obj, "/spec/minReadySeconds", "spec.minReadySeconds", errs);
        nonneg(
            obj,
            "/spec/revisionHistoryLimit",
            "spec.revisionHistoryLimit",
            errs,
        );
        nonneg(
            obj,
            "/spec/progressDeadlineSeconds",
            "spec.progressDeadlineSeconds",
            errs,
        );
        let min_ready = obj
            .at("/spec/minReadySeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if let Some(pd) = obj
            .at("/spec/progressDeadlineSeconds")
            .and_then(Value::as_i64)
        {
            if pd >= 0 && pd <= min_ready {
                errs.push(FieldError::invalid(
                    "spec.progressDeadlineSeconds",
                    json!(pd),
                    "must be greater than minReadySeconds",
                ));
            }
        }
    }

    fn validate_status(&self, obj: &Value, errs: &mut Vec<FieldError>) {
        validate_workload_status(obj, errs);
    }

    fn validate_update(
        &self,
        _info: &ResourceInfo,
        old: &Value,
        new: &Value,
        errs: &mut Vec<FieldError>,
    ) {
        immutable(old, new, "/spec/selector", "spec.selector", errs);
    }

    fn prepare_for_create(&self, obj: &mut Value, _cluster_ips: &mut u64) {
        // PrepareForCreate resets status to the empty Go struct; every DeploymentStatus field
        // has omitempty [k8s.io/api apps/v1 types.go].
        obj["status"] = json!({});
    }

    fn reset_fields_status(&self, old: &Value, new: Value) -> Value {
        // The status strategy also keeps the stored labels [deployment/strategy.go
        // PrepareForUpdate of deploymentStatusStrategy].
        let mut result = super::keep_stored_spec(old, new);
        let labels = old.at("/metadata/labels").cloned();
        set_or_remove(meta_mut(&mut result), "labels", labels.as_ref());
        result
    }
}

pub(super) fn validate_int_or_percent(
    v: Option<&Value>,
    field: &str,
    errs: &mut Vec<FieldError>,
) -> Option<bool> {
    let v = v?;
    if let Some(n) = v.as_i64() {
        if n < 0 {
            errs.push(FieldError::invalid(
                field,
                json!(n),
                "must be greater than or equal to 0",
            ));
        }
        return Some(n == 0);
    }
    if let Some(s) = v.as_str() {
        let digits = s
            .strip_suffix('%')
            .filter(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()));
        return match digits {
            Some(d) => Some(d.trim_start_matches('0').is_empty()),
            None => {
                errs.push(FieldError::invalid(
                    field,
                    json!(s),
                    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                ));
                None
            }
        };
    }
    errs.push(FieldError::invalid(
        field,
        v.clone(),
        "must be an integer or percentage (e.g '5%')",
    ));
    None
}
