//! Tracked frames (see `tracked.rs`) against fresh culls, with objects and the camera moved
//! by systems, so the change log names what moved and the stage reads nothing else.
//!
//! Debug builds also check, after every tracked refresh, that no object changed without the
//! log saying so (`check_nothing_missed`): every test of the crate doubles as a test of the
//! log.

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

#[test]
fn tracked_frames_give_the_answer_of_a_fresh_cull_frame_after_frame() {
    let mut next = uniform(0x9e37_79b9_7f4a_7c15_u64);
    let levels = vec![
        LodLevel { mesh: ecs::MeshHandle(1), max_distance: 20.0 },
        LodLevel { mesh: ecs::MeshHandle(2), max_distance: 60.0 },
    ];
    // Clusters of 64 in spawn order, so that whole words of slots lie outside the view and
    // the word test is exercised, not only the per-object one.
    let clusters: Vec<Vec3> = (0..12).map(|_| Vec3::new(next() * 200.0 - 100.0, 0.0, next() * 200.0 - 100.0)).collect();
    let mut objects: Vec<(Mat4, Mesh, Option<Lod>)> = (0..700)
        .map(|index| {
            let jitter = Vec3::new(next() * 16.0 - 8.0, next() * 10.0 - 5.0, next() * 16.0 - 8.0);
            let position = clusters[index / 64] + jitter;
            let size = 0.1 + next() * 3.0;
            let lod = (index % 3 == 0).then(|| Lod { levels: levels.clone().into(), bias: 1.0 });
            let model = Mat4::from_scale_rotation_translation(Vec3::splat(size), Quat::IDENTITY, position);
            (model, scene::unit_cube_mesh(), lod)
        })
        .collect();
    let settings = RenderSettings { cull_max_distance: 80.0, cull_min_pixels: 4.0, ..RenderSettings::default() };
    let motion = Arc::new(Mutex::new(Motion::default()));
    let mut camera_transform = scene::look_at(Vec3::new(0.0, 2.0, 0.0), Vec3::new(0.0, 2.0, -1.0));
    let (mut app, _) = driven_app(camera_transform, motion.clone());
    app.insert_resource(settings);
    let entities = spawn_objects(app.world_mut(), &objects);
    for &entity in entities.iter().step_by(11) {
        app.world_mut().insert_one(entity, Drifter).expect("alive");
    }
    let mut tracked_frames = 0;
    for frame in 0..30 {
        let mut wanted = motion.lock();
        // The camera turns and walks on two frames of three; single objects jump on every
        // second frame; the drifters slide together on every fourth.
        if frame > 3 && frame % 3 != 0 {
            let eye = Vec3::new(frame as f32 * 0.7, 2.0, -(frame as f32) * 1.3);
            let angle = frame as f32 * 0.35;
            camera_transform = scene::look_at(eye, eye + Vec3::new(angle.sin(), 0.0, -angle.cos()));
            wanted.camera = Some(camera_transform);
        }
        if frame > 3 && frame % 2 == 0 {
            for (index, (model, _, _)) in objects.iter_mut().enumerate().filter(|(index, _)| index % 7 == frame % 7) {
                model.w_axis.x += if index % 2 == 0 { 15.0 } else { -15.0 };
                wanted.moves.push((entities[index], *model));
            }
        }
        if frame > 3 && frame % 4 == 0 {
            wanted.drift = 9.0;
            for (model, _, _) in objects.iter_mut().step_by(11) {
                model.w_axis.x += 9.0;
            }
        }
        drop(wanted);
        app.run_frame();
        tracked_frames += usize::from(app.resource::<Visibility>().stats().tracked);
        let fresh = fresh_answer(&objects, camera_transform, settings);
        let ours = answer_by_index(&app, &entities);
        assert_fresh_answer(frame, &ours, &fresh);
    }
    assert!(tracked_frames >= 27, "every frame after the first ones is tracked ({tracked_frames} of 30)");
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

#[test]
fn a_moved_object_is_seen_on_the_next_tracked_frame_and_nothing_else_is_read() {
    let motion = Arc::new(Mutex::new(Motion::default()));
    let (mut app, _) = driven_app(scene::look_at(Vec3::ZERO, Vec3::NEG_Z), motion.clone());
    let mover = scene_with_mover(&mut app, 300);
    app.run_frames(3);
    let stats = *app.resource::<Visibility>().stats();
    assert!(stats.tracked && stats.bounds_computed == 0, "a still frame is tracked and reads nothing: {stats:?}");
    assert!(!slot_visible(&app, mover));
    motion.lock().moves.push((mover, Mat4::from_translation(Vec3::new(0.0, 0.0, -10.0))));
    app.run_frame();
    let stats = *app.resource::<Visibility>().stats();
    assert!(stats.tracked, "moving one object keeps the frame tracked");
    assert_eq!(stats.bounds_computed, 1, "only the moved object's box is computed");
    assert!(slot_visible(&app, mover), "moved into view: visible on the very next frame");
    motion.lock().moves.push((mover, Mat4::from_translation(Vec3::new(0.0, 0.0, 10.0))));
    app.run_frame();
    assert!(!slot_visible(&app, mover), "and culled once it moved away");
}

#[test]
fn commands_that_change_an_object_are_seen_by_a_tracked_frame() {
    let (mut app, mover) = app_with_mover(100);
    let ahead = app.world_mut().spawn((
        WorldTransform(Mat4::from_translation(Vec3::new(0.0, 0.0, -10.0))),
        scene::unit_cube_mesh(),
        Visible(true),
    ));
    let step = Arc::new(Mutex::new(0u32));
    let system_step = step.clone();
    app.add_system(
        Stage::Input,
        System::new("edit", move |ctx| match std::mem::take(&mut *system_step.lock()) {
            1 => ctx.commands.insert_one(ahead, Visible(false)),
            2 => ctx.commands.insert_one(ahead, Visible(true)),
            3 => ctx.commands.insert_one(mover, ShadowCaster),
            4 => {
                let mut mesh = scene::unit_cube_mesh();
                mesh.bounds.min.z = -25.0;
                ctx.commands.insert_one(mover, mesh);
            }
            _ => {}
        }),
    );
    app.run_frames(3);
    assert!(slot_visible(&app, ahead) && !slot_visible(&app, mover));
    let run = |app: &mut App, value: u32| {
        *step.lock() = value;
        app.run_frame();
        *app.resource::<Visibility>().stats()
    };
    let stats = run(&mut app, 1);
    assert!(stats.tracked, "a component insert on a known object keeps the frame tracked");
    assert!(!slot_visible(&app, ahead), "Visible(false) by a command hides it at once");
    run(&mut app, 2);
    assert!(slot_visible(&app, ahead), "Visible(true) brings it back");
    run(&mut app, 3);
    assert_eq!(app.resource::<Visibility>().casters().len(), 1, "a ShadowCaster inserted by a command is a caster");
    let stats = run(&mut app, 4);
    assert!(stats.tracked);
    assert!(slot_visible(&app, mover), "a new mesh box reaching into view is seen at once");
}

/// What the "life" system of [`life_app`] does in the next frame, through its commands.
#[derive(Default)]
struct Life {
    despawn: Vec<Entity>,
    spawn: Vec<(Mat4, Mesh, Option<Lod>)>,
    /// Cubes to spawn as [`Drifter`]s (after `spawn`).
    spawn_drifters: Vec<Mat4>,
    /// The entities the system spawned, in the order of `spawn`.
    spawned: Vec<Entity>,
}

/// Adds to `app` an Input-stage system that despawns and spawns what the shared [`Life`]
/// asks for, through its commands (as a game would).
fn add_life(app: &mut App, life: Arc<Mutex<Life>>) {
    app.add_system(
        Stage::Input,
        System::new("life", move |ctx| {
            let mut life = life.lock();
            for entity in std::mem::take(&mut life.despawn) {
                ctx.commands.despawn(entity);
            }
            for (model, mesh, lod) in std::mem::take(&mut life.spawn) {
                let entity = match lod {
                    Some(lod) => ctx.commands.spawn((WorldTransform(model), mesh, Visible(true), lod)),
                    None => ctx.commands.spawn((WorldTransform(model), mesh, Visible(true))),
                };
                life.spawned.push(entity);
            }
            for model in std::mem::take(&mut life.spawn_drifters) {
                let entity =
                    ctx.commands.spawn((WorldTransform(model), scene::unit_cube_mesh(), Visible(true), Drifter));
                life.spawned.push(entity);
            }
        })
        .spawns(),
    );
}

#[test]
fn spawns_and_despawns_are_tracked_as_the_slot_count_moves() {
    let (mut app, mover) = app_with_mover(100);
    let life = Arc::new(Mutex::new(Life::default()));
    add_life(&mut app, life.clone());
    app.run_frames(3);
    let highest = app.resource::<Visibility>().slot_of(mover).expect("a slot");
    assert_eq!(highest, 100, "the mover was spawned last");
    let inner = app.resource::<Visibility>().objects().entities[5];

    life.lock().despawn.push(inner);
    app.run_frame();
    {
        let visibility = app.resource::<Visibility>();
        let stats = visibility.stats();
        assert!(stats.tracked && stats.objects == 100, "a despawn below the highest slot is tracked");
        assert_eq!(visibility.objects().entities[5], Entity::DANGLING, "its slot is a hole");
        assert_eq!(visibility.objects().draws[5], super::ObjectDraw::NONE);
        assert!(!visibility.bits().is_visible(5) && visibility.changes().contains(5), "undrawn, and said so");
        assert_eq!(visibility.len(), 101, "the slot count holds");
    }

    let model = Mat4::from_translation(Vec3::new(0.0, 0.0, -12.0));
    life.lock().spawn.push((model, scene::unit_cube_mesh(), None));
    app.run_frame();
    let newcomer = life.lock().spawned.pop().expect("spawned");
    {
        let visibility = app.resource::<Visibility>();
        assert!(visibility.stats().tracked, "a newcomer taking a free slot is tracked");
        assert_eq!(visibility.slot_of(newcomer), Some(5), "the lowest free slot");
        assert!(visibility.changes().appeared(5), "and appears there");
    }
    assert!(slot_visible(&app, newcomer), "a newcomer in the freed slot is culled where it is");

    // Free a slot below the highest one first, so that freeing the highest drops two.
    let below = app.resource::<Visibility>().objects().entities[99];
    life.lock().despawn.push(below);
    app.run_frame();
    life.lock().despawn.push(mover);
    app.run_frame();
    {
        let visibility = app.resource::<Visibility>();
        let stats = visibility.stats();
        assert!(stats.tracked && stats.objects == 99, "freeing the highest slot is tracked too");
        assert_eq!(visibility.len(), 99, "the count drops past every free slot at the top");
        assert_eq!(visibility.objects().draws.len(), 99);
        assert!(!visibility.changes().contains(99), "dropped slots are gone, not changed");
    }
    app.run_frame();
    assert!(app.resource::<Visibility>().stats().tracked, "and the next still frame is tracked");

    life.lock().spawn.extend([(model, scene::unit_cube_mesh(), None), (model, scene::unit_cube_mesh(), None)]);
    app.run_frame();
    let grown = std::mem::take(&mut life.lock().spawned);
    let visibility = app.resource::<Visibility>();
    let stats = visibility.stats();
    assert!(stats.tracked && stats.objects == 101, "no free slot: the count grows, still tracked");
    assert_eq!(visibility.len(), 101);
    let mut slots: Vec<Option<u32>> = grown.iter().map(|&entity| visibility.slot_of(entity)).collect();
    slots.sort();
    assert_eq!(slots, [Some(99), Some(100)], "new slots past the old count");
    assert!(visibility.bits().is_visible(100) && visibility.changes().appeared(100));
}

#[test]
fn a_newcomer_under_a_despawned_movers_id_gets_its_own_slot() {
    // Movers (moved as an archetype on some frames, so their rows' slots are kept between
    // refreshes) lose their last row; a frame later a new mover reuses that entity id, in
    // that row, while a lower slot is free: it must take the lower slot, not the one the
    // archetype's kept rows knew for the id.
    let motion = Arc::new(Mutex::new(Motion::default()));
    let (mut app, _) = driven_app(scene::look_at(Vec3::ZERO, Vec3::NEG_Z), motion.clone());
    let life = Arc::new(Mutex::new(Life::default()));
    add_life(&mut app, life.clone());
    let at = |x: f32| Mat4::from_translation(Vec3::new(x, 0.0, -20.0));
    let still: Vec<Entity> = (0..70)
        .map(|index| {
            let model = WorldTransform(at(index as f32 * 0.1 - 3.5));
            app.world_mut().spawn((model, scene::unit_cube_mesh(), Visible(true)))
        })
        .collect();
    let movers: Vec<Entity> = (0..10)
        .map(|index| {
            let model = WorldTransform(at(index as f32 * 0.5 - 2.5));
            app.world_mut().spawn((model, scene::unit_cube_mesh(), Visible(true), Drifter))
        })
        .collect();
    // In an archetype of its own after the movers', so it keeps the highest slot.
    app.world_mut().spawn((WorldTransform(at(3.0)), scene::unit_cube_mesh(), Visible(true), ShadowCaster));
    app.run_frame();
    motion.lock().drift = 0.25;
    app.run_frame();
    assert!(app.resource::<Visibility>().stats().tracked, "the movers' archetype was refreshed whole");
    let leaving = *movers.last().expect("movers");
    // hecs hands out the id freed last first: the mover's.
    life.lock().despawn.extend([still[3], leaving]);
    app.run_frame();
    assert!(app.resource::<Visibility>().stats().tracked, "the movers did not move: a tracked frame");
    motion.lock().drift = 0.25;
    life.lock().spawn_drifters.push(at(-1.0));
    app.run_frame();
    let newcomer = life.lock().spawned.pop().expect("spawned");
    assert_eq!(newcomer.id(), leaving.id(), "the newcomer reuses the id of the mover that left");
    let visibility = app.resource::<Visibility>();
    assert!(visibility.stats().tracked, "a tracked frame");
    let slot = visibility.slot_of(newcomer).expect("a slot") as usize;
    assert_eq!(visibility.objects().entities[slot], newcomer);
    // Spawned at the end of the stage whose system moved the movers: it has not moved.
    assert_eq!(visibility.objects().models[slot], at(-1.0), "its own matrix in its own slot");
    assert!(visibility.bits().is_visible(slot), "and culled where it is");
    assert_eq!(slot, 3, "the lowest free slot");
    assert!(!visibility.objects().entities.contains(&leaving), "no slot names the mover that left");
    let drawn_holes = (0..visibility.len())
        .filter(|&slot| visibility.objects().entities[slot] == Entity::DANGLING)
        .filter(|&slot| visibility.objects().draws[slot] != super::ObjectDraw::NONE)
        .count();
    assert_eq!(drawn_holes, 0, "no hole is drawn");
}

/// The columns a renderer mirrors, kept by applying each frame's [`SlotChanges`](super::SlotChanges).
#[derive(Default)]
struct Mirror {
    models: Vec<Mat4>,
    bounds: Vec<ecs::Aabb>,
    draws: Vec<super::ObjectDraw>,
    entities: Vec<Entity>,
}

impl Mirror {
    fn apply(&mut self, visibility: &Visibility) {
        let columns = visibility.objects();
        let len = visibility.len();
        self.models.resize(len, Mat4::IDENTITY);
        self.bounds.resize(len, super::answer::EMPTY_BOX);
        self.draws.resize(len, super::ObjectDraw::NONE);
        self.entities.resize(len, Entity::DANGLING);
        for slot in visibility.changes().slots() {
            let slot = slot as usize;
            self.models[slot] = columns.models[slot];
            self.bounds[slot] = columns.bounds[slot];
            self.draws[slot] = columns.draws[slot];
            self.entities[slot] = columns.entities[slot];
        }
    }

    fn matches(&self, visibility: &Visibility) -> bool {
        let columns = visibility.objects();
        self.models == columns.models
            && self.bounds == columns.bounds
            && self.draws == columns.draws
            && self.entities == columns.entities
    }
}

#[test]
fn spawns_and_despawns_every_frame_give_a_fresh_culls_answer_and_complete_changes() {
    let mut next = uniform(0x2545_f491_4f6c_dd1d);
    let levels = vec![
        LodLevel { mesh: ecs::MeshHandle(1), max_distance: 20.0 },
        LodLevel { mesh: ecs::MeshHandle(2), max_distance: 60.0 },
    ];
    let object = |next: &mut dyn FnMut() -> f32, serial: usize| {
        let position = Vec3::new(next() * 160.0 - 80.0, next() * 10.0 - 5.0, next() * 160.0 - 80.0);
        let size = 0.1 + next() * 3.0;
        let lod = serial.is_multiple_of(4).then(|| Lod { levels: levels.clone().into(), bias: 1.0 });
        (
            Mat4::from_scale_rotation_translation(Vec3::splat(size), Quat::IDENTITY, position),
            scene::unit_cube_mesh(),
            lod,
        )
    };
    let mut serial = 0;
    let mut objects: Vec<(Mat4, Mesh, Option<Lod>)> = (0..400)
        .map(|_| {
            serial += 1;
            object(&mut next, serial)
        })
        .collect();
    let settings = RenderSettings { cull_max_distance: 90.0, cull_min_pixels: 2.0, ..RenderSettings::default() };
    let motion = Arc::new(Mutex::new(Motion::default()));
    let mut camera_transform = scene::look_at(Vec3::new(0.0, 2.0, 0.0), Vec3::new(0.0, 2.0, -1.0));
    let (mut app, _) = driven_app(camera_transform, motion.clone());
    app.insert_resource(settings);
    let life = Arc::new(Mutex::new(Life::default()));
    add_life(&mut app, life.clone());
    let mut entities = spawn_objects(app.world_mut(), &objects);
    for &entity in entities.iter().step_by(9) {
        app.world_mut().insert_one(entity, Drifter).expect("alive");
    }
    let mut mirror = Mirror::default();
    let (mut tracked_frames, mut churned, mut churned_tracked) = (0, 0, 0);
    for frame in 0..40 {
        let churn = frame > 2 && frame % 5 != 4;
        if churn {
            let mut life = life.lock();
            let mut wanted = motion.lock();
            // Despawn a few at random, now and then the one in the highest slot.
            let leaving = 1 + (next() * 12.0) as usize;
            for pick in 0..leaving {
                let index = if pick == 0 && frame % 7 == 0 {
                    let visibility = app.resource::<Visibility>();
                    let last = visibility.objects().entities[visibility.len() - 1];
                    entities.iter().position(|&entity| entity == last).expect("a live object")
                } else {
                    (next() * entities.len() as f32) as usize % entities.len()
                };
                life.despawn.push(entities.swap_remove(index));
                objects.swap_remove(index);
            }
            // A wave of arrivals now and then outnumbers the free slots: the count grows.
            let arriving = if (20..26).contains(&frame) { 40 } else { (next() * 14.0) as usize };
            for _ in 0..arriving {
                serial += 1;
                let arrival = object(&mut next, serial);
                objects.push(arrival.clone());
                life.spawn.push(arrival);
            }
            // Some survivors jump.
            for index in (0..entities.len()).filter(|index| index % 13 == frame % 13) {
                objects[index].0.w_axis.z += 7.0;
                wanted.moves.push((entities[index], objects[index].0));
            }
        }
        if frame > 2 && frame % 3 == 0 {
            let eye = Vec3::new(frame as f32 * 0.9, 2.0, -(frame as f32) * 1.1);
            let angle = frame as f32 * 0.3;
            camera_transform = scene::look_at(eye, eye + Vec3::new(angle.sin(), 0.0, -angle.cos()));
            motion.lock().camera = Some(camera_transform);
        }
        app.run_frame();
        // The system spawned this frame's arrivals in the order they were pushed to `objects`.
        entities.append(&mut life.lock().spawned);
        let visibility = app.resource::<Visibility>();
        let stats = *visibility.stats();
        tracked_frames += usize::from(stats.tracked);
        churned += usize::from(churn);
        churned_tracked += usize::from(stats.tracked && churn);
        mirror.apply(&visibility);
        assert!(mirror.matches(&visibility), "frame {frame}: applying the changes gives the columns");
        assert_eq!(stats.objects, entities.len(), "frame {frame}: every live object has its slot");
        drop(visibility);
        let fresh = fresh_answer(&objects, camera_transform, settings);
        let ours = answer_by_index(&app, &entities);
        assert_fresh_answer(frame, &ours, &fresh);
    }
    assert_eq!(churned_tracked, churned, "every frame with spawns and despawns is tracked");
    assert!(tracked_frames >= 25, "{tracked_frames} of 40 frames tracked");
}

#[test]
fn thousands_of_single_moves_refresh_their_archetypes_and_match_a_fresh_cull() {
    single_moves_match_a_fresh_cull(3500);
}

#[test]
fn hundreds_of_single_moves_refresh_in_parallel_and_match_a_fresh_cull() {
    // Three quarters of 1,000 objects a frame: above the parallel refresh's threshold, below
    // the one that refreshes whole archetypes instead; some moved twice in a frame.
    single_moves_match_a_fresh_cull(1000);
}

/// `count` cubes in rows ahead of the camera, three quarters of them moved one by one
/// (`get_mut`) every frame, some of them twice; every frame's answer is a fresh cull's.
fn single_moves_match_a_fresh_cull(count: usize) {
    let motion = Arc::new(Mutex::new(Motion::default()));
    let camera_transform = scene::look_at(Vec3::new(0.0, 2.0, 0.0), Vec3::new(0.0, 2.0, -1.0));
    let (mut app, _) = driven_app(camera_transform, motion.clone());
    let mut objects: Vec<(Mat4, Mesh, Option<Lod>)> = (0..count)
        .map(|index| {
            let position = Vec3::new((index % 70) as f32 * 3.0 - 105.0, 0.0, -((index / 70) as f32) * 3.0 + 20.0);
            (Mat4::from_translation(position), scene::unit_cube_mesh(), None)
        })
        .collect();
    let entities = spawn_objects(app.world_mut(), &objects);
    let settings = RenderSettings::default();
    for frame in 0..8usize {
        if frame > 1 {
            let mut wanted = motion.lock();
            for (index, (model, _, _)) in objects.iter_mut().enumerate().filter(|(index, _)| index % 4 != frame % 4) {
                if index % 9 == 0 {
                    // Named twice by the log: a first move the second one replaces.
                    wanted.moves.push((entities[index], Mat4::from_translation(Vec3::splat(1e4))));
                }
                model.w_axis.x += if frame % 2 == 0 { 40.0 } else { -40.0 };
                wanted.moves.push((entities[index], *model));
            }
        }
        app.run_frame();
        let stats = *app.resource::<Visibility>().stats();
        if frame > 2 {
            assert!(stats.tracked, "frame {frame}: single moves keep frames tracked");
        }
        let fresh = fresh_answer(&objects, camera_transform, settings);
        assert_eq!(answer_by_index(&app, &entities), fresh, "frame {frame}: the same answer as a fresh cull");
    }
}

/// The unit box centred on the origin, and an occluder set in which `mesh` is that box: the
/// walls of the occlusion tests are this mesh scaled.
fn unit_box_occluder(mesh: ecs::MeshHandle) -> (ecs::Aabb, crate::occlusion::OccluderMeshes) {
    use crate::occlusion::{OccluderMesh, OccluderMeshes};
    let unit = ecs::Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5));
    let mut occluders = OccluderMeshes::new();
    occluders.insert(mesh, OccluderMesh::from_box(&unit).expect("a box occludes"));
    (unit, occluders)
}

