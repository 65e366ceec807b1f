//! Properties shared by the fuzz targets (`fuzz/`) and the tests that replay their corpus
//! (`crates/core/tests/fuzz_regressions.rs`): each `check_*` takes raw bytes, drives one user
//! entry point with them and panics only when a property is broken, so libFuzzer and
//! `cargo test` run the very same checks.
//!
//! Not part of the public API: hidden from docs, no stability promise.
mod api_requests;
mod http_requests;
mod request_bytes;

use crate::json::Value;

use crate::parse;
use crate::scenario::{Duration, RunOptions, Scenario, Until};
use crate::view::share;

pub use api_requests::{
    blocking_dependents, check_api_requests, deleting_with, seeded_api_server, store_diff,
    store_snapshot, StoreDiff,
};
pub use http_requests::check_http_requests;
pub use request_bytes::template;

// ---- parsing ---------------------------------------------------------------------------------

/// Parses `data` as a pasted manifest. On success every object must print back (as JSON and as
/// YAML) to text that parses to the same objects, field order included.
pub fn check_parse(data: &[u8]) {
    let Ok(objects) = parse::parse_document_bytes(data) else {
        return;
    };
    assert!(!objects.is_empty(), "a successful parse has objects");
    let as_json = objects
        .iter()
        .map(|o| serde_json::to_string(o).expect("a parsed value serialises"))
        .collect::<Vec<_>>()
        .join("\n");
    let reparsed = parse::parse_documents(&as_json)
        .unwrap_or_else(|e| panic!("JSON re-serialisation does not parse: {e}\n{as_json}"));
    assert_same(&objects, &reparsed, "JSON");

    // JSON allows a `<<` key; in YAML it is a merge key, so such objects cannot round-trip.
    if objects.iter().any(has_merge_key) {
        return;
    }
    // Every document starts with `---`: an empty object prints as the flow mapping `{}`, and a
    // stream whose first character is `{` is read as JSON (kubectl's rule), so without the
    // marker `{}\n---\n{}` is a JSON syntax error (found by the fuzzer).
    let as_yaml = objects
        .iter()
        .map(|o| {
            let doc = serde_yaml_ng::to_string(o).expect("a parsed value serialises as YAML");
            format!("---\n{doc}")
        })
        .collect::<String>();
    let reparsed = parse::parse_documents(&as_yaml)
        .unwrap_or_else(|e| panic!("YAML re-serialisation does not parse: {e}\n{as_yaml}"));
    assert_same(&objects, &reparsed, "YAML");
}

fn assert_same(a: &[Value], b: &[Value], how: &str) {
    let text = |v: &[Value]| serde_json::to_string(v).unwrap_or_default();
    assert_eq!(text(a), text(b), "{how} round trip changed the objects");
}

fn has_merge_key(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, c)| k == "<<" || has_merge_key(c)),
        Value::Array(a) => a.iter().any(has_merge_key),
        _ => false,
    }
}
// ---- scenario files --------------------------------------------------------------------------

/// The longest simulated time a fuzzed scenario runs.
pub const SCENARIO_BOUND_MS: u64 = 120_000;
/// The most engine events a fuzzed scenario processes.
pub const SCENARIO_MAX_EVENTS: u64 = 20_000;

/// Loads `data` as a scenario file: it either loads (and then writes back to YAML and JSON that
/// load to the same scenario, and runs within the bound) or is refused with a one-line error.
pub fn check_scenario(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let scenario = match Scenario::load(text) {
        Ok(s) => s,
        Err(e) => {
            let line = e.to_string();
            assert!(
                !line.is_empty() && !line.contains('\n'),
                "one-line error: {line:?}"
            );
            return;
        }
    };
    for (how, written) in [("YAML", scenario.to_yaml()), ("JSON", scenario.to_json())] {
        let reloaded = Scenario::load(&written)
            .unwrap_or_else(|e| panic!("the {how} it writes does not load: {e}\n{written}"));
        assert_eq!(reloaded, scenario, "{how} round trip changed the scenario");
    }
    let bound = match scenario.until {
        Some(Until::Time(d)) if d.ms() < SCENARIO_BOUND_MS => d.ms(),
        _ => SCENARIO_BOUND_MS,
    };
    let options = RunOptions {
        seed: None,
        until: Some(Until::Time(Duration(bound))),
        max_events: SCENARIO_MAX_EVENTS,
        max_extra_ms: 0,
        records: true,
    };
    match scenario.run(&options) {
        Ok(outcome) => {
            let now = outcome.run.now_ms();
            assert!(now <= bound, "ran to {now} ms past the bound {bound} ms");
        }
        Err(e) => {
            let line = e.to_string();
            assert!(
                !line.is_empty() && !line.contains('\n'),
                "one-line error: {line:?}"
            );
        }
    }
}

