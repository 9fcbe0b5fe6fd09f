//! A frustum's planes lane by lane ([`PlaneLanes`]), for the tests that decide a whole group
//! of boxes by their union: the Visibility stage's word test (`visibility/holds/side.rs`) and
//! the light views' caster words (`shadow/sides.rs`). Every plane is tested at once, without
//! stopping early, so the test compiles to a few vector instructions.
//!
//! "Clearly" keeps a margin for rounding, relative to the magnitudes involved: the per-object
//! kernel works from centres and half extents and the union from corners, so a box the margin
//! cannot tell apart from a plane is left to the kernel.

use ecs::Aabb;

use crate::frustum::Frustum;

/// Lanes of [`PlaneLanes`]: one per plane of a frustum, the unused ones neutral.
const PLANE_LANES: usize = 8;

/// A frustum's planes lane by lane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlaneLanes {
    normal: [[f32; PLANE_LANES]; 3],
    offset: [f32; PLANE_LANES],
    /// The frustum's planes are finite (and fit the lanes); else nothing is decided.
    finite: bool,
}

impl PlaneLanes {
    /// The planes of `frustum`; the lanes past them are a plane every finite box is inside
    /// (normal zero, offset one), which decides nothing.
    pub(crate) fn of(frustum: &Frustum) -> PlaneLanes {
        let mut lanes =
            PlaneLanes { normal: [[0.0; PLANE_LANES]; 3], offset: [1.0; PLANE_LANES], finite: frustum.is_finite() };
        for (lane, plane) in frustum.planes().iter().enumerate().take(PLANE_LANES) {
            lanes.normal[0][lane] = plane.x;
            lanes.normal[1][lane] = plane.y;
            lanes.normal[2][lane] = plane.z;
            lanes.offset[lane] = plane.w;
        }
        lanes.finite &= frustum.planes().len() <= PLANE_LANES;
        lanes
    }

    /// Whether the planes are finite and fit the lanes: when not, callers decide nothing.
    #[inline]
    pub(crate) fn is_finite(&self) -> bool {
        self.finite
    }

    /// Per plane, the corner of `bounds` farthest along the normal decides "outside" (its
    /// distance below minus the margin) and the corner farthest against it decides "inside"
    /// (its distance above the margin). Returns whether `bounds` is clearly outside one plane
    /// and whether it is clearly inside every plane; the caller checks [`Self::is_finite`]
    /// and the finiteness of `bounds` as its own answer needs.
    #[inline]
    pub(crate) fn clear_sides(&self, bounds: &Aabb) -> (bool, bool) {
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
        (outside.iter().any(|&outside| outside), inside.iter().all(|&inside| inside))
    }
}
