//! Blended objects in a split-screen frame, on lavapipe with validation, on both culling
//! backends: two cameras on opposite sides of an opaque cube wrapped in half-clear glass
//! cubes, and glass behind the front camera that only the back one sees. Every view draws
//! the glass it sees, sorted for its own eye (and, GPU-culled, gated
//! by its own bits), so each view's rectangle equals the unculled reference of that view and
//! nothing owning a pixel was left out of its answer.

use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::ViewTarget;
use ecs::{scene, Aabb, BaseColor, Camera, CameraRect, MaterialHandle, Mesh, MeshHandle, ResolvedViews, Transform};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::truth::{check_gpu_view, check_view, ReferenceRenderer};
use renderer::{
    install_render_to, lock_capture, BitsReadback, FrameInFlight, HeadlessTarget, Material, MeshLibrary, RenderReport,
    RenderSetup,
};

const SKY: [f32; 4] = [0.1, 0.2, 0.3, 1.0];
const WIDTH: u32 = 128;
const HEIGHT: u32 = 64;
/// The glass material's id: after the plain one.
const GLASS: u32 = 1;

fn library() -> MeshLibrary {
    let mut library = MeshLibrary::with_unit_cube();
    library.add_material(Material::default()).expect("plain");
    library.add_material(Material { blend: true, ..Material::default() }).expect("glass");
    library
}

/// The app culled by `backend`: an opaque cube with glass cubes on each side of it.
fn app(device: &Arc<GpuDevice>, backend: CullingBackend) -> (runtime::App, renderer::SharedCapture) {
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: 64,
        meshes: library(),
        clear_color: SKY,
        bits: BitsReadback::Wait,
        passes: Vec::new(),
        shadows: false,
    };
    let mut app = runtime::App::with_threads(2);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    ecs::install(&mut app);
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    let bounds = Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5));
    let cube = |material| Mesh::new(MeshHandle(0), MaterialHandle(material), bounds);
    let world = app.world_mut();
    let red = scene::spawn_mesh(world, cube(0), Transform::from_translation(Vec3::ZERO));
    world.insert_one(red, BaseColor([1.0, 0.0, 0.0, 1.0])).expect("spawned");
    for (index, z) in [-1.5f32, -0.8, 0.8, 1.5].into_iter().enumerate() {
        let place = Transform { scale: Vec3::splat(1.2), ..Transform::from_translation(Vec3::new(0.3 * z, 0.1, z)) };
        let glass = scene::spawn_mesh(world, cube(GLASS), place);
        let colour = BaseColor([0.2 + 0.2 * index as f32, 1.0, 1.0 - 0.2 * index as f32, 0.4]);
        world.insert_one(glass, colour).expect("spawned");
    }
    // Behind the front camera, in the back camera's view alone: drawn by its own view's bits.
    let behind = scene::spawn_mesh(world, cube(GLASS), Transform::from_translation(Vec3::new(0.0, 1.0, 10.0)));
    world.insert_one(behind, BaseColor([1.0, 1.0, 0.0, 0.5])).expect("spawned");
    (app, capture)
}

fn check(backend: CullingBackend) {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, capture) = app(&device, backend);
    let front = scene::look_at(Vec3::new(1.0, 2.0, 7.0), Vec3::ZERO);
    let back = scene::look_at(Vec3::new(-1.0, 2.5, -7.0), Vec3::ZERO);
    let first = scene::spawn_camera(app.world_mut(), Camera::default(), front);
    let second = scene::spawn_camera(app.world_mut(), Camera { order: 1, ..Camera::default() }, back);
    app.world_mut().insert_one(first, CameraRect::new(0.0, 0.0, 0.5, 1.0)).expect("a camera");
    app.world_mut().insert_one(second, CameraRect::new(0.5, 0.0, 0.5, 1.0)).expect("a camera");
    let mut reference =
        ReferenceRenderer::with_device(Arc::clone(&device), WIDTH, HEIGHT, 64, library(), SKY).expect("a reference");
    for frame in 0..3 {
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{backend:?} frame {frame}: {:?}", report.error);
        let views = app.resource::<ResolvedViews>();
        let visibility = app.resource::<Visibility>();
        assert_eq!(views.len(), 2);
        let capture = lock_capture(&capture);
        let image = (&capture.pixels[..], capture.extent);
        for view in views.views() {
            let ViewTarget::Window(rect) = &view.target else { panic!("window views") };
            let rect = [rect.x, rect.y, rect.width, rect.height];
            let checked = if backend == CullingBackend::Gpu {
                let index = usize::from(views.main() != Some(view.id));
                check_gpu_view(&mut reference, image, rect, (app.world(), &*visibility), (view.id, index), &report)
            } else {
                check_view(&mut reference, image, rect, app.world(), &visibility, view.id)
            };
            let checked = checked.expect("the truth answers");
            let label = format!("{backend:?} frame {frame} view {}", view.id.0);
            assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
            assert_eq!(checked.differing_pixels, 0, "{label}: the view's glass differs from its reference");
            let answer = visibility.for_view(view.id).expect("an answer");
            assert!(answer.visible().len() >= 4, "{label}: the view sees glass: {:?}", answer.visible());
        }
    }
    assert_no_validation_messages(&device);
}

#[test]
fn every_view_draws_its_blended_objects_on_the_cpu_backend() {
    check(CullingBackend::Cpu);
}

#[test]
fn every_view_draws_its_blended_objects_on_the_gpu_backend() {
    check(CullingBackend::Gpu);
}
