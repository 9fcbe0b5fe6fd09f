//! Unions of boxes by words of 64 slots: what a word's bounds are (the union of its finite
//! drawable boxes), how they are redone from the slots that moved, and a group's union of
//! its words for the occlusion step's first level.

use ecs::Aabb;
use glam::{Vec3, Vec3A};

use crate::bits::BITS_PER_WORD;
use crate::visibility::objects::EMPTY_BOX;

/// What one word's bounds are redone from when slots of it are refreshed: the union of the
/// finite drawable boxes of its *settled* slots (none refreshed since the last full frame),
/// kept, and the boxes of its *moved* slots, read again. A word whose movers are the same
/// frame after frame reads only their boxes instead of 64. The union of the same boxes, so
/// the same bounds as a union over the whole word (min and max do not depend on the order).
#[derive(Clone, Copy, Debug)]
pub(super) struct SettledBounds {
    /// Slots refreshed since the last full frame.
    pub(super) moved: u64,
    /// The union of the settled finite drawable boxes (`min > max` when there is none).
    pub(super) min: Vec3A,
    pub(super) max: Vec3A,
}

impl SettledBounds {
    /// No settled box.
    pub(super) const NONE: SettledBounds = SettledBounds { moved: 0, min: Vec3A::INFINITY, max: Vec3A::NEG_INFINITY };

    /// The union of the boxes of `settled` (bits of word `index`), with `moved` recorded.
    pub(super) fn of(bounds: &[Aabb], index: usize, settled: u64, moved: u64) -> SettledBounds {
        let (min, max) = raw_union(&bounds[index * BITS_PER_WORD..], settled);
        SettledBounds { moved, min, max }
    }

    /// Word `index`'s bounds: unbounded when it holds a non-finite drawable box, else the
    /// settled union with the moved slots' drawable boxes.
    pub(super) fn word_bounds(&self, bounds: &[Aabb], index: usize, drawable: &[u64], forced: &[u64]) -> Aabb {
        if forced[index] & drawable[index] != 0 {
            return Aabb { min: Vec3::NEG_INFINITY, max: Vec3::INFINITY };
        }
        let (min, max) = raw_union(&bounds[index * BITS_PER_WORD..], drawable[index] & self.moved);
        finish_union(self.min.min(min), self.max.max(max))
    }
}

/// The union of the bounds of the words with drawable objects (`drawable`, one word each;
/// an unbounded word makes the group unbounded).
pub(super) fn group_union(words: &[Aabb], drawable: &[u64]) -> Aabb {
    let (mut min, mut max) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for (word, _) in words.iter().zip(drawable).filter(|(_, &drawable)| drawable != 0) {
        min = min.min(word.min);
        max = max.max(word.max);
    }
    if min.x > max.x {
        return EMPTY_BOX;
    }
    Aabb { min, max }
}

/// Word `index`'s bounds: the union of its finite drawable boxes, unbounded when it holds a
/// non-finite one (the reference the kept bounds are checked against).
#[cfg(debug_assertions)]
pub(super) fn word_union(bounds: &[Aabb], index: usize, drawable: &[u64], forced: &[u64]) -> Aabb {
    let forced = forced[index] & drawable[index];
    if forced != 0 {
        return Aabb { min: Vec3::NEG_INFINITY, max: Vec3::INFINITY };
    }
    union_of(&bounds[index * BITS_PER_WORD..], drawable[index])
}

/// The union of the boxes of `members` (bits over `boxes`), or an empty box.
#[cfg(any(test, debug_assertions))]
pub(in crate::visibility) fn union_of(boxes: &[Aabb], members: u64) -> Aabb {
    let (min, max) = raw_union(boxes, members);
    finish_union(min, max)
}

/// The minimum and maximum corners over the boxes of `members` (bits over `boxes`); `min >
/// max` when there is none.
#[inline]
pub(super) fn raw_union(boxes: &[Aabb], mut members: u64) -> (Vec3A, Vec3A) {
    let (mut min, mut max) = (Vec3A::INFINITY, Vec3A::NEG_INFINITY);
    if members == u64::MAX && boxes.len() >= BITS_PER_WORD {
        // A full word (the usual case): a straight loop in SIMD registers, no bit walking.
        for aabb in &boxes[..BITS_PER_WORD] {
            min = min.min(Vec3A::from(aabb.min));
            max = max.max(Vec3A::from(aabb.max));
        }
        return (min, max);
    }
    while members != 0 {
        let offset = members.trailing_zeros() as usize;
        members &= members - 1;
        min = min.min(Vec3A::from(boxes[offset].min));
        max = max.max(Vec3A::from(boxes[offset].max));
    }
    (min, max)
}

/// The box of a [`raw_union`]: an empty box when it had no member.
#[inline]
pub(super) fn finish_union(min: Vec3A, max: Vec3A) -> Aabb {
    if min.x > max.x {
        return EMPTY_BOX;
    }
    Aabb { min: min.into(), max: max.into() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A full word's straight loop gives the union the bit walk gives.
        #[test]
        fn a_full_word_union_is_the_union_of_its_boxes(
            boxes in prop::collection::vec((prop::array::uniform3(-1e4f32..1e4), prop::array::uniform3(0.0f32..50.0)), 64),
        ) {
            let boxes: Vec<Aabb> = boxes
                .iter()
                .map(|(center, half)| Aabb { min: Vec3::from(*center) - Vec3::from(*half), max: Vec3::from(*center) + Vec3::from(*half) })
                .collect();
            let walked = boxes.iter().skip(1).fold(boxes[0], |union, aabb| Aabb { min: union.min.min(aabb.min), max: union.max.max(aabb.max) });
            prop_assert_eq!(union_of(&boxes, u64::MAX), walked);
            prop_assert_eq!(union_of(&boxes, u64::MAX >> 1), union_of(&boxes[..63], u64::MAX >> 1));
        }
    }
}
