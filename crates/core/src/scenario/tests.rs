//! Unit tests of the scenario format (round trip, unknown fields, versions, validation) and the
//! runner's expectation evaluation, plus a mutation test: every expectation of every scenario
//! in tests/scenarios fails when its expected value is changed.

use crate::json::{json, Value};

use super::format::Duration;
use super::predicates::{evaluate, Check};
use super::*;
use crate::time::SimTime;

const SCALE_UP: &str = include_str!("../../../../tests/scenarios/scale-up.yaml");

fn scenario_files() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scenarios");
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), text)
        })
        .collect();
    files.sort();
    files
}

fn header(rest: &str) -> String {
    format!("apiVersion: converge.dev/v1\nkind: Scenario\nname: t\n{rest}")
}

fn load_err(text: &str) -> ScenarioError {
    Scenario::load(text).unwrap_err()
}

const WEB: &str = "objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: default}
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: app, image: nginx}]}
";

// ---- format ---------------------------------------------------------------------------------

#[test]
fn a_scenario_round_trips_through_yaml_and_json() {
    let s = Scenario::load(SCALE_UP).unwrap();
    assert_eq!(s.name, "scale-up");
    assert_eq!(s.actions[0].at, Duration(10_000));
    assert_eq!(Scenario::load(&s.to_yaml()).unwrap(), s);
    assert_eq!(Scenario::load(&s.to_json()).unwrap(), s);
}

