//! The animation system in an app: palettes on one and two threads, slices freed and reused,
//! and the bad inputs it survives.

use std::sync::Arc;

use ecs::SkinnedPose;
use glam::{Quat, Vec3};
use runtime::App;

use super::chain_skeleton;
use crate::wide::{pose_wide, LaneWidth, WideRig, WideScratch, MAX_LANES};
use crate::*;

/// A swinging clip for a chain: every joint rotates about Z over one second.
pub(crate) fn swing(skeleton: &Skeleton) -> Arc<AnimationClip> {
    let joints = (0..skeleton.joint_count() as u16)
        .map(|joint| {
            let keys = vec![0.0, 0.5, 1.0];
            let angles = [0.0, 0.6 + joint as f32 * 0.01, -0.3];
            let rotation = Track::new(
                Interpolation::Linear,
                keys,
                angles.iter().map(|&angle| Quat::from_rotation_z(angle)).collect(),
            )
            .unwrap();
            JointTracks { joint, rotation: Some(rotation), ..JointTracks::default() }
        })
        .collect();
    Arc::new(AnimationClip::new("swing", skeleton, joints).unwrap())
}

/// A mesh along a chain of `joints`: two vertices per joint, each on that joint alone.
pub(crate) fn chain_boxes(joints: usize) -> Arc<JointBoxes> {
    let positions: Vec<[f32; 3]> =
        (0..joints).flat_map(|joint| [[-0.2, joint as f32, 0.0], [0.2, joint as f32 + 0.5, 0.1]]).collect();
    let influences: Vec<[u16; 4]> = (0..joints).flat_map(|joint| [[joint as u16, 0, 0, 0]; 2]).collect();
    Arc::new(
        JointBoxes::from_vertices(&positions, &influences, &vec![[1.0, 0.0, 0.0, 0.0]; positions.len()], joints)
            .unwrap(),
    )
}

pub(crate) fn animated_app(threads: usize, rigs: usize) -> App {
    let mut app = App::with_threads(threads);
    install(&mut app);
    app.set_fixed_delta(Some(1.0 / 60.0));
    let skeleton = Arc::new(chain_skeleton("chain", 8));
    let clip = swing(&skeleton);
    let boxes = chain_boxes(8);
    for rig in 0..rigs {
        let mut player = AnimationPlayer::new(clip.clone(), &skeleton).unwrap();
        player.time = rig as f32 * 0.013;
        player.speed = 1.0 + (rig % 7) as f32 * 0.1;
        let mesh = SkinnedMesh { joint_boxes: boxes.clone() };
        let pose = SkinnedPose::from_skin_box(boxes.bind_bounds());
        app.world_mut().spawn((mesh, Skin::new(skeleton.clone()), player, pose));
    }
    app
}

#[test]
fn one_and_two_threads_give_bit_identical_palettes() {
    let palettes: Vec<Vec<SkinMatrix>> = [1, 2]
        .into_iter()
        .map(|threads| {
            let mut app = animated_app(threads, 500);
            app.run_frames(5);
            assert_eq!(app.resource::<AnimationReport>().rigs, 500);
            let palette = app.resource::<SkinPalette>().matrices().to_vec();
            palette
        })
        .collect();
    let bits = |palette: &[SkinMatrix]| {
        palette
            .iter()
            .flat_map(|matrix| matrix.to_rows_array().into_iter().flatten().map(f32::to_bits))
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&palettes[0]), bits(&palettes[1]), "the palette must not depend on the thread count");
}

/// A clip moving every property of every joint, LINEAR on shared keys (so it packs, and rigs
/// playing it pose four at a time).
fn full_clip(skeleton: &Skeleton, phase: f32) -> Arc<AnimationClip> {
    let times: Vec<f32> = (0..6).map(|key| key as f32 * 0.2).collect();
    let joints = (0..skeleton.joint_count() as u16)
        .map(|joint| {
            let wave = |key: usize| (key as f32 * 0.9 + joint as f32 * 0.4 + phase).sin();
            let track = |values| Track::new(Interpolation::Linear, times.clone(), values).unwrap();
            JointTracks {
                joint,
                translation: Some(track((0..6).map(|key| Vec3::new(wave(key) * 0.1, 1.0, 0.05)).collect())),
                rotation: Some(
                    Track::new(
                        Interpolation::Linear,
                        times.clone(),
                        (0..6)
                            .map(|key| Quat::from_rotation_z(wave(key)) * Quat::from_rotation_x(0.3 * wave(key + 1)))
                            .collect(),
                    )
                    .unwrap(),
                ),
                // Odd joints scale; even ones keep their unit rest scale (the posing's shortcut).
                scale: (joint % 2 == 1)
                    .then(|| track((0..6).map(|key| Vec3::new(1.0 + 0.2 * wave(key), 1.0, 0.9)).collect())),
            }
        })
        .collect();
    Arc::new(AnimationClip::new(format!("full{phase}"), skeleton, joints).unwrap())
}

