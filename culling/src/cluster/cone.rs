//! Back-face rejection of a meshlet with meshopt's normal cone, in mesh space.
//!
//! Why mesh space: a triangle faces the eye when `dot(n, eye - p) > 0`, and for an affine
//! `world` with a positive determinant `dot(M⁻ᵀn, M(eye - p)) = dot(n, eye - p)`, so the
//! facing of every triangle is the same in mesh space with the eye brought back by
//! `world⁻¹`. meshopt's test, `dot(normalize(apex - eye), axis) >= cutoff`, is then used as
//! meshopt states it, whatever the non-uniform scale or shear. A mirroring `world` (negative
//! determinant) swaps the winding the rasterizer sees, so its meshlets are never rejected.

use glam::{DMat4, DVec4, Mat4, Vec3};

use super::ClusterBounds;

/// The eye of a perspective `view_projection` in world space: the point the matrix sends to
/// `x = y = w = 0`. `None` for an orthographic (or degenerate, or non-finite) matrix, whose
/// views the cone test then leaves alone.
pub fn view_eye(view_projection: &Mat4) -> Option<Vec3> {
    let matrix = view_projection.as_dmat4();
    if !matrix.is_finite() || matrix.determinant() == 0.0 {
        return None;
    }
    let eye: DVec4 = DMat4::inverse(&matrix) * DVec4::Z;
    let scale = eye.truncate().length();
    // An orthographic view puts its "eye" at infinity (w = 0).
    if !(eye.w.abs() > scale * 1.0e-9) {
        return None;
    }
    let point = (eye.truncate() / eye.w).as_vec3();
    point.is_finite().then_some(point)
}

/// Whether the normal cone proves every triangle of the meshlet faces away from `eye`
/// (world space). Conservative: a degenerate cone (cutoff 1 or more, or not finite), a
/// mirroring or singular `world`, an eye at the apex, or anything non-finite keeps the
/// meshlet; `margin` is added to the cutoff for the rounding of `world⁻¹`.
///
/// GLSL twin: `cone_rejects` in `cluster_cull.h`.
pub fn cone_rejects(world: &Mat4, bounds: &ClusterBounds, eye: Vec3, margin: f32) -> bool {
    if !(bounds.cone_cutoff < 1.0) {
        return false;
    }
    let Some(local_eye) = mesh_space_eye(world, eye) else { return false };
    let to_apex = Vec3::from(bounds.cone_apex) - local_eye;
    let length = to_apex.length();
    if !(length > 0.0) {
        return false;
    }
    // NaN anywhere makes the comparison false: kept.
    to_apex.dot(Vec3::from(bounds.cone_axis)) / length >= bounds.cone_cutoff + margin
}

/// `world⁻¹ · eye` by cofactors (the rows of the 3x3 inverse are the columns' cross products
/// over the determinant), or `None` when the determinant is not positive (mirroring or
/// singular). GLSL twin: in `cone_rejects` of `cluster_cull.h`.
pub fn mesh_space_eye(world: &Mat4, eye: Vec3) -> Option<Vec3> {
    let (c0, c1, c2) = (world.x_axis.truncate(), world.y_axis.truncate(), world.z_axis.truncate());
    let r0 = c1.cross(c2);
    let det = c0.dot(r0);
    if !(det > 0.0) {
        return None;
    }
    let offset = eye - world.w_axis.truncate();
    Some(Vec3::new(r0.dot(offset), c2.cross(c0).dot(offset), c0.cross(c1).dot(offset)) / det)
}
