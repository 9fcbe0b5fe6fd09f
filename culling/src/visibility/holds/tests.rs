//! The holds against the work they skip: a held verdict is the verdict found again, the word
//! pass's lanes give the plain tests' side, and a word clearly outside or inside agrees with
//! the kernel on every box in it.

use super::side::{clearly_inside, clearly_outside};
use super::*;
use crate::frustum::Frustum;
use crate::kernels::Kernel;
use crate::soa::AabbBlock;
use crate::visibility::tracked::unions::union_of;
use ecs::{Aabb, Lod};
use glam::{Mat4, Quat};
use proptest::prelude::*;

/// A reversed-Z perspective frustum at `eye`, turned by `yaw`.
fn frustum_at(eye: Vec3, yaw: f32) -> Frustum {
    let view = Mat4::from_rotation_translation(Quat::from_rotation_y(yaw), eye).inverse();
    Frustum::from_view_projection(Mat4::perspective_infinite_reverse_rh(1.1, 1.7, 0.1) * view)
}

proptest! {
    #[test]
    fn a_held_side_is_the_side_found_again(
        start in (-3000.0f32..3000.0, -50.0f32..50.0, -3000.0f32..3000.0),
        yaw in -3.2f32..3.2,
        steps in proptest::collection::vec((-1.5f32..1.5, -0.2f32..0.2, -1.5f32..1.5), 1..40),
        boxes in proptest::collection::vec((-80.0f32..80.0, -20.0f32..20.0, -80.0f32..80.0, 0.01f32..30.0), 1..24),
    ) {
        let mut eye = Vec3::new(start.0, start.1, start.2);
        let mut shape = FrustumShape::default();
        let frustum = frustum_at(eye, yaw);
        shape.update(&frustum, eye);
        let bounds: Vec<Aabb> = boxes
            .iter()
            .map(|&(x, y, z, size)| {
                let center = eye + Vec3::new(x, y, z);
                Aabb::new(center - size * Vec3::new(1.0, 0.5, 0.7), center + size * Vec3::new(0.6, 0.5, 1.0))
            })
            .collect();
        let mut holds: Vec<FrustumHold> =
            bounds.iter().map(|bounds| FrustumHold::decide(&frustum, bounds, eye, &shape).1).collect();
        let mut held_some = false;
        for step in steps {
            eye += Vec3::new(step.0, step.1, step.2);
            let frustum = frustum_at(eye, yaw);
            shape.update(&frustum, eye);
            for (hold, bounds) in holds.iter_mut().zip(&bounds) {
                let (found, fresh) = FrustumHold::decide(&frustum, bounds, eye, &shape);
                match hold.side_at(eye, &shape) {
                    Some(side) => {
                        held_some = true;
                        prop_assert_eq!(side, found, "a hold kept a side the box left");
                    }
                    None => *hold = fresh,
                }
            }
        }
        // Most boxes lie well inside or outside: holds must be taken, or the test tests
        // nothing.
        prop_assume!(held_some);
    }
}

#[test]
fn a_turn_or_a_new_projection_starts_a_new_shape() {
    let eye = Vec3::new(10.0, 2.0, -5.0);
    let mut shape = FrustumShape::default();
    shape.update(&frustum_at(eye, 0.3), eye);
    let first = shape.epoch;
    assert_ne!(first, 0);
    shape.update(&frustum_at(eye + Vec3::new(0.5, 0.0, -0.25), 0.3), eye + Vec3::new(0.5, 0.0, -0.25));
    assert_eq!(shape.epoch, first, "a camera that only moves keeps the shape");
    shape.update(&frustum_at(eye, 0.31), eye);
    assert_ne!(shape.epoch, first, "a turn starts a new shape");
    let wider = Frustum::from_view_projection(
        Mat4::perspective_infinite_reverse_rh(1.3, 1.7, 0.1)
            * Mat4::from_rotation_translation(Quat::from_rotation_y(0.31), eye).inverse(),
    );
    let turned = shape.epoch;
    shape.update(&wider, eye);
    assert_ne!(shape.epoch, turned, "a new projection starts a new shape");
    shape.update(&Frustum::from_view_projection(Mat4::NAN), eye);
    assert_eq!(shape.epoch, 0, "no shape for planes that are not finite");
}

/// A reversed-Z perspective frustum at `eye` looking along `yaw`/`pitch`.
fn frustum_looking(eye: Vec3, yaw: f32, pitch: f32) -> Frustum {
    let direction = Vec3::new(yaw.sin() * pitch.cos(), pitch.sin(), -yaw.cos() * pitch.cos());
    let view = Mat4::look_to_rh(eye, direction, Vec3::Y);
    let projection = Mat4::perspective_infinite_reverse_rh(1.0, 16.0 / 9.0, 0.1);
    Frustum::from_view_projection(projection * view)
}

