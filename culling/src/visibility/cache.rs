//! World bounds cached per object slot, so an object that did not move costs a comparison a
//! frame instead of a box transform and three scattered column writes.
//!
//! The cache is keyed by value, not by a change mark. hecs keeps no change ticks, and an
//! object moves by many public means: a system writing `Transform` or `WorldTransform`,
//! `World::get_mut`, re-parenting (the Transform stage writes a new `WorldTransform`), a new
//! entity in a reused slot, a new `Mesh` box or skinned pose. All of them end in the two inputs
//! the world box is computed from, the world matrix and the local box, so the pass compares
//! both, bit for bit, with the ones the cached box came from: the matrix with the slot's entry
//! of [`ObjectColumns::models`](super::ObjectColumns), the local box with the copy kept here.
//! Equal inputs give the same box by construction, whatever changed them, so a stale box (a
//! false-hidden bug) cannot come from a missed mark. Bitwise equality, not `==`: `-0.0` and
//! `0.0` compare equal but are different inputs, and a NaN is the same input as itself (the
//! entry remembers that the object was not finite, so it stays kept).

use ecs::Aabb;
use glam::{Mat4, Vec3};

/// What the pass computed for one slot the last time its inputs changed. One cache line, so
/// the check of a static object reads this line and its matrix and writes nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub(crate) struct CachedBounds {
    /// The local box the world box came from (the posed box for a posed skinned mesh).
    local: Aabb,
    /// World box centre.
    center: Vec3,
    /// World box half extents.
    half: Vec3,
    /// [`CacheState`] as a byte.
    state: u8,
}

/// Whether a slot's cache entry may be used, and the finiteness it recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum CacheState {
    /// Nothing cached: a new or freed slot, or one whose object was not drawable.
    Empty = 0,
    /// Cached; the matrix and world box were finite.
    Finite = 1,
    /// Cached; a matrix entry or the world box was not finite (the object is kept).
    NonFinite = 2,
}

impl CachedBounds {
    /// The entry of a slot with nothing cached.
    pub(crate) const EMPTY: CachedBounds = CachedBounds {
        local: Aabb::new(Vec3::ZERO, Vec3::ZERO),
        center: Vec3::ZERO,
        half: Vec3::ZERO,
        state: CacheState::Empty as u8,
    };

    /// An entry for the world box (`center`, `half`) computed from `local`.
    #[inline(always)]
    pub(crate) fn new(local: Aabb, center: Vec3, half: Vec3, finite: bool) -> CachedBounds {
        let state = if finite { CacheState::Finite } else { CacheState::NonFinite };
        CachedBounds { local, center, half, state: state as u8 }
    }

    /// The cached world box as (centre, half extents, finite) when the entry holds one
    /// computed from exactly `model` (compared with `cached_model`, the slot's stored
    /// matrix) and `local`; `None` when it must be computed again.
    #[inline(always)]
    pub(crate) fn lookup(&self, cached_model: &Mat4, model: &Mat4, local: &Aabb) -> Option<(Vec3, Vec3, bool)> {
        let valid = self.state != CacheState::Empty as u8;
        let same_local = same_bits(&[local.min, local.max], &[self.local.min, self.local.max]);
        (valid & same_local & same_matrix(cached_model, model)).then_some((
            self.center,
            self.half,
            self.state == CacheState::Finite as u8,
        ))
    }
}

/// Bitwise equality of two matrices, without branches per element.
#[inline(always)]
fn same_matrix(left: &Mat4, right: &Mat4) -> bool {
    let (left, right) = (left.to_cols_array(), right.to_cols_array());
    left.iter().zip(&right).fold(true, |same, (a, b)| same & (a.to_bits() == b.to_bits()))
}

/// Bitwise equality of two vector lists of one length.
#[inline(always)]
fn same_bits<const N: usize>(left: &[Vec3; N], right: &[Vec3; N]) -> bool {
    left.iter().zip(right).fold(true, |same, (a, b)| {
        let (a, b) = (a.to_array(), b.to_array());
        same & (a[0].to_bits() == b[0].to_bits())
            & (a[1].to_bits() == b[1].to_bits())
            & (a[2].to_bits() == b[2].to_bits())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> Aabb {
        Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5))
    }

    #[test]
    fn an_entry_answers_only_for_the_exact_inputs_it_came_from() {
        let model = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0));
        let (center, half) = unit().transformed_center_half(&model);
        let entry = CachedBounds::new(unit(), center, half, true);
        assert_eq!(entry.lookup(&model, &model, &unit()), Some((center, half, true)), "same inputs hit");
        let moved = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0001));
        assert_eq!(entry.lookup(&model, &moved, &unit()), None, "a moved matrix misses");
        let grown = Aabb::new(Vec3::splat(-0.5), Vec3::new(0.5, 0.5, 0.6));
        assert_eq!(entry.lookup(&model, &model, &grown), None, "a new local box misses");
        let signed = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0)) * Mat4::from_scale(Vec3::new(1.0, 1.0, 1.0));
        assert_eq!(entry.lookup(&model, &signed, &unit()).is_some(), signed == model, "equal bits hit");
        let negative_zero = Aabb::new(Vec3::new(-0.0, -0.5, -0.5), Vec3::splat(0.5));
        let zero = Aabb::new(Vec3::new(0.0, -0.5, -0.5), Vec3::splat(0.5));
        let entry = CachedBounds::new(zero, center, half, true);
        assert_eq!(entry.lookup(&model, &model, &negative_zero), None, "-0.0 is not the input 0.0 was");
        assert_eq!(CachedBounds::EMPTY.lookup(&Mat4::IDENTITY, &Mat4::IDENTITY, &CachedBounds::EMPTY.local), None);
    }

    #[test]
    fn a_non_finite_entry_stays_non_finite() {
        let mut model = Mat4::IDENTITY;
        model.w_axis.x = f32::NAN;
        let entry = CachedBounds::new(unit(), Vec3::ZERO, Vec3::splat(0.5), false);
        let hit = entry.lookup(&model, &model, &unit());
        assert_eq!(hit.map(|(_, _, finite)| finite), Some(false), "the same NaN bits hit and report non-finite");
        let mut other = model;
        other.w_axis.x = f32::INFINITY;
        assert_eq!(entry.lookup(&model, &other, &unit()), None, "other bits miss");
    }
}
