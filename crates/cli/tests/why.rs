//! `converge why`: the chain behind a field's value, one hop per line with the root last, as
//! JSON, on every scenario, and the bad-input errors (exit 2).

mod common;

use std::path::PathBuf;

use common::converge;
use converge_core::json::Value;

fn scenario(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/scenarios")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// scale-up, worked from `converge run tests/scenarios/scale-up.yaml`: alice's patch (line 88)
/// is delivered to the Deployment controller (line 90), which scales the ReplicaSet (line 91);
/// the ReplicaSet controller creates pod web-5cc4fd5dc8-k7zrq (line 98), the scheduler binds it
/// (line 111), kubelet/node-2 starts it (lines 156, 172, 194: requeues after 1.442s, 300ms,
/// 200ms, the last marking it Ready), the ReplicaSet controller counts it (line 200) and the
/// Deployment controller copies readyReplicas 3 (line 203), unchanged up to 30s. (Line numbers
/// and resourceVersions of that trace; `rv_shift` maps the latter to a set-up that writes more.)
#[test]
fn why_prints_one_hop_per_line_with_the_root_last() {
    let dr = rv_shift(&scenario("scale-up.yaml"), 42);
    let rv = |n: u64| n + dr;
    let trace = converge(&["run", &scenario("scale-up.yaml")]).stdout;
    let trace: Vec<&str> = trace.lines().collect();
    // The trace line (from 1) a hop's text names last: `(line N, ...` or `line N)`.
    let named = |hop: &str| -> String {
        let n = hop
            .rsplit("line ")
            .next()
            .and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|t| t.parse::<usize>().ok())
            .expect("a line number");
        trace[n - 1].to_owned()
    };
    let run = converge(&[
        "why",
        &scenario("scale-up.yaml"),
        "deployments/default/web",
        "status.readyReplicas",
        "--at",
        "30s",
    ]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "deployments default/web status.readyReplicas = 3 at t=30.000s"
    );
    let starts: Vec<String> = lines[1..]
        .iter()
        .map(|l| l.split(" (").next().unwrap_or("").to_owned())
        .collect();
    let dc = "system:serviceaccount:kube-system:deployment-controller";
    let rsc = "system:serviceaccount:kube-system:replicaset-controller";
    let pod = "default/web-5cc4fd5dc8-k7zrq";
    assert_eq!(
        starts,
        [
            format!("t=11.972s update deployments/status default/web 200 by {dc}"),
            format!("t=11.972s deployment-controller reconcile default/web, queued by watch MODIFIED replicasets default/web-5cc4fd5dc8 rv={} at t=11.972s", rv(97)),
            format!("t=11.967s update replicasets/status default/web-5cc4fd5dc8 200 by {rsc}"),
            format!("t=11.967s replicaset-controller reconcile default/web-5cc4fd5dc8, queued by watch MODIFIED pods {pod} rv={} at t=11.967s", rv(96)),
            format!("t=11.962s patch pods/status {pod} 200 by system:node:node-2"),
            format!("t=11.962s kubelet/node-2 reconcile {pod}, queued by requeue after 200ms asked at t=11.762s"),
            format!("t=11.762s kubelet/node-2 reconcile {pod}, queued by requeue after 300ms asked at t=11.462s"),
            format!("t=11.462s kubelet/node-2 reconcile {pod}, queued by requeue after 1.442s asked at t=10.020s"),
            format!("t=10.020s kubelet/node-2 reconcile {pod}, queued by watch MODIFIED pods {pod} rv={} at t=10.020s", rv(74)),
            format!("t=10.015s create bindings {pod} 201 by system:kube-scheduler -> MODIFIED pods {pod}"),
            format!("t=10.015s scheduler reconcile {pod}, queued by watch ADDED pods {pod} rv={} at t=10.015s", rv(68)),
            format!("t=10.010s create pods {pod} 201 by {rsc}"),
            format!("t=10.010s replicaset-controller reconcile default/web-5cc4fd5dc8, queued by watch MODIFIED replicasets default/web-5cc4fd5dc8 rv={} at t=10.010s", rv(65)),
            format!("t=10.005s update replicasets default/web-5cc4fd5dc8 200 by {dc}"),
            format!("t=10.005s deployment-controller reconcile default/web, queued by watch MODIFIED deployments default/web rv={} at t=10.005s", rv(64)),
            "t=10.000s patch deployments default/web 200 by alice".into(),
            "t=10.000s root: request by alice".into(),
        ]
    );
    let root = lines.last().copied().unwrap_or("");
    assert!(
        root.starts_with("t=10.000s root: request by alice (input 2, line "),
        "{root}"
    );
    assert!(named(root).ends_with("user:alice request -> patch deployments default/web 200"));
    let setter = lines[1].split("; decided").next().unwrap_or("");
    assert!(
        named(setter).contains(
            "deployment-controller reconcile default/web -> update deployments/status default/web 200"
        ),
        "{setter}"
    );
    assert!(lines[1].ends_with("); decided Available=True: availableReplicas 3 >= minAvailable 3 (replicas 3 - maxUnavailable 0, 25% of 3 rounded down)"), "{}", lines[1]);
}

