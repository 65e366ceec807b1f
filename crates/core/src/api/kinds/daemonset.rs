//! DaemonSets (`apps/v1`), as kube's pkg/registry/apps/daemonset/strategy.go and
//! pkg/apis/apps/v1/defaults.go `SetDefaults_DaemonSet` define them, validated as
//! pkg/apis/apps/validation `ValidateDaemonSet` does for the fields the simulation uses.

use crate::api::meta::Fields;
use crate::json::{json, Value};

use super::super::meta::JsonPointer;
use super::super::typed::{FieldTypes, Ty};
use super::super::validation::FieldError;
use super::common::{default_field, immutable, map_mut, nonneg, obj_mut, TEMPLATE_CONTAINERS};
use super::deployment::validate_int_or_percent;
use super::pod::default_pod_spec;
use super::workload::validate_selector_and_template_for;
use super::{KindStrategy, ResourceInfo};

/// `apps.DeprecatedTemplateGeneration`: the annotation the v1 API carries the internal
/// `spec.templateGeneration` in.
pub const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";

/// The `DaemonSet` strategy.
pub(crate) struct DaemonSetStrategy;

const STATUS_COUNTS: &[&str] = &[
    "currentNumberScheduled",
    "numberMisscheduled",
    "desiredNumberScheduled",
    "numberReady",
    "observedGeneration",
    "updatedNumberScheduled",
    "numberAvailable",
    "numberUnavailable",
    "collisionCount",
];

/// The template generation the object carries (`GetTemplateGeneration`): the annotation parsed
/// as an int64, `None` when absent or not a number.
pub fn template_generation(obj: &Value) -> Option<i64> {
    obj.at("/metadata/annotations")
        .and_then(|a| a.get(TEMPLATE_GENERATION_ANNOTATION))
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
}

fn set_template_generation(obj: &mut Value, generation: i64) {
    let Some(meta) = obj_mut(obj, "metadata") else {
        return;
    };
    let Some(annotations) = map_mut(meta, "annotations") else {
        return;
    };
    annotations.insert(
        TEMPLATE_GENERATION_ANNOTATION,
        json!(generation.to_string()),
    );
}

/// `getIntOrPercentValue` [apps validation]: the number of an int or a `N%` string, 0 otherwise.
fn int_or_percent_value(v: Option<&Value>) -> i64 {
    match v {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => s
            .strip_suffix('%')
            .and_then(|d| d.parse().ok())
            .unwrap_or(0),
        _ => 0,
    }
}

/// `IsNotMoreThan100Percent`.
fn not_more_than_100_percent(v: Option<&Value>, field: &str, errs: &mut Vec<FieldError>) {
    if let Some(s) = v.and_then(Value::as_str) {
        if s.strip_suffix('%')
            .and_then(|d| d.parse::<u64>().ok())
            .is_some_and(|p| p > 100)
        {
            errs.push(FieldError::invalid(
                field,
                json!(s),
                "must not be greater than 100%",
            ));
        }
    }
}

