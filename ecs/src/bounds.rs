//! Bounding volumes: the axis-aligned box every mesh carries and the sphere that encloses it.
//!
//! Both are plain data. The culls in the `culling` crate take them in world space; a mesh
//! stores its box in its own space and the Visibility stage moves it to world space with
//! [`Aabb::transformed`].
//!
//! Reference: J. Arvo, "Transforming Axis-Aligned Bounding Boxes", Graphics Gems, 1990.

use glam::{Mat4, Vec3};

/// Squared length of the box diagonal at or below which a box has no size at all.
///
/// Such a box bounds nothing that could cover a pixel, so it is not drawable.
pub const BOUNDS_EPSILON_SQ: f32 = 1.0e-12;

/// An axis-aligned bounding box given by its two extreme corners.
///
/// A well-formed box has `min <= max` on every axis. A box with a non-finite coordinate is
/// still treated as drawable (see [`Aabb::is_valid`]) so that the culls keep and report it
/// instead of dropping it silently.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Corner with the smallest coordinate on every axis.
    pub min: Vec3,
    /// Corner with the largest coordinate on every axis.
    pub max: Vec3,
}

impl Aabb {
    /// Builds a box from its two corners, taken as given (no reordering).
    #[inline]
    pub const fn new(min: Vec3, max: Vec3) -> Self {
        Self { min, max }
    }

    /// Builds a box from its centre and half extents (absolute values are used).
    #[inline]
    pub fn from_center_half_extent(center: Vec3, half_extent: Vec3) -> Self {
        let half = half_extent.abs();
        Self { min: center - half, max: center + half }
    }

    /// The smallest box holding every point, or `None` for no points.
    ///
    /// ```
    /// use ecs::Aabb;
    /// use glam::Vec3;
    /// let bounds = Aabb::from_points([Vec3::ZERO, Vec3::new(1.0, -2.0, 3.0)]).unwrap();
    /// assert_eq!(bounds.min, Vec3::new(0.0, -2.0, 0.0));
    /// assert_eq!(bounds.max, Vec3::new(1.0, 0.0, 3.0));
    /// ```
    pub fn from_points(points: impl IntoIterator<Item = Vec3>) -> Option<Self> {
        let mut points = points.into_iter();
        let first = points.next()?;
        let mut bounds = Self::new(first, first);
        for point in points {
            bounds.min = bounds.min.min(point);
            bounds.max = bounds.max.max(point);
        }
        Some(bounds)
    }

    /// The smallest box holding both boxes.
    #[inline]
    pub fn union(&self, other: &Aabb) -> Aabb {
        Aabb { min: self.min.min(other.min), max: self.max.max(other.max) }
    }

    /// The centre point, `(min + max) / 2`.
    #[inline]
    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// Half the size on each axis, `(max - min) / 2`.
    #[inline]
    pub fn half_extent(&self) -> Vec3 {
        (self.max - self.min) * 0.5
    }

    /// Whether every coordinate is finite.
    #[inline]
    pub fn is_finite(&self) -> bool {
        self.min.is_finite() && self.max.is_finite()
    }

    /// Whether the box bounds something drawable.
    ///
    /// A box is not drawable when it is inverted (`min > max` on an axis) or has no size at
    /// all (squared diagonal at most [`BOUNDS_EPSILON_SQ`]); a box flat on one or two axes is
    /// drawable (a quad, a line). A box with a non-finite coordinate counts as valid: it is
    /// bad data, and the culls keep it and count it rather than letting it vanish.
    ///
    /// ```
    /// use ecs::Aabb;
    /// use glam::Vec3;
    /// assert!(!Aabb::new(Vec3::ONE, Vec3::ONE).is_valid());
    /// assert!(Aabb::new(Vec3::ZERO, Vec3::new(1.0, 0.0, 1.0)).is_valid());
    /// assert!(Aabb::new(Vec3::ZERO, Vec3::splat(f32::NAN)).is_valid());
    /// ```
    pub fn is_valid(&self) -> bool {
        // Written so that a NaN makes every comparison false, and the box valid.
        let inverted = self.min.cmpgt(self.max).any();
        let extent = self.max - self.min;
        let no_size = extent.dot(extent) <= BOUNDS_EPSILON_SQ;
        !inverted && !no_size
    }

    /// The box of this box after an affine transform, by Arvo's method.
    ///
    /// Each world axis takes the transformed centre plus the absolute values of the matrix's
    /// linear part times the half extents: the exact box of the transformed eight corners,
    /// for the cost of two matrix-vector products instead of eight. The projective row of
    /// `matrix` is ignored (world matrices are affine). A non-finite matrix gives a
    /// non-finite box, which the culls keep and report.
    #[inline]
    pub fn transformed(&self, matrix: &Mat4) -> Aabb {
        let (center, world_half) = self.transformed_center_half(matrix);
        Aabb { min: center - world_half, max: center + world_half }
    }