#[test]
fn why_json_is_the_chain_as_data() {
    let run = converge(&[
        "why",
        &scenario("scale-up.yaml"),
        "deployments/default/web",
        "status.readyReplicas",
        "--at",
        "30s",
        "--json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let chain: Value = serde_json::from_str(&run.stdout).expect("one JSON document");
    assert_eq!(chain["value"], 3);
    assert_eq!(chain["at"], 30_000);
    assert_eq!(chain["root"]["root"], "request");
    assert_eq!(chain["root"]["principal"], "alice");
    let hops = chain["hops"].as_array().expect("hops");
    assert_eq!(hops.len(), 16);
    assert_eq!(hops[0]["hop"], "write");
    let trace = converge(&["run", &scenario("scale-up.yaml")]).stdout;
    let line = hops[0]["write"]["line"].as_u64().expect("a line") as usize;
    assert!(
        trace.lines().nth(line).is_some_and(|l| {
            l.contains("deployment-controller reconcile default/web -> update deployments/status")
        }),
        "line {line}"
    );
    assert_eq!(hops[1]["hop"], "reconcile");
    assert_eq!(hops[1]["causes"][0]["cause"], "watch");
    assert_eq!(hops[1]["controller"], "deployment-controller");
}

/// Every object a scenario names in `objects` has a chain for its name, in every scenario.
#[test]
fn why_answers_on_every_scenario() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/scenarios")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 12);
    for file in files {
        let path = file.to_string_lossy().into_owned();
        let run = converge(&["run", &path, "--json"]);
        let doc: Value = serde_json::from_str(&run.stdout).expect("run --json");
        let first = doc["objects"]
            .as_array()
            .expect("objects")
            .iter()
            .find(|o| o["metadata"]["namespace"] == "default" && o["kind"] != "Event")
            .expect("a namespaced object");
        let plural = format!("{}s", first["kind"].as_str().unwrap_or("").to_lowercase());
        let name = first["metadata"]["name"].as_str().unwrap_or("");
        let target = format!("{plural}/default/{name}");
        let why = converge(&["why", &path, &target, "metadata.name"]);
        assert_eq!(why.code, 0, "{path} {target}: {}", why.stderr);
        let last = why.stdout.lines().last().unwrap_or("");
        assert!(last.contains("root: "), "{path}: {last}");
    }
}

/// How far the resourceVersions of `converge run FILE` are shifted from the trace read by hand
/// by a cluster set-up that writes more (a new built-in controller's RBAC): the hand-read trace
/// created the Deployment web as resourceVersion `rv`. (Line numbers are checked by content:
/// a new controller's watch lines move them.)
fn rv_shift(file: &str, rv: u64) -> u64 {
    let run = converge(&["run", file]);
    let delivered = run
        .stdout
        .lines()
        .find_map(|l| {
            l.split_once("deployment-controller watch ADDED deployments default/web rv=")
                .and_then(|(_, r)| r.split_whitespace().next())
                .and_then(|r| r.parse::<u64>().ok())
        })
        .expect("its delivery");
    delivered - rv
}

fn assert_usage_error(args: &[&str], line: &str) {
    let run = converge(args);
    assert_eq!(run.stdout, "", "stdout");
    assert_eq!(run.stderr, format!("{line}\n"), "stderr");
    assert_eq!(run.code, 2, "exit code");
}

#[test]
fn bad_targets_fields_and_times_are_usage_errors_that_name_them() {
    let file = scenario("scale-up.yaml");
    let name = file.as_str();
    assert_usage_error(
        &[
            "why",
            name,
            "deployments/default/nope",
            "status.readyReplicas",
        ],
        &format!("converge: {name}: deployments default/nope does not exist at t=40.000s"),
    );
    assert_usage_error(
        &["why", name, "widgets/default/web", "status.readyReplicas"],
        &format!(
            "converge: {name}: unknown resource \"widgets\" in target \"widgets/default/web\""
        ),
    );
    assert_usage_error(
        &["why", name, "deployments/default/web", "status..x"],
        "converge: malformed path \"status..x\": empty segment",
    );
    assert_usage_error(
        &["why", name, "deployments/default/web", "status.nothing"],
        &format!(
            "converge: {name}: status.nothing is not set on deployments default/web at t=40.000s"
        ),
    );
    let run = converge(&[
        "why",
        name,
        "deployments/default/web",
        "status.replicas",
        "--at",
        "soon",
    ]);
    assert_eq!((run.code, run.stdout.as_str()), (2, ""));
    assert!(
        run.stderr
            .starts_with("converge: invalid value 'soon' for '--at <DURATION>'"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}
