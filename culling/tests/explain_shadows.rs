//! `ShadowViews::explain` says, for every shadow view of a frame with a sun (cascades) and a
//! spot light, whether each object casts there: its answer equals the caster set the shadow
//! system produced for that view, and a brute-force test of the object's box against the
//! view's volume, for every object; an object without `ShadowCaster` says so in every view,
//! one that cannot be drawn too. With the GPU culling the casters the host keeps no bits, and
//! the answer is whether the view's volume holds the box.

use std::collections::HashSet;

use culling::shadow::{Casting, LightViewKind};
use culling::{ShadowViews, Visibility};
use ecs::{scene, DirectionalLight, RenderSettings, ShadowCaster, SpotLight, Transform, Visible};
use glam::{Quat, Vec3};
use runtime::hecs::Entity;
use runtime::App;

/// The scene's objects: casters on a grid (some under the spot, some outside every view),
/// one without `ShadowCaster`, one hidden caster.
struct Scene {
    app: App,
    casters: Vec<Entity>,
    far: Entity,
    no_caster: Entity,
    hidden: Entity,
}

fn scene() -> Scene {
    let mut app = App::with_threads(2);
    culling::install(&mut app);
    let world = app.world_mut();
    scene::spawn_camera(world, ecs::Camera::default(), scene::look_at(Vec3::new(0.0, 6.0, 25.0), Vec3::ZERO));
    let sun = Transform::from_translation_rotation(Vec3::ZERO, Quat::from_rotation_x(-1.1));
    world.spawn((sun, DirectionalLight::default()));
    // A spot 12 up, pointing straight down: its cone covers a disc of about 5 around the origin.
    let spot_pose = Transform::from_translation_rotation(
        Vec3::new(0.0, 12.0, 0.0),
        Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2),
    );
    let spot = SpotLight { range: 30.0, inner_angle: 0.3, outer_angle: 0.4, ..SpotLight::default() };
    world.spawn((spot_pose, spot));
    let at = |x: f32, y: f32, z: f32| Transform::from_translation(Vec3::new(x, y, z));
    let mut casters = Vec::new();
    for x in -6..=6 {
        for z in -6..=6 {
            let cube = scene::spawn_mesh(world, scene::unit_cube_mesh(), at(x as f32 * 4.0, 0.0, z as f32 * 4.0));
            world.insert_one(cube, ShadowCaster).expect("spawned");
            casters.push(cube);
        }
    }
    let far = world.spawn((scene::unit_cube_mesh(), at(2000.0, 0.0, -2000.0), ShadowCaster));
    let no_caster = scene::spawn_mesh(world, scene::unit_cube_mesh(), at(0.5, 2.0, 0.5));
    let hidden = world.spawn((scene::unit_cube_mesh(), at(-0.5, 2.0, 0.5), ShadowCaster, Visible(false)));
    app.run_frames(2);
    Scene { app, casters, far, no_caster, hidden }
}

