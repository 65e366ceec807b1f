//! `converge run` and `converge check` over the scenarios in tests/scenarios and the fixtures in
//! tests/fixtures/scenarios: output shape, PASS/FAIL lines, exit codes, bad input.

mod common;

use std::path::PathBuf;

use common::{converge, converge_with_stdin, fixture};
use converge_core::json::Value;

fn scenarios_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/scenarios")
}

fn scenario(name: &str) -> String {
    scenarios_dir().join(name).to_string_lossy().into_owned()
}

fn all_scenarios() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(scenarios_dir())
        .expect("tests/scenarios exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "json"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    files.sort();
    files
}

/// Writes `text` to a fresh file under the target directory and returns its path.
fn temp_file(name: &str, text: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("scenario-inputs");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write temp file");
    path.to_string_lossy().into_owned()
}

fn assert_one_line_error(run: &common::Run, starts_with: &str, contains: &str) {
    assert_eq!(run.code, 1, "exit code; stderr: {}", run.stderr);
    assert_eq!(
        run.stderr.lines().count(),
        1,
        "one line on stderr: {:?}",
        run.stderr
    );
    assert!(
        run.stderr.starts_with(starts_with),
        "stderr {:?} should start with {starts_with:?}",
        run.stderr
    );
    assert!(
        run.stderr.contains(contains),
        "stderr {:?} should contain {contains:?}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "no panic");
}

#[test]
fn every_scenario_in_tests_scenarios_passes_check() {
    let files = all_scenarios();
    assert!(
        files.len() >= 8,
        "at least eight scenarios, found {}",
        files.len()
    );
    let args: Vec<&str> = std::iter::once("check")
        .chain(files.iter().map(String::as_str))
        .collect();
    let run = converge(&args);
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(!run.stdout.contains("FAIL"), "{}", run.stdout);
    for f in &files {
        assert!(
            run.stdout.contains(&format!("PASS {f}: ")),
            "{f} has PASS lines"
        );
    }
    let last = run.stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("ok: ")
            && last.ends_with(&format!(" passed, 0 failed in {} scenarios", files.len())),
        "{last}"
    );
}

