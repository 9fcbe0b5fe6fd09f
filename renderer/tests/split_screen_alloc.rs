//! A split-screen frame on the CPU backend allocates nothing in steady state: two cameras,
//! each in one half of the window, swinging so both views' lists change every frame (a
//! counting global allocator watches whole frames after warm-up). Lavapipe with validation.

use culling::CullingBackend;
use ecs::{scene, Camera, CameraRect, Transform, Viewport};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::vk;
use renderer::MeshLibrary;
use renderer::{install_render, BitsReadback, RenderReport, RenderSetup};
use runtime::alloc_counter::{count_allocations, settle_threads, CountingAllocator};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[test]
fn split_screen_frames_allocate_nothing_in_steady_state() {
    let Some(device) = gpu_test_context() else { return };
    let mut app = runtime::App::with_threads(2);
    let setup = RenderSetup {
        shadows: false,
        backend: CullingBackend::Cpu,
        device: Some(device.clone()),
        extent: vk::Extent2D { width: 64, height: 32 },
        capacity: 1024,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.0; 4],
        bits: BitsReadback::None,
        passes: Vec::new(),
    };
    install_render(&mut app, setup).expect("a device is there");
    app.insert_resource(Viewport { width: 64, height: 32 });
    let left = scene::spawn_camera(app.world_mut(), Camera::default(), Transform::IDENTITY);
    let right = scene::spawn_camera(app.world_mut(), Camera { order: 1, ..Camera::default() }, Transform::IDENTITY);
    app.world_mut().insert_one(left, CameraRect::new(0.0, 0.0, 0.5, 1.0)).expect("a camera");
    app.world_mut().insert_one(right, CameraRect::new(0.5, 0.0, 0.5, 1.0)).expect("a camera");
    scene::spawn_mesh_grid(app.world_mut(), 900, 2.0, scene::unit_cube_mesh());
    let targets = [Vec3::new(30.0, 0.0, 30.0), Vec3::new(-30.0, 0.0, 30.0)];
    let aim = |app: &mut runtime::App, frame: usize| {
        for (camera, turn) in [(left, frame), (right, frame + 1)] {
            *app.world_mut().get::<&mut Transform>(camera).expect("the camera has a Transform") =
                scene::look_at(Vec3::new(0.0, 3.0, 0.0), targets[turn % 2]);
        }
    };
    for frame in 0..16 {
        aim(&mut app, frame);
        app.run_frame();
    }
    settle_threads();
    let ((), allocations) = count_allocations(|| {
        for frame in 0..10 {
            aim(&mut app, frame);
            app.run_frame();
        }
    });
    let report = app.resource::<RenderReport>().clone();
    assert!(report.error.is_none(), "{:?}", report.error);
    assert_eq!(report.extent, vk::Extent2D { width: 64, height: 32 }, "the whole window is drawn");
    assert!(report.host_draw_commands > 0, "the views draw");
    assert_eq!(allocations, 0, "steady split-screen frames must not allocate");
    drop(app);
    assert_no_validation_messages(&device);
}
