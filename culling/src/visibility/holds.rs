//! What a word may skip while the camera creeps along: an object's level of detail
//! ([`LodHold`]) and the distances behind a whole word's levels ([`WordLodHold`]), its
//! frustum planes test ([`FrustumHold`]) and, for a word across a plane, its objects' kernel
//! verdicts ([`ObjectHold`]).
//!
//! Both are a *hold*: a verdict found under the camera at `anchor`, with the distance
//! (`slack`) the camera may move before the verdict could change. An object's distance, and a
//! box's distance to a plane that moves with the camera, change by at most the camera's own
//! move, so a word whose camera stayed within its slack keeps its verdict without the work.
//! Each slack is taken less an allowance for single-precision rounding, relative to the
//! magnitudes involved, so a hold never keeps a verdict that the work would change.

use ecs::{Aabb, Lod};
use glam::{Vec3, Vec4};

use crate::frustum::Frustum;

/// Relative allowance for rounding: a few single-precision roundings, with margin.
pub(super) const ROUNDING: f32 = 1e-5;

/// The rounding allowance of a move from `anchor` to `eye`, relative to their magnitudes.
#[inline]
fn move_rounding(eye: Vec3, anchor: Vec3) -> f32 {
    ROUNDING * (eye.abs().max_element() + anchor.abs().max_element())
}

/// Where an object's level of detail holds: the centre its distance is measured from and
/// the range of `distance * lod_scale` over which the level picked last stays the pick (the
/// first level whose `max_distance * bias` is at least the scaled distance). A camera moving
/// a little changes no level, so most objects cost a distance instead of two component
/// lookups. Voided when the object is refreshed or the global bias changes.
#[derive(Clone, Copy, Debug)]
pub(super) struct LodHold {
    pub(super) center: Vec3,
    /// The pick holds while `above < scaled <= up_to`.
    pub(super) above: f32,
    pub(super) up_to: f32,
}

impl LodHold {
    /// No hold: the level must be picked through the entity.
    pub(super) const NONE: LodHold = LodHold { center: Vec3::ZERO, above: f32::INFINITY, up_to: f32::NEG_INFINITY };
}

/// How far (in world units) the camera at `eye` may move before `hold`'s level could stop
/// holding, where `scaled` is the scaled distance the hold was just checked or made at:
/// negative (never skip) for no hold.
#[inline]
pub(super) fn hold_slack(hold: &LodHold, eye: Vec3, distance: f32, scaled: f32, lod_scale: f32) -> f32 {
    let margin = (scaled - hold.above).min(hold.up_to - scaled) / lod_scale;
    let rounding = ROUNDING * (distance + hold.center.abs().max_element() + eye.abs().max_element());
    // `max(-inf)`: a NaN margin (no hold, or a NaN scale) holds nothing.
    (margin * (1.0 - 10.0 * ROUNDING) - rounding).max(f32::NEG_INFINITY)
}

