//! Tracked frames (see `tracked/`) against fresh culls, with objects and the camera moved
//! by systems, so the change log names what moved and the stage reads nothing else.
//!
//! Debug builds also check, after every tracked refresh, that no object changed without the
//! log saying so (`check_nothing_missed`): every test of the crate doubles as a test of the
//! log.
//!
//! The tests by theme: objects and the camera moving (`moves.rs`), spawns and despawns
//! (`lifecycle.rs`) and occlusion on tracked frames (`occlusion.rs`); this file holds the apps
//! and answers they share.

use std::sync::Arc;

use ecs::{scene, Camera, Lod, LodLevel, Mesh, RenderSettings, ShadowCaster, Transform, Visible, WorldTransform};
use glam::{Mat4, Quat, Vec3};
use std::sync::Mutex as StdMutex;

/// A mutex whose `lock` cannot fail (the tests never panic while holding it).
#[derive(Default)]
struct Mutex<T>(StdMutex<T>);

impl<T> Mutex<T> {
    fn new(value: T) -> Self {
        Mutex(StdMutex::new(value))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        self.0.lock().expect("not poisoned")
    }
}
use runtime::hecs::{Entity, With};
use runtime::{App, Stage, System};

use super::cache_tests::{spawn_objects, uniform};
use super::Visibility;

/// What the stage decided, by spawn index (slots differ between apps whose archetypes differ).
#[derive(Debug, PartialEq)]
struct Answer {
    visible: Vec<bool>,
    draws: Vec<super::ObjectDraw>,
    counts: [usize; 4],
}

fn answer_by_index(app: &App, entities: &[Entity]) -> Answer {
    let visibility = app.resource::<Visibility>();
    let slot_of = |entity: Entity| {
        visibility.objects().entities.iter().position(|&owner| owner == entity).expect("a mesh object")
    };
    let stats = visibility.stats();
    Answer {
        visible: entities.iter().map(|&entity| visibility.bits().is_visible(slot_of(entity))).collect(),
        draws: entities.iter().map(|&entity| visibility.objects().draws[slot_of(entity)]).collect(),
        counts: [stats.visible, stats.frustum_rejected, stats.distance_rejected, stats.size_rejected],
    }
}

/// Whether each of `entities` was found occluded, by spawn index.
fn occluded_by_index(app: &App, entities: &[Entity]) -> Vec<bool> {
    let visibility = app.resource::<Visibility>();
    let slot_of = |entity: Entity| {
        visibility.objects().entities.iter().position(|&owner| owner == entity).expect("a mesh object")
    };
    entities.iter().map(|&entity| visibility.is_occluded(slot_of(entity))).collect()
}

/// One frame of the same objects and camera in a fresh app (nothing cached, a full pass).
fn fresh_answer(objects: &[(Mat4, Mesh, Option<Lod>)], camera: Transform, settings: RenderSettings) -> Answer {
    let mut app = App::with_threads(1);
    super::install(&mut app);
    app.insert_resource(settings);
    scene::spawn_camera(app.world_mut(), Camera::default(), camera);
    let entities = spawn_objects(app.world_mut(), objects);
    app.run_frame();
    assert!(!app.resource::<Visibility>().stats().tracked, "a first frame is a full pass");
    answer_by_index(&app, &entities)
}

/// Asserts that a tracked stage's answer is a fresh cull's: the bits, the visible and
/// rejected counts, and the draws of the objects in view (outside it, a word keeps its last
/// levels).
fn assert_fresh_answer(frame: impl std::fmt::Display, ours: &Answer, fresh: &Answer) {
    assert_eq!(ours.visible, fresh.visible, "frame {frame}: a tracked stage's bits are a fresh cull's");
    assert_eq!(ours.counts, fresh.counts, "frame {frame}: visible and rejected counts as a fresh cull's");
    for (index, &visible) in fresh.visible.iter().enumerate() {
        if visible {
            assert_eq!(ours.draws[index], fresh.draws[index], "frame {frame}: object {index}'s draw is a fresh cull's");
        }
    }
}

/// Marks the objects one system moves as a group, through an archetype query.
struct Drifter;

/// What the test wants moved in the next frame; the "drive" system applies it.
#[derive(Default)]
struct Motion {
    camera: Option<Transform>,
    moves: Vec<(Entity, Mat4)>,
    drift: f32,
}

/// An app whose Input-stage system applies the shared [`Motion`]: the camera and single
/// objects through `get_mut`, the drifters through a filtered query.
fn driven_app(camera_transform: Transform, motion: Arc<Mutex<Motion>>) -> (App, Entity) {
    let mut app = App::with_threads(2);
    super::install(&mut app);
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), camera_transform);
    app.add_system(
        Stage::Input,
        System::new("drive", move |ctx| {
            let mut motion = motion.lock();
            if let Some(transform) = motion.camera.take() {
                *ctx.get_mut::<Transform>(camera).expect("a camera") = transform;
            }
            for (entity, model) in motion.moves.drain(..) {
                ctx.get_mut::<WorldTransform>(entity).expect("alive").0 = model;
            }
            let drift = std::mem::take(&mut motion.drift);
            if drift != 0.0 {
                for world in ctx.query::<With<&mut WorldTransform, &Drifter>>().iter() {
                    world.0.w_axis.x += drift;
                }
            }
        })
        .writes::<Transform>()
        .writes::<WorldTransform>()
        .reads::<Drifter>(),
    );
    (app, camera)
}

/// An app on two threads with the stage, a camera at the origin looking down -Z and
/// [`scene_with_mover`]'s scene; returns the app and the mover.
fn app_with_mover(count: usize) -> (App, Entity) {
    let mut app = App::with_threads(2);
    super::install(&mut app);
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::ZERO, Vec3::NEG_Z));
    let mover = scene_with_mover(&mut app, count);
    (app, mover)
}

/// A still scene of `count` cubes in view and one `mover` behind the camera.
fn scene_with_mover(app: &mut App, count: usize) -> Entity {
    for index in 0..count {
        let position = Vec3::new(index as f32 % 10.0 - 5.0, (index / 10) as f32 % 10.0 - 5.0, -30.0);
        app.world_mut().spawn((
            WorldTransform(Mat4::from_translation(position)),
            scene::unit_cube_mesh(),
            Visible(true),
        ));
    }
    app.world_mut().spawn((
        WorldTransform(Mat4::from_translation(Vec3::new(0.0, 0.0, 10.0))),
        scene::unit_cube_mesh(),
        Visible(true),
    ))
}

fn slot_visible(app: &App, entity: Entity) -> bool {
    let visibility = app.resource::<Visibility>();
    let slot = visibility.objects().entities.iter().position(|&owner| owner == entity).expect("a mesh object");
    visibility.bits().is_visible(slot)
}

mod creep;
mod levels;
mod lifecycle;
mod moves;
mod occlusion;
