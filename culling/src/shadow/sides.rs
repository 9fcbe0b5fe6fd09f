//! Where a union of caster boxes lies against a light view's volume ([`Side`]), so a light
//! view can skip a whole word or group of casters: clearly outside one plane (the kernel
//! rejects every box inside it), clearly inside every plane (the kernel keeps every one), or
//! neither (the casters are tested one by one).
//!
//! "Clearly" keeps a margin for rounding, relative to the magnitudes involved, as the
//! Visibility stage's word test does (`visibility/holds/side.rs`): the kernel works from
//! centres and half extents and the union from corners, so a box the margin cannot tell apart
//! from the plane is left to the kernel. The test never decides for a view with non-finite
//! planes or a union holding a non-finite box (an unbounded union), which the kernel keeps.

use ecs::Aabb;

use crate::frustum::Frustum;

/// Lanes of [`ViewPlanes`]: one per plane of a frustum, the unused ones neutral.
const PLANE_LANES: usize = 8;

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

/// A frustum's planes lane by lane: every plane tested at once, without stopping early, so
/// that the test compiles to a few vector instructions.
#[derive(Clone, Copy, Debug)]
pub(super) struct ViewPlanes {
    normal: [[f32; PLANE_LANES]; 3],
    offset: [f32; PLANE_LANES],
    /// The frustum's planes are finite; else no union is decided.
    finite: bool,
}

impl ViewPlanes {
    /// The planes of `frustum`; the lanes past them are a plane every finite box is inside
    /// (normal zero, offset one), which decides nothing.
    pub(super) fn of(frustum: &Frustum) -> ViewPlanes {
        let mut lanes =
            ViewPlanes { normal: [[0.0; PLANE_LANES]; 3], offset: [1.0; PLANE_LANES], finite: frustum.is_finite() };
        for (lane, plane) in frustum.planes().iter().enumerate().take(PLANE_LANES) {
            lanes.normal[0][lane] = plane.x;
            lanes.normal[1][lane] = plane.y;
            lanes.normal[2][lane] = plane.z;
            lanes.offset[lane] = plane.w;
        }
        lanes.finite &= frustum.planes().len() <= PLANE_LANES;
        lanes
    }

    /// Where `bounds` lies: per plane, the corner farthest along the normal decides
    /// "outside" (its distance below minus the margin) and the corner farthest against it
    /// decides "inside" (its distance above the margin). A non-finite box (an unbounded
    /// union, or the inverted one of no box) is never decided.
    #[inline]
    pub(super) fn side(&self, bounds: &Aabb) -> Side {
        if !(self.finite && bounds.min.is_finite() && bounds.max.is_finite()) {
            return Side::Across;
        }
        let (min, max) = (bounds.min.to_array(), bounds.max.to_array());
        let (mut outside, mut inside) = ([false; PLANE_LANES], [false; PLANE_LANES]);
        for lane in 0..PLANE_LANES {
            let normal = [self.normal[0][lane], self.normal[1][lane], self.normal[2][lane]];
            let offset = self.offset[lane];
            let mut farthest = [0.0f32; 3];
            let mut nearest = [0.0f32; 3];
            for axis in 0..3 {
                let positive = normal[axis] > 0.0;
                farthest[axis] = if positive { max[axis] } else { min[axis] };
                nearest[axis] = if positive { min[axis] } else { max[axis] };
            }
            let distance_and_margin = |corner: [f32; 3]| {
                let terms = [normal[0] * corner[0], normal[1] * corner[1], normal[2] * corner[2]];
                let distance = terms[0] + terms[1] + terms[2] + offset;
                let margin = 1e-4 * (terms[0].abs() + terms[1].abs() + terms[2].abs() + offset.abs()) + 1e-4;
                (distance, margin)
            };
            let (distance, margin) = distance_and_margin(farthest);
            outside[lane] = distance < -margin;
            let (distance, margin) = distance_and_margin(nearest);
            inside[lane] = distance > margin;
        }
        if outside.iter().any(|&outside| outside) {
            Side::Outside
        } else if inside.iter().all(|&inside| inside) {
            Side::Inside
        } else {
            Side::Across
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
