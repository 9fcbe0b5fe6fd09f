//! What the pass knows about each object slot's box, so an object that did not move costs a
//! comparison a frame instead of a finiteness check and three scattered column writes, and
//! under a still camera no cull test either.
//!
//! **Keyed by value.** hecs keeps no change ticks, and an object moves by many public means:
//! a system writing `Transform` or `WorldTransform`, `World::get_mut`, re-parenting (the
//! Transform stage writes a new `WorldTransform`), a new entity in a reused slot, a new `Mesh`
//! box or skinned pose. All of them end in the two inputs the world box is computed from, the
//! world matrix and the local box, so the pass compares both, bit for bit, with the ones the
//! slot's columns were written from: the matrix with the slot's entry of
//! [`ObjectColumns::models`](super::ObjectColumns), the local box with the copy kept here.
//! Equal inputs give the same box by construction, whatever changed them, so a stale box or
//! verdict (a false-hidden bug) cannot come from a missed mark. Bitwise, not `==`: `-0.0` and `0.0`
//! compare equal but are different inputs, and a NaN is the same input as itself (the entry
//! remembers that the object was not finite, so it stays kept). A freed or undrawable slot's
//! entry is emptied, so a newcomer in a reused slot is always computed afresh.
//!
//! **Verdicts.** An entry also keeps what the culls (frustum, distance, screen size) decided
//! for its box, with the *view epoch* it was decided under. The epoch changes whenever any
//! other input of those culls changes: the view and projection matrices, the viewport
//! height, the cull settings, compared bit for bit each frame ([`ViewKey`]). So under a
//! still camera a static object's verdict is reused as well: no kernel, no distance or size
//! test. A moved object's entry is rewritten with no verdict.
//!
//! **Why per slot.** Entries follow the slot, like every other column, so memory is one
//! entry per object whatever archetype moves the `Culled` and `Occluded` tags cause (entries
//! per archetype row would grow with each tag archetype's largest size). 32 bytes an object:
//! the world box itself is not kept but computed again from the matrix (a few multiply-adds,
//! the same operations, so the same bits), since memory, not arithmetic, is what a million
//! objects run short of.

use ecs::Aabb;
use glam::{Mat4, Vec3};

/// The view epoch of an entry with no verdict (epochs start at 1).
const NO_EPOCH: u32 = 0;

/// What the culls decided for an object's box under one view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Verdict {
    /// Passed every cull (or was kept for not being finite).
    Visible = 0,
    /// Outside a frustum plane.
    Frustum = 1,
    /// Further than the maximum distance.
    Distance = 2,
    /// Smaller on screen than the minimum.
    Size = 3,
}

impl Verdict {
    /// The verdict on the object at `bit` of a word, from the word's bits after the culls:
    /// kept, too far, too small, else outside the frustum.
    #[inline(always)]
    pub(crate) fn of(bit: u64, visible: u64, too_far: u64, too_small: u64) -> Verdict {
        if visible & bit != 0 {
            Verdict::Visible
        } else if too_far & bit != 0 {
            Verdict::Distance
        } else if too_small & bit != 0 {
            Verdict::Size
        } else {
            Verdict::Frustum
        }
    }
}

/// Whether an entry holds a box, and the finiteness it recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum BoxState {
    /// Nothing cached: a new or freed slot, or one whose object was not drawable.
    Empty = 0,
    /// Cached; the matrix and world box were finite.
    Finite = 1,
    /// Cached; a matrix entry or the world box was not finite (the object is kept).
    NonFinite = 2,
}

/// What the pass knew of one slot the last time its inputs changed, and the verdict of the
/// last view it was culled under.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CachedBounds {
    /// The local box the slot's world box came from (the posed box for a posed skinned mesh).
    local: Aabb,
    /// The view epoch `verdict` was decided under ([`NO_EPOCH`]: none).
    epoch: u32,
    state: BoxState,
    /// The culls' verdict on this box under the view of `epoch`.
    verdict: Verdict,
}

