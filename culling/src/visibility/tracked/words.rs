//! The word pass's data: what each word of 64 slots keeps from the frame that last decided it,
//! what every word job reads (columns shared by jobs that each write only their own words),
//! and the figures the jobs add up.

use std::sync::atomic::{AtomicUsize, Ordering};

use ecs::Aabb;
use glam::Mat4;
use runtime::hecs::Entity;

use super::unions::{group_union, SettledBounds};
use crate::parallel::SharedMut;
use crate::visibility::cache::CachedBounds;
use crate::visibility::changes::SlotChanges;
use crate::visibility::cull::PassInputs;
use crate::visibility::holds::{
    FrustumHold, FrustumShape, LodHold, ObjectHold, WordLodHold, WordObjectHolds, WordPlanes,
};
use crate::visibility::objects::ObjectDraw;

/// Words per group of the occlusion step's first level (4096 slots).
pub(crate) const GROUP_WORDS: usize = 64;

/// Words per job of the passes over every word that cost about the same per word (16k slots).
pub(super) const WORD_GRAIN: usize = 256;

/// Words per job of the word pass: one group (4096 slots). Its cost per word ranges from a
/// few nanoseconds (a clean word under the same view) to microseconds (a word near the
/// camera, tested object by object), and the costly words crowd together, so small jobs keep
/// the threads from waiting on the one that drew them.
pub(super) const DECIDE_GRAIN: usize = GROUP_WORDS;

/// What one word of 64 slots kept from the frame that last decided it.
#[derive(Clone, Copy, Debug)]
pub(super) struct WordState {
    /// The bits of objects that passed frustum, distance and size (before occlusion).
    pub(super) culled: u64,
    /// The view epoch `culled` and `rejects` were decided under (0: never).
    pub(super) epoch: u32,
    /// Objects rejected by the frustum, the distance and the screen size.
    pub(super) rejects: [u8; 3],
    /// A slot of the word was refreshed since: bounds and answer must be redone.
    pub(super) dirty: bool,
    /// The slots refreshed since the word was decided.
    pub(super) refreshed: u64,
    /// Refreshed slots whose verdict under this frame's view the refresh already found
    /// (`run_range` decides as it refreshes), and of those the visible ones: the word pass
    /// takes these bits instead of reading the slots' cache entries again.
    pub(super) decided: u64,
    pub(super) decided_visible: u64,
    /// The drawable objects when the word was decided.
    pub(super) decided_drawable: u64,
    /// A draw of the word changed (a refreshed slot, or a level of detail) since the
    /// occluder bits were found.
    pub(super) draws_changed: bool,
    /// How far the camera may move before one of the word's levels could change.
    pub(super) lod_hold: WordLodHold,
    /// The word's side of the frustum, and how far the camera may move before it could
    /// change (`holds/`).
    pub(super) frustum_hold: FrustumHold,
    /// Which of its objects keep their frustum verdict by their own holds (`holds/`).
    pub(super) object_holds: WordObjectHolds,
}

impl Default for WordState {
    fn default() -> Self {
        WordState {
            culled: 0,
            epoch: 0,
            rejects: [0; 3],
            dirty: true,
            refreshed: 0,
            decided: 0,
            decided_visible: 0,
            decided_drawable: 0,
            draws_changed: false,
            lod_hold: WordLodHold::NONE,
            frustum_hold: FrustumHold::NONE,
            object_holds: WordObjectHolds::default(),
        }
    }
}

/// Figures of a tracked frame, for the stage's statistics.
#[derive(Default)]
pub(crate) struct TrackedTotals {
    pub(crate) drawable: usize,
    pub(crate) visible: usize,
    pub(crate) frustum_rejected: usize,
    pub(crate) distance_rejected: usize,
    pub(crate) size_rejected: usize,
    pub(crate) non_finite: usize,
    pub(crate) bounds_computed: usize,
}

