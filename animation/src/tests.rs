//! Sampling against hand-computed values, blending, and the skinned-bounds guarantee.

use std::f32::consts::FRAC_PI_2;

use glam::{Mat4, Quat, Vec3};

use crate::track::KeySpan;
use crate::*;

pub(crate) fn chain_skeleton(name: &str, joints: usize) -> Skeleton {
    let names = (0..joints).map(|joint| format!("joint{joint}")).collect();
    let parents = (0..joints).map(|joint| joint.checked_sub(1)).collect();
    let rest = (0..joints)
        .map(|joint| JointPose { translation: if joint == 0 { Vec3::ZERO } else { Vec3::Y }, ..JointPose::IDENTITY })
        .collect();
    let inverse_binds = (0..joints).map(|joint| Mat4::from_translation(-Vec3::Y * joint as f32)).collect();
    Skeleton::new(name, names, parents, rest, inverse_binds).expect("a valid chain")
}

#[test]
fn step_holds_the_earlier_key() {
    let track = Track::new(Interpolation::Step, vec![0.0, 1.0, 2.0], vec![Vec3::X, Vec3::Y, Vec3::Z]).unwrap();
    assert_eq!(track.sample(-1.0), Vec3::X, "before the first key: the first");
    assert_eq!(track.sample(0.5), Vec3::X);
    assert_eq!(track.sample(1.0), Vec3::Y, "at a key: that key");
    assert_eq!(track.sample(1.999), Vec3::Y);
    assert_eq!(track.sample(5.0), Vec3::Z, "past the last key: the last");
}

#[test]
fn cubic_spline_matches_the_hermite_formula_with_scaled_tangents() {
    // Keys at t=1 and t=3 (interval 2); values 0 and 10; out-tangent of key 0 is 4/s, in-tangent
    // of key 1 is -2/s. At t=2 (s=0.5): h00=0.5, h10=0.125, h01=0.5, h11=-0.125, so
    // p = 0.5*0 + 0.125*(2*4) + 0.5*10 + (-0.125)*(2*-2) = 1 + 5 + 0.5 = 6.5.
    let values = vec![
        Vec3::ZERO,         // in-tangent of key 0 (unused)
        Vec3::ZERO,         // value of key 0
        Vec3::splat(4.0),   // out-tangent of key 0
        Vec3::splat(-2.0),  // in-tangent of key 1
        Vec3::splat(10.0),  // value of key 1
        Vec3::splat(100.0), // out-tangent of key 1 (unused)
    ];
    let track = Track::new(Interpolation::CubicSpline, vec![1.0, 3.0], values).unwrap();
    assert_eq!(track.sample(2.0), Vec3::splat(6.5));
    assert_eq!(track.sample(1.0), Vec3::ZERO, "at the first key: its value");
    assert_eq!(track.sample(3.0), Vec3::splat(10.0), "at the last key: its value, not a tangent");
    // At s=0.25 (t=1.5): h00=0.84375, h10=0.140625, h01=0.15625, h11=-0.046875.
    let expected = 0.140625 * 8.0 + 0.15625 * 10.0 + -0.046875 * -4.0;
    assert!((track.sample(1.5).x - expected).abs() < 1e-5, "{} against {expected}", track.sample(1.5).x);
}

#[test]
fn cubic_rotation_is_normalized_and_linear_rotation_slerps() {
    let quarter = Quat::from_rotation_z(FRAC_PI_2);
    let linear = Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![Quat::IDENTITY, quarter]).unwrap();
    let half_way = linear.sample(0.5);
    assert!(half_way.angle_between(Quat::from_rotation_z(FRAC_PI_2 / 2.0)) < 1e-5, "slerp halves the angle");
    let zero = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
    let cubic =
        Track::new(Interpolation::CubicSpline, vec![0.0, 1.0], vec![zero, Quat::IDENTITY, zero, zero, quarter, zero])
            .unwrap();
    assert!((cubic.sample(0.3).length() - 1.0).abs() < 1e-6, "a cubic rotation is renormalized");
}

#[test]
fn tracks_with_bad_keys_are_refused() {
    assert!(Track::new(Interpolation::Linear, vec![], Vec::<Vec3>::new()).is_err());
    assert!(Track::new(Interpolation::Linear, vec![1.0, 0.0], vec![Vec3::ZERO; 2]).is_err(), "decreasing times");
    assert!(
        Track::new(Interpolation::CubicSpline, vec![0.0, 1.0], vec![Vec3::ZERO; 2]).is_err(),
        "three values per key"
    );
    assert!(Track::new(Interpolation::Step, vec![f32::NAN], vec![Vec3::ZERO]).is_err());
}

