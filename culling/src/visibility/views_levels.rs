//! The other views' lists: each view's visible slots, and the level of detail each draws in
//! that view (picked by the same rule as the main view's, `level.rs`, from that view's eye,
//! projection and viewport height).
//!
//! Only slots whose mesh has levels (the stage's `with_lod` bits) look their [`Lod`] up; the
//! rest draw the main view's mesh, which is the mesh itself. A chain chosen by its errors
//! takes its hysteresis state from the level the main view drew last: the views keep no
//! per-slot history of their own, so a view crossing a level's band may switch a frame
//! early or late, never to a level the rule would not give.

use ecs::{Lod, LodErrors, RenderSettings};

use super::level::LevelRule;
use super::objects::ObjectColumns;
use super::reads::read_unborrowed;
use super::reads::CullColumns;
use super::views::{OtherView, OtherViews};
use crate::bits::BITS_PER_WORD;
use crate::lod::lod_scale;
use crate::lod_error::LodErrorView;

impl OtherViews {
    /// Fills every view's `visible` list and the mesh each of its visible objects draws, one
    /// job per view.
    pub(crate) fn gather(
        &mut self,
        world: &CullColumns<'_>,
        objects: &ObjectColumns,
        with_lod: &[u64],
        errors: Option<&LodErrors>,
        settings: &RenderSettings,
    ) {
        let count = self.count;
        let inputs = GatherInputs { count, words: &self.words, world, objects, with_lod, errors, settings };
        runtime::jobs::parallel_for_chunks(&mut self.views[..count], 1, |index, views| {
            gather_view(&inputs, index, &mut views[0]);
        });
    }
}

/// What every view's lists are filled from.
struct GatherInputs<'a, 'w> {
    /// Number of other views.
    count: usize,
    /// Every view's visible bits, side by side per block of 64 slots.
    words: &'a [u64],
    world: &'a CullColumns<'w>,
    objects: &'a ObjectColumns,
    /// Slots whose mesh has levels.
    with_lod: &'a [u64],
    errors: Option<&'a LodErrors>,
    settings: &'a RenderSettings,
}

/// Fills other view number `index`'s lists.
fn gather_view(inputs: &GatherInputs<'_, '_>, index: usize, view: &mut OtherView) {
    let GatherInputs { count, words, world, objects, with_lod, errors, settings } = *inputs;
    view.visible.clear();
    view.draws.clear();
    let projection = &view.view.projection;
    let (error_pixels, error_band) = (settings.effective_lod_error_pixels(), settings.effective_lod_error_band());
    let rule = LevelRule {
        errors,
        error_view: LodErrorView::new(projection, view.view.viewport.height as f32, error_pixels, error_band),
        lod_scale: lod_scale(projection),
        lod_bias: settings.effective_lod_bias(),
    };
    for (word_index, block) in words.chunks_exact(count).enumerate() {
        let mut word = block[index];
        let levelled = with_lod.get(word_index).copied().unwrap_or(0);
        while word != 0 {
            let lane = word.trailing_zeros() as usize;
            word &= word - 1;
            let slot = word_index * BITS_PER_WORD + lane;
            let own = objects.draws[slot].mesh;
            let mesh = if levelled >> lane & 1 == 1 {
                // SAFETY: the Visibility system declares a read of `Lod` and writes none, so
                // nothing writes it while the stage runs.
                let lods = unsafe { read_unborrowed::<Lod>(world, objects.entities[slot]) };
                let local = objects.local_bounds(slot);
                lods.and_then(|lods| rule.pick(&view.context, lods, &objects.models[slot], &local, own)).unwrap_or(own)
            } else {
                own
            };
            view.visible.push(slot as u32);
            view.draws.push(mesh);
        }
    }
}