proptest! {
    /// The lane-by-lane side test gives the plain tests' answer on every box, finite or
    /// not, under every frustum, finite or not.
    #[test]
    fn word_planes_give_the_plain_tests_side(
        eye in prop::array::uniform3(-50.0f32..50.0),
        yaw in -3.2f32..3.2,
        pitch in -1.5f32..1.5,
        min in prop::array::uniform3(-300.0f32..300.0),
        size in prop::array::uniform3(0.0f32..200.0),
        odd in 0usize..8,
        ask_inside: bool,
    ) {
        let frustum = if odd == 7 { Frustum::from_view_projection(Mat4::NAN) } else { frustum_looking(Vec3::from(eye), yaw, pitch) };
        let min = Vec3::from(min);
        let mut bounds = Aabb { min, max: min + Vec3::from(size) };
        match odd {
            1 => bounds.max.x = f32::INFINITY,
            2 => bounds.min = Vec3::NEG_INFINITY,
            3 => bounds.max.y = f32::NAN,
            _ => {}
        }
        let planes = WordPlanes::of(&frustum);
        prop_assert_eq!(planes.side(&bounds, ask_inside), WordSide::of(&frustum, &bounds, ask_inside));
    }

    /// The word test rejects a word only when the kernel rejects every box in it.
    #[test]
    fn words_clearly_outside_or_inside_agree_with_the_kernel_on_every_box(
        eye in prop::array::uniform3(-50.0f32..50.0),
        yaw in -3.2f32..3.2,
        pitch in -1.5f32..1.5,
        cluster in prop::array::uniform3(-200.0f32..200.0),
        boxes in prop::collection::vec((prop::array::uniform3(-20.0f32..20.0), prop::array::uniform3(0.0f32..6.0)), 1..64),
    ) {
        let frustum = frustum_looking(Vec3::from(eye), yaw, pitch);
        let mut block = AabbBlock::new();
        let mut world_boxes = Vec::new();
        for (offset, half) in &boxes {
            let center = Vec3::from(cluster) + Vec3::from(*offset);
            let half = Vec3::from(*half);
            block.push_center_half(center, half);
            world_boxes.push(Aabb { min: center - half, max: center + half });
        }
        let members = if boxes.len() == 64 { u64::MAX } else { (1u64 << boxes.len()) - 1 };
        let bounds = union_of(&world_boxes, members);
        let mut bits = [0u64];
        Kernel::Scalar.cull_aabbs(&frustum, block.slices(), &mut bits);
        if clearly_outside(&frustum, &bounds) {
            prop_assert_eq!(bits[0], 0, "the kernel keeps a box of a word the word test rejected");
        }
        if clearly_inside(&frustum, &bounds) {
            prop_assert_eq!(bits[0], members, "the kernel rejects a box of a word the word test kept whole");
        }
    }
}

proptest! {
    /// Inside a level's hold, `select_level` picks that level again.
    #[test]
    fn a_level_holds_exactly_where_select_picks_it_again(
        max_distances in prop::collection::vec(0.0f32..500.0, 1..6),
        bias in 0.25f32..4.0,
        global_bias in 0.5f32..2.0,
        first in 0.0f32..3000.0,
        second in 0.0f32..3000.0,
    ) {
        let levels = max_distances
            .iter()
            .enumerate()
            .map(|(index, &max_distance)| ecs::LodLevel { mesh: ecs::MeshHandle(index as u32), max_distance })
            .collect();
        let lods = Lod { levels, bias };
        let hold = hold_of(&lods, Vec3::ZERO, first, global_bias);
        let pick = |scaled: f32| lods.select(scaled, 1.0, global_bias);
        prop_assert!(hold.above < first && first <= hold.up_to, "a pick holds where it was made");
        if hold.above < second && second <= hold.up_to {
            prop_assert_eq!(pick(second), pick(first));
        }
    }
}

#[test]
fn a_word_touching_a_plane_is_not_outside_and_one_well_past_it_is() {
    let frustum = frustum_looking(Vec3::ZERO, 0.0, 0.0);
    // Looking down -z from the origin: the near plane is at z = -0.1.
    let behind = Aabb { min: Vec3::new(-1.0, -1.0, 5.0), max: Vec3::new(1.0, 1.0, 6.0) };
    assert!(clearly_outside(&frustum, &behind));
    let touching = Aabb { min: Vec3::new(-1.0, -1.0, -0.1), max: Vec3::new(1.0, 1.0, 6.0) };
    assert!(!clearly_outside(&frustum, &touching));
    assert!(!clearly_outside(&Frustum::from_view_projection(Mat4::NAN), &behind), "no planes: nothing is outside");
    let ahead = Aabb { min: Vec3::new(-1.0, -1.0, -20.0), max: Vec3::new(1.0, 1.0, -10.0) };
    assert!(clearly_inside(&frustum, &ahead) && !clearly_inside(&frustum, &touching));
    assert!(!clearly_inside(&Frustum::from_view_projection(Mat4::NAN), &ahead), "no planes: nothing is sure");
}
