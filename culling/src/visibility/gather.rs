//! The gather: the answer's index lists from its bit columns, `visible` in slot order every
//! frame, and `scene` (casters first) when the drawable objects or the casters changed.
//!
//! A list is filled in two steps: the set bits of each run of [`FILL_WORDS`] words are
//! counted (one pass over the words), which places every run's indices in the list, then the
//! runs are written on the job system, each into its own part. A high camera over a million
//! objects sees 300k of them, and a game spawning every frame rebuilds `scene` every frame:
//! lists that long are written by every thread at once.

use crate::bits::{VisibilityBits, BITS_PER_WORD};
use crate::parallel::SharedMut;

/// Slot words per job of a list fill (64k slots).
const FILL_WORDS: usize = 1024;

/// The lists of the [`Visibility`](super::Visibility) resource the gather writes, with the
/// stage's record of what `scene` was built from.
pub(super) struct GatherLists<'a> {
    pub(super) visible: &'a mut Vec<u32>,
    pub(super) scene: &'a mut Vec<u32>,
    pub(super) caster_count: &'a mut usize,
    /// The `drawable` and `casters` columns `scene` was built from.
    pub(super) scene_source: &'a mut (Vec<u64>, Vec<u64>),
    /// Scratch: where each run of words starts in the list being filled.
    pub(super) run_starts: &'a mut Vec<usize>,
}

/// The gather: `visible` in slot order, then `scene` with the casters first (rebuilt only
/// when the drawable objects or the casters changed).
pub(super) fn gather(bits: &VisibilityBits, drawable: &[u64], casters: &[u64], lists: GatherLists<'_>) {
    runtime::profile_zone!("visibility gather");
    let GatherLists { visible, scene, caster_count, scene_source, run_starts } = lists;
    let words = bits.words();
    visible.clear();
    append_set_bits(visible, words.len(), |index| words[index], run_starts);
    if scene_source.0 == drawable && scene_source.1 == casters {
        return;
    }
    scene_source.0.clear();
    scene_source.0.extend_from_slice(drawable);
    scene_source.1.clear();
    scene_source.1.extend_from_slice(casters);
    scene.clear();
    let count = drawable.len().min(casters.len());
    append_set_bits(scene, count, |index| drawable[index] & casters[index], run_starts);
    *caster_count = scene.len();
    append_set_bits(scene, count, |index| drawable[index] & !casters[index], run_starts);
}

/// Appends to `out` the index of every set bit of `word(0)`, ..., `word(words - 1)` (word
/// `w` covering objects `64 w ..`), in order: runs of [`FILL_WORDS`] words are counted, then
/// written in parallel. `run_starts` is scratch.
fn append_set_bits(out: &mut Vec<u32>, words: usize, word: impl Fn(usize) -> u64 + Sync, run_starts: &mut Vec<usize>) {
    let runs = words.div_ceil(FILL_WORDS);
    run_starts.clear();
    let mut total = 0;
    for run in 0..runs {
        run_starts.push(total);
        let range = run * FILL_WORDS..((run + 1) * FILL_WORDS).min(words);
        total += range.map(|index| word(index).count_ones() as usize).sum::<usize>();
    }
    out.reserve(total);
    // The list being filled, shared by the fill jobs, each writing only its run's entries.
    let target = SharedMut(out.spare_capacity_mut().as_mut_ptr());
    let fill = |run: usize| {
        let mut at = run_starts[run];
        for index in run * FILL_WORDS..((run + 1) * FILL_WORDS).min(words) {
            let mut bits = word(index);
            let base = (index * BITS_PER_WORD) as u32;
            while bits != 0 {
                // SAFETY: entry `at` lies in this run's part of the reserved capacity (the
                // counts placed it), which no other run writes.
                unsafe { (*target.at(at)).write(base + bits.trailing_zeros()) };
                bits &= bits - 1;
                at += 1;
            }
        }
    };
    if runs > 1 {
        let _job_label = runtime::profiling::job_label("visibility gather job");
        runtime::jobs::parallel_for_ranges(0..runs, 1, |range| range.for_each(fill));
    } else {
        (0..runs).for_each(fill);
    }
    // SAFETY: the `total` entries past the length were reserved and every one was written
    // above (each run wrote as many entries as it counted).
    unsafe { out.set_len(out.len() + total) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn appended_indices_are_the_set_bits_in_order(
            words in proptest::collection::vec(any::<u64>().prop_map(|bits| bits & bits.rotate_left(7)), 0..3000),
            prefix in proptest::collection::vec(any::<u32>(), 0..4),
        ) {
            let mut out = prefix.clone();
            let mut run_starts = Vec::new();
            append_set_bits(&mut out, words.len(), |index| words[index], &mut run_starts);
            let expected: Vec<u32> = prefix
                .iter()
                .copied()
                .chain((0..words.len() * 64).filter(|&bit| words[bit / 64] >> (bit % 64) & 1 == 1).map(|bit| bit as u32))
                .collect();
            prop_assert_eq!(out, expected);
        }
    }
}
