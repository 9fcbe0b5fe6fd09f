//! The camera that frames a scene of any size: it looks at the scene's bounds from above and
//! to the side, placed so that the bounds' corners project centred in the image and fill it
//! up to a margin, with a near plane that follows the scene's size.
//!
//! The engine's default projection is reversed-Z with no far plane
//! (`Projection::PerspectiveInfiniteReverse`, depth 1 at the near plane, a D32 float depth
//! buffer): nothing is ever cut by a far plane and depth precision is about the same relative
//! step at every distance, so only the near plane needs to follow the scene. It is a tenth of
//! the way from the eye to the nearest corner of the bounds: a fixed one (the default 0.1)
//! would cut a 2 cm model away entirely, and one that small in front of a 2 km model would
//! waste the depth range; a tenth leaves room to fly towards the model in the window.
//!
//! Looking at the bounds' centre alone does not centre the model: in perspective the corners
//! nearer the eye spread wider than the far ones, so the drawn box sits off-centre (by a
//! tenth of the image for a cube seen from above). Instead the eye keeps the direction it
//! would have looking at the centre from above and to the side, and moves so that the frustum's
//! opposite planes touch the corners symmetrically: the corners' projections span the same
//! angle on both sides of the view axis.

use ecs::{Aabb, Camera, Projection, Transform};
use glam::Vec3;

/// The vertical field of view of the framing camera (the engine's default, 60°).
const FOV_Y: f32 = std::f32::consts::FRAC_PI_3;
/// Where the eye lies from the scene: above and to the side (the view looks back along it).
const DIRECTION: Vec3 = Vec3::new(0.6, 0.45, 1.0);
/// Room around the bounds: their corners reach 1 / MARGIN of the way to the image's edge.
const MARGIN: f32 = 1.1;
/// The near plane's share of the distance from the eye to the nearest corner.
const NEAR_SHARE: f32 = 0.1;
/// The smallest half-size framed on any axis, relative to the largest (and at least
/// [`LEAST_HALF_SIZE`]): a flat model or a single point still gets a finite camera.
const LEAST_HALF_SHARE: f32 = 1.0e-3;
/// The smallest half-size framed, in metres.
const LEAST_HALF_SIZE: f32 = 1.0e-6;
/// Halvings of the search that centres the non-limiting axis (far below a pixel).
const CENTRING_STEPS: usize = 48;

/// A camera and its pose that see a whole scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Framing {
    /// The projection: reversed-Z, no far plane, the near plane following the scene's size.
    pub camera: Camera,
    /// The eye and its orientation.
    pub pose: Transform,
    /// The distance from the eye to the centre of the bounds.
    pub distance: f32,
    /// The radius of the bounding sphere (half the bounds' diagonal).
    pub radius: f32,
}

/// The camera that sees all of `bounds` in an image of `aspect` (width over height), the
/// bounds' corners centred in it and reaching 1 / 1.1 of the way to the edges on the tighter
/// axis; it looks down and across from +x, +y, +z of the bounds towards their centre, its near
/// plane a tenth of the way to the nearest corner.
///
/// ```
/// use ecs::Aabb;
/// use glam::Vec3;
/// let tiny = Aabb::new(Vec3::splat(-0.01), Vec3::splat(0.01));
/// let framing = samples::viewer::frame_bounds(tiny, 1.5);
/// let (near, far) = framing.camera.projection.planes();
/// assert!(near < framing.distance - framing.radius, "the 2 cm model lies beyond the near plane");
/// assert_eq!(far, f32::INFINITY);
/// ```
pub fn frame_bounds(bounds: Aabb, aspect: f32) -> Framing {
    let center = bounds.center();
    let half = bounds.half_extent().abs();
    let least = (half.max_element() * LEAST_HALF_SHARE).max(LEAST_HALF_SIZE);
    let half = half.max(Vec3::splat(least));
    let aspect = if aspect.is_finite() && aspect > 0.0 { aspect } else { 1.0 };
    let rotation = ecs::scene::look_at(DIRECTION, Vec3::ZERO).rotation;
    let (right, up, forward) = (rotation * Vec3::X, rotation * Vec3::Y, rotation * Vec3::NEG_Z);
    // The corners relative to the centre, in the view's axes (across, up, depth).
    let corners: Vec<Vec3> = (0..8)
        .map(|corner: u32| {
            let sign = |bit: u32| if corner & bit == 0 { -1.0 } else { 1.0 };
            let offset = half * Vec3::new(sign(1), sign(2), sign(4));
            Vec3::new(offset.dot(right), offset.dot(up), offset.dot(forward))
        })
        .collect();
    let tan_y = (FOV_Y * 0.5).tan() / MARGIN;
    let tan_x = tan_y * aspect;
    // Per axis, the eye depth where both planes of a frustum of half-angle tangent `tan`
    // touch the corners; the smaller (farther back) fits both axes.
    let touching = |across: fn(&Vec3) -> f32, tan: f32| {
        let low = corners.iter().map(|corner| across(corner) - tan * corner.z).fold(f32::MIN, f32::max);
        let high = corners.iter().map(|corner| across(corner) + tan * corner.z).fold(f32::MAX, f32::min);
        (high - low) / (2.0 * tan)
    };
    let eye_depth = touching(|corner| corner.x, tan_x).min(touching(|corner| corner.y, tan_y));
    let eye_x = centring_offset(&corners, eye_depth, |corner| corner.x);
    let eye_y = centring_offset(&corners, eye_depth, |corner| corner.y);
    let eye = center + right * eye_x + up * eye_y + forward * eye_depth;
    let nearest = corners.iter().map(|corner| corner.z - eye_depth).fold(f32::MAX, f32::min);
    let near = nearest * NEAR_SHARE;
    let pose = Transform::from_translation_rotation(eye, rotation);
    let projection = Projection::PerspectiveInfiniteReverse { fov_y_radians: FOV_Y, near };
    Framing { camera: Camera::new(projection), pose, distance: (center - eye).length(), radius: half.length() }
}

