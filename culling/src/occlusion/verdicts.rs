//! What the box test decides and with which margins, shared by its reference form
//! (`box_test.rs`) and its AVX2 batch form (`box_test_avx2.rs`).

/// Most texels per axis the footprint may span on the level chosen for it.
pub const FOOTPRINT_TEXELS: usize = 4;
/// Footprint widening in buffer pixels, for the `f32` rounding of the projection.
pub(crate) const FOOTPRINT_MARGIN: f32 = 1.0e-2;
/// Relative raise of the nearest depth, for the same rounding.
pub(crate) const DEPTH_MARGIN: f32 = 4.0e-6;

/// What a batch read settled for up to sixteen lanes: bit `lane` of [`BatchVerdicts::occluded`]
/// when the lane is proven occluded; of [`BatchVerdicts::coarse_failed`] when it is not, but its
/// 2x2 read was the reference's first read, so the judge starts at the finer level
/// (`TestTarget::judge_after_coarse`). Packed in one word: occluded lanes in the low half,
/// coarse-failed lanes in the high half.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BatchVerdicts(u32);

impl BatchVerdicts {
    /// The verdicts for lanes `0..16` from the two lane masks.
    #[inline]
    pub fn new(occluded: u32, coarse_failed: u32) -> BatchVerdicts {
        debug_assert!(occluded >> 16 == 0 && coarse_failed >> 16 == 0, "sixteen lanes at most");
        BatchVerdicts(occluded | coarse_failed << 16)
    }

    /// Lanes proven occluded.
    #[inline]
    pub fn occluded(self) -> u32 {
        self.0 & 0xffff
    }

    /// Lanes not proven whose 2x2 read failed exactly as the reference's first read would.
    #[inline]
    pub fn coarse_failed(self) -> u32 {
        self.0 >> 16
    }

    /// Lanes `0..8` moved to `8..16`: the second batch of eight of a group of sixteen.
    #[inline]
    pub(crate) fn upper(self) -> BatchVerdicts {
        debug_assert!(self.occluded() >> 8 == 0 && self.coarse_failed() >> 8 == 0, "eight lanes");
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
