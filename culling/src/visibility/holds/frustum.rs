//! The frustum's holds: the shape a camera that only moves keeps ([`FrustumShape`]), a word's
//! side of it ([`FrustumHold`]) and its objects' kernel verdicts ([`ObjectHold`],
//! [`WordObjectHolds`]), each with the distance the camera may move before it could change.

use ecs::Aabb;
use glam::Vec3;

use super::side::{corners, distance_and_margin, WordSide};
use super::{move_rounding, ROUNDING};
use crate::frustum::Frustum;

/// By how much `bounds` is clearly outside the frustum, and by how much clearly inside it
/// (each positive when so): the largest and the smallest distance past the planes' margins
/// (the tests' references `clearly_outside` and `clearly_inside` without stopping early). Neither is positive
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
pub(in crate::visibility) struct FrustumShape {
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
pub(in crate::visibility) struct FrustumHold {
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
pub(in crate::visibility) struct ObjectHold {
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
pub(in crate::visibility) struct WordObjectHolds {
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
pub(in crate::visibility) fn nearest_plane_value(frustum: &Frustum, center: Vec3, half: Vec3) -> f32 {
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
