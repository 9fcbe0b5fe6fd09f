//! The ECS frame work allocates nothing once warm: hierarchy propagation and view resolution
//! reuse their buffers.

use ecs::hierarchy::{HierarchyReport, Propagator};
use ecs::{scene, view, Camera, CameraSelection, Transform, Viewport};
use glam::Vec3;
use runtime::alloc_counter::{count_allocations, settle_threads, CountingAllocator};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Runs the ECS frame work (propagation, view resolution) `frames` times inside one scope of
/// `pool`, so the calling thread takes part in the pool once rather than per parallel loop.
fn run_frames(
    pool: &runtime::JobSystem,
    world: &hecs::World,
    propagator: &mut Propagator,
    selection: &mut CameraSelection,
    frames: usize,
) {
    let mut commands = hecs::CommandBuffer::new();
    let mut report = HierarchyReport::default();
    pool.scope(|_| {
        for _ in 0..frames {
            propagator.run(world, &mut commands, &mut report);
            let view = view::resolve(world, 0, None, Viewport::default(), selection);
            assert!(view.is_some(), "the scene has a camera");
        }
    });
}

#[test]
fn warm_frames_do_not_allocate() {
    let mut world = hecs::World::new();
    scene::spawn_forest(&mut world, 2000, &[3, 2], scene::unit_cube_mesh());
    scene::spawn_camera(&mut world, Camera::default(), Transform::from_translation(Vec3::new(0.0, 5.0, 30.0)));
    let pool = runtime::JobSystem::new(2);
    let mut propagator = Propagator::default();
    let mut selection = CameraSelection::default();
    run_frames(&pool, &world, &mut propagator, &mut selection, 3);
    settle_threads();
    let ((), allocated) = count_allocations(|| run_frames(&pool, &world, &mut propagator, &mut selection, 20));
    assert_eq!(allocated, 0, "20 warm frames of propagation and view resolution must not allocate");
}
