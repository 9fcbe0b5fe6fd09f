//! Blended objects in a split-screen frame, on lavapipe with validation, on both culling
//! backends: two cameras on opposite sides of an opaque cube wrapped in half-clear glass
//! cubes, and glass behind the front camera that only the back one sees. Every view draws
//! the glass it sees, sorted for its own eye (and, GPU-culled, gated
//! by its own bits), so each view's rectangle equals the unculled reference of that view and
//! nothing owning a pixel was left out of its answer.

mod headless_app;
mod window_views;

use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{scene, Aabb, BaseColor, MaterialHandle, Mesh, MeshHandle, ResolvedViews, Transform};
use glam::Vec3;
use headless_app::{headless_app, SKY};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::GpuDevice;
use renderer::truth::ReferenceRenderer;
use renderer::{lock_capture, FrameInFlight, Material, MeshLibrary, RenderReport};
use window_views::{check_window_views, split_cameras};

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
    let (mut app, capture) = headless_app(device, backend, library(), (WIDTH, HEIGHT, 64), |_| {});
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
    split_cameras(app.world_mut(), [front, back]);
    let mut reference =
        ReferenceRenderer::with_device(Arc::clone(&device), WIDTH, HEIGHT, 64, library(), SKY).expect("a reference");
    for frame in 0..3 {
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{backend:?} frame {frame}: {:?}", report.error);
        assert_eq!(app.resource::<ResolvedViews>().len(), 2);
        drop(report);
        let capture = lock_capture(&capture);
        let checks = check_window_views(&mut reference, &app, (&capture.pixels, capture.extent), backend);
        let visibility = app.resource::<Visibility>();
        for (view, _, checked) in checks {
            let label = format!("{backend:?} frame {frame} view {}", view.0);
            assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
            assert_eq!(checked.differing_pixels, 0, "{label}: the view's glass differs from its reference");
            let answer = visibility.for_view(view).expect("an answer");
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