#[test]
fn rigs_posed_in_groups_match_rigs_posed_alone() {
    let mut app = App::with_threads(2);
    install(&mut app);
    app.set_fixed_delta(Some(1.0 / 60.0));
    let skeleton = Arc::new(chain_skeleton("chain", 8));
    let clips = [full_clip(&skeleton, 0.0), full_clip(&skeleton, 1.3)];
    let boxes = chain_boxes(8);
    // Eleven rigs on one clip and nine on the other (groups of four or eight, with lanes left
    // over), and the last crossfading (posed alone).
    for rig in 0..20 {
        let mut player = AnimationPlayer::new(clips[usize::from(rig >= 11)].clone(), &skeleton).unwrap();
        player.time = rig as f32 * 0.09;
        if rig == 19 {
            player.crossfade_to(clips[0].clone(), &skeleton, 10.0).unwrap();
        }
        let pose = SkinnedPose::from_skin_box(boxes.bind_bounds());
        app.world_mut().spawn((SkinnedMesh { joint_boxes: boxes.clone() }, Skin::new(skeleton.clone()), player, pose));
    }
    app.run_frames(4);
    let palette = app.resource::<SkinPalette>().matrices().to_vec();
    let mut query = app.world().query::<(&Skin, &SkinnedMesh, &AnimationPlayer, &SkinnedPose)>();
    let mut checked = 0;
    for (skin, mesh, player, pose) in query.iter() {
        let slice = &palette[skin.skin_first() as usize..][..skin.skin_count() as usize];
        let mut alone = vec![SkinMatrix::IDENTITY; 8];
        let (bounds, outcome) =
            pose_rig(&skin.skeleton, &mesh.joint_boxes, Some(player), &mut alone, &mut PoseScratch::default());
        assert_eq!(outcome, PoseOutcome::Posed);
        for (grouped, alone) in slice.iter().zip(&alone) {
            assert!(grouped.abs_diff_eq(*alone, 1e-5), "grouped {grouped:?} against alone {alone:?}");
        }
        assert_eq!(pose.bounds(0.0), mesh.joint_boxes.posed(slice), "the box is the palette's");
        let drawn = pose.bounds(0.0);
        assert!(
            (drawn.min - bounds.min).abs().max_element() < 1e-4 && (drawn.max - bounds.max).abs().max_element() < 1e-4
        );
        checked += 1;
    }
    assert_eq!(checked, 20);
}

/// Poses `rigs` rigs playing `clip` at staggered times in groups of `width`, returning each
/// rig's palette and posed box.
fn pose_in_groups(
    width: LaneWidth,
    skeleton: &Skeleton,
    clip: &AnimationClip,
    rigs: usize,
) -> Vec<(Vec<SkinMatrix>, Option<ecs::Aabb>)> {
    let boxes = chain_boxes(skeleton.joint_count());
    let mut scratch = WideScratch::default();
    let mut posed: Vec<(Vec<SkinMatrix>, Option<ecs::Aabb>)> =
        (0..rigs).map(|_| (vec![SkinMatrix::IDENTITY; skeleton.joint_count()], None)).collect();
    for (group, chunk) in posed.chunks_mut(width.lanes()).enumerate() {
        let mut palettes = chunk.iter_mut().map(|(palette, _)| palette);
        let mut lanes: [Option<WideRig<'_>>; MAX_LANES] = std::array::from_fn(|lane| {
            let time = (group * width.lanes() + lane) as f32 * 0.071;
            palettes.next().map(|palette| WideRig { time, palette: palette.as_mut_slice() })
        });
        let bounds = pose_wide(width, skeleton, clip, &boxes, &mut lanes, &mut scratch);
        for ((_, out), bounds) in chunk.iter_mut().zip(bounds) {
            *out = bounds;
        }
    }
    posed
}

