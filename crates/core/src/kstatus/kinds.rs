//! kstatus' per-kind rules (`core.go`), run after the generic checks found nothing.

use crate::api::meta::Fields;
use crate::json::Value;

use super::{
    conditions_of, generic, get_bool, get_int, get_str, go_type, go_value, lookup,
    KstatusCondition, KstatusConditionType, KstatusError, KstatusResult, Status,
};

/// A per-kind rule: the object and "now" in Unix milliseconds.
pub(super) type Rule = fn(&Value, i64) -> Result<KstatusResult, KstatusError>;

/// kstatus' `legacyTypes`, keyed by `group/Kind` (`Kind` for the core group).
pub(super) fn rule_for(group_kind: &str) -> Option<Rule> {
    let rule: Rule = match group_kind {
        "Service" => service,
        "Pod" => pod,
        "Secret" | "ConfigMap" | "batch/CronJob" => always_ready,
        "PersistentVolumeClaim" => pvc,
        "apps/StatefulSet" => stateful_set,
        "apps/DaemonSet" | "extensions/DaemonSet" => daemon_set,
        "apps/Deployment" | "extensions/Deployment" => deployment,
        "apps/ReplicaSet" | "extensions/ReplicaSet" => replica_set,
        "policy/PodDisruptionBudget" => pdb,
        "batch/Job" => job,
        "apiextensions.k8s.io/CustomResourceDefinition" => crd,
        _ => return None,
    };
    Some(rule)
}

/// kstatus' `math.MaxInt32`: a progressDeadlineSeconds that means "no deadline".
const MAX_INT32: i64 = 2_147_483_647;

// Counts are Go `int`s in kstatus: differences wrap as Go's do (`wrapping_sub`), never panic.

/// How long a Pod may stay unschedulable before it counts as Failed (`ScheduleWindow`).
const SCHEDULE_WINDOW_MS: i64 = 15_000;

fn always_ready(_: &Value, _: i64) -> Result<KstatusResult, KstatusError> {
    Ok(KstatusResult::current("Resource is always ready"))
}

fn pdb(_: &Value, _: i64) -> Result<KstatusResult, KstatusError> {
    Ok(KstatusResult::current(
        "AllowedDisruptions has been computed.",
    ))
}

fn deployment(obj: &Value, _: i64) -> Result<KstatusResult, KstatusError> {
    let mut progressing =
        get_int(obj, &["spec", "progressDeadlineSeconds"], MAX_INT32) == MAX_INT32;
    let mut available = false;
    for c in conditions_of(obj)? {
        match c.type_ {
            "Progressing" => {
                if c.reason == "ProgressDeadlineExceeded" {
                    return Ok(KstatusResult {
                        status: Status::Failed,
                        message: "Progress deadline exceeded".into(),
                        conditions: vec![KstatusCondition {
                            type_: KstatusConditionType::Stalled,
                            reason: c.reason.to_owned(),
                            message: c.message.to_owned(),
                        }],
                    });
                }
                if c.status == "True" && c.reason == "NewReplicaSetAvailable" {
                    progressing = true;
                }
            }
            "Available" if c.status == "True" => available = true,
            _ => {}
        }
    }

    let spec = get_int(obj, &["spec", "replicas"], 1);
    let replicas = get_int(obj, &["status", "replicas"], 0);
    let updated = get_int(obj, &["status", "updatedReplicas"], 0);
    let ready = get_int(obj, &["status", "readyReplicas"], 0);
    let avail = get_int(obj, &["status", "availableReplicas"], 0);

    if spec > replicas {
        return Ok(KstatusResult::in_progress(
            "LessReplicas",
            format!("Replicas: {replicas}/{spec}"),
        ));
    }
    if spec > updated {
        return Ok(KstatusResult::in_progress(
            "LessUpdated",
            format!("Updated: {updated}/{spec}"),
        ));
    }
    if replicas > spec {
        return Ok(KstatusResult::in_progress(
            "ExtraPods",
            format!("Pending termination: {}", replicas.wrapping_sub(spec)),
        ));
    }
    if updated > avail {
        return Ok(KstatusResult::in_progress(
            "LessAvailable",
            format!("Available: {avail}/{updated}"),
        ));
    }
    if spec > ready {
        return Ok(KstatusResult::in_progress(
            "LessReady",
            format!("Ready: {ready}/{spec}"),
        ));
    }
    if !progressing {
        return Ok(KstatusResult::in_progress(
            "ReplicaSetNotAvailable",
            "ReplicaSet not Available",
        ));
    }
    if !available {
        return Ok(KstatusResult::in_progress(
            "DeploymentNotAvailable",
            "Deployment not Available",
        ));
    }
    Ok(KstatusResult::current(format!(
        "Deployment is available. Replicas: {replicas}"
    )))
}

