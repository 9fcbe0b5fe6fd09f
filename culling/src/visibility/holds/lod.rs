//! Levels of detail as holds: an object's ([`LodHold`]: the range of scaled distances over
//! which its level stays the pick) and a whole word's ([`WordLodHold`]: the distance the
//! camera may move before any of its objects' levels could change).

use ecs::Lod;
use glam::Vec3;

use super::{move_rounding, ROUNDING};

/// Where an object's level of detail holds: the centre its distance is measured from and
/// the range of `distance * lod_scale` over which the level picked last stays the pick (the
/// first level whose `max_distance * bias` is at least the scaled distance). A camera moving
/// a little changes no level, so most objects cost a distance instead of two component
/// lookups. Voided when the object is refreshed or the global bias changes.
#[derive(Clone, Copy, Debug)]
pub(in crate::visibility) struct LodHold {
    pub(in crate::visibility) center: Vec3,
    /// The pick holds while `above < scaled <= up_to`.
    pub(in crate::visibility) above: f32,
    pub(in crate::visibility) up_to: f32,
}

impl LodHold {
    /// No hold: the level must be picked through the entity.
    pub(in crate::visibility) const NONE: LodHold =
        LodHold { center: Vec3::ZERO, above: f32::INFINITY, up_to: f32::NEG_INFINITY };
}

impl LodHold {
    /// The hold of a pick that stays the pick while the camera stays within `slack` of `eye`
    /// (the error rule's, `LevelRule::pick_with_hold`): the scaled distance is then the
    /// camera's from `eye`, held from 0 up to `slack * lod_scale`. None for a slack that is not
    /// positive (or NaN) or a scale that is not.
    pub(in crate::visibility) fn around_eye(eye: Vec3, slack: f32, lod_scale: f32) -> LodHold {
        if !(slack > 0.0 && lod_scale > 0.0) {
            return LodHold::NONE;
        }
        LodHold { center: eye, above: f32::NEG_INFINITY, up_to: slack * lod_scale }
    }
}

/// How far (in world units) the camera at `eye` may move before `hold`'s level could stop
/// holding, where `scaled` is the scaled distance the hold was just checked or made at:
/// negative (never skip) for no hold.
#[inline]
pub(in crate::visibility) fn hold_slack(hold: &LodHold, eye: Vec3, distance: f32, scaled: f32, lod_scale: f32) -> f32 {
    let margin = (scaled - hold.above).min(hold.up_to - scaled) / lod_scale;
    let rounding = ROUNDING * (distance + hold.center.abs().max_element() + eye.abs().max_element());
    // `max(-inf)`: a NaN margin (no hold, or a NaN scale) holds nothing.
    (margin * (1.0 - 10.0 * ROUNDING) - rounding).max(f32::NEG_INFINITY)
}

/// The hold of the level `ecs::lod::select_level` picks at `scaled` (as `Lod::select` calls
/// it: bias `lods.bias * global_bias`, each level's `max_distance * bias`); none for a NaN.
pub(in crate::visibility) fn hold_of(lods: &Lod, center: Vec3, scaled: f32, global_bias: f32) -> LodHold {
    let bias = lods.bias * global_bias;
    if scaled.is_nan() || bias.is_nan() || lods.levels.is_empty() {
        return LodHold::NONE;
    }
    let mut above = f32::NEG_INFINITY;
    for level in lods.levels.iter() {
        let threshold = level.max_distance * bias;
        if scaled <= threshold {
            return LodHold { center, above, up_to: threshold };
        }
        above = above.max(threshold);
    }
    // Past every level: the last holds for any farther distance.
    LodHold { center, above, up_to: f32::INFINITY }
}

/// The levels of a word's objects as a whole: every object of `members` keeps its level while
/// the camera stays closer than `slack` to `anchor` (under the same `lod_scale`). The word then
/// skips the per-object holds, one distance each.
#[derive(Clone, Copy, Debug)]
pub(in crate::visibility) struct WordLodHold {
    pub anchor: Vec3,
    /// The smallest slack of the members' holds, after the allowance for rounding.
    pub slack: f32,
    pub scale_bits: u32,
    pub members: u64,
}

impl WordLodHold {
    /// Holds nothing: the members are checked one by one.
    pub const NONE: WordLodHold =
        WordLodHold { anchor: Vec3::ZERO, slack: f32::NEG_INFINITY, scale_bits: 0, members: 0 };

    /// Whether every object of `to_pick` keeps its level for a camera at `eye`. False for a
    /// NaN anywhere (every comparison with NaN fails).
    #[inline]
    pub fn covers(&self, to_pick: u64, eye: Vec3, lod_scale: f32) -> bool {
        to_pick & !self.members == 0
            && lod_scale.to_bits() == self.scale_bits
            && eye.distance(self.anchor) + move_rounding(eye, self.anchor) < self.slack
    }
}
