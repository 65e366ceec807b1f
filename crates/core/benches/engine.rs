//! Engine benchmarks: a Deployment scaled 0 -> 1,000 and 0 -> 10,000 Pods to convergence, a
//! rolling update of 1,000 Pods, and the cost of one step in a world of 100 vs 10,000 objects.
//!
//! Run briefly: `cargo bench -p converge-core --bench engine -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use converge_core::api::ApiRequest;
use converge_core::controllers::util::deployments;
use converge_core::engine::script::{deployment, patch_as};
use converge_core::engine::{ClusterConfig, Input, NodeSpec, StopReason, World};
use std::time::Instant;

use criterion::{criterion_group, Criterion};

/// The allocator the native `converge` CLI ships (crates/cli/src/main.rs), so these figures are
/// the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use converge_core::json::json;

fn cluster(nodes: usize) -> ClusterConfig {
    let nodes = (1..=nodes)
        .map(|i| {
            let mut n = NodeSpec::new(&format!("node-{i}"), "1000", "4000Gi");
            n.pods = 5_000;
            n
        })
        .collect();
    ClusterConfig {
        nodes,
        ..ClusterConfig::default()
    }
}

fn create(world: &mut World, name: &str, replicas: i64) {
    let d = deployment("default", name, replicas, "nginx:1.25");
    let req = ApiRequest::create("alice", deployments(), "default", d);
    world.apply(Input::Request { request: req });
}

fn converge(world: &mut World) {
    let r = world.run_until_converged(50_000_000, 3_600_000);
    assert_eq!(r.stop, Some(StopReason::Converged));
}

fn scale(world: &mut World, name: &str, replicas: i64) {
    world.apply(patch_as(
        "alice",
        deployments(),
        "default",
        name,
        json!({"spec": {"replicas": replicas}}),
    ));
}

/// A converged world with `deployments` Deployments of `pods` Pods each.
fn converged_world(deployments: usize, pods: i64) -> World {
    let mut w = World::new(cluster(4));
    for i in 0..deployments {
        create(&mut w, &format!("bg-{i}"), pods);
    }
    create(&mut w, "probe", 1);
    converge(&mut w);
    w
}

/// Large scenarios take seconds per run, so they are timed once each (criterion needs at least
/// ten samples): a Deployment scaled 0 -> 1,000 and 0 -> 10,000 Pods, and a rolling update of
/// 1,000 Pods, each to convergence.
fn one_shot() {
    let time = |label: &str, setup: &dyn Fn() -> World, run: &dyn Fn(&mut World)| {
        let mut w = setup();
        let events_before = w.trace().len();
        let start = Instant::now();
        run(&mut w);
        let elapsed = start.elapsed();
        let events = w.trace().len() - events_before;
        println!(
            "{label}: {:.2} s, {events} events, {:.1} us/event, {} objects",
            elapsed.as_secs_f64(),
            elapsed.as_secs_f64() * 1e6 / events.max(1) as f64,
            w.object_count()
        );
    };
    let empty = || {
        let mut w = World::new(cluster(10));
        create(&mut w, "web", 0);
        converge(&mut w);
        w
    };
    for pods in [1_000i64, 10_000] {
        time(
            &format!("scale/0_to_{pods}_pods_to_convergence"),
            &empty,
            &|w| {
                scale(w, "web", pods);
                converge(w);
            },
        );
    }
    let thousand = || {
        let mut w = World::new(cluster(10));
        create(&mut w, "web", 1_000);
        converge(&mut w);
        w
    };
    time("rollout/rolling_update_1000_pods", &thousand, &|w| {
        w.apply(patch_as(
            "alice",
            deployments(),
            "default",
            "web",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.26", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}}),
        ));
        converge(w);
    });
}

/// The same small change (scale `probe` between 1 and 2 Pods and converge: a fixed number of
/// events) in a world of about 100 and about 10,000 objects. Per-event cost must stay flat.
fn step_cost(c: &mut Criterion) {
    let mut g = c.benchmark_group("step_cost");
    g.sample_size(20);
    for (label, deps, pods) in [("100_objects", 4usize, 20i64), ("10000_objects", 40, 245)] {
        let mut w = converged_world(deps, pods);
        let objects = w.object_count();
        let mut replicas = 1;
        let mut events = 0usize;
        let mut runs = 0usize;
        g.bench_function(label, |b| {
            b.iter(|| {
                replicas = 3 - replicas;
                scale(&mut w, "probe", replicas);
                let r = w.run_until_converged(1_000_000, 600_000);
                events += r.events.len();
                runs += 1;
                black_box(r.events.len())
            })
        });
        eprintln!(
            "step_cost/{label}: {objects} objects, {:.1} events per iteration",
            events as f64 / runs.max(1) as f64
        );
    }
    g.finish();
}

