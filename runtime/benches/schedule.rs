//! The scheduler's own cost per frame: an empty app, and an app of eight trivial systems in
//! two stages (two batches of four, plus a system that spawns nothing but declares it).

use criterion::{criterion_group, criterion_main, Criterion};
use runtime::{App, Stage, System};

struct Position;
struct Velocity;

fn frames(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("scheduler_frame");
    let mut empty = App::with_threads(2);
    empty.run_frames(10);
    group.bench_function("empty", |bench| bench.iter(|| empty.run_frame()));

    let mut busy = App::with_threads(2);
    for index in 0..4 {
        busy.add_system(Stage::Transform, System::new(format!("reader {index}"), |_| {}).reads::<Position>());
        busy.add_system(Stage::Visibility, System::new(format!("writer {index}"), |_| {}).writes::<Velocity>());
    }
    busy.run_frames(10);
    group.bench_function("eight_trivial_systems", |bench| bench.iter(|| busy.run_frame()));
    group.finish();
}

criterion_group!(benches, frames);
criterion_main!(benches);
