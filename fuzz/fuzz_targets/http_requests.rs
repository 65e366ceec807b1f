//! Fuzz target `http_requests`: the properties live in `converge_core::testkit::check_http_requests`,
//! which `crates/core/tests/fuzz_regressions.rs` also runs over the committed corpus and artifacts.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| converge_core::testkit::check_http_requests(data));
