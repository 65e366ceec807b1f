//! Replays every committed fuzz input (`fuzz/corpus/<target>/` and every crash ever found,
//! `fuzz/artifacts/<target>/`) through the same checks the fuzz targets run
//! (`converge_core::testkit`), on stable, in the default test run.

use std::path::{Path, PathBuf};

use converge_core::testkit;

fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut files = Vec::new();
    for dir in ["corpus", "artifacts"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        files.extend(
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != ".gitkeep")),
        );
    }
    files.sort();
    files
}

fn replay(target: &str, check: fn(&[u8])) {
    let files = inputs(target);
    assert!(
        !files.is_empty(),
        "no committed corpus for fuzz target {target}"
    );
    for file in files {
        let data = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(
            outcome.is_ok(),
            "fuzz input {} broke a property",
            file.display()
        );
    }
}

#[test]
fn the_parse_corpus_and_its_crashes_replay_clean() {
    replay("parse", testkit::check_parse);
}

#[test]
fn the_api_request_corpus_and_its_crashes_replay_clean() {
    replay("api_requests", testkit::check_api_requests);
}

#[test]
fn the_scenario_corpus_and_its_crashes_replay_clean() {
    replay("scenario", testkit::check_scenario);
}

#[test]
fn the_share_link_corpus_and_its_crashes_replay_clean() {
    replay("share", testkit::check_share_link);
}

/// Found by the `parse` fuzzer (fuzz/artifacts/parse/crash-b3b889ec…): a 22-digit number came
/// back one unit in the last place off after printing and parsing again, because serde_json's
/// default float parser is fast but not exact. The workspace enables its `float_roundtrip`
/// feature; a pasted number now keeps its value, as it does through Go's encoding/json.
#[test]
fn a_long_number_keeps_its_exact_value_through_print_and_parse() {
    let digits = "1111111116111111161112";
    let exact: f64 = digits.parse().expect("a float");
    let pasted = format!("{{\n  \"apiVersion\": {digits}\n}}\n");
    let first = converge_core::parse::parse_documents(&pasted).expect("it parses");
    assert_eq!(first[0]["apiVersion"].as_f64(), Some(exact));
    let printed = serde_json::to_string(&first[0]).expect("it prints");
    let again = converge_core::parse::parse_documents(&printed).expect("it parses again");
    assert_eq!(again[0]["apiVersion"].as_f64(), Some(exact), "{printed}");
}

/// Found by the `api_requests` fuzzer (fuzz/artifacts/api_requests/crash-abbd4c95…): a JSON patch
/// that moves a field onto a prefix of where it came from, followed by an operation that fails.
/// json-patch's `patch` undoes the applied operations on failure and panics when it cannot (a
/// value cannot be moved back into a path under itself), so the request killed the server. The
/// server patches a copy of the object it drops on failure, so it applies without undoing; the
/// request is refused as Invalid and the store keeps the object.
#[test]
fn a_json_patch_that_cannot_be_undone_is_refused_and_changes_nothing() {
    use converge_core::api::{ApiRequest, GroupResource, PatchType};
    use converge_core::json::json;
    use converge_core::time::SimTime;

    let before = testkit::seeded_api_server();
    let mut api = before.clone();
    let containers = "/spec/template/spec/containers";
    let ops = json!([
        {"op": "move", "from": format!("{containers}/0/image"), "path": containers},
        {"op": "test", "path": "/spec/replicas", "value": 99},
    ]);
    let deployments = GroupResource::new("apps", "deployments");
    let result = api.handle(
        SimTime::ZERO,
        ApiRequest::patch("admin", deployments, "default", "web", PatchType::Json, ops),
    );
    let Err(e) = result else {
        panic!("a patch whose test fails is refused: {result:?}");
    };
    assert_eq!(e.code(), 422, "{e:?}");
    assert!(
        e.message
            .starts_with("the server rejected our request due to an error in our request: "),
        "{}",
        e.message
    );
    assert!(testkit::store_diff(&before, &api).is_empty());
}

/// Found by the `scenario` fuzzer (fuzz/artifacts/scenario/crash-a3780c0b…): a Deployment named
/// with line breaks was refused with a message that printed the name raw, so the scenario
/// loader's one-line error spread over many lines. kube quotes names with Go's `%q` in its
/// status errors (`NewInvalid`, `NewNotFound`, `NewAlreadyExists`, `NewForbidden`), as the
/// field error after it already did.
#[test]
fn a_name_with_a_line_break_is_quoted_as_kube_quotes_it() {
    use converge_core::api::{ApiRequest, GroupResource};
    use converge_core::time::SimTime;

    let mut api = testkit::seeded_api_server();
    let deployments = GroupResource::new("apps", "deployments");
    let body = testkit::template("apps/v1", "Deployment", "a\nb");
    let result = api.handle(
        SimTime::ZERO,
        ApiRequest::create("admin", deployments.clone(), "default", body),
    );
    let Err(e) = result else {
        panic!("an invalid name is refused: {result:?}");
    };
    assert!(
        e.message.starts_with(
            "Deployment.apps \"a\\nb\" is invalid: metadata.name: Invalid value: \"a\\nb\": "
        ),
        "{}",
        e.message
    );
    let result = api.handle(
        SimTime::ZERO,
        ApiRequest::get("admin", deployments, "default", "a\nb"),
    );
    let Err(e) = result else {
        panic!("no such Deployment: {result:?}");
    };
    assert_eq!(e.message, "deployments.apps \"a\\nb\" not found");
}

#[test]
fn the_http_request_corpus_and_its_crashes_replay_clean() {
    replay("http_requests", testkit::check_http_requests);
}