/// What every word job reads.
pub(super) struct WordInputs<'a> {
    pub(super) pass: &'a PassInputs<'a>,
    pub(super) drawable: &'a [u64],
    pub(super) forced: &'a [u64],
    pub(super) with_lod: &'a [u64],
    pub(super) entities: &'a [Entity],
    /// Per word and per group, redone by the job that owns them for its refreshed words.
    pub(super) word_bounds: SharedMut<Aabb>,
    pub(super) settled: SharedMut<SettledBounds>,
    pub(super) group_bounds: SharedMut<Aabb>,
    pub(super) models: &'a [Mat4],
    pub(super) bounds: &'a [Aabb],
    pub(super) cache: SharedMut<CachedBounds>,
    pub(super) draws: SharedMut<ObjectDraw>,
    pub(super) lod_holds: SharedMut<LodHold>,
    pub(super) object_holds: SharedMut<ObjectHold>,
    pub(super) frustum_shape: FrustumShape,
    /// Pick the levels of the objects refreshed since the word was decided too: frames
    /// answered on request refreshed them without a word pass, under older views.
    pub(super) repick_refreshed: bool,
    /// Pick the levels of words outside the view too: a frame answered on request may turn
    /// the camera onto them without a word pass.
    pub(super) pick_outside: bool,
    /// This frame's frustum planes, lane by lane, for the words' side tests.
    pub(super) planes: WordPlanes,
    /// Where a level of detail that changes a draw marks its slot.
    pub(super) changes: &'a SlotChanges,
}

impl WordInputs<'_> {
    /// Word `index`'s bounds, as redone for this frame (a word job reads only its own words).
    #[inline]
    pub(super) fn word_bounds(&self, index: usize) -> &Aabb {
        // SAFETY: written only by the job owning word `index`, before it reads them here.
        unsafe { &*self.word_bounds.at(index) }
    }
}

/// Totals summed over word jobs.
#[derive(Default)]
pub(super) struct WordCounters([AtomicUsize; 6]);

impl WordCounters {
    pub(super) fn add(&self, local: &TrackedTotals) {
        let values = [
            local.drawable,
            local.visible,
            local.frustum_rejected,
            local.distance_rejected,
            local.size_rejected,
            local.non_finite,
        ];
        for (counter, value) in self.0.iter().zip(values) {
            counter.fetch_add(value, Ordering::Relaxed);
        }
    }

    pub(super) fn into_totals(self, totals: &mut TrackedTotals) {
        let [drawable, visible, frustum, distance, size, non_finite] = self.0.map(AtomicUsize::into_inner);
        totals.drawable = drawable;
        totals.visible = visible;
        totals.frustum_rejected = frustum;
        totals.distance_rejected = distance;
        totals.size_rejected = size;
        totals.non_finite = non_finite;
    }
}

/// Redoes the bounds of word `index`, some of whose slots (`refreshed`) were refreshed: a
/// slot moved for the first time since the full frame joins the moved ones, and the settled
/// union is found again without it (see [`SettledBounds`]).
///
/// # Safety
/// Word `index` belongs to the calling job: no other thread reads or writes its entries of
/// `settled` and `word_bounds` meanwhile.
pub(super) unsafe fn redo_word_bounds(shared: &WordInputs<'_>, index: usize, refreshed: u64) {
    let (bounds, drawable, forced) = (shared.bounds, shared.drawable, shared.forced);
    // SAFETY: the caller owns word `index`.
    let settled = unsafe { &mut *shared.settled.at(index) };
    if refreshed & !settled.moved != 0 {
        let moved = settled.moved | refreshed;
        *settled = SettledBounds::of(bounds, index, drawable[index] & !forced[index] & !moved, moved);
    }
    // SAFETY: as above.
    unsafe { shared.word_bounds.at(index).write(settled.word_bounds(bounds, index, drawable, forced)) };
}

/// Redoes the bounds of `group` (of [`GROUP_WORDS`] words, the last one clipped to `end`)
/// from its words' bounds.
///
/// # Safety
/// Every word of the group and the group itself belong to the calling job.
pub(super) unsafe fn redo_group_bounds(shared: &WordInputs<'_>, group: usize, end: usize) {
    let range = group * GROUP_WORDS..((group + 1) * GROUP_WORDS).min(end);
    // SAFETY: the caller owns these words; their bounds are written, and read only here.
    let words = unsafe { std::slice::from_raw_parts(shared.word_bounds.at(range.start), range.len()) };
    // SAFETY: the caller owns the group.
    unsafe { shared.group_bounds.at(group).write(group_union(words, &shared.drawable[range])) };
}
