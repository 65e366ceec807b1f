//! `converge rollout-status`: every `kubectl rollout status` message and error, through the
//! built binary. Done exits 0, in progress 3, kubectl's errors 1 with `error: …` on stderr.

mod common;

use common::{converge, converge_with_stdin, fixture};

/// Runs rollout-status on `tests/fixtures/rollout/<file>` and checks stdout, stderr and exit code.
fn check(file: &str, extra: &[&str], stdout: &str, stderr: &str, code: i32) {
    let path = fixture(&format!("rollout/{file}"));
    let mut args = vec!["rollout-status", path.to_str().expect("UTF-8 path")];
    args.extend_from_slice(extra);
    let run = converge(&args);
    assert_eq!(run.stdout, stdout, "{file}: stdout");
    assert_eq!(run.stderr, stderr, "{file}: stderr");
    assert_eq!(run.code, code, "{file}: exit code");
}

const IN_PROGRESS: i32 = 3;

#[test]
fn deployment_waits_for_the_spec_update_to_be_observed() {
    check(
        "deployment-spec-not-observed.yaml",
        &[],
        "Waiting for deployment spec update to be observed...\n",
        "",
        IN_PROGRESS,
    );
}

#[test]
fn deployment_progress_deadline_exceeded_is_an_error() {
    check(
        "deployment-progress-deadline-exceeded.yaml",
        &[],
        "",
        "error: deployment \"web\" exceeded its progress deadline\n",
        1,
    );
}

#[test]
fn deployment_new_replicas_being_updated() {
    check(
        "deployment-updating.yaml",
        &[],
        "Waiting for deployment \"web\" rollout to finish: 1 out of 3 new replicas have been updated...\n",
        "",
        IN_PROGRESS,
    );
}

#[test]
fn deployment_old_replicas_pending_termination() {
    check(
        "deployment-old-replicas-terminating.yaml",
        &[],
        "Waiting for deployment \"web\" rollout to finish: 2 old replicas are pending termination...\n",
        "",
        IN_PROGRESS,
    );
}

#[test]
fn deployment_updated_replicas_not_yet_available() {
    check(
        "deployment-updated-not-available.yaml",
        &[],
        "Waiting for deployment \"web\" rollout to finish: 1 of 3 updated replicas are available...\n",
        "",
        IN_PROGRESS,
    );
}

#[test]
fn deployment_successfully_rolled_out() {
    check(
        "deployment-rolled-out.yaml",
        &[],
        "deployment \"web\" successfully rolled out\n",
        "",
        0,
    );
    check(
        "deployment-rolled-out.yaml",
        &["--revision", "3"],
        "deployment \"web\" successfully rolled out\n",
        "",
        0,
    );
}

#[test]
fn deployment_revision_mismatch_is_an_error() {
    check(
        "deployment-rolled-out.yaml",
        &["--revision", "2"],
        "",
        "error: desired revision (2) is different from the running revision (3)\n",
        1,
    );
    check(
        "deployment-updating.yaml",
        &["--revision", "1"],
        "",
        "error: desired revision (1) is different from the running revision (0)\n",
        1,
    );
}

#[test]
fn deployment_unparseable_revision_annotation_is_an_error() {
    check(
        "deployment-bad-revision-annotation.yaml",
        &["--revision", "1"],
        "",
        "error: cannot get the revision of deployment \"web\": strconv.ParseInt: parsing \"three\": invalid syntax\n",
        1,
    );
}

#[test]
fn a_negative_revision_is_refused_as_kubectl_does() {
    check(
        "deployment-rolled-out.yaml",
        &["--revision", "-1"],
        "",
        "error: revision must be a positive integer: -1\n",
        1,
    );
}

#[test]
fn daemon_set_on_delete_has_no_rollout_status() {
    check(
        "daemonset-on-delete.yaml",
        &[],
        "",
        "error: rollout status is only available for RollingUpdate strategy type\n",
        1,
    );
}

#[test]
fn daemon_set_waits_for_the_spec_update_to_be_observed() {
    check(
        "daemonset-spec-not-observed.yaml",
        &[],
        "Waiting for daemon set spec update to be observed...\n",
        "",
        IN_PROGRESS,
    );
}

#[test]
fn daemon_set_new_pods_being_updated() {
    check(
        "daemonset-updating.yaml",
        &[],
        "Waiting for daemon set \"agent\" rollout to finish: 1 out of 3 new pods have been updated...\n",
        "",
        IN_PROGRESS,
    );
}

#[test]
fn daemon_set_updated_pods_not_yet_available() {
    check(
        "daemonset-updated-not-available.yaml",
        &[],
        "Waiting for daemon set \"agent\" rollout to finish: 2 of 3 updated pods are available...\n",
        "",
        IN_PROGRESS,
    );
}

#[test]
fn daemon_set_successfully_rolled_out() {
    check(
        "daemonset-rolled-out.yaml",
        &[],
        "daemon set \"agent\" successfully rolled out\n",
        "",
        0,
    );
}

#[test]
fn stateful_set_on_delete_has_no_rollout_status() {
    check(
        "statefulset-on-delete.yaml",
        &[],
        "",
        "error: rollout status is only available for RollingUpdate strategy type\n",
        1,
    );
}

#[test]
fn stateful_set_waits_for_the_spec_update_to_be_observed() {
    check(
        "statefulset-spec-not-observed.yaml",
        &[],
        "Waiting for statefulset spec update to be observed...\n",
        "",
        IN_PROGRESS,
    );
}

#[test]
fn stateful_set_waits_for_pods_to_be_ready() {
    check(
        "statefulset-pods-not-ready.yaml",
        &[],
        "Waiting for 2 pods to be ready...\n",
        "",
        IN_PROGRESS,
    );
}

#[test]
fn stateful_set_partitioned_roll_out() {
    check(
        "statefulset-partition-updating.yaml",
        &[],
        "Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...\n",
        "",
        IN_PROGRESS,
    );
    check(
        "statefulset-partition-complete.yaml",
        &[],
        "partitioned roll out complete: 2 new pods have been updated...\n",
        "",
        0,
    );
    check(
        "statefulset-defaulted-strategy.yaml",
        &[],
        "partitioned roll out complete: 3 new pods have been updated...\n",
        "",
        0,
    );
}

#[test]
fn stateful_set_rolling_update_by_revision() {
    check(
        "statefulset-revision-updating.yaml",
        &[],
        "waiting for statefulset rolling update to complete 1 pods at revision db-7c9b...\n",
        "",
        IN_PROGRESS,
    );
    check(
        "statefulset-revision-complete.yaml",
        &[],
        "statefulset rolling update complete 3 pods at revision db-7c9b...\n",
        "",
        0,
    );
}

#[test]
fn other_kinds_have_no_status_viewer() {
    check(
        "replicaset.yaml",
        &[],
        "",
        "error: no status viewer has been implemented for ReplicaSet.apps\n",
        1,
    );
}

#[test]
fn several_objects_are_refused_as_kubectl_does() {
    check(
        "two-deployments.yaml",
        &[],
        "",
        "error: rollout status is only supported on individual resources and resource collections are not supported yet\n",
        1,
    );
}

#[test]
fn stdin_is_read_for_a_dash() {
    let run = converge_with_stdin(
        &["rollout-status", "-"],
        Some(br#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"api","generation":1},"status":{"observedGeneration":1}}"#),
    );
    assert_eq!(
        run.stdout,
        "Waiting for deployment \"api\" rollout to finish: 0 out of 1 new replicas have been updated...\n"
    );
    assert_eq!(run.code, IN_PROGRESS);
}