// ---- determinism -----------------------------------------------------------------------------

/// Runs a scenario file twice with `seed` and returns the trace hash, panicking when the two
/// runs differ.
pub fn check_deterministic(text: &str, seed: u64) -> Result<String, String> {
    let a = crate::scenario::trace_hash_of(text, seed).map_err(|e| e.to_string())?;
    let b = crate::scenario::trace_hash_of(text, seed).map_err(|e| e.to_string())?;
    assert_eq!(a, b, "two runs with seed {seed} gave different traces");
    Ok(a)
}

// ---- share links -----------------------------------------------------------------------------

/// Engine events a fuzzed share link may replay (smaller than the page's budget so one input
/// stays fast; a link over it must be refused with the budget error, which is checked too).
pub const SHARE_MAX_EVENTS: u64 = 50_000;

/// The share link text `data` stands for. The first byte picks the layer the rest is fed to, so
/// the fuzzer reaches every one: 0 the fragment as typed, 1 the inflated JSON (the localStorage
/// form, also deflated into a link), 2 the deflated stream (base64-encoded into a link).
pub fn share_link_of(data: &[u8]) -> String {
    use base64::Engine;
    let Some((mode, rest)) = data.split_first() else {
        return String::new();
    };
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    match mode % 3 {
        0 => String::from_utf8_lossy(rest).into_owned(),
        1 => format!(
            "{}{}",
            share::HASH_PREFIX,
            b64(&miniz_oxide::deflate::compress_to_vec(rest, 6))
        ),
        _ => format!("{}{}", share::HASH_PREFIX, b64(rest)),
    }
}

/// Opens `data` as a share link (see [`share_link_of`]). A link either restores a valid world
/// or yields a one-line error: a decoded workspace passes its own validation, encodes to a link
/// that decodes to the same workspace, and replays to a world with one step per action and the
/// cursor inside it, or is refused for going over the replay budget.
pub fn check_share_link(data: &[u8]) {
    let link = share_link_of(data);
    if data.first().is_some_and(|m| m % 3 == 1) {
        // The same bytes as a localStorage entry must get the same answer as the link.
        let stored = std::str::from_utf8(&data[1..]).map(share::from_json);
        let linked = share::from_hash(&link);
        if let Ok(stored) = stored {
            assert_eq!(stored, linked, "localStorage and link disagree");
        }
    }
    let w = match share::from_hash(&link) {
        Ok(w) => w,
        Err(e) => return assert_one_line(&e.to_string()),
    };
    assert_eq!(w.validate(), Ok(()), "a decoded workspace is valid");
    let again = share::to_hash(&w);
    assert_eq!(
        share::from_hash(&again).as_ref(),
        Ok(&w),
        "re-encoding changed the workspace"
    );
    let mut steps = 0u64;
    match share::replay(&w, SHARE_MAX_EVENTS, |world, _| {
        steps += 1;
        assert_eq!(world.steps(), steps, "each action is one world step");
    }) {
        Ok(world) => {
            assert_eq!(world.steps(), w.actions.len() as u64);
            assert!(w.cursor.is_none_or(|c| c <= world.steps()));
        }
        Err(e) => {
            assert!(
                matches!(e, share::ShareError::ReplayBudget { .. }),
                "a valid workspace is refused only for its replay budget: {e}"
            );
            assert_one_line(&e.to_string());
        }
    }
}

fn assert_one_line(line: &str) {
    assert!(
        !line.is_empty() && !line.contains('\n'),
        "one-line error: {line:?}"
    );
}
