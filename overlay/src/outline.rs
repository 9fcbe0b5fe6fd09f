//! The selected entity's world box as the overlay draws it: its twelve edges projected by
//! the drawn view's view-projection into pixels of the image.
//!
//! Each edge is clipped in clip space before the divide by `w`, against the near plane
//! (`w - z >= 0`: the engine's projections are reversed-Z, the near plane at depth 1, the
//! same plane [`culling::Frustum`] extracts) and against `w` above a small positive bound (a
//! projection that is not reversed still never divides by a `w` at or behind the eye). A
//! point behind the eye would otherwise divide by a negative `w` and land mirrored on the
//! other side of the screen (an edge "wrapped" across it); clipped, the part behind is cut
//! and the part in front is drawn. The sides of the screen are left to the painter's clip.

use ecs::Aabb;
use glam::{Mat4, Vec2, Vec3, Vec4};

/// The smallest `w` a clipped point keeps.
const MIN_W: f32 = 1e-5;

/// The box's edges as pairs of corner indices (bit 0: x, bit 1: y, bit 2: z take the max).
const EDGES: [(usize, usize); 12] =
    [(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7)];

/// One segment on the image, pixels (x right, y down from the top-left corner).
pub type Segment = [Vec2; 2];

/// Writes into `out` (emptied first) the parts of `world_box`'s edges in front of the eye of
/// `view_projection`, projected to an image of `size` pixels (rows from the top): none for a
/// box wholly behind the near plane, cut edges for one crossing it.
///
/// ```
/// use glam::{Mat4, Vec3};
/// let projection = Mat4::perspective_infinite_reverse_rh(1.0, 1.0, 0.1);
/// let view = Mat4::look_at_rh(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, Vec3::Y);
/// let cube = ecs::Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5));
/// let mut segments = Vec::new();
/// overlay::box_segments(projection * view, &cube, (100.0, 100.0), &mut segments);
/// assert_eq!(segments.len(), 12);
/// ```
pub fn box_segments(view_projection: Mat4, world_box: &Aabb, size: (f32, f32), out: &mut Vec<Segment>) {
    out.clear();
    let corners: [Vec4; 8] = std::array::from_fn(|index| {
        let pick = |bit: usize, min: f32, max: f32| if index & bit != 0 { max } else { min };
        let corner = Vec3::new(
            pick(1, world_box.min.x, world_box.max.x),
            pick(2, world_box.min.y, world_box.max.y),
            pick(4, world_box.min.z, world_box.max.z),
        );
        view_projection * corner.extend(1.0)
    });
    let pixel = |clip: Vec4| Vec2::new((0.5 + 0.5 * clip.x / clip.w) * size.0, (0.5 - 0.5 * clip.y / clip.w) * size.1);
    for (a, b) in EDGES {
        if let Some((a, b)) = clip_edge(corners[a], corners[b]) {
            out.push([pixel(a), pixel(b)]);
        }
    }
}

/// The part of the clip-space segment `a`-`b` in front of the near plane and of the eye;
/// `None` when no part is.
fn clip_edge(mut a: Vec4, mut b: Vec4) -> Option<(Vec4, Vec4)> {
    // Signed distances inside each plane: the near plane (w - z) and the eye's (w - MIN_W).
    let planes: [fn(Vec4) -> f32; 2] = [|p| p.w - p.z, |p| p.w - MIN_W];
    for distance in planes {
        let (da, db) = (distance(a), distance(b));
        if da < 0.0 && db < 0.0 {
            return None;
        }
        if da < 0.0 {
            a = a + (b - a) * (da / (da - db));
        } else if db < 0.0 {
            b = b + (a - b) * (db / (db - da));
        }
    }
    Some((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZE: (f32, f32) = (320.0, 240.0);

    /// A camera at `eye` looking down -Z with an infinite reversed-Z projection, as the
    /// engine's default camera.
    fn camera(eye: Vec3) -> Mat4 {
        let projection = Mat4::perspective_infinite_reverse_rh(1.0, SIZE.0 / SIZE.1, 0.1);
        projection * Mat4::look_to_rh(eye, Vec3::NEG_Z, Vec3::Y)
    }

    fn unit_box(center: Vec3) -> Aabb {
        Aabb::new(center - Vec3::splat(0.5), center + Vec3::splat(0.5))
    }

    fn inside(point: Vec2) -> bool {
        (0.0..=SIZE.0).contains(&point.x) && (0.0..=SIZE.1).contains(&point.y)
    }

    #[test]
    fn a_box_in_front_gives_its_twelve_edges_around_its_centre_on_screen() {
        let mut segments = Vec::new();
        box_segments(camera(Vec3::new(0.0, 0.0, 5.0)), &unit_box(Vec3::ZERO), SIZE, &mut segments);
        assert_eq!(segments.len(), 12);
        let centre = Vec2::new(SIZE.0 / 2.0, SIZE.1 / 2.0);
        for [a, b] in &segments {
            assert!(inside(*a) && inside(*b), "{a} {b}");
            // A unit box 5 units away spans a small square around the image's centre.
            assert!(a.distance(centre) < 40.0 && b.distance(centre) < 40.0, "{a} {b}");
            assert!(a.distance(centre) > 5.0, "{a}: the corners lie away from the centre");
        }
        // A box to the right and up lands right of and above the centre (rows from the top).
        box_segments(camera(Vec3::new(0.0, 0.0, 5.0)), &unit_box(Vec3::new(2.0, 1.0, 0.0)), SIZE, &mut segments);
        assert_eq!(segments.len(), 12);
        assert!(segments.iter().flatten().all(|point| point.x > centre.x && point.y < centre.y), "{segments:?}");
    }

    #[test]
    fn a_box_behind_the_camera_gives_no_segment() {
        let mut segments = vec![[Vec2::ZERO; 2]];
        box_segments(camera(Vec3::new(0.0, 0.0, 5.0)), &unit_box(Vec3::new(0.0, 0.0, 10.0)), SIZE, &mut segments);
        assert!(segments.is_empty(), "{segments:?}");
        // Behind and to the side: a wrapped projection would put it on screen.
        box_segments(camera(Vec3::ZERO), &unit_box(Vec3::new(0.3, 0.2, 3.0)), SIZE, &mut segments);
        assert!(segments.is_empty(), "{segments:?}");
    }

    #[test]
    fn a_box_crossing_the_near_plane_gives_cut_segments_on_its_front_side() {
        // A long box from 3 units in front of the eye to 3 behind it, off to the lower left.
        let eye = Vec3::ZERO;
        let long = Aabb::new(Vec3::new(-1.5, -1.0, -3.0), Vec3::new(-0.5, -0.5, 3.0));
        let mut segments = Vec::new();
        box_segments(camera(eye), &long, SIZE, &mut segments);
        // The four edges along z are cut at the near plane; the four of the far face are
        // whole; the near face's four lie behind the eye and are gone.
        assert_eq!(segments.len(), 8, "{segments:?}");
        for [a, b] in &segments {
            assert!(a.is_finite() && b.is_finite());
            // Everything drawn lies left of and below the centre: nothing wrapped over.
            assert!(a.x < SIZE.0 / 2.0 && b.x < SIZE.0 / 2.0, "{a} {b}");
            assert!(a.y > SIZE.1 / 2.0 && b.y > SIZE.1 / 2.0, "{a} {b}");
        }
        // The cut ends lie at the near plane: far outside the image (0.1 units from the eye).
        let far_out = segments.iter().flatten().filter(|point| !inside(**point)).count();
        assert_eq!(far_out, 4, "{segments:?}");
    }
}
