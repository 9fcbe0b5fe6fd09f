//! The shadow views frame after frame against a from-scratch answer: casters, lights and the
//! camera moved by a system (so the change log names what moved), casters restyled, spawned,
//! despawned, hidden, made and unmade; a still light keeps its bits and redoes nothing (nor
//! for a caster changed in place), a moved caster or light changes them, and every frame's answer is the one a fresh [`ShadowViews`] gives
//! for the same world, and the brute-force box test's.

use std::sync::{Arc, Mutex};

use ecs::{
    scene, Camera, DirectionalLight, Mesh, PointLight, ShadowCaster, SpotLight, Transform, Visible, WorldTransform,
};
use glam::{Quat, Vec3};
use proptest::prelude::*;
use runtime::hecs::Entity;
use runtime::{App, Stage, System};

use super::tests::assert_bits_match_the_reference;
use super::ShadowViews;
use crate::visibility::Visibility;

/// What the test wants done in the next frame; the "script" system does it.
#[derive(Default)]
struct Script {
    moves: Vec<(Entity, Transform)>,
    restyle: Vec<Entity>,
    hide: Vec<Entity>,
    make_caster: Vec<Entity>,
    unmake_caster: Vec<Entity>,
    despawn: Vec<Entity>,
    spawn: Vec<Transform>,
}

/// An app on two threads whose Input-stage system plays the shared [`Script`]: moves through
/// `get_mut`, the rest through commands. A camera looks at the origin from `eye`, a sun shines
/// down and across, and a spot and a point light stand over the ground; returns the app, the
/// camera and the two lights.
fn scripted_app(eye: Vec3, script: Arc<Mutex<Script>>) -> (App, Entity, [Entity; 2]) {
    let mut app = App::with_threads(2);
    crate::install(&mut app);
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(eye, Vec3::ZERO));
    let sun = Quat::from_rotation_arc(Vec3::NEG_Z, Vec3::new(0.3, -1.0, 0.2).normalize());
    app.world_mut().spawn((Transform::from_translation_rotation(Vec3::ZERO, sun), DirectionalLight::default()));
    let down = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
    let spot = app.world_mut().spawn((
        Transform::from_translation_rotation(Vec3::new(5.0, 8.0, 0.0), down),
        SpotLight { range: 20.0, ..SpotLight::default() },
    ));
    let point = app.world_mut().spawn((
        Transform::from_translation(Vec3::new(-6.0, 3.0, -4.0)),
        PointLight { range: 12.0, ..PointLight::default() },
    ));
    app.add_system(
        Stage::Input,
        System::new("script", move |ctx| {
            let mut script = script.lock().expect("not poisoned");
            for (entity, transform) in script.moves.drain(..) {
                *ctx.get_mut::<Transform>(entity).expect("alive") = transform;
            }
            for entity in script.restyle.drain(..) {
                let mut mesh = ctx.get_mut::<Mesh>(entity).expect("a mesh");
                mesh.material.0 += 1;
            }
            for entity in script.hide.drain(..) {
                let mut shown = ctx.get_mut::<Visible>(entity).expect("a mesh");
                shown.0 = !shown.0;
            }
            for entity in script.make_caster.drain(..) {
                ctx.commands.insert_one(entity, ShadowCaster);
            }
            for entity in script.unmake_caster.drain(..) {
                ctx.commands.remove_one::<ShadowCaster>(entity);
            }
            for entity in script.despawn.drain(..) {
                ctx.commands.despawn(entity);
            }
            for transform in script.spawn.drain(..) {
                ctx.commands.spawn((
                    transform,
                    WorldTransform::from(transform),
                    scene::unit_cube_mesh(),
                    Visible(true),
                    ShadowCaster,
                ));
            }
        })
        .writes::<Transform>()
        .writes::<Visible>()
        .writes::<Mesh>()
        .spawns(),
    );
    (app, camera, [spot, point])
}

/// A caster cube at `center`, `size` metres.
fn caster_at(center: Vec3, size: f32) -> Transform {
    Transform::from_translation(center).with_scale(Vec3::splat(size))
}

/// Spawns a grid of `side` x `side` caster cubes 3 m apart around the origin.
fn spawn_grid(app: &mut App, side: usize) -> Vec<Entity> {
    let mut casters = Vec::new();
    for index in 0..side * side {
        let place = Vec3::new(
            (index % side) as f32 * 3.0 - side as f32 * 1.5,
            0.5,
            (index / side) as f32 * 3.0 - side as f32 * 1.5,
        );
        let transform = caster_at(place, 1.0 + (index % 3) as f32);
        casters.push(app.world_mut().spawn((
            transform,
            WorldTransform::from(transform),
            scene::unit_cube_mesh(),
            Visible(true),
            ShadowCaster,
        )));
    }
    casters
}

