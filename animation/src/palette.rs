//! The skinning palette: one flat array of skin matrices for every rig, each rig owning a
//! slice (`skin_first`, `skin_count`) from the frame it appears until it goes away.

use std::ops::Range;

use hecs::Entity;

use crate::SkinMatrix;

/// Bytes of one palette entry (a [`SkinMatrix`]: three rows of four floats, as the GPU reads
/// it).
pub const PALETTE_ENTRY_BYTES: usize = std::mem::size_of::<SkinMatrix>();

/// Every rig's skin matrices ([`SkinMatrix`], the GPU's layout) in one array (a resource, written by the animation system): rig
/// `r`'s joint `j` is entry `skin_first(r) + j`. Slices are allocated first-fit from the
/// freed ranges, else at the end; the array grows as rigs appear, with no cap, and a freed
/// slice is reused by the next rig that fits. Growing moves the array (amortised: capacity
/// doubles), so a reader keeps indices, never references, across frames.
#[derive(Clone, Debug, Default)]
pub struct SkinPalette {
    matrices: Vec<SkinMatrix>,
    /// Freed ranges, sorted by start, never touching one another.
    free: Vec<Range<u32>>,
    /// The rigs holding a slice.
    rigs: Vec<PaletteRig>,
    /// Per entry, the rig whose slice starts there, if one does: the record a `Skin` is
    /// checked against (`records`), found without a search. Cloning a `Skin` does not copy it.
    heads: Vec<Option<SliceHead>>,
    /// Entries written by the last run of the animation system.
    written: usize,
}

/// One rig's slice of the palette.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaletteRig {
    /// The entity whose [`Skin`](crate::Skin) owns it.
    pub entity: Entity,
    /// Its first entry.
    pub first: u32,
    /// Its number of entries (the skeleton's joints).
    pub count: u32,
}

/// Who holds the slice starting at an entry: the owning entity and the slice's entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SliceHead {
    entity: Entity,
    count: u32,
}

impl SkinPalette {
    /// An empty palette.
    pub fn new() -> SkinPalette {
        SkinPalette::default()
    }

    /// Every entry (freed slices hold stale matrices), laid out as the GPU buffer is:
    /// [`SkinMatrix::as_bytes`] of it is what an upload copies.
    pub fn matrices(&self) -> &[SkinMatrix] {
        &self.matrices
    }

    /// The `count` entries from `first`.
    pub fn slice(&self, first: u32, count: u32) -> &[SkinMatrix] {
        &self.matrices[first as usize..(first + count) as usize]
    }

    /// The rigs holding a slice.
    pub fn rigs(&self) -> &[PaletteRig] {
        &self.rigs
    }

    /// Entries written by the last run of the animation system (its rigs' joints).
    pub fn entries_written(&self) -> usize {
        self.written
    }

    /// Bytes the last run wrote: [`SkinPalette::entries_written`] times
    /// [`PALETTE_ENTRY_BYTES`], what a changed-range upload of the animated rigs sends.
    pub fn bytes_written(&self) -> usize {
        self.written * PALETTE_ENTRY_BYTES
    }

    /// Whether a slice of `count` entries from `first` is held, and by `entity`.
    #[inline]
    pub(crate) fn records(&self, entity: Entity, first: u32, count: u32) -> bool {
        self.heads.get(first as usize).copied().flatten() == Some(SliceHead { entity, count })
    }

    pub(crate) fn set_written(&mut self, entries: usize) {
        self.written = entries;
    }

    /// A slice of `count` entries for `entity` (filled with identities); returns its first.
    ///
    /// # Panics
    /// When the palette would pass `u32::MAX` entries.
    pub(crate) fn allocate(&mut self, entity: Entity, count: u32) -> u32 {
        let first = match self.free.iter().position(|range| range.len() >= count as usize) {
            Some(index) => {
                let range = &mut self.free[index];
                let first = range.start;
                range.start += count;
                if range.start >= range.end {
                    self.free.remove(index);
                }
                first
            }
            None => {
                let first = u32::try_from(self.matrices.len())
                    .ok()
                    .filter(|first| first.checked_add(count).is_some())
                    .expect("the skin palette holds at most u32::MAX entries");
                self.matrices.resize(self.matrices.len() + count as usize, SkinMatrix::IDENTITY);
                self.heads.resize(self.matrices.len(), None);
                first
            }
        };
        self.matrices[first as usize..(first + count) as usize].fill(SkinMatrix::IDENTITY);
        self.rigs.push(PaletteRig { entity, first, count });
        self.heads[first as usize] = Some(SliceHead { entity, count });
        first
    }

