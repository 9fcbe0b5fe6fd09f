//! Tracked frames while entities come and go: spawns and despawns through commands keep the
//! frame tracked as the slot count moves, a newcomer under a despawned mover's id gets a slot
//! of its own, and a renderer's mirror built from the slot changes stays complete.

use super::*;

/// What the "life" system of [`add_life`] does in the next frame, through its commands.
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
        assert_eq!(visibility.objects().draws[5], crate::visibility::ObjectDraw::NONE);
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
        .filter(|&slot| visibility.objects().draws[slot] != crate::visibility::ObjectDraw::NONE)
        .count();
    assert_eq!(drawn_holes, 0, "no hole is drawn");
}

/// The columns a renderer mirrors, kept by applying each frame's [`SlotChanges`](crate::visibility::SlotChanges).
#[derive(Default)]
struct Mirror {
    models: Vec<Mat4>,
    bounds: Vec<ecs::Aabb>,
    draws: Vec<crate::visibility::ObjectDraw>,
    entities: Vec<Entity>,
}

impl Mirror {
    fn apply(&mut self, visibility: &Visibility) {
        let columns = visibility.objects();
        let len = visibility.len();
        self.models.resize(len, Mat4::IDENTITY);
        self.bounds.resize(len, crate::visibility::objects::EMPTY_BOX);
        self.draws.resize(len, crate::visibility::ObjectDraw::NONE);
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