fn replica_set(obj: &Value, _: i64) -> Result<KstatusResult, KstatusError> {
    for c in conditions_of(obj)? {
        if c.type_ == "ReplicaFailure" && c.status == "True" {
            return Ok(KstatusResult::in_progress(
                "ReplicaFailure",
                "Replica Failure condition. Check Pods",
            ));
        }
    }
    let spec = get_int(obj, &["spec", "replicas"], 1);
    let replicas = get_int(obj, &["status", "replicas"], 0);
    let ready = get_int(obj, &["status", "readyReplicas"], 0);
    let avail = get_int(obj, &["status", "availableReplicas"], 0);
    let labelled = get_int(obj, &["status", "fullyLabeledReplicas"], 0);

    if spec > labelled {
        return Ok(KstatusResult::in_progress(
            "LessLabelled",
            format!("Labelled: {labelled}/{spec}"),
        ));
    }
    if spec > avail {
        return Ok(KstatusResult::in_progress(
            "LessAvailable",
            format!("Available: {avail}/{spec}"),
        ));
    }
    if spec > ready {
        return Ok(KstatusResult::in_progress(
            "LessReady",
            format!("Ready: {ready}/{spec}"),
        ));
    }
    if replicas > spec {
        return Ok(KstatusResult::in_progress(
            "ExtraPods",
            format!("Pending termination: {}", replicas.wrapping_sub(spec)),
        ));
    }
    Ok(KstatusResult::current(format!(
        "ReplicaSet is available. Replicas: {replicas}"
    )))
}

fn stateful_set(obj: &Value, _: i64) -> Result<KstatusResult, KstatusError> {
    if get_str(obj, &["spec", "updateStrategy", "type"], "") == "OnDelete" {
        return Ok(KstatusResult::current(
            "StatefulSet is using the ondelete update strategy",
        ));
    }
    let spec = get_int(obj, &["spec", "replicas"], 1);
    let ready = get_int(obj, &["status", "readyReplicas"], 0);
    let current = get_int(obj, &["status", "currentReplicas"], 0);
    let updated = get_int(obj, &["status", "updatedReplicas"], 0);
    let replicas = get_int(obj, &["status", "replicas"], 0);
    let partition = get_int(
        obj,
        &["spec", "updateStrategy", "rollingUpdate", "partition"],
        -1,
    );

    if spec > replicas {
        return Ok(KstatusResult::in_progress(
            "LessReplicas",
            format!("Replicas: {replicas}/{spec}"),
        ));
    }
    if spec > ready {
        return Ok(KstatusResult::in_progress(
            "LessReady",
            format!("Ready: {ready}/{spec}"),
        ));
    }
    if replicas > spec {
        return Ok(KstatusResult::in_progress(
            "ExtraPods",
            format!("Pending termination: {}", replicas.wrapping_sub(spec)),
        ));
    }
    if partition != -1 {
        if updated < spec.wrapping_sub(partition) {
            return Ok(KstatusResult::in_progress(
                "PartitionRollout",
                format!("updated: {updated}/{}", spec.wrapping_sub(partition)),
            ));
        }
        return Ok(KstatusResult::current(format!(
            "Partition rollout complete. updated: {updated}"
        )));
    }
    if spec > current {
        return Ok(KstatusResult::in_progress(
            "LessCurrent",
            format!("current: {current}/{spec}"),
        ));
    }
    let current_revision = get_str(obj, &["status", "currentRevision"], "");
    let update_revision = get_str(obj, &["status", "updateRevision"], "");
    if current_revision != update_revision {
        return Ok(KstatusResult::in_progress(
            "RevisionMismatch",
            "Waiting for updated revision to match current",
        ));
    }
    Ok(KstatusResult::current(format!(
        "All replicas scheduled as expected. Replicas: {replicas}"
    )))
}