#[test]
fn eight_lanes_pose_bit_for_bit_as_four() {
    let skeleton = chain_skeleton("chain", 11);
    let clip = full_clip(&skeleton, 0.7);
    let four = pose_in_groups(LaneWidth::Four, &skeleton, &clip, 19);
    assert!(four.iter().all(|(_, bounds)| bounds.is_some()), "every rig posed");
    let bits = |palette: &[SkinMatrix]| {
        palette
            .iter()
            .flat_map(|matrix| matrix.to_rows_array().into_iter().flatten().map(f32::to_bits))
            .collect::<Vec<_>>()
    };
    let widths = match LaneWidth::detect() {
        LaneWidth::Four => vec![],
        LaneWidth::Eight => vec![LaneWidth::Eight],
        LaneWidth::EightWithAvx512 => vec![LaneWidth::Eight, LaneWidth::EightWithAvx512],
    };
    if widths.is_empty() {
        eprintln!("no AVX: the eight-lane paths are not run on this CPU");
    }
    for width in widths {
        let eight = pose_in_groups(width, &skeleton, &clip, 19);
        for (rig, ((four_palette, four_box), (eight_palette, eight_box))) in four.iter().zip(&eight).enumerate() {
            assert_eq!(bits(four_palette), bits(eight_palette), "{width:?}, rig {rig}: palettes differ");
            assert_eq!(four_box, eight_box, "{width:?}, rig {rig}: boxes differ");
        }
    }
}

#[test]
fn posed_box_is_written_and_holds_the_skin() {
    let mut app = animated_app(2, 3);
    app.run_frames(20);
    let palette = app.resource::<SkinPalette>().matrices().to_vec();
    assert_eq!(app.resource::<SkinPalette>().bytes_written(), 3 * 8 * 48, "3 rigs of 8 joints, 48 bytes each");
    let mut query = app.world().query::<(&Skin, &SkinnedMesh, &SkinnedPose)>();
    for (skin, mesh, pose) in query.iter() {
        let slice = &palette[skin.skin_first() as usize..][..skin.skin_count() as usize];
        let bounds = pose.bounds(0.0);
        assert_eq!(bounds, mesh.joint_boxes.posed(slice), "the pose is the moved joint boxes");
        assert_ne!(bounds, mesh.joint_boxes.bind_bounds(), "a swung chain leaves its bind box");
    }
}

#[test]
fn despawned_rigs_free_their_slices_for_new_ones() {
    let mut app = animated_app(1, 4);
    app.run_frame();
    let victim = app
        .world()
        .query::<(hecs::Entity, &Skin)>()
        .iter()
        .map(|(entity, skin)| (entity, skin.skin_first()))
        .nth(1)
        .unwrap();
    app.world_mut().despawn(victim.0).unwrap();
    app.run_frame();
    assert_eq!(app.resource::<SkinPalette>().rig_count(), 3, "the despawned rig's slice is freed");
    let skeleton = Arc::new(chain_skeleton("chain", 8));
    let newcomer = app.world_mut().spawn((SkinnedMesh { joint_boxes: chain_boxes(8) }, Skin::new(skeleton)));
    app.run_frame();
    let first = app.world().get::<&Skin>(newcomer).unwrap().skin_first();
    assert_eq!(first, victim.1, "the freed slice is reused");
    assert_eq!(app.resource::<SkinPalette>().matrices().len(), 4 * 8, "no growth");
    app.run_frame();
    assert!(app.world().get::<&SkinnedPose>(newcomer).is_ok(), "a rig without a pose gets one");
}

