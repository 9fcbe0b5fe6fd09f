//! A frame with an image-target view allocates nothing in steady state, on both backends: a
//! window camera and a monitor camera (a 32x32 image a screen's material shows, so the view is
//! drawn and copied every frame), both swinging so both views' lists change every frame (a
//! counting global allocator watches whole frames after warm-up). Lavapipe with validation.

use culling::CullingBackend;
use ecs::{scene, Camera, CameraTarget, ImageFormat, ImageTarget, MaterialHandle, Mesh, Transform, Viewport};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::vk;
use renderer::{install_render, BitsReadback, Material, MeshLibrary, RenderReport, RenderSetup};
use runtime::alloc_counter::{count_allocations, settle_threads, CountingAllocator};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[test]
fn frames_with_a_monitor_allocate_nothing_in_steady_state() {
    check_steady_frames(CullingBackend::Cpu);
}

/// With GPU culling the monitor's own lists are made and uploaded every frame, into room kept.
#[test]
fn gpu_culled_frames_with_a_monitor_allocate_nothing_in_steady_state() {
    check_steady_frames(CullingBackend::Gpu);
}

fn check_steady_frames(backend: CullingBackend) {
    let Some(device) = gpu_test_context() else { return };
    let mut meshes = MeshLibrary::with_unit_cube();
    meshes.add_material(Material::default()).expect("the cubes' plain material");
    let layer = meshes.add_view_texture("monitor").expect("a layer");
    let screen = meshes.add_material(Material { texture: Some(layer), ..Material::default() }).expect("a material");
    let mut app = runtime::App::with_threads(2);
    let setup = RenderSetup {
        shadows: false,
        backend,
        device: Some(device.clone()),
        extent: vk::Extent2D { width: 64, height: 32 },
        capacity: 1024,
        meshes,
        clear_color: [0.0; 4],
        bits: BitsReadback::None,
        passes: Vec::new(),
    };
    install_render(&mut app, setup).expect("a device is there");
    app.insert_resource(Viewport { width: 64, height: 32 });
    let window = scene::spawn_camera(app.world_mut(), Camera::default(), Transform::IDENTITY);
    let monitor = scene::spawn_camera(app.world_mut(), Camera { order: -1, ..Camera::default() }, Transform::IDENTITY);
    let target = ImageTarget::new("monitor", 32, 32, ImageFormat::Rgba8Srgb);
    app.world_mut().insert_one(monitor, CameraTarget::Image(target)).expect("a camera");
    scene::spawn_mesh_grid(app.world_mut(), 900, 2.0, scene::unit_cube_mesh());
    let screen = Mesh { material: MaterialHandle(screen), ..scene::unit_cube_mesh() };
    scene::spawn_mesh(app.world_mut(), screen, Transform::from_translation(Vec3::new(0.0, 3.0, 4.0)));
    let targets = [Vec3::new(30.0, 0.0, 30.0), Vec3::new(-30.0, 0.0, 30.0)];
    let aim = |app: &mut runtime::App, frame: usize| {
        for (camera, turn) in [(window, frame), (monitor, frame + 1)] {
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
    assert!(report.passes.iter().any(|pass| pass.name == "image view monitor"), "the monitor is drawn");
    assert!(report.passes.iter().any(|pass| pass.name.starts_with("view texture")), "and copied");
    assert_eq!(allocations, 0, "steady frames with a monitor must not allocate");
    drop(app);
    assert_no_validation_messages(&device);
}