/// The hold of the level `ecs::lod::select_level` picks at `scaled` (as `Lod::select` calls
/// it: bias `lods.bias * global_bias`, each level's `max_distance * bias`); none for a NaN.
pub(super) fn hold_of(lods: &Lod, center: Vec3, scaled: f32, global_bias: f32) -> LodHold {
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
pub(super) struct WordLodHold {
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

/// Where a word's bounds lie against the frustum, as `tracked.rs` decides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WordSide {
    /// Clearly outside one plane: the kernel rejects every box of the word.
    Outside,
    /// Clearly inside every plane: the kernel keeps every box of the word.
    Inside,
    /// Neither: the word's objects are tested one by one.
    Straddles,
}

// The plain tests, one plane after another: the reference `WordPlanes` is checked against.
#[cfg(test)]
impl WordSide {
    /// The side of `bounds`, by the plain early-exit tests ([`clearly_outside`], then
    /// [`clearly_inside`] when `ask_inside`), for a frame that makes no hold.
    pub fn of(frustum: &Frustum, bounds: &Aabb, ask_inside: bool) -> WordSide {
        if clearly_outside(frustum, bounds) {
            WordSide::Outside
        } else if ask_inside && clearly_inside(frustum, bounds) {
            WordSide::Inside
        } else {
            WordSide::Straddles
        }
    }
}

/// Lanes of [`WordPlanes`]: one per plane of a frustum, the unused ones neutral.
const PLANE_LANES: usize = 8;

/// A frustum's planes lane by lane, for the word pass's side test of every word: the plain
/// tests of [`WordSide::of`] on all planes at once, each lane with the same operations in the
/// same order as [`clearly_outside`] and [`clearly_inside`] (so the same answers), which the
/// compiler turns into a few vector instructions instead of a loop that stops early.
#[derive(Clone, Copy, Debug)]
pub(super) struct WordPlanes {
    normal: [[f32; PLANE_LANES]; 3],
    offset: [f32; PLANE_LANES],
    /// The frustum's planes are finite; else no word is decided by its bounds.
    finite: bool,
}

impl WordPlanes {
    /// The planes of `frustum`; the lanes past them are a plane every finite box is inside
    /// (normal zero, offset one), which decides nothing.
    pub(super) fn of(frustum: &Frustum) -> WordPlanes {
        let mut lanes =
            WordPlanes { normal: [[0.0; PLANE_LANES]; 3], offset: [1.0; PLANE_LANES], finite: frustum.is_finite() };
        for (lane, plane) in frustum.planes().iter().enumerate().take(PLANE_LANES) {
            lanes.normal[0][lane] = plane.x;
            lanes.normal[1][lane] = plane.y;
            lanes.normal[2][lane] = plane.z;
            lanes.offset[lane] = plane.w;
        }
        lanes.finite &= frustum.planes().len() <= PLANE_LANES;
        lanes
    }

    /// [`WordSide::of`] for the frustum these planes came from: per lane, the corner farthest
    /// along the normal and the one farthest against it, each plane's distance to them and
    /// its rounding margin, as [`corners`] and [`distance_and_margin`] compute them, written
    /// out on plain arrays so that the lanes vectorize.
    pub(super) fn side(&self, bounds: &Aabb, ask_inside: bool) -> WordSide {
        if !self.finite {
            return WordSide::Straddles;
        }
        let (min, max) = (bounds.min.to_array(), bounds.max.to_array());
        let (mut outside, mut inside) = ([false; PLANE_LANES], [false; PLANE_LANES]);
        for lane in 0..PLANE_LANES {
            let normal = [self.normal[0][lane], self.normal[1][lane], self.normal[2][lane]];
            let offset = self.offset[lane];
            let mut farthest = [0.0f32; 3];
            let mut nearest = [0.0f32; 3];
            for axis in 0..3 {
                let positive = normal[axis] > 0.0;
                farthest[axis] = if positive { max[axis] } else { min[axis] };
                nearest[axis] = if positive { min[axis] } else { max[axis] };
            }
            let distance_and_margin = |corner: [f32; 3]| {
                let terms = [normal[0] * corner[0], normal[1] * corner[1], normal[2] * corner[2]];
                let distance = terms[0] + terms[1] + terms[2] + offset;
                let margin = 1e-4 * (terms[0].abs() + terms[1].abs() + terms[2].abs() + offset.abs()) + 1e-4;
                (distance, margin)
            };
            let (distance, margin) = distance_and_margin(farthest);
            outside[lane] = distance < -margin;
            let (distance, margin) = distance_and_margin(nearest);
            inside[lane] = distance > margin;
        }
        if outside.iter().any(|&outside| outside) {
            WordSide::Outside
        } else if ask_inside && bounds.min.is_finite() && bounds.max.is_finite() && inside.iter().all(|&inside| inside)
        {
            WordSide::Inside
        } else {
            WordSide::Straddles
        }
    }
}

/// The corners of `bounds` farthest along and against `plane`'s normal.
#[inline]
fn corners(plane: Vec4, bounds: &Aabb) -> (Vec3, Vec3) {
    let positive = plane.truncate().cmpgt(Vec3::ZERO);
    (Vec3::select(positive, bounds.max, bounds.min), Vec3::select(positive, bounds.min, bounds.max))
}

/// `plane`'s signed distance to `corner`, and the margin a word test keeps past it: the
/// kernel works from centres and half extents, so its rounding is allowed for, relative to
/// the magnitudes involved.
#[inline]
fn distance_and_margin(plane: Vec4, corner: Vec3) -> (f32, f32) {
    let normal = plane.truncate();
    let distance = normal.dot(corner) + plane.w;
    (distance, 1e-4 * ((normal * corner).abs().element_sum() + plane.w.abs()) + 1e-4)
}

/// Whether `bounds` lies outside one of the frustum's planes by more than rounding could
/// explain, so every box inside it is rejected by the per-object kernel as well: the sign
/// of [`plane_excess`]'s first value, stopping at the first plane that decides.
#[cfg(test)]
pub(super) fn clearly_outside(frustum: &Frustum, bounds: &Aabb) -> bool {
    if !frustum.is_finite() {
        return false;
    }
    frustum.planes().iter().any(|&plane| {
        let (distance, margin) = distance_and_margin(plane, corners(plane, bounds).0);
        distance < -margin
    })
}

/// Whether `bounds` lies inside every plane of the frustum by more than rounding could
/// explain, so the per-object kernel keeps every box inside it: the sign of
/// [`plane_excess`]'s second value, stopping at the first plane that fails.
#[cfg(test)]
pub(super) fn clearly_inside(frustum: &Frustum, bounds: &Aabb) -> bool {
    if !(frustum.is_finite() && bounds.min.is_finite() && bounds.max.is_finite()) {
        return false;
    }
    frustum.planes().iter().all(|&plane| {
        let (distance, margin) = distance_and_margin(plane, corners(plane, bounds).1);
        distance > margin
    })
}

/// By how much `bounds` is clearly outside the frustum, and by how much clearly inside it
/// (each positive when so): the largest and the smallest distance past the planes' margins
/// ([`clearly_outside`] and [`clearly_inside`] without stopping early). Neither is positive
/// without finite planes, and `inside` is not without finite bounds.
pub(super) fn plane_excess(frustum: &Frustum, bounds: &Aabb) -> (f32, f32) {
    if !frustum.is_finite() {
        return (f32::NEG_INFINITY, f32::NEG_INFINITY);
    }
    let (mut outside, mut inside) = (f32::NEG_INFINITY, f32::INFINITY);
    for &plane in frustum.planes() {
        let (farthest, nearest) = corners(plane, bounds);
        // `x - y > 0` exactly when `x > y` (IEEE subtraction); `max` skips a NaN, which
        // makes no plane decide, as `distance < -margin` would not.
        let (distance, margin) = distance_and_margin(plane, farthest);
        outside = outside.max(-margin - distance);
        let (distance, margin) = distance_and_margin(plane, nearest);
        let beyond = distance - margin;
        inside = if beyond.is_nan() { f32::NEG_INFINITY } else { inside.min(beyond) };
    }
    if !(bounds.min.is_finite() && bounds.max.is_finite()) {
        inside = f32::NEG_INFINITY;
    }
    (outside, inside)
}

/// The frustum's shape apart from where the camera stands: its planes' normals, and their
/// offsets relative to the camera. A camera that only moves keeps the shape, and each plane
/// moves with it.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct FrustumShape {
    /// Bumped whenever the normals change (0: no usable shape yet).
    pub epoch: u32,
    normals: [[u32; 3]; 6],
    count: usize,
    /// The offsets relative to the camera when the epoch began.
    relative: [f32; 6],
    /// How far this frame's relative offsets are from those (their rounding).
    pub drift: f32,
    /// The shape is last frame's: the camera only moved. Holds are made only then, so a
    /// camera that turns every frame pays nothing for them.
    pub steady: bool,
}

