//! The Render stage with GPU culling allocates nothing per frame in steady state (a counting
//! global allocator watches whole frames after warm-up, the camera swinging so tags, lists
//! and GPU draws change every frame). Runs on lavapipe with validation.

use culling::CullingBackend;
use ecs::{scene, Camera, Transform, Viewport};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::vk;
use renderer::MeshLibrary;
use renderer::{install_render, BitsReadback, RenderReport, RenderSetup};
use runtime::alloc_counter::{count_allocations, settle_threads, CountingAllocator};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[test]
fn gpu_culled_frames_allocate_nothing_in_steady_state() {
    let Some(device) = gpu_test_context() else { return };
    let mut app = runtime::App::with_threads(2);
    let setup = RenderSetup {
        shadows: false,
        backend: CullingBackend::Gpu,
        device: Some(device.clone()),
        extent: vk::Extent2D { width: 32, height: 32 },
        capacity: 1024,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.0; 4],
        bits: BitsReadback::Lagged,
        passes: Vec::new(),
    };
    install_render(&mut app, setup).expect("a device is there");
    app.insert_resource(Viewport { width: 32, height: 32 });
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), Transform::IDENTITY);
    scene::spawn_mesh_grid(app.world_mut(), 900, 2.0, scene::unit_cube_mesh());
    let targets = [Vec3::new(30.0, 0.0, 30.0), Vec3::new(-30.0, 0.0, 30.0)];
    let aim = |app: &mut runtime::App, frame: usize| {
        *app.world_mut().get::<&mut Transform>(camera).expect("the camera has a Transform") =
            scene::look_at(Vec3::new(0.0, 3.0, 0.0), targets[frame % 2]);
    };
    // Warm-up with the GPU both behind and caught up: the lagged readback is then one to
    // three frames late, and each latency makes its own tag changes (and archetypes).
    for frame in 0..16 {
        if frame >= 10 {
            device.wait_idle().expect("the device waits");
        }
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
    assert!(report.gpu.is_some_and(|stats| stats.objects == 900), "{:?}", report.gpu);
    assert_eq!(allocations, 0, "steady GPU-culled frames must not allocate");
    drop(app);
    assert_no_validation_messages(&device);
}
