//! The Visibility stage's working memory: what [`visibility_system`](crate::visibility_system)
//! keeps from frame to frame to answer the next one with work proportional to what changed.
//! None of it is part of the answer (the `Visibility` resource, `answer.rs`): it lives in the
//! system and no other code sees it.

use runtime::changes::{ChangeCursor, ChangedSince};

use super::cache::ViewEpoch;
use super::segments::Segment;
use super::slots::SlotWork;
use super::tracked::TrackedState;
use crate::occlusion::stage::OcclusionPass;

/// Everything the Visibility system keeps between frames besides its answer.
#[derive(Default)]
pub(crate) struct StageState {
    /// This frame's mesh archetypes, in storage order.
    pub(crate) segments: Vec<Segment>,
    /// The slot table and the per-slot working columns (flag bytes, the tags carried).
    pub(crate) work: SlotWork,
    /// Under `VisibilityTags::Marked`: bit `i` set when object `i`'s entity carries the
    /// `VisibilityTagged` marker (rebuilt each frame from the marked entities alone).
    pub(crate) tag_marked: Vec<u64>,
    /// The drawable and caster words the answer's `scene` list was last built from: while
    /// they stay the same (most frames), the list is kept instead of built again.
    pub(crate) scene_source: (Vec<u64>, Vec<u64>),
    /// Scratch of the gather: where each run of words starts in the list being filled.
    pub(crate) gather_runs: Vec<usize>,
    /// The view epoch cached verdicts are checked against (see `cache.rs`).
    pub(crate) view_epoch: ViewEpoch,
    /// The CPU occlusion step's buffers and occluder choice.
    pub(crate) occlusion: OcclusionPass,
    /// What tracked frames keep: the change log's cursor, word states, holds, bounds.
    pub(crate) tracked: TrackedState,
    /// The change log's writes of `Lod` since the last frame (the other views' levels depend
    /// on an object's levels even when the main view's pick stays the same).
    pub(crate) lod_watch: (ChangeCursor, ChangedSince),
}

impl StageState {
    /// Forgets what described the last view (a frame without one): the tag columns and the
    /// source of the scene list, so the next frame with a view rebuilds them.
    pub(crate) fn clear_view(&mut self) {
        self.work.tagged.clear();
        self.work.occluded_tag.clear();
        self.scene_source.0.clear();
        self.scene_source.1.clear();
    }
}
