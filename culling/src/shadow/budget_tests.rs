//! The shadow budget through a real `App`, against a brute-force ranking: the best lights
//! that fit cast (ties by entity id), a light's shadow does not come and go while the scores
//! stay within the hysteresis margin, and still lights keep their views from frame to frame.

use std::collections::BTreeSet;

use ecs::{scene, Camera, PointLight, ShadowSettings, SpotLight, Transform};
use glam::{Quat, Vec3};
use proptest::prelude::*;
use runtime::hecs::Entity;
use runtime::App;

use super::{LocalLight, ShadowViews, KEEP_MARGIN};

/// A light of the random scenes: point or spot, where, its range and brightness, and
/// whether it casts shadows.
type LightSpec = (bool, (f32, f32, f32), f32, f32, bool);

/// An app with the stage installed, a camera at `eye` looking at the origin, and the shadow
/// knobs of the tests: `lights` shadows at most, `views` views at most.
fn app_with(eye: Vec3, lights: u32, views: u32) -> (App, Entity) {
    let mut app = App::with_threads(2);
    crate::install(&mut app);
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(eye, Vec3::ZERO));
    let mut settings = app.resource_mut::<ShadowSettings>();
    settings.max_shadowed_lights = lights;
    settings.max_light_views = views;
    drop(settings);
    (app, camera)
}

/// Spawns `spec`'s light with small tiles (every light fits the atlas); returns its entity.
fn spawn_light(app: &mut App, (point, (x, z, y), range, intensity, casts): LightSpec) -> Entity {
    let place = Vec3::new(x, y, z);
    if point {
        let light =
            PointLight { range, intensity, casts_shadows: casts, shadow_resolution: 64, ..PointLight::default() };
        app.world_mut().spawn((Transform::from_translation(place), light))
    } else {
        let down = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
        let light = SpotLight { range, intensity, casts_shadows: casts, shadow_resolution: 64, ..SpotLight::default() };
        app.world_mut().spawn((Transform::from_translation_rotation(place, down), light))
    }
}

/// The score the budget should give `light` seen from `eye`, worked out here.
fn expected_score(light: &LocalLight, eye: Vec3) -> f32 {
    let luminance = 0.2126 * light.radiance.x + 0.7152 * light.radiance.y + 0.0722 * light.radiance.z;
    let distance = light.position.distance(eye);
    let coverage = if distance <= light.range { 1.0 } else { (light.range / distance).powi(2) };
    luminance.max(0.0) * coverage
}

/// The lights a brute-force budget without history gives shadows: every shadow-casting one
/// of `lights` sorted by score (ties by entity id), each taken while it fits `cap` lights and
/// `views` views.
fn brute_force(lights: &[LocalLight], casts: &BTreeSet<Entity>, cap: usize, views: usize) -> Vec<Entity> {
    let mut ranked: Vec<&LocalLight> = lights.iter().filter(|light| casts.contains(&light.entity)).collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.entity.to_bits().cmp(&b.entity.to_bits())));
    let (mut kept, mut used) = (Vec::new(), 0);
    for light in ranked {
        if kept.len() < cap && used + light.view_count() <= views {
            kept.push(light.entity);
            used += light.view_count();
        }
    }
    kept
}

/// Checks the frame's scores against [`expected_score`] and the budget's counts against the
/// lights; returns the lights that cast.
fn casting(app: &App, eye: Vec3) -> Vec<Entity> {
    let shadows = app.resource::<ShadowViews>();
    for light in shadows.lights() {
        let expected = expected_score(light, eye);
        assert!((light.score - expected).abs() <= 1e-4 * expected.max(1.0), "{light:?}: {expected}");
    }
    let budget = shadows.budget();
    assert_eq!(shadows.unplaced_lights(), 0, "every light fits the atlas");
    assert!(budget.views <= budget.max_views, "{budget:?}");
    assert_eq!(budget.views, shadows.shadowed_lights().iter().map(LocalLight::view_count).sum::<usize>());
    assert_eq!(budget.shadowed + budget.over_budget, budget.candidates, "{budget:?}");
    for light in shadows.shadowed_lights() {
        for view in light.views() {
            assert_eq!(shadows.views()[view].light, light.entity, "its views are its own");
        }
    }
    shadows.shadowed_lights().iter().map(|light| light.entity).collect()
}

fn light_spec() -> impl Strategy<Value = LightSpec> {
    (
        any::<bool>(),
        (-30.0f32..30.0, -40.0f32..0.0, 1.0f32..8.0),
        3.0f32..20.0,
        1.0f32..40.0,
        prop::bool::weighted(0.85),
    )
}

#[test]
fn equal_lights_go_to_the_lowest_ids_and_a_point_light_past_the_budget_leaves_room_for_spots() {
    let eye = Vec3::new(0.0, 20.0, 30.0);
    let (mut app, _) = app_with(eye, 16, 8);
    // Six equal spot lights in one place (equal scores), and a bright point light that
    // needs six views.
    let spots: Vec<Entity> =
        (0..6).map(|_| spawn_light(&mut app, (false, (5.0, 0.0, 2.0), 10.0, 10.0, true))).collect();
    let point = spawn_light(&mut app, (true, (0.0, 0.0, 2.0), 10.0, 1000.0, true));
    app.run_frame();
    let cast = casting(&app, eye);
    assert_eq!(cast, [point, spots[0], spots[1]], "the point light, then two of the six spots' eight views");
    let budget = app.resource::<ShadowViews>().budget();
    assert_eq!((budget.candidates, budget.shadowed, budget.views, budget.over_budget), (7, 3, 8, 4));
}

