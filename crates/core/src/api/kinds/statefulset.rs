//! StatefulSets (`apps/v1`), as kube 1.32's pkg/registry/apps/statefulset/strategy.go and
//! pkg/apis/apps/v1/defaults.go `SetDefaults_StatefulSet` define them, validated as
//! pkg/apis/apps/validation `ValidateStatefulSet`, `ValidateStatefulSetUpdate` and
//! `ValidateStatefulSetStatusUpdate` do.
//!
//! The feature gates are a default 1.32 cluster's: `MaxUnavailableStatefulSet` is off (alpha),
//! so `dropStatefulSetDisabledFields` drops `spec.updateStrategy.rollingUpdate.maxUnavailable`
//! unless the stored object already has it; `StatefulSetAutoDeletePVC` is on, so the retention
//! policy defaults to Retain/Retain.

use crate::api::meta::Fields;
use crate::json::{json, Map, Value};

use super::super::meta::JsonPointer;
use super::super::typed::{FieldTypes, Ty};
use super::super::validation::{dns1123_label, go_quote, validate_labels, FieldError};
use super::common::{
    default_field, map_mut, nonneg, obj_mut, replicas_in_range, TEMPLATE_CONTAINERS,
};
use super::pod::default_pod_spec;
use super::workload::{go_label_selector, validate_selector_selects_template};
use super::{KindStrategy, ResourceInfo};

/// The `StatefulSet` strategy.
pub(crate) struct StatefulSetStrategy;

/// The status counts, each non-negative (`ValidateStatefulSetStatus`).
const STATUS_COUNTS: &[&str] = &[
    "replicas",
    "readyReplicas",
    "currentReplicas",
    "updatedReplicas",
    "availableReplicas",
    "observedGeneration",
    "collisionCount",
];

/// The spec fields an update may change (`ValidateStatefulSetUpdate`).
const MUTABLE_SPEC: &[&str] = &[
    "replicas",
    "template",
    "updateStrategy",
    "minReadySeconds",
    "ordinals",
    "persistentVolumeClaimRetentionPolicy",
];

/// `dropStatefulSetDisabledFields`: without `MaxUnavailableStatefulSet`, a maxUnavailable the
/// old object did not use is dropped.
fn drop_disabled_fields(new: &mut Value, old: Option<&Value>) {
    let in_use = old.is_some_and(|o| {
        o.at("/spec/updateStrategy/rollingUpdate/maxUnavailable")
            .is_some_and(|v| !v.is_null())
    });
    if in_use {
        return;
    }
    if let Some(ru) = new
        .pointer_mut("/spec/updateStrategy/rollingUpdate")
        .and_then(Value::as_object_mut)
    {
        ru.remove("maxUnavailable");
    }
}

/// Go's `%#v` of the internal `RollingUpdateStatefulSetStrategy` (maxUnavailable is always
/// dropped by then, so its pointer is nil).
fn go_rolling_update(ru: &Value) -> String {
    let partition = ru.field("partition").and_then(Value::as_i64).unwrap_or(0);
    format!(
        "apps.RollingUpdateStatefulSetStrategy{{Partition:{partition}, MaxUnavailable:(*intstr.IntOrString)(nil)}}"
    )
}