impl FrustumShape {
    /// Takes this frame's `frustum` seen from `eye`: keeps the epoch when only the camera
    /// moved (the normals are the same bits and the relative offsets within rounding), else
    /// starts a new one. No epoch for planes that are not finite.
    pub fn update(&mut self, frustum: &Frustum, eye: Vec3) {
        let planes = frustum.planes();
        let mut normals = [[0u32; 3]; 6];
        let mut relative = [0.0f32; 6];
        for (index, plane) in planes.iter().enumerate() {
            normals[index] = plane.truncate().to_array().map(f32::to_bits);
            // The plane moves with the camera: `w + n . eye` stays put.
            relative[index] = plane.w + plane.truncate().dot(eye);
        }
        let drift = (0..planes.len())
            .map(|index| (relative[index] - self.relative[index]).abs())
            .fold(0.0f32, |drift, value| if value.is_nan() { f32::INFINITY } else { drift.max(value) });
        let allowed = ROUNDING * (1.0 + eye.abs().max_element());
        let same = self.epoch != 0
            && frustum.is_finite()
            && eye.is_finite()
            && planes.len() == self.count
            && normals[..planes.len()] == self.normals[..planes.len()]
            && drift <= allowed;
        if same {
            self.drift = drift;
            self.steady = true;
            return;
        }
        self.steady = false;
        // A new shape (the first frame, a turn, a new projection): no hold survives it.
        self.epoch = if frustum.is_finite() && eye.is_finite() { self.epoch.wrapping_add(1).max(1) } else { 0 };
        (self.normals, self.count, self.relative, self.drift) = (normals, planes.len(), relative, 0.0);
    }
}

