//! Which drawable objects draw a mesh with a registered occluder in a material that is not
//! see-through, kept per slot word, so that
//! the occlusion step picks its occluders without visiting every visible object: found again
//! for every word after a full frame or a change of the registry, else only for the words
//! where a refresh or a level of detail changed a draw.

use std::sync::atomic::AtomicU64;

use super::words::{WordState, WORD_GRAIN};
use crate::bits::BITS_PER_WORD;
use crate::occlusion::OccluderMeshes;
use crate::visibility::answer::Visibility;

/// The occluder bits, and how they are kept up to date.
#[derive(Default)]
pub(super) struct OccluderBits {
    /// Per slot word: drawable objects whose drawn mesh has a registered occluder.
    pub(super) bits: Vec<u64>,
    /// The `OccluderMeshes::generation` `bits` were found with.
    generation: Option<u64>,
    /// A bit per slot word whose [`WordState::draws_changed`] is set, found by the word jobs
    /// of this frame, so that [`OccluderBits::update`] visits only those words instead of
    /// reading every word's state again on one thread.
    pub(super) draws_changed_words: Vec<AtomicU64>,
}

impl OccluderBits {
    /// Clears the marks of changed draws, sized for `words` slot words (before the word jobs
    /// mark them).
    pub(super) fn begin_frame(&mut self, words: usize) {
        self.draws_changed_words.resize_with(words.div_ceil(BITS_PER_WORD), AtomicU64::default);
        self.draws_changed_words.iter_mut().for_each(|bits| *bits.get_mut() = 0);
    }

    /// Finds the bits of every word when `full_frame` or the registry changed, else of the
    /// words this frame's jobs marked (clearing their `draws_changed`).
    pub(super) fn update(
        &mut self,
        words: &mut [WordState],
        visibility: &Visibility,
        meshes: &OccluderMeshes,
        full_frame: bool,
    ) {
        runtime::profile_zone!("visibility occluder bits");
        let (drawable, draws) = (&visibility.drawable[..], &visibility.objects.draws[..]);
        let bits_of = |word: usize| {
            let mut members = drawable[word];
            let mut bits = 0u64;
            // Neighbouring slots mostly draw the same mesh: one registry lookup per run.
            let mut last: Option<((ecs::MeshHandle, ecs::MaterialHandle), bool)> = None;
            while members != 0 {
                let offset = members.trailing_zeros() as usize;
                members &= members - 1;
                let draw = draws[word * BITS_PER_WORD + offset];
                let key = (draw.mesh, draw.material);
                let occludes = match last {
                    Some((seen, occludes)) if seen == key => occludes,
                    _ => meshes.occludes(draw.mesh, draw.material),
                };
                last = Some((key, occludes));
                bits |= u64::from(occludes) << offset;
            }
            bits
        };
        let count = words.len();
        if full_frame || self.generation != Some(meshes.generation()) || self.bits.len() != count {
            self.bits.resize(count, 0);
            let _job_label = runtime::profiling::job_label("visibility occluder bits job");
            runtime::jobs::parallel_for_chunks(&mut self.bits, WORD_GRAIN, |first, chunk| {
                for (offset, bits) in chunk.iter_mut().enumerate() {
                    *bits = bits_of(first + offset);
                }
            });
            self.generation = Some(meshes.generation());
        } else {
            // Refreshed slots with a new draw, and levels of detail that changed one, mark
            // their word (`SlotFlag::DrawChanged`, `pick_levels`); this frame's word jobs
            // listed the marked words (`draws_changed_words`, a tracked frame's).
            for (index, marked) in self.draws_changed_words.iter_mut().enumerate() {
                let mut marked = std::mem::take(marked.get_mut());
                while marked != 0 {
                    let word = index * BITS_PER_WORD + marked.trailing_zeros() as usize;
                    marked &= marked - 1;
                    words[word].draws_changed = false;
                    self.bits[word] = bits_of(word);
                }
            }
        }
    }

    /// The bits were not kept up to date this frame (occlusion off or no registry): the next
    /// [`OccluderBits::update`] finds them all again.
    pub(super) fn forget(&mut self) {
        self.generation = None;
    }
}
