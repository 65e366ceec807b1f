//! ReplicaSets (`apps/v1`), as kube's pkg/registry/apps/replicaset/strategy.go defines them.

use crate::api::meta::Fields;
use crate::json::{json, Value};

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

/// The `ReplicaSet` strategy.
pub(crate) struct ReplicaSetStrategy;

impl KindStrategy for ReplicaSetStrategy {
    fn field_types(&self) -> FieldTypes {
        &[
            ("/spec", Ty::Object("v1.ReplicaSetSpec"), "ReplicaSet.spec"),
            ("/spec/replicas", Ty::Int32, "ReplicaSetSpec.spec.replicas"),
            (
                "/spec/minReadySeconds",
                Ty::Int32,
                "ReplicaSetSpec.spec.minReadySeconds",
            ),
            (
                "/spec/selector",
                Ty::Object("v1.LabelSelector"),
                "ReplicaSetSpec.spec.selector",
            ),
            (
                "/spec/selector/matchLabels",
                Ty::StrMap,
                "LabelSelector.spec.selector.matchLabels",
            ),
            (
                "/spec/template",
                Ty::Object("v1.PodTemplateSpec"),
                "ReplicaSetSpec.spec.template",
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
                "/status",
                Ty::Object("v1.ReplicaSetStatus"),
                "ReplicaSet.status",
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
        if let Some(t) = spec.get_mut("template").and_then(|t| t.get_mut("spec")) {
            default_pod_spec(t);
        }
    }

    fn generation_bumps(&self, old: &Value, new: &Value) -> bool {
        old.field("spec") != new.field("spec")
    }

    fn validate(&self, _info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
        replicas_in_range(obj, "/spec/replicas", "spec.replicas", errs);
        nonneg(obj, "/spec/minReadySeconds", "spec.minReadySeconds", errs);
        validate_selector_and_template(obj, errs);
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
        // PrepareForCreate resets status to the empty Go struct: ReplicaSetStatus.replicas has
        // no omitempty [k8s.io/api apps/v1 types.go].
        obj["status"] = json!({"replicas": 0});
    }
}
