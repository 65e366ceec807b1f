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
