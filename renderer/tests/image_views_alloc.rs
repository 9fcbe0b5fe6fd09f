//! A frame with an image-target view allocates nothing in steady state, on both backends: a
//! window camera and a monitor camera (a 32x32 image a screen's material shows, so the view is
//! drawn and copied every frame), both swinging so both views' lists change every frame (a
//! counting global allocator watches whole frames after warm-up). Lavapipe with validation.

mod steady_frames;

use culling::CullingBackend;
use ecs::{scene, Camera, CameraTarget, ImageFormat, ImageTarget, MaterialHandle, Mesh, Transform};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use renderer::{Material, MeshLibrary, RenderReport};
use runtime::alloc_counter::{one_test_at_a_time, CountingAllocator};
use steady_frames::{count_steady_allocations, steady_app};

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
    let _alone = one_test_at_a_time();
    let Some(device) = gpu_test_context() else { return };
    let mut meshes = MeshLibrary::with_unit_cube();
    meshes.add_material(Material::default()).expect("the cubes' plain material");
    let layer = meshes.add_view_texture("monitor").expect("a layer");
    let screen = meshes.add_material(Material { texture: Some(layer), ..Material::default() }).expect("a material");
    let mut app = steady_app(&device, backend, meshes);
    let window = scene::spawn_camera(app.world_mut(), Camera::default(), Transform::IDENTITY);
    let monitor = scene::spawn_camera(app.world_mut(), Camera { order: -1, ..Camera::default() }, Transform::IDENTITY);
    let target = ImageTarget::new("monitor", 32, 32, ImageFormat::Rgba8Srgb);
    app.world_mut().insert_one(monitor, CameraTarget::Image(target)).expect("a camera");
    let screen = Mesh { material: MaterialHandle(screen), ..scene::unit_cube_mesh() };
    scene::spawn_mesh(app.world_mut(), screen, Transform::from_translation(Vec3::new(0.0, 3.0, 4.0)));
    let allocations = count_steady_allocations(&mut app, [window, monitor]);
    let report = app.resource::<RenderReport>().clone();
    assert!(report.error.is_none(), "{:?}", report.error);
    assert!(report.passes.iter().any(|pass| pass.name == "image view monitor"), "the monitor is drawn");
    assert!(report.passes.iter().any(|pass| pass.name.starts_with("view texture")), "and copied");
    assert_eq!(allocations, 0, "steady frames with a monitor must not allocate");
    drop(app);
    assert_no_validation_messages(&device);
}