fn daemon_set(obj: &Value, _: i64) -> Result<KstatusResult, KstatusError> {
    if let Some(res) = generic::check_generation_set(obj)? {
        return Ok(res);
    }
    let desired = get_int(obj, &["status", "desiredNumberScheduled"], -1);
    let current = get_int(obj, &["status", "currentNumberScheduled"], 0);
    let updated = get_int(obj, &["status", "updatedNumberScheduled"], 0);
    let avail = get_int(obj, &["status", "numberAvailable"], 0);
    let ready = get_int(obj, &["status", "numberReady"], 0);

    if desired == -1 {
        return Ok(KstatusResult::in_progress(
            "NoDesiredNumber",
            "Missing .status.desiredNumberScheduled",
        ));
    }
    if desired > current {
        return Ok(KstatusResult::in_progress(
            "LessCurrent",
            format!("Current: {current}/{desired}"),
        ));
    }
    if desired > updated {
        return Ok(KstatusResult::in_progress(
            "LessUpdated",
            format!("Updated: {updated}/{desired}"),
        ));
    }
    if desired > avail {
        return Ok(KstatusResult::in_progress(
            "LessAvailable",
            format!("Available: {avail}/{desired}"),
        ));
    }
    if desired > ready {
        return Ok(KstatusResult::in_progress(
            "LessReady",
            format!("Ready: {ready}/{desired}"),
        ));
    }
    Ok(KstatusResult::current(format!(
        "All replicas scheduled as expected. Replicas: {desired}"
    )))
}

fn pvc(obj: &Value, _: i64) -> Result<KstatusResult, KstatusError> {
    let phase = get_str(obj, &["status", "phase"], "unknown");
    if phase != "Bound" {
        return Ok(KstatusResult::in_progress(
            "NotBound",
            format!("PVC is not Bound. phase: {phase}"),
        ));
    }
    Ok(KstatusResult::current("PVC is Bound"))
}

fn pod(obj: &Value, now_unix_ms: i64) -> Result<KstatusResult, KstatusError> {
    let conditions = conditions_of(obj)?;
    let phase = get_str(obj, &["status", "phase"], "");
    match phase {
        "Succeeded" => Ok(KstatusResult::current("Pod has completed successfully")),
        "Failed" => Ok(KstatusResult::current(
            "Pod has completed, but not successfully",
        )),
        "Running" => {
            if conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True")
            {
                return Ok(KstatusResult::current("Pod is Ready"));
            }
            let crash_looping = crash_looping_containers(obj)?;
            if !crash_looping.is_empty() {
                return Ok(KstatusResult::failed(
                    "ContainerCrashLooping",
                    format!("Containers in CrashLoop state: {}", crash_looping.join(",")),
                ));
            }
            Ok(KstatusResult::in_progress(
                "PodRunningNotReady",
                "Pod is running but is not Ready",
            ))
        }
        "Pending" => {
            let unschedulable = conditions
                .iter()
                .find(|c| c.type_ == "PodScheduled" && c.status == "False")
                .is_some_and(|c| c.reason == "Unschedulable");
            if unschedulable {
                // A missing or unparseable creationTimestamp is Go's zero time: long ago.
                let created = get_str(obj, &["metadata", "creationTimestamp"], "");
                let within_window =
                    crate::time::parse_rfc3339_unix_ms(created).is_some_and(|created_ms| {
                        now_unix_ms.saturating_sub(SCHEDULE_WINDOW_MS) < created_ms
                    });
                if within_window {
                    return Ok(KstatusResult::in_progress(
                        "PodNotScheduled",
                        "Pod has not been scheduled",
                    ));
                }
                return Ok(KstatusResult::failed(
                    "PodUnschedulable",
                    "Pod could not be scheduled",
                ));
            }
            Ok(KstatusResult::in_progress(
                "PodPending",
                "Pod is in the Pending phase",
            ))
        }
        "" => Ok(KstatusResult::in_progress(
            "PodNotObserved",
            "Pod phase not available",
        )),
        other => Err(KstatusError::new(format!("unknown phase {other}"))),
    }
}

/// Names of containers whose `state.waiting.reason` is `CrashLoopBackOff`, in order.
fn crash_looping_containers(obj: &Value) -> Result<Vec<String>, KstatusError> {
    let statuses = match lookup(obj, &["status", "containerStatuses"]) {
        None => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(KstatusError::new(format!(
                ".status.containerStatuses accessor error: {} is of the type {}, expected []interface {{}}",
                go_value(other),
                go_type(other)
            )))
        }
    };
    Ok(statuses
        .iter()
        .filter(|cs| {
            lookup(cs, &["state", "waiting", "reason"]).and_then(Value::as_str)
                == Some("CrashLoopBackOff")
        })
        .filter_map(|cs| cs.field("name").and_then(Value::as_str))
        .map(str::to_string)
        .collect())
}

