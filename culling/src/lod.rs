//! Level-of-detail selection by camera distance.
//!
//! Levels are ordered near to far, each with the largest distance it draws at. A level is
//! chosen when `distance * scale <= max_distance * bias`; past the last level the last level
//! keeps drawing (making an object vanish is the distance cull's job, so only one rule can
//! do it). `scale` corrects for the field of view: level ranges are authored for a 60°
//! vertical field of view, and a narrower one magnifies, so it holds each level further out.

use ecs::ProjectionKind;
use glam::Mat4;

/// `projection[1][1]` of a 60° vertical field of view: `1 / tan(30°) = √3`.
pub const REFERENCE_P11: f32 = ecs::Lod::REFERENCE_P11;

/// Whether a projection is orthographic: its last row is `(0, 0, 0, 1)`.
#[inline]
pub fn is_orthographic(projection: &Mat4) -> bool {
    projection.row(3) == glam::Vec4::W
}

/// The distance scale of a view: `REFERENCE_P11 / projection[1][1]` for a perspective view,
/// 1 for an orthographic one, and 1 for a projection whose `[1][1]` is not a positive finite
/// number.
///
/// ```
/// use culling::lod_scale;
/// use glam::Mat4;
/// let wide = Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 1.0, 0.1);
/// let zoomed = Mat4::perspective_infinite_reverse_rh(30f32.to_radians(), 1.0, 0.1);
/// assert!((lod_scale(&wide) - 1.0).abs() < 1e-6);
/// assert!(lod_scale(&zoomed) < 0.5, "a zoomed view holds detail further out");
/// ```
pub fn lod_scale(projection: &Mat4) -> f32 {
    let kind =
        if is_orthographic(projection) { ProjectionKind::Orthographic } else { ProjectionKind::PerspectiveInfinite };
    ecs::Lod::distance_scale(projection, kind)
}

pub use ecs::lod::select_level as select_lod;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_over_distances_follow_the_ranges_and_the_bias() {
        let ranges = [12.0f32, 30.0, 80.0];
        for (bias, scale) in [(1.0f32, 1.0f32), (1.5, 1.0), (1.0, 0.5), (0.75, 2.0)] {
            for (level, &range) in ranges.iter().enumerate() {
                let hand_over = range * bias / scale;
                assert_eq!(
                    select_lod(hand_over * 0.999, scale, bias, ranges),
                    level,
                    "just inside level {level}'s range {hand_over} (bias {bias}, scale {scale})"
                );
                let next = (level + 1).min(ranges.len() - 1);
                assert_eq!(
                    select_lod(hand_over * 1.001, scale, bias, ranges),
                    next,
                    "just past level {level}'s range {hand_over} (bias {bias}, scale {scale})"
                );
            }
        }
    }

    #[test]
    fn scale_follows_the_field_of_view_and_ignores_orthographic() {
        let reference = Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 1.7, 0.1);
        assert!((lod_scale(&reference) - 1.0).abs() < 1e-6);
        let zoom = Mat4::perspective_rh(20f32.to_radians(), 1.7, 1000.0, 0.1);
        let expected = (10f32.to_radians().tan()) / (30f32.to_radians().tan());
        assert!((lod_scale(&zoom) - expected).abs() < 1e-5);
        let orthographic = Mat4::orthographic_rh(-4.0, 4.0, -2.0, 2.0, 100.0, 0.1);
        assert_eq!(lod_scale(&orthographic), 1.0);
        assert_eq!(lod_scale(&Mat4::from_cols_array(&[f32::NAN; 16])), 1.0);
    }

    #[test]
    fn a_zoomed_view_holds_the_fine_level_further_out() {
        let zoom = Mat4::perspective_infinite_reverse_rh(15f32.to_radians(), 1.0, 0.1);
        let ranges = [20.0, 60.0];
        assert_eq!(select_lod(50.0, 1.0, 1.0, ranges), 1);
        assert_eq!(select_lod(50.0, lod_scale(&zoom), 1.0, ranges), 0);
    }

    #[test]
    fn empty_levels_and_nan_pick_level_zero() {
        assert_eq!(select_lod(5.0, 1.0, 1.0, []), 0);
        assert_eq!(select_lod(f32::NAN, 1.0, 1.0, [1.0, 2.0]), 0);
    }
}
