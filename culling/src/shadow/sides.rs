//! Where a union of caster boxes lies against a light view's volume ([`Side`]), so a light
//! view can skip a whole word or group of casters: clearly outside one plane (the kernel
//! rejects every box inside it), clearly inside every plane (the kernel keeps every one), or
//! neither (the casters are tested one by one).
//!
//! "Clearly" keeps a margin for rounding, relative to the magnitudes involved, as the
//! Visibility stage's word test does (both use `plane_lanes.rs`): the kernel works from
//! centres and half extents and the union from corners, so a box the margin cannot tell apart
//! from the plane is left to the kernel. The test never decides for a view with non-finite
//! planes or a union holding a non-finite box (an unbounded union), which the kernel keeps.

use ecs::Aabb;

use crate::frustum::Frustum;
use crate::plane_lanes::PlaneLanes;

/// Where a union of boxes lies against a view's volume.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    /// Clearly outside one plane: the kernel rejects every box inside the union.
    Outside,
    /// Clearly inside every plane: the kernel keeps every box inside the union.
    Inside,
    /// Neither: its boxes are tested one by one.
    Across,
}

/// A light view's planes lane by lane ([`PlaneLanes`]), deciding caster unions.
#[derive(Clone, Copy, Debug)]
pub(super) struct ViewPlanes(PlaneLanes);

impl ViewPlanes {
    /// The planes of `frustum`.
    pub(super) fn of(frustum: &Frustum) -> ViewPlanes {
        ViewPlanes(PlaneLanes::of(frustum))
    }

    /// Where `bounds` lies, by [`PlaneLanes::clear_sides`]. A non-finite box (an unbounded
    /// union, or the inverted one of no box) is never decided.
    #[inline]
    pub(super) fn side(&self, bounds: &Aabb) -> Side {
        if !(self.0.is_finite() && bounds.min.is_finite() && bounds.max.is_finite()) {
            return Side::Across;
        }
        match self.0.clear_sides(bounds) {
            (true, _) => Side::Outside,
            (false, true) => Side::Inside,
            (false, false) => Side::Across,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::Kernel;
    use crate::soa::AabbSoa;
    use glam::{Mat4, Vec3};
    use proptest::prelude::*;

    fn light() -> Frustum {
        let view = Mat4::look_at_rh(Vec3::new(0.0, 10.0, 0.0), Vec3::ZERO, Vec3::Z);
        Frustum::from_view_projection(Mat4::perspective_rh(1.2, 1.0, 30.0, 0.5) * view)
    }

    #[test]
    fn unions_far_out_or_deep_in_are_decided() {
        let planes = ViewPlanes::of(&light());
        let at = |x: f32, half: f32| Aabb::from_center_half_extent(Vec3::new(x, 0.0, 0.0), Vec3::splat(half));
        assert_eq!(planes.side(&at(100.0, 1.0)), Side::Outside);
        assert_eq!(planes.side(&at(0.0, 1.0)), Side::Inside);
        assert_eq!(planes.side(&at(0.0, 40.0)), Side::Across);
        let empty = Aabb { min: Vec3::INFINITY, max: Vec3::NEG_INFINITY };
        assert_eq!(planes.side(&empty), Side::Across, "an unbounded or inverted box is never decided here");
        let nan = ViewPlanes::of(&Frustum::from_view_projection(Mat4::from_cols_array(&[f32::NAN; 16])));
        assert_eq!(nan.side(&at(100.0, 1.0)), Side::Across);
    }

    proptest! {
        /// A decided union agrees with the kernel on every box inside it.
        #[test]
        fn a_decided_union_agrees_with_the_kernel(
            boxes in prop::collection::vec((prop::array::uniform3(-40.0f32..40.0), prop::array::uniform3(0.0f32..6.0)), 1..64),
            shift in prop::array::uniform3(-60.0f32..60.0),
        ) {
            let frustum = light();
            let mut soa = AabbSoa::default();
            let (mut min, mut max) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
            for (center, half) in &boxes {
                let aabb = Aabb::from_center_half_extent(Vec3::from(*center) * 0.2 + Vec3::from(shift), Vec3::from(*half));
                soa.push(&aabb);
                min = min.min(aabb.min);
                max = max.max(aabb.max);
            }
            let mut word = [0u64];
            Kernel::Scalar.cull_aabbs(&frustum, soa.slices(), &mut word);
            let all = if boxes.len() == 64 { u64::MAX } else { (1u64 << boxes.len()) - 1 };
            match ViewPlanes::of(&frustum).side(&Aabb { min, max }) {
                Side::Outside => prop_assert_eq!(word[0], 0),
                Side::Inside => prop_assert_eq!(word[0], all),
                Side::Across => {}
            }
        }
    }
}
