//! The scheduler's own cost per frame: an empty app, and an app of eight trivial systems in
//! two stages (two batches of four, plus a system that spawns nothing but declares it), and
//! 4 stages x 10 no-op systems on 1 and 2 threads.

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

    // The empty-frame row: 4 stages x 10 systems that do nothing (no declared access), on 1 and 2
    // threads; the goal is under 5 us a frame.
    for threads in [1, 2] {
        let mut app = App::with_threads(threads);
        for stage in [Stage::Input, Stage::Transform, Stage::Visibility, Stage::Render] {
            for index in 0..10 {
                app.add_system(stage, System::new(format!("{} no-op {index}", stage.name()), |_| {}));
            }
        }
        app.run_frames(10);
        group.bench_function(format!("4_stages_x_10_noop_systems/threads_{threads}"), |bench| {
            bench.iter(|| app.run_frame())
        });
    }
    group.finish();
}

criterion_group!(benches, frames);
criterion_main!(benches);
