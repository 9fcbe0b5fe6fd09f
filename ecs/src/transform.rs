//! Local and world transforms.
//!
//! An entity places itself with a [`Transform`] relative to its parent (or to the world when it
//! has none). The hierarchy system of the `Transform` stage writes the resulting
//! [`WorldTransform`], which every later stage reads: nothing downstream composes matrices
//! again.

use glam::{Mat4, Quat, Vec3};

/// Position, orientation and size of an entity relative to its parent, or to the world for a
/// root.
///
/// Applied in the order scale, then rotation, then translation:
/// `matrix = T * R * S` (column vectors).
///
/// Read by the hierarchy system in the `Transform` stage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// Offset from the parent's origin, in the parent's space.
    pub translation: Vec3,
    /// Orientation relative to the parent; expected to be unit length.
    pub rotation: Quat,
    /// Size on each local axis (1 = unchanged). Negative values mirror.
    pub scale: Vec3,
}

impl Default for Transform {
    fn default() -> Self {
        Transform::IDENTITY
    }
}

impl Transform {
    /// No offset, no rotation, unit scale.
    pub const IDENTITY: Transform = Transform { translation: Vec3::ZERO, rotation: Quat::IDENTITY, scale: Vec3::ONE };

    /// A pure translation.
    pub const fn from_translation(translation: Vec3) -> Transform {
        Transform { translation, rotation: Quat::IDENTITY, scale: Vec3::ONE }
    }

    /// A translation and a rotation, unit scale.
    pub const fn from_translation_rotation(translation: Vec3, rotation: Quat) -> Transform {
        Transform { translation, rotation, scale: Vec3::ONE }
    }

    /// The translation, rotation and scale of an affine matrix without shear (a world matrix
    /// of the hierarchy, say).
    pub fn from_matrix(matrix: Mat4) -> Transform {
        let (scale, rotation, translation) = matrix.to_scale_rotation_translation();
        Transform { translation, rotation, scale }
    }

    /// The same transform with `scale`.
    pub const fn with_scale(self, scale: Vec3) -> Transform {
        Transform { scale, ..self }
    }

    /// The local matrix `T * R * S`.
    ///
    /// ```
    /// use ecs::Transform;
    /// use glam::{Quat, Vec3};
    /// let local = Transform::from_translation(Vec3::X).with_scale(Vec3::splat(2.0));
    /// assert_eq!(local.to_matrix().transform_point3(Vec3::Y), Vec3::new(1.0, 2.0, 0.0));
    /// ```
    #[inline]
    pub fn to_matrix(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }
}

/// The entity's world matrix: its parent's world matrix times its local [`Transform`], at any
/// depth.
///
/// Written by the hierarchy system in the `Transform` stage for every entity that has a
/// `Transform`; an entity spawned with a `Transform` and no `WorldTransform` gets one at the end
/// of its first `Transform` stage (already holding this frame's value). An entity with a
/// `WorldTransform` but no `Transform` is left alone, so a host may place it directly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldTransform(pub Mat4);

impl Default for WorldTransform {
    fn default() -> Self {
        WorldTransform(Mat4::IDENTITY)
    }
}

impl WorldTransform {
    /// The world-space position of the entity's origin.
    #[inline]
    pub fn translation(&self) -> Vec3 {
        self.0.w_axis.truncate()
    }

    /// Whether every element of the matrix is finite.
    #[inline]
    pub fn is_finite(&self) -> bool {
        self.0.is_finite()
    }
}

impl From<Transform> for WorldTransform {
    fn from(local: Transform) -> WorldTransform {
        WorldTransform(local.to_matrix())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_applies_scale_then_rotation_then_translation() {
        let local = Transform {
            translation: Vec3::new(10.0, 0.0, 0.0),
            rotation: Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
            scale: Vec3::splat(2.0),
        };
        let moved = local.to_matrix().transform_point3(Vec3::X);
        // Scale: (2,0,0); rotate 90 degrees about z: (0,2,0); translate: (10,2,0).
        assert!(moved.abs_diff_eq(Vec3::new(10.0, 2.0, 0.0), 1e-5), "expected (10,2,0), got {moved}");
    }

    #[test]
    fn world_transform_reports_translation() {
        let world = WorldTransform::from(Transform::from_translation(Vec3::new(1.0, 2.0, 3.0)));
        assert_eq!(world.translation(), Vec3::new(1.0, 2.0, 3.0));
        assert!(world.is_finite());
        assert!(!WorldTransform(Mat4::from_translation(Vec3::splat(f32::NAN))).is_finite());
    }
}