impl CachedBounds {
    /// The entry of a slot with nothing cached.
    pub(crate) const EMPTY: CachedBounds = CachedBounds {
        local: Aabb::new(Vec3::ZERO, Vec3::ZERO),
        epoch: NO_EPOCH,
        state: BoxState::Empty,
        verdict: Verdict::Visible,
    };

    /// An entry for the slot's columns written from `local` (and the matrix stored in the
    /// slot's `models` entry), finite or not, with no verdict yet.
    #[inline(always)]
    pub(crate) fn new(local: Aabb, finite: bool) -> CachedBounds {
        let state = if finite { BoxState::Finite } else { BoxState::NonFinite };
        CachedBounds { local, epoch: NO_EPOCH, state, verdict: Verdict::Visible }
    }

    /// Whether the slot's box is finite, when its columns were written from exactly `model`
    /// (compared with `cached_model`, the slot's stored matrix) and `local`; `None` when they
    /// must be written again.
    #[inline(always)]
    pub(crate) fn lookup(&self, cached_model: &Mat4, model: &Mat4, local: &Aabb) -> Option<bool> {
        let valid = self.state != BoxState::Empty;
        let same =
            same_bits(&[local.min, local.max], &[self.local.min, self.local.max]) & same_matrix(cached_model, model);
        (valid & same).then_some(self.state == BoxState::Finite)
    }

    /// The local box the slot's columns were written from (meaningful unless empty).
    #[inline(always)]
    pub(crate) fn local(&self) -> &Aabb {
        &self.local
    }

    /// Whether the box was computed and found finite (an empty entry counts as finite).
    pub(crate) fn is_finite(&self) -> bool {
        self.state != BoxState::NonFinite
    }

    /// The verdict on this entry's box when it was decided under view epoch `epoch` (the
    /// same view and cull settings as now, see [`ViewKey`]); `None` when it must be decided.
    #[inline(always)]
    pub(crate) fn verdict(&self, epoch: u32) -> Option<Verdict> {
        (self.epoch == epoch).then_some(self.verdict)
    }

    /// Records the verdict on this entry's box under view epoch `epoch`.
    #[inline(always)]
    pub(crate) fn set_verdict(&mut self, epoch: u32, verdict: Verdict) {
        self.epoch = epoch;
        self.verdict = verdict;
    }

    /// Forgets the verdict (the epoch counter wrapped, so an old epoch could come back).
    pub(crate) fn forget_verdict(&mut self) {
        self.epoch = NO_EPOCH;
    }
}

/// Bitwise equality of two matrices, without a branch per element.
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

/// Words of a [`ViewKey`].
const VIEW_KEY_WORDS: usize = 40;

/// Everything besides an object's box that the culls' verdict depends on, as bits: the view
/// and projection matrices, the viewport height, the distance and size thresholds, the LOD
/// bias, the error rule's threshold and band, the generation of the levels' errors
/// (`ecs::LodErrors::generation`, as bits) and whether the frustum cull is on. Two frames with equal keys decide every box
/// alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ViewKey([u32; VIEW_KEY_WORDS]);

impl Default for ViewKey {
    fn default() -> Self {
        ViewKey([0; VIEW_KEY_WORDS])
    }
}

impl ViewKey {
    /// The key of a frame's cull inputs.
    pub(crate) fn new(view: &Mat4, projection: &Mat4, height: f32, thresholds: [f32; 6], frustum: bool) -> Self {
        let mut words = [0u32; VIEW_KEY_WORDS];
        let floats =
            view.to_cols_array().into_iter().chain(projection.to_cols_array()).chain([height]).chain(thresholds);
        for (word, value) in words.iter_mut().zip(floats) {
            *word = value.to_bits();
        }
        words[VIEW_KEY_WORDS - 1] = u32::from(frustum);
        ViewKey(words)
    }
}

/// The view epoch: a counter that moves on whenever the [`ViewKey`] changes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ViewEpoch {
    key: ViewKey,
    epoch: u32,
}

impl ViewEpoch {
    /// The epoch of a frame culled with `key` (a new one when it differs from the last), and
    /// whether the counter wrapped: then every entry's verdict must be forgotten.
    pub(crate) fn advance(&mut self, key: ViewKey) -> (u32, bool) {
        if self.epoch != NO_EPOCH && key == self.key {
            return (self.epoch, false);
        }
        self.key = key;
        let wrapped = self.epoch == u32::MAX;
        self.epoch = if wrapped { 1 } else { self.epoch + 1 };
        (self.epoch, wrapped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> Aabb {
        Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5))
    }

