//! wasm tests run by wasm-bindgen-test-runner in Node: core behaves the same compiled to wasm.
#![cfg(target_arch = "wasm32")]

use converge_core::time::SimTime;
use converge_web::state::{Model, Msg};
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn simulated_time_prints_the_same_in_wasm() {
    assert_eq!(SimTime(65_999).rfc3339(), "2025-01-01T00:01:05Z");
}

#[wasm_bindgen_test]
fn the_reducer_steps_the_clock_in_wasm() {
    let mut m = Model::default();
    m.update(Msg::Step);
    assert_eq!(m.clock.to_string(), "t=0.100s");
}
