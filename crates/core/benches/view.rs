//! View-model benchmarks: what the playground computes per render for a world of about 1,000
//! objects (the `Large` starter) and for the 10-object `Small` starter. The ratio between the
//! two is the "1,000 objects vs 10 objects" step-render question, minus the DOM.
//!
//! Run: `cargo bench -p converge-core --bench view -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use converge_core::engine::StepReport;
use converge_core::view::session::{perform, replay, SessionAction, Starter};
use converge_core::view::status::status_view;
use converge_core::view::timeline;
use converge_core::view::tree::{self, Layout, Tree};

use criterion::{criterion_group, criterion_main, Criterion};

fn bench_starter(c: &mut Criterion, starter: Starter, label: &str) {
    let mut reports: Vec<(u64, StepReport)> = Vec::new();
    let world = replay(starter, 1, &starter.actions(), |w, r| {
        reports.push((w.steps(), r))
    });
    let deployment = world
        .objects()
        .find(|(k, _)| k.gr.resource == "deployments")
        .map(|(k, _)| k.clone());
    let mut g = c.benchmark_group(format!("view/{label}_{}_objects", world.object_count()));
    g.sample_size(20);
    let layout = Layout::default();
    g.bench_function("tree_from_scratch", |b| {
        b.iter(|| black_box(tree::rows(&world, &layout)))
    });
    // What a render after one step costs: refresh the previous tree, then the rows.
    let before = Tree::new(&world);
    let mut stepped = world.clone();
    perform(&mut stepped, &SessionAction::Step);
    g.bench_function("tree_refresh_after_step", |b| {
        b.iter_batched_ref(
            || before.clone(),
            |t| {
                t.refresh(&stepped);
                black_box(t.rows(&layout))
            },
            criterion::BatchSize::SmallInput,
        )
    });
    g.bench_function("tree_rows_only", |b| {
        b.iter(|| black_box(before.rows(&layout)))
    });
    let refs: Vec<(u64, &StepReport)> = reports.iter().map(|(s, r)| (*s, r)).collect();
    g.bench_function("timeline_lanes_80", |b| {
        b.iter(|| black_box(timeline::lanes(&refs, 80, |_| None)))
    });
    if let Some(key) = &deployment {
        let obj = world.object(key).cloned().unwrap_or_default();
        g.bench_function("status_view", |b| {
            b.iter(|| black_box(status_view(&obj, Some(&obj), world.now())))
        });
    }
    g.bench_function("is_converged", |b| {
        b.iter(|| black_box(world.is_converged()))
    });
    g.bench_function("step", |b| {
        b.iter_batched(
            || world.clone(),
            |mut w| black_box(perform(&mut w, &SessionAction::Step)),
            criterion::BatchSize::SmallInput,
        )
    });
    g.finish();
}

fn view(c: &mut Criterion) {
    bench_starter(c, Starter::Small, "small");
    bench_starter(c, Starter::Large, "large");
}

criterion_group!(benches, view);
criterion_main!(benches);