/// Asserts that the app's shadow views are what a fresh [`ShadowViews`] finds for the same
/// world, view and casters (everything culled from scratch), and the brute-force test's.
fn assert_fresh_answer(app: &App, frame: usize) {
    let ours = app.resource::<ShadowViews>();
    let visibility = app.resource::<Visibility>();
    let settings = *app.resource::<ecs::ShadowSettings>();
    let mut fresh = ShadowViews::default();
    app.job_system().install(|| fresh.update(app.world(), visibility.view(), &visibility, &settings));
    assert!(fresh.work().rebuilt, "a fresh resource reads every caster");
    assert_eq!(ours.views(), fresh.views(), "frame {frame}: the views");
    assert_eq!(ours.casters(), fresh.casters(), "frame {frame}: the casters");
    assert_eq!(ours.caster_slot_words(), fresh.caster_slot_words(), "frame {frame}: the casters' slot bits");
    for view in 0..ours.views().len() {
        assert_eq!(ours.slot_words(view), fresh.slot_words(view), "frame {frame}: view {view}'s bits");
        assert_eq!(ours.stats(view), fresh.stats(view), "frame {frame}: view {view}'s counts");
    }
    drop((ours, visibility));
    assert_bits_match_the_reference(app);
}

#[test]
fn a_still_light_over_still_casters_keeps_its_answer_and_redoes_nothing() {
    let script = Arc::new(Mutex::new(Script::default()));
    let (mut app, _, _) = scripted_app(Vec3::new(0.0, 12.0, 30.0), Arc::clone(&script));
    spawn_grid(&mut app, 30);
    app.run_frames(2);
    let first = app.resource::<ShadowViews>().clone();
    for frame in 0..3 {
        app.run_frame();
        let shadows = app.resource::<ShadowViews>();
        let work = shadows.work();
        assert!(!work.rebuilt, "frame {frame}: the casters were kept");
        assert_eq!(work.changed_words, 0, "frame {frame}: nothing moved");
        assert_eq!((work.kept_views, work.culled_views), (shadows.views().len(), 0), "frame {frame}: every view kept");
        assert_eq!(work.kernel_words, 0, "frame {frame}: no caster tested");
        for view in 0..shadows.views().len() {
            assert_eq!(shadows.slot_words(view), first.slot_words(view), "frame {frame}: view {view}'s answer stands");
        }
        drop(shadows);
        assert_fresh_answer(&app, frame);
    }
}

#[test]
fn a_caster_changed_in_place_is_no_news_to_the_views() {
    let script = Arc::new(Mutex::new(Script::default()));
    let (mut app, _, _) = scripted_app(Vec3::new(0.0, 12.0, 30.0), Arc::clone(&script));
    let casters = spawn_grid(&mut app, 12);
    app.run_frames(2);
    // A new material: the Visibility stage names the slots, but no box moved.
    script.lock().unwrap().restyle.extend(&casters[..70]);
    app.run_frame();
    let slot = app.resource::<Visibility>().slot_of(casters[0]).expect("a caster");
    assert!(app.resource::<Visibility>().changes().contains(slot as usize), "the answer names the restyled slot");
    let shadows = app.resource::<ShadowViews>();
    let work = shadows.work();
    assert_eq!(work.changed_words, 0, "no caster moved, came or went: {work:?}");
    assert_eq!((work.kept_views, work.kernel_words), (shadows.views().len(), 0), "nothing redone: {work:?}");
    drop(shadows);
    assert_fresh_answer(&app, 0);
}

