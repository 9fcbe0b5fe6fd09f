//! A split-screen frame on the CPU backend allocates nothing in steady state: two cameras,
//! each in one half of the window, swinging so both views' lists change every frame (a
//! counting global allocator watches whole frames after warm-up). Lavapipe with validation.

mod steady_frames;
mod window_views;

use culling::CullingBackend;
use ecs::Transform;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use renderer::{MeshLibrary, RenderReport};
use runtime::alloc_counter::CountingAllocator;
use steady_frames::{count_steady_allocations, steady_app, EXTENT};
use window_views::split_cameras;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[test]
fn split_screen_frames_allocate_nothing_in_steady_state() {
    let Some(device) = gpu_test_context() else { return };
    let mut app = steady_app(&device, CullingBackend::Cpu, MeshLibrary::with_unit_cube());
    let cameras = split_cameras(app.world_mut(), [Transform::IDENTITY; 2]);
    let allocations = count_steady_allocations(&mut app, cameras);
    let report = app.resource::<RenderReport>().clone();
    assert!(report.error.is_none(), "{:?}", report.error);
    assert_eq!(report.extent, EXTENT, "the whole window is drawn");
    assert!(report.host_draw_commands > 0, "the views draw");
    assert_eq!(allocations, 0, "steady split-screen frames must not allocate");
    drop(app);
    assert_no_validation_messages(&device);
}