fn job(obj: &Value, _: i64) -> Result<KstatusResult, KstatusError> {
    let parallelism = get_int(obj, &["spec", "parallelism"], 1);
    let completions = get_int(obj, &["spec", "completions"], parallelism);
    let succeeded = get_int(obj, &["status", "succeeded"], 0);
    let active = get_int(obj, &["status", "active"], 0);
    let failed = get_int(obj, &["status", "failed"], 0);
    let start_time = get_str(obj, &["status", "startTime"], "");

    for c in conditions_of(obj)? {
        match c.type_ {
            "Complete" if c.status == "True" => {
                return Ok(KstatusResult::current(format!(
                    "Job Completed. succeeded: {succeeded}/{completions}"
                )));
            }
            "Failed" if c.status == "True" => {
                return Ok(KstatusResult::failed(
                    "JobFailed",
                    format!("Job Failed. failed: {failed}/{completions}"),
                ));
            }
            // Only a Job that is meant to be suspended and is: resuming or suspending is progress.
            "Suspended" if c.status == "True" && get_bool(obj, &["spec", "suspend"], false) => {
                return Ok(KstatusResult::current("Job is suspended"));
            }
            _ => {}
        }
    }
    if start_time.is_empty() {
        return Ok(KstatusResult::in_progress(
            "JobNotStarted",
            "Job not started",
        ));
    }
    Ok(KstatusResult::current(format!(
        "Job in progress. success:{succeeded}, active: {active}, failed: {failed}"
    )))
}

fn service(obj: &Value, _: i64) -> Result<KstatusResult, KstatusError> {
    let type_ = get_str(obj, &["spec", "type"], "ClusterIP");
    let cluster_ip = get_str(obj, &["spec", "clusterIP"], "");
    if type_ == "LoadBalancer" && cluster_ip.is_empty() {
        return Ok(KstatusResult::in_progress(
            "NoIPAssigned",
            "ClusterIP not set. Service type: LoadBalancer",
        ));
    }
    Ok(KstatusResult::current("Service is ready"))
}

fn crd(obj: &Value, _: i64) -> Result<KstatusResult, KstatusError> {
    for c in conditions_of(obj)? {
        if c.type_ == "NamesAccepted" && c.status == "False" {
            return Ok(KstatusResult::failed(c.reason, c.message));
        }
        if c.type_ == "Established" {
            if c.status == "False" && c.reason != "Installing" {
                return Ok(KstatusResult::failed(c.reason, c.message));
            }
            if c.status == "True" {
                return Ok(KstatusResult::current("CRD is established"));
            }
        }
    }
    Ok(KstatusResult::in_progress(
        "Installing",
        "Install in progress",
    ))
}

#[cfg(test)]
mod tests {
    use super::super::{compute, KstatusResult, Status};
    use crate::json::{json, Value};

    fn ip(reason: &str, message: &str) -> KstatusResult {
        KstatusResult::in_progress(reason, message)
    }
    fn failed(reason: &str, message: &str) -> KstatusResult {
        KstatusResult::failed(reason, message)
    }
    fn current(message: &str) -> KstatusResult {
        KstatusResult::current(message)
    }

    fn obj(api: &str, kind: &str, spec: Value, status: Value) -> Value {
        json!({"apiVersion": api, "kind": kind, "metadata": {"name": "x", "namespace": "default"},
               "spec": spec, "status": status})
    }

    fn run(v: &Value) -> KstatusResult {
        compute(v, 0).unwrap()
    }

    fn deploy(spec: Value, status: Value) -> KstatusResult {
        run(&obj("apps/v1", "Deployment", spec, status))
    }

    const DEPLOY_OK: &str = r#"{"replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
        "availableReplicas": 3, "conditions": [
        {"type": "Available", "status": "True"},
        {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]}"#;

    fn deploy_ok_status() -> Value {
        serde_json::from_str(DEPLOY_OK).unwrap()
    }