#[test]
fn every_scenario_file_round_trips() {
    for (name, text) in scenario_files() {
        let s = Scenario::load(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(Scenario::load(&s.to_yaml()).unwrap(), s, "{name}");
    }
}

#[test]
fn defaults_fill_in_the_cluster_seed_and_principal() {
    let s = Scenario::load(&header(
        "actions:\n  - {at: 1s, verb: get, target: nodes/node-1}\n",
    ))
    .unwrap();
    assert_eq!(s.seed, 1);
    assert_eq!(s.cluster.nodes.len(), 3);
    assert_eq!(s.actions[0].principal, "alice");
    assert_eq!(s.until, None);
}

#[test]
fn an_unknown_top_level_field_is_named_at_its_line() {
    let e = load_err(&header("descripton: typo\n"));
    assert_eq!(e.location.map(|l| l.line), Some(4));
    assert!(e.message.contains("unknown field `descripton`"), "{e}");
}

#[test]
fn an_unknown_nested_field_is_named_at_its_line() {
    let e = load_err(&header(
        "cluster:\n  nodes:\n    - name: n\n      cpu: 1\n      memroy: 1Gi\n",
    ));
    assert_eq!(e.location.map(|l| l.line), Some(8), "{e}");
    assert!(e.to_string().contains("unknown field `memroy`"), "{e}");
}

#[test]
fn an_unknown_field_in_json_is_named_at_its_line() {
    let e = load_err(
        "{\"apiVersion\": \"converge.dev/v1\", \"kind\": \"Scenario\",\n \"name\": \"t\",\n \"sed\": 3}",
    );
    assert_eq!(e.location.map(|l| l.line), Some(3));
    assert!(e.message.contains("unknown field `sed`"), "{e}");
}

#[test]
fn a_wrong_type_is_named_at_its_value_in_yaml_and_json_alike() {
    // YAML and JSON are read into the same typed format from the parsed value, so a number
    // where the format wants text is refused in both, at the value, with the field's path.
    let e = load_err(&header(
        "actions:\n  - id: 7\n    at: 1s\n    verb: get\n    target: nodes/node-1\n",
    ));
    assert_eq!(
        e.to_string(),
        "line 5, column 9: actions[0].id: invalid type: integer `7`, expected a string"
    );
    let e = load_err(
        "{\"apiVersion\": \"converge.dev/v1\", \"kind\": \"Scenario\",\n \"name\": \"t\",\n \"seed\": \"x\"}",
    );
    assert_eq!(e.path, "seed");
    assert_eq!(e.location.map(|l| l.line), Some(3), "{e}");
    assert!(
        e.message
            .contains("invalid type: string \"x\", expected u64"),
        "{e}"
    );
}

#[test]
fn an_unknown_field_with_a_line_break_stays_one_line() {
    let e = load_err(&header("\"de\\nscription\": typo\n"));
    assert_eq!(
        e.to_string(),
        "line 4, column 1: unknown field `de\\nscription`, expected one of `apiVersion`, `kind`, `name`, `description`, `seed`, `until`, `cluster`, `images`, `rbac`, `objects`, `faults`, `actions`, `expect`, `lesson`"
    );
}

#[test]
fn versions_are_checked_before_fields() {
    let e = load_err("apiVersion: converge.dev/v2\nkind: Scenario\nname: t\nnewField: 1\n");
    assert_eq!(
        e.to_string(),
        "line 1, column 13: apiVersion: unsupported version \"converge.dev/v2\": this converge reads converge.dev/v1"
    );
    let e = load_err("kind: Scenario\nname: t\n");
    assert!(e.message.starts_with("apiVersion is missing"), "{e}");
    let e = load_err("apiVersion: converge.dev/v1\nkind: Pod\nname: t\n");
    assert_eq!(e.path, "kind");
    assert!(SUPPORTED_VERSIONS.contains(&API_VERSION));
}

#[test]
fn a_file_holds_exactly_one_scenario() {
    let text = format!("{}---\n{}", header(""), header(""));
    assert!(load_err(&text).message.contains("one document, found 2"));
}

#[test]
fn durations_parse_and_print_canonically() {
    for (text, ms, canonical) in [
        ("0", 0, "0s"),
        ("1500ms", 1500, "1500ms"),
        ("1.5s", 1500, "1500ms"),
        ("30s", 30_000, "30s"),
        ("2m", 120_000, "2m"),
        ("1m30s", 90_000, "90s"),
        ("1h", 3_600_000, "60m"),
    ] {
        let d = Duration::parse(text).unwrap();
        assert_eq!(d.ms(), ms, "{text}");
        assert_eq!(d.to_string(), canonical, "{text}");
        assert_eq!(Duration::parse(canonical).unwrap(), d);
    }
    assert!(Duration::parse("25h").unwrap_err().contains("longer than"));
    assert_eq!(Duration::parse("24h").unwrap().ms(), super::format::MAX_MS);
    for bad in ["", "10", "5x", "s", "-1s", "1.2.3s", "ms", "99999999999h"] {
        assert!(Duration::parse(bad).is_err(), "{bad}");
    }
    assert!(Duration::parse("-1s")
        .unwrap_err()
        .contains("negative time"));
    assert_eq!(Until::parse("converged"), Ok(Until::Converged));
    assert_eq!(Until::parse("2m"), Ok(Until::Time(Duration(120_000))));
}

#[test]
fn negative_and_unitless_times_are_refused_at_their_line() {
    let e = load_err(&header("faults:\n  - at: -2s\n    crash: scheduler\n"));
    assert_eq!(e.location.map(|l| l.line), Some(5));
    assert!(e.message.contains("negative time \"-2s\""), "{e}");
    let e = load_err(&header("faults:\n  - at: -2\n    crash: scheduler\n"));
    assert!(e.message.contains("negative time -2"), "{e}");
    let e = load_err(&header("faults:\n  - at: 7\n    crash: scheduler\n"));
    assert!(e.message.contains("7 has no unit"), "{e}");
}

#[test]
fn semantic_errors_name_the_field_and_its_line() {
    let cases = [
        (
            "actions:\n  - at: 1s\n    verb: get\n    target: deploymentz/default/web\n",
            "actions[0].target",
            7,
            "unknown resource \"deploymentz\"",
        ),
        (
            "actions:\n  - at: 1s\n    verb: get\n    target: deployments/default\n",
            "actions[0].target",
            7,
            "get needs an object",
        ),
        (
            "actions:\n  - at: 1s\n    verb: get\n    target: deployments/default/web/status/x\n",
            "actions[0].target",
            7,
            "malformed target",
        ),
        (
            "actions:\n  - at: 1s\n    verb: patch\n    target: deployments/default/web\n",
            "actions[0].patch",
            5,
            "patch needs a patch",
        ),
        (
            "actions:\n  - at: 1s\n    verb: patch\n    patchType: json\n    target: deployments/default/web\n    patch: {spec: {}}\n",
            "actions[0].patch",
            9,
            "a JSON patch is a list of operations",
        ),
        (
            "actions:\n  - at: 1s\n    verb: update\n    target: deployments/default/web\n    bodyFrom: nobody\n",
            "actions[0].bodyFrom",
            8,
            "no earlier action has id \"nobody\"",
        ),
        (
            "faults:\n  - at: 1s\n    crash: scheduler\n    restart: scheduler\n",
            "faults[0]",
            5,
            "give one fault per entry, found crash and restart",
        ),
        (
            "faults:\n  - at: 1s\n    imagePullFailure: {node: node-9}\n",
            "faults[0].imagePullFailure.node",
            6,
            "unknown node \"node-9\"",
        ),
        (
            "faults:\n  - at: 1s\n    apiFailures: {count: 1, code: 418}\n",
            "faults[0].apiFailures.code",
            6,
            "418 is not an injectable failure",
        ),
        (
            "expect:\n  - at: 1s\n    target: deployments/default/web\n    field: spec..replicas\n    equals: 1\n",
            "expect[0].field",
            7,
            "malformed path \"spec..replicas\": empty segment",
        ),
        (
            "expect:\n  - at: 1s\n    within: 2s\n    target: deployments/default/web\n    kstatus: Current\n",
            "expect[0]",
            5,
            "give at or within, not both",
        ),
        (
            "expect:\n  - target: deployments/default/web\n    kstatus: Current\n",
            "expect[0]",
            5,
            "needs a time",
        ),
        (
            "expect:\n  - action: nope\n    code: 200\n",
            "expect[0].action",
            5,
            "no action has id \"nope\"",
        ),
        (
            "objects:\n  - {apiVersion: v1, kind: Gizmo, metadata: {name: g}}\n",
            "objects[0]",
            5,
            "Gizmo",
        ),
        (
            "cluster:\n  disabledControllers: [garbage-truck]\n",
            "cluster.disabledControllers[0]",
            5,
            "unknown controller \"garbage-truck\"",
        ),
    ];
    for (body, path, line, message) in cases {
        let e = load_err(&header(body));
        assert_eq!(e.path, path, "{body}: {e}");
        assert_eq!(e.location.map(|l| l.line), Some(line), "{body}: {e}");
        assert!(e.message.contains(message), "{body}: {e}");
    }
}

#[test]
fn a_create_body_with_a_non_object_metadata_is_an_error_not_a_panic() {
    let e = load_err(&header(
        "actions:\n  - {at: 1s, verb: create, target: configmaps/default/c, body: {metadata: oops}}\n",
    ));
    assert_eq!(e.path, "actions[0].body.metadata");
}

#[test]
fn quantities_take_numbers_or_strings_and_refuse_garbage_at_their_line() {
    let s = Scenario::load(&header(
        "cluster:\n  nodes:\n    - {name: a, cpu: 2, memory: 4Gi}\n    - {name: b, cpu: 1.5, memory: 512Mi}\n",
    ))
    .unwrap();
    assert_eq!(s.cluster.nodes[0].cpu, Quantity("2".into()));
    assert_eq!(s.cluster.nodes[1].cpu, Quantity("1.5".into()));
    let e = load_err(&header(
        "cluster:\n  nodes:\n    - name: a\n      cpu: -1\n      memory: lots\n",
    ));
    assert_eq!(e.location.map(|l| l.line), Some(7), "{e}");
    assert!(
        e.to_string()
            .contains("nodes[0].cpu: invalid quantity \"-1\""),
        "{e}"
    );
}

#[test]
fn an_object_refused_at_t0_is_an_error_with_kubes_message() {
    let e = load_err(&header(
        "objects:\n  - {apiVersion: v1, kind: ConfigMap, metadata: {name: Bad_Name}}\n",
    ));
    assert_eq!(e.path, "objects[0]");
    assert!(
        e.message
            .starts_with("creating it failed: 422 ConfigMap \"Bad_Name\" is invalid"),
        "{e}"
    );
}

// ---- evaluator ------------------------------------------------------------------------------

fn deployment(generation: i64, observed: i64, ready: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "generation": generation},
        "spec": {"replicas": 3},
        "status": {
            "observedGeneration": observed, "replicas": 3, "updatedReplicas": 3,
            "readyReplicas": ready, "availableReplicas": ready,
            "conditions": [
                {"type": "Available", "status": if ready == 3 {"True"} else {"False"}, "reason": "MinimumReplicasAvailable"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
            ],
        },
    })
}