    fn entry_for(local: Aabb) -> (CachedBounds, bool) {
        (CachedBounds::new(local, true), true)
    }

    #[test]
    fn an_entry_answers_only_for_the_exact_inputs_it_came_from() {
        let model = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0));
        let (entry, found) = entry_for(unit());
        assert_eq!(entry.lookup(&model, &model, &unit()), Some(found), "same inputs hit");
        let moved = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0001));
        assert_eq!(entry.lookup(&model, &moved, &unit()), None, "a moved matrix misses");
        let grown = Aabb::new(Vec3::splat(-0.5), Vec3::new(0.5, 0.5, 0.6));
        assert_eq!(entry.lookup(&model, &model, &grown), None, "a new local box misses");
        let zero = Aabb::new(Vec3::new(0.0, -0.5, -0.5), Vec3::splat(0.5));
        let negative_zero = Aabb::new(Vec3::new(-0.0, -0.5, -0.5), Vec3::splat(0.5));
        let (entry, _) = entry_for(zero);
        assert_eq!(entry.lookup(&model, &model, &negative_zero), None, "-0.0 is not the input 0.0 was");
        let empty = CachedBounds::EMPTY;
        assert_eq!(empty.lookup(&Mat4::IDENTITY, &Mat4::IDENTITY, &Aabb::new(Vec3::ZERO, Vec3::ZERO)), None);
    }

    #[test]
    fn verdicts_hold_only_for_their_epoch_and_the_epoch_follows_the_key() {
        let (mut entry, _) = entry_for(unit());
        assert_eq!(entry.verdict(1), None, "a new entry has no verdict");
        entry.set_verdict(3, Verdict::Distance);
        assert_eq!(entry.verdict(3), Some(Verdict::Distance));
        assert_eq!(entry.verdict(4), None, "another view decides again");
        entry.forget_verdict();
        assert_eq!(entry.verdict(3), None, "a forgotten verdict is gone");
        let mut epochs = ViewEpoch::default();
        let key = ViewKey::new(&Mat4::IDENTITY, &Mat4::IDENTITY, 720.0, [0.0, 0.0, 1.0, 1.0, 0.1, 0.0], true);
        let (first, _) = epochs.advance(key);
        assert_ne!(first, NO_EPOCH);
        assert_eq!(epochs.advance(key), (first, false), "the same key keeps the epoch");
        let turned =
            ViewKey::new(&Mat4::from_rotation_y(0.1), &Mat4::IDENTITY, 720.0, [0.0, 0.0, 1.0, 1.0, 0.1, 0.0], true);
        assert_ne!(epochs.advance(turned).0, first, "a new view is a new epoch");
        let off =
            ViewKey::new(&Mat4::from_rotation_y(0.1), &Mat4::IDENTITY, 720.0, [0.0, 0.0, 1.0, 1.0, 0.1, 0.0], false);
        assert_ne!(off, turned, "the frustum switch is part of the key");
        let mut near_wrap = ViewEpoch { key, epoch: u32::MAX };
        assert_eq!(near_wrap.advance(turned), (1, true), "the counter wraps past NO_EPOCH and says so");
    }

    #[test]
    fn a_non_finite_entry_stays_non_finite() {
        let mut model = Mat4::IDENTITY;
        model.w_axis.x = f32::NAN;
        let entry = CachedBounds::new(unit(), false);
        let hit = entry.lookup(&model, &model, &unit());
        assert_eq!(hit, Some(false), "the same NaN bits hit and report non-finite");
        let mut other = model;
        other.w_axis.x = f32::INFINITY;
        assert_eq!(entry.lookup(&model, &other, &unit()), None, "other bits miss");
    }

    #[test]
    fn an_entry_is_32_bytes() {
        assert_eq!(std::mem::size_of::<CachedBounds>(), 32, "the cache's memory per object (see the module docs)");
    }
}