    /// [`Aabb::transformed`] as centre and half extents, the form the culling kernels take.
    /// Inlined across crates: the Visibility stage calls it once per object.
    #[inline]
    pub fn transformed_center_half(&self, matrix: &Mat4) -> (Vec3, Vec3) {
        let center = matrix.transform_point3(self.center());
        let half = self.half_extent();
        let world_half = matrix.x_axis.truncate().abs() * half.x
            + matrix.y_axis.truncate().abs() * half.y
            + matrix.z_axis.truncate().abs() * half.z;
        (center, world_half)
    }
}

/// A bounding sphere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    /// Centre point.
    pub center: Vec3,
    /// Radius; a culling test treats it by its absolute value.
    pub radius: f32,
}

impl Sphere {
    /// Builds a sphere from its centre and radius.
    #[inline]
    pub const fn new(center: Vec3, radius: f32) -> Self {
        Self { center, radius }
    }

    /// The sphere around the box's centre through its corners, enlarged by a few ulps so
    /// that rounding in the square root never leaves a corner outside.
    ///
    /// ```
    /// use ecs::{Aabb, Sphere};
    /// use glam::Vec3;
    /// let sphere = Sphere::from_aabb(&Aabb::new(Vec3::splat(-1.0), Vec3::splat(1.0)));
    /// assert!(sphere.radius >= 3.0f32.sqrt());
    /// ```
    pub fn from_aabb(aabb: &Aabb) -> Sphere {
        let half = aabb.half_extent().abs();
        Sphere { center: aabb.center(), radius: half.length() * (1.0 + 4.0 * f32::EPSILON) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    fn corners(aabb: &Aabb) -> [Vec3; 8] {
        let (lo, hi) = (aabb.min, aabb.max);
        std::array::from_fn(|i| {
            Vec3::new(
                if i & 1 == 0 { lo.x } else { hi.x },
                if i & 2 == 0 { lo.y } else { hi.y },
                if i & 4 == 0 { lo.z } else { hi.z },
            )
        })
    }

    #[test]
    fn transformed_matches_the_box_of_the_transformed_corners() {
        let local = Aabb::new(Vec3::new(-1.0, -2.0, 0.5), Vec3::new(3.0, 1.0, 2.0));
        let matrix = Mat4::from_scale_rotation_translation(
            Vec3::new(2.0, 0.5, 1.5),
            Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0),
            Vec3::new(10.0, -4.0, 7.0),
        );
        let arvo = local.transformed(&matrix);
        let brute = Aabb::from_points(corners(&local).map(|c| matrix.transform_point3(c))).expect("eight corners");
        assert!(
            arvo.min.abs_diff_eq(brute.min, 1e-4) && arvo.max.abs_diff_eq(brute.max, 1e-4),
            "Arvo box {arvo:?} should equal the corner box {brute:?}"
        );
    }

    #[test]
    fn validity_rejects_points_and_inverted_boxes_only() {
        assert!(!Aabb::new(Vec3::splat(2.0), Vec3::splat(2.0)).is_valid());
        assert!(!Aabb::new(Vec3::ONE, Vec3::ZERO).is_valid());
        assert!(Aabb::new(Vec3::ZERO, Vec3::X).is_valid(), "a line is drawable");
        let infinite = Aabb::new(Vec3::splat(f32::NEG_INFINITY), Vec3::splat(f32::INFINITY));
        assert!(infinite.is_valid() && !infinite.is_finite());
    }

    #[test]
    fn union_and_from_points() {
        let a = Aabb::new(Vec3::ZERO, Vec3::ONE);
        let b = Aabb::new(Vec3::splat(-1.0), Vec3::splat(0.5));
        assert_eq!(a.union(&b), Aabb::new(Vec3::splat(-1.0), Vec3::ONE));
        assert_eq!(Aabb::from_points(std::iter::empty()), None);
    }

    #[test]
    fn sphere_from_aabb_holds_every_corner() {
        let aabb = Aabb::new(Vec3::new(-3.0, 0.25, 7.0), Vec3::new(1.0e3, 0.5, 9.0));
        let sphere = Sphere::from_aabb(&aabb);
        for corner in corners(&aabb) {
            assert!(corner.distance(sphere.center) <= sphere.radius, "corner {corner} should lie inside {sphere:?}");
        }
    }

    #[test]
    fn non_finite_matrix_gives_non_finite_box() {
        let local = Aabb::new(Vec3::ZERO, Vec3::ONE);
        let bad = Mat4::from_translation(Vec3::new(f32::NAN, 0.0, 0.0));
        assert!(!local.transformed(&bad).is_finite());
    }
}