#[test]
fn kstatus_checks_compare_the_verdict_and_optionally_the_message() {
    let t = SimTime::ZERO;
    let check = Check::Kstatus {
        status: KstatusName::Current,
        message: None,
    };
    assert!(evaluate(&check, Some(&deployment(2, 2, 3)), t).0);
    let (ok, expected, got) = evaluate(&check, Some(&deployment(2, 1, 3)), t);
    assert!(!ok);
    assert_eq!(expected, "Current");
    assert!(got.starts_with("InProgress"), "{got}");
    let (ok, _, got) = evaluate(&check, None, t);
    assert!(!ok);
    assert_eq!(got, "no such object");
    let with_message = Check::Kstatus {
        status: KstatusName::Current,
        message: Some("Deployment is available. Replicas: 3".into()),
    };
    assert!(evaluate(&with_message, Some(&deployment(1, 1, 3)), t).0);
}

#[test]
fn field_checks_compare_json_values_exactly() {
    let t = SimTime::ZERO;
    let check = Check::Field {
        path: FieldPath::parse("status.readyReplicas").unwrap(),
        equals: json!(3),
    };
    assert!(evaluate(&check, Some(&deployment(1, 1, 3)), t).0);
    assert_eq!(
        evaluate(&check, Some(&deployment(1, 1, 2)), t),
        (false, "3".into(), "2".into())
    );
    let string = Check::Field {
        path: FieldPath::parse("status.readyReplicas").unwrap(),
        equals: json!("3"),
    };
    assert!(
        !evaluate(&string, Some(&deployment(1, 1, 3)), t).0,
        "3 is not \"3\""
    );
    let absent = Check::Field {
        path: FieldPath::parse("status.nothing").unwrap(),
        equals: json!(1),
    };
    assert_eq!(
        evaluate(&absent, Some(&deployment(1, 1, 3)), t).2,
        "no field status.nothing"
    );
    let null = Check::Field {
        path: FieldPath::parse("status.nothing").unwrap(),
        equals: Value::Null,
    };
    assert!(
        evaluate(&null, Some(&deployment(1, 1, 3)), t).0,
        "null matches an absent field"
    );
}

#[test]
fn condition_checks_compare_only_what_is_given() {
    let t = SimTime::ZERO;
    let check = |status: Option<&str>, reason: Option<&str>| Check::Condition {
        type_: "Available".into(),
        status: status.map(str::to_owned),
        reason: reason.map(str::to_owned),
        message: None,
    };
    let d = deployment(1, 1, 3);
    assert!(evaluate(&check(Some("True"), None), Some(&d), t).0);
    assert!(evaluate(&check(None, Some("MinimumReplicasAvailable")), Some(&d), t).0);
    assert_eq!(
        evaluate(
            &check(Some("False"), Some("MinimumReplicasAvailable")),
            Some(&d),
            t
        ),
        (
            false,
            "status False, reason MinimumReplicasAvailable".into(),
            "status True, reason MinimumReplicasAvailable".into()
        )
    );
    let missing = Check::Condition {
        type_: "Ready".into(),
        status: Some("True".into()),
        reason: None,
        message: None,
    };
    assert_eq!(evaluate(&missing, Some(&d), t).2, "no Ready condition");
}

#[test]
fn exists_checks_look_for_the_object() {
    let t = SimTime::ZERO;
    assert!(evaluate(&Check::Exists(true), Some(&json!({})), t).0);
    assert!(evaluate(&Check::Exists(false), None, t).0);
    assert!(!evaluate(&Check::Exists(true), None, t).0);
}

// ---- runner ---------------------------------------------------------------------------------

fn run_text(text: &str) -> RunOutcome {
    Scenario::load(text)
        .unwrap()
        .run(&RunOptions::default())
        .unwrap()
}

#[test]
fn within_passes_at_the_first_time_the_assertion_holds() {
    let out = run_text(&header(&format!(
        "{WEB}expect:\n  - target: deployments/default/web\n    within: 30s\n    field: status.readyReplicas\n    equals: 2\n"
    )));
    let r = &out.results[0];
    assert!(r.passed, "{}", r.line());
    // Pods pull (0.5-1.5s), start (300ms) and pass readiness (200ms) before counting.
    assert!(r.time_ms > 1000 && r.time_ms < 3000, "{}", r.line());
}

#[test]
fn within_fails_at_its_deadline_with_what_was_observed_then() {
    let out = run_text(&header(&format!(
        "{WEB}expect:\n  - target: deployments/default/web\n    within: 5s\n    after: 1s\n    field: status.readyReplicas\n    equals: 7\n"
    )));
    let r = &out.results[0];
    assert!(!r.passed);
    assert_eq!(r.time_ms, 6000);
    assert_eq!(
        r.line(),
        "deployments/default/web status.readyReplicas equals 7 within 5s after 1s: expected 7, got 2 (at t=6.000s)"
    );
    assert!(!out.passed());
}

