//! Shadows in a split-screen frame, on lavapipe with validation, on both culling backends:
//! two cameras on opposite sides of a street of casting blocks (three materials, so each
//! view's list holds several commands) on a wide ground (a material of its own, its command
//! last), lit by the sun and a spot light over a single block. The frame shadows once into
//! one atlas (the sun's cascades the main view's, the lamp shared), so each view's rectangle
//! must equal that view's unculled reference lit and shadowed the same way (every caster in
//! every light view), and nothing owning a pixel may be left out of the view's answer. The
//! lamp's list of one caster is the frame's last count draw before the views' lists: a view
//! drawn with a prefix of its commands loses the ground.

mod headless_app;
mod lit_cube;
mod window_views;

use std::sync::Arc;

use culling::{CullingBackend, ShadowViews, Visibility};
use ecs::{
    scene, Aabb, DirectionalLight, MaterialHandle, Mesh, MeshHandle, ResolvedViews, ShadowCaster, ShadowSettings,
    SpotLight, Transform,
};
use glam::{Quat, Vec3};
use headless_app::{headless_app_with, AppOptions};
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::GpuDevice;
use renderer::truth::ReferenceRenderer;
use renderer::{lock_capture, FrameInFlight, Material, MeshLibrary, RenderReport};
use window_views::{check_window_views, split_cameras};

const SKY: [f32; 4] = [0.5, 0.7, 0.9, 1.0];
const WIDTH: u32 = 128;
const HEIGHT: u32 = 64;
const CAPACITY: u32 = 64;
const ATLAS: u32 = 1024;
/// The ground's material: after the blocks' three.
const GROUND: u32 = 3;

/// The lit cube with the blocks' materials and the ground's.
fn library() -> MeshLibrary {
    let mut library = lit_cube();
    for _ in 0..GROUND {
        library.add_material(Material::default()).expect("a material");
    }
    library
}

/// A unit cube at `center` scaled to `size` in `material`.
fn spawn_cube(world: &mut runtime::hecs::World, center: Vec3, size: Vec3, material: u32) -> runtime::hecs::Entity {
    let mesh = Mesh::new(MeshHandle(0), MaterialHandle(material), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
    scene::spawn_mesh(world, mesh, Transform::from_translation(center).with_scale(size))
}

/// A casting block at `center` of `size` in `material`.
fn spawn_block(world: &mut runtime::hecs::World, center: Vec3, size: Vec3, material: u32) {
    let entity = spawn_cube(world, center, size, material);
    world.insert_one(entity, ShadowCaster).expect("spawned");
}

/// The app culled by `backend` with shadows: the ground, two rows of blocks, the sun and a
/// spot light over the street.
fn app(device: &Arc<GpuDevice>, backend: CullingBackend) -> (runtime::App, renderer::SharedCapture) {
    let options = AppOptions { shadows: true, sky: SKY, ..AppOptions::default() };
    let (mut app, capture) = headless_app_with(device, backend, library(), (WIDTH, HEIGHT, CAPACITY), options, |app| {
        let mut settings = app.resource_mut::<ShadowSettings>();
        settings.atlas_resolution = ATLAS;
        settings.cascade_resolution = 256;
        settings.max_distance = 40.0;
    });
    let world = app.world_mut();
    spawn_cube(world, Vec3::new(0.0, -0.5, 0.0), Vec3::new(60.0, 1.0, 60.0), GROUND);
    for (index, z) in [-9.0f32, -5.0, -1.0, 3.0, 7.0].into_iter().enumerate() {
        let material = index as u32 % GROUND;
        spawn_block(world, Vec3::new(-3.0, 1.5, z), Vec3::new(2.0, 3.0, 2.0), material);
        spawn_block(world, Vec3::new(3.0, 1.0, z + 1.0), Vec3::new(1.5, 2.0, 1.5), (material + 1) % GROUND);
    }
    // Under the lamp alone.
    spawn_block(world, Vec3::new(10.0, 0.5, 0.0), Vec3::ONE, 2);
    let towards = |direction: Vec3| Quat::from_rotation_arc(Vec3::NEG_Z, direction.normalize());
    let sun = Transform::from_translation_rotation(Vec3::ZERO, towards(Vec3::new(0.6, -1.0, 0.3)));
    world.spawn((sun, DirectionalLight::default()));
    let lamp = Transform::from_translation_rotation(Vec3::new(10.0, 5.0, 0.0), towards(Vec3::NEG_Y));
    let spot = SpotLight { range: 8.0, intensity: 60.0, outer_angle: 0.4, inner_angle: 0.3, ..SpotLight::default() };
    world.spawn((lamp, spot));
    (app, capture)
}

fn check(backend: CullingBackend) {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, capture) = app(&device, backend);
    // Down the street from either end, looking at the same blocks from opposite sides.
    let front = scene::look_at(Vec3::new(1.0, 3.0, 14.0), Vec3::new(0.0, 0.0, 0.0));
    let back = scene::look_at(Vec3::new(-1.0, 4.0, -14.0), Vec3::new(0.0, 0.5, 0.0));
    split_cameras(app.world_mut(), [front, back]);
    let mut reference =
        ReferenceRenderer::with_shadows(Arc::clone(&device), (WIDTH, HEIGHT), CAPACITY, library(), SKY, ATLAS)
            .expect("a reference");
    for frame in 0..3 {
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{backend:?} frame {frame}: {:?}", report.error);
        drop(report);
        assert_eq!(app.resource::<ResolvedViews>().len(), 2);
        {
            let shadows = app.resource::<ShadowViews>();
            assert_eq!(shadows.views().len(), 5, "{backend:?}: the cascades and the lamp cast");
            if backend == CullingBackend::Cpu {
                assert_eq!(shadows.caster_slots(4).count(), 1, "the lamp's one block");
            }
            reference.set_shadows(Some(&shadows), &app.resource::<Visibility>());
        }
        let capture = lock_capture(&capture);
        for (view, _, checked) in check_window_views(&mut reference, &app, (&capture.pixels, capture.extent), backend) {
            let label = format!("{backend:?} frame {frame} view {}", view.0);
            assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
            assert_eq!(checked.differing_pixels, 0, "{label}: the view differs from its shadowed reference");
        }
    }
    assert_no_validation_messages(&device);
}

#[test]
fn every_view_equals_its_shadowed_reference_on_the_cpu_backend() {
    check(CullingBackend::Cpu);
}

#[test]
fn every_view_equals_its_shadowed_reference_on_the_gpu_backend() {
    check(CullingBackend::Gpu);
}
