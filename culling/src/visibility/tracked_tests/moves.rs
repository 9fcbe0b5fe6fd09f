//! Tracked frames while objects and the camera move: systems moving objects through queries,
//! `get_mut` and commands, single moves by the thousand, word bounds that shrink or turn
//! non-finite, and a camera creeping along levels of detail; each frame against a fresh cull.

use super::*;

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
    let mut previous: Option<Vec<crate::visibility::ObjectDraw>> = None;
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