#[test]
fn clip_for_another_skeleton_is_refused_by_name() {
    let hero = chain_skeleton("hero", 3);
    let dragon = chain_skeleton("dragon", 4);
    let clip = std::sync::Arc::new(AnimationClip::new("walk", &hero, vec![]).unwrap());
    let error = AnimationPlayer::new(clip.clone(), &dragon).expect_err("a 3-joint clip on a 4-joint skeleton");
    assert_eq!(error.to_string(), "clip 'walk' was made for skeleton 'hero', not 'dragon'");
    assert!(AnimationPlayer::new(clip, &hero).is_ok());
}

#[test]
fn skeletons_must_list_parents_first() {
    let error = Skeleton::new(
        "bad",
        vec!["a".into(), "b".into()],
        vec![Some(1), None],
        vec![JointPose::IDENTITY; 2],
        vec![Mat4::IDENTITY; 2],
    )
    .expect_err("joint 0 names a later parent");
    assert!(matches!(error, AnimationError::BadSkeleton { joint: 0, .. }), "{error}");
    let projective =
        Mat4::from_cols_array(&[1.0, 0.0, 0.0, 0.5, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    assert!(Skeleton::new("p", vec!["a".into()], vec![None], vec![JointPose::IDENTITY], vec![projective]).is_err());
}

#[test]
fn crossfade_blends_by_weight_and_hands_over() {
    let skeleton = chain_skeleton("rig", 1);
    let at = |x: f32| {
        let track = Track::new(Interpolation::Step, vec![0.0, 10.0], vec![Vec3::X * x; 2]).unwrap();
        let tracks = JointTracks { joint: 0, translation: Some(track), ..JointTracks::default() };
        std::sync::Arc::new(AnimationClip::new(format!("at{x}"), &skeleton, vec![tracks]).unwrap())
    };
    let mut player = AnimationPlayer::new(at(0.0), &skeleton).unwrap();
    player.crossfade_to(at(4.0), &skeleton, 2.0).unwrap();
    player.advance(0.5);
    let mut palette = vec![SkinMatrix::IDENTITY; 1];
    let boxes = JointBoxes::from_vertices(&[[0.0; 3]], &[[0; 4]], &[[1.0, 0.0, 0.0, 0.0]], 1).unwrap();
    let (bounds, _) = pose_rig(&skeleton, &boxes, Some(&player), &mut palette, &mut PoseScratch::default());
    assert_eq!(bounds.min.x, 1.0, "a quarter of the way from 0 to 4");
    player.advance(1.5);
    assert!(player.crossfade.is_none(), "a full weight ends the crossfade");
    assert_eq!(player.clip.name(), "at4");
}

#[test]
fn crossfade_rotations_stay_within_the_slerp_bound() {
    let axis = Vec3::new(-0.4, 0.7, 0.59).normalize();
    let start = JointPose { rotation: Quat::from_rotation_y(0.8), ..JointPose::IDENTITY };
    let mut worst = 0.0_f32;
    for step in 0..=72 {
        let angle = step as f32 / 72.0 * std::f32::consts::TAU;
        let target = JointPose { rotation: Quat::from_axis_angle(axis, angle) * start.rotation, ..JointPose::IDENTITY };
        for sample in 0..=32 {
            let weight = sample as f32 / 32.0;
            let blended = start.blend(&target, weight).rotation;
            let exact = start.rotation.slerp(target.rotation, weight);
            let relative = blended * exact.conjugate();
            worst = worst.max(2.0 * relative.xyz().length().atan2(relative.w.abs()));
        }
        assert!(start.blend(&target, 0.0).rotation.abs_diff_eq(start.rotation, 1e-6), "weight 0 keeps the pose");
    }
    assert!(worst <= SLERP_ERROR_BOUND, "a crossfade turns {worst} rad off slerp");
    assert!(worst > 0.0, "the blend is the approximation, not slerp itself");
}

#[test]
fn nan_joint_gives_the_bind_pose_never_a_nan_box() {
    let skeleton = chain_skeleton("rig", 2);
    let track = Track::new(Interpolation::Linear, vec![0.0], vec![Vec3::NAN]).unwrap();
    let tracks = JointTracks { joint: 1, translation: Some(track), ..JointTracks::default() };
    let clip = std::sync::Arc::new(AnimationClip::new("broken", &skeleton, vec![tracks]).unwrap());
    let player = AnimationPlayer::new(clip, &skeleton).unwrap();
    let boxes = JointBoxes::from_vertices(
        &[[0.0, 1.0, 0.0], [0.0, 2.0, 0.0]],
        &[[1, 0, 0, 0]; 2],
        &[[1.0, 0.0, 0.0, 0.0]; 2],
        2,
    )
    .unwrap();
    let mut palette = vec![SkinMatrix::from_rows([glam::Vec4::ZERO; 3]); 2];
    let (bounds, outcome) = pose_rig(&skeleton, &boxes, Some(&player), &mut palette, &mut PoseScratch::default());
    assert_eq!(outcome, PoseOutcome::NonFinite);
    assert_eq!(palette, [SkinMatrix::IDENTITY; 2], "the bind pose: every skin matrix the identity");
    assert_eq!(bounds, boxes.bind_bounds(), "never a NaN box: the bind box");
}

mod posed_bounds {
    use proptest::prelude::*;

    use super::*;

    /// Linear blend skinning on the CPU, the reference the box must contain.
    fn skin_vertex(palette: &[SkinMatrix], position: Vec3, joints: [u16; 4], weights: [f32; 4]) -> Vec3 {
        joints
            .iter()
            .zip(weights)
            .map(|(&joint, weight)| palette[usize::from(joint)].transform_point3(position) * weight)
            .sum()
    }

    fn quat() -> impl Strategy<Value = Quat> {
        (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0)
            .prop_filter("a rotation", |(x, y, z, w)| x * x + y * y + z * z + w * w > 0.01)
            .prop_map(|(x, y, z, w)| Quat::from_xyzw(x, y, z, w).normalize())
    }

    fn joint_pose() -> impl Strategy<Value = JointPose> {
        (prop::array::uniform3(-2.0f32..2.0), quat(), prop::array::uniform3(0.2f32..2.5)).prop_map(
            |(translation, rotation, scale)| JointPose {
                translation: translation.into(),
                rotation,
                scale: scale.into(),
            },
        )
    }

    proptest! {
        #[test]
        fn posed_box_holds_every_skinned_vertex(
            poses in prop::collection::vec(joint_pose(), 5),
            vertices in prop::collection::vec((prop::array::uniform3(-3.0f32..3.0), prop::array::uniform4(0u16..5), prop::array::uniform4(0.0f32..1.0)), 1..60),
        ) {
            let skeleton = Skeleton::new(
                "tree",
                (0..5).map(|joint| format!("j{joint}")).collect(),
                vec![None, Some(0), Some(1), Some(0), Some(3)],
                vec![JointPose::IDENTITY; 5],
                (0..5).map(|joint| Mat4::from_translation(Vec3::new(joint as f32, 0.5, -1.0))).collect(),
            ).unwrap();
            let positions: Vec<[f32; 3]> = vertices.iter().map(|vertex| vertex.0).collect();
            let joints: Vec<[u16; 4]> = vertices.iter().map(|vertex| vertex.1).collect();
            let weights: Vec<[f32; 4]> = vertices.iter().map(|vertex| { let mut weights = vertex.2; normalize_weights(&mut weights); weights }).collect();
            let boxes = JointBoxes::from_vertices(&positions, &joints, &weights, 5).unwrap();
            let mut models = vec![glam::Affine3A::IDENTITY; 5];
            skeleton.model_matrices(&poses, &mut models);
            let mut palette = vec![SkinMatrix::IDENTITY; 5];
            skeleton.palette_from_models(&models, &mut palette);
            let bounds = boxes.posed(&palette);
            let mut skins = vec![glam::Affine3A::IDENTITY; 5];
            prop_assert!(skeleton.skin_matrices(&poses, &mut models, &mut skins), "finite poses give finite skins");
            prop_assert_eq!(bounds, boxes.posed_affine(&skins), "the fused 3x4 posing gives the same box");
            for ((position, joints), weights) in positions.iter().zip(&joints).zip(&weights) {
                let skinned = skin_vertex(&palette, Vec3::from(*position), *joints, *weights);
                let slack = 1e-4 * (1.0 + skinned.abs().max_element());
                prop_assert!(
                    skinned.cmpge(bounds.min - slack).all() && skinned.cmple(bounds.max + slack).all(),
                    "vertex {:?} skinned to {:?} outside {:?}", position, skinned, bounds
                );
            }
        }
    }
}

#[path = "system_tests.rs"]
mod system_tests;

#[path = "slice_ownership_tests.rs"]
mod slice_ownership_tests;

#[test]
fn shared_key_times_sample_as_each_track_alone() {
    let skeleton = chain_skeleton("rig", 3);
    let even: Vec<f32> = (0..9).map(|key| key as f32 * 0.125).collect();
    let uneven = vec![0.0, 0.1, 0.5, 0.55, 1.0];
    for (times, interpolation) in [
        (even.clone(), Interpolation::Linear),
        (uneven.clone(), Interpolation::Linear),
        (even, Interpolation::CubicSpline),
        (uneven, Interpolation::Step),
    ] {
        let per_key = if interpolation == Interpolation::CubicSpline { 3 } else { 1 };
        let count = times.len() * per_key;
        let tracks: Vec<JointTracks> = (0..3u16)
            .map(|joint| JointTracks {
                joint,
                translation: Some(
                    Track::new(
                        interpolation,
                        times.clone(),
                        (0..count).map(|value| Vec3::splat(value as f32 + joint as f32)).collect(),
                    )
                    .unwrap(),
                ),
                rotation: Some(
                    Track::new(
                        interpolation,
                        times.clone(),
                        (0..count).map(|value| Quat::from_rotation_y(value as f32 * 0.3 + joint as f32)).collect(),
                    )
                    .unwrap(),
                ),
                scale: None,
            })
            .collect();
        let clip = AnimationClip::new("shared", &skeleton, tracks.clone()).unwrap();
        for step in 0..=60 {
            let time = step as f32 / 50.0 - 0.1;
            let mut poses = vec![JointPose::IDENTITY; 3];
            clip.sample(time, &mut poses);
            for (pose, tracks) in poses.iter().zip(&tracks) {
                let translation = tracks.translation.as_ref().unwrap().sample(time);
                let rotation = tracks.rotation.as_ref().unwrap().sample(time);
                assert_eq!((pose.translation, pose.rotation), (translation, rotation), "{interpolation:?} at {time}");
            }
        }
    }
}

#[test]
fn evenly_spaced_keys_find_the_searched_span_in_constant_time() {
    let skeleton = chain_skeleton("rig", 2);
    // Baked exports: 30 and 24 frames a second (steps that floats do not hold exactly), a
    // clip that starts late, and keys jittered within the evenness tolerance.
    let key_sets: [Vec<f32>; 4] = [
        (0..31).map(|key| key as f32 / 30.0).collect(),
        (0..49).map(|key| key as f32 / 24.0).collect(),
        (0..17).map(|key| 0.5 + key as f32 * 0.0625).collect(),
        (0..21).map(|key| key as f32 * 0.05 + if key % 3 == 1 { 0.00004 } else { 0.0 }).collect(),
    ];
    for times in key_sets {
        let track = Track::new(Interpolation::Linear, times.clone(), vec![Vec3::ONE; times.len()]).unwrap();
        let tracks = vec![JointTracks { joint: 1, translation: Some(track), ..JointTracks::default() }];
        let clip = std::sync::Arc::new(AnimationClip::new("baked", &skeleton, tracks).unwrap());
        let (_, shared, step) = clip.packed().expect("one LINEAR track: packed");
        let step = step.expect("evenly spaced keys have a step");
        let same = |time: f32| {
            let (found, searched) = (KeySpan::find(shared, time, Some(step)), KeySpan::find(shared, time, None));
            assert_eq!(found, searched, "at {time} among {} keys from {}", shared.len(), shared[0]);
        };
        // Every key, a float step either side, the midpoints, and outside the keys.
        for (key, &time) in times.iter().enumerate() {
            for probe in [time, time.next_down(), time.next_up()] {
                same(probe);
            }
            if let Some(&next) = times.get(key + 1) {
                same((time + next) * 0.5);
            }
        }
        for time in [-1.0, 0.0, times[times.len() - 1] + 1.0, f32::NAN, f32::INFINITY] {
            same(time);
        }
        // A looping player's times, wrapping past the last key many times.
        let mut player = AnimationPlayer::new(clip.clone(), &skeleton).unwrap();
        player.speed = 1.37;
        for _ in 0..2000 {
            player.advance(1.0 / 60.0);
            same(player.time);
        }
    }
}