/// The eye's offset along one view axis (`across` reads it from a corner) that makes the
/// corners' projections from depth `eye_depth` span as far to one side of the view axis as
/// to the other: the sum of the largest and smallest projection falls as the eye moves
/// towards larger `across`, from at least 0 at the smallest corner's to at most 0 at the
/// largest's, so halving that bracket finds it.
fn centring_offset(corners: &[Vec3], eye_depth: f32, across: fn(&Vec3) -> f32) -> f32 {
    let imbalance = |eye: f32| {
        let (low, high) = corners.iter().fold((f32::MAX, f32::MIN), |(low, high), corner| {
            let projected = (across(corner) - eye) / (corner.z - eye_depth);
            (low.min(projected), high.max(projected))
        });
        low + high
    };
    let (mut low, mut high) = corners
        .iter()
        .fold((f32::MAX, f32::MIN), |(low, high), corner| (low.min(across(corner)), high.max(across(corner))));
    for _ in 0..CENTRING_STEPS {
        let middle = (low + high) * 0.5;
        if imbalance(middle) > 0.0 {
            low = middle;
        } else {
            high = middle;
        }
    }
    (low + high) * 0.5
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec4Swizzles;

    /// Where `point` lands in normalized device coordinates through `framing` (x, y in
    /// [-1, 1] on screen; depth in (0, 1] in front of the near plane, reversed-Z).
    fn project(framing: &Framing, aspect: f32, point: Vec3) -> Vec3 {
        let view = framing.pose.to_matrix().inverse();
        let clip = framing.camera.projection_matrix(aspect) * view * point.extend(1.0);
        clip.xyz() / clip.w
    }

    #[test]
    fn scenes_from_two_centimetres_to_two_kilometres_are_centred_and_whole_in_view() {
        for side in [0.02_f32, 1.0, 2000.0] {
            for (aspect, shape) in [(1.5_f32, Vec3::ONE), (0.5, Vec3::ONE), (1.0, Vec3::new(4.0, 0.0, 1.0))] {
                let offset = Vec3::new(3.0, -2.0, 7.0) * side;
                let half = shape * side * 0.5;
                let bounds = Aabb::new(offset - half, offset + half);
                let framing = frame_bounds(bounds, aspect);
                let (mut low, mut high) = (Vec3::MAX, Vec3::MIN);
                for corner in 0..8 {
                    let pick = |bit: u32, low: f32, high: f32| if corner & bit == 0 { low } else { high };
                    let point = Vec3::new(
                        pick(1, bounds.min.x, bounds.max.x),
                        pick(2, bounds.min.y, bounds.max.y),
                        pick(4, bounds.min.z, bounds.max.z),
                    );
                    let device = project(&framing, aspect, point);
                    assert!(device.z > 0.0 && device.z < 1.0, "{side} m: a corner beyond the near plane ({device})");
                    (low, high) = (low.min(device), high.max(device));
                }
                let what = format!("{side} m, {shape} at aspect {aspect}: corners from {low} to {high}");
                assert!((low.x + high.x).abs() < 1.0e-3 && (low.y + high.y).abs() < 1.0e-3, "centred: {what}");
                assert!(high.x <= 1.0 && high.y <= 1.0, "whole in view: {what}");
                assert!((high.x.max(high.y) - 1.0 / MARGIN).abs() < 1.0e-3, "filling the view to the margin: {what}");
                let (near, _) = framing.camera.projection.planes();
                assert!(near > framing.distance * 1.0e-3, "{what}: the near plane follows the scene ({near})");
            }
        }
    }
}