#[test]
fn a_moved_caster_or_light_changes_the_answer() {
    let script = Arc::new(Mutex::new(Script::default()));
    let (mut app, _, [spot, _]) = scripted_app(Vec3::new(0.0, 12.0, 30.0), Arc::clone(&script));
    let casters = spawn_grid(&mut app, 30);
    app.run_frames(2);
    let spot_view = |app: &App| {
        let shadows = app.resource::<ShadowViews>();
        let light = shadows.lights().iter().find(|light| light.entity == spot).expect("the spot lights the frame");
        light.first_view.expect("the spot casts")
    };
    let slot_of = |app: &App, entity: Entity| app.resource::<Visibility>().slot_of(entity).expect("a caster");
    let kept_by_spot = |app: &App, entity: Entity| {
        let slot = slot_of(app, entity);
        app.resource::<ShadowViews>().caster_slots(spot_view(app)).any(|kept| kept == slot)
    };
    // A caster under the spot, moved far away: the spot keeps its place, and drops it.
    let under = *casters
        .iter()
        .find(|&&caster| {
            kept_by_spot(&app, caster) && app.world().get::<&Transform>(caster).unwrap().translation.x > 3.0
        })
        .expect("a caster under the spot");
    script.lock().unwrap().moves.push((under, caster_at(Vec3::new(400.0, 0.5, 400.0), 1.0)));
    app.run_frame();
    let work = app.resource::<ShadowViews>().work();
    assert!(!work.rebuilt && work.changed_words >= 1, "{work:?}");
    assert_eq!(work.culled_views, 0, "no view moved: {work:?}");
    assert!(!kept_by_spot(&app, under), "the moved caster left the spot's view");
    assert_fresh_answer(&app, 1);
    // Moved back: kept again.
    script.lock().unwrap().moves.push((under, caster_at(Vec3::new(5.0, 0.5, 0.0), 1.0)));
    app.run_frame();
    assert!(kept_by_spot(&app, under), "back under the spot");
    assert_fresh_answer(&app, 2);
    // The spot moves away from it: its view is culled again, the others kept.
    let before = app.resource::<ShadowViews>().work();
    assert_eq!(before.culled_views, 0);
    let down = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
    script.lock().unwrap().moves.push((spot, Transform::from_translation_rotation(Vec3::new(-12.0, 8.0, 6.0), down)));
    app.run_frame();
    let work = app.resource::<ShadowViews>().work();
    assert_eq!(work.culled_views, 1, "only the spot's view moved: {work:?}");
    assert!(!kept_by_spot(&app, under), "the spot moved away from it");
    assert_fresh_answer(&app, 3);
}

#[test]
fn casters_that_come_go_hide_or_stop_casting_leave_no_stale_bit() {
    let script = Arc::new(Mutex::new(Script::default()));
    let (mut app, _, _) = scripted_app(Vec3::new(0.0, 12.0, 30.0), Arc::clone(&script));
    let casters = spawn_grid(&mut app, 12);
    app.run_frames(2);
    let steps: [&dyn Fn(&mut Script); 5] = [
        &|script| script.hide.extend(&casters[..20]),
        &|script| script.unmake_caster.extend(&casters[20..40]),
        &|script| script.despawn.extend(&casters[40..60]),
        &|script| script.spawn.extend((0..30).map(|index| caster_at(Vec3::new(index as f32 - 15.0, 1.0, 2.0), 1.5))),
        &|script| {
            script.hide.extend(&casters[..10]);
            script.make_caster.extend(&casters[20..30]);
        },
    ];
    for (frame, step) in steps.iter().enumerate() {
        step(&mut script.lock().unwrap());
        app.run_frame();
        assert_fresh_answer(&app, frame);
    }
}

#[test]
fn a_frame_without_shadow_views_or_a_visibility_answer_is_caught_up_on() {
    let script = Arc::new(Mutex::new(Script::default()));
    let (mut app, _, _) = scripted_app(Vec3::new(0.0, 12.0, 30.0), Arc::clone(&script));
    let casters = spawn_grid(&mut app, 12);
    app.run_frames(2);
    // Shadows off for a frame: no view, nothing gathered, the casters move unseen.
    app.resource_mut::<ecs::ShadowSettings>().enabled = false;
    script.lock().unwrap().moves.push((casters[3], caster_at(Vec3::new(2.0, 0.5, 1.0), 2.0)));
    app.run_frame();
    assert!(app.resource::<ShadowViews>().views().is_empty());
    app.resource_mut::<ecs::ShadowSettings>().enabled = true;
    app.run_frame();
    assert!(app.resource::<ShadowViews>().work().rebuilt, "an answer was missed: every caster is read again");
    assert_fresh_answer(&app, 0);
    // A minimised window: the Visibility stage keeps its answer, the views follow it.
    app.insert_resource(ecs::Viewport { width: 0, height: 0 });
    script.lock().unwrap().moves.push((casters[5], caster_at(Vec3::new(-3.0, 0.5, 2.0), 2.0)));
    app.run_frame();
    app.insert_resource(ecs::Viewport { width: 640, height: 360 });
    app.run_frame();
    assert!(!app.resource::<ShadowViews>().work().rebuilt, "the answers followed one another");
    assert_fresh_answer(&app, 1);
}