    #[test]
    fn deployment_progress_deadline_exceeded_is_failed_with_the_conditions_reason_and_message() {
        let res = deploy(
            json!({"replicas": 3}),
            json!({"conditions": [{"type": "Progressing", "status": "False",
                "reason": "ProgressDeadlineExceeded", "message": "ReplicaSet \"x-1\" has timed out progressing."}]}),
        );
        assert_eq!(res.status, Status::Failed);
        assert_eq!(res.message, "Progress deadline exceeded");
        assert_eq!(res.conditions[0].reason, "ProgressDeadlineExceeded");
        assert_eq!(
            res.conditions[0].message,
            "ReplicaSet \"x-1\" has timed out progressing."
        );
    }

    #[test]
    fn deployment_replica_checks_run_in_kstatus_order() {
        let s = json!({"replicas": 3});
        assert_eq!(
            deploy(s.clone(), json!({"replicas": 2})),
            ip("LessReplicas", "Replicas: 2/3")
        );
        assert_eq!(
            deploy(s.clone(), json!({"replicas": 3, "updatedReplicas": 1})),
            ip("LessUpdated", "Updated: 1/3")
        );
        assert_eq!(
            deploy(s.clone(), json!({"replicas": 5, "updatedReplicas": 3})),
            ip("ExtraPods", "Pending termination: 2")
        );
        assert_eq!(
            deploy(
                s.clone(),
                json!({"replicas": 3, "updatedReplicas": 3, "availableReplicas": 2})
            ),
            ip("LessAvailable", "Available: 2/3")
        );
        assert_eq!(
            deploy(
                s.clone(),
                json!({"replicas": 3, "updatedReplicas": 3, "availableReplicas": 3, "readyReplicas": 1})
            ),
            ip("LessReady", "Ready: 1/3")
        );
    }

    #[test]
    fn deployment_replicas_default_to_one() {
        assert_eq!(
            deploy(json!({}), json!({})),
            ip("LessReplicas", "Replicas: 0/1")
        );
        // A non-integer replicas falls back to the default too.
        assert_eq!(
            deploy(json!({"replicas": 2.0}), json!({})),
            ip("LessReplicas", "Replicas: 0/1")
        );
    }

    #[test]
    fn deployment_with_a_deadline_needs_new_replica_set_available() {
        let mut status = deploy_ok_status();
        status["conditions"][1]["reason"] = json!("ReplicaSetUpdated");
        assert_eq!(
            deploy(
                json!({"replicas": 3, "progressDeadlineSeconds": 600}),
                status.clone()
            ),
            ip("ReplicaSetNotAvailable", "ReplicaSet not Available")
        );
        // Without a deadline (absent, or MaxInt32) the Deployment counts as progressing.
        assert_eq!(
            deploy(json!({"replicas": 3}), status.clone()).status,
            Status::Current
        );
        assert_eq!(
            deploy(
                json!({"replicas": 3, "progressDeadlineSeconds": 2147483647}),
                status
            )
            .status,
            Status::Current
        );
    }

    #[test]
    fn deployment_needs_available_true() {
        let mut status = deploy_ok_status();
        status["conditions"][0]["status"] = json!("False");
        assert_eq!(
            deploy(
                json!({"replicas": 3, "progressDeadlineSeconds": 600}),
                status
            ),
            ip("DeploymentNotAvailable", "Deployment not Available")
        );
    }

    #[test]
    fn deployment_current_reports_status_replicas() {
        assert_eq!(
            deploy(
                json!({"replicas": 3, "progressDeadlineSeconds": 600}),
                deploy_ok_status()
            ),
            current("Deployment is available. Replicas: 3")
        );
        assert_eq!(
            run(&obj(
                "extensions/v1beta1",
                "Deployment",
                json!({"replicas": 3}),
                deploy_ok_status()
            ))
            .status,
            Status::Current
        );
    }

    fn rs(spec: Value, status: Value) -> KstatusResult {
        run(&obj("apps/v1", "ReplicaSet", spec, status))
    }