impl KindStrategy for DaemonSetStrategy {
    fn field_types(&self) -> FieldTypes {
        &[
            ("/spec", Ty::Object("v1.DaemonSetSpec"), "DaemonSet.spec"),
            (
                "/spec/selector",
                Ty::Object("v1.LabelSelector"),
                "DaemonSetSpec.spec.selector",
            ),
            (
                "/spec/selector/matchLabels",
                Ty::StrMap,
                "LabelSelector.spec.selector.matchLabels",
            ),
            (
                "/spec/template",
                Ty::Object("v1.PodTemplateSpec"),
                "DaemonSetSpec.spec.template",
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
                "/spec/template/spec/nodeSelector",
                Ty::StrMap,
                "PodSpec.spec.template.spec.nodeSelector",
            ),
            (
                "/spec/template/spec/tolerations",
                Ty::Array("[]v1.Toleration"),
                "PodSpec.spec.template.spec.tolerations",
            ),
            (
                "/spec/updateStrategy",
                Ty::Object("v1.DaemonSetUpdateStrategy"),
                "DaemonSetSpec.spec.updateStrategy",
            ),
            (
                "/spec/updateStrategy/type",
                Ty::Str,
                "DaemonSetUpdateStrategy.spec.updateStrategy.type",
            ),
            (
                "/spec/updateStrategy/rollingUpdate",
                Ty::Object("v1.RollingUpdateDaemonSet"),
                "DaemonSetUpdateStrategy.spec.updateStrategy.rollingUpdate",
            ),
            (
                "/spec/minReadySeconds",
                Ty::Int32,
                "DaemonSetSpec.spec.minReadySeconds",
            ),
            (
                "/spec/revisionHistoryLimit",
                Ty::Int32,
                "DaemonSetSpec.spec.revisionHistoryLimit",
            ),
            (
                "/status",
                Ty::Object("v1.DaemonSetStatus"),
                "DaemonSet.status",
            ),
        ]
    }

    fn status_types(&self) -> FieldTypes {
        &[
            (
                "/status/currentNumberScheduled",
                Ty::Int32,
                "currentNumberScheduled",
            ),
            (
                "/status/numberMisscheduled",
                Ty::Int32,
                "numberMisscheduled",
            ),
            (
                "/status/desiredNumberScheduled",
                Ty::Int32,
                "desiredNumberScheduled",
            ),
            ("/status/numberReady", Ty::Int32, "numberReady"),
            (
                "/status/observedGeneration",
                Ty::Int64,
                "observedGeneration",
            ),
            (
                "/status/updatedNumberScheduled",
                Ty::Int32,
                "updatedNumberScheduled",
            ),
            ("/status/numberAvailable", Ty::Int32, "numberAvailable"),
            ("/status/numberUnavailable", Ty::Int32, "numberUnavailable"),
            ("/status/collisionCount", Ty::Int32, "collisionCount"),
            (
                "/status/conditions",
                Ty::Array("[]DaemonSetCondition"),
                "conditions",
            ),
        ]
    }

    fn containers(&self) -> Option<(&'static str, &'static str)> {
        Some(TEMPLATE_CONTAINERS)
    }

    fn has_generation(&self) -> bool {
        true
    }

    /// `SetDefaults_DaemonSet`: RollingUpdate with maxUnavailable 1 and maxSurge 0 (only for
    /// that type), revisionHistoryLimit 10; the template's pod defaults.
    fn defaults(&self, obj: &mut Value) {
        let Some(spec) = obj_mut(obj, "spec") else {
            return;
        };
        let strategy = spec.entry("updateStrategy").or_insert_with(|| json!({}));
        if strategy.is_null() {
            *strategy = json!({});
        }
        if let Some(st) = strategy.as_object_mut() {
            default_field(st, "type", json!("RollingUpdate"));
            if st.field("type").and_then(Value::as_str) == Some("RollingUpdate") {
                let ru = st.entry("rollingUpdate").or_insert_with(|| json!({}));
                if ru.is_null() {
                    *ru = json!({});
                }
                if let Some(ru) = ru.as_object_mut() {
                    default_field(ru, "maxUnavailable", json!(1));
                    default_field(ru, "maxSurge", json!(0));
                }
            }
        }
        default_field(spec, "revisionHistoryLimit", json!(10));
        if let Some(t) = spec.get_mut("template").and_then(|t| t.get_mut("spec")) {
            default_pod_spec(t);
        }
    }

    /// `PrepareForUpdate`: any spec change bumps the generation (a template change also the
    /// template generation, done in [`Self::prepare_for_update`]).
    fn generation_bumps(&self, old: &Value, new: &Value) -> bool {
        old.field("spec") != new.field("spec")
    }

