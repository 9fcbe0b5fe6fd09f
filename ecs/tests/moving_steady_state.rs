//! An app whose few movers move every frame allocates nothing once warm: the hierarchy
//! system's incremental pass, and its reading and writing of the change log, reuse their
//! buffers.

use ecs::hierarchy::{HierarchyReport, PassKind};
use ecs::{scene, Transform};
use runtime::alloc_counter::{count_allocations, settle_threads, CountingAllocator};
use runtime::{App, Stage, System};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Marks the roots the driver moves.
struct Mover;

type MoverQuery<'a> = hecs::With<&'a mut Transform, &'a Mover>;

#[test]
fn warm_incremental_frames_do_not_allocate() {
    let mut app = App::with_threads(2);
    ecs::install(&mut app);
    let forest = scene::spawn_forest(app.world_mut(), 2000, &[3, 2], scene::unit_cube_mesh());
    for &root in forest.roots.iter().step_by(50) {
        app.world_mut().insert_one(root, Mover).expect("just spawned");
    }
    app.add_system(
        Stage::Input,
        System::new("drive", |ctx| {
            let step = if ctx.time.frame_index % 2 == 0 { 0.5 } else { -0.5 };
            for transform in ctx.query::<MoverQuery>().iter() {
                transform.translation.x += step;
            }
        })
        .query::<MoverQuery>(),
    );
    app.run_frames(4);
    assert_eq!(app.resource::<HierarchyReport>().last_pass, PassKind::Incremental);
    settle_threads();
    let ((), allocated) = count_allocations(|| app.run_frames(20));
    let report = *app.resource::<HierarchyReport>();
    assert_eq!((report.last_pass, report.updated), (PassKind::Incremental, 40 * 10), "40 moving trees of 10");
    assert_eq!(allocated, 0, "20 warm frames of incremental propagation must not allocate");
}