#[test]
fn word_and_group_occlusion_hides_only_what_the_exact_reference_hides() {
    use crate::occlusion::reference::ReferenceRaster;
    use crate::occlusion::{fit_buffer, OccluderInstance};
    let wall_mesh = ecs::MeshHandle(7);
    let (unit, occluders) = unit_box_occluder(wall_mesh);
    let motion = Arc::new(Mutex::new(Motion::default()));
    let eye = |frame: usize| Vec3::new(frame as f32 * 0.8 - 4.0, 2.0, 5.0);
    let (mut app, _) = driven_app(scene::look_at(eye(0), eye(0) + Vec3::NEG_Z), motion.clone());
    app.insert_resource(occluders.clone());
    // Walls with gaps at z = -20, spawned first; then clusters of 64 small boxes (one slot
    // word each) behind the walls, some peeking over or through a gap, and a few in front.
    let walls: Vec<Mat4> = (0..8)
        .map(|index| {
            let center = Vec3::new(index as f32 * 12.0 - 42.0, 4.0, -20.0);
            Mat4::from_scale_rotation_translation(Vec3::new(10.0, 8.0, 1.0), Quat::IDENTITY, center)
        })
        .collect();
    for model in &walls {
        app.world_mut().spawn((
            WorldTransform(*model),
            Mesh::new(wall_mesh, ecs::MaterialHandle(1), unit),
            Visible(true),
        ));
    }
    let mut next = uniform(0x2545_f491_4f6c_dd1d_u64);
    for cluster in 0..40 {
        let center =
            Vec3::new(next() * 90.0 - 45.0, next() * 6.0, if cluster % 8 == 0 { -10.0 } else { -25.0 - next() * 40.0 });
        for _ in 0..64 {
            let position = center + Vec3::new(next() * 6.0 - 3.0, next() * 3.0, next() * 6.0 - 3.0);
            let model = Mat4::from_scale_rotation_translation(Vec3::splat(0.2 + next()), Quat::IDENTITY, position);
            app.world_mut().spawn((WorldTransform(model), scene::unit_cube_mesh(), Visible(true)));
        }
    }
    let instances: Vec<OccluderInstance> =
        walls.iter().map(|&world| OccluderInstance { mesh: wall_mesh, world }).collect();
    let mut occluded_total = 0;
    for frame in 0..10 {
        motion.lock().camera = Some(scene::look_at(eye(frame), eye(frame) + Vec3::new(0.05 * frame as f32, 0.0, -1.0)));
        app.run_frame();
        let visibility = app.resource::<Visibility>();
        let view = *visibility.view().expect("a view");
        let settings = *app.resource::<RenderSettings>();
        let viewport = view.viewport;
        let [width, height] = fit_buffer(
            settings.occlusion_buffer,
            [viewport.width, viewport.height],
            settings.occlusion_buffer_follows_viewport,
        );
        let reference = ReferenceRaster::new(view.projection * view.view, width, height, 2, &occluders, &instances);
        for slot in 0..visibility.len() {
            if visibility.is_occluded(slot) {
                occluded_total += 1;
                let bounds = visibility.objects().bounds[slot];
                assert!(
                    reference.hides(&bounds),
                    "frame {frame}: slot {slot} is hidden but the exact reference sees it"
                );
            }
        }
    }
    assert!(occluded_total > 1000, "the walls hide a good share of the clusters ({occluded_total})");
}

