//! Chains chosen by their levels' errors on tracked frames: every pick is the error rule's
//! under the object's own hysteresis state (the level it drew last frame), as a reference
//! that keeps that state per object finds it.

use std::sync::Arc;

use ecs::{scene, Camera, Lod, LodErrors, LodLevel, Mesh, MeshHandle, RenderSettings, Visible, WorldTransform};
use glam::{Mat4, Vec3};
use runtime::App;

use super::{answer_by_index, driven_app, Motion, Mutex};
use crate::visibility::cache_tests::{spawn_objects, uniform};
use crate::visibility::Visibility;
use crate::{lod_box_distance_sq, lod_scale_sq, select_lod_by_error, LodErrorView};

/// The errors of the chain: meshes 1, 2 and 3.
const ERRORS: [f32; 3] = [0.0, 0.004, 0.02];

/// A camera walking towards a field of objects with an error chain (some scaled, some moved
/// on their own, every one in view all along): each frame every level is the rule's under the
/// reference's state, and the band decides some of them.
#[test]
fn error_chains_keep_their_hysteresis_state_on_tracked_frames() {
    let mut next = uniform(0x9e37_79b9_7f4a_7c15);
    let levels: Vec<LodLevel> =
        (1..=3).map(|id| LodLevel { mesh: MeshHandle(id), max_distance: 1.0 + id as f32 }).collect();
    let lod = Lod { levels: levels.into(), bias: 1.0 };
    let mut objects: Vec<(Mat4, Mesh, Option<Lod>)> = (0..200)
        .map(|index| {
            let position = Vec3::new(next() * 4.0 - 2.0, next() * 2.0 - 1.0, -40.0 - next() * 60.0);
            let scale = 0.5 + next() * 2.0;
            let model = Mat4::from_scale_rotation_translation(Vec3::splat(scale), glam::Quat::IDENTITY, position);
            (model, scene::unit_cube_mesh(), (index % 7 != 0).then(|| lod.clone()))
        })
        .collect();
    let motion = Arc::new(Mutex::new(Motion::default()));
    let eye_at = |walked: f32| Vec3::new(0.0, 0.0, 4.0 - walked);
    let (mut app, _) = driven_app(scene::look_at(eye_at(0.0), eye_at(1.0)), motion.clone());
    let settings = RenderSettings { lod_error_band: 0.25, ..RenderSettings::default() };
    app.insert_resource(settings);
    app.insert_resource(LodErrors::from_fn(4, |id| id.checked_sub(1).map(|level| ERRORS[level as usize])));
    let entities = spawn_objects(app.world_mut(), &objects);
    let mut states = vec![0u32; objects.len()];
    let (mut walked, mut band_decided, mut level_changes, mut tracked) = (0.0f32, 0, 0, 0);
    for frame in 0..160 {
        // Forward, with a step back now and then: the band keeps some levels on the way back.
        walked += if frame % 20 == 13 { -1.5 } else { 0.15 + next() * 0.1 };
        let mut wanted = motion.lock();
        wanted.camera = Some(scene::look_at(eye_at(walked), eye_at(walked + 1.0)));
        if frame % 5 == 2 {
            let index = (frame * 13) % objects.len();
            objects[index].0.w_axis.z += if frame % 10 == 2 { 3.0 } else { -3.0 };
            wanted.moves.push((entities[index], objects[index].0));
        }
        drop(wanted);
        app.run_frame();
        let visibility = app.resource::<Visibility>();
        tracked += usize::from(visibility.stats().tracked);
        let view = visibility.view().expect("a camera");
        let error_view = LodErrorView::new(&view.projection, view.viewport.height as f32, 1.0, 0.25);
        let ours = answer_by_index(&app, &entities);
        for (index, (model, mesh, lod)) in objects.iter().enumerate() {
            if lod.is_none() {
                assert_eq!(ours.draws[index].mesh, mesh.mesh, "frame {frame}: object {index} has no levels");
                continue;
            }
            let (center, half) = mesh.bounds.transformed_center_half(model);
            let distance_sq = lod_box_distance_sq(view.position, center, half);
            let scale_sq = lod_scale_sq([model.x_axis.truncate(), model.y_axis.truncate(), model.z_axis.truncate()]);
            let level = select_lod_by_error(&ERRORS, scale_sq, distance_sq, &error_view, states[index]);
            band_decided += usize::from(level != select_lod_by_error(&ERRORS, scale_sq, distance_sq, &error_view, 0));
            level_changes += usize::from(level != states[index]);
            states[index] = level;
            assert_eq!(
                ours.draws[index].mesh,
                MeshHandle(level + 1),
                "frame {frame}: object {index} draws the level the rule picks from the level it drew"
            );
        }
    }
    assert!(tracked > 100, "most frames are tracked ({tracked})");
    assert!(level_changes > 50, "levels change along the walk ({level_changes})");
    assert!(band_decided > 0, "the state decides some picks");
}

/// A slot freed and taken again in one frame starts the new object's state afresh: it draws
/// the level a new object gets, not one its slot's last owner left.
#[test]
fn a_reused_slot_starts_its_state_afresh() {
    let levels: Vec<LodLevel> =
        (1..=3).map(|id| LodLevel { mesh: MeshHandle(id), max_distance: 1.0 + id as f32 }).collect();
    let lod = Lod { levels: levels.into(), bias: 1.0 };
    let mut app = App::with_threads(2);
    crate::visibility::install(&mut app);
    app.insert_resource(RenderSettings { lod_error_band: 0.25, ..RenderSettings::default() });
    app.insert_resource(LodErrors::from_fn(4, |id| id.checked_sub(1).map(|level| ERRORS[level as usize])));
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::ZERO, Vec3::NEG_Z));
    let at = |z: f32| WorldTransform(Mat4::from_translation(Vec3::new(0.0, 0.0, z)));
    let far = app.world_mut().spawn((at(-100.0), scene::unit_cube_mesh(), Visible(true), lod.clone()));
    app.run_frame();
    let drawn = |app: &App, entity| {
        let visibility = app.resource::<Visibility>();
        let slot = visibility.slot_of(entity).expect("a mesh object") as usize;
        visibility.objects().draws[slot].mesh
    };
    assert_eq!(drawn(&app, far), MeshHandle(3), "far away: the coarsest level");
    // Inside the band of level 1: a new object draws level 0, one that drew level 1 or 2
    // keeps level 1.
    let view = *app.resource::<Visibility>().view().expect("a camera");
    let error_view = LodErrorView::new(&view.projection, view.viewport.height as f32, 1.0, 0.25);
    let in_band = ERRORS[1] * error_view.pixels_per_unit * 1.05;
    let mut far = far;
    for frame in 0..2 {
        app.world_mut().despawn(far).expect("alive");
        let near = app.world_mut().spawn((at(-(in_band + 0.5)), scene::unit_cube_mesh(), Visible(true), lod.clone()));
        app.run_frame();
        assert_eq!(drawn(&app, near), MeshHandle(1), "frame {frame}: a new object's state is 0");
        app.world_mut().despawn(near).expect("alive");
        far = app.world_mut().spawn((at(-100.0), scene::unit_cube_mesh(), Visible(true), lod.clone()));
        app.run_frame();
        assert_eq!(drawn(&app, far), MeshHandle(3));
    }
}
