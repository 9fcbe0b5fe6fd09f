//! What the box test decides and with which margins, shared by its reference form
//! (`box_test.rs`) and its AVX2 batch form (`box_test_avx2.rs`).

/// Most texels per axis the footprint may span on the level chosen for it.
pub const FOOTPRINT_TEXELS: usize = 4;
/// Footprint widening in buffer pixels, for the `f32` rounding of the projection.
pub(crate) const FOOTPRINT_MARGIN: f32 = 1.0e-2;
/// Relative raise of the nearest depth, for the same rounding.
pub(crate) const DEPTH_MARGIN: f32 = 4.0e-6;

/// What a batch read settled for up to sixteen lanes: bit `lane` of [`BatchVerdicts::occluded`]
/// when the lane is proven occluded; of [`BatchVerdicts::visible`] when it is proven visible
/// (its ceiling, see `pyramid.rs`); of [`BatchVerdicts::coarse_failed`] when it is neither,
/// but its 2x2 read was the reference's first read, so the judge starts at the finer level
/// (`TestTarget::judge_after_coarse`). Packed in one word, sixteen bits each: occluded
/// lanes, coarse-failed lanes, visible lanes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BatchVerdicts(u64);

impl BatchVerdicts {
    /// The verdicts for lanes `0..16` from the occluded and coarse-failed lane masks.
    #[inline]
    pub fn new(occluded: u32, coarse_failed: u32) -> BatchVerdicts {
        BatchVerdicts::with_visible(occluded, coarse_failed, 0)
    }

    /// The verdicts for lanes `0..16` from the three lane masks (disjoint).
    #[inline]
    pub fn with_visible(occluded: u32, coarse_failed: u32, visible: u32) -> BatchVerdicts {
        debug_assert!(occluded >> 16 == 0 && coarse_failed >> 16 == 0 && visible >> 16 == 0, "sixteen lanes at most");
        debug_assert!(occluded & visible == 0 && coarse_failed & visible == 0, "a lane has one verdict");
        BatchVerdicts(u64::from(occluded) | u64::from(coarse_failed) << 16 | u64::from(visible) << 32)
    }

    /// Lanes proven occluded.
    #[inline]
    pub fn occluded(self) -> u32 {
        (self.0 & 0xffff) as u32
    }

    /// Lanes not proven whose 2x2 read failed exactly as the reference's first read would.
    #[inline]
    pub fn coarse_failed(self) -> u32 {
        (self.0 >> 16 & 0xffff) as u32
    }

    /// Lanes proven visible: the reference judges them visible.
    #[inline]
    pub fn visible(self) -> u32 {
        (self.0 >> 32 & 0xffff) as u32
    }

    /// Lanes proven either way: the judge has nothing to add for them.
    #[inline]
    pub fn settled(self) -> u32 {
        self.occluded() | self.visible()
    }

    /// Lanes `0..8` moved to `8..16`: the second batch of eight of a group of sixteen.
    #[inline]
    pub(crate) fn upper(self) -> BatchVerdicts {
        debug_assert!((self.occluded() | self.coarse_failed() | self.visible()) >> 8 == 0, "eight lanes");
        BatchVerdicts(self.0 << 8)
    }
}

impl std::ops::BitOr for BatchVerdicts {
    type Output = BatchVerdicts;
    #[inline]
    fn bitor(self, other: BatchVerdicts) -> BatchVerdicts {
        BatchVerdicts(self.0 | other.0)
    }
}
