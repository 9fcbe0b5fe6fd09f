//! Where a word's bounds lie against the frustum ([`WordSide`]): clearly outside a plane,
//! clearly inside every plane, or across; by the word pass's lane-by-lane test
//! ([`WordPlanes`]) and by the plain tests, one plane after another, it is checked against.

use ecs::Aabb;
use glam::{Vec3, Vec4};

use crate::frustum::Frustum;
use crate::plane_lanes::PlaneLanes;

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

/// The frustum's planes lane by lane ([`PlaneLanes`]), for the word pass's side test of
/// every word: the plain tests of `WordSide::of` on all planes at once, each lane with the
/// same operations in the same order as `clearly_outside` and `clearly_inside` (so the
/// same answers), which the compiler turns into a few vector instructions instead of a loop
/// that stops early.
#[derive(Clone, Copy, Debug)]
pub(in crate::visibility) struct WordPlanes(PlaneLanes);

impl WordPlanes {
    /// The planes of `frustum`.
    pub(in crate::visibility) fn of(frustum: &Frustum) -> WordPlanes {
        WordPlanes(PlaneLanes::of(frustum))
    }

    /// The side `WordSide::of` (the tests' plain reference) gives for the frustum these planes
    /// came from, by [`PlaneLanes::clear_sides`].
    #[inline]
    pub(in crate::visibility) fn side(&self, bounds: &Aabb, ask_inside: bool) -> WordSide {
        if !self.0.is_finite() {
            return WordSide::Straddles;
        }
        let (outside, inside) = self.0.clear_sides(bounds);
        if outside {
            WordSide::Outside
        } else if ask_inside && bounds.min.is_finite() && bounds.max.is_finite() && inside {
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
