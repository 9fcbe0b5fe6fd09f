//! The occlusion step of the Visibility stage and its `Occluded` tag changes.
//!
//! After the frustum, distance and screen-size culls, when
//! [`RenderSettings::occlusion_culling`](ecs::RenderSettings) is on and an
//! [`OccluderMeshes`] resource exists, [`OcclusionPass::run`]:
//!
//! 1. lists the survivors whose mesh has a registered occluder as candidates and lets the
//!    [`OccluderSelector`] choose (projected size, nearest first, triangle budget: the
//!    `occluder_*` fields of [`RenderSettings`]);
//! 2. rasterizes them into a buffer of `RenderSettings::occlusion_buffer` pixels in the view's
//!    aspect ([`fit_buffer`]) and builds the pyramid ([`OcclusionCuller::rasterize`]);
//! 3. tests every survivor ([`OcclusionCuller::cull_bits_aabbs`]), clearing the visible bit
//!    of the occluded ones, recording them in the result's occluded words and counting them
//!    in [`VisibilityStats::occluded`](crate::VisibilityStats).
//!
//! An occluder cannot hide its own object: its mesh lies inside the object's box, so the
//! box's nearest corner is at least as near as any depth the occluder writes, and the test
//! needs strictly nearer occluders.
//!
//! The cull pass records which objects carry [`Occluded`](ecs::Occluded) now, so the tag changes
//! (see `visibility/tags.rs`) insert it on entities that became occluded and remove it from
//! those that no longer are (any reason: visible again, culled, not drawable, occlusion
//! turned off), only on transitions, so a still camera makes no structural change. An
//! occluded object is not `Culled`: that tag keeps meaning "outside the view".

use std::sync::Arc;

use ecs::{Aabb, RenderSettings};

use super::{fit_buffer, OccluderInstance, OccluderMeshes, OccluderSelector, OcclusionCuller, OcclusionVerdict};
use crate::visibility::{Visibility, GROUP_WORDS};

/// The occlusion state of the Visibility system, kept between frames (no allocation in
/// steady state).
#[derive(Debug, Default)]
pub(crate) struct OcclusionPass {
    /// Shared with the answer after a raster ([`Visibility::explain`] reads what the test
    /// read); taken back at the start of the next run, so it is written in place.
    culler: Arc<OcclusionCuller>,
    selector: OccluderSelector,
    /// The slots of this frame's candidate occluders (visible, with an occluder mesh).
    candidates: Vec<u32>,
    chosen: Vec<OccluderInstance>,
    before: Vec<u64>,
}

impl OcclusionPass {
    /// Makes the depth buffer `[width, height]`; keeps the current one when the size is
    /// unchanged, and the default when the size is unusable.
    fn resize(&mut self, [width, height]: [usize; 2]) {
        if (width, height) == (self.culler.width(), self.culler.height()) {
            return;
        }
        if let Ok(culler) = OcclusionCuller::new(width, height) {
            self.culler = Arc::new(culler);
        } else if (self.culler.width(), self.culler.height()) != (super::DEFAULT_WIDTH, super::DEFAULT_HEIGHT) {
            self.culler = Arc::default();
        }
    }

    /// Occludes survivors of `visibility` (see the module docs) with the buffer size and
    /// occluder selection of `settings` for a view of `viewport` pixels. With `enabled`
    /// false, no `meshes` or no view, it only clears the occluded words.
    pub(crate) fn run(
        &mut self,
        visibility: &mut Visibility,
        meshes: Option<&OccluderMeshes>,
        groups: WordGroups<'_>,
        enabled: bool,
        settings: &RenderSettings,
        viewport: [u32; 2],
    ) {
        runtime::profile_zone!("visibility occlusion");
        // The answer's share of the last raster goes first, so the raster below writes in
        // place (a clone of the answer still holding it costs one copy).
        visibility.occlusion_culler = None;
        self.resize(fit_buffer(settings.occlusion_buffer, viewport, settings.occlusion_buffer_follows_viewport));
        self.selector.min_screen_size = settings.occluder_min_screen_size;
        self.selector.triangle_budget = settings.occluder_triangle_budget as usize;
        let words = visibility.bits.words().len();
        visibility.occluded.clear();
        visibility.occluded.resize(words, 0);
        let (Some(meshes), true, Some(view)) = (meshes, enabled, visibility.view) else {
            return;
        };
        self.candidates.clear();
        let mut push = |index: usize| self.candidates.push(index as u32);
        if groups.occluders.len() == visibility.bits.words().len() {
            // Only the visible objects of occluder meshes, found word by word.
            for (word_index, (&visible, &occluders)) in visibility.bits.words().iter().zip(groups.occluders).enumerate()
            {
                let mut members = visible & occluders;
                while members != 0 {
                    push(word_index * 64 + members.trailing_zeros() as usize);
                    members &= members - 1;
                }
            }
        } else {
            visibility.bits.iter_visible().for_each(push);
        }
        let view_projection = view.projection * view.view;
        let objects = &visibility.objects;
        let slot = |index: usize| self.candidates[index] as usize;
        self.selector.select_by(
            view_projection,
            self.candidates.len(),
            |index| (objects.bounds[slot(index)], objects.draws[slot(index)].mesh),
            |index| OccluderInstance { mesh: objects.draws[slot(index)].mesh, world: objects.models[slot(index)] },
            meshes,
            &mut self.chosen,
        );
        if self.chosen.is_empty() {
            return;
        }
        Arc::make_mut(&mut self.culler).rasterize(view_projection, meshes, &self.chosen);
        self.before.clear();
        self.before.extend_from_slice(visibility.bits.words());
        self.cull_words(groups, visibility.bits.words_mut());
        self.culler.cull_bits_aabbs(&visibility.objects.bounds, visibility.bits.words_mut());
        let mut occluded_count = 0;
        for ((occluded, before), after) in visibility.occluded.iter_mut().zip(&self.before).zip(visibility.bits.words())
        {
            *occluded = before & !after;
            occluded_count += occluded.count_ones() as usize;
        }
        visibility.stats.occluded = occluded_count;
        visibility.stats.visible -= occluded_count;
        visibility.occlusion_culler = Some(Arc::clone(&self.culler));
    }
}

