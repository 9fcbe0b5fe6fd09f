//! What a word may skip while the camera creeps along: an object's level of detail
//! ([`LodHold`]) and the distances behind a whole word's levels ([`WordLodHold`]), its
//! frustum planes test ([`FrustumHold`]) and, for a word across a plane, its objects' kernel
//! verdicts ([`ObjectHold`]).
//!
//! Both are a *hold*: a verdict found under the camera at `anchor`, with the distance
//! (`slack`) the camera may move before the verdict could change. An object's distance, and a
//! box's distance to a plane that moves with the camera, change by at most the camera's own
//! move, so a word whose camera stayed within its slack keeps its verdict without the work.
//! Each slack is taken less an allowance for single-precision rounding, relative to the
//! magnitudes involved, so a hold never keeps a verdict that the work would change.
//!
//! The parts: the levels' holds (`lod.rs`), where a word's bounds lie against the frustum
//! (`side.rs`: the word pass's lane-by-lane test and the plain tests it is checked against)
//! and the frustum's holds (`frustum.rs`: the shape a camera that only moves keeps, and the
//! holds of a word's side and of its objects' verdicts).

use glam::Vec3;

mod frustum;
mod lod;
mod side;

pub(super) use frustum::{nearest_plane_value, FrustumHold, FrustumShape, ObjectHold, WordObjectHolds};
pub(super) use lod::{hold_of, hold_slack, LodHold, WordLodHold};
pub(super) use side::{WordPlanes, WordSide};

/// Relative allowance for rounding: a few single-precision roundings, with margin.
pub(super) const ROUNDING: f32 = 1e-5;

/// The rounding allowance of a move from `anchor` to `eye`, relative to their magnitudes.
#[inline]
pub(super) fn move_rounding(eye: Vec3, anchor: Vec3) -> f32 {
    ROUNDING * (eye.abs().max_element() + anchor.abs().max_element())
}

#[cfg(test)]
mod tests;