#[test]
fn a_patch_of_scale_is_what_kubectl_scale_sends_and_requests_match_it() {
    let out = run_text(&header(&format!(
        "{WEB}actions:\n  - {{at: 10s, verb: patch, target: deployments/default/web/scale, patch: {{spec: {{replicas: 4}}}}}}\nexpect:\n  - {{target: deployments/default/web, at: 10s, field: spec.replicas, equals: 4}}\n  - {{requests: {{verb: patch, target: deployments/default/web/scale, code: 200}}, at: 10s, equals: 1}}\n  - {{requests: {{verb: patch, target: deployments/default/web, code: 200}}, at: 10s, equals: 0}}\n"
    )));
    for r in &out.results {
        assert!(r.passed, "{}", r.line());
    }
    let e = load_err(&header(
        "actions:\n  - {at: 1s, verb: get, target: pods/default/p/scale}\n",
    ));
    assert!(
        e.to_string().contains("pods has no scale subresource"),
        "{e}"
    );
    let e = load_err(&header(&format!(
        "{WEB}expect:\n  - {{target: deployments/default/web/scale, at: 1s, field: spec.replicas, equals: 1}}\n"
    )));
    assert!(e.to_string().contains("drop /scale"), "{e}");
}

#[test]
fn at_sees_the_state_after_everything_due_at_that_time() {
    let out = run_text(&header(&format!(
        "{WEB}actions:\n  - {{at: 10s, verb: patch, target: deployments/default/web, patch: {{spec: {{replicas: 4}}}}}}\nexpect:\n  - {{target: deployments/default/web, at: 10s, field: metadata.generation, equals: 2}}\n  - {{target: deployments/default/web, at: 10s, field: status.observedGeneration, equals: 1}}\n  - {{target: deployments/default/web, at: 9999ms, field: metadata.generation, equals: 1}}\n"
    )));
    for r in &out.results {
        assert!(r.passed, "{}", r.line());
    }
}

/// The scenario language's windows, comparisons, counts, patterns and audit counts.
#[test]
fn always_and_never_hold_over_the_whole_window() {
    // A rolling update of 2 replicas with maxSurge 25% (rounds up to 1) and maxUnavailable 25%
    // (rounds down to 0): never more than 3 active pods, never fewer than 2 available. The count
    // sees every pod that exists, so an old pod still terminating makes 4 at most (the next old
    // pod goes only once a new one is available, after the first has stopped).
    let out = run_text(&header(&format!(
        "{WEB}actions:
  - {{at: 10s, verb: patch, target: deployments/default/web, patch: {{spec: {{template: {{spec: {{containers: [{{name: app, image: 'nginx:1.27'}}]}}}}}}}}}}
expect:
  - {{count: {{target: pods/default, selector: app=web}}, atMost: 4, within: 50s, after: 5s, always: true}}
  - {{target: deployments/default/web, field: status.availableReplicas, atLeast: 2, within: 50s, after: 5s, always: true}}
  - {{count: {{target: pods/default, selector: app=web}}, atLeast: 5, within: 50s, after: 5s, never: true}}
  - {{count: {{target: replicasets/default, owner: deployments/default/web}}, equals: 2, within: 30s, after: 10s}}
"
    )));
    for r in &out.results {
        assert!(r.passed, "{}", r.line());
    }
    assert_eq!(
        out.results[0].line(),
        "always: count pods/default with app=web is at most 4 within 50s after 5s (at t=55.000s)"
    );
    // An always that breaks fails at the first moment it does not hold.
    let out = run_text(&header(&format!(
        "{WEB}expect:
  - {{count: {{target: pods/default, selector: app=web}}, atMost: 1, within: 30s, always: true}}
"
    )));
    let r = &out.results[0];
    assert!(!r.passed);
    assert!(r.time_ms < 1000, "{}", r.line());
    assert!(
        r.line()
            .ends_with("expected always is at most 1, got 2 (at t=0.010s)"),
        "{}",
        r.line()
    );
}

#[test]
fn fields_compare_with_bounds_and_match_patterns() {
    let out = run_text(&header(&format!(
        "{WEB}expect:
  - {{target: deployments/default/web, within: 30s, field: status.readyReplicas, atLeast: 2}}
  - {{target: deployments/default/web, at: 30s, field: metadata.uid, matches: '^[0-9a-f]{{8}}-[0-9a-f]{{4}}-[0-9a-f]{{4}}-[0-9a-f]{{4}}-[0-9a-f]{{12}}$'}}
  - {{target: deployments/default/web, at: 30s, field: status.replicas, atMost: 1}}
"
    )));
    assert!(out.results[0].passed, "{}", out.results[0].line());
    assert!(out.results[1].passed, "{}", out.results[1].line());
    assert!(!out.results[2].passed);
    assert_eq!(
        out.results[2].line(),
        "deployments/default/web status.replicas is at most 1 at 30s: expected is at most 1, got 2 (at t=30.000s)"
    );
}

#[test]
fn requests_count_what_the_audit_log_holds() {
    // The Deployment controller's own status writes, and alice's one patch.
    let out = run_text(&header(&format!(
        "{WEB}actions:
  - {{at: 5s, verb: patch, target: deployments/default/web, patch: {{spec: {{replicas: 3}}}}}}
expect:
  - {{requests: {{as: 'system:serviceaccount:kube-system:deployment-controller', verb: update, target: deployments/default/web/status, code: 200}}, atLeast: 2, at: 20s}}
  - {{requests: {{as: alice, verb: patch, target: deployments/default}}, equals: 1, at: 20s}}
  - {{requests: {{as: alice, verb: patch, target: deployments/default}}, equals: 0, within: 10s, after: 6s, always: true}}
"
    )));
    for r in &out.results {
        assert!(r.passed, "{}", r.line());
    }
}

