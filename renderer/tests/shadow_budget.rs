//! The shadow budget on lavapipe with validation, on both culling backends: of five lamps, the
//! best ranked that fit the budget of views cast, and the atlas (and the image) equals,
//! texel for texel, the one of an unbudgeted frame where only those lamps cast.

mod lit_cube;

use std::sync::Arc;

use culling::shadow::screen_contribution;
use culling::{CullingBackend, ShadowViews};
use ecs::{
    scene, Aabb, Camera, DirectionalLight, MaterialHandle, Mesh, MeshHandle, PointLight, ShadowCaster, ShadowSettings,
    SpotLight, Transform,
};
use glam::{Quat, Vec3};
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::{install_render, BitsReadback, RenderReport, RenderSetup};
use runtime::hecs::Entity;

const WIDTH: u32 = 64;
const HEIGHT: u32 = 48;

/// A lamp of the scene: a point light, or a spot light shining down.
#[derive(Clone, Copy, Debug)]
struct Lamp {
    point: bool,
    position: Vec3,
    intensity: f32,
    range: f32,
}

/// The lamps, best ranked first as seen from [`eye`] (white, so the score is the intensity
/// times the share of the image): a near bright point light (six views), two near spots,
/// a point light further than its range, and a far spot.
const LAMPS: [Lamp; 5] = [
    Lamp { point: true, position: Vec3::new(2.0, 3.0, 2.0), intensity: 80.0, range: 12.0 },
    Lamp { point: false, position: Vec3::new(-3.0, 6.0, 0.0), intensity: 60.0, range: 30.0 },
    Lamp { point: false, position: Vec3::new(4.0, 6.0, -3.0), intensity: 40.0, range: 30.0 },
    Lamp { point: true, position: Vec3::new(-4.0, 2.0, -4.0), intensity: 30.0, range: 10.0 },
    Lamp { point: false, position: Vec3::new(0.0, 6.0, -20.0), intensity: 60.0, range: 10.0 },
];

/// Where the camera stands; it looks at the origin.
fn eye() -> Vec3 {
    Vec3::new(0.0, 9.0, 11.0)
}

/// What a frame gave: the atlas, the image, the report and the lamps that cast.
struct Shot {
    atlas: Vec<u8>,
    color: Vec<u8>,
    report: RenderReport,
    cast: Vec<usize>,
}

/// Renders the ground, boxes all around and the sun with the [`LAMPS`] (each casting when
/// `casts` says so) for four frames with at most `views` light views; returns the last.
fn render(device: &Arc<GpuDevice>, backend: CullingBackend, casts: [bool; 5], views: u32) -> Shot {
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: 256,
        meshes: lit_cube(),
        clear_color: [0.0, 0.0, 0.0, 1.0],
        bits: BitsReadback::Wait,
        passes: Vec::new(),
        shadows: true,
    };
    let mut app = runtime::App::with_threads(2);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    ecs::install(&mut app);
    {
        let mut settings = app.resource_mut::<ShadowSettings>();
        settings.atlas_resolution = 1024;
        settings.cascade_resolution = 256;
        settings.max_distance = 40.0;
        settings.max_light_views = views;
    }
    install_render(&mut app, setup).expect("a device is there");
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(eye(), Vec3::ZERO));
    let mut boxes = vec![(Vec3::new(0.0, -0.5, 0.0), Vec3::new(60.0, 1.0, 60.0))];
    for i in 0..30 {
        let (angle, radius, height) = (i as f32 * 0.7, 3.0 + (i % 7) as f32 * 3.0, 1.0 + (i % 5) as f32 * 1.5);
        boxes.push((Vec3::new(angle.cos() * radius, height / 2.0, angle.sin() * radius), Vec3::new(1.2, height, 1.2)));
    }
    for (center, size) in boxes {
        let mesh = Mesh::new(MeshHandle(0), MaterialHandle(0), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
        let entity = scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(center).with_scale(size));
        app.world_mut().insert_one(entity, ShadowCaster).expect("spawned");
    }
    let sun = Quat::from_rotation_arc(Vec3::NEG_Z, Vec3::new(0.3, -0.6, -1.0).normalize());
    app.world_mut().spawn((Transform::from_translation_rotation(Vec3::ZERO, sun), DirectionalLight::default()));
    let lamps: Vec<Entity> = LAMPS.iter().zip(casts).map(|(lamp, casts)| spawn_lamp(&mut app, lamp, casts)).collect();
    let mut last = None;
    for _ in 0..4 {
        last = Some(atlas_and_color(&mut app));
    }
    let (atlas, color) = last.expect("four frames");
    let report = app.resource::<RenderReport>().clone();
    let shadows = app.resource::<ShadowViews>();
    let index_of = |entity: Entity| lamps.iter().position(|&lamp| lamp == entity).expect("a lamp");
    let cast = shadows.shadowed_lights().iter().map(|light| index_of(light.entity)).collect();
    drop(shadows);
    Shot { atlas, color, report, cast }
}