    #[test]
    fn replica_set_rules() {
        let s = json!({"replicas": 2});
        assert_eq!(
            rs(
                s.clone(),
                json!({"conditions": [{"type": "ReplicaFailure", "status": "True"}]})
            ),
            ip("ReplicaFailure", "Replica Failure condition. Check Pods")
        );
        assert_eq!(
            rs(s.clone(), json!({"fullyLabeledReplicas": 1})),
            ip("LessLabelled", "Labelled: 1/2")
        );
        assert_eq!(
            rs(
                s.clone(),
                json!({"fullyLabeledReplicas": 2, "availableReplicas": 1})
            ),
            ip("LessAvailable", "Available: 1/2")
        );
        assert_eq!(
            rs(
                s.clone(),
                json!({"fullyLabeledReplicas": 2, "availableReplicas": 2, "readyReplicas": 0})
            ),
            ip("LessReady", "Ready: 0/2")
        );
        let full = json!({"fullyLabeledReplicas": 2, "availableReplicas": 2, "readyReplicas": 2});
        let mut extra = full.clone();
        extra["replicas"] = json!(4);
        assert_eq!(
            rs(s.clone(), extra),
            ip("ExtraPods", "Pending termination: 2")
        );
        let mut ok = full;
        ok["replicas"] = json!(2);
        assert_eq!(rs(s, ok), current("ReplicaSet is available. Replicas: 2"));
    }

    fn sts(spec: Value, status: Value) -> KstatusResult {
        run(&obj("apps/v1", "StatefulSet", spec, status))
    }

    #[test]
    fn stateful_set_on_delete_is_current_at_once() {
        assert_eq!(
            sts(
                json!({"replicas": 3, "updateStrategy": {"type": "OnDelete"}}),
                json!({})
            ),
            current("StatefulSet is using the ondelete update strategy")
        );
    }

    #[test]
    fn stateful_set_replica_checks() {
        let s = json!({"replicas": 3});
        assert_eq!(
            sts(s.clone(), json!({"replicas": 1})),
            ip("LessReplicas", "Replicas: 1/3")
        );
        assert_eq!(
            sts(s.clone(), json!({"replicas": 3, "readyReplicas": 2})),
            ip("LessReady", "Ready: 2/3")
        );
        assert_eq!(
            sts(s.clone(), json!({"replicas": 4, "readyReplicas": 3})),
            ip("ExtraPods", "Pending termination: 1")
        );
        assert_eq!(
            sts(
                s.clone(),
                json!({"replicas": 3, "readyReplicas": 3, "currentReplicas": 2})
            ),
            ip("LessCurrent", "current: 2/3")
        );
        assert_eq!(
            sts(
                s.clone(),
                json!({"replicas": 3, "readyReplicas": 3, "currentReplicas": 3,
                       "currentRevision": "a", "updateRevision": "b"})
            ),
            ip(
                "RevisionMismatch",
                "Waiting for updated revision to match current"
            )
        );
        assert_eq!(
            sts(
                s,
                json!({"replicas": 3, "readyReplicas": 3, "currentReplicas": 3,
                       "currentRevision": "a", "updateRevision": "a"})
            ),
            current("All replicas scheduled as expected. Replicas: 3")
        );
    }

    #[test]
    fn stateful_set_partition_rules() {
        let s = json!({"replicas": 3, "updateStrategy": {"type": "RollingUpdate",
                        "rollingUpdate": {"partition": 1}}});
        assert_eq!(
            sts(
                s.clone(),
                json!({"replicas": 3, "readyReplicas": 3, "updatedReplicas": 1})
            ),
            ip("PartitionRollout", "updated: 1/2")
        );
        assert_eq!(
            sts(
                s,
                json!({"replicas": 3, "readyReplicas": 3, "updatedReplicas": 2})
            ),
            current("Partition rollout complete. updated: 2")
        );
    }

    fn ds(metadata: Value, status: Value) -> KstatusResult {
        run(
            &json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": metadata, "status": status}),
        )
    }

    #[test]
    fn daemon_set_needs_both_generations() {
        assert_eq!(
            ds(json!({}), json!({"observedGeneration": 1})),
            ip("NoGeneration", "DaemonSet metadata.generation not found")
        );
        assert_eq!(
            ds(json!({"generation": 1}), json!({})),
            ip(
                "NoObservedGeneration",
                "DaemonSet status.observedGeneration not found"
            )
        );
    }