    /// Frees the slices of the rigs `keep` refuses (gone, or no longer owning that slice).
    pub(crate) fn release_where(&mut self, mut keep: impl FnMut(&PaletteRig) -> bool) {
        let (free, heads) = (&mut self.free, &mut self.heads);
        self.rigs.retain(|rig| {
            let kept = keep(rig);
            if !kept {
                insert_free(free, rig.first..rig.first + rig.count);
                heads[rig.first as usize] = None;
            }
            kept
        });
    }

    /// The palette's entries as cells the animation jobs write disjoint slices of.
    pub(crate) fn cells(&mut self) -> PaletteCells {
        PaletteCells { start: self.matrices.as_mut_ptr(), len: self.matrices.len() }
    }
}

/// Adds `range` to the sorted free list, merged with the ranges it touches.
fn insert_free(free: &mut Vec<Range<u32>>, range: Range<u32>) {
    if range.start >= range.end {
        return;
    }
    let index = free.partition_point(|other| other.start < range.start);
    free.insert(index, range);
    if index + 1 < free.len() && free[index].end == free[index + 1].start {
        free[index].end = free[index + 1].end;
        free.remove(index + 1);
    }
    if index > 0 && free[index - 1].end == free[index].start {
        free[index - 1].end = free[index].end;
        free.remove(index);
    }
}

/// The palette's entries lent to the animation jobs, each writing the slices of its own rigs.
#[derive(Clone, Copy)]
pub(crate) struct PaletteCells {
    start: *mut SkinMatrix,
    len: usize,
}

// SAFETY: the cells are only reached through `slice_mut`, whose callers write disjoint
// slices (each rig's own), so sharing them between jobs shares no entry.
unsafe impl Send for PaletteCells {}
// SAFETY: as for `Send`.
unsafe impl Sync for PaletteCells {}

impl PaletteCells {
    /// The `count` entries from `first`.
    ///
    /// # Safety
    /// No other live reference may overlap the slice: each rig's slice is lent to the one job
    /// that poses the rig, and the palette is not touched otherwise while the cells are lent.
    #[inline]
    pub(crate) unsafe fn slice_mut<'a>(&self, first: u32, count: u32) -> &'a mut [SkinMatrix] {
        let (first, count) = (first as usize, count as usize);
        assert!(first + count <= self.len, "a rig's palette slice lies inside the palette");
        // SAFETY: in bounds (checked above); exclusive by the caller's duty.
        unsafe { std::slice::from_raw_parts_mut(self.start.add(first), count) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_slices_are_reused_and_merged() {
        let mut world = hecs::World::new();
        let [one, two, three] = [(); 3].map(|_| world.spawn(()));
        let mut palette = SkinPalette::new();
        assert_eq!(palette.allocate(one, 4), 0);
        assert_eq!(palette.allocate(two, 4), 4);
        assert_eq!(palette.allocate(three, 4), 8);
        palette.release_where(|rig| rig.entity == three);
        assert_eq!(palette.free, vec![0..8], "two neighbours freed merge into one range");
        assert_eq!(palette.allocate(two, 6), 0, "first fit reuses the freed range");
        assert_eq!(palette.allocate(one, 3), 12, "2 left free cannot hold 3: the palette grows");
        assert_eq!(palette.matrices().len(), 15);
    }

    #[test]
    fn a_slice_is_recorded_for_its_entity_and_size_until_freed() {
        let mut world = hecs::World::new();
        let [one, two] = [(); 2].map(|_| world.spawn(()));
        let mut palette = SkinPalette::new();
        let first = palette.allocate(one, 4);
        assert!(palette.records(one, first, 4));
        assert!(!palette.records(two, first, 4), "another entity does not hold it");
        assert!(!palette.records(one, first, 3) && !palette.records(one, first + 1, 3), "nor another size or start");
        assert!(!palette.records(one, 99, 4), "an entry past the end holds nothing");
        palette.release_where(|_| false);
        assert!(!palette.records(one, first, 4), "a freed slice is no one's");
        assert_eq!(palette.allocate(two, 4), first);
        assert!(palette.records(two, first, 4) && !palette.records(one, first, 4), "reused: the new rig's alone");
    }
}
