//! The walker's body, skeleton and walk: bounds, the ground contact, and the margin that lets
//! an unskinned renderer cull it by its posed box.

use animation::{pose_rig, PoseOutcome, PoseScratch, SkinMatrix};
use glam::Vec3;

use super::*;

/// The posed box at `cycle` turns into the walk.
fn posed_box(rig: &WalkerRig, cycle: f32) -> Aabb {
    let (_, _, mut player, _) = rig.components(cycle, 1.0);
    player.advance(0.0);
    let mut palette = vec![SkinMatrix::IDENTITY; rig.skeleton.joint_count()];
    let (bounds, outcome) =
        pose_rig(&rig.skeleton, &rig.joint_boxes, Some(&player), &mut palette, &mut PoseScratch::default());
    assert_eq!(outcome, PoseOutcome::Posed, "the walk is finite at {cycle}");
    bounds
}

#[test]
fn the_body_fills_its_bind_bounds_and_every_vertex_has_one_joint() {
    let rig = WalkerRig::new();
    assert_eq!(rig.skeleton.joint_count(), 17);
    assert_eq!(rig.joint_boxes.bind_bounds(), WalkerRig::BIND_BOUNDS, "BIND_BOUNDS is the body's box");
    assert_eq!(rig.joint_boxes.len(), 17, "every joint moves a part of the body");
    assert!(rig.skin.weights.iter().all(|weights| *weights == [1.0, 0.0, 0.0, 0.0]));
    assert_eq!(rig.walk.duration(), WALK_CYCLE_SECONDS);
    let rest = rig.skeleton.rest_palette();
    assert!(rest.iter().all(|matrix| matrix.abs_diff_eq(SkinMatrix::IDENTITY, 1e-6)), "the rest pose is the bind pose");
}

#[test]
fn the_lower_foot_stays_on_the_ground_and_the_legs_swing() {
    let rig = WalkerRig::new();
    let mut reach = 0.0_f32;
    for step in 0..200 {
        let cycle = step as f32 / 200.0;
        let bounds = posed_box(&rig, cycle);
        // Exact on the keys; between them the angles and the hip height are interpolated
        // apart, which sinks the sole a few millimetres at most.
        assert!(bounds.min.y.abs() < 1e-2, "at {cycle} the lowest sole is at {} instead of the ground", bounds.min.y);
        reach = reach.max(bounds.max.z);
    }
    assert!(reach > WalkerRig::BIND_BOUNDS.max.z + 0.2, "a stride reaches forward: {reach}");
}

#[test]
fn the_bind_pose_body_lies_within_the_margin_of_every_posed_box() {
    let rig = WalkerRig::new();
    let bind = WalkerRig::BIND_BOUNDS;
    for step in 0..200 {
        let cycle = step as f32 / 200.0;
        let bounds = posed_box(&rig, cycle);
        let margin = Vec3::splat(WalkerRig::BIND_POSE_MARGIN);
        assert!(
            (bounds.min - margin).cmple(bind.min).all() && (bounds.max + margin).cmpge(bind.max).all(),
            "at {cycle}: bind box {bind:?} outside the posed box {bounds:?} padded by the margin"
        );
    }
}

#[test]
fn the_body_goes_into_a_library_as_a_skinned_chain() {
    let rig = WalkerRig::new();
    let mut library = MeshLibrary::new();
    let chain = rig.add_to(&mut library);
    assert!(!chain.is_empty(), "at least one level");
    assert_eq!(library.vertex_joints().len(), library.positions().len(), "the influences follow the vertices");
    assert!(library.vertex_joints().iter().all(|joints| usize::from(joints[0]) < rig.skeleton.joint_count()));
}
