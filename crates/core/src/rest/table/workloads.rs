//! Deployment, ReplicaSet, Job, DaemonSet, StatefulSet and ControllerRevision rows [printers.go
//! `printDeployment`, `printReplicaSet`, `printJob`, `printDaemonSet`, `printStatefulSet`,
//! `printControllerRevision`].

use crate::api::meta::Fields;
use crate::json::{json, Value};

use super::{containers, format_labels, n, or_none, since};
use crate::api::meta;
use crate::api::selector::label_selector_string as selector_string;
use crate::time::{human_duration, parse_rfc3339_unix_ms, SimTime};

pub(super) fn deployment_cells(d: &Value, now: SimTime) -> Vec<Value> {
    let (names, images) = containers(d, "/spec/template/spec/containers");
    let replicas = d
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    vec![
        json!(meta::name(d)),
        json!(format!("{}/{replicas}", n(d, "/status/readyReplicas"))),
        json!(n(d, "/status/updatedReplicas")),
        json!(n(d, "/status/availableReplicas")),
        json!(since(
            d.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
        json!(names),
        json!(images),
        json!(selector_string(d.pointer("/spec/selector")).unwrap_or_else(|| "<invalid>".into())),
    ]
}
pub(super) fn replicaset_cells(rs: &Value, now: SimTime) -> Vec<Value> {
    let (names, images) = containers(rs, "/spec/template/spec/containers");
    let selector = match selector_string(rs.pointer("/spec/selector")) {
        None => "<error>".to_owned(),
        Some(sel) => or_none(&sel),
    };
    vec![
        json!(meta::name(rs)),
        json!(rs
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1)),
        json!(n(rs, "/status/replicas")),
        json!(n(rs, "/status/readyReplicas")),
        json!(since(
            rs.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
        json!(names),
        json!(images),
        json!(selector),
    ]
}

/// `printDaemonSet`: the status counts, the template's nodeSelector as `k=v` labels, then the
/// wide cells.
pub(super) fn daemonset_cells(ds: &Value, now: SimTime) -> Vec<Value> {
    let (names, images) = containers(ds, "/spec/template/spec/containers");
    vec![
        json!(meta::name(ds)),
        json!(n(ds, "/status/desiredNumberScheduled")),
        json!(n(ds, "/status/currentNumberScheduled")),
        json!(n(ds, "/status/numberReady")),
        json!(n(ds, "/status/updatedNumberScheduled")),
        json!(n(ds, "/status/numberAvailable")),
        json!(format_labels(
            ds.pointer("/spec/template/spec/nodeSelector")
        )),
        json!(since(
            ds.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
        json!(names),
        json!(images),
        json!(selector_string(ds.pointer("/spec/selector")).unwrap_or_else(|| "<invalid>".into())),
    ]
}

/// `printStatefulSet`: `ready/desired`, the age, then the wide cells.
pub(super) fn statefulset_cells(sts: &Value, now: SimTime) -> Vec<Value> {
    let (names, images) = containers(sts, "/spec/template/spec/containers");
    let desired = sts
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    vec![
        json!(meta::name(sts)),
        json!(format!("{}/{desired}", n(sts, "/status/readyReplicas"))),
        json!(since(
            sts.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
        json!(names),
        json!(images),
    ]
}

/// `printControllerRevision`: the controller as `formatResourceName` with its kind
/// (`daemonset.apps/agent`), or `<none>`.
pub(super) fn controllerrevision_cells(cr: &Value, now: SimTime) -> Vec<Value> {
    let controller = meta::controller_of(cr).map_or_else(
        || "<none>".to_owned(),
        |(kind, name, _)| {
            let api_version = cr
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .and_then(|refs| {
                    refs.iter()
                        .find(|r| r.field("controller").and_then(Value::as_bool) == Some(true))
                })
                .map(|r| crate::api::meta::str_at(r, "/apiVersion"))
                .unwrap_or("");
            let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
            let kind = if group.is_empty() {
                kind.to_lowercase()
            } else {
                format!("{}.{group}", kind.to_lowercase())
            };
            format!("{kind}/{name}")
        },
    );
    vec![
        json!(meta::name(cr)),
        json!(controller),
        json!(n(cr, "/revision")),
        json!(since(
            cr.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
    ]
}

/// `printJob`: STATUS from the first condition of each type that is True (Complete, Failed,
/// then Terminating, Suspended, FailureTarget, else Running; 1.32 has no SuccessCriteriaMet
/// case), COMPLETIONS as `succeeded/completions` (`succeeded/1 of parallelism` without
/// completions), DURATION from startTime to completionTime or now.
pub(super) fn job_cells(job: &Value, now: SimTime) -> Vec<Value> {
    let (names, images) = containers(job, "/spec/template/spec/containers");
    let selector = match selector_string(job.pointer("/spec/selector")) {
        None => "<error>".to_owned(),
        Some(sel) => or_none(&sel),
    };
    // `hasJobCondition`: the first condition of the type, True.
    let has = |t: &str| {
        crate::conditions::status_conditions(job)
            .is_some_and(|cs| crate::conditions::is_status_condition_true(cs, t))
    };
    let status = if has("Complete") {
        "Complete"
    } else if has("Failed") {
        "Failed"
    } else if job.pointer("/metadata/deletionTimestamp").is_some() {
        "Terminating"
    } else if has("Suspended") {
        "Suspended"
    } else if has("FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let succeeded = n(job, "/status/succeeded");
    let completions = match job.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(c) => format!("{succeeded}/{c}"),
        None => match job.pointer("/spec/parallelism").and_then(Value::as_i64) {
            Some(p) if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let time = |ptr: &str| {
        job.pointer(ptr)
            .and_then(Value::as_str)
            .and_then(parse_rfc3339_unix_ms)
    };
    let duration = match (time("/status/startTime"), time("/status/completionTime")) {
        (None, _) => String::new(),
        (Some(start), None) => human_duration(now.unix_ms() - start),
        (Some(start), Some(end)) => human_duration(end - start),
    };
    vec![
        json!(meta::name(job)),
        json!(status),
        json!(completions),
        json!(duration),
        json!(since(
            job.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
        json!(names),
        json!(images),
        json!(selector),
    ]
}
