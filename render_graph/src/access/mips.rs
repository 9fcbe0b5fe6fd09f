//! Mip ranges: the sub-resource unit a pass declares on an image, and the disjoint
//! segments the barrier planner tracks per image.

use std::fmt;
use std::ops::Range;

use ash::vk;

/// A range of mip levels of an image: `count` levels from `base`, or every level from `base`
/// on when `count` is [`vk::REMAINING_MIP_LEVELS`] (what [`MipRange::ALL`] and
/// [`MipRange::from_base`] give, so a range can follow an image whose mip count depends on
/// the output extent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MipRange {
    /// First mip level.
    pub base: u32,
    /// Number of levels, or [`vk::REMAINING_MIP_LEVELS`] for every level from `base` on.
    pub count: u32,
}

impl MipRange {
    /// Every mip of the image (what whole-image declarations use).
    pub const ALL: MipRange = MipRange { base: 0, count: vk::REMAINING_MIP_LEVELS };

    /// `count` levels from `base`.
    pub const fn new(base: u32, count: u32) -> MipRange {
        MipRange { base, count }
    }

    /// The single level `mip`.
    pub const fn level(mip: u32) -> MipRange {
        MipRange { base: mip, count: 1 }
    }

    /// Every level from `base` on.
    pub const fn from_base(base: u32) -> MipRange {
        MipRange { base, count: vk::REMAINING_MIP_LEVELS }
    }

    /// Whether this is [`MipRange::ALL`].
    pub fn is_all(self) -> bool {
        self == MipRange::ALL
    }

    /// One past the last level (`u32::MAX` for a range that runs to the end of the image).
    pub fn end(self) -> u32 {
        if self.count == vk::REMAINING_MIP_LEVELS {
            u32::MAX
        } else {
            self.base.saturating_add(self.count)
        }
    }

    /// Whether the two ranges share a level.
    pub fn overlaps(self, other: MipRange) -> bool {
        self.base < other.end() && other.base < self.end()
    }

    /// Whether every level of `other` lies in this range.
    pub fn contains(self, other: MipRange) -> bool {
        self.base <= other.base && other.end() <= self.end()
    }

    /// Whether the range is non-empty and lies inside an image of `mip_levels` mips.
    pub fn fits(self, mip_levels: u32) -> bool {
        self.count > 0 && self.base < mip_levels && (self.end() == u32::MAX || self.end() <= mip_levels)
    }

    /// `(base, count)` of the levels an image of `mip_levels` mips has in this range, or
    /// `None` when it has none.
    pub fn resolve(self, mip_levels: u32) -> Option<(u32, u32)> {
        let end = self.end().min(mip_levels);
        (self.base < end).then(|| (self.base, end - self.base))
    }

    /// The range from a half-open segment `[start, end)` (`end == u32::MAX`: to the end).
    pub(crate) fn from_segment(start: u32, end: u32) -> MipRange {
        if end == u32::MAX {
            MipRange::from_base(start)
        } else {
            MipRange::new(start, end - start)
        }
    }
}

impl fmt::Display for MipRange {
    /// `all mips`, `mip 3`, `mips 2..5` or `mips 2..` (to the end of the chain).
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_all() {
            write!(formatter, "all mips")
        } else if self.count == 1 {
            write!(formatter, "mip {}", self.base)
        } else if self.count == vk::REMAINING_MIP_LEVELS {
            write!(formatter, "mips {}..", self.base)
        } else {
            write!(formatter, "mips {}..{}", self.base, u64::from(self.base) + u64::from(self.count))
        }
    }
}

impl From<Range<u32>> for MipRange {
    /// Levels `start..end` (an empty or reversed range gives a zero count, which
    /// registration reports as an error).
    fn from(levels: Range<u32>) -> MipRange {
        MipRange::new(levels.start, levels.end.saturating_sub(levels.start))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_to_the_end_follow_the_image() {
        assert_eq!(MipRange::ALL.resolve(7), Some((0, 7)));
        assert_eq!(MipRange::from_base(3).resolve(7), Some((3, 4)));
        assert_eq!(MipRange::from_base(7).resolve(7), None);
        assert!(MipRange::from_base(6).fits(7));
        assert!(!MipRange::from_base(7).fits(7));
    }

    #[test]
    fn fixed_ranges_must_fit_and_be_non_empty() {
        assert!(MipRange::from(0..7).fits(7));
        assert!(!MipRange::from(0..8).fits(7));
        assert!(!MipRange::from(3..3).fits(7));
        assert!(!MipRange::new(u32::MAX - 1, 5).fits(7), "no overflow");
        assert_eq!(MipRange::level(4).resolve(7), Some((4, 1)));
    }

    #[test]
    fn ranges_print_as_levels() {
        let printed: Vec<String> = [MipRange::ALL, MipRange::level(3), MipRange::from(2..5), MipRange::from_base(2)]
            .map(|range| range.to_string())
            .into();
        assert_eq!(printed, ["all mips", "mip 3", "mips 2..5", "mips 2.."]);
    }

    #[test]
    fn overlap_and_containment() {
        assert!(MipRange::level(2).overlaps(MipRange::from(0..3)));
        assert!(!MipRange::level(3).overlaps(MipRange::from(0..3)));
        assert!(MipRange::ALL.overlaps(MipRange::level(9)));
        assert!(MipRange::ALL.contains(MipRange::from(2..5)));
        assert!(!MipRange::from(2..5).contains(MipRange::from_base(2)));
    }
}
