//! Tests of the shadow views through a real `App`, against brute-force references: the box
//! test per view, and rays from receivers in the camera's view towards the sun.

use ecs::{scene, Camera, DirectionalLight, PointLight, ShadowCaster, ShadowSettings, SpotLight, Transform};
use glam::{Quat, Vec3};
use proptest::prelude::*;
use runtime::hecs::Entity;
use runtime::App;

use super::{LightViewKind, ShadowViews};
use crate::visibility::{ObjectState, Visibility};

/// An app with the stage installed, a camera at `eye` looking at `target`, and a sun
/// shining along `sun` (its -Z axis).
fn app_with(eye: Vec3, target: Vec3, sun: Vec3) -> App {
    let mut app = App::with_threads(2);
    crate::install(&mut app);
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(eye, target));
    let rotation = Quat::from_rotation_arc(Vec3::NEG_Z, sun.normalize());
    app.world_mut().spawn((Transform::from_translation_rotation(Vec3::ZERO, rotation), DirectionalLight::default()));
    app
}

fn caster(app: &mut App, center: Vec3, scale: Vec3) -> Entity {
    let entity = scene::spawn_mesh(
        app.world_mut(),
        scene::unit_cube_mesh(),
        Transform::from_translation(center).with_scale(scale),
    );
    app.world_mut().insert_one(entity, ShadowCaster).unwrap();
    entity
}

/// Every view's caster bits equal the scalar box test of each caster against the view.
pub(super) fn assert_bits_match_the_reference(app: &App) {
    let shadows = app.resource::<ShadowViews>();
    let visibility = app.resource::<Visibility>();
    for (index, view) in shadows.views().iter().enumerate() {
        let kept: Vec<u32> = shadows.caster_slots(index).collect();
        let expected: Vec<u32> = visibility
            .casters()
            .iter()
            .copied()
            .filter(|&slot| view.frustum.may_intersect_aabb(&visibility.objects().bounds[slot as usize]))
            .collect();
        assert_eq!(kept, expected, "view {index} ({:?})", view.kind);
        assert_eq!(shadows.stats(index).kept, kept.len());
    }
}

/// Whether the ray from `from` towards the sun (against `direction`) meets the box.
fn ray_hits(from: Vec3, direction: Vec3, bounds: &ecs::Aabb) -> bool {
    let towards = -direction;
    let (mut near, mut far) = (0.0f32, f32::INFINITY);
    for axis in 0..3 {
        let (origin, step) = (from[axis], towards[axis]);
        let (low, high) = (bounds.min[axis], bounds.max[axis]);
        if step.abs() < 1e-12 {
            if origin < low || origin > high {
                return false;
            }
            continue;
        }
        let (a, b) = ((low - origin) / step, (high - origin) / step);
        near = near.max(a.min(b));
        far = far.min(a.max(b));
    }
    near <= far
}

/// For receivers on the ground inside the camera's view and shadow distance: every caster
/// that stands between a receiver and the sun is kept by the cascade holding the receiver.
/// Returns how many (receiver, caster) pairs were checked.
fn assert_every_shadowing_caster_is_kept(app: &App) -> usize {
    let shadows = app.resource::<ShadowViews>();
    let visibility = app.resource::<Visibility>();
    let sun = *shadows.sun().expect("a sun");
    let view = visibility.view().expect("a view");
    let camera = crate::Frustum::from_view_projection(view.view_projection);
    let mut checked = 0;
    for x in -60..=60 {
        for z in -60..=60 {
            let receiver = Vec3::new(x as f32 * 2.0, 0.0, z as f32 * 2.0);
            if !camera.may_intersect_sphere(&ecs::Sphere { center: receiver, radius: 0.0 }) {
                continue;
            }
            let depth = -(view.view.transform_point3(receiver)).z;
            let Some(cascade) = sun.cascade_ends[..sun.cascades].iter().position(|&end| depth <= end) else {
                continue;
            };
            let kept: Vec<u32> = shadows.caster_slots(sun.first_view + cascade).collect();
            for &slot in visibility.casters() {
                if ray_hits(receiver, sun.direction, &visibility.objects().bounds[slot as usize]) {
                    checked += 1;
                    assert!(kept.contains(&slot), "caster {slot} shadows {receiver} but cascade {cascade} dropped it");
                }
            }
        }
    }
    checked
}