/// The scale criterion of issue 4 measured directly: the same change (scale `probe` between 1
/// and 2 Pods, run to convergence) in a converged world of about 100 and about 10,000 objects,
/// the two worlds taking turns so both see the same machine load. Prints the median cost per
/// processed event in each world and their ratio (target: at most 2).
fn event_cost_ratio(rounds: usize) {
    let worlds = [(4, 20), (40, 245)];
    event_cost(&worlds, rounds);
}

/// One change to convergence; its own function so a profiler can collect inside it only
/// (`valgrind --tool=callgrind --toggle-collect='*change_to_convergence*'`).
#[inline(never)]
fn change_to_convergence(w: &mut World, replicas: i64) -> usize {
    scale(w, "probe", replicas);
    let r = w.run_until_converged(1_000_000, 600_000);
    assert_eq!(r.stop, Some(StopReason::Converged));
    r.events.len()
}

/// Median cost per event of the same change in each world, the worlds taking turns.
fn event_cost(sizes: &[(usize, i64)], rounds: usize) {
    let build = |deps: usize, pods: i64| {
        let start = Instant::now();
        let w = converged_world(deps, pods);
        eprintln!(
            "event_cost: built a converged world of {} objects in {:.2} s",
            w.object_count(),
            start.elapsed().as_secs_f64()
        );
        w
    };
    let mut worlds: Vec<World> = sizes.iter().map(|&(d, p)| build(d, p)).collect();
    let mut replicas = 1;
    let mut per_event: Vec<Vec<f64>> = vec![Vec::new(); worlds.len()];
    let mut events = vec![0usize; worlds.len()];
    for _ in 0..rounds {
        replicas = 3 - replicas;
        for (i, w) in worlds.iter_mut().enumerate() {
            let start = Instant::now();
            let n = change_to_convergence(w, replicas).max(1);
            let ns = start.elapsed().as_nanos() as f64;
            events[i] += n;
            per_event[i].push(ns / n as f64);
        }
    }
    let medians: Vec<f64> = per_event
        .iter_mut()
        .map(|v| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
        .collect();
    for (i, w) in worlds.iter().enumerate() {
        println!(
            "event_cost/{}_objects: median {:.1} us/event over {rounds} changes ({:.1} events per change)",
            w.object_count(),
            medians[i] / 1e3,
            events[i] as f64 / rounds as f64
        );
    }
    if let [small, .., large] = medians[..] {
        println!("event_cost/ratio: {:.2} (target <= 2)", large / small);
    }
}

criterion_group!(benches, step_cost);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let has = |f: &str| args.iter().any(|a| a == f);
    // `cargo bench ... -- event_cost` runs only the interleaved ratio (quickest check of the
    // scale criterion); `-- step_cost` only the criterion group.
    // For profilers: one world only.
    if has("event_cost_small") {
        event_cost(&[(4, 20)], 30);
        return;
    }
    if has("event_cost_large") {
        event_cost(&[(40, 245)], 30);
        return;
    }
    // `event_cost_world <deployments> <pods each>`: one world of any size (a third point for
    // checking that instructions per event do not grow with the world).
    if let Some(i) = args.iter().position(|a| a == "event_cost_world") {
        let num = |j: usize| args.get(i + j).and_then(|a| a.parse::<usize>().ok());
        if let (Some(deps), Some(pods)) = (num(1), num(2)) {
            event_cost(&[(deps, pods as i64)], 30);
            return;
        }
        eprintln!("usage: event_cost_world <deployments> <pods each>");
        std::process::exit(2);
    }
    if has("event_cost") {
        event_cost_ratio(30);
        return;
    }
    if has("one_shot") {
        one_shot();
        return;
    }
    benches();
    if !has("step_cost") {
        event_cost_ratio(30);
        one_shot();
    }
    Criterion::default().configure_from_args().final_summary();
}
