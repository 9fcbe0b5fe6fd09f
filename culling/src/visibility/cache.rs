//! World bounds cached per archetype row, so an object that did not move costs one
//! sequential comparison a frame instead of a box transform and scattered column writes.
//!
//! **Keyed by value.** hecs keeps no change ticks, and an object moves by many public means:
//! a system writing `Transform` or `WorldTransform`, `World::get_mut`, re-parenting (the
//! Transform stage writes a new `WorldTransform`), a new entity in a reused slot, a new `Mesh`
//! box or skinned pose. All of them end in the two inputs the world box is computed from, the
//! world matrix and the local box, so the pass compares both, bit for bit, with the ones the
//! cached box came from. Equal inputs give the same box by construction, whatever changed
//! them, so a stale box (a false-hidden bug) cannot come from a missed mark. Bitwise, not
//! `==`: `-0.0` and `0.0` compare equal but are different inputs, and a NaN is the same input
//! as itself (the entry remembers that the object was not finite, so it stays kept).
//!
//! **Where entries live.** One entry per archetype row, in the archetype's storage order,
//! which is the order the pass walks: a static object's check reads its matrix and its entry
//! one after the other, with no scattered access but its slot's stamp. Rows are no identity
//! (a tag change moves an entity, and the archetype's last row fills its hole), so an entry
//! names the slot it was written for, and it may be used only while it is the last writer of
//! that slot's columns: each column write stamps the slot with the frame number
//! ([`ObjectColumns::stamps`](super::ObjectColumns)), the entry keeps the stamp, and a slot
//! reset (freed, not drawable, or columns cleared) stamps zero. Frame numbers never repeat, so
//! equal stamps mean "these columns hold this entry's outputs".
//!
//! **Verdicts.** An entry also keeps what the culls (frustum, distance, screen size) decided
//! for its box, with the *view epoch* it was decided under. The epoch changes whenever any
//! other input of those culls changes: the view and projection matrices, the viewport
//! height, the cull settings, compared bit for bit each frame ([`ViewKey`]). So under a
//! still camera a static object's verdict is reused as well: no kernel, no distance or size
//! test. A moved object's entry is rewritten with no verdict.

use ecs::Aabb;
use glam::{Mat4, Vec3};

use super::result::ObjectDraw;

/// The stamp of a slot whose columns hold no cached entry's outputs.
pub(crate) const UNSTAMPED: u64 = 0;

/// The view epoch of an entry with no verdict (epochs start at 1).
const NO_EPOCH: u64 = 0;

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

/// What the pass computed for the object in one archetype row the last time its inputs or
/// its slot changed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CachedObject {
    /// The world matrix the box came from.
    model: Mat4,
    /// The local box the world box came from (the posed box for a posed skinned mesh).
    local: Aabb,
    /// World box centre.
    center: Vec3,
    /// World box half extents.
    half: Vec3,
    /// The draw written to the slot's column (its LOD is chosen again each frame).
    pub(crate) draw: ObjectDraw,
    /// The frame stamp of the column write this entry made ([`UNSTAMPED`]: none).
    stamp: u64,
    /// The slot whose columns this entry wrote.
    slot: u32,
    /// The view epoch `verdict` was decided under ([`NO_EPOCH`]: none).
    epoch: u64,
    /// Whether the matrix and world box were finite.
    finite: bool,
    /// The culls' verdict on this box under the view of `epoch`.
    verdict: Verdict,
}

/// A cache hit: the world box of the object and whether it is finite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CachedBox {
    /// World box centre.
    pub center: Vec3,
    /// World box half extents.
    pub half: Vec3,
    /// The matrix and world box were finite.
    pub finite: bool,
}

impl CachedObject {
    /// The entry of a row with nothing cached.
    pub(crate) const EMPTY: CachedObject = CachedObject {
        model: Mat4::IDENTITY,
        local: Aabb::new(Vec3::ZERO, Vec3::ZERO),
        center: Vec3::ZERO,
        half: Vec3::ZERO,
        draw: ObjectDraw::NONE,
        stamp: UNSTAMPED,
        slot: u32::MAX,
        epoch: NO_EPOCH,
        finite: true,
        verdict: Verdict::Visible,
    };

