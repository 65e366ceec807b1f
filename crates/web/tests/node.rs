//! wasm tests run by wasm-bindgen-test-runner in Node: core behaves the same compiled to wasm.
#![cfg(target_arch = "wasm32")]

use converge_core::scenario::trace_hash_of;
use converge_core::time::SimTime;
use wasm_bindgen_test::wasm_bindgen_test;

/// Trace hashes computed natively (`crates/core/tests/determinism.rs` keeps this file current).
const NATIVE_HASHES: &str = include_str!("../../../tests/determinism/hashes.txt");

fn native_hash(file: &str, seed: u64) -> &'static str {
    NATIVE_HASHES
        .lines()
        .find_map(|line| {
            let mut parts = line.split_whitespace();
            let (f, s, h) = (parts.next()?, parts.next()?, parts.next()?);
            (f == file && s == seed.to_string()).then_some(h)
        })
        .unwrap_or_else(|| panic!("{file} seed {seed} missing from tests/determinism/hashes.txt"))
}

#[wasm_bindgen_test]
fn simulated_time_prints_the_same_in_wasm() {
    assert_eq!(SimTime(65_999).rfc3339(), "2025-01-01T00:01:05Z");
}

macro_rules! same_trace_as_native {
    ($test:ident, $file:literal) => {
        #[wasm_bindgen_test]
        fn $test() {
            let text = include_str!(concat!("../../../", $file));
            for seed in [1, 7] {
                let hash = trace_hash_of(text, seed).expect("scenario loads");
                assert_eq!(hash, native_hash($file, seed), "{} seed {seed}", $file);
            }
        }
    };
}

same_trace_as_native!(
    scale_up_traces_the_same_in_wasm,
    "tests/scenarios/scale-up.yaml"
);
same_trace_as_native!(
    rolling_update_traces_the_same_in_wasm,
    "tests/scenarios/rolling-update.yaml"
);
same_trace_as_native!(
    status_spoofing_traces_the_same_in_wasm,
    "tests/scenarios/status-spoofing.yaml"
);
same_trace_as_native!(
    custom_resource_traces_the_same_in_wasm,
    "tests/scenarios/custom-resource.yaml"
);
same_trace_as_native!(
    controller_crash_traces_the_same_in_wasm,
    "tests/scenarios/controller-crash.yaml"
);

same_trace_as_native!(
    daemon_set_on_a_joining_node_traces_the_same_in_wasm,
    "tests/scenarios/daemonset-new-node.yaml"
);

same_trace_as_native!(
    stateful_set_partitioned_rollout_traces_the_same_in_wasm,
    "tests/scenarios/statefulset-partition.yaml"
);

same_trace_as_native!(
    endpoints_following_readiness_trace_the_same_in_wasm,
    "tests/scenarios/readiness-probe-endpoints.yaml"
);

#[wasm_bindgen_test]
fn every_gallery_lesson_completes_in_wasm_as_natively() {
    use converge_core::scenario::{gallery::GALLERY, RunOptions, Scenario};
    for entry in GALLERY {
        let scenario = Scenario::load(entry.text).expect("gallery scenario loads");
        let outcome = scenario
            .run(&RunOptions::default())
            .expect("gallery scenario runs");
        let lesson = outcome.results.last().expect("a lesson result");
        assert!(lesson.description.starts_with("lesson "), "{}", entry.id);
        assert!(lesson.passed, "{}: {}", entry.id, lesson.line());
        let hash = outcome.run.world().trace_hash();
        assert_eq!(
            hash,
            native_hash(&format!("tests/scenarios/{}.yaml", entry.id), 1),
            "{}",
            entry.id
        );
    }
}