#[test]
fn a_caster_behind_the_camera_still_casts_into_the_view() {
    // The camera looks north (-Z); the sun sets behind it (travelling north and down), and a
    // tower behind the camera throws its shadow forward into the view.
    let mut app = app_with(Vec3::new(0.0, 2.0, 0.0), Vec3::new(0.0, 0.0, -20.0), Vec3::new(0.0, -0.4, -1.0));
    let tower = caster(&mut app, Vec3::new(0.0, 15.0, 12.0), Vec3::new(4.0, 30.0, 4.0));
    for i in 0..20 {
        caster(&mut app, Vec3::new(i as f32 * 7.0 - 70.0, 1.0, -30.0 - i as f32), Vec3::splat(2.0));
    }
    app.run_frame();
    assert_eq!(app.resource::<Visibility>().state_of(tower), Some(ObjectState::Culled));
    assert_bits_match_the_reference(&app);
    assert!(assert_every_shadowing_caster_is_kept(&app) > 0, "the tower's shadow falls in view");
    let shadows = app.resource::<ShadowViews>();
    let slot = app.resource::<Visibility>().slot_of(tower).unwrap();
    assert!(shadows.caster_slots(0).any(|kept| kept == slot), "the nearest cascade keeps the tower");
}

#[test]
fn views_follow_the_lights_and_the_limits() {
    let mut app = app_with(Vec3::new(0.0, 5.0, 20.0), Vec3::ZERO, Vec3::new(0.2, -1.0, 0.1));
    for i in 0..10 {
        let spot = Transform::from_translation_rotation(
            Vec3::new(i as f32 * 3.0 - 15.0, 6.0, 0.0),
            Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2),
        );
        app.world_mut().spawn((spot, SpotLight::default()));
        app.world_mut()
            .spawn((Transform::from_translation(Vec3::new(i as f32 * 3.0 - 15.0, 2.0, -5.0)), PointLight::default()));
    }
    // An unshadowed lamp and one far outside the view: the first lights, the second does not.
    app.world_mut().spawn((
        Transform::from_translation(Vec3::new(0.0, 1.0, 0.0)),
        PointLight { casts_shadows: false, ..PointLight::default() },
    ));
    app.world_mut().spawn((Transform::from_translation(Vec3::new(0.0, 1.0, 500.0)), PointLight::default()));
    caster(&mut app, Vec3::ZERO, Vec3::ONE);
    // The light cap alone: a budget of views that holds every shadowed light's.
    app.resource_mut::<ShadowSettings>().max_light_views = ecs::MAX_LIGHT_VIEWS as u32;
    app.run_frame();
    let shadows = app.resource::<ShadowViews>();
    let shadowed = shadows.lights().iter().filter(|light| light.first_view.is_some()).count();
    assert_eq!(shadowed, ecs::MAX_SHADOWED_LIGHTS);
    assert_eq!(shadows.lights().len(), 21, "20 lamps in view and the unshadowed one");
    let cascades = shadows.views().iter().filter(|view| matches!(view.kind, LightViewKind::Cascade(_))).count();
    let faces = shadows.views().iter().filter(|view| matches!(view.kind, LightViewKind::CubeFace(_))).count();
    let spots = shadows.views().iter().filter(|view| view.kind == LightViewKind::Spot).count();
    assert_eq!(cascades, 4);
    assert_eq!(faces % 6, 0);
    assert_eq!(spots + faces / 6, ecs::MAX_SHADOWED_LIGHTS);
    // No two tiles overlap, and every tile lies in the atlas.
    let tiles: Vec<_> = shadows.views().iter().map(|view| view.tile).collect();
    for (i, a) in tiles.iter().enumerate() {
        assert!(a.x + a.size <= shadows.atlas_resolution() && a.y + a.size <= shadows.atlas_resolution());
        for b in &tiles[i + 1..] {
            assert!(a.x + a.size <= b.x || b.x + b.size <= a.x || a.y + a.size <= b.y || b.y + b.size <= a.y);
        }
    }
    drop(shadows);
    assert_bits_match_the_reference(&app);

    // Shadows off: the lights still shine, no view is drawn.
    app.resource_mut::<ShadowSettings>().enabled = false;
    app.run_frame();
    let shadows = app.resource::<ShadowViews>();
    assert!(shadows.views().is_empty());
    assert_eq!(shadows.lights().len(), 21);
}