#[test]
fn the_new_expectation_forms_are_checked_with_their_line() {
    let cases = [
        (
            "expect:
  - {target: deployments/default/web, at: 1s, field: spec.replicas, equals: 1, atLeast: 1}
",
            "expect[0]",
            "field takes one of equals, atLeast/atMost, matches",
        ),
        (
            "expect:
  - {target: deployments/default/web, at: 1s, kstatus: Current, atLeast: 1}
",
            "expect[0].atLeast",
            "goes with field",
        ),
        (
            "expect:
  - {target: deployments/default/web, at: 1s, field: spec.replicas, matches: '(' }
",
            "expect[0].matches",
            "not a regular expression",
        ),
        (
            "expect:
  - {target: deployments/default/web, at: 1s, kstatus: Current, always: true}
",
            "expect[0].always",
            "needs a window",
        ),
        (
            "expect:
  - {target: deployments/default/web, within: 1s, kstatus: Current, always: true, never: true}
",
            "expect[0]",
            "give always or never, not both",
        ),
        (
            "expect:
  - {count: {target: pods/default/p}, at: 1s, equals: 1}
",
            "expect[0].count.target",
            "not one object",
        ),
        (
            "expect:
  - {count: {target: pods/default, selector: 'app in (web'}, at: 1s, equals: 1}
",
            "expect[0].count.selector",
            "",
        ),
        (
            "expect:
  - {count: {target: pods/default}, at: 1s}
",
            "expect[0]",
            "a count needs equals, atLeast or atMost",
        ),
        (
            "expect:
  - {count: {target: pods/default}, at: 1s, equals: 1.5}
",
            "expect[0].equals",
            "a count equals a whole number",
        ),
        (
            "expect:
  - {count: {target: pods/default}, target: pods/default/p, at: 1s, equals: 1}
",
            "expect[0]",
            "give one of target, count, requests, events",
        ),
        (
            "expect:
  - {target: 'pods/default/{app in (web}', at: 1s, exists: true}
",
            "expect[0].target",
            "in \"pods/default/{app in (web}\"",
        ),
        (
            "expect:
  - {target: 'pods/{app=web}/default', at: 1s, exists: true}
",
            "expect[0].target",
            "stands for the name",
        ),
        (
            "expect:
  - {events: {about: pods/default, type: Info}, at: 1s, atLeast: 1}
",
            "expect[0].events.type",
            "is Normal or Warning",
        ),
        (
            "expect:
  - {events: {reason: Failed, message: x, matches: y}, at: 1s, atLeast: 1}
",
            "expect[0].events",
            "give message or matches, not both",
        ),
        (
            "expect:
  - {events: {matches: '(unclosed'}, at: 1s, atLeast: 1}
",
            "expect[0].events.matches",
            "not a regular expression",
        ),
        (
            "expect:
  - {events: {about: gizmos/default/g}, at: 1s, atLeast: 1}
",
            "expect[0].events.about",
            "unknown resource",
        ),
        (
            "expect:
  - {requests: {target: gizmos/default}, at: 1s, equals: 1}
",
            "expect[0].requests.target",
            "unknown resource",
        ),
        (
            "expect:
  - {count: {target: pods/default}, at: 1s, equals: 1, message: x}
",
            "expect[0].message",
            "is not used with count, requests or events",
        ),
    ];
    for (body, path, message) in cases {
        let e = load_err(&header(body));
        assert_eq!(e.path, path, "{body}: {e}");
        assert_eq!(e.location.map(|l| l.line), Some(5), "{body}: {e}");
        assert!(e.message.contains(message), "{body}: {e}");
    }
}

#[test]
fn an_action_response_is_checked_when_the_action_is_sent() {
    let out = run_text(&header(&format!(
        "{WEB}actions:\n  - {{id: spoof, at: 3s, as: app, verb: patch, target: deployments/default/web/status, patch: {{status: {{readyReplicas: 0}}}}}}\nexpect:\n  - {{action: spoof, code: 403}}\n"
    )));
    assert!(out.passed());
    let response = out.run.responses().next().unwrap();
    assert_eq!((response.code, response.time_ms), (403, 3000));
    assert_eq!(response.id.as_deref(), Some("spoof"));
}

#[test]
fn rbac_enforcement_off_lets_the_app_spoof_status() {
    let out = run_text(&header(&format!(
        "rbac: {{enforce: false}}\n{WEB}actions:\n  - {{id: spoof, at: 3s, as: app, verb: patch, target: deployments/default/web/status, patch: {{status: {{readyReplicas: 1, availableReplicas: 1}}}}}}\nexpect:\n  - {{action: spoof, code: 200}}\n  - {{target: deployments/default/web, at: 3s, field: status.readyReplicas, equals: 1}}\n"
    )));
    for r in &out.results {
        assert!(r.passed, "{}", r.line());
    }
}

#[test]
fn extra_rbac_objects_grant_what_the_default_policy_refuses() {
    let rbac = "rbac:
  objects:
    - apiVersion: rbac.authorization.k8s.io/v1
      kind: Role
      metadata: {name: status-writer, namespace: default}
      rules: [{apiGroups: [apps], resources: [deployments/status], verbs: [patch]}]
    - apiVersion: rbac.authorization.k8s.io/v1
      kind: RoleBinding
      metadata: {name: app-status-writer, namespace: default}
      roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: status-writer}
      subjects: [{kind: User, name: app, apiGroup: rbac.authorization.k8s.io}]
";
    let out = run_text(&header(&format!(
        "{rbac}{WEB}actions:\n  - {{id: spoof, at: 3s, as: app, verb: patch, target: deployments/default/web/status, patch: {{status: {{readyReplicas: 1, availableReplicas: 1}}}}}}\nexpect:\n  - {{action: spoof, code: 200}}\n"
    )));
    assert!(out.passed(), "{:?}", out.results);
}

#[test]
fn body_from_with_nothing_to_copy_is_a_run_problem() {
    let out = run_text(&header(&format!(
        "{WEB}actions:\n  - {{id: read, at: 1s, as: mallory, verb: get, target: deployments/default/web}}\n  - {{at: 2s, verb: update, target: deployments/default/web, bodyFrom: read}}\n"
    )));
    assert_eq!(out.run.problems().len(), 1);
    assert_eq!(out.run.problems()[0].path, "actions[1].bodyFrom");
    assert!(!out.passed());
}

#[test]
fn build_world_creates_the_objects_at_time_zero() {
    let s = Scenario::load(&header(WEB)).unwrap();
    let world = s.build_world().unwrap();
    assert_eq!(world.now(), SimTime::ZERO);
    let key = crate::api::ObjectKey::new(crate::controllers::util::deployments(), "default", "web");
    assert!(world.object(&key).is_some());
}