#[test]
fn every_shadow_views_answer_matches_its_caster_set_for_every_object() {
    let scene = scene();
    let app = &scene.app;
    let (visibility, shadows) = (app.resource::<Visibility>(), app.resource::<ShadowViews>());
    let settings = app.resource::<RenderSettings>();
    let views = shadows.views();
    let cascades = views.iter().filter(|view| matches!(view.kind, LightViewKind::Cascade(_))).count();
    let spots: Vec<usize> = (0..views.len()).filter(|&index| views[index].kind == LightViewKind::Spot).collect();
    assert!(cascades >= 2, "{views:?}");
    assert_eq!(spots.len(), 1, "{views:?}");
    assert!(!shadows.device_culling(), "the host culls the casters here");
    let sets: Vec<HashSet<u32>> = (0..views.len()).map(|view| shadows.caster_slots(view).collect()).collect();
    // Per view: casters kept, casters culled.
    let mut counts = vec![(0, 0); views.len()];
    for &entity in scene.casters.iter().chain([&scene.far]) {
        let explanation = visibility.explain(app.world(), &settings, entity);
        let slot = explanation.slot.expect("a drawable caster has a slot");
        let world_box = visibility.objects().bounds[slot as usize];
        let answers = shadows.explain(&visibility, &explanation);
        assert_eq!(answers.len(), views.len());
        for (index, answer) in answers.iter().enumerate() {
            assert_eq!((answer.view, answer.light, answer.kind), (index, views[index].light, views[index].kind));
            let kept = sets[index].contains(&slot);
            // Brute force: the box against the view's volume, as the cull's definition says.
            let in_volume = views[index].frustum.may_intersect_aabb(&world_box);
            assert_eq!(kept, in_volume, "view {index} ({:?}), slot {slot}", views[index].kind);
            let want = if kept { Casting::Casts } else { Casting::Culled };
            assert_eq!(answer.casting, want, "view {index} ({:?}), entity {entity:?}", views[index].kind);
            if kept {
                counts[index].0 += 1;
            } else {
                counts[index].1 += 1;
            }
        }
        if entity == scene.far {
            assert!(answers.iter().all(|answer| answer.casting == Casting::Culled), "{answers:?}");
        }
    }
    // The scene shows both answers: the spot keeps the cubes under it and culls the rest; the
    // nearest cascade keeps the cubes in front of the camera.
    let spot = spots[0];
    assert!(counts[spot].0 >= 4 && counts[spot].1 >= 50, "spot: {:?}", counts[spot]);
    assert!(counts[0].0 >= 4, "cascade 0: {:?}", counts[0]);
    assert!(counts.iter().map(|count| count.1).sum::<usize>() > 0, "{counts:?}");
    let every = |entity: Entity| {
        let explanation = visibility.explain(app.world(), &settings, entity);
        shadows.explain(&visibility, &explanation).into_iter().map(|answer| answer.casting).collect::<Vec<_>>()
    };
    assert_eq!(every(scene.no_caster), vec![Casting::NotCaster; views.len()]);
    assert_eq!(every(scene.hidden), vec![Casting::NotDrawable; views.len()]);
}

#[test]
fn with_the_gpu_culling_the_casters_the_answer_is_the_views_volume() {
    let mut scene = scene();
    let kept: Vec<Vec<Casting>> = {
        let app = &scene.app;
        let (visibility, shadows) = (app.resource::<Visibility>(), app.resource::<ShadowViews>());
        let settings = app.resource::<RenderSettings>();
        let answers = |entity| shadows.explain(&visibility, &visibility.explain(app.world(), &settings, entity));
        scene.casters.iter().map(|&entity| answers(entity).into_iter().map(|answer| answer.casting).collect()).collect()
    };
    // What the renderer sets when it culls the shadow views on the device: the host's bits
    // are left clear from the next frame on.
    scene.app.resource_mut::<ShadowViews>().set_device_culling(true);
    scene.app.run_frame();
    let app = &scene.app;
    let (visibility, shadows) = (app.resource::<Visibility>(), app.resource::<ShadowViews>());
    let settings = app.resource::<RenderSettings>();
    assert!((0..shadows.views().len()).all(|view| shadows.caster_slots(view).next().is_none()), "no host bits");
    for (&entity, before) in scene.casters.iter().zip(&kept) {
        let explanation = visibility.explain(app.world(), &settings, entity);
        let answers: Vec<Casting> = shadows.explain(&visibility, &explanation).into_iter().map(|a| a.casting).collect();
        // The scene and the camera stand still: the volumes holding a box are the views the
        // host's cull kept it in.
        let want: Vec<Casting> =
            before.iter().map(|&casting| Casting::OnDevice { in_volume: casting == Casting::Casts }).collect();
        assert_eq!(answers, want, "{entity:?}");
    }
    let explanation = visibility.explain(app.world(), &settings, scene.no_caster);
    assert!(shadows.explain(&visibility, &explanation).iter().all(|answer| answer.casting == Casting::NotCaster));
}