#[test]
fn caster_culling_off_keeps_every_caster_in_every_view() {
    let mut app = app_with(Vec3::new(0.0, 5.0, 20.0), Vec3::ZERO, Vec3::new(0.2, -1.0, 0.1));
    for i in 0..130 {
        caster(&mut app, Vec3::new(i as f32 * 10.0, 0.0, 0.0), Vec3::ONE);
    }
    app.resource_mut::<ShadowSettings>().caster_culling = false;
    app.run_frame();
    let shadows = app.resource::<ShadowViews>();
    for view in 0..shadows.views().len() {
        assert_eq!(shadows.caster_slots(view).count(), 130);
    }
    drop(shadows);
    app.resource_mut::<ShadowSettings>().caster_culling = true;
    app.run_frame();
    assert!(app.resource::<ShadowViews>().stats(0).kept < 130);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random casters, camera turns and suns (180-degree turns of both among them): the bits
    /// equal the reference and no caster that shadows a receiver in view is dropped.
    #[test]
    fn random_scenes_lose_no_shadowing_caster(
        boxes in prop::collection::vec((-80.0f32..80.0, 0.0f32..20.0, -80.0f32..80.0, 0.5f32..8.0, 0.5f32..25.0), 1..60),
        camera_turn in 0u32..4,
        sun_turn in 0u32..4,
        sun_height in 0.2f32..2.0,
    ) {
        let angle = camera_turn as f32 * std::f32::consts::FRAC_PI_2;
        let eye = Vec3::new(0.0, 3.0, 0.0);
        let target = eye + Vec3::new(angle.sin(), -0.15, -angle.cos());
        let sun_angle = sun_turn as f32 * std::f32::consts::FRAC_PI_2 + 0.3;
        let sun = Vec3::new(sun_angle.sin(), -sun_height, sun_angle.cos());
        let mut app = app_with(eye, target, sun);
        for (x, y, z, width, height) in boxes {
            caster(&mut app, Vec3::new(x, y + height / 2.0, z), Vec3::new(width, height, width));
        }
        app.resource_mut::<ShadowSettings>().max_distance = 80.0;
        app.run_frame();
        assert_bits_match_the_reference(&app);
        prop_assert_eq!(app.resource::<ShadowViews>().sun().map(|sun| sun.cascades), Some(4));
        assert_every_shadowing_caster_is_kept(&app);
    }
}

#[test]
fn a_world_without_a_shadow_view_gathers_no_caster() {
    // Casters and a camera, but the only light casts no shadow: nothing is copied or culled.
    let mut app = App::with_threads(2);
    crate::install(&mut app);
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 5.0, 10.0), Vec3::ZERO));
    let light = DirectionalLight { casts_shadows: false, ..DirectionalLight::default() };
    app.world_mut().spawn((Transform::IDENTITY, light));
    for index in 0..200 {
        caster(&mut app, Vec3::new(index as f32 - 100.0, 0.5, 0.0), Vec3::ONE);
    }
    app.run_frame();
    {
        let shadows = app.resource::<ShadowViews>();
        assert!(shadows.views().is_empty() && shadows.sun().is_some());
        assert!(shadows.casters().is_empty() && shadows.caster_slot_words().is_empty());
        assert_eq!(app.resource::<Visibility>().casters().len(), 200);
    }
    // The same world with a spot light that casts: the casters are gathered and culled.
    let down = Transform::from_translation_rotation(Vec3::new(0.0, 6.0, 0.0), Quat::from_rotation_x(-1.5));
    app.world_mut().spawn((down, SpotLight::default()));
    app.run_frame();
    let shadows = app.resource::<ShadowViews>();
    assert_eq!((shadows.views().len(), shadows.casters().len()), (1, 200));
    assert_bits_match_the_reference(&app);
}

#[test]
fn a_lamp_only_the_second_window_view_sees_casts_for_the_frame() {
    // Two cameras back to back, each in one half of the window; a shadowed lamp lies in front
    // of the second alone.
    let mut app = App::with_threads(2);
    crate::install(&mut app);
    let first = scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::ZERO, Vec3::NEG_Z));
    let second = Camera { order: 1, ..Camera::default() };
    let second = scene::spawn_camera(app.world_mut(), second, scene::look_at(Vec3::ZERO, Vec3::Z));
    app.world_mut().insert_one(first, ecs::CameraRect::new(0.0, 0.0, 0.5, 1.0)).unwrap();
    app.world_mut().insert_one(second, ecs::CameraRect::new(0.5, 0.0, 0.5, 1.0)).unwrap();
    let down = Transform::from_translation_rotation(Vec3::new(0.0, 4.0, 20.0), Quat::from_rotation_x(-1.5));
    let lamp = app.world_mut().spawn((down, SpotLight { range: 6.0, ..SpotLight::default() }));
    caster(&mut app, Vec3::new(0.0, 0.5, 20.0), Vec3::ONE);
    app.run_frame();
    {
        let shadows = app.resource::<ShadowViews>();
        let lit: Vec<_> = shadows.shadowed_lights().iter().map(|light| light.entity).collect();
        assert_eq!(lit, [lamp], "the second view's lamp casts");
        assert_eq!(shadows.views().iter().filter(|view| view.kind == LightViewKind::Spot).count(), 1);
        assert_bits_match_the_reference(&app);
    }
    // The second camera gone, the first sees no lamp: none is listed.
    app.world_mut().despawn(second).unwrap();
    app.run_frame();
    let shadows = app.resource::<ShadowViews>();
    assert!(shadows.lights().is_empty() && shadows.views().is_empty(), "{:?}", shadows.lights());
}
