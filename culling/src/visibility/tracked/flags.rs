//! Writing a tracked frame's refreshed slots into the word columns: each slot's flag byte
//! (`cull::SlotFlag`) becomes bits of the drawable, caster, tag, non-finite and
//! levels-of-detail words, a word at a time, and the word is marked for the word pass.

use super::words::WordState;
use crate::bits::BITS_PER_WORD;
use crate::visibility::cull::SlotFlag;
use crate::visibility::holds::LodHold;

/// Words with more refreshed slots than this have their flags turned into bit columns at
/// once ([`flag_columns`]); fewer are added slot by slot.
pub(super) const DENSE_REFRESH: u32 = 8;

/// Refreshed slots of one word whose flag bits are still to be written (see
/// [`FlagWriter::add`]).
struct FlagRun {
    word: usize,
    /// The slots of the run.
    refreshed: u64,
    /// Per column of [`FlagRun::KINDS`]: the run's slots that have the flag.
    ones: [u64; 6],
    /// The run's slots whose verdict the refresh found, and the visible ones of those.
    decided: u64,
    visible: u64,
    /// A slot of the run got a new draw: the word's occluder bits are found again.
    draws_changed: bool,
}

impl FlagRun {
    /// An empty run.
    const NONE: FlagRun =
        FlagRun { word: usize::MAX, refreshed: 0, ones: [0; 6], decided: 0, visible: 0, draws_changed: false };

    /// The flags of the word columns a refresh writes, in [`FlagColumns`] order.
    const KINDS: [SlotFlag; 6] = [
        SlotFlag::Drawable,
        SlotFlag::Caster,
        SlotFlag::CulledTag,
        SlotFlag::OccludedTag,
        SlotFlag::NonFinite,
        SlotFlag::HasLod,
    ];
}

/// The word columns a refresh writes, in [`FlagRun::KINDS`] order: drawable, caster, the
/// two tags carried, non-finite, with levels of detail.
pub(super) type FlagColumns<'a> = [&'a mut [u64]; 6];

/// Writes refreshed slots' flags into the word columns, a run of one word at a time: an
/// archetype's rows mostly hold slots of a few words in turn, so the columns are written
/// once per word instead of once per slot.
pub(super) struct FlagWriter<'a> {
    run: FlagRun,
    columns: FlagColumns<'a>,
    words: &'a mut [WordState],
    lod_holds: &'a mut [LodHold],
}

impl<'a> FlagWriter<'a> {
    /// A writer into `columns`, marking `words` and voiding `lod_holds` of refreshed slots.
    pub(super) fn new(columns: FlagColumns<'a>, words: &'a mut [WordState], lod_holds: &'a mut [LodHold]) -> Self {
        FlagWriter { run: FlagRun::NONE, columns, words, lod_holds }
    }

    /// Adds a refreshed slot's flag bits, writing the current run out first when the slot
    /// lies in another word. `decided`: the flag's visible bit holds the slot's verdict under
    /// this frame's view (`run_range`).
    pub(super) fn add(&mut self, slot: usize, flag: u8, decided: bool) {
        let (word, offset) = (slot / BITS_PER_WORD, slot % BITS_PER_WORD);
        let bit = 1u64 << offset;
        self.enter_run(word);
        let run = &mut self.run;
        run.refreshed |= bit;
        run.draws_changed |= flag >> SlotFlag::DrawChanged as u8 & 1 == 1;
        if decided {
            run.decided |= bit;
            run.visible |= u64::from(flag >> SlotFlag::Visible as u8 & 1) << offset;
        }
        for (ones, kind) in run.ones.iter_mut().zip(FlagRun::KINDS) {
            *ones |= u64::from(flag >> kind as u8 & 1) << offset;
        }
        self.void_level_holds(word, u64::from(flag >> SlotFlag::HasLod as u8 & 1) << offset);
    }