/// A word's side of the frustum as a hold: `side` stays true while the frustum keeps its
/// shape (epoch `shape`) and the camera stays closer than `slack` to `anchor`, as long as
/// the word's bounds do not change (the caller drops the hold of a dirty word).
#[derive(Clone, Copy, Debug)]
pub(super) struct FrustumHold {
    anchor: Vec3,
    slack: f32,
    shape: u32,
    side: WordSide,
}

impl FrustumHold {
    /// Holds nothing.
    pub const NONE: FrustumHold =
        FrustumHold { anchor: Vec3::ZERO, slack: f32::NEG_INFINITY, shape: 0, side: WordSide::Straddles };

    /// The held side for a camera at `eye` under `shape`, if it still holds.
    #[inline]
    pub fn side_at(&self, eye: Vec3, shape: &FrustumShape) -> Option<WordSide> {
        let moved = eye.distance(self.anchor);
        // A plane's distance changes by the move (unit normals) and by the drift of its
        // offset; the margin itself by 1e-4 of the move.
        (self.shape == shape.epoch
            && shape.epoch != 0
            && moved * (1.0 + 1e-4) + shape.drift + move_rounding(eye, self.anchor) < self.slack)
            .then_some(self.side)
    }

    /// The side of `bounds` under `frustum` seen from `eye`, and its hold.
    pub fn decide(frustum: &Frustum, bounds: &Aabb, eye: Vec3, shape: &FrustumShape) -> (WordSide, FrustumHold) {
        let (outside, inside) = plane_excess(frustum, bounds);
        let (side, excess) = if outside > 0.0 {
            (WordSide::Outside, outside)
        } else if inside > 0.0 {
            (WordSide::Inside, inside)
        } else {
            return (WordSide::Straddles, FrustumHold::NONE);
        };
        // The distances behind `excess` were rounded too, relative to the bounds, the camera
        // and the planes' offsets (the margins' own scale); so was this frame's drift.
        let magnitude = bounds.min.abs().max(bounds.max.abs()).max_element() + eye.abs().max_element();
        let slack = excess - ROUNDING * (1.0 + magnitude) - shape.drift;
        (side, FrustumHold { anchor: eye, slack, shape: shape.epoch, side })
    }
}

/// One object's frustum verdict as a hold: the kernel's verdict stays while the frustum keeps
/// its shape and the camera stays closer than `slack` to `anchor`. Its word keeps which of its
/// objects hold and which of those are visible ([`WordObjectHolds`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct ObjectHold {
    anchor: Vec3,
    slack: f32,
}

