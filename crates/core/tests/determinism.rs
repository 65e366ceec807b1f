//! The same scenario and seed give the same trace: every scenario in `tests/scenarios/` runs
//! twice per seed and the trace hashes must match, and `tests/determinism/hashes.txt` (which the
//! wasm test in Node compares against) must be current. Regenerate it with
//! `CONVERGE_UPDATE_HASHES=1 cargo test -p converge-core --test determinism`.

use std::path::{Path, PathBuf};

use converge_core::testkit::check_deterministic;

const SEEDS: &[u64] = &[1, 7];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scenario_files() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("tests/scenarios"))
        .expect("tests/scenarios exists")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml") || n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

/// `<scenario file> <seed> <hash>` for every scenario and seed, sorted.
fn hashes() -> String {
    let mut out = String::new();
    for name in scenario_files() {
        let text = std::fs::read_to_string(root().join("tests/scenarios").join(&name))
            .expect("scenario readable");
        for &seed in SEEDS {
            let hash = check_deterministic(&text, seed)
                .unwrap_or_else(|e| panic!("tests/scenarios/{name}: {e}"));
            out.push_str(&format!("tests/scenarios/{name} {seed} {hash}\n"));
        }
    }
    out
}

#[test]
fn every_scenario_gives_the_same_trace_hash_twice_and_hashes_txt_is_current() {
    let path = root().join("tests/determinism/hashes.txt");
    let now = hashes();
    if std::env::var_os("CONVERGE_UPDATE_HASHES").is_some() {
        std::fs::write(&path, &now).expect("write hashes.txt");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        committed, now,
        "tests/determinism/hashes.txt is stale: rerun with CONVERGE_UPDATE_HASHES=1"
    );
}

#[test]
fn a_different_seed_can_give_a_different_trace() {
    let text = std::fs::read_to_string(root().join("tests/scenarios/scale-up.yaml"))
        .expect("scale-up.yaml");
    let a = check_deterministic(&text, 1).expect("runs");
    let b = check_deterministic(&text, 7).expect("runs");
    assert_ne!(a, b, "pod names and pull times depend on the seed");
}
