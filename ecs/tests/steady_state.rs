//! The ECS frame work allocates nothing once warm: hierarchy propagation and view resolution
//! reuse their buffers.

use std::alloc::{GlobalAlloc, Layout, System as SystemAllocator};
use std::sync::atomic::{AtomicUsize, Ordering};

use ecs::hierarchy::{HierarchyReport, Propagator};
use ecs::{scene, view, Camera, CameraSelection, Transform, Viewport};
use glam::Vec3;

/// Counts every allocation made by any thread.
struct CountingAllocator;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator, which upholds the
// GlobalAlloc contract; the counter has no effect on the memory handed out.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's layout duties pass straight through.
        unsafe { SystemAllocator.alloc(layout) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: `pointer` came from `alloc` above with this layout.
        unsafe { SystemAllocator.dealloc(pointer, layout) }
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's duties for `realloc` pass straight through.
        unsafe { SystemAllocator.realloc(pointer, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

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
    // Entering the pool from outside may itself allocate (the runtime's guest deque): measure
    // an empty scope as the baseline, so only the ECS work is counted.
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    run_frames(&pool, &world, &mut propagator, &mut selection, 0);
    let baseline = ALLOCATIONS.load(Ordering::Relaxed) - before;
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    run_frames(&pool, &world, &mut propagator, &mut selection, 20);
    let allocated = ALLOCATIONS.load(Ordering::Relaxed) - before;
    assert_eq!(
        allocated, baseline,
        "20 warm frames of propagation and view resolution must allocate no more than an empty scope"
    );
}