impl KindStrategy for StatefulSetStrategy {
    fn field_types(&self) -> FieldTypes {
        &[
            (
                "/spec",
                Ty::Object("v1.StatefulSetSpec"),
                "StatefulSet.spec",
            ),
            ("/spec/replicas", Ty::Int32, "StatefulSetSpec.spec.replicas"),
            (
                "/spec/selector",
                Ty::Object("v1.LabelSelector"),
                "StatefulSetSpec.spec.selector",
            ),
            (
                "/spec/selector/matchLabels",
                Ty::StrMap,
                "LabelSelector.spec.selector.matchLabels",
            ),
            (
                "/spec/template",
                Ty::Object("v1.PodTemplateSpec"),
                "StatefulSetSpec.spec.template",
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
                "/spec/volumeClaimTemplates",
                Ty::Array("[]v1.PersistentVolumeClaim"),
                "StatefulSetSpec.spec.volumeClaimTemplates",
            ),
            (
                "/spec/serviceName",
                Ty::Str,
                "StatefulSetSpec.spec.serviceName",
            ),
            (
                "/spec/podManagementPolicy",
                Ty::Str,
                "StatefulSetSpec.spec.podManagementPolicy",
            ),
            (
                "/spec/updateStrategy",
                Ty::Object("v1.StatefulSetUpdateStrategy"),
                "StatefulSetSpec.spec.updateStrategy",
            ),
            (
                "/spec/updateStrategy/type",
                Ty::Str,
                "StatefulSetUpdateStrategy.spec.updateStrategy.type",
            ),
            (
                "/spec/updateStrategy/rollingUpdate",
                Ty::Object("v1.RollingUpdateStatefulSetStrategy"),
                "StatefulSetUpdateStrategy.spec.updateStrategy.rollingUpdate",
            ),
            (
                "/spec/updateStrategy/rollingUpdate/partition",
                Ty::Int32,
                "RollingUpdateStatefulSetStrategy.spec.updateStrategy.rollingUpdate.partition",
            ),
            (
                "/spec/revisionHistoryLimit",
                Ty::Int32,
                "StatefulSetSpec.spec.revisionHistoryLimit",
            ),
            (
                "/spec/minReadySeconds",
                Ty::Int32,
                "StatefulSetSpec.spec.minReadySeconds",
            ),
            (
                "/spec/ordinals",
                Ty::Object("v1.StatefulSetOrdinals"),
                "StatefulSetSpec.spec.ordinals",
            ),
            (
                "/spec/ordinals/start",
                Ty::Int32,
                "StatefulSetOrdinals.spec.ordinals.start",
            ),
            (
                "/status",
                Ty::Object("v1.StatefulSetStatus"),
                "StatefulSet.status",
            ),
        ]
    }

    fn status_types(&self) -> FieldTypes {
        &[
            (
                "/status/observedGeneration",
                Ty::Int64,
                "observedGeneration",
            ),
            ("/status/replicas", Ty::Int32, "replicas"),
            ("/status/readyReplicas", Ty::Int32, "readyReplicas"),
            ("/status/currentReplicas", Ty::Int32, "currentReplicas"),
            ("/status/updatedReplicas", Ty::Int32, "updatedReplicas"),
            ("/status/currentRevision", Ty::Str, "currentRevision"),
            ("/status/updateRevision", Ty::Str, "updateRevision"),
            ("/status/collisionCount", Ty::Int32, "collisionCount"),
            (
                "/status/conditions",
                Ty::Array("[]StatefulSetCondition"),
                "conditions",
            ),
            ("/status/availableReplicas", Ty::Int32, "availableReplicas"),
        ]
    }

    fn containers(&self) -> Option<(&'static str, &'static str)> {
        Some(TEMPLATE_CONTAINERS)
    }

    fn name_format(&self, name: &str) -> Vec<String> {
        // ValidateStatefulSetName: a DNS label, as the pods' hostnames are `<name>-<ordinal>`.
        dns1123_label(name)
    }

    fn has_generation(&self) -> bool {
        true
    }

    /// `SetDefaults_StatefulSet`: OrderedReady, RollingUpdate with partition 0, the Retain
    /// retention policy, one replica, ten revisions; the template's pod defaults. `serviceName`
    /// has no omitempty, so the stored object always carries it.
    fn defaults(&self, obj: &mut Value) {
        let Some(spec) = obj_mut(obj, "spec") else {
            return;
        };
        // `len(PodManagementPolicy) == 0`: an explicit "" is defaulted too.
        if spec
            .field("podManagementPolicy")
            .is_none_or(|v| v.is_null() || v.as_str() == Some(""))
        {
            spec.insert("podManagementPolicy", json!("OrderedReady"));
        }
        if let Some(st) = map_mut(spec, "updateStrategy") {
            let untyped = st
                .field("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty();
            if untyped {
                st.insert("type", json!("RollingUpdate"));
                default_field(st, "rollingUpdate", json!({}));
            }
            if st.field("type").and_then(Value::as_str) == Some("RollingUpdate") {
                if let Some(ru) = st.get_mut("rollingUpdate").and_then(Value::as_object_mut) {
                    default_field(ru, "partition", json!(0));
                }
            }
        }
        if let Some(policy) = map_mut(spec, "persistentVolumeClaimRetentionPolicy") {
            for k in ["whenDeleted", "whenScaled"] {
                let empty = policy
                    .get(k)
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty);
                if empty {
                    policy.insert(k, json!("Retain"));
                }
            }
        }
        default_field(spec, "replicas", json!(1));
        default_field(spec, "revisionHistoryLimit", json!(10));
        default_field(spec, "serviceName", json!(""));
        if let Some(t) = spec.get_mut("template").and_then(|t| t.get_mut("spec")) {
            default_pod_spec(t);
        }
    }