#[test]
fn removed_and_replaced_skins_free_their_slices() {
    let mut app = animated_app(2, 4);
    app.run_frame();
    let rigs: Vec<(hecs::Entity, u32)> =
        app.world().query::<(hecs::Entity, &Skin)>().iter().map(|(entity, skin)| (entity, skin.skin_first())).collect();
    // One entity loses its Skin (the entity lives on), another gets a fresh one.
    app.world_mut().remove_one::<Skin>(rigs[0].0).unwrap();
    app.world_mut().insert_one(rigs[1].0, Skin::new(Arc::new(chain_skeleton("chain", 8)))).unwrap();
    app.run_frame();
    let palette = app.resource::<SkinPalette>();
    assert_eq!(palette.rig_count(), 3, "the removed Skin's slice and the replaced Skin's old one are freed");
    assert!(palette.rigs().all(|rig| rig.entity != rigs[0].0), "the entity without a Skin owns no slice");
    let replaced = app.world().get::<&Skin>(rigs[1].0).unwrap().skin_first();
    assert_eq!(palette.rigs().filter(|rig| rig.entity == rigs[1].0).count(), 1, "one slice for the new Skin");
    assert!(palette.rigs().any(|rig| rig.entity == rigs[1].0 && rig.first == replaced));
}

#[test]
fn palette_grows_without_a_cap() {
    let mut app = animated_app(2, 10);
    app.run_frame();
    let skeleton = Arc::new(chain_skeleton("chain", 8));
    for _ in 0..5000 {
        app.world_mut().spawn((SkinnedMesh { joint_boxes: chain_boxes(8) }, Skin::new(skeleton.clone())));
    }
    app.run_frame();
    assert_eq!(app.resource::<SkinPalette>().matrices().len(), 5010 * 8);
    assert_eq!(app.resource::<AnimationReport>().rigs, 5010);
}

#[test]
fn grouped_rigs_with_a_nan_joint_are_flagged_whether_or_not_it_moves_a_vertex() {
    let skeleton = chain_skeleton("chain", 8);
    // Vertices on joints 0 to 4 only: joint 2 has a box, joint 7 none.
    let boxes = chain_boxes(5);
    let mut widths = vec![LaneWidth::Four];
    if LaneWidth::detect() != LaneWidth::Four {
        widths.push(LaneWidth::Eight);
    }
    if LaneWidth::detect() == LaneWidth::EightWithAvx512 {
        widths.push(LaneWidth::EightWithAvx512);
    }
    for joint in [2_u16, 7] {
        // Finite up to the second key, NaN at the third: even lanes finite, odd lanes NaN.
        let values = vec![Vec3::Y, Vec3::Y, Vec3::NAN];
        let track = Track::new(Interpolation::Linear, vec![0.0, 1.0, 2.0], values).unwrap();
        let tracks = vec![JointTracks { joint, translation: Some(track), ..JointTracks::default() }];
        let clip = AnimationClip::new("nan", &skeleton, tracks).unwrap();
        for &width in &widths {
            let mut palettes = vec![vec![SkinMatrix::IDENTITY; 8]; width.lanes()];
            let mut outs = palettes.iter_mut();
            let mut lanes: [Option<WideRig<'_>>; MAX_LANES] = std::array::from_fn(|lane| {
                let time = if lane % 2 == 0 { 0.5 } else { 1.5 };
                outs.next().map(|palette| WideRig { time, palette: palette.as_mut_slice() })
            });
            let bounds = pose_wide(width, &skeleton, &clip, &boxes, &mut lanes, &mut WideScratch::default());
            for (lane, bounds) in bounds.iter().take(width.lanes()).enumerate() {
                if lane % 2 == 0 {
                    assert!(bounds.is_some_and(|bounds| bounds.is_finite()), "{width:?} joint {joint} lane {lane}");
                } else {
                    assert!(bounds.is_none() || bounds.is_some_and(|bounds| !bounds.is_finite()), "{width:?} {joint}");
                }
            }
        }
    }
}