#[test]
fn word_bounds_follow_movers_that_shrink_them_or_turn_non_finite_and_back() {
    // Words keep the union of their settled boxes and read only their movers' boxes again
    // (`SettledBounds`); debug builds compare every word's bounds with a fresh union after
    // each tracked refresh, and the answer is compared with a fresh cull here.
    let motion = Arc::new(Mutex::new(Motion::default()));
    let camera_transform = scene::look_at(Vec3::new(0.0, 2.0, 0.0), Vec3::new(0.0, 2.0, -1.0));
    let (mut app, _) = driven_app(camera_transform, motion.clone());
    let mut objects: Vec<(Mat4, Mesh, Option<Lod>)> = (0..256)
        .map(|index| {
            let position = Vec3::new((index % 16) as f32 * 2.0 - 16.0, 0.0, -10.0 - (index / 16) as f32 * 4.0);
            (Mat4::from_translation(position), scene::unit_cube_mesh(), None)
        })
        .collect();
    let entities = spawn_objects(app.world_mut(), &objects);
    let settings = RenderSettings::default();
    let far_behind = Mat4::from_translation(Vec3::new(0.0, 0.0, 500.0));
    let ahead = Mat4::from_translation(Vec3::new(3.0, 1.0, -20.0));
    // Per frame: (object, where it goes). Object 5 leaves its word far behind the camera
    // (the word's bounds grow), turns non-finite (unbounded), comes back finite, then every
    // object of its word but one is moved away and back (the bounds shrink and grow again).
    let plan: Vec<Vec<(usize, Mat4)>> = vec![
        vec![],
        vec![(5, far_behind)],
        vec![(5, Mat4::from_cols_array(&[f32::NAN; 16]))],
        vec![(5, ahead), (70, far_behind)],
        vec![(70, ahead)],
        (0..63).map(|index| (index, far_behind * Mat4::from_translation(Vec3::X * index as f32))).collect(),
        vec![(5, Mat4::from_translation(Vec3::new(-40.0, 0.0, -10.0)))],
        (0..63).map(|index| (index, Mat4::from_translation(Vec3::new(index as f32, 0.0, -30.0)))).collect(),
        vec![],
    ];
    for (frame, moves) in plan.into_iter().enumerate() {
        {
            let mut wanted = motion.lock();
            for (index, model) in moves {
                objects[index].0 = model;
                wanted.moves.push((entities[index], model));
            }
        }
        app.run_frame();
        let stats = *app.resource::<Visibility>().stats();
        if frame > 0 {
            assert!(stats.tracked, "frame {frame}: single moves keep frames tracked");
        }
        let fresh = fresh_answer(&objects, camera_transform, settings);
        assert_eq!(answer_by_index(&app, &entities), fresh, "frame {frame}: the same answer as a fresh cull");
    }
}