    /// `PrepareForUpdate`: any spec change bumps the generation.
    fn generation_bumps(&self, old: &Value, new: &Value) -> bool {
        old.field("spec") != new.field("spec")
    }

    fn prepare_for_update(&self, old: &Value, new: &mut Value) {
        drop_disabled_fields(new, Some(old));
    }

    /// `PrepareForCreate`: the empty `StatefulSetStatus` (replicas and availableReplicas have no
    /// omitempty), and the disabled fields dropped.
    fn prepare_for_create(&self, obj: &mut Value, _cluster_ips: &mut u64) {
        obj["status"] = json!({"replicas": 0, "availableReplicas": 0});
        drop_disabled_fields(obj, None);
    }

    /// `ValidateStatefulSetSpec`. The pod template is checked for its labels only, as kube's is
    /// (its pod spec validation is a TODO there).
    fn validate(&self, _info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
        let s = |p: &str| obj.at(p).and_then(Value::as_str).unwrap_or("");
        match s("/spec/podManagementPolicy") {
            "" => errs.push(FieldError::required("spec.podManagementPolicy", "")),
            "OrderedReady" | "Parallel" => {}
            other => errs.push(FieldError::invalid(
                "spec.podManagementPolicy",
                json!(other),
                "must be 'OrderedReady' or 'Parallel'",
            )),
        }
        let ru = obj
            .at("/spec/updateStrategy/rollingUpdate")
            .filter(|v| !v.is_null());
        match s("/spec/updateStrategy/type") {
            "" => errs.push(FieldError::required("spec.updateStrategy", "")),
            "OnDelete" => {
                if let Some(ru) = ru {
                    errs.push(FieldError::invalid_raw(
                        "spec.updateStrategy.rollingUpdate",
                        go_rolling_update(ru),
                        "only allowed for updateStrategy 'RollingUpdate'",
                    ));
                }
            }
            "RollingUpdate" => {
                // validateRollingUpdateStatefulSet (maxUnavailable is dropped before this).
                nonneg(
                    obj,
                    "/spec/updateStrategy/rollingUpdate/partition",
                    "spec.updateStrategy.rollingUpdate.partition",
                    errs,
                );
            }
            other => {
                // `%#v` of the strategy; a set rollingUpdate prints as a pointer address.
                let ru_shown = if ru.is_some() {
                    "(*apps.RollingUpdateStatefulSetStrategy)(...)"
                } else {
                    "(*apps.RollingUpdateStatefulSetStrategy)(nil)"
                };
                errs.push(FieldError::invalid_raw(
                    "spec.updateStrategy",
                    format!(
                        "apps.StatefulSetUpdateStrategy{{Type:{}, RollingUpdate:{ru_shown}}}",
                        go_quote(other)
                    ),
                    "must be 'RollingUpdate' or 'OnDelete'",
                ));
            }
        }
        for k in ["whenDeleted", "whenScaled"] {
            let v = s(&format!("/spec/persistentVolumeClaimRetentionPolicy/{k}"));
            if !matches!(v, "Retain" | "Delete") {
                errs.push(FieldError::not_supported(
                    format!("spec.persistentVolumeClaimRetentionPolicy.{k}"),
                    json!(v),
                    &["Retain", "Delete"],
                ));
            }
        }
        replicas_in_range(obj, "/spec/replicas", "spec.replicas", errs);
        nonneg(obj, "/spec/minReadySeconds", "spec.minReadySeconds", errs);
        nonneg(obj, "/spec/ordinals/start", "spec.ordinals.start", errs);
        match obj.at("/spec/selector").filter(|v| !v.is_null()) {
            None => errs.push(FieldError::required("spec.selector", "")),
            Some(sel) => {
                let count = |f: &str| match sel.get(f) {
                    Some(Value::Object(m)) => m.len(),
                    Some(Value::Array(a)) => a.len(),
                    _ => 0,
                };
                if count("matchLabels") + count("matchExpressions") == 0 {
                    errs.push(FieldError::invalid_raw(
                        "spec.selector",
                        go_label_selector(sel),
                        "empty selector is invalid for statefulset",
                    ));
                } else {
                    validate_selector_selects_template(obj, sel, errs);
                }
            }
        }
        if let Some(labels) = obj
            .at("/spec/template/metadata/labels")
            .and_then(Value::as_object)
        {
            validate_labels(labels, "spec.template.labels", errs);
        }
        let restart = s("/spec/template/spec/restartPolicy");
        if restart != "Always" {
            errs.push(FieldError::not_supported(
                "spec.template.spec.restartPolicy",
                json!(restart),
                &["Always"],
            ));
        }
        if obj
            .at("/spec/template/spec/activeDeadlineSeconds")
            .is_some_and(|v| !v.is_null())
        {
            errs.push(FieldError::forbidden(
                "spec.template.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in StatefulSet is not Supported",
            ));
        }
    }