    #[test]
    fn daemon_set_counts() {
        let m = json!({"generation": 1});
        let st = |extra: Value| {
            let mut s = json!({"observedGeneration": 1});
            for (k, v) in extra.as_object().unwrap() {
                s[k] = v.clone();
            }
            s
        };
        assert_eq!(
            ds(m.clone(), st(json!({}))),
            ip("NoDesiredNumber", "Missing .status.desiredNumberScheduled")
        );
        assert_eq!(
            ds(
                m.clone(),
                st(json!({"desiredNumberScheduled": 2, "currentNumberScheduled": 1}))
            ),
            ip("LessCurrent", "Current: 1/2")
        );
        assert_eq!(
            ds(
                m.clone(),
                st(
                    json!({"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "updatedNumberScheduled": 0})
                )
            ),
            ip("LessUpdated", "Updated: 0/2")
        );
        assert_eq!(
            ds(
                m.clone(),
                st(
                    json!({"desiredNumberScheduled": 2, "currentNumberScheduled": 2,
                          "updatedNumberScheduled": 2, "numberAvailable": 1})
                )
            ),
            ip("LessAvailable", "Available: 1/2")
        );
        assert_eq!(
            ds(
                m.clone(),
                st(
                    json!({"desiredNumberScheduled": 2, "currentNumberScheduled": 2,
                          "updatedNumberScheduled": 2, "numberAvailable": 2, "numberReady": 1})
                )
            ),
            ip("LessReady", "Ready: 1/2")
        );
        assert_eq!(
            ds(
                m,
                st(
                    json!({"desiredNumberScheduled": 2, "currentNumberScheduled": 2,
                          "updatedNumberScheduled": 2, "numberAvailable": 2, "numberReady": 2})
                )
            ),
            current("All replicas scheduled as expected. Replicas: 2")
        );
    }

    const CREATED: &str = "2025-01-01T00:00:00Z";
    const CREATED_MS: i64 = 1_735_689_600_000;

    fn pod(status: Value, now_ms: i64) -> KstatusResult {
        let v = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "creationTimestamp": CREATED}, "status": status});
        compute(&v, now_ms).unwrap()
    }

    #[test]
    fn pod_completed_phases_are_current() {
        assert_eq!(
            pod(json!({"phase": "Succeeded"}), 0),
            current("Pod has completed successfully")
        );
        assert_eq!(
            pod(json!({"phase": "Failed"}), 0),
            current("Pod has completed, but not successfully")
        );
    }

    #[test]
    fn pod_running_rules() {
        assert_eq!(
            pod(
                json!({"phase": "Running", "conditions": [
                {"type": "Ready", "status": "False"}, {"type": "Ready", "status": "True"}]}),
                0
            ),
            current("Pod is Ready")
        );
        assert_eq!(
            pod(
                json!({"phase": "Running", "containerStatuses": [
                {"name": "a", "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
                {"name": "b", "state": {"running": {}}},
                {"name": "c", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}),
                0
            ),
            failed(
                "ContainerCrashLooping",
                "Containers in CrashLoop state: a,c"
            )
        );
        assert_eq!(
            pod(json!({"phase": "Running"}), 0),
            ip("PodRunningNotReady", "Pod is running but is not Ready")
        );
    }

    #[test]
    fn pod_unschedulable_is_in_progress_for_fifteen_seconds_then_failed() {
        let status = json!({"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]});
        assert_eq!(
            pod(status.clone(), CREATED_MS + 14_999),
            ip("PodNotScheduled", "Pod has not been scheduled")
        );
        assert_eq!(
            pod(status.clone(), CREATED_MS + 15_000),
            failed("PodUnschedulable", "Pod could not be scheduled")
        );
        // Without a creationTimestamp the pod is as old as Go's zero time.
        let v = json!({"apiVersion": "v1", "kind": "Pod", "status": status});
        assert_eq!(compute(&v, CREATED_MS).unwrap().status, Status::Failed);
    }

    #[test]
    fn pod_pending_and_unobserved() {
        assert_eq!(
            pod(
                json!({"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "SomethingElse"}]}),
                0
            ),
            ip("PodPending", "Pod is in the Pending phase")
        );
        assert_eq!(
            pod(json!({}), 0),
            ip("PodNotObserved", "Pod phase not available")
        );
    }

    #[test]
    fn pod_unknown_phase_is_an_error() {
        let v = json!({"apiVersion": "v1", "kind": "Pod", "status": {"phase": "Unknown"}});
        assert_eq!(compute(&v, 0).unwrap_err().message, "unknown phase Unknown");
    }

    fn job(spec: Value, status: Value) -> KstatusResult {
        run(&obj("batch/v1", "Job", spec, status))
    }

    #[test]
    fn job_rules() {
        assert_eq!(
            job(
                json!({"completions": 3}),
                json!({"succeeded": 3,
                "conditions": [{"type": "Complete", "status": "True"}]})
            ),
            current("Job Completed. succeeded: 3/3")
        );
        assert_eq!(
            job(
                json!({"parallelism": 2}),
                json!({"failed": 4,
                "conditions": [{"type": "Failed", "status": "True"}]})
            ),
            failed("JobFailed", "Job Failed. failed: 4/2")
        );
        assert_eq!(
            job(json!({}), json!({})),
            ip("JobNotStarted", "Job not started")
        );
        assert_eq!(
            job(
                json!({}),
                json!({"startTime": "2025-01-01T00:00:00Z", "active": 1, "succeeded": 2, "failed": 1})
            ),
            current("Job in progress. success:2, active: 1, failed: 1")
        );
    }

    #[test]
    fn job_suspended_is_current_only_when_spec_suspend_is_true() {
        let suspended = json!({"conditions": [{"type": "Suspended", "status": "True"}]});
        assert_eq!(
            job(json!({"suspend": true}), suspended.clone()),
            current("Job is suspended")
        );
        assert_eq!(
            job(json!({"suspend": false}), suspended),
            ip("JobNotStarted", "Job not started")
        );
        assert_eq!(
            job(
                json!({"suspend": true}),
                json!({"conditions": [{"type": "Suspended", "status": "False"}]})
            ),
            ip("JobNotStarted", "Job not started")
        );
    }

    #[test]
    fn pvc_rules() {
        let pvc = |status: Value| run(&obj("v1", "PersistentVolumeClaim", json!({}), status));
        assert_eq!(pvc(json!({"phase": "Bound"})), current("PVC is Bound"));
        assert_eq!(
            pvc(json!({"phase": "Pending"})),
            ip("NotBound", "PVC is not Bound. phase: Pending")
        );
        assert_eq!(
            pvc(json!({})),
            ip("NotBound", "PVC is not Bound. phase: unknown")
        );
    }

    #[test]
    fn service_rules() {
        let svc = |spec: Value| run(&obj("v1", "Service", spec, json!({})));
        assert_eq!(
            svc(json!({"type": "LoadBalancer"})),
            ip(
                "NoIPAssigned",
                "ClusterIP not set. Service type: LoadBalancer"
            )
        );
        assert_eq!(
            svc(json!({"type": "LoadBalancer", "clusterIP": "10.0.0.1"})),
            current("Service is ready")
        );
        assert_eq!(svc(json!({})), current("Service is ready"));
    }

    #[test]
    fn crd_rules() {
        let crd = |conds: Value| {
            run(&obj(
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                json!({}),
                json!({"conditions": conds}),
            ))
        };
        assert_eq!(
            crd(
                json!([{"type": "NamesAccepted", "status": "False", "reason": "MultipleNamesNotAllowed", "message": "taken"}])
            ),
            failed("MultipleNamesNotAllowed", "taken")
        );
        assert_eq!(
            crd(
                json!([{"type": "Established", "status": "False", "reason": "Broken", "message": "no"}])
            ),
            failed("Broken", "no")
        );
        assert_eq!(
            crd(json!([{"type": "Established", "status": "False", "reason": "Installing"}])),
            ip("Installing", "Install in progress")
        );
        assert_eq!(
            crd(json!([{"type": "Established", "status": "True"}])),
            current("CRD is established")
        );
        assert_eq!(crd(json!([])), ip("Installing", "Install in progress"));
    }

    #[test]
    fn always_current_kinds() {
        for (api, kind, msg) in [
            ("v1", "ConfigMap", "Resource is always ready"),
            ("v1", "Secret", "Resource is always ready"),
            ("batch/v1", "CronJob", "Resource is always ready"),
            (
                "policy/v1",
                "PodDisruptionBudget",
                "AllowedDisruptions has been computed.",
            ),
        ] {
            let v = json!({"apiVersion": api, "kind": kind,
                "status": {"conditions": [{"type": "Ready", "status": "False"}]}});
            assert_eq!(run(&v), current(msg), "{kind}");
        }
    }

    #[test]
    fn rules_match_on_group_not_version() {
        // A Deployment in another group is an unknown kind: Ready decides, else current.
        let v = obj(
            "example.com/v1",
            "Deployment",
            json!({"replicas": 3}),
            json!({}),
        );
        assert_eq!(run(&v), current("Resource is current"));
    }
}