#[test]
fn check_prints_pass_lines_with_the_time_an_expectation_first_held() {
    let path = scenario("scale-up.yaml");
    let run = converge(&["check", &path]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains(&format!(
        "PASS {path}: deployments/default/web status.observedGeneration equals 2 within 1s after 10s (at t=10.005s)"
    )), "{}", run.stdout);
    assert!(run.stdout.contains(&format!(
        "PASS {path}: action scale (patch deployments/default/web as alice) answers 200 (at t=10.000s)"
    )));
    assert!(
        run.stdout
            .ends_with("ok: 17 passed, 0 failed in 1 scenario\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_deliberately_failing_scenario_fails_check_with_exit_1() {
    let path = fixture("scenarios/failing.yaml")
        .to_string_lossy()
        .into_owned();
    let run = converge(&["check", &path]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr, "");
    let expected = format!(
        "PASS {path}: deployments/default/web kstatus is Current within 10s (at t=1.863s)\n\
         FAIL {path}: deployments/default/web status.readyReplicas equals 4 within 20s after 5s: expected 4, got 3 (at t=25.000s)\n\
         FAIL {path}: action scale (patch deployments/default/web as alice) answers 403: expected 403, got 200 (at t=5.000s)\n\
         FAILED: 1 passed, 2 failed in 1 scenario\n"
    );
    assert_eq!(run.stdout, expected);
}

#[test]
fn check_fails_when_one_of_several_scenarios_fails() {
    let good = scenario("scale-down.yaml");
    let bad = fixture("scenarios/failing.yaml")
        .to_string_lossy()
        .into_owned();
    let run = converge(&["check", &good, &bad]);
    assert_eq!(run.code, 1);
    assert!(run
        .stdout
        .lines()
        .last()
        .unwrap_or_default()
        .starts_with("FAILED: "));
    assert!(run
        .stdout
        .lines()
        .last()
        .unwrap_or_default()
        .ends_with(" failed in 2 scenarios"));
}

#[test]
fn run_prints_the_trace_one_line_per_event() {
    let run = converge(&["run", &scenario("scale-up.yaml")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(lines.len() > 50);
    assert!(
        lines.iter().all(|l| l.starts_with("t=")),
        "every line starts with the time"
    );
    assert!(lines.contains(&"t=0.000s user:admin request -> create deployments default/web 201"));
    assert!(lines.contains(&"t=10.000s user:alice request -> patch deployments default/web 200"));
    assert!(lines
        .iter()
        .any(|l| l.contains("deployment-controller reconcile default/web")));
}

#[test]
fn run_is_deterministic_and_the_seed_is_honoured() {
    let path = scenario("rolling-update.yaml");
    let a = converge(&["run", &path]);
    let b = converge(&["run", &path]);
    assert_eq!(a.stdout, b.stdout);
    let c = converge(&["run", "--seed", "42", &path]);
    assert_eq!(c.code, 0);
    assert_ne!(
        a.stdout, c.stdout,
        "another seed gives other pod names and timings"
    );
}

#[test]
fn run_json_is_one_document_with_time_objects_audit_and_events() {
    let run = converge(&["run", "--json", &scenario("status-spoofing.yaml")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.lines().count(), 1);
    let doc: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let keys: Vec<&str> = doc
        .as_object()
        .expect("object")
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(keys, ["time_ms", "objects", "audit", "events"]);
    assert_eq!(doc["time_ms"], 20_000);
    let objects = doc["objects"].as_array().expect("objects");
    assert!(objects
        .iter()
        .any(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == "web"));
    let audit = doc["audit"].as_array().expect("audit");
    let spoof = audit
        .iter()
        .find(|a| a["principal"] == "app" && a["subresource"] == "status")
        .expect("the spoof is audited");
    assert_eq!(spoof["verb"], "patch");
    assert_eq!(spoof["resource"], "deployments");
    assert_eq!(spoof["name"], "web");
    assert_eq!(spoof["code"], 403);
    assert_eq!(
        spoof["message"],
        "deployments.apps \"web\" is forbidden: User \"app\" cannot patch resource \"deployments/status\" in API group \"apps\" in the namespace \"default\""
    );
    for a in audit {
        for k in [
            "time_ms",
            "principal",
            "verb",
            "resource",
            "subresource",
            "namespace",
            "name",
            "code",
            "message",
        ] {
            assert!(a.get(k).is_some(), "audit entry has {k}: {a}");
        }
    }
    let events = doc["events"].as_array().expect("events");
    assert!(events
        .iter()
        .all(|e| e["line"].is_string() && e["time_ms"].is_u64()));
}

#[test]
fn run_until_a_duration_stops_at_that_time() {
    let run = converge(&[
        "run",
        "--json",
        "--until",
        "1500ms",
        &scenario("scale-up.yaml"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(doc["time_ms"], 1500);
    let events = doc["events"].as_array().expect("events");
    assert!(events
        .iter()
        .all(|e| e["time_ms"].as_u64().unwrap_or(0) <= 1500));
    let text = converge(&["run", "--until", "2s", &scenario("scale-up.yaml")]);
    assert!(
        !text.stdout.contains("t=10.000s"),
        "the scale-up at 10s is not reached"
    );
}

#[test]
fn run_reads_a_scenario_from_stdin() {
    let text = std::fs::read(scenario("scale-down.yaml")).expect("read");
    let run = converge_with_stdin(&["run", "--until", "1s", "-"], Some(&text));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("t=0.000s "));
}

#[test]
fn a_json_scenario_runs_like_a_yaml_one() {
    let path = temp_file(
        "tiny.json",
        r#"{"apiVersion": "converge.dev/v1", "kind": "Scenario", "name": "tiny",
  "objects": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}],
  "expect": [{"target": "configmaps/default/c", "at": "1s", "field": "data.a", "equals": "1"}]}"#,
    );
    let run = converge(&["check", &path]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run
        .stdout
        .contains("configmaps/default/c data.a equals \"1\" at 1s (at t=1.000s)"));
}

// ---- bad input ------------------------------------------------------------------------------

#[test]
fn a_missing_scenario_file() {
    assert_one_line_error(
        &converge(&["run", "no-such.yaml"]),
        "converge: no-such.yaml: no such file or directory",
        "",
    );
    assert_one_line_error(
        &converge(&["check", "no-such.yaml"]),
        "converge: no-such.yaml: no such file or directory",
        "",
    );
}

#[test]
fn check_without_files_is_a_usage_error() {
    let run = converge(&["check"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "converge: the following required arguments were not provided: <SCENARIO>... (see 'converge --help')\n"
    );
}

#[test]
fn malformed_yaml_is_reported_at_its_line_and_column() {
    let path = temp_file(
        "bad-syntax.yaml",
        "apiVersion: converge.dev/v1\nkind: Scenario\nname: x\nobjects:\n  - {apiVersion: v1, kind: ConfigMap\n",
    );
    assert_one_line_error(
        &converge(&["check", &path]),
        &format!("converge: {path}: line 6, column 1: "),
        "flow mapping",
    );
}

#[test]
fn malformed_json_is_reported_at_its_line_and_column() {
    let path = temp_file(
        "bad-syntax.json",
        "{\"apiVersion\": \"converge.dev/v1\",\n \"kind\": \"Scenario\", \"name\": \"x\",,}\n",
    );
    assert_one_line_error(
        &converge(&["run", &path]),
        &format!("converge: {path}: line 2, column "),
        "key must be a string",
    );
}

#[test]
fn an_unknown_field_is_named_with_its_line() {
    let path = temp_file(
        "unknown-field.yaml",
        "apiVersion: converge.dev/v1\nkind: Scenario\nname: x\nactions:\n  - at: 1s\n    verb: get\n    target: deployments/default/web\n    principle: bob\n",
    );
    assert_one_line_error(
        &converge(&["check", &path]),
        &format!("converge: {path}: line 8, column 5: "),
        "unknown field `principle`",
    );
}

#[test]
fn an_action_at_a_negative_time() {
    let path = temp_file(
        "negative.yaml",
        "apiVersion: converge.dev/v1\nkind: Scenario\nname: x\nactions:\n  - at: -5s\n    verb: get\n    target: deployments/default/web\n",
    );
    assert_one_line_error(
        &converge(&["run", &path]),
        &format!("converge: {path}: line 5, "),
        "negative time \"-5s\"",
    );
}

#[test]
fn an_unknown_verb() {
    let path = temp_file(
        "verb.yaml",
        "apiVersion: converge.dev/v1\nkind: Scenario\nname: x\nactions:\n  - at: 1s\n    verb: frobnicate\n    target: deployments/default/web\n",
    );
    assert_one_line_error(
        &converge(&["run", &path]),
        &format!("converge: {path}: line 6, "),
        "unknown variant `frobnicate`, expected one of `get`, `list`, `create`, `update`, `patch`, `delete`",
    );
}

#[test]
fn an_unknown_resource_in_a_target() {
    let path = temp_file(
        "resource.yaml",
        "apiVersion: converge.dev/v1\nkind: Scenario\nname: x\nactions:\n  - at: 1s\n    verb: get\n    target: deploymentz/default/web\n",
    );
    assert_one_line_error(
        &converge(&["run", &path]),
        &format!("converge: {path}: line 7, column 13: actions[0].target: unknown resource \"deploymentz\""),
        "",
    );
}

#[test]
fn a_target_that_does_not_exist() {
    let path = temp_file(
        "missing-target.yaml",
        "apiVersion: converge.dev/v1\nkind: Scenario\nname: x\nactions:\n  - at: 5s\n    verb: patch\n    target: deployments/default/nope\n    patch: {spec: {replicas: 2}}\n",
    );
    let run = converge(&["run", &path]);
    assert_one_line_error(
        &run,
        &format!("converge: {path}: actions[0]: the target of patch deployments/default/nope as alice does not exist: deployments.apps \"nope\" not found (at t=5.000s)"),
        "",
    );
    let check = converge(&["check", &path]);
    assert_eq!(check.code, 1);
    assert!(check.stdout.contains("FAIL "));
    assert_eq!(check.stderr.lines().count(), 1);
}

#[test]
fn a_malformed_field_path() {
    let path = temp_file(
        "path.yaml",
        "apiVersion: converge.dev/v1\nkind: Scenario\nname: x\nexpect:\n  - at: 1s\n    target: nodes/node-1\n    field: status..capacity\n    equals: 1\n",
    );
    assert_one_line_error(
        &converge(&["check", &path]),
        &format!("converge: {path}: line 7, column 12: expect[0].field: malformed path \"status..capacity\": empty segment"),
        "",
    );
}

#[test]
fn an_unsupported_version() {
    let path = temp_file(
        "v9.yaml",
        "apiVersion: converge.dev/v9\nkind: Scenario\nname: x\n",
    );
    assert_one_line_error(
        &converge(&["check", &path]),
        &format!("converge: {path}: line 1, column 13: apiVersion: unsupported version \"converge.dev/v9\": this converge reads converge.dev/v1"),
        "",
    );
}

#[test]
fn a_bad_until() {
    let run = converge(&["run", "--until", "soon", "x.yaml"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr.lines().count(), 1);
    assert!(
        run.stderr.contains("invalid duration \"soon\""),
        "{}",
        run.stderr
    );
}

#[test]
fn every_gallery_scenario_passes_check_including_its_lesson() {
    let gallery = converge_core::scenario::gallery::GALLERY;
    assert_eq!(gallery.len(), 14, "one scenario per idea of the model");
    let files: Vec<String> = gallery
        .iter()
        .map(|e| scenario(&format!("{}.yaml", e.id)))
        .collect();
    let args: Vec<&str> = std::iter::once("check")
        .chain(files.iter().map(String::as_str))
        .collect();
    let run = converge(&args);
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    for f in &files {
        let lesson_line = run
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("PASS {f}: lesson ")))
            .unwrap_or_else(|| panic!("no lesson line for {f}:\n{}", run.stdout));
        assert!(
            lesson_line.contains("the scenario's own inputs complete all"),
            "{lesson_line}"
        );
    }
}

#[test]
fn a_lesson_the_scenario_cannot_complete_fails_check_with_the_step_it_waits_for() {
    let text = std::fs::read_to_string(scenario("paused-controller.yaml")).expect("read");
    let broken = text.replace(
        "- {target: deployments/default/web, field: status.readyReplicas, equals: 3}",
        "- {target: deployments/default/web, field: status.readyReplicas, equals: 4}",
    );
    assert_ne!(broken, text, "the lesson's last predicate was edited");
    let path = temp_file("broken-lesson.yaml", &broken);
    let run = converge(&["check", &path]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!(
            "FAIL {path}: lesson \"observedGeneration\": the scenario's own inputs complete all 3 steps: expected all 3 steps, got stuck at step 3 of 3, waiting for deployments/default/web status.observedGeneration equals 2 and deployments/default/web status.readyReplicas equals 4"
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn run_on_plain_manifests_creates_them_as_admin_and_runs_until_converged() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/kubectl/nginx-deployment.yaml")
        .to_string_lossy()
        .into_owned();
    let run = converge(&["run", &manifest]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(
        run.stdout
            .contains("user:admin request -> create deployments nginx-deployment 201"),
        "{}",
        run.stdout
    );
    let pods_running = run
        .stdout
        .lines()
        .filter(|l| {
            l.contains("patch pods/status default/nginx-deployment-") && l.ends_with(" 200")
        })
        .count();
    assert!(pods_running >= 3, "{}", run.stdout);
    // A List of two objects, one of which the API server refuses, is one error naming it.
    let list = temp_file(
        "refused-list.yaml",
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: ok}\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: Bad_Name}\n  spec: {}\n",
    );
    let refused = converge(&["run", &list]);
    assert_eq!(refused.code, 1, "stdout: {}", refused.stdout);
    assert!(refused.stderr.contains("Bad_Name"), "{}", refused.stderr);
}