#[test]
fn bad_inputs_are_counted_not_fatal() {
    let mut app = animated_app(2, 2);
    let hero = Arc::new(chain_skeleton("hero", 8));
    let other = chain_skeleton("other", 3);
    let foreign = swing(&other);
    let mut player = AnimationPlayer::new(swing(&hero), &hero).unwrap();
    player.clip = foreign;
    let rigged = app.world_mut().spawn((
        SkinnedMesh { joint_boxes: chain_boxes(8) },
        Skin::new(hero),
        player,
        SkinnedPose::from_skin_box(ecs::Aabb::new(Vec3::ZERO, Vec3::ONE)),
    ));
    let unrigged = app.world_mut().spawn((SkinnedMesh { joint_boxes: chain_boxes(8) },));
    let broken_skeleton = Arc::new(chain_skeleton("broken", 8));
    let nan = Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![Vec3::ZERO, Vec3::NAN]).unwrap();
    let nan_tracks = vec![JointTracks { joint: 3, translation: Some(nan), ..JointTracks::default() }];
    let nan_clip = Arc::new(AnimationClip::new("nan", &broken_skeleton, nan_tracks).unwrap());
    let mut nan_player = AnimationPlayer::new(nan_clip, &broken_skeleton).unwrap();
    nan_player.time = 0.5;
    let broken = app.world_mut().spawn((
        SkinnedMesh { joint_boxes: chain_boxes(8) },
        Skin::new(broken_skeleton),
        nan_player,
        SkinnedPose::from_skin_box(ecs::Aabb::new(Vec3::ZERO, Vec3::ONE)),
    ));
    app.run_frame();
    let report = *app.resource::<AnimationReport>();
    assert_eq!((report.refused_clips, report.unrigged_meshes, report.non_finite_rigs, report.rigs), (1, 1, 1, 4));
    let pose = *app.world().get::<&SkinnedPose>(broken).unwrap();
    assert_eq!(pose.bounds(0.0), chain_boxes(8).bind_bounds(), "a NaN joint: the bind box, never a NaN box");
    let skin = app.world().get::<&Skin>(broken).unwrap().clone();
    let palette = app.resource::<SkinPalette>();
    assert!(palette.slice(skin.skin_first(), skin.skin_count()).iter().all(|matrix| *matrix == SkinMatrix::IDENTITY));
    let pose = *app.world().get::<&SkinnedPose>(rigged).unwrap();
    assert_eq!(
        pose.bounds(0.0),
        chain_boxes(8).bind_bounds(),
        "a refused clip leaves the rest pose (here the bind pose)"
    );
    assert!(app.world().get::<&SkinnedPose>(unrigged).is_err(), "no skeleton: culled by its bind box");
}

#[test]
fn rigs_marked_pose_when_seen_hold_their_pose_out_of_view() {
    let mut app = animated_app(2, 4);
    let rigs: Vec<hecs::Entity> = app.world().iter().map(|entity| entity.entity()).collect();
    for &rig in &rigs {
        app.world_mut().insert_one(rig, PoseWhenSeen).unwrap();
    }
    // The first frame poses every rig, tagged or not: each needs its palette once.
    app.world_mut().insert_one(rigs[0], ecs::Culled).unwrap();
    app.world_mut().insert_one(rigs[1], ecs::Occluded).unwrap();
    app.run_frames(1);
    assert_eq!(app.resource::<AnimationReport>().rigs, 4);
    let pose_of = |app: &App, rig| *app.world().get::<&SkinnedPose>(rig).unwrap();
    let held = [pose_of(&app, rigs[0]), pose_of(&app, rigs[1])];
    let moving = pose_of(&app, rigs[2]);
    let palette_of = |app: &App, rig| {
        let skin = app.world().get::<&Skin>(rig).unwrap().clone();
        app.resource::<SkinPalette>().slice(skin.skin_first(), skin.skin_count()).to_vec()
    };
    let held_palette = palette_of(&app, rigs[0]);
    let time_before = app.world().get::<&AnimationPlayer>(rigs[0]).unwrap().time;

    app.run_frames(10);
    let report = *app.resource::<AnimationReport>();
    assert_eq!((report.rigs, report.held_rigs), (2, 2), "the culled and the occluded rig are held");
    assert_eq!(report.joints, 2 * 8, "only the posed rigs' joints are written");
    assert_eq!([pose_of(&app, rigs[0]), pose_of(&app, rigs[1])], held, "held rigs keep the box they are drawn in");
    assert_eq!(palette_of(&app, rigs[0]), held_palette, "and the palette they are drawn with");
    assert_ne!(pose_of(&app, rigs[2]), moving, "rigs in view go on moving");
    let time_after = app.world().get::<&AnimationPlayer>(rigs[0]).unwrap().time;
    assert_ne!(time_after, time_before, "a held rig's clip goes on playing");

    // Back in view: posed again at its player's time.
    app.world_mut().remove_one::<ecs::Culled>(rigs[0]).unwrap();
    app.run_frames(1);
    assert_eq!(app.resource::<AnimationReport>().held_rigs, 1);
    assert_ne!(pose_of(&app, rigs[0]), held[0], "a rig back in view is posed again");
}