impl ObjectHold {
    /// Holds nothing.
    pub const NONE: ObjectHold = ObjectHold { anchor: Vec3::ZERO, slack: f32::NEG_INFINITY };

    /// The hold of a kernel verdict found for the box `center`, `half` from `eye`:
    /// `nearest` is the box's smallest value of the kernel's `distance + reach` over the
    /// planes (negative: outside one; the kernel keeps the box when none is). None when
    /// the verdict is too close to call for a hold.
    #[inline]
    pub fn of(visible: bool, nearest: f32, center: Vec3, half: Vec3, eye: Vec3, shape: &FrustumShape) -> ObjectHold {
        let excess = if visible { nearest } else { -nearest };
        let magnitude = center.abs().max_element() + half.abs().max_element() + eye.abs().max_element();
        // A NaN anywhere gives a NaN slack, which never holds.
        ObjectHold { anchor: eye, slack: excess - ROUNDING * (1.0 + magnitude) - shape.drift }
    }

    /// Whether the verdict still holds for a camera at `eye` (the word checks the shape).
    #[inline]
    pub fn holds_at(&self, eye: Vec3, shape: &FrustumShape) -> bool {
        // A plane's `distance + reach` changes by the move (unit normals) and by the drift
        // of its offset.
        eye.distance(self.anchor) + shape.drift + move_rounding(eye, self.anchor) < self.slack
    }
}

/// Which objects of a word hold their frustum verdict ([`ObjectHold`]), under which shape.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct WordObjectHolds {
    /// Objects whose hold was made under shape `shape`.
    pub members: u64,
    /// Of those, the ones the kernel kept.
    pub visible: u64,
    pub shape: u32,
}

impl WordObjectHolds {
    /// The members whose holds may stand under `shape`.
    #[inline]
    pub fn members_under(&self, shape: &FrustumShape) -> u64 {
        if self.shape == shape.epoch && shape.epoch != 0 {
            self.members
        } else {
            0
        }
    }
}