#[test]
fn the_seed_option_overrides_the_files_seed() {
    let s = Scenario::load(&header(WEB)).unwrap();
    let a = s.run(&RunOptions::default()).unwrap();
    let b = s
        .run(&RunOptions {
            seed: Some(99),
            ..RunOptions::default()
        })
        .unwrap();
    assert_eq!(a.run.world().seed(), 1);
    assert_eq!(b.run.world().seed(), 99);
}

#[test]
fn disabled_controllers_do_not_run() {
    let s = Scenario::load(&header(&format!(
        "cluster:\n  disabledControllers: [replicaset-controller]\n{WEB}expect:\n  - {{target: deployments/default/web, at: 20s, kstatus: InProgress}}\n"
    )))
    .unwrap();
    let out = s.run(&RunOptions::default()).unwrap();
    assert!(!out
        .run
        .world()
        .controller_names()
        .contains(&"replicaset-controller".to_owned()));
    assert!(
        out.results[0].passed,
        "no pods, so never available: {}",
        out.results[0].line()
    );
}

#[test]
fn every_scenario_passes_and_is_deterministic() {
    for (name, text) in scenario_files() {
        let s = Scenario::load(&text).unwrap();
        let a = s.run(&RunOptions::default()).unwrap();
        for r in &a.results {
            assert!(r.passed, "{name}: {}", r.line());
        }
        assert!(a.run.problems().is_empty(), "{name}");
        let b = s.run(&RunOptions::default()).unwrap();
        assert_eq!(
            a.run.world().trace_text(),
            b.run.world().trace_text(),
            "{name}"
        );
        assert_eq!(a.results, b.results, "{name}");
    }
}

/// The same expectation with a different expected value; a `causedBy` is asked at t=0
/// instead, before any action, fault or controller wrote anything but the scenario's objects.
fn mutate(e: &mut Expectation) {
    if e.caused_by.is_some() {
        e.at = Some(Duration::parse("0s").unwrap());
        e.within = None;
        e.after = None;
        e.always = None;
    } else if let Some(k) = e.kstatus {
        e.kstatus = Some(if k == KstatusName::Current {
            KstatusName::Failed
        } else {
            KstatusName::Current
        });
    } else if let Some(l) = e.at_least {
        e.at_least = Some(l + 100.0);
    } else if let Some(m) = e.at_most {
        e.at_most = Some(m - 100.0);
    } else if let Some(p) = &e.matches {
        e.matches = Some(format!("^not:{p}"));
    } else if let Some(v) = &e.equals {
        e.equals = Some(match v {
            Value::Number(n) => json!(n.as_i64().unwrap_or(0) + 100),
            Value::String(s) => json!(format!("{s}-not")),
            Value::Bool(b) => json!(!b),
            Value::Null => json!("present"),
            _ => json!(null),
        });
    } else if e.condition.is_some() {
        match e.status.as_deref() {
            Some("True") => e.status = Some("False".into()),
            Some(_) => e.status = Some("True".into()),
            None => e.reason = Some("NotTheReason".into()),
        }
    } else if let Some(b) = e.exists {
        e.exists = Some(!b);
    } else if let Some(c) = e.code {
        e.code = Some(c + 1);
    } else if let Some(m) = &e.message {
        e.message = Some(format!("{m} (not)"));
    }
}

#[test]
fn every_expectation_of_every_scenario_can_fail() {
    for (name, text) in scenario_files() {
        let s = Scenario::load(&text).unwrap();
        for k in 0..s.expect.len() {
            let mut m = s.clone();
            mutate(&mut m.expect[k]);
            let out = m.run(&RunOptions::default()).unwrap();
            assert!(
                !out.results[k].passed,
                "{name}: expect[{k}] still passes when changed: {}",
                out.results[k].line()
            );
        }
    }
}

#[test]
fn every_fault_kind_reaches_the_engine_at_its_time() {
    let out = run_text(&header(&format!(
        "until: 20s
images:
  - {{image: nginx, behaviour: ok, pullTime: 2s}}
{WEB}faults:
  - {{at: 1s, pause: deployment-controller}}
  - {{at: 2s, resume: deployment-controller}}
  - {{at: 3s, crash: scheduler}}
  - {{at: 4s, restart: scheduler}}
  - {{at: 5s, watchLatency: {{controller: scheduler, delay: 1s}}}}
  - {{at: 6s, apiFailures: {{principal: bob, count: 1, code: 503}}}}
  - {{at: 7s, clearApiFailures: true}}
  - {{at: 8s, imagePullFailure: {{node: node-1}}}}
  - {{at: 9s, image: {{image: nginx, behaviour: crashes, runTime: 2s}}}}
  - {{at: 10s, load: {{target: deployments/default/web, cpu: 500m}}}}
"
    )));
    let trace = out.run.world().trace_text();
    for line in [
        "t=1.000s fault pause deployment-controller",
        "t=2.000s fault resume deployment-controller",
        "t=3.000s fault crash scheduler",
        "t=4.000s fault restart scheduler",
        "t=5.000s fault watch-latency scheduler 1000ms",
        "t=6.000s fault api-failures bob x1 code 503",
        "t=7.000s fault api-failures cleared",
        "t=8.000s fault image-pull-failure node-1 true",
        "t=9.000s environment image nginx = Crashes { run_ms: 2000 }",
        "t=10.000s environment load default/web = 500m",
    ] {
        assert!(trace.contains(line), "missing {line:?}");
    }
    assert_eq!(out.run.world().now(), SimTime::from_ms(20_000));
    assert!(out.run.problems().is_empty());
}

