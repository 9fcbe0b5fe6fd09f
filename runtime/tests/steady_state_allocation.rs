//! After warm-up, `parallel_for`, `join` and a frame of the scheduler allocate nothing.
//! (`Scope::spawn` boxes its closure by design and is not part of this promise.)

use runtime::alloc_counter::{count_allocations, settle_threads, CountingAllocator};
use std::sync::atomic::{AtomicUsize, Ordering};

use runtime::jobs::JobSystem;
use runtime::{App, Stage, System};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

struct Counter(u64);
struct Position(f32);

#[test]
fn warm_parallel_loops_and_frames_do_not_allocate() {
    let pool = JobSystem::new(2);
    let mut data = vec![1.0f32; 100_000];
    let total = AtomicUsize::new(0);
    let mut app = App::with_threads(2);
    app.insert_resource(Counter(0));
    app.world_mut().spawn_batch((0..1000).map(|index| (Position(index as f32),)));
    app.add_system(
        Stage::Input,
        System::new("count", |ctx| ctx.resource_mut::<Counter>().0 += 1).writes_resource::<Counter>(),
    );
    app.add_system(
        Stage::Transform,
        System::new("move", |ctx| {
            runtime::jobs::parallel_for(0..64, 8, |_| {});
            for position in ctx.query::<&mut Position>().iter() {
                position.0 += 1.0;
            }
        })
        .writes::<Position>(),
    );
    app.add_system(Stage::Transform, System::new("reader", |_| {}).reads_resource::<Counter>());
    app.set_fixed_delta(Some(0.016));

    let mut iteration = || {
        pool.parallel_for_chunks(&mut data, 1024, |_, chunk| chunk.iter_mut().for_each(|value| *value += 1.0));
        pool.parallel_for(0..10_000, 256, |index| {
            total.fetch_add(index, Ordering::Relaxed);
        });
        let (left, right) = pool.join(|| 1, || 2);
        assert_eq!(left + right, 3);
        app.run_frame();
    };
    for _ in 0..10 {
        iteration();
    }
    settle_threads();
    let ((), allocations) = count_allocations(|| {
        for _ in 0..50 {
            iteration();
        }
    });
    assert_eq!(allocations, 0, "steady-state parallel loops and frames must not allocate");
}