/// The smallest value over the planes of the kernel's `distance + reach` for the box `center`,
/// `half` (as `frustum::aabb_lane` computes them): negative when the box is outside a plane.
#[inline]
pub(super) fn nearest_plane_value(frustum: &Frustum, center: Vec3, half: Vec3) -> f32 {
    let half = half.abs();
    frustum.planes().iter().fold(f32::INFINITY, |nearest, plane| {
        let normal = plane.truncate();
        let value = normal.dot(center) + plane.w + normal.abs().dot(half);
        // A NaN makes the whole value NaN (`min` would skip it), so no hold is made.
        if value.is_nan() || nearest.is_nan() {
            f32::NAN
        } else {
            nearest.min(value)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::Kernel;
    use crate::soa::AabbBlock;
    use crate::visibility::tracked::unions::union_of;
    use glam::{Mat4, Quat};
    use proptest::prelude::*;

    /// A reversed-Z perspective frustum at `eye`, turned by `yaw`.
    fn frustum_at(eye: Vec3, yaw: f32) -> Frustum {
        let view = Mat4::from_rotation_translation(Quat::from_rotation_y(yaw), eye).inverse();
        Frustum::from_view_projection(Mat4::perspective_infinite_reverse_rh(1.1, 1.7, 0.1) * view)
    }

    proptest! {
        #[test]
        fn a_held_side_is_the_side_found_again(
            start in (-3000.0f32..3000.0, -50.0f32..50.0, -3000.0f32..3000.0),
            yaw in -3.2f32..3.2,
            steps in proptest::collection::vec((-1.5f32..1.5, -0.2f32..0.2, -1.5f32..1.5), 1..40),
            boxes in proptest::collection::vec((-80.0f32..80.0, -20.0f32..20.0, -80.0f32..80.0, 0.01f32..30.0), 1..24),
        ) {
            let mut eye = Vec3::new(start.0, start.1, start.2);
            let mut shape = FrustumShape::default();
            let frustum = frustum_at(eye, yaw);
            shape.update(&frustum, eye);
            let bounds: Vec<Aabb> = boxes
                .iter()
                .map(|&(x, y, z, size)| {
                    let center = eye + Vec3::new(x, y, z);
                    Aabb::new(center - size * Vec3::new(1.0, 0.5, 0.7), center + size * Vec3::new(0.6, 0.5, 1.0))
                })
                .collect();
            let mut holds: Vec<FrustumHold> =
                bounds.iter().map(|bounds| FrustumHold::decide(&frustum, bounds, eye, &shape).1).collect();
            let mut held_some = false;
            for step in steps {
                eye += Vec3::new(step.0, step.1, step.2);
                let frustum = frustum_at(eye, yaw);
                shape.update(&frustum, eye);
                for (hold, bounds) in holds.iter_mut().zip(&bounds) {
                    let (found, fresh) = FrustumHold::decide(&frustum, bounds, eye, &shape);
                    match hold.side_at(eye, &shape) {
                        Some(side) => {
                            held_some = true;
                            prop_assert_eq!(side, found, "a hold kept a side the box left");
                        }
                        None => *hold = fresh,
                    }
                }
            }
            // Most boxes lie well inside or outside: holds must be taken, or the test tests
            // nothing.
            prop_assume!(held_some);
        }
    }

    #[test]
    fn a_turn_or_a_new_projection_starts_a_new_shape() {
        let eye = Vec3::new(10.0, 2.0, -5.0);
        let mut shape = FrustumShape::default();
        shape.update(&frustum_at(eye, 0.3), eye);
        let first = shape.epoch;
        assert_ne!(first, 0);
        shape.update(&frustum_at(eye + Vec3::new(0.5, 0.0, -0.25), 0.3), eye + Vec3::new(0.5, 0.0, -0.25));
        assert_eq!(shape.epoch, first, "a camera that only moves keeps the shape");
        shape.update(&frustum_at(eye, 0.31), eye);
        assert_ne!(shape.epoch, first, "a turn starts a new shape");
        let wider = Frustum::from_view_projection(
            Mat4::perspective_infinite_reverse_rh(1.3, 1.7, 0.1)
                * Mat4::from_rotation_translation(Quat::from_rotation_y(0.31), eye).inverse(),
        );
        let turned = shape.epoch;
        shape.update(&wider, eye);
        assert_ne!(shape.epoch, turned, "a new projection starts a new shape");
        shape.update(&Frustum::from_view_projection(Mat4::NAN), eye);
        assert_eq!(shape.epoch, 0, "no shape for planes that are not finite");
    }

    /// A reversed-Z perspective frustum at `eye` looking along `yaw`/`pitch`.
    fn frustum_looking(eye: Vec3, yaw: f32, pitch: f32) -> Frustum {
        let direction = Vec3::new(yaw.sin() * pitch.cos(), pitch.sin(), -yaw.cos() * pitch.cos());
        let view = Mat4::look_to_rh(eye, direction, Vec3::Y);
        let projection = Mat4::perspective_infinite_reverse_rh(1.0, 16.0 / 9.0, 0.1);
        Frustum::from_view_projection(projection * view)
    }

    proptest! {
        /// The lane-by-lane side test gives the plain tests' answer on every box, finite or
        /// not, under every frustum, finite or not.
        #[test]
        fn word_planes_give_the_plain_tests_side(
            eye in prop::array::uniform3(-50.0f32..50.0),
            yaw in -3.2f32..3.2,
            pitch in -1.5f32..1.5,
            min in prop::array::uniform3(-300.0f32..300.0),
            size in prop::array::uniform3(0.0f32..200.0),
            odd in 0usize..8,
            ask_inside: bool,
        ) {
            let frustum = if odd == 7 { Frustum::from_view_projection(Mat4::NAN) } else { frustum_looking(Vec3::from(eye), yaw, pitch) };
            let min = Vec3::from(min);
            let mut bounds = Aabb { min, max: min + Vec3::from(size) };
            match odd {
                1 => bounds.max.x = f32::INFINITY,
                2 => bounds.min = Vec3::NEG_INFINITY,
                3 => bounds.max.y = f32::NAN,
                _ => {}
            }
            let planes = WordPlanes::of(&frustum);
            prop_assert_eq!(planes.side(&bounds, ask_inside), WordSide::of(&frustum, &bounds, ask_inside));
        }

        /// The word test rejects a word only when the kernel rejects every box in it.
        #[test]
        fn words_clearly_outside_or_inside_agree_with_the_kernel_on_every_box(
            eye in prop::array::uniform3(-50.0f32..50.0),
            yaw in -3.2f32..3.2,
            pitch in -1.5f32..1.5,
            cluster in prop::array::uniform3(-200.0f32..200.0),
            boxes in prop::collection::vec((prop::array::uniform3(-20.0f32..20.0), prop::array::uniform3(0.0f32..6.0)), 1..64),
        ) {
            let frustum = frustum_looking(Vec3::from(eye), yaw, pitch);
            let mut block = AabbBlock::new();
            let mut world_boxes = Vec::new();
            for (offset, half) in &boxes {
                let center = Vec3::from(cluster) + Vec3::from(*offset);
                let half = Vec3::from(*half);
                block.push_center_half(center, half);
                world_boxes.push(Aabb { min: center - half, max: center + half });
            }
            let members = if boxes.len() == 64 { u64::MAX } else { (1u64 << boxes.len()) - 1 };
            let bounds = union_of(&world_boxes, members);
            let mut bits = [0u64];
            Kernel::Scalar.cull_aabbs(&frustum, block.slices(), &mut bits);
            if clearly_outside(&frustum, &bounds) {
                prop_assert_eq!(bits[0], 0, "the kernel keeps a box of a word the word test rejected");
            }
            if clearly_inside(&frustum, &bounds) {
                prop_assert_eq!(bits[0], members, "the kernel rejects a box of a word the word test kept whole");
            }
        }
    }

    proptest! {
        /// Inside a level's hold, `select_level` picks that level again.
        #[test]
        fn a_level_holds_exactly_where_select_picks_it_again(
            max_distances in prop::collection::vec(0.0f32..500.0, 1..6),
            bias in 0.25f32..4.0,
            global_bias in 0.5f32..2.0,
            first in 0.0f32..3000.0,
            second in 0.0f32..3000.0,
        ) {
            let levels = max_distances
                .iter()
                .enumerate()
                .map(|(index, &max_distance)| ecs::LodLevel { mesh: ecs::MeshHandle(index as u32), max_distance })
                .collect();
            let lods = Lod { levels, bias };
            let hold = hold_of(&lods, Vec3::ZERO, first, global_bias);
            let pick = |scaled: f32| lods.select(scaled, 1.0, global_bias);
            prop_assert!(hold.above < first && first <= hold.up_to, "a pick holds where it was made");
            if hold.above < second && second <= hold.up_to {
                prop_assert_eq!(pick(second), pick(first));
            }
        }
    }

    #[test]
    fn a_word_touching_a_plane_is_not_outside_and_one_well_past_it_is() {
        let frustum = frustum_looking(Vec3::ZERO, 0.0, 0.0);
        // Looking down -z from the origin: the near plane is at z = -0.1.
        let behind = Aabb { min: Vec3::new(-1.0, -1.0, 5.0), max: Vec3::new(1.0, 1.0, 6.0) };
        assert!(clearly_outside(&frustum, &behind));
        let touching = Aabb { min: Vec3::new(-1.0, -1.0, -0.1), max: Vec3::new(1.0, 1.0, 6.0) };
        assert!(!clearly_outside(&frustum, &touching));
        assert!(!clearly_outside(&Frustum::from_view_projection(Mat4::NAN), &behind), "no planes: nothing is outside");
        let ahead = Aabb { min: Vec3::new(-1.0, -1.0, -20.0), max: Vec3::new(1.0, 1.0, -10.0) };
        assert!(clearly_inside(&frustum, &ahead) && !clearly_inside(&frustum, &touching));
        assert!(!clearly_inside(&Frustum::from_view_projection(Mat4::NAN), &ahead), "no planes: nothing is sure");
    }
}
