//! What waits for upload: each slot whose transform or record changed since the last upload
//! is marked ([`SlotBits`]); the upload pass lists the marked slots in slot order, stages their
//! data and clears the marks, and the scene keeps what it sent ([`UploadReport`]).

use crate::scene::{OBJECT_RECORD_BYTES, OBJECT_TRANSFORM_BYTES};

use super::GpuScene;

/// Object uploads of one graph frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UploadReport {
    /// Bytes staged for the object buffers: the changed transforms and records and the slot
    /// index of each (4 bytes).
    pub bytes: u64,
    /// Transforms uploaded ([`OBJECT_TRANSFORM_BYTES`] each).
    pub transforms: u32,
    /// Records uploaded ([`OBJECT_RECORD_BYTES`] each).
    pub records: u32,
    /// Bytes of draw commands and count copied to `draw_commands` and `draw_count` (the host
    /// draw list; zero when a GPU culling pass writes them).
    pub draw_bytes: u64,
    /// Bytes of meshes added while frames run copied to the mesh buffers (at most the
    /// frame's transfer budget, [`GpuScene::stream_frame`](crate::GpuScene::stream_frame)).
    pub mesh_bytes: u64,
    /// Bytes of material table entries added or changed while frames run (16 each; not
    /// counted against the transfer budget).
    pub material_bytes: u64,
    /// Bytes of texels of textures added while frames run copied to `material_textures`
    /// (their share of the frame's transfer budget).
    pub texture_bytes: u64,
    /// Bytes of skin palette entries copied to `skin_palette`: the joints of the rigs whose
    /// skin matrices changed, 48 bytes each (or the whole palette once after it grew).
    pub palette_bytes: u64,
}

impl UploadReport {
    /// Adds another graph frame's uploads (a game frame that executed the graph twice).
    pub fn add(&mut self, other: &UploadReport) {
        self.bytes += other.bytes;
        self.transforms += other.transforms;
        self.records += other.records;
        self.draw_bytes += other.draw_bytes;
        self.mesh_bytes += other.mesh_bytes;
        self.material_bytes += other.material_bytes;
        self.texture_bytes += other.texture_bytes;
        self.palette_bytes += other.palette_bytes;
    }
}

impl GpuScene {
    /// Number of objects whose transform or record waits for upload.
    pub fn dirty_count(&self) -> u32 {
        self.transform_dirty.count_below(self.count).max(self.record_dirty.count_below(self.count))
    }

    /// What the latest frame uploaded.
    pub fn last_upload(&self) -> UploadReport {
        self.last_upload
    }

    /// Lists the slots whose transform (`records` false) or record waits for upload, in slot
    /// order, into the scratch list ([`GpuScene::marked_slots`]); returns how many.
    pub(crate) fn list_marked(&mut self, records: bool) -> u32 {
        let bits = if records { &self.record_dirty } else { &self.transform_dirty };
        self.upload_slots.clear();
        bits.push_set_below(self.count, &mut self.upload_slots);
        self.upload_slots.len() as u32
    }

    /// The slots [`GpuScene::list_marked`] listed.
    pub(crate) fn marked_slots(&self) -> &[u32] {
        &self.upload_slots
    }

    /// Writes the listed items' data into `out`, in the order of the list.
    pub(crate) fn write_marked(&self, records: bool, out: &mut [u8]) {
        use crate::scene::as_bytes;
        if records {
            let size = OBJECT_RECORD_BYTES as usize;
            for (chunk, &slot) in out.chunks_exact_mut(size).zip(&self.upload_slots) {
                chunk.copy_from_slice(as_bytes(std::slice::from_ref(&self.records[slot as usize])));
            }
        } else {
            let size = OBJECT_TRANSFORM_BYTES as usize;
            for (chunk, &slot) in out.chunks_exact_mut(size).zip(&self.upload_slots) {
                chunk.copy_from_slice(as_bytes(std::slice::from_ref(&self.transforms[slot as usize])));
            }
        }
    }

    /// The marked items of one kind were staged: clears their marks.
    pub(crate) fn unmark(&mut self, records: bool) {
        let bits = if records { &mut self.record_dirty } else { &mut self.transform_dirty };
        bits.clear_range(0, self.count);
    }

    /// Records this frame's upload report (its draw bytes are filled in later).
    pub(crate) fn note_upload(&mut self, transforms: u32, records: u32) {
        let slots = u64::from(transforms + records) * 4;
        self.last_upload = UploadReport {
            bytes: u64::from(transforms) * OBJECT_TRANSFORM_BYTES + u64::from(records) * OBJECT_RECORD_BYTES + slots,
            transforms,
            records,
            draw_bytes: 0,
            mesh_bytes: 0,
            material_bytes: 0,
            texture_bytes: 0,
            palette_bytes: 0,
        };
    }

