//! Jobs (`batch/v1`), as kube 1.32's pkg/registry/batch/job/strategy.go,
//! pkg/apis/batch/v1/defaults.go and pkg/apis/batch/validation define them.

use crate::api::meta::Fields;
use crate::json::{json, Map, Value};

use super::super::meta::JsonPointer;
use super::super::typed::{FieldTypes, Ty};
use super::super::validation::{validate_labels, FieldError};
use super::common::{default_field, immutable, nonneg, obj_mut, TEMPLATE_CONTAINERS};
use super::pod::{default_pod_spec, validate_pod_spec};
use super::workload::{go_label_selector, validate_selector_selects_template};
use super::{KindStrategy, ResourceInfo};

/// The label kube's `generateSelector` puts on the template and selects by.
pub const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
/// The label with the Job's name (`batch.JobNameLabel`).
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
/// The legacy twins of those labels, still written in 1.32.
const LEGACY_CONTROLLER_UID_LABEL: &str = "controller-uid";
const LEGACY_JOB_NAME_LABEL: &str = "job-name";

/// The `Job` strategy.
pub(crate) struct JobStrategy;

impl KindStrategy for JobStrategy {
    fn field_types(&self) -> FieldTypes {
        &[
            ("/spec", Ty::Object("v1.JobSpec"), "Job.spec"),
            ("/spec/parallelism", Ty::Int32, "JobSpec.spec.parallelism"),
            ("/spec/completions", Ty::Int32, "JobSpec.spec.completions"),
            (
                "/spec/activeDeadlineSeconds",
                Ty::Int64,
                "JobSpec.spec.activeDeadlineSeconds",
            ),
            ("/spec/backoffLimit", Ty::Int32, "JobSpec.spec.backoffLimit"),
            (
                "/spec/ttlSecondsAfterFinished",
                Ty::Int32,
                "JobSpec.spec.ttlSecondsAfterFinished",
            ),
            (
                "/spec/completionMode",
                Ty::Str,
                "JobSpec.spec.completionMode",
            ),
            ("/spec/suspend", Ty::Bool, "JobSpec.spec.suspend"),
            (
                "/spec/manualSelector",
                Ty::Bool,
                "JobSpec.spec.manualSelector",
            ),
            (
                "/spec/podReplacementPolicy",
                Ty::Str,
                "JobSpec.spec.podReplacementPolicy",
            ),
            ("/spec/managedBy", Ty::Str, "JobSpec.spec.managedBy"),
            (
                "/spec/selector",
                Ty::Object("v1.LabelSelector"),
                "JobSpec.spec.selector",
            ),
            (
                "/spec/selector/matchLabels",
                Ty::StrMap,
                "LabelSelector.spec.selector.matchLabels",
            ),
            (
                "/spec/template",
                Ty::Object("v1.PodTemplateSpec"),
                "JobSpec.spec.template",
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
            ("/status", Ty::Object("v1.JobStatus"), "Job.status"),
        ]
    }

    fn status_types(&self) -> FieldTypes {
        &[
            ("/status/active", Ty::Int32, "active"),
            ("/status/succeeded", Ty::Int32, "succeeded"),
            ("/status/failed", Ty::Int32, "failed"),
            ("/status/terminating", Ty::Int32, "terminating"),
            ("/status/ready", Ty::Int32, "ready"),
            ("/status/startTime", Ty::Str, "startTime"),
            ("/status/completionTime", Ty::Str, "completionTime"),
            (
                "/status/conditions",
                Ty::Array("[]JobCondition"),
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

    /// `SetDefaults_Job`, then the pod template's defaults (`SetObjectDefaults_Job`).
    fn defaults(&self, obj: &mut Value) {
        let Some(spec) = obj_mut(obj, "spec") else {
            return;
        };
        if spec.field("completions").is_none_or(Value::is_null)
            && spec.field("parallelism").is_none_or(Value::is_null)
        {
            spec.insert("completions", json!(1));
        }
        default_field(spec, "parallelism", json!(1));
        let per_index = spec
            .field("backoffLimitPerIndex")
            .is_some_and(|v| !v.is_null());
        default_field(
            spec,
            "backoffLimit",
            json!(if per_index { i32::MAX } else { 6 }),
        );
        default_field(spec, "completionMode", json!("NonIndexed"));
        default_field(spec, "suspend", json!(false));
        let policy = if spec.field("podFailurePolicy").is_some_and(|v| !v.is_null()) {
            "Failed"
        } else {
            "TerminatingOrFailed"
        };
        default_field(spec, "podReplacementPolicy", json!(policy));
        default_field(spec, "manualSelector", json!(false));
        if let Some(t) = spec.get_mut("template").and_then(|t| t.get_mut("spec")) {
            default_pod_spec(t);
        }
        take_template_labels(obj);
    }

    /// `generateSelectorIfNeeded`, which kube's job strategy runs in `Validate`, once the UID
    /// is set: unless `manualSelector`, the template gets the job-name and controller-uid
    /// labels (legacy and prefixed, each only if missing), and the selector matches the
    /// prefixed controller-uid. The stored Job is defaulted again when read, so one created
    /// without labels shows the generated ones too.
    fn generate_on_create(&self, obj: &mut Value) {
        if obj.at("/spec/manualSelector").and_then(Value::as_bool) != Some(true) {
            generate_selector(obj);
        }
        take_template_labels(obj);
    }

    fn generation_bumps(&self, old: &Value, new: &Value) -> bool {
        old.field("spec") != new.field("spec")
    }

    /// `ValidateJob` / `validateJobSpec` for the fields Converge models.
    fn validate(&self, _info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
        for (ptr, field) in [
            ("/spec/parallelism", "spec.parallelism"),
            ("/spec/completions", "spec.completions"),
            ("/spec/activeDeadlineSeconds", "spec.activeDeadlineSeconds"),
            ("/spec/backoffLimit", "spec.backoffLimit"),
            (
                "/spec/ttlSecondsAfterFinished",
                "spec.ttlSecondsAfterFinished",
            ),
        ] {
            nonneg(obj, ptr, field, errs);
        }
        match obj.at("/spec/completionMode").and_then(Value::as_str) {
            None | Some("NonIndexed" | "Indexed") => {}
            Some(other) => errs.push(FieldError::not_supported(
                "spec.completionMode",
                json!(other),
                &["NonIndexed", "Indexed"],
            )),
        }
        if obj.at("/spec/completionMode").and_then(Value::as_str) == Some("Indexed")
            && obj.at("/spec/completions").is_none_or(Value::is_null)
        {
            errs.push(FieldError::required(
                "spec.completions",
                "when completion mode is Indexed",
            ));
        }
        let has_failure_policy = obj
            .at("/spec/podFailurePolicy")
            .is_some_and(|v| !v.is_null());
        if let Some(p) = obj.at("/spec/podReplacementPolicy").and_then(Value::as_str) {
            let allowed: &[&str] = if has_failure_policy {
                &["Failed"]
            } else {
                &["Failed", "TerminatingOrFailed"]
            };
            if !allowed.contains(&p) {
                errs.push(FieldError::not_supported(
                    "spec.podReplacementPolicy",
                    json!(p),
                    allowed,
                ));
            }
        }
        validate_generated_selector(obj, errs);
        validate_selector(obj, errs);
        match obj.at("/spec/template") {
            None | Some(Value::Null) => errs.push(FieldError::required("spec.template", "")),
            Some(t) => {
                if let Some(labels) = t.at("/metadata/labels").and_then(Value::as_object) {
                    validate_labels(labels, "spec.template.metadata.labels", errs);
                }
                validate_pod_spec(t.field("spec"), "spec.template.spec", errs);
                // The end of `validateJobSpec`: after defaulting, an unset policy is `Always`.
                let field = "spec.template.spec.restartPolicy";
                match t.at("/spec/restartPolicy").and_then(Value::as_str) {
                    Some("OnFailure") if has_failure_policy => errs.push(FieldError::invalid(
                        field,
                        json!("OnFailure"),
                        "only \"Never\" is supported when podFailurePolicy is specified",
                    )),
                    Some("OnFailure" | "Never") => {}
                    None | Some("" | "Always") => errs.push(FieldError::required(
                        field,
                        "valid values: \"OnFailure\", \"Never\"",
                    )),
                    Some(other) => errs.push(FieldError::not_supported(
                        field,
                        json!(other),
                        &["OnFailure", "Never"],
                    )),
                }
            }
        }
    }

    fn validate_status(&self, obj: &Value, errs: &mut Vec<FieldError>) {
        for k in ["active", "succeeded", "failed", "terminating", "ready"] {
            nonneg(obj, &format!("/status/{k}"), &format!("status.{k}"), errs);
        }
    }

    /// `ValidateJobUpdateStatus` with the options kube 1.32's job status strategy sets
    /// (`getStatusValidationOptions`, JobManagedBy on): each rule applies only when the fields
    /// it reads changed. Modelled: (`RejectMoreReadyThanActivePods`) ready may not exceed
    /// active when either changed, a terminal condition may not go, the counters may not
    /// decrease. The first is a 1.32 rule that
    /// refuses the controller's own `active: 0` while it waits out the pod-failure back-off
    /// with ready pods (kubernetes#139428, fixed in 1.34+ only).
    fn validate_status_update(&self, old: &Value, new: &Value, errs: &mut Vec<FieldError>) {
        let int = |v: &Value, k: &str| v.at(&format!("/status/{k}")).and_then(Value::as_i64);
        let changed = |k: &str| old.at(&format!("/status/{k}")) != new.at(&format!("/status/{k}"));
        // validateJobStatus comes first.
        if changed("ready") || changed("active") {
            if let Some(ready) = int(new, "ready") {
                if ready > int(new, "active").unwrap_or(0) {
                    errs.push(FieldError::invalid(
                        "status.ready",
                        json!(ready),
                        "cannot set more ready pods than active",
                    ));
                }
            }
        }
        let holds = |v: &Value, t: &str| {
            v.at("/status/conditions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|c| {
                    c.field("type") == Some(&json!(t)) && c.field("status") == Some(&json!("True"))
                })
        };
        for t in ["Failed", "Complete", "FailureTarget"] {
            if holds(old, t) && !holds(new, t) {
                errs.push(FieldError::invalid_omit_value(
                    "status.conditions",
                    format!("cannot disable the terminal {t}=True condition"),
                ));
            }
        }
        for k in ["failed", "succeeded"] {
            let (o, n) = (int(old, k).unwrap_or(0), int(new, k).unwrap_or(0));
            if n < o {
                errs.push(FieldError::invalid(
                    format!("status.{k}"),
                    json!(n),
                    format!("cannot decrease the {k} counter"),
                ));
            }
        }
    }

    /// `ValidateJobSpecUpdate`: what may not change once the Job exists (the elastic-Indexed
    /// and suspended-never-started exceptions are not modelled).
    fn validate_update(
        &self,
        _info: &ResourceInfo,
        old: &Value,
        new: &Value,
        errs: &mut Vec<FieldError>,
    ) {
        immutable(old, new, "/spec/completions", "spec.completions", errs);
        immutable(old, new, "/spec/selector", "spec.selector", errs);
        immutable(old, new, "/spec/template", "spec.template", errs);
        immutable(
            old,
            new,
            "/spec/completionMode",
            "spec.completionMode",
            errs,
        );
        immutable(
            old,
            new,
            "/spec/podFailurePolicy",
            "spec.podFailurePolicy",
            errs,
        );
        immutable(old, new, "/spec/managedBy", "spec.managedBy", errs);
    }

    /// `PrepareForCreate` resets status to the empty `JobStatus` (every field omitempty).
    fn prepare_for_create(&self, obj: &mut Value, _cluster_ips: &mut u64) {
        obj["status"] = json!({});
    }

    /// batch/v1's `DefaultGarbageCollectionPolicy`: a DELETE without a policy orphans the
    /// Job's pods (kept for compatibility; kubectl sends `Background`).
    fn orphans_dependents_by_default(&self) -> bool {
        true
    }
}

/// kube's `generateSelector` [pkg/registry/batch/job/strategy.go].
fn generate_selector(obj: &mut Value) {
    let name = obj.at("/metadata/name").cloned().unwrap_or(json!(""));
    let uid = obj.at("/metadata/uid").cloned().unwrap_or(json!(""));
    let Some(spec) = obj_mut(obj, "spec") else {
        return;
    };
    if let Some(labels) = child(spec, "template")
        .and_then(|t| child(t, "metadata"))
        .and_then(|m| child(m, "labels"))
    {
        for key in [LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL] {
            default_field(labels, key, name.clone());
        }
        for key in [LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL] {
            default_field(labels, key, uid.clone());
        }
    }
    if let Some(ml) = child(spec, "selector").and_then(|s| child(s, "matchLabels")) {
        default_field(ml, CONTROLLER_UID_LABEL, uid);
    }
}

/// The object at `key`, made an empty one when missing or null.
fn child<'a>(m: &'a mut Map, key: &str) -> Option<&'a mut Map> {
    let v = m.entry(key).or_insert_with(|| json!({}));
    if v.is_null() {
        *v = json!({});
    }
    v.as_object_mut()
}

/// `SetDefaults_Job`'s labels: a Job with no labels of its own takes its template's.
fn take_template_labels(obj: &mut Value) {
    let Some(Value::Object(labels)) = obj.at("/spec/template/metadata/labels").cloned() else {
        return;
    };
    let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let none = m
        .field("labels")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    if none && !labels.is_empty() {
        m.insert("labels", Value::Object(labels));
    }
}

/// `validateGeneratedSelector`: without `manualSelector`, the selector must be the generated
/// one (the template-label checks of `ValidateHasLabel` are not modelled).
fn validate_generated_selector(obj: &Value, errs: &mut Vec<FieldError>) {
    if obj.at("/spec/manualSelector").and_then(Value::as_bool) == Some(true)
        || obj
            .at("/spec/template/metadata/labels")
            .is_none_or(Value::is_null)
    {
        return;
    }
    let uid = obj.at("/metadata/uid").cloned().unwrap_or(json!(""));
    let expected = json!({"matchLabels": {CONTROLLER_UID_LABEL: uid}});
    if let Some(sel) = obj.at("/spec/selector") {
        if *sel != expected {
            errs.push(FieldError::invalid_raw(
                "spec.selector",
                go_label_selector(sel),
                "`selector` not auto-generated",
            ));
        }
    }
}

/// `ValidateJobSpec`'s selector checks: required, well formed, and matching the template.
fn validate_selector(obj: &Value, errs: &mut Vec<FieldError>) {
    let Some(sel) = obj.at("/spec/selector").filter(|s| !s.is_null()) else {
        errs.push(FieldError::required("spec.selector", ""));
        return;
    };
    validate_selector_selects_template(obj, sel, errs);
}
