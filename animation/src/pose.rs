//! One joint's local transform (translation, rotation, scale), what clips write and blends
//! mix, and its matrix.

use glam::{Affine3A, Quat, Vec3};

use crate::fast_slerp;

/// A joint's transform relative to its parent joint: scale, then rotate, then translate (glTF's
/// TRS order).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointPose {
    /// Translation.
    pub translation: Vec3,
    /// Rotation (unit quaternion).
    pub rotation: Quat,
    /// Scale per axis.
    pub scale: Vec3,
}

impl Default for JointPose {
    fn default() -> Self {
        JointPose::IDENTITY
    }
}

impl JointPose {
    /// No movement.
    pub const IDENTITY: JointPose = JointPose { translation: Vec3::ZERO, rotation: Quat::IDENTITY, scale: Vec3::ONE };

    /// The affine matrix `translate * rotate * scale`.
    #[inline]
    pub fn to_affine(&self) -> Affine3A {
        Affine3A::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// The pose `weight` of the way from `self` to `other`: translation and scale lerped,
    /// rotation by [`fast_slerp`] along the shorter arc (a corrected nlerp, within
    /// [`SLERP_ERROR_BOUND`](crate::SLERP_ERROR_BOUND) of slerp: a crossfade costs a few
    /// multiplies a joint, not an `acos` and two `sin`s). `weight` 0 gives `self`, 1 gives
    /// `other`.
    ///
    /// ```
    /// use animation::JointPose;
    /// use glam::Vec3;
    /// let moved = JointPose { translation: Vec3::X * 2.0, ..JointPose::IDENTITY };
    /// assert_eq!(JointPose::IDENTITY.blend(&moved, 0.25).translation, Vec3::X * 0.5);
    /// ```
    #[inline]
    pub fn blend(&self, other: &JointPose, weight: f32) -> JointPose {
        JointPose {
            translation: self.translation.lerp(other.translation, weight),
            rotation: fast_slerp(self.rotation, other.rotation, weight),
            scale: self.scale.lerp(other.scale, weight),
        }
    }

    /// Whether every component is finite.
    #[inline]
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite() && self.scale.is_finite()
    }
}