#[test]
fn an_image_that_crashes_keeps_the_deployment_unavailable() {
    let out = run_text(&header(&format!(
        "until: 40s
images:
  - {{image: nginx, behaviour: crashes, runTime: 1s}}
{WEB}expect:
  - {{target: deployments/default/web, at: 40s, condition: Available, status: \"False\"}}
  - {{target: deployments/default/web, at: 40s, kstatus: InProgress}}
"
    )));
    for r in &out.results {
        assert!(r.passed, "{}", r.line());
    }
}

#[test]
fn an_action_that_creates_an_object_can_be_copied_and_updated() {
    let out = run_text(&header(
        "actions:
  - id: make
    at: 1s
    verb: create
    target: configmaps/default/settings
    body: {apiVersion: v1, kind: ConfigMap, data: {a: \"1\"}}
  - id: edit
    at: 2s
    verb: update
    target: configmaps/default/settings
    bodyFrom: make
    patch: {data: {a: \"2\"}}
  - id: drop
    at: 3s
    verb: delete
    target: configmaps/default/settings
expect:
  - {action: make, code: 201}
  - {action: edit, code: 200}
  - {target: configmaps/default/settings, at: 2s, field: data.a, equals: \"2\"}
  - {action: drop, code: 200}
  - {target: configmaps/default/settings, at: 3s, exists: false}
",
    ));
    for r in &out.results {
        assert!(r.passed, "{}", r.line());
    }
}

#[test]
fn a_json_patch_action_is_sent_as_a_json_patch() {
    let out = run_text(&header(&format!(
        "{WEB}actions:
  - id: jp
    at: 1s
    verb: patch
    patchType: json
    target: deployments/default/web
    patch: [{{op: replace, path: /spec/replicas, value: 3}}]
expect:
  - {{action: jp, code: 200}}
  - {{target: deployments/default/web, at: 1s, field: spec.replicas, equals: 3}}
"
    )));
    for r in &out.results {
        assert!(r.passed, "{}", r.line());
    }
}

#[test]
fn the_event_bound_stops_a_timed_run_too() {
    let s = Scenario::load(&header(WEB)).unwrap();
    let out = s
        .run(&RunOptions {
            until: Some(Until::Time(Duration(60_000))),
            max_events: 10,
            ..RunOptions::default()
        })
        .unwrap();
    assert_eq!(out.stop, crate::engine::StopReason::Bound);
    assert!(out.run.world().now() < SimTime::from_ms(60_000));
}

#[test]
fn truncated_and_mangled_files_give_errors_never_panics() {
    // Two files with every kind of entry keep this quick: each successful load builds a world.
    let files = scenario_files();
    let picked = files
        .iter()
        .filter(|(n, _)| n == "status-spoofing.yaml" || n == "controller-crash.yaml");
    for (name, text) in picked {
        let lines: Vec<&str> = text.lines().collect();
        for n in 0..lines.len() {
            let prefix = lines[..n].join("\n");
            let _ = Scenario::load(&prefix);
            let mut dropped = lines.clone();
            dropped.remove(n);
            let _ = Scenario::load(&dropped.join("\n"));
        }
        let _ = Scenario::load(&text.replace(": ", ":"));
        let _ = Scenario::load(&text.replace("  ", " "));
        let _ = name;
    }
}

#[test]
fn a_target_chosen_by_labels_or_owner_names_the_first_match_when_it_is_used() {
    // At 20s web's two pods are Ready. The action deletes the first by name; the ReplicaSet
    // replaces it, so by 40s the first pod by name (chosen again) is Ready once more, and the
    // deleted one is gone.
    let out = run_text(&header(&format!(
        "{WEB}actions:
  - {{id: kill, at: 20s, as: admin, verb: delete, target: 'pods/default/{{app=web}}'}}
expect:
  - {{action: kill, code: 200}}
  - {{target: 'pods/default/{{owner: deployments/default/web}}', at: 19s, condition: Ready, status: 'True'}}
  - {{target: 'pods/default/{{app=web}}', within: 40s, after: 20s, condition: Ready, status: 'True'}}
  - {{count: {{target: pods/default, selector: app=web}}, at: 40s, equals: 2}}
"
    )));
    for r in &out.results {
        assert!(r.passed, "{}", r.line());
    }
    let deleted = out
        .run
        .audit()
        .iter()
        .find(|a| a.verb == crate::api::Verb::Delete && &*a.principal == "admin")
        .expect("the delete was sent");
    let first_at_20s = {
        let mut names: Vec<String> = out
            .run
            .audit()
            .iter()
            .filter(|a| a.verb == crate::api::Verb::Create && a.resource == "pods" && a.code == 201)
            .take(2)
            .map(|a| a.name.to_string())
            .collect();
        names.sort();
        names[0].clone()
    };
    assert_eq!(deleted.name, first_at_20s);
    assert!(out.run.problems().is_empty());
}

#[test]
fn a_selection_that_matches_nothing_is_a_problem_not_a_request() {
    let out = run_text(&header(&format!(
        "{WEB}actions:
  - {{at: 5s, as: admin, verb: delete, target: 'pods/default/{{app=nope}}'}}
"
    )));
    let problem = out.run.problems().first().expect("a problem");
    assert_eq!(problem.path, "actions[0].target");
    assert_eq!(
        problem.message,
        "no object matches the target of delete pods/default/{app=nope} as admin"
    );
    assert!(!out
        .run
        .audit()
        .iter()
        .any(|a| a.verb == crate::api::Verb::Delete));
}

#[test]
fn events_expire_an_hour_after_their_last_write() {
    // kube-apiserver's --event-ttl (1h): the rollout's Events, written in its first seconds,
    // are there at 59 minutes and gone, each with a DELETED watch event, by 61.
    let out = run_text(&header(&format!(
        "{WEB}until: 70m
expect:
  - {{count: {{target: events/default}}, at: 59m, atLeast: 5}}
  - {{count: {{target: events/default}}, at: 61m, equals: 0}}
"
    )));
    for r in &out.results {
        assert!(r.passed, "{}", r.line());
    }
    assert!(out
        .run
        .world()
        .trace()
        .iter()
        .any(|l| l.contains(" api-server event-ttl expired events default/web.")));
}

// ---- causedBy -------------------------------------------------------------------------------

fn caused_by_scenario(expect: &str) -> String {
    header(&format!(
        "{WEB}actions:
  - {{id: scale, at: 1s, as: alice, verb: patch, target: deployments/default/web, patch: {{spec: {{replicas: 3}}}}}}
faults:
  - {{id: stop, at: 2s, crash: scheduler}}
expect:
  - target: deployments/default/web
    at: 5s
{expect}"
    ))
}

#[test]
fn caused_by_is_refused_where_it_cannot_apply_at_its_line() {
    for (expect, line, message) in [
        (
            "    field: spec.replicas\n    causedBy: {action: nope}\n",
            22,
            "expect[0].causedBy.action: no action has id \"nope\"",
        ),
        (
            "    field: spec.replicas\n    causedBy: {fault: nope}\n",
            22,
            "expect[0].causedBy.fault: no fault has id \"nope\"",
        ),
        (
            "    field: spec.replicas\n    causedBy: {controller: nope}\n",
            22,
            "expect[0].causedBy.controller: unknown controller \"nope\"",
        ),
        (
            "    field: spec.replicas\n    causedBy: {action: scale, fault: stop}\n",
            22,
            "expect[0].causedBy: give exactly one of action, fault, controller",
        ),
        (
            "    kstatus: Current\n    causedBy: {action: scale}\n",
            22,
            "expect[0].causedBy: goes with field",
        ),
        (
            "    field: spec.replicas\n    equals: 3\n    causedBy: {action: scale}\n",
            19,
            "expect[0]: field takes one of equals, atLeast/atMost, matches, causedBy",
        ),
    ] {
        let e = load_err(&caused_by_scenario(expect));
        assert!(e.to_string().contains(message), "{e}");
        assert_eq!(e.location.map(|l| l.line), Some(line), "{e}");
    }
}

/// A run that keeps no records (`converge check`'s) decides and words every result as one that
/// keeps them, a chain rooted at a restart included (its root is read from the input log, not
/// from a trace line the run did not keep).
#[test]
fn a_run_without_records_reports_what_a_run_with_them_reports() {
    let text = include_str!("../../../../tests/scenarios/controller-crash.yaml")
        .replace(
            "  - at: 8s\n    crash:",
            "  - id: crash\n    at: 8s\n    crash:",
        )
        .replace("causedBy: {fault: restart}", "causedBy: {fault: crash}");
    let scenario = Scenario::load(&text).unwrap_or_else(|e| panic!("{e}"));
    let lines = |records: bool| {
        let options = RunOptions {
            records,
            ..RunOptions::default()
        };
        let out = scenario.run(&options).unwrap_or_else(|e| panic!("{e}"));
        let lines: Vec<String> = out.results.iter().map(|r| r.line()).collect();
        (lines, out.run.world().trace().len())
    };
    let ((kept, kept_trace), (unkept, unkept_trace)) = (lines(true), lines(false));
    assert_eq!(unkept, kept);
    let caused = &kept[3];
    assert!(
        caused.contains("fault restart replicaset-controller"),
        "{caused}"
    );
    assert!(
        unkept_trace < kept_trace / 2,
        "{unkept_trace} of {kept_trace} lines kept"
    );
}

#[test]
fn caused_by_holds_when_the_value_traces_back_to_it() {
    let out = run_text(&caused_by_scenario(
        "    field: spec.replicas
    causedBy: {action: scale}
  - target: deployments/default/web
    at: 5s
    field: status.replicas
    causedBy: {controller: replicaset-controller}
  - target: deployments/default/web
    at: 5s
    field: spec.replicas
    causedBy: {controller: deployment-controller}
  - target: deployments/default/web
    at: 5s
    field: metadata.name
    causedBy: {action: scale}
",
    ));
    let lines: Vec<String> = out.results.iter().map(|r| r.line()).collect();
    assert!(out.results[0].passed, "{lines:?}");
    assert!(out.results[1].passed, "{lines:?}");
    // alice's patch set spec.replicas itself: no controller wrote it.
    assert!(!out.results[2].passed, "{lines:?}");
    assert!(lines[2].contains("request by alice"), "{}", lines[2]);
    // The name was set by the admin's create, before the action.
    assert!(!out.results[3].passed, "{lines:?}");
    assert!(lines[3].contains("request by admin"), "{}", lines[3]);
}

/// A run without records lets the API server's audit log go when no expectation counts
/// requests, and keeps it whole when one does; either way the results, the world and the
/// count of audit entries are those of a run with records.
#[test]
fn a_run_without_records_keeps_the_audit_only_when_an_expectation_counts_requests() {
    for (text, counts_requests) in [
        (
            include_str!("../../../../tests/scenarios/controller-crash.yaml"),
            false,
        ),
        (
            include_str!("../../../../tests/scenarios/scale-down.yaml"),
            true,
        ),
    ] {
        let scenario = Scenario::load(text).unwrap_or_else(|e| panic!("{e}"));
        let run = |records: bool| {
            let options = RunOptions {
                records,
                ..RunOptions::default()
            };
            scenario.run(&options).unwrap_or_else(|e| panic!("{e}"))
        };
        let (kept, unkept) = (run(true), run(false));
        let lines = |o: &RunOutcome| o.results.iter().map(|r| r.line()).collect::<Vec<_>>();
        assert_eq!(lines(&unkept), lines(&kept));
        assert!(kept.results.iter().all(|r| r.passed), "{:?}", lines(&kept));
        let (a, b) = (kept.run.world().api(), unkept.run.world().api());
        assert_eq!(b.audit_len(), a.audit_len());
        assert_eq!(b.audit_len(), a.audit().count());
        let objects = |api: &crate::api::ApiServer| {
            api.objects()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(objects(b), objects(a));
        if counts_requests {
            assert!(b.audit().eq(a.audit()), "the whole log is kept");
        } else {
            let tail = b.audit().count();
            assert!(
                tail * 20 < a.audit_len(),
                "{tail} of {} entries kept",
                a.audit_len()
            );
            assert!(
                b.audit().eq(a.audit().skip(a.audit_len() - tail)),
                "the last request's"
            );
        }
    }
}