    fn prepare_for_update(&self, old: &Value, new: &mut Value) {
        // `spec.templateGeneration` is server-kept: the stored value, plus one when the
        // template changed [daemonset/strategy.go PrepareForUpdate].
        let stored = template_generation(old).unwrap_or(1);
        let next = if old.at("/spec/template") != new.at("/spec/template") {
            stored + 1
        } else {
            stored
        };
        set_template_generation(new, next);
    }

    fn validate(&self, _info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
        validate_selector_and_template_for(obj, "daemonset", errs);
        if obj
            .at("/spec/template/spec/activeDeadlineSeconds")
            .is_some_and(|v| !v.is_null())
        {
            errs.push(FieldError::invalid(
                "spec.template.spec.activeDeadlineSeconds",
                obj.at("/spec/template/spec/activeDeadlineSeconds")
                    .cloned()
                    .unwrap_or_default(),
                "activeDeadlineSeconds in DaemonSet is not Supported",
            ));
        }
        nonneg(obj, "/spec/minReadySeconds", "spec.minReadySeconds", errs);
        nonneg(
            obj,
            "/spec/revisionHistoryLimit",
            "spec.revisionHistoryLimit",
            errs,
        );
        // ValidateDaemonSetUpdateStrategy.
        let st_type = obj
            .at("/spec/updateStrategy/type")
            .and_then(Value::as_str)
            .unwrap_or("");
        let ru = obj
            .at("/spec/updateStrategy/rollingUpdate")
            .filter(|v| !v.is_null());
        match st_type {
            "OnDelete" => {}
            "RollingUpdate" => {
                let Some(ru) = ru else {
                    errs.push(FieldError::required(
                        "spec.updateStrategy.rollingUpdate",
                        "",
                    ));
                    return;
                };
                // ValidateRollingUpdateDaemonSet.
                let (mu, ms) = (ru.field("maxUnavailable"), ru.field("maxSurge"));
                let mu_field = "spec.updateStrategy.rollingUpdate.maxUnavailable";
                let ms_field = "spec.updateStrategy.rollingUpdate.maxSurge";
                validate_int_or_percent(mu, mu_field, errs);
                validate_int_or_percent(ms, ms_field, errs);
                not_more_than_100_percent(mu, mu_field, errs);
                not_more_than_100_percent(ms, ms_field, errs);
                let has_unavailable = int_or_percent_value(mu) != 0;
                let has_surge = int_or_percent_value(ms) != 0;
                if has_unavailable && has_surge {
                    errs.push(FieldError::invalid(
                        ms_field,
                        ms.cloned().unwrap_or_default(),
                        "may not be set when maxUnavailable is non-zero",
                    ));
                } else if !has_unavailable && !has_surge {
                    errs.push(FieldError::required(
                        mu_field,
                        "cannot be 0 when maxSurge is 0",
                    ));
                }
            }
            other => {
                // `field.NotSupported(fldPath, strategy, ...)` prints the whole Go struct.
                let ru_shown = if ru.is_some() {
                    "(*apps.RollingUpdateDaemonSet)(...)"
                } else {
                    "(*apps.RollingUpdateDaemonSet)(nil)"
                };
                let mut e = FieldError::not_supported(
                    "spec.updateStrategy",
                    Value::Null,
                    &["RollingUpdate", "OnDelete"],
                );
                e.rendered = Some(format!(
                    "apps.DaemonSetUpdateStrategy{{Type:{}, RollingUpdate:{ru_shown}}}",
                    super::super::validation::go_quote(other)
                ));
                errs.push(e);
            }
        }
    }