    /// [`FlagWriter::add`] for the refreshed slots `bits` of `word` at once, their verdicts
    /// found by the refresh (`flags`: the word's flag bytes): the bytes are turned into bit
    /// columns eight at a time ([`flag_columns`]) rather than bit by bit.
    pub(super) fn add_word(&mut self, word: usize, bits: u64, flags: &[u8]) {
        self.enter_run(word);
        let columns = flag_columns(flags);
        let run = &mut self.run;
        run.refreshed |= bits;
        run.decided |= bits;
        run.visible |= columns[SlotFlag::Visible as usize] & bits;
        run.draws_changed |= columns[SlotFlag::DrawChanged as usize] & bits != 0;
        for (ones, kind) in run.ones.iter_mut().zip(FlagRun::KINDS) {
            *ones |= columns[kind as usize] & bits;
        }
        self.void_level_holds(word, columns[SlotFlag::HasLod as usize] & bits);
    }

    /// Writes a slot refreshed through its entity at once (its verdict is left to the word
    /// pass).
    pub(super) fn set(&mut self, slot: usize, flag: u8) {
        self.add(slot, flag, false);
        self.flush();
    }

    /// Makes the current run the run of `word`, writing out the run of another word first.
    #[inline]
    fn enter_run(&mut self, word: usize) {
        if word != self.run.word {
            self.flush();
            self.run = FlagRun { word, ..FlagRun::NONE };
        }
    }

    /// A refreshed slot's new centre voids its level's hold: the slots of `with_lod` (bits of
    /// `word`). Only objects with levels ever read theirs (one that gains levels is refreshed
    /// again then, and voided).
    #[inline]
    fn void_level_holds(&mut self, word: usize, mut with_lod: u64) {
        while with_lod != 0 {
            if let Some(hold) = self.lod_holds.get_mut(word * BITS_PER_WORD + with_lod.trailing_zeros() as usize) {
                *hold = LodHold::NONE;
            }
            with_lod &= with_lod - 1;
        }
    }

    /// Writes the current run's bits into its word's columns and marks the word dirty.
    pub(super) fn flush(&mut self) {
        let run = std::mem::replace(&mut self.run, FlagRun::NONE);
        if run.refreshed == 0 {
            return;
        }
        let word = run.word;
        for (column, ones) in self.columns.iter_mut().zip(run.ones) {
            column[word] = (column[word] & !run.refreshed) | ones;
        }
        let state = &mut self.words[word];
        state.dirty = true;
        state.draws_changed |= run.draws_changed;
        state.refreshed |= run.refreshed;
        // A slot refreshed again (through its entity) is decided by the word pass.
        state.decided = (state.decided & !run.refreshed) | run.decided;
        state.decided_visible = (state.decided_visible & !run.refreshed) | run.visible;
    }
}

/// The eight bit columns of up to 64 flag bytes: bit `j` of column `k` is bit `k` of
/// `flags[j]`. Eight bytes at a time: masking bit `k` of each byte and multiplying by
/// `0x0102_0408_1020_4080` gathers those eight bits, without carries, into the top byte.
pub(super) fn flag_columns(flags: &[u8]) -> [u64; 8] {
    let mut columns = [0u64; 8];
    for (chunk_index, chunk) in flags.chunks(8).enumerate() {
        let mut bytes = [0u8; 8];
        bytes[..chunk.len()].copy_from_slice(chunk);
        let lanes = u64::from_le_bytes(bytes);
        for (kind, column) in columns.iter_mut().enumerate() {
            let gathered = ((lanes >> kind) & 0x0101_0101_0101_0101).wrapping_mul(0x0102_0408_1020_4080) >> 56;
            *column |= gathered << (8 * chunk_index);
        }
    }
    columns
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn flag_columns_are_the_bits_of_each_byte(flags in proptest::collection::vec(any::<u8>(), 0..=64)) {
            let columns = flag_columns(&flags);
            for (kind, column) in columns.iter().enumerate() {
                let expected = flags.iter().enumerate().fold(0u64, |column, (index, &flag)| column | u64::from(flag >> kind & 1) << index);
                prop_assert_eq!(*column, expected, "column {}", kind);
            }
        }
    }
}
