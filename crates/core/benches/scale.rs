//! Issue 20's native goal table: a Deployment scaled 1 -> 1,000 replicas on 20 nodes to
//! convergence, as `converge check benches/scenarios/scale-1-to-1000.yaml` runs it, and a
//! rolling update of 1,000 Pods to convergence (criterion, 10 samples each). The 1 -> 10,000
//! run takes 20-30 s per sample, so `-- scale_10000` times it once and `-- 1_to_10000` runs it
//! under criterion (10 samples, only when named); peak RSS comes from `/usr/bin/time` around
//! `converge check` (BENCHMARKS.md, "Engine at scale" and "Session 12").
//!
//! The playground's large starter is built and rolled out natively too, the counterpart of
//! tests/e2e/engine.test.mjs (wasm time / native time).
//!
//! `cargo bench -p converge-core --bench scale` (criterion), `... -- scale_10000` (one-shot),
//! `... -- 1_to_10000` (criterion, about 5 minutes).

use std::hint::black_box;
use std::time::Instant;

use converge_core::controllers::util::deployments;
use converge_core::engine::script::patch_as;
use converge_core::engine::World;
use converge_core::json::json;
use converge_core::scenario::{RunOptions, Scenario};
use converge_core::view::session::{perform, replay, SessionAction, Starter};
use criterion::{BatchSize, Criterion};

/// The allocator the native `converge` CLI ships (crates/cli/src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SCALE_1000: &str = include_str!("scenarios/scale-1-to-1000.yaml");
const SCALE_10000: &str = include_str!("scenarios/scale-1-to-10000.yaml");

/// Loads and runs a scenario to its end; panics unless every expectation passed, so a faster
/// figure can never come from a run that stopped early.
fn run(text: &str) -> usize {
    let scenario = Scenario::load(text).expect("the bench scenario loads");
    let outcome = scenario
        .run(&RunOptions::default())
        .expect("the bench scenario runs");
    assert!(
        outcome.results.iter().all(|r| r.passed),
        "{:?}",
        outcome.results.iter().map(|r| r.line()).collect::<Vec<_>>()
    );
    outcome.run.world().trace().len()
}

/// The 1,000-replica scenario with a new image at 40 s: the rolling update's own events are the
/// run's second half.
fn rolling_update_text() -> String {
    let mut text = SCALE_1000.replace("name: scale-1-to-1000", "name: rolling-update-1000");
    text = text.replace(
        "expect:",
        "  - {at: 40s, as: admin, verb: patch, target: deployments/default/web, patch: {spec: {template: {spec: {containers: [{name: app, image: 'nginx:1.27'}]}}}}}\nexpect:",
    );
    text.push_str(
        "  - {target: deployments/default/web, after: 41s, within: 30m, condition: Progressing, reason: NewReplicaSetAvailable}\n",
    );
    text
}

/// The playground's `?starter=large` world (12 nodes, 960 replicas), built as the tab builds it:
/// the starter's actions replayed from seed 1. The native side of tests/e2e/engine.test.mjs.
fn large_starter() -> World {
    replay(Starter::Large, 1, &Starter::Large.actions(), |_, _| {})
}

/// alice gives the large starter a new image, then the cluster runs until converged: the
/// tab's Apply and "Run until converged" (tests/e2e/engine.test.mjs).
fn large_starter_rolling_update(world: &mut World) -> usize {
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}});
    let apply = SessionAction::apply(patch_as("alice", deployments(), "default", "web", patch));
    perform(world, &apply);
    perform(world, &SessionAction::RunUntilConverged).processed as usize
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "scale_10000") {
        let start = Instant::now();
        let events = run(SCALE_10000);
        let s = start.elapsed().as_secs_f64();
        println!(
            "scale/1_to_10000_replicas: {s:.2} s, {events} events, {:.1} us/event",
            s * 1e6 / events as f64
        );
        return;
    }
    let rolling = rolling_update_text();
    let mut c = Criterion::default().configure_from_args();
    // Issue 20's headline figure under criterion: ten samples of 20-30 s each, so only when
    // asked for by name (`-- 1_to_10000`), never in a plain `cargo bench`.
    if args.iter().any(|a| a.contains("1_to_10000")) {
        let mut g = c.benchmark_group("scale");
        g.sample_size(10);
        g.measurement_time(std::time::Duration::from_secs(200));
        g.bench_function("1_to_10000_replicas", |b| {
            b.iter(|| black_box(run(SCALE_10000)))
        });
        g.finish();
        c.final_summary();
        return;
    }
    let mut g = c.benchmark_group("scale");
    g.sample_size(10);
    g.bench_function("1_to_1000_replicas", |b| {
        b.iter(|| black_box(run(SCALE_1000)))
    });
    g.bench_function("1000_replicas_then_rolling_update", |b| {
        b.iter_batched(
            || rolling.clone(),
            |t| black_box(run(&t)),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("large_starter_build", |b| {
        b.iter(|| black_box(large_starter()))
    });
    let starter = large_starter();
    // The same world from a checkpoint, as a reload could have it (issue 20).
    let checkpoint = starter.checkpoint();
    println!(
        "scale/large_starter checkpoint: {} bytes, {} trace lines",
        checkpoint.len(),
        starter.trace().len()
    );
    // Before timing it: the read-back world is the same world. It writes the same bytes, and
    // the rolling update (about 60,000 more events) runs on it exactly as on the original.
    let read_back = World::from_checkpoint(&checkpoint).expect("the checkpoint reads back");
    assert!(
        read_back.checkpoint() == checkpoint,
        "the read-back world writes other bytes"
    );
    let (mut original, mut resumed) = (starter.clone(), read_back);
    large_starter_rolling_update(&mut original);
    large_starter_rolling_update(&mut resumed);
    assert!(
        original.trace() == resumed.trace(),
        "the rolling update traced otherwise"
    );
    assert!(
        original.checkpoint() == resumed.checkpoint(),
        "the rolling update ended elsewhere"
    );
    println!(
        "scale/large_starter checkpoint: read back, then rolled out identically ({} trace lines)",
        original.trace().len()
    );
    g.bench_function("large_starter_checkpoint_write", |b| {
        b.iter(|| black_box(starter.checkpoint()))
    });
    g.bench_function("large_starter_checkpoint_read", |b| {
        b.iter(|| black_box(World::from_checkpoint(&checkpoint).expect("reads back")))
    });
    g.bench_function("large_starter_rolling_update", |b| {
        b.iter_batched(
            || starter.clone(),
            |mut w| black_box(large_starter_rolling_update(&mut w)),
            BatchSize::LargeInput,
        )
    });
    g.finish();
    c.final_summary();
}
