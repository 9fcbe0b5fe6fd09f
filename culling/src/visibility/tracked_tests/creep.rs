//! A camera creeping over a world of error chains (still, or with an object moved now and
//! then), answered on request: the word pass runs only when a level could change (the eye
//! left the room the levels' holds leave it, or an object was refreshed), and after every
//! frame every object's level, in view or not, is the one the error rule
//! picks from the frame's eye under the object's own state, as a reference that picks every
//! object every frame finds it (the brute-force pass).

use std::sync::Arc;

use ecs::{scene, CpuAnswers, Lod, LodErrors, LodLevel, Mesh, MeshHandle, RenderSettings, Transform};
use glam::{Mat4, Quat, Vec3};
use proptest::prelude::*;

use super::{answer_by_index, driven_app, Motion, Mutex};
use crate::backend::{CullingBackend, CullingChoice, GpuFeedback};
use crate::visibility::cache_tests::{spawn_objects, uniform};
use crate::visibility::Visibility;
use crate::{lod_box_distance_sq, lod_scale_sq, select_lod_by_error};

/// The errors of the chain: meshes 1, 2 and 3.
const ERRORS: [f32; 3] = [0.0, 0.004, 0.02];

/// One move of the camera: a step of `size` world units along a direction (a size of 0 moves
/// one coordinate by one ulp: a rounding error).
#[derive(Clone, Copy, Debug)]
struct Step {
    size: f32,
    direction: Vec3,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let size = prop_oneof![Just(0.0f32), 1.0e-4f32..1.0e-2, 0.02f32..0.5, 1.0f32..6.0];
    let direction = (-1.0f32..1.0, -0.3f32..0.3, -1.0f32..1.0).prop_map(|(x, y, z)| Vec3::new(x, y, z));
    let step = (size, direction).prop_map(|(size, direction)| Step { size, direction });
    prop::collection::vec(step, 20..40)
}

/// The eye after `step`.
fn moved(eye: Vec3, step: Step) -> Vec3 {
    if step.size == 0.0 {
        let x = f32::from_bits(eye.x.to_bits() + 1);
        return Vec3::new(x, eye.y, eye.z);
    }
    let direction = step.direction.try_normalize().unwrap_or(Vec3::X);
    eye + direction * step.size
}

/// Runs the steps over `count` objects (seeded by `seed`), answered on request, moving one
/// object every third frame when `movers`; returns the frames that moved the eye without a
/// word pass and those with one.
fn creep(seed: u64, count: usize, steps: &[Step], movers: bool) -> (usize, usize) {
    let mut next = uniform(seed);
    let levels: Vec<LodLevel> =
        (1..=3).map(|id| LodLevel { mesh: MeshHandle(id), max_distance: 1.0 + id as f32 }).collect();
    let lod = Lod { levels: levels.into(), bias: 1.0 };
    let mut objects: Vec<(Mat4, Mesh, Option<Lod>)> = (0..count)
        .map(|_| {
            let position = Vec3::new(next() * 80.0 - 40.0, next() * 4.0 - 2.0, next() * 80.0 - 40.0);
            let scale = Vec3::new(0.3 + next() * 2.0, 0.3 + next() * 2.0, 0.3 + next() * 2.0);
            let rotation = Quat::from_rotation_y(next() * 6.3);
            let model = Mat4::from_scale_rotation_translation(scale, rotation, position);
            (model, scene::unit_cube_mesh(), Some(lod.clone()))
        })
        .collect();
    let motion = Arc::new(Mutex::new(Motion::default()));
    // One heading all along: the eye the stage rebuilds from the view follows the position
    // alone, so the reference measures from it exactly.
    let pose = |eye: Vec3| Transform::from_translation_rotation(eye, Quat::from_rotation_y(0.4));
    let mut eye = Vec3::new(1.5, 1.0, 30.0);
    let (mut app, _) = driven_app(pose(eye), motion.clone());
    app.insert_resource(RenderSettings {
        lod_error_band: 0.25,
        cpu_answers: CpuAnswers::OnRequest,
        ..RenderSettings::default()
    });
    app.insert_resource(CullingChoice { requested: CullingBackend::Gpu, on_device: true, reason: None });
    app.insert_resource(GpuFeedback::default());
    app.insert_resource(LodErrors::from_fn(4, |id| id.checked_sub(1).map(|level| ERRORS[level as usize])));
    let entities = spawn_objects(app.world_mut(), &objects);
    let mut states = vec![0u32; objects.len()];
    let (mut held, mut passes) = (0, 0);
    for (frame, step) in
        std::iter::once(Step { size: 0.5, direction: Vec3::Z }).chain(steps.iter().copied()).enumerate()
    {
        eye = moved(eye, step);
        let mut wanted = motion.lock();
        wanted.camera = Some(pose(eye));
        if movers && frame % 3 == 1 {
            let index = (frame * 37) % objects.len();
            objects[index].0.w_axis.z += if frame % 2 == 0 { 0.3 } else { -0.3 };
            wanted.moves.push((entities[index], objects[index].0));
        }
        drop(wanted);
        app.run_frame();
        let visibility = app.resource::<Visibility>();
        let (error_view, picked_from) = visibility.lod_error_view().expect("the error rule's view");
        let stats = visibility.stats();
        if frame > 2 {
            held += usize::from(!stats.objects_culled);
            passes += usize::from(stats.objects_culled);
        }
        let ours = answer_by_index(&app, &entities);
        for (index, (model, mesh, _)) in objects.iter().enumerate() {
            let (center, half) = mesh.bounds.transformed_center_half(model);
            let distance_sq = lod_box_distance_sq(picked_from, center, half);
            let scale_sq = lod_scale_sq([model.x_axis.truncate(), model.y_axis.truncate(), model.z_axis.truncate()]);
            let level = select_lod_by_error(&ERRORS, scale_sq, distance_sq, &error_view, states[index]);
            states[index] = level;
            assert_eq!(
                ours.draws[index].mesh,
                MeshHandle(level + 1),
                "frame {frame} ({step:?}, word pass {}): object {index} draws another level than the rule's",
                stats.objects_culled
            );
        }
    }
    (held, passes)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Whatever the steps, every level is the brute-force pick's.
    #[test]
    fn a_creeping_camera_keeps_every_level_the_rule_picks(seed in 1u64.., steps in steps(), movers: bool) {
        creep(seed, 400, &steps, movers);
    }
}

/// Steps of a rounding error and of a few centimetres leave the word pass out; steps of
/// metres run it.
#[test]
fn small_moves_leave_the_word_pass_out_and_large_ones_run_it() {
    let tiny = Step { size: 0.0, direction: Vec3::X };
    let small = Step { size: 2.0e-3, direction: Vec3::new(1.0, 0.0, -1.0) };
    let large = Step { size: 4.0, direction: Vec3::NEG_Z };
    let steps: Vec<Step> = (0..30).map(|frame| [tiny, small, tiny, large][frame % 4]).collect();
    let (held, passes) = creep(0x2545_f491_4f6c_dd1d, 2_000, &steps, false);
    assert!(held >= 12, "most rounding-error and small steps keep every level without a pass ({held})");
    assert!(passes >= 5, "steps of metres pick again ({passes})");
}