/// A camera creeping along a row of objects with levels: each word skips its objects' holds,
/// and its frustum test, while the camera stays within the word's slack, and every level and
/// every bit still change on the very frame a fresh cull changes them, also for an object
/// moved on its own, and after the global bias changes.
#[test]
fn a_creeping_camera_changes_each_level_on_the_frame_a_fresh_cull_does() {
    let mut next = uniform(0x51_7cc1_b727_220a_u64);
    let levels = vec![
        LodLevel { mesh: ecs::MeshHandle(1), max_distance: 6.0 },
        LodLevel { mesh: ecs::MeshHandle(2), max_distance: 15.0 },
        LodLevel { mesh: ecs::MeshHandle(3), max_distance: 35.0 },
    ];
    // A row ahead of the camera, so that thresholds pass objects all along the walk; some
    // objects without levels in between.
    let mut objects: Vec<(Mat4, Mesh, Option<Lod>)> = (0..320)
        .map(|index| {
            let position = Vec3::new(next() * 6.0 - 3.0, next() * 2.0, -2.0 - index as f32 * 0.25);
            let lod = (index % 5 != 0).then(|| Lod { levels: levels.clone().into(), bias: 0.8 + next() * 0.4 });
            (Mat4::from_translation(position), scene::unit_cube_mesh(), lod)
        })
        .collect();
    let mut settings = RenderSettings::default();
    let motion = Arc::new(Mutex::new(Motion::default()));
    let eye_at = |step: f32| Vec3::new(0.0, 1.0, 4.0 - step);
    let mut camera_transform = scene::look_at(eye_at(0.0), eye_at(1.0));
    let (mut app, _) = driven_app(camera_transform, motion.clone());
    app.insert_resource(settings);
    let entities = spawn_objects(app.world_mut(), &objects);
    // A run of neighbouring slots that a query moves together: their words are refreshed
    // densely (many slots of one word at once).
    for &entity in &entities[128..176] {
        app.world_mut().insert_one(entity, Drifter).expect("alive");
    }
    let mut level_changes = 0;
    let mut previous: Option<Vec<super::ObjectDraw>> = None;
    let mut walked = 0.0f32;
    for frame in 0..240 {
        let mut wanted = motion.lock();
        // Mostly small steps forward, a few back, and an occasional jump.
        walked += match frame % 40 {
            17 => -0.9,
            31 => 2.5,
            _ => 0.07 + next() * 0.06,
        };
        camera_transform = scene::look_at(eye_at(walked), eye_at(walked + 1.0));
        wanted.camera = Some(camera_transform);
        if frame % 9 == 4 {
            let index = 1 + (frame * 7) % 300;
            objects[index].0.w_axis.z -= 0.4;
            wanted.moves.push((entities[index], objects[index].0));
        }
        if frame % 7 == 3 {
            // The drifters slide along x (the drive system adds `drift` to each).
            wanted.drift = if frame % 14 == 3 { 1.5 } else { -1.5 };
            for (model, _, _) in &mut objects[128..176] {
                model.w_axis.x += wanted.drift;
            }
        }
        drop(wanted);
        if frame == 150 {
            settings.lod_bias = 1.3;
            app.insert_resource(settings);
        }
        app.run_frame();
        let fresh = fresh_answer(&objects, camera_transform, settings);
        let ours = answer_by_index(&app, &entities);
        // The camera only moves, so words keep their side of the frustum by their holds too.
        assert_fresh_answer(frame, &ours, &fresh);
        if let Some(previous) = &previous {
            level_changes += previous.iter().zip(&ours.draws).filter(|(before, now)| before != now).count();
        }
        previous = Some(ours.draws);
    }
    assert!(level_changes > 100, "thresholds pass objects all along the walk ({level_changes} level changes)");
}