    /// Records the draw-list bytes of this frame in the report.
    pub(crate) fn note_draw_upload(&mut self, bytes: u64) {
        self.last_upload.draw_bytes = bytes;
    }
}

/// One bit per slot: the slots whose transform or record changed since the last upload, and
/// the slots whose record names a blended material.
pub(super) struct SlotBits {
    words: Vec<u64>,
}

impl SlotBits {
    pub(super) fn new(capacity: u32) -> SlotBits {
        SlotBits { words: vec![0; (capacity as usize).div_ceil(64)] }
    }

    /// Makes room for `capacity` bits; the new ones are clear.
    pub(super) fn grow(&mut self, capacity: u32) {
        self.words.resize((capacity as usize).div_ceil(64), 0);
    }

    #[inline]
    pub(super) fn mark(&mut self, index: u32) {
        self.words[index as usize / 64] |= 1 << (index % 64);
    }

    #[inline]
    pub(super) fn mark_range(&mut self, start: u32, end: u32) {
        (start..end).for_each(|index| self.mark(index));
    }

    /// Clears the bits of `start..end`, a word at a time where it can.
    #[inline]
    pub(super) fn clear_range(&mut self, start: u32, end: u32) {
        let mut index = start;
        while index < end {
            let word = index as usize / 64;
            let offset = index % 64;
            let span = (64 - offset).min(end - index);
            let mask = if span == 64 { u64::MAX } else { ((1u64 << span) - 1) << offset };
            self.words[word] &= !mask;
            index += span;
        }
    }

    #[inline]
    pub(super) fn is_set(&self, index: u32) -> bool {
        self.words[index as usize / 64] & (1 << (index % 64)) != 0
    }

    pub(super) fn count_below(&self, end: u32) -> u32 {
        let full = end as usize / 64;
        let tail = end % 64;
        let mut count: u32 = self.words[..full].iter().map(|word| word.count_ones()).sum();
        if tail != 0 {
            count += (self.words[full] & ((1u64 << tail) - 1)).count_ones();
        }
        count
    }

    /// Appends every set index below `end`, ascending.
    pub(super) fn push_set_below(&self, end: u32, out: &mut Vec<u32>) {
        let words = (end as usize).div_ceil(64);
        for (word_index, &word) in self.words[..words].iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let index = word_index as u32 * 64 + word.trailing_zeros();
                if index >= end {
                    return;
                }
                out.push(index);
                word &= word - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(bits: &SlotBits, end: u32) -> Vec<u32> {
        let mut out = Vec::new();
        bits.push_set_below(end, &mut out);
        out
    }

    #[test]
    fn slot_bits_list_clear_and_count_across_words() {
        let mut bits = SlotBits::new(200);
        for index in [0, 1, 63, 64, 65, 130, 199] {
            bits.mark(index);
        }
        assert_eq!(set(&bits, 200), vec![0, 1, 63, 64, 65, 130, 199]);
        assert_eq!(set(&bits, 130), vec![0, 1, 63, 64, 65], "the end is exclusive");
        assert_eq!(bits.count_below(65), 4);
        bits.clear_range(1, 130);
        assert_eq!(set(&bits, 200), vec![0, 130, 199], "a range across word boundaries is cleared");
        bits.clear_range(0, 200);
        assert!(set(&bits, 200).is_empty());
        bits.mark_range(62, 66);
        assert_eq!(set(&bits, 200), vec![62, 63, 64, 65]);
        assert_eq!(bits.count_below(200), 4);
    }

    #[test]
    fn slot_bits_grow_keeping_their_bits_with_the_new_ones_clear() {
        let mut bits = SlotBits::new(64);
        bits.mark_range(60, 64);
        bits.grow(64);
        assert_eq!(set(&bits, 64), vec![60, 61, 62, 63], "growing to the same size changes nothing");
        bits.grow(1000);
        assert_eq!(bits.words.len(), 16, "room for 1000 bits");
        assert_eq!(set(&bits, 1000), vec![60, 61, 62, 63], "the old bits stay, the new ones are clear");
        bits.mark(999);
        bits.mark_range(62, 130);
        assert_eq!(bits.count_below(1000), 71, "marks across the old end count once each");
        bits.clear_range(63, 1000);
        assert_eq!(set(&bits, 1000), vec![60, 61, 62]);
    }
}
