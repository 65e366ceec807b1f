//! What the property tests share (`mod common;` in each).

#![allow(
    dead_code,
    reason = "each test crate compiles this module and uses its own part of it"
)]

use converge_core::api::ObjectKey;
use converge_core::engine::World;
use converge_core::json::Value;
use proptest::test_runner::TestCaseError;

/// Steps `world` until `ms` of simulated time have passed. After every step it calls
/// `check(world, fresh, false)`, where `fresh` says whether the step changed what `watched`
/// reads (a status just written); once the time is reached, `check(world, false, false)`.
pub fn run_for<T: PartialEq>(
    world: &mut World,
    ms: u64,
    watched: impl Fn(&World) -> T,
    check: impl Fn(&World, bool, bool) -> Result<(), TestCaseError>,
) -> Result<(), TestCaseError> {
    let until = world.now().as_ms() + ms;
    while world.next_event_time().is_some_and(|t| t.as_ms() <= until) {
        let before = watched(world);
        world.step();
        check(world, watched(world) != before, false)?;
    }
    world.advance(until.saturating_sub(world.now().as_ms()));
    check(world, false, false)
}

/// The object's `metadata.resourceVersion` ("" while it does not exist).
pub fn rv_of(world: &World, key: &ObjectKey) -> String {
    world
        .object(key)
        .and_then(|d| d.pointer("/metadata/resourceVersion"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}