    fn validate_status(&self, obj: &Value, errs: &mut Vec<FieldError>) {
        // ValidateDaemonSetStatusUpdate: every count is non-negative.
        for k in STATUS_COUNTS {
            nonneg(obj, &format!("/status/{k}"), &format!("status.{k}"), errs);
        }
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
        // PrepareForCreate: the empty DaemonSetStatus, whose first four counts have no
        // omitempty [k8s.io/api apps/v1 types.go]; templateGeneration at least 1.
        obj["status"] = json!({
            "currentNumberScheduled": 0,
            "numberMisscheduled": 0,
            "desiredNumberScheduled": 0,
            "numberReady": 0,
        });
        if template_generation(obj).is_none_or(|g| g < 1) {
            set_template_generation(obj, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::kinds::{KindRules, Registry};

    fn ds() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                "template": {"metadata": {"labels": {"app": "agent"}},
                    "spec": {"containers": [{"name": "a", "image": "agent"}]}}}})
    }

    fn errors(obj: &Value) -> Vec<String> {
        let r = Registry::builtin();
        let info = r.for_kind("apps/v1", "DaemonSet").unwrap();
        assert_eq!(info.rules, KindRules::DaemonSet);
        let mut errs = Vec::new();
        DaemonSetStrategy.validate(info, obj, &mut errs);
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn defaults_are_rolling_update_one_unavailable_no_surge_and_ten_revisions() {
        let mut d = ds();
        DaemonSetStrategy.defaults(&mut d);
        assert_eq!(
            d["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
        );
        assert_eq!(d["spec"]["revisionHistoryLimit"], json!(10));
        let mut on_delete = ds();
        on_delete["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
        DaemonSetStrategy.defaults(&mut on_delete);
        assert_eq!(
            on_delete["spec"]["updateStrategy"],
            json!({"type": "OnDelete"})
        );
        assert!(errors(&d).is_empty(), "{:?}", errors(&d));
    }

    #[test]
    fn created_daemon_sets_start_at_template_generation_one_with_the_empty_status() {
        let mut d = ds();
        DaemonSetStrategy.prepare_for_create(&mut d, &mut 0);
        assert_eq!(template_generation(&d), Some(1));
        assert_eq!(
            d["status"],
            json!({"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0})
        );
        let mut changed = d.clone();
        changed["spec"]["template"]["spec"]["containers"][0]["image"] = json!("agent:2");
        DaemonSetStrategy.prepare_for_update(&d, &mut changed);
        assert_eq!(template_generation(&changed), Some(2));
        assert!(DaemonSetStrategy.generation_bumps(&d, &changed));
        let mut other = d.clone();
        other["spec"]["minReadySeconds"] = json!(5);
        DaemonSetStrategy.prepare_for_update(&d, &mut other);
        assert_eq!(
            template_generation(&other),
            Some(1),
            "only the template counts"
        );
        assert!(DaemonSetStrategy.generation_bumps(&d, &other));
    }

    /// The messages of `ValidateRollingUpdateDaemonSet` and `ValidateDaemonSetUpdateStrategy`.
    #[test]
    fn rolling_update_needs_exactly_one_of_surge_and_unavailable() {
        let with = |ru: Value| {
            let mut d = ds();
            d["spec"]["updateStrategy"] = json!({"type": "RollingUpdate", "rollingUpdate": ru});
            errors(&d)
        };
        assert_eq!(
            with(json!({"maxUnavailable": 1, "maxSurge": 1})),
            ["spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero"]
        );
        assert_eq!(
            with(json!({"maxUnavailable": 0, "maxSurge": "0%"})),
            ["spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"]
        );
        assert_eq!(
            with(json!({"maxUnavailable": "150%", "maxSurge": 0})),
            ["spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: \"150%\": must not be greater than 100%"]
        );
        assert!(with(json!({"maxUnavailable": 0, "maxSurge": "25%"})).is_empty());
        let mut bad = ds();
        bad["spec"]["updateStrategy"] = json!({"type": "Sometimes"});
        assert_eq!(
            errors(&bad),
            ["spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:\"Sometimes\", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: \"RollingUpdate\", \"OnDelete\""]
        );
    }

    #[test]
    fn the_template_must_restart_always_and_the_selector_must_not_be_empty() {
        let mut d = ds();
        d["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
        d["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
        d["spec"]["selector"] = json!({});
        assert_eq!(
            errors(&d),
            [
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset",
                "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\""
            ]
        );
    }
}
