//! `converge status`: every kstatus per-kind rule, through the built binary, against golden
//! output files (`tests/fixtures/kstatus/<name>.expected.jsonl`, one JSON line per object).
//! `UPDATE_FIXTURES=1 cargo test -p converge-cli` rewrites the golden files.

mod common;

use common::{converge, converge_with_stdin, fixture};

/// Time-dependent rules (the Pod's 15 s unschedulable window) are judged at this instant.
const NOW: &str = "2025-01-01T00:01:00Z";

fn check_golden(input: &str) {
    let path = fixture(&format!("kstatus/{input}"));
    let path = path.to_str().expect("fixture paths are UTF-8");
    let run = converge(&["status", "--now", NOW, path]);
    assert_eq!(run.stderr, "", "{input}: stderr");
    assert_eq!(run.code, 0, "{input}: exit code");
    let stem = input.rsplit_once('.').map_or(input, |(s, _)| s);
    let golden = fixture(&format!("kstatus/{stem}.expected.jsonl"));
    if std::env::var_os("UPDATE_FIXTURES").is_some() {
        std::fs::write(&golden, &run.stdout).expect("golden file is writable");
        return;
    }
    let expected = std::fs::read_to_string(&golden).expect("golden file exists");
    for (i, (got, want)) in run.stdout.lines().zip(expected.lines()).enumerate() {
        assert_eq!(got, want, "{input}: object {}", i + 1);
    }
    assert_eq!(
        run.stdout.lines().count(),
        expected.lines().count(),
        "{input}: number of objects"
    );
}

#[test]
fn generic_checks_run_first() {
    check_golden("generic.yaml");
}

#[test]
fn deployment_rules() {
    check_golden("deployment.yaml");
}

#[test]
fn replica_set_rules() {
    check_golden("replicaset.yaml");
}

#[test]
fn stateful_set_rules() {
    check_golden("statefulset.yaml");
}

#[test]
fn daemon_set_rules() {
    check_golden("daemonset.yaml");
}

#[test]
fn pod_rules_including_the_unschedulable_window() {
    check_golden("pod.yaml");
}

#[test]
fn job_rules() {
    check_golden("job.yaml");
}

#[test]
fn pvc_rules() {
    check_golden("pvc.yaml");
}

#[test]
fn service_rules() {
    check_golden("service.yaml");
}

#[test]
fn crd_rules() {
    check_golden("crd.yaml");
}

#[test]
fn always_current_kinds() {
    check_golden("always-current.yaml");
}

#[test]
fn unknown_kinds_use_ready() {
    check_golden("unknown-kinds.yaml");
}

#[test]
fn a_json_list_is_flattened() {
    check_golden("list.json");
}

#[test]
fn the_output_line_has_the_documented_shape() {
    let run = converge_with_stdin(
        &["status", "--now", NOW, "-"],
        Some(b"apiVersion: v1\nkind: Service\nmetadata: {name: lb, namespace: shop}\nspec: {type: LoadBalancer}\n"),
    );
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout,
        "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"namespace\":\"shop\",\"name\":\"lb\",\
         \"status\":\"InProgress\",\"message\":\"ClusterIP not set. Service type: LoadBalancer\",\
         \"conditions\":[{\"type\":\"Reconciling\",\"status\":\"True\",\"reason\":\"NoIPAssigned\",\
         \"message\":\"ClusterIP not set. Service type: LoadBalancer\"}]}\n"
    );
}

#[test]
fn now_decides_the_pod_unschedulable_window() {
    let pod = b"apiVersion: v1\nkind: Pod\nmetadata: {name: p, creationTimestamp: \"2025-01-01T00:00:00Z\"}\n\
status:\n  phase: Pending\n  conditions: [{type: PodScheduled, status: \"False\", reason: Unschedulable}]\n";
    let at = |now: &str| {
        let run = converge_with_stdin(&["status", "--now", now, "-"], Some(pod));
        assert_eq!(run.code, 0, "{}", run.stderr);
        let line: converge_core::json::Value =
            serde_json::from_str(&run.stdout).expect("one JSON line");
        line["status"].as_str().unwrap_or_default().to_string()
    };
    assert_eq!(at("2025-01-01T00:00:14Z"), "InProgress");
    assert_eq!(at("2025-01-01T00:00:14.999Z"), "InProgress");
    assert_eq!(at("2025-01-01T00:00:15Z"), "Failed");
    assert_eq!(at("2025-01-01T01:00:15+01:00"), "Failed");
}

#[test]
fn several_files_print_in_order() {
    let a = fixture("kstatus/pvc.yaml");
    let b = fixture("kstatus/service.yaml");
    let run = converge(&[
        "status",
        a.to_str().expect("UTF-8"),
        b.to_str().expect("UTF-8"),
    ]);
    assert_eq!(run.code, 0);
    let names: Vec<String> = run
        .stdout
        .lines()
        .map(|l| {
            let v: converge_core::json::Value = serde_json::from_str(l).expect("JSON line");
            v["name"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    assert_eq!(
        names,
        [
            "bound",
            "pending",
            "no-phase",
            "load-balancer-without-ip",
            "load-balancer-with-ip",
            "cluster-ip"
        ]
    );
}

#[test]
fn the_default_now_is_the_current_time() {
    // Created in 2025 and unschedulable ever since: long past the window by any real clock.
    let pod = b"apiVersion: v1\nkind: Pod\nmetadata: {name: p, creationTimestamp: \"2025-01-01T00:00:00Z\"}\n\
status:\n  phase: Pending\n  conditions: [{type: PodScheduled, status: \"False\", reason: Unschedulable}]\n";
    let run = converge_with_stdin(&["status", "-"], Some(pod));
    assert!(
        run.stdout.contains("\"status\":\"Failed\""),
        "{}",
        run.stdout
    );
}
