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
///
/// Which entity owns which slice is the palette's record ([`PaletteRig`]), not the
/// [`Skin`](crate::Skin)'s: a `Skin` owns the slice it names only while the palette holds that
/// record for its entity, so a cloned `Skin` never shares its source's entries.
#[derive(Clone, Debug, Default)]
pub struct SkinPalette {
    matrices: Vec<SkinMatrix>,
    /// Freed ranges, sorted by start, never touching one another.
    free: Vec<Range<u32>>,
    /// The palette's records of who holds which slice, each at the place its `Skin` names
    /// (so checking a `Skin` against its record is one load): `None` where a freed record
    /// was, reused by the next rig. Cloning a `Skin` copies the place, never the record.
    records: Vec<Option<PaletteRig>>,
    /// Places in `records` that hold none, the last freed reused first.
    vacant: Vec<u32>,
    /// Records held (`records` less its `None`s).
    held: usize,
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

    /// The rigs holding a slice, in the order of their records (not of their slices).
    pub fn rigs(&self) -> impl Iterator<Item = &PaletteRig> + '_ {
        self.records.iter().flatten()
    }

    /// How many rigs hold a slice.
    pub fn rig_count(&self) -> usize {
        self.held
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

    /// Whether the record at `place` gives `entity` the slice of `count` entries from `first`.
    #[inline]
    pub(crate) fn records(&self, place: u32, rig: PaletteRig) -> bool {
        self.records.get(place as usize).copied().flatten() == Some(rig)
    }

    pub(crate) fn set_written(&mut self, entries: usize) {
        self.written = entries;
    }

    /// A slice of `count` entries for `entity` (filled with identities); returns its first
    /// entry and the place of its record.
    ///
    /// # Panics
    /// When the palette would pass `u32::MAX` entries.
    pub(crate) fn allocate(&mut self, entity: Entity, count: u32) -> (u32, u32) {
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
                first
            }
        };
        self.matrices[first as usize..(first + count) as usize].fill(SkinMatrix::IDENTITY);
        let record = Some(PaletteRig { entity, first, count });
        let place = match self.vacant.pop() {
            Some(place) => {
                self.records[place as usize] = record;
                place
            }
            None => {
                self.records.push(record);
                u32::try_from(self.records.len() - 1).expect("fewer rigs than palette entries")
            }
        };
        self.held += 1;
        (first, place)
    }

    /// Frees the slices of the rigs `keep` refuses (gone, or no longer owning that slice);
    /// `keep` is given each record's place and rig.
    pub(crate) fn release_where(&mut self, mut keep: impl FnMut(u32, &PaletteRig) -> bool) {
        for (place, record) in self.records.iter_mut().enumerate() {
            if let Some(rig) = record.filter(|rig| !keep(place as u32, rig)) {
                insert_free(&mut self.free, rig.first..rig.first + rig.count);
                *record = None;
                self.vacant.push(place as u32);
                self.held -= 1;
            }
        }
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
        assert_eq!(palette.allocate(one, 4).0, 0);
        assert_eq!(palette.allocate(two, 4).0, 4);
        assert_eq!(palette.allocate(three, 4).0, 8);
        palette.release_where(|_, rig| rig.entity == three);
        assert_eq!(palette.free, vec![0..8], "two neighbours freed merge into one range");
        assert_eq!(palette.allocate(two, 6).0, 0, "first fit reuses the freed range");
        assert_eq!(palette.allocate(one, 3).0, 12, "2 left free cannot hold 3: the palette grows");
        assert_eq!(palette.matrices().len(), 15);
    }

    #[test]
    fn a_slice_is_recorded_for_its_entity_and_size_until_freed() {
        let mut world = hecs::World::new();
        let [one, two] = [(); 2].map(|_| world.spawn(()));
        let mut palette = SkinPalette::new();
        let (first, place) = palette.allocate(one, 4);
        let rig = PaletteRig { entity: one, first, count: 4 };
        assert!(palette.records(place, rig));
        assert!(!palette.records(place, PaletteRig { entity: two, ..rig }), "another entity does not hold it");
        assert!(!palette.records(place, PaletteRig { count: 3, ..rig }), "nor another size");
        assert!(!palette.records(place, PaletteRig { first: 1, ..rig }), "nor another start");
        assert!(!palette.records(place + 1, rig), "a place past the end holds nothing");
        palette.release_where(|_, _| false);
        assert!(!palette.records(place, rig), "a freed slice is no one's");
        assert_eq!(palette.rig_count(), 0);
        assert_eq!(palette.allocate(two, 4), (first, place), "the slice and the record's place are reused");
        assert!(!palette.records(place, rig), "reused: the new rig's alone");
        assert_eq!(palette.rigs().copied().collect::<Vec<_>>(), [PaletteRig { entity: two, ..rig }]);
    }
}