/// A tracked frame finds occluders again where a draw changed: a wall whose `Mesh` a system
/// swaps between an occluder mesh and a plain one hides the boxes behind it on exactly the
/// frames a fresh cull says it does.
#[test]
fn a_draw_switched_to_or_from_an_occluder_on_a_tracked_frame_is_seen_that_frame() {
    let wall_mesh = ecs::MeshHandle(7);
    let (unit, occluders) = unit_box_occluder(wall_mesh);
    // Sixteen panels side by side, neighbouring slots: swapping them all refreshes their word
    // densely.
    let panels: Vec<Mat4> = (0..16)
        .map(|index| {
            let center = Vec3::new(index as f32 * 2.5 - 18.75, 5.0, -20.0);
            Mat4::from_scale_rotation_translation(Vec3::new(2.5, 20.0, 1.0), Quat::IDENTITY, center)
        })
        .collect();
    let boxes: Vec<Mat4> = (0..200)
        .map(|index| {
            let position =
                Vec3::new((index % 20) as f32 * 1.5 - 15.0, (index / 20) as f32 * 0.8, -30.0 - (index % 7) as f32);
            Mat4::from_scale_rotation_translation(Vec3::splat(0.5), Quat::IDENTITY, position)
        })
        .collect();
    let camera = scene::look_at(Vec3::new(0.0, 2.0, 5.0), Vec3::new(0.0, 2.0, -1.0));
    let mesh_of = move |occludes: bool| {
        if occludes {
            Mesh::new(wall_mesh, ecs::MaterialHandle(1), unit)
        } else {
            scene::unit_cube_mesh()
        }
    };
    // What a fresh app decides for the wall drawn with an occluder or not: per box, occluded.
    let fresh = |occludes: bool| -> Vec<bool> {
        let mut app = App::with_threads(1);
        super::install(&mut app);
        app.insert_resource(occluders.clone());
        scene::spawn_camera(app.world_mut(), Camera::default(), camera);
        for &panel in &panels {
            app.world_mut().spawn((WorldTransform(panel), mesh_of(occludes), Visible(true)));
        }
        let entities: Vec<Entity> = boxes
            .iter()
            .map(|&model| app.world_mut().spawn((WorldTransform(model), scene::unit_cube_mesh(), Visible(true))))
            .collect();
        app.run_frame();
        occluded_by_index(&app, &entities)
    };
    let (with_wall, without_wall) = (fresh(true), fresh(false));
    assert!(with_wall.iter().filter(|&&hidden| hidden).count() > 100, "the wall hides most boxes");
    assert!(without_wall.iter().all(|&hidden| !hidden), "nothing hides them without it");

    // The wall starts plain, so its word's occluder bit must be found again when it turns
    // into an occluder (a stale bit that stays set would only be filtered by the selection).
    // Swapped through the entity (a single-object refresh) and through a query (its
    // archetype is refreshed whole).
    for by_query in [false, true] {
        let occludes = Arc::new(Mutex::new(false));
        let mut app = App::with_threads(2);
        super::install(&mut app);
        app.insert_resource(occluders.clone());
        scene::spawn_camera(app.world_mut(), Camera::default(), camera);
        let wall: Vec<Entity> = panels
            .iter()
            .map(|&panel| app.world_mut().spawn((WorldTransform(panel), mesh_of(false), Visible(true), Drifter)))
            .collect();
        let entities: Vec<Entity> = boxes
            .iter()
            .map(|&model| app.world_mut().spawn((WorldTransform(model), scene::unit_cube_mesh(), Visible(true))))
            .collect();
        let wanted = occludes.clone();
        app.add_system(
            Stage::Input,
            System::new("swap the wall's mesh", move |ctx| {
                let occludes = *wanted.lock();
                let swap = |mesh: &mut Mesh| {
                    if (mesh.mesh == wall_mesh) != occludes {
                        *mesh = mesh_of(occludes);
                    }
                };
                if by_query {
                    ctx.query::<With<&mut Mesh, &Drifter>>().iter().for_each(swap);
                } else {
                    for &panel in &wall {
                        swap(&mut ctx.get_mut::<Mesh>(panel).expect("a panel"));
                    }
                }
            })
            .writes::<Mesh>()
            .reads::<Drifter>(),
        );
        let mut tracked = 0;
        for frame in 0..12 {
            let now = frame % 4 >= 2;
            *occludes.lock() = now;
            app.run_frame();
            tracked += usize::from(app.resource::<Visibility>().stats().tracked);
            let ours = occluded_by_index(&app, &entities);
            let expected = if now { &with_wall } else { &without_wall };
            assert_eq!(&ours, expected, "swapped by query {by_query}, frame {frame}");
        }
        assert!(tracked >= 10, "the swaps are seen by tracked frames ({tracked} of 12)");
    }
}
