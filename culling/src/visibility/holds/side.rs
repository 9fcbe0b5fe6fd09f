//! Where a word's bounds lie against the frustum ([`WordSide`]): clearly outside a plane,
//! clearly inside every plane, or across; by the word pass's lane-by-lane test
//! ([`WordPlanes`]) and by the plain tests, one plane after another, it is checked against.

use ecs::Aabb;
use glam::{Vec3, Vec4};

use crate::frustum::Frustum;

/// Where a word's bounds lie against the frustum, as the tracked frame (`tracked/`) decides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::visibility) enum WordSide {
    /// Clearly outside one plane: the kernel rejects every box of the word.
    Outside,
    /// Clearly inside every plane: the kernel keeps every box of the word.
    Inside,
    /// Neither: the word's objects are tested one by one.
    Straddles,
}

// The plain tests, one plane after another: the reference `WordPlanes` is checked against.
#[cfg(test)]
impl WordSide {
    /// The side of `bounds`, by the plain early-exit tests ([`clearly_outside`], then
    /// [`clearly_inside`] when `ask_inside`), for a frame that makes no hold.
    pub fn of(frustum: &Frustum, bounds: &Aabb, ask_inside: bool) -> WordSide {
        if clearly_outside(frustum, bounds) {
            WordSide::Outside
        } else if ask_inside && clearly_inside(frustum, bounds) {
            WordSide::Inside
        } else {
            WordSide::Straddles
        }
    }
}

/// Lanes of [`WordPlanes`]: one per plane of a frustum, the unused ones neutral.
const PLANE_LANES: usize = 8;

/// A frustum's planes lane by lane, for the word pass's side test of every word: the plain
/// tests of [`WordSide::of`] on all planes at once, each lane with the same operations in the
/// same order as [`clearly_outside`] and [`clearly_inside`] (so the same answers), which the
/// compiler turns into a few vector instructions instead of a loop that stops early.
#[derive(Clone, Copy, Debug)]
pub(in crate::visibility) struct WordPlanes {
    normal: [[f32; PLANE_LANES]; 3],
    offset: [f32; PLANE_LANES],
    /// The frustum's planes are finite; else no word is decided by its bounds.
    finite: bool,
}

impl WordPlanes {
    /// The planes of `frustum`; the lanes past them are a plane every finite box is inside
    /// (normal zero, offset one), which decides nothing.
    pub(in crate::visibility) fn of(frustum: &Frustum) -> WordPlanes {
        let mut lanes =
            WordPlanes { normal: [[0.0; PLANE_LANES]; 3], offset: [1.0; PLANE_LANES], finite: frustum.is_finite() };
        for (lane, plane) in frustum.planes().iter().enumerate().take(PLANE_LANES) {
            lanes.normal[0][lane] = plane.x;
            lanes.normal[1][lane] = plane.y;
            lanes.normal[2][lane] = plane.z;
            lanes.offset[lane] = plane.w;
        }
        lanes.finite &= frustum.planes().len() <= PLANE_LANES;
        lanes
    }

    /// [`WordSide::of`] for the frustum these planes came from: per lane, the corner farthest
    /// along the normal and the one farthest against it, each plane's distance to them and
    /// its rounding margin, as [`corners`] and [`distance_and_margin`] compute them, written
    /// out on plain arrays so that the lanes vectorize.
    pub(in crate::visibility) fn side(&self, bounds: &Aabb, ask_inside: bool) -> WordSide {
        if !self.finite {
            return WordSide::Straddles;
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
            WordSide::Outside
        } else if ask_inside && bounds.min.is_finite() && bounds.max.is_finite() && inside.iter().all(|&inside| inside)
        {
            WordSide::Inside
        } else {
            WordSide::Straddles
        }
    }
}

/// The corners of `bounds` farthest along and against `plane`'s normal.
#[inline]
pub(super) fn corners(plane: Vec4, bounds: &Aabb) -> (Vec3, Vec3) {
    let positive = plane.truncate().cmpgt(Vec3::ZERO);
    (Vec3::select(positive, bounds.max, bounds.min), Vec3::select(positive, bounds.min, bounds.max))
}

/// `plane`'s signed distance to `corner`, and the margin a word test keeps past it: the
/// kernel works from centres and half extents, so its rounding is allowed for, relative to
/// the magnitudes involved.
#[inline]
pub(super) fn distance_and_margin(plane: Vec4, corner: Vec3) -> (f32, f32) {
    let normal = plane.truncate();
    let distance = normal.dot(corner) + plane.w;
    (distance, 1e-4 * ((normal * corner).abs().element_sum() + plane.w.abs()) + 1e-4)
}

/// Whether `bounds` lies outside one of the frustum's planes by more than rounding could
/// explain, so every box inside it is rejected by the per-object kernel as well: the sign
/// of [`plane_excess`](super::frustum::plane_excess)'s first value, stopping at the first plane that decides.
#[cfg(test)]
pub(super) fn clearly_outside(frustum: &Frustum, bounds: &Aabb) -> bool {
    if !frustum.is_finite() {
        return false;
    }
    frustum.planes().iter().any(|&plane| {
        let (distance, margin) = distance_and_margin(plane, corners(plane, bounds).0);
        distance < -margin
    })
}

/// Whether `bounds` lies inside every plane of the frustum by more than rounding could
/// explain, so the per-object kernel keeps every box inside it: the sign of
/// [`plane_excess`](super::frustum::plane_excess)'s second value, stopping at the first plane that fails.
#[cfg(test)]
pub(super) fn clearly_inside(frustum: &Frustum, bounds: &Aabb) -> bool {
    if !(frustum.is_finite() && bounds.min.is_finite() && bounds.max.is_finite()) {
        return false;
    }
    frustum.planes().iter().all(|&plane| {
        let (distance, margin) = distance_and_margin(plane, corners(plane, bounds).1);
        distance > margin
    })
}