    /// An entry for slot `slot`'s columns written at frame `stamp` from `model` and `local`.
    #[inline(always)]
    pub(crate) fn new(slot: u32, stamp: u64, model: Mat4, local: Aabb, found: CachedBox, draw: ObjectDraw) -> Self {
        CachedObject {
            model,
            local,
            center: found.center,
            half: found.half,
            draw,
            stamp,
            slot,
            epoch: NO_EPOCH,
            finite: found.finite,
            verdict: Verdict::Visible,
        }
    }

    /// The verdict on this entry's box when it was decided under view epoch `epoch` (the
    /// same view and cull settings as now, see [`ViewKey`]); `None` when it must be decided.
    #[inline(always)]
    pub(crate) fn verdict(&self, epoch: u64) -> Option<Verdict> {
        (self.epoch == epoch).then_some(self.verdict)
    }

    /// Records the verdict on this entry's box under view epoch `epoch`.
    #[inline(always)]
    pub(crate) fn set_verdict(&mut self, epoch: u64, verdict: Verdict) {
        self.epoch = epoch;
        self.verdict = verdict;
    }

    /// The cached world box when this entry wrote slot `slot`'s columns last (`slot_stamp`
    /// is the slot's stamp) from exactly `model` and `local`; `None` when it must be computed
    /// and written again.
    #[inline(always)]
    pub(crate) fn lookup(&self, slot: u32, slot_stamp: u64, model: &Mat4, local: &Aabb) -> Option<CachedBox> {
        let owner = (self.slot == slot) & (self.stamp == slot_stamp) & (slot_stamp != UNSTAMPED);
        let same =
            same_bits(&[local.min, local.max], &[self.local.min, self.local.max]) & same_matrix(&self.model, model);
        (owner & same).then_some(CachedBox { center: self.center, half: self.half, finite: self.finite })
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

/// The entries of every archetype's rows, indexed by the archetype's position in
/// `World::archetypes()` (stable: hecs never removes an archetype). Rows keep their capacity.
#[derive(Clone, Debug, Default)]
pub(crate) struct RowCache {
    archetypes: Vec<Vec<CachedObject>>,
}

/// Raw row-entry pointers of this frame's segments, shared by the pass's jobs.
#[derive(Debug, Default)]
pub(crate) struct RowPointers(pub Vec<*mut CachedObject>);

// SAFETY: the pointers are dereferenced only inside the parallel pass, at the rows of a job's
// own disjoint storage range (see `cull.rs`), while the `RowCache` they point into is
// borrowed mutably by the stage and outlives the pass.
unsafe impl Send for RowPointers {}
// SAFETY: as above.
unsafe impl Sync for RowPointers {}

impl RowCache {
    /// Gives every segment's archetype (`(archetype position, rows)` pairs) at least `rows`
    /// entries (new ones empty) and fills `pointers` with each segment's first entry.
    pub(crate) fn prepare(&mut self, segments: impl Iterator<Item = (usize, usize)>, pointers: &mut RowPointers) {
        pointers.0.clear();
        for (archetype, rows) in segments {
            if archetype >= self.archetypes.len() {
                self.archetypes.resize_with(archetype + 1, Vec::new);
            }
            let entries = &mut self.archetypes[archetype];
            if entries.len() < rows {
                entries.resize(rows, CachedObject::EMPTY);
            }
            pointers.0.push(entries.as_mut_ptr());
        }
    }
}

/// Words of a [`ViewKey`].
const VIEW_KEY_WORDS: usize = 37;

/// Everything besides an object's box that the culls' verdict depends on, as bits: the view
/// and projection matrices, the viewport height, the distance and size thresholds, the LOD
/// bias and whether the frustum cull is on. Two frames with equal keys decide every box
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
    pub(crate) fn new(view: &Mat4, projection: &Mat4, height: f32, thresholds: [f32; 3], frustum: bool) -> Self {
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
    epoch: u64,
}

impl ViewEpoch {
    /// The epoch of a frame culled with `key` (a new one when it differs from the last).
    pub(crate) fn advance(&mut self, key: ViewKey) -> u64 {
        if self.epoch == NO_EPOCH || key != self.key {
            self.epoch += 1;
            self.key = key;
        }
        self.epoch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> Aabb {
        Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5))
    }

    fn entry_for(slot: u32, stamp: u64, model: Mat4, local: Aabb) -> (CachedObject, CachedBox) {
        let (center, half) = local.transformed_center_half(&model);
        let found = CachedBox { center, half, finite: true };
        (CachedObject::new(slot, stamp, model, local, found, ObjectDraw::NONE), found)
    }

    #[test]
    fn an_entry_answers_only_for_the_exact_inputs_it_came_from() {
        let model = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0));
        let (entry, found) = entry_for(4, 7, model, unit());
        assert_eq!(entry.lookup(4, 7, &model, &unit()), Some(found), "same inputs, same slot and stamp hit");
        let moved = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0001));
        assert_eq!(entry.lookup(4, 7, &moved, &unit()), None, "a moved matrix misses");
        let grown = Aabb::new(Vec3::splat(-0.5), Vec3::new(0.5, 0.5, 0.6));
        assert_eq!(entry.lookup(4, 7, &model, &grown), None, "a new local box misses");
        let zero = Aabb::new(Vec3::new(0.0, -0.5, -0.5), Vec3::splat(0.5));
        let negative_zero = Aabb::new(Vec3::new(-0.0, -0.5, -0.5), Vec3::splat(0.5));
        let (entry, _) = entry_for(4, 7, model, zero);
        assert_eq!(entry.lookup(4, 7, &model, &negative_zero), None, "-0.0 is not the input 0.0 was");
    }

    #[test]
    fn an_entry_answers_only_while_it_is_its_slots_last_writer() {
        let model = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0));
        let (entry, _) = entry_for(4, 7, model, unit());
        assert_eq!(entry.lookup(5, 7, &model, &unit()), None, "another slot in this row misses");
        assert_eq!(entry.lookup(4, 8, &model, &unit()), None, "the slot was written since (elsewhere) misses");
        assert_eq!(entry.lookup(4, UNSTAMPED, &model, &unit()), None, "a reset slot misses");
        let (empty, _) = entry_for(u32::MAX, UNSTAMPED, Mat4::IDENTITY, Aabb::new(Vec3::ZERO, Vec3::ZERO));
        assert_eq!(empty.lookup(u32::MAX, UNSTAMPED, &Mat4::IDENTITY, &Aabb::new(Vec3::ZERO, Vec3::ZERO)), None);
    }

    #[test]
    fn verdicts_hold_only_for_their_epoch_and_the_epoch_follows_the_key() {
        let (mut entry, _) = entry_for(1, 1, Mat4::IDENTITY, unit());
        assert_eq!(entry.verdict(1), None, "a new entry has no verdict");
        entry.set_verdict(3, Verdict::Distance);
        assert_eq!(entry.verdict(3), Some(Verdict::Distance));
        assert_eq!(entry.verdict(4), None, "another view decides again");
        let mut epochs = ViewEpoch::default();
        let key = ViewKey::new(&Mat4::IDENTITY, &Mat4::IDENTITY, 720.0, [0.0, 0.0, 1.0], true);
        let first = epochs.advance(key);
        assert_ne!(first, NO_EPOCH);
        assert_eq!(epochs.advance(key), first, "the same key keeps the epoch");
        let turned = ViewKey::new(&Mat4::from_rotation_y(0.1), &Mat4::IDENTITY, 720.0, [0.0, 0.0, 1.0], true);
        assert_ne!(epochs.advance(turned), first, "a new view is a new epoch");
        let off = ViewKey::new(&Mat4::from_rotation_y(0.1), &Mat4::IDENTITY, 720.0, [0.0, 0.0, 1.0], false);
        assert_ne!(off, turned, "the frustum switch is part of the key");
    }

    #[test]
    fn a_non_finite_entry_stays_non_finite() {
        let mut model = Mat4::IDENTITY;
        model.w_axis.x = f32::NAN;
        let found = CachedBox { center: Vec3::ZERO, half: Vec3::splat(0.5), finite: false };
        let entry = CachedObject::new(0, 1, model, unit(), found, ObjectDraw::NONE);
        let hit = entry.lookup(0, 1, &model, &unit());
        assert_eq!(hit.map(|hit| hit.finite), Some(false), "the same NaN bits hit and report non-finite");
        let mut other = model;
        other.w_axis.x = f32::INFINITY;
        assert_eq!(entry.lookup(0, 1, &other, &unit()), None, "other bits miss");
    }
}