impl OcclusionPass {
    /// The hierarchical step: a word (64 slots) whose bounds (the union of its objects' boxes,
    /// `word_bounds`) are hidden hides every object in it, with one test instead of 64. The
    /// test is conservative for any box, and each object lies inside its word's bounds, so
    /// no visible object is hidden; the per-object test then runs only on the words left.
    /// Words past `word_bounds` (none in a frame without them) go to the per-object test.
    fn cull_words(&self, groups: WordGroups<'_>, words: &mut [u64]) {
        runtime::profile_zone!("occlusion words");
        if groups.bounds.len() != words.len() || groups.groups.len() != words.len().div_ceil(GROUP_WORDS) {
            return;
        }
        let target = self.culler.target();
        let hidden = |bounds: &Aabb| target.test(bounds.center(), bounds.half_extent()) == OcclusionVerdict::Occluded;
        // Jobs take whole groups (the grain is a multiple of the group size).
        let _job_label = runtime::profiling::job_label("occlusion words job");
        runtime::jobs::parallel_for_chunks(words, WORD_TEST_GRAIN, |first, chunk| {
            for (group_offset, group_words) in chunk.chunks_mut(GROUP_WORDS).enumerate() {
                let first_word = first + group_offset * GROUP_WORDS;
                if group_words.iter().all(|&word| word == 0) {
                    continue;
                }
                if hidden(&groups.groups[first_word / GROUP_WORDS]) {
                    group_words.fill(0);
                    continue;
                }
                // The words eight at a time: one batch projection and read for eight bounds.
                for (batch, batch_words) in group_words.chunks_mut(8).enumerate() {
                    let first = first_word + batch * 8;
                    let mask = batch_words
                        .iter()
                        .enumerate()
                        .fold(0u64, |mask, (lane, &word)| mask | u64::from(word != 0) << lane);
                    if mask == 0 {
                        continue;
                    }
                    let mut occluded = target.occluded_lanes(mask, &|lane| {
                        let bounds = &groups.bounds[first + lane];
                        (bounds.center(), bounds.half_extent())
                    });
                    while occluded != 0 {
                        batch_words[occluded.trailing_zeros() as usize] = 0;
                        occluded &= occluded - 1;
                    }
                }
            }
        });
    }
}

/// What the Visibility stage keeps per word of 64 slots, for the occlusion step; either
/// slice may be empty (a frame without them), and then the step visits objects one by one.
#[derive(Clone, Copy, Default)]
pub(crate) struct WordGroups<'a> {
    /// Per word: the drawable objects whose drawn mesh has a registered occluder.
    pub occluders: &'a [u64],
    /// Per word: the union of its objects' boxes (unbounded when one is not finite).
    pub bounds: &'a [Aabb],
    /// Per group of `GROUP_WORDS` words: the union of their bounds.
    pub groups: &'a [Aabb],
}

/// Words per job of the word-level occlusion test.
const WORD_TEST_GRAIN: usize = 8 * GROUP_WORDS;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_follows_the_settings_and_bad_sizes_fall_back_to_the_default() {
        let mut pass = OcclusionPass::default();
        pass.resize([512, 256]);
        assert_eq!((pass.culler.width(), pass.culler.height()), (512, 256));
        pass.resize(fit_buffer([100, 50], [1920, 1080], false));
        assert_eq!((pass.culler.width(), pass.culler.height()), (104, 50), "width rounds up to a multiple of 8");
        pass.resize(fit_buffer([256, 128], [1920, 1080], true));
        assert_eq!((pass.culler.width(), pass.culler.height()), (240, 135), "the view's aspect by default");
        pass.resize([0, 0]);
        assert_eq!(
            (pass.culler.width(), pass.culler.height()),
            (super::super::DEFAULT_WIDTH, super::super::DEFAULT_HEIGHT),
            "an unusable size falls back to the default"
        );
    }
}
