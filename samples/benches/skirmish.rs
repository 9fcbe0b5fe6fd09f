//! A game's world against the city at the same object count: the skirmish (`samples::skirmish`:
//! 150k props with levels of detail, 4,000 walking units carrying parented items, 200 arrows
//! spawned and 200 despawned a frame, 12 torches casting shadows and a sun, a zooming camera)
//! and the city built with as many objects, each a frame at a time, headless (no renderer),
//! CPU culling, 2 threads. Rows: `skirmish_frame`, `skirmish_still_units` (no unit or torch
//! moves: what the moving casters and lights cost) and `city_frame`, the baseline. After the
//! rows, the two scenes run 60 more frames each in turns and the sample's side-by-side table
//! of stage medians and p95 is printed.
//!
//! `cargo bench -p samples --bench skirmish` (add `-- --quick` while developing).

use criterion::{criterion_group, criterion_main, Criterion};
use ecs::Viewport;
use runtime::App;
use samples::skirmish::compare::{city_app, run_measured, side_by_side};
use samples::skirmish::{skirmish_app, SkirmishConfig, Still};

/// Worker threads of every app.
const THREADS: usize = 2;
/// The view's size (the screen-size cull and the occlusion buffer follow it).
const VIEWPORT: Viewport = Viewport { width: 1280, height: 720 };
/// Frames run before measuring: the units are mustered on the first and the arrows' volleys
/// reach their steady count.
const WARM_UP: u64 = 30;

fn skirmish(still: Still) -> App {
    let config = SkirmishConfig { still, ..SkirmishConfig::default() };
    let (mut app, _, _) = skirmish_app(config, THREADS, VIEWPORT);
    app.run_frames(WARM_UP);
    app
}

fn frames(criterion: &mut Criterion) {
    let objects = SkirmishConfig::default().objects;
    let mut group = criterion.benchmark_group("skirmish_160k_2_threads");
    group.sample_size(20);
    let mut game = skirmish(Still::default());
    group.bench_function("skirmish_frame", |bench| bench.iter(|| game.run_frame()));
    let mut still = skirmish(Still { units: true, ..Still::default() });
    group.bench_function("skirmish_still_units", |bench| bench.iter(|| still.run_frame()));
    drop(still);
    let (mut city, _, _) = city_app(objects, THREADS, VIEWPORT, 0);
    city.run_frames(WARM_UP);
    group.bench_function("city_frame", |bench| bench.iter(|| city.run_frame()));
    group.finish();
    let (mut game_records, mut city_records) = (Vec::new(), Vec::new());
    for _ in 0..6 {
        game_records.extend((0..10).map(|_| run_measured(&mut game)));
        city_records.extend((0..10).map(|_| run_measured(&mut city)));
    }
    eprint!("{}", side_by_side(&game_records, &city_records));
}

criterion_group!(benches, frames);
criterion_main!(benches);
