//! What Deployments and ReplicaSets share: the selector and pod template rules and the
//! workload status checks (pkg/apis/apps/validation).

use crate::api::meta::Fields;
use crate::json::{json, Map, Value};

use super::super::meta::JsonPointer;
use super::super::typed::Ty;
use super::super::validation::{
    go_quote, validate_builtin_conditions, validate_labels, FieldError,
};
use super::pod::validate_pod_spec;

pub(super) const WORKLOAD_STATUS_TYPES: &[(&str, Ty, &str)] = &[
    (
        "/status/observedGeneration",
        Ty::Int64,
        "observedGeneration",
    ),
    ("/status/replicas", Ty::Int32, "replicas"),
    ("/status/updatedReplicas", Ty::Int32, "updatedReplicas"),
    ("/status/readyReplicas", Ty::Int32, "readyReplicas"),
    ("/status/availableReplicas", Ty::Int32, "availableReplicas"),
    (
        "/status/unavailableReplicas",
        Ty::Int32,
        "unavailableReplicas",
    ),
    (
        "/status/fullyLabeledReplicas",
        Ty::Int32,
        "fullyLabeledReplicas",
    ),
    ("/status/conditions", Ty::Array("[]Condition"), "conditions"),
];

/// Go's `%#v` of an empty `v1.LabelSelector`, as kube prints it.
pub(super) fn go_label_selector(sel: &Value) -> String {
    let labels = match sel.field("matchLabels") {
        Some(Value::Object(m)) => go_string_map(Some(m)),
        _ => "map[string]string(nil)".to_owned(),
    };
    let exprs = match sel.field("matchExpressions") {
        Some(Value::Array(a)) if a.is_empty() => "[]v1.LabelSelectorRequirement{}".to_owned(),
        Some(other) if !other.is_null() => other.to_string(),
        _ => "[]v1.LabelSelectorRequirement(nil)".to_owned(),
    };
    format!("v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{exprs}}}")
}

/// Go's `%#v` of a `map[string]string`, as kube prints template labels.
pub(super) fn go_string_map(m: Option<&Map>) -> String {
    let mut entries: Vec<(String, String)> = m
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.to_string(), v.as_str().unwrap_or("").to_owned()))
                .collect()
        })
        .unwrap_or_default();
    entries.sort();
    let body: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("{}:{}", go_quote(k), go_quote(v)))
        .collect();
    format!("map[string]string{{{}}}", body.join(", "))
}

pub(super) fn validate_selector_and_template(obj: &Value, errs: &mut Vec<FieldError>) {
    validate_selector_and_template_for(obj, "deployment", errs);
}

/// A given selector's own labels, its syntax, and that it selects the template's labels
/// (`ValidateLabelSelector` and the `selector does not match template labels` check every
/// workload kind makes).
pub(super) fn validate_selector_selects_template(
    obj: &Value,
    sel: &Value,
    errs: &mut Vec<FieldError>,
) {
    if let Some(ml) = sel.field("matchLabels").and_then(Value::as_object) {
        validate_labels(ml, "spec.selector.matchLabels", errs);
    }
    match super::super::selector::Selector::from_label_selector(sel) {
        Err(e) => errs.push(FieldError::invalid_raw("spec.selector", sel.to_string(), e)),
        Ok(s) => {
            let labels = obj
                .at("/spec/template/metadata/labels")
                .and_then(Value::as_object);
            if !s.matches(labels) {
                errs.push(FieldError::invalid_raw(
                    "spec.template.metadata.labels",
                    go_string_map(labels),
                    "`selector` does not match template `labels`",
                ));
            }
        }
    }
}

/// The selector and template rules, naming the kind in the empty-selector message as kube's
/// validation for it does (`for deployment`, `for daemonset`).
pub(super) fn validate_selector_and_template_for(
    obj: &Value,
    kind_word: &str,
    errs: &mut Vec<FieldError>,
) {
    let selector = obj.at("/spec/selector");
    match selector {
        None | Some(Value::Null) => errs.push(FieldError::required("spec.selector", "")),
        Some(sel) => {
            let empty = sel
                .field("matchLabels")
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty)
                && sel
                    .field("matchExpressions")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty);
            if empty {
                // kube says "for deployment" for ReplicaSets too.
                errs.push(FieldError::invalid_raw(
                    "spec.selector",
                    go_label_selector(sel),
                    format!("empty selector is invalid for {kind_word}"),
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
        validate_labels(labels, "spec.template.metadata.labels", errs);
    }
    match obj.at("/spec/template") {
        None | Some(Value::Null) => errs.push(FieldError::required("spec.template", "")),
        Some(t) => {
            validate_pod_spec(t.field("spec"), "spec.template.spec", errs);
            let restart = t
                .at("/spec/restartPolicy")
                .and_then(Value::as_str)
                .unwrap_or("Always");
            if restart != "Always" {
                errs.push(FieldError::not_supported(
                    "spec.template.spec.restartPolicy",
                    json!(restart),
                    &["Always"],
                ));
            }
        }
    }
}

pub(super) fn validate_workload_status(obj: &Value, errs: &mut Vec<FieldError>) {
    // The status is found once and its members read from it; a field's path is written only
    // for an error (these checks run on every status write).
    let status = obj.field("status");
    let n = |k: &str| status.and_then(|s| s.field(k)).and_then(Value::as_i64);
    for k in [
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "fullyLabeledReplicas",
        "unavailableReplicas",
        "observedGeneration",
        "collisionCount",
    ] {
        if let Some(v) = n(k).filter(|v| *v < 0) {
            errs.push(FieldError::invalid(
                format!("status.{k}"),
                json!(v),
                "must be greater than or equal to 0",
            ));
        }
    }
    let replicas = n("replicas").unwrap_or(0);
    for k in [
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "fullyLabeledReplicas",
    ] {
        if let Some(v) = n(k) {
            if v > replicas {
                errs.push(FieldError::invalid(
                    format!("status.{k}"),
                    json!(v),
                    "cannot be greater than status.replicas",
                ));
            }
        }
    }
    if let (Some(a), Some(r)) = (n("availableReplicas"), n("readyReplicas")) {
        if a > r {
            errs.push(FieldError::invalid(
                "status.availableReplicas",
                json!(a),
                "cannot be greater than readyReplicas",
            ));
        }
    }
    if let Some(c) = status
        .and_then(|s| s.field("conditions"))
        .and_then(Value::as_array)
    {
        validate_builtin_conditions(c, "status.conditions", errs);
    }
}