/// One random change of a frame.
#[derive(Clone, Debug)]
enum Change {
    /// Caster `index` (of those spawned) moves to a place.
    Move(usize, [f32; 3]),
    /// Caster `index` gets another material (its box stays).
    Restyle(usize),
    /// Caster `index` is hidden, or shown again.
    Hide(usize),
    /// Caster `index` stops casting, or starts again.
    Cast(usize, bool),
    /// Caster `index` is despawned.
    Despawn(usize),
    /// A new caster at a place.
    Spawn([f32; 3]),
    /// Light `index` (the spot or the point light) moves to a place.
    Light(usize, [f32; 3]),
    /// The camera moves to a place, looking at the origin.
    Camera([f32; 3]),
}

fn change() -> impl Strategy<Value = Change> {
    let place = prop::array::uniform3(-30.0f32..30.0);
    prop_oneof![
        6 => (0usize..200, place.clone()).prop_map(|(index, at)| Change::Move(index, at)),
        1 => (0usize..200).prop_map(Change::Restyle),
        1 => (0usize..200).prop_map(Change::Hide),
        1 => (0usize..200, any::<bool>()).prop_map(|(index, on)| Change::Cast(index, on)),
        1 => (0usize..200).prop_map(Change::Despawn),
        2 => place.clone().prop_map(Change::Spawn),
        2 => (0usize..2, place.clone()).prop_map(|(index, at)| Change::Light(index, at)),
        1 => place.prop_map(Change::Camera),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Random frames of random changes (and frames of none): after every frame the answer the
    /// views kept and redid is a fresh one's, bit for bit, and the brute-force test's.
    #[test]
    fn the_kept_answer_is_a_fresh_one_after_random_changes(
        frames in prop::collection::vec(prop::collection::vec(change(), 0..6), 1..8),
    ) {
        let script = Arc::new(Mutex::new(Script::default()));
        let (mut app, camera, lights) = scripted_app(Vec3::new(0.0, 15.0, 35.0), Arc::clone(&script));
        let mut casters = spawn_grid(&mut app, 12);
        let mut alive = vec![true; casters.len()];
        app.run_frame();
        for (frame, changes) in frames.iter().enumerate() {
            {
                let mut script = script.lock().unwrap();
                for change in changes {
                    match *change {
                        Change::Move(index, at) if alive[index % casters.len()] => {
                            script.moves.push((casters[index % casters.len()], caster_at(Vec3::from(at) * Vec3::new(1.0, 0.2, 1.0), 1.5)));
                        }
                        Change::Restyle(index) if alive[index % casters.len()] => {
                            script.restyle.push(casters[index % casters.len()]);
                        }
                        Change::Hide(index) if alive[index % casters.len()] => script.hide.push(casters[index % casters.len()]),
                        Change::Cast(index, on) if alive[index % casters.len()] => {
                            let entity = casters[index % casters.len()];
                            if on { script.make_caster.push(entity) } else { script.unmake_caster.push(entity) }
                        }
                        Change::Despawn(index) if alive[index % casters.len()] => {
                            alive[index % casters.len()] = false;
                            script.despawn.push(casters[index % casters.len()]);
                        }
                        Change::Spawn(at) => script.spawn.push(caster_at(Vec3::from(at) * Vec3::new(1.0, 0.1, 1.0), 1.0)),
                        Change::Light(index, at) => {
                            let light = lights[index];
                            let place = Vec3::from(at) * Vec3::new(1.0, 0.2, 1.0) + Vec3::Y * 6.0;
                            let down = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
                            script.moves.push((light, Transform::from_translation_rotation(place, down)));
                        }
                        Change::Camera(at) => {
                            let eye = Vec3::from(at) + Vec3::new(0.0, 20.0, 40.0);
                            script.moves.push((camera, scene::look_at(eye, Vec3::ZERO)));
                        }
                        _ => {}
                    }
                }
                // A move and a despawn of one entity in a frame: the despawn wins.
                let despawned = script.despawn.clone();
                script.moves.retain(|(entity, _)| !despawned.contains(entity));
            }
            app.run_frame();
            assert_fresh_answer(&app, frame);
            // The spawned casters join the list the changes pick from.
            let known: std::collections::HashSet<Entity> = casters.iter().copied().collect();
            let mut new: Vec<Entity> = app
                .world()
                .query::<(Entity, &ShadowCaster)>()
                .iter()
                .map(|(entity, _)| entity)
                .filter(|entity| !known.contains(entity))
                .collect();
            new.sort_by_key(|entity| entity.id());
            alive.extend(std::iter::repeat_n(true, new.len()));
            casters.extend(new);
        }
    }
}