    fn validate_update(
        &self,
        _info: &ResourceInfo,
        old: &Value,
        new: &Value,
        errs: &mut Vec<FieldError>,
    ) {
        let rest = |o: &Value| -> Map {
            o.field("spec")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter(|(k, _)| !MUTABLE_SPEC.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .unwrap_or_default()
        };
        if rest(old) != rest(new) {
            errs.push(FieldError::forbidden(
                "spec",
                "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            ));
        }
    }

    /// `ValidateStatefulSetStatus`: counts non-negative, none above `status.replicas`, and
    /// available not above ready.
    fn validate_status(&self, obj: &Value, errs: &mut Vec<FieldError>) {
        for k in STATUS_COUNTS {
            nonneg(obj, &format!("/status/{k}"), &format!("status.{k}"), errs);
        }
        let n = |k: &str| {
            obj.at(&format!("/status/{k}"))
                .and_then(Value::as_i64)
                .unwrap_or(0)
        };
        let replicas = n("replicas");
        for k in [
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
        ] {
            if n(k) > replicas {
                errs.push(FieldError::invalid(
                    format!("status.{k}"),
                    json!(n(k)),
                    "cannot be greater than status.replicas",
                ));
            }
        }
        if n("availableReplicas") > n("readyReplicas") {
            errs.push(FieldError::invalid(
                "status.availableReplicas",
                json!(n("availableReplicas")),
                "cannot be greater than status.readyReplicas",
            ));
        }
    }

    /// `ValidateStatefulSetStatusUpdate`: collisionCount may not go down.
    fn validate_status_update(&self, old: &Value, new: &Value, errs: &mut Vec<FieldError>) {
        let c = |o: &Value| o.at("/status/collisionCount").and_then(Value::as_i64);
        if let Some(before) = c(old) {
            let after = c(new);
            if after.is_none_or(|a| a < before) {
                errs.push(FieldError::invalid(
                    "status.collisionCount",
                    json!(after.unwrap_or(0)),
                    "cannot be decremented",
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::kinds::{KindRules, Registry};

    fn sts() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
            "spec": {"selector": {"matchLabels": {"app": "db"}}, "serviceName": "db",
                "template": {"metadata": {"labels": {"app": "db"}},
                    "spec": {"containers": [{"name": "db", "image": "postgres:16"}]}}}})
    }

    fn info() -> ResourceInfo {
        let info = Registry::builtin()
            .for_kind("apps/v1", "StatefulSet")
            .cloned()
            .unwrap();
        assert_eq!(info.rules, KindRules::StatefulSet);
        info
    }

    fn errors(obj: &Value) -> Vec<String> {
        let mut o = obj.clone();
        StatefulSetStrategy.defaults(&mut o);
        let mut errs = Vec::new();
        KindRules::StatefulSet
            .strategy()
            .validate(&info(), &o, &mut errs);
        errs.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn defaults_are_ordered_ready_rolling_update_partition_zero_and_retain() {
        let mut o = sts();
        StatefulSetStrategy.defaults(&mut o);
        assert_eq!(o["spec"]["podManagementPolicy"], "OrderedReady");
        assert_eq!(
            o["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
        );
        assert_eq!(
            o["spec"]["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
        );
        assert_eq!(o["spec"]["replicas"], 1);
        assert_eq!(o["spec"]["revisionHistoryLimit"], 10);
        // An explicit "" is defaulted, as kube's `len(...) == 0` does.
        let mut empty = sts();
        empty["spec"]["podManagementPolicy"] = json!("");
        StatefulSetStrategy.defaults(&mut empty);
        assert_eq!(empty["spec"]["podManagementPolicy"], "OrderedReady");
        // OnDelete gets no rollingUpdate.
        let mut o = sts();
        o["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
        StatefulSetStrategy.defaults(&mut o);
        assert_eq!(o["spec"]["updateStrategy"], json!({"type": "OnDelete"}));
    }

    #[test]
    fn created_sets_start_with_the_empty_status_and_without_max_unavailable() {
        let mut o = sts();
        o["spec"]["updateStrategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 1, "maxUnavailable": 2}});
        StatefulSetStrategy.prepare_for_create(&mut o, &mut 0);
        assert_eq!(o["status"], json!({"replicas": 0, "availableReplicas": 0}));
        assert_eq!(
            o["spec"]["updateStrategy"]["rollingUpdate"],
            json!({"partition": 1})
        );
    }

    #[test]
    fn validation_speaks_kubes_messages() {
        assert!(errors(&sts()).is_empty(), "{:?}", errors(&sts()));
        let mut o = sts();
        o["spec"]["podManagementPolicy"] = json!("Burst");
        assert_eq!(
            errors(&o),
            ["spec.podManagementPolicy: Invalid value: \"Burst\": must be 'OrderedReady' or 'Parallel'"]
        );
        let mut o = sts();
        o["spec"]["updateStrategy"] =
            json!({"type": "OnDelete", "rollingUpdate": {"partition": 2}});
        assert_eq!(
            errors(&o),
            ["spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:2, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy 'RollingUpdate'"]
        );
        let mut o = sts();
        o["spec"]["updateStrategy"] =
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": -1}});
        assert_eq!(
            errors(&o),
            ["spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0"]
        );
        let mut o = sts();
        o["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
        assert_eq!(
            errors(&o),
            ["spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\""]
        );
        let mut o = sts();
        o["spec"]["selector"] = json!({"matchLabels": {"app": "other"}});
        assert_eq!(
            errors(&o),
            ["spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"db\"}: `selector` does not match template `labels`"]
        );
    }

    #[test]
    fn updates_may_change_only_kubes_list_of_spec_fields() {
        let mut old = sts();
        StatefulSetStrategy.defaults(&mut old);
        let mut new = old.clone();
        new["spec"]["replicas"] = json!(5);
        new["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(3);
        let mut errs = Vec::new();
        StatefulSetStrategy.validate_update(&info(), &old, &new, &mut errs);
        assert!(errs.is_empty());
        new["spec"]["serviceName"] = json!("other");
        StatefulSetStrategy.validate_update(&info(), &old, &new, &mut errs);
        assert_eq!(
            errs.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
            ["spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"]
        );
    }

    #[test]
    fn status_counts_stay_within_replicas_and_collisions_never_go_down() {
        let mut errs = Vec::new();
        let o = json!({"status": {"replicas": 2, "readyReplicas": 3, "availableReplicas": 3}});
        StatefulSetStrategy.validate_status(&o, &mut errs);
        assert_eq!(
            errs.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
            [
                "status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 3: cannot be greater than status.replicas",
            ]
        );
        let mut errs = Vec::new();
        StatefulSetStrategy.validate_status_update(
            &json!({"status": {"collisionCount": 2}}),
            &json!({"status": {"collisionCount": 1}}),
            &mut errs,
        );
        assert_eq!(
            errs[0].to_string(),
            "status.collisionCount: Invalid value: 1: cannot be decremented"
        );
    }
}