fn spawn_lamp(app: &mut runtime::App, lamp: &Lamp, casts: bool) -> Entity {
    if lamp.point {
        let light =
            PointLight { range: lamp.range, intensity: lamp.intensity, casts_shadows: casts, ..PointLight::default() };
        app.world_mut().spawn((Transform::from_translation(lamp.position), light))
    } else {
        let down = Quat::from_rotation_x(-1.4);
        let light = SpotLight {
            range: lamp.range,
            intensity: lamp.intensity,
            outer_angle: 0.9,
            inner_angle: 0.7,
            casts_shadows: casts,
            shadow_resolution: 256,
            ..SpotLight::default()
        };
        app.world_mut().spawn((Transform::from_translation_rotation(lamp.position, down), light))
    }
}

/// The atlas and the image of a frame.
fn atlas_and_color(app: &mut runtime::App) -> (Vec<u8>, Vec<u8>) {
    let mut shots = app.resource_mut::<renderer::Screenshots>();
    shots.request(renderer::COLOR);
    shots.request(renderer::SHADOW_ATLAS);
    drop(shots);
    app.run_frame();
    let report = app.resource::<RenderReport>();
    assert!(report.error.is_none(), "{:?}", report.error);
    drop(report);
    let shots = app.resource_mut::<renderer::Screenshots>().take();
    let last = |name: &str| shots.iter().rev().find(|shot| shot.image == name).expect("taken").clone();
    (last(renderer::SHADOW_ATLAS).texels, last(renderer::COLOR).rgba8)
}

#[test]
fn the_budgeted_atlas_equals_an_unbudgeted_one_where_only_the_kept_lamps_cast() {
    let Some(device) = gpu_test_context() else { return };
    // The ranking the lamps are listed in, worked out from their screen contributions.
    let scores = LAMPS.map(|lamp| screen_contribution(lamp.position, lamp.range, Vec3::splat(lamp.intensity), eye()));
    assert!(scores.windows(2).all(|pair| pair[0] > pair[1]), "the lamps are listed best first: {scores:?}");
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        // Nine views: the point light (six), the two near spots, then not the second point
        // light (six more) but the far spot.
        let budgeted = render(&device, backend, [true; 5], 9);
        assert_eq!(budgeted.cast, [0, 1, 2, 4], "{backend:?}: the best lamps that fit, best first");
        assert_eq!(budgeted.report.shadows.views.len(), 4 + 9, "{backend:?}: the cascades and nine views");
        let casts = std::array::from_fn(|lamp| budgeted.cast.contains(&lamp));
        let reference = render(&device, backend, casts, ecs::MAX_LIGHT_VIEWS as u32);
        assert_eq!(reference.cast, budgeted.cast, "{backend:?}: the same lamps cast without a budget");
        let differing = budgeted.atlas.chunks(4).zip(reference.atlas.chunks(4)).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 0, "{backend:?}: atlas texels that differ with the budget");
        assert_eq!(budgeted.color, reference.color, "{backend:?}: the final image");
        // Unbudgeted, every lamp casts and the atlas differs.
        let every = render(&device, backend, [true; 5], ecs::MAX_LIGHT_VIEWS as u32);
        assert_eq!(every.cast, [0, 1, 2, 3, 4], "{backend:?}");
        assert_ne!(every.atlas, budgeted.atlas, "{backend:?}: the fifth lamp's shadow is drawn");
    }
    assert_no_validation_messages(&device);
}
