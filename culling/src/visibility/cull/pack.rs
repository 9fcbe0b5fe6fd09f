//! Packing the pass's flag bytes into the slot-ordered word columns, in parallel by word
//! ranges: no locks, no atomics.

use crate::bits::BITS_PER_WORD;

/// Words per job of [`pack_slot_flags`]: packing is a few nanoseconds per slot, so jobs are
/// large (about 16k slots) and a 100k-object frame hands out only a handful.
const PACK_GRAIN_WORDS: usize = 256;

/// Number of word columns [`pack_slot_flags`] writes (one per [`SlotFlag`](super::SlotFlag) but
/// `DrawChanged`, which only tracked frames read).
pub(crate) const WORD_KINDS: usize = 7;

/// Packs the per-slot flag bytes into slot-ordered words: bit `s` of `to[k]` is bit `k` of
/// `flags[s]` (see [`SlotFlag`](super::SlotFlag)). Every word of `to` is overwritten. Jobs take disjoint
/// ranges of words, each writing only its own words and reading its own bytes in order.
pub(crate) fn pack_slot_flags(flags: &[u8], to: [&mut [u64]; WORD_KINDS]) {
    runtime::profile_zone!("visibility slot bits");
    let _job_label = runtime::profiling::job_label("visibility slot bits job");
    let words = flags.len().div_ceil(BITS_PER_WORD);
    assert!(to.iter().all(|column| column.len() >= words), "slot words sized to the slot count");
    let targets = WordWriters(to.map(|column| column.as_mut_ptr()));
    runtime::jobs::parallel_for_ranges(0..words, PACK_GRAIN_WORDS, |range| {
        let targets = &targets;
        for word_index in range {
            let chunk_end = ((word_index + 1) * BITS_PER_WORD).min(flags.len());
            let mut packed = [0u64; WORD_KINDS];
            for (offset, &flag) in flags[word_index * BITS_PER_WORD..chunk_end].iter().enumerate() {
                for (kind, word) in packed.iter_mut().enumerate() {
                    *word |= u64::from(flag >> kind & 1) << offset;
                }
            }
            for (target, word) in targets.0.iter().zip(packed) {
                // SAFETY: `word_index` lies in this job's range (no other job writes it) and
                // below the length of every target column (asserted above).
                unsafe { target.add(word_index).write(word) };
            }
        }
    });
}

/// The slot-ordered word columns [`pack_slot_flags`] writes, shared by its jobs.
struct WordWriters([*mut u64; WORD_KINDS]);

// SAFETY: jobs write through the pointers only at the words of their own disjoint ranges,
// and the columns outlive the parallel call.
unsafe impl Sync for WordWriters {}