#[test]
fn still_lights_keep_their_shadows_and_their_views() {
    let eye = Vec3::new(0.0, 12.0, 20.0);
    let (mut app, _) = app_with(eye, 16, 12);
    for index in 0..8 {
        spawn_light(&mut app, (index % 2 == 0, (index as f32 * 4.0 - 16.0, -5.0, 3.0), 8.0, 20.0, true));
    }
    let cube = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
    app.world_mut().insert_one(cube, ecs::ShadowCaster).unwrap();
    app.run_frame();
    let first = casting(&app, eye);
    for frame in 0..3 {
        app.run_frame();
        assert_eq!(casting(&app, eye), first, "frame {frame}");
        let shadows = app.resource::<ShadowViews>();
        assert_eq!(shadows.work().kept_views, shadows.views().len(), "frame {frame}: every view kept");
    }
    // The best caster goes: the next best takes the views it leaves.
    app.world_mut().despawn(first[0]).unwrap();
    app.run_frame();
    assert!(!casting(&app, eye).contains(&first[0]));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Random lights, caps and budgets: the first frame (no history) casts what the
    /// brute-force ranking keeps.
    #[test]
    fn the_budget_keeps_the_best_lights_that_fit(
        lights in prop::collection::vec(light_spec(), 0..30),
        cap in 0u32..18,
        views in 0u32..60,
    ) {
        let eye = Vec3::new(0.0, 15.0, 25.0);
        let (mut app, _) = app_with(eye, cap, views);
        let casts: BTreeSet<Entity> =
            lights.iter().map(|&spec| (spawn_light(&mut app, spec), spec.4)).filter(|&(_, casts)| casts).map(|(entity, _)| entity).collect();
        app.run_frame();
        let cast = casting(&app, eye);
        let shadows = app.resource::<ShadowViews>();
        let expected = brute_force(shadows.lights(), &casts, (cap as usize).min(16), (views as usize).min(96));
        prop_assert_eq!(cast, expected);
    }

    /// A camera flying past random lights: a light that cast keeps its shadow unless a light
    /// that did not cast outscores it by more than the margin, and a frame where no score
    /// crosses the margin (and the lights in view stay the same) keeps every shadow.
    #[test]
    fn shadows_change_hands_only_past_the_margin(
        lights in prop::collection::vec(light_spec(), 4..24),
        path in prop::collection::vec((-3.0f32..3.0, -3.0f32..3.0), 2..16),
        cap in 1u32..8,
        views in 1u32..30,
    ) {
        let mut eye = Vec3::new(0.0, 15.0, 25.0);
        let (mut app, camera) = app_with(eye, cap, views);
        for &spec in &lights {
            spawn_light(&mut app, spec);
        }
        app.run_frame();
        let mut before: BTreeSet<Entity> = casting(&app, eye).into_iter().collect();
        let mut seen_before = in_view(&app);
        for (step, &(dx, dz)) in path.iter().enumerate() {
            eye += Vec3::new(dx, 0.0, dz);
            *app.world_mut().get::<&mut Transform>(camera).unwrap() = scene::look_at(eye, Vec3::new(eye.x, 0.0, eye.z - 25.0));
            app.run_frame();
            let now: BTreeSet<Entity> = casting(&app, eye).into_iter().collect();
            let seen = in_view(&app);
            let shadows = app.resource::<ShadowViews>();
            prop_assert_eq!(shadows.budget().new_casters, now.difference(&before).count(), "step {}", step);
            let score = |entity: Entity| shadows.lights().iter().find(|light| light.entity == entity).map(|light| light.score);
            let challengers: Vec<f32> = seen.iter().filter(|entity| !before.contains(entity)).filter_map(|&entity| score(entity)).collect();
            let crossed = |held: f32| challengers.iter().any(|&challenger| challenger > held * KEEP_MARGIN);
            for &lost in before.difference(&now) {
                if let Some(held) = score(lost).filter(|_| seen.contains(&lost)) {
                    prop_assert!(crossed(held), "step {}: {:?} lost its shadow to no light past the margin", step, lost);
                }
            }
            let any_crossed = before.iter().filter_map(|&entity| score(entity)).any(crossed);
            if seen == seen_before && !any_crossed {
                prop_assert_eq!(&now, &before, "step {}: the scores stayed within the margin", step);
            }
            drop(shadows);
            (before, seen_before) = (now, seen);
        }
    }
}

/// The shadow-casting lights that may light the frame (the candidates for a shadow).
fn in_view(app: &App) -> BTreeSet<Entity> {
    let shadows = app.resource::<ShadowViews>();
    let world = app.world();
    shadows
        .lights()
        .iter()
        .filter(|light| {
            let spot = world.get::<&SpotLight>(light.entity).map(|spot| spot.casts_shadows);
            let point = world.get::<&PointLight>(light.entity).map(|point| point.casts_shadows);
            spot.or(point).unwrap_or(false)
        })
        .map(|light| light.entity)
        .collect()
}
