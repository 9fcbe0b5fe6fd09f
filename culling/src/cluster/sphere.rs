//! Meshlet bounds in world space, and the frustum test of a world sphere.

use glam::{Mat4, Vec3};

use crate::frustum::Frustum;

/// An upper bound of how much `world` stretches any vector (its spectral norm): the square
/// root of the Gershgorin bound of `MᵀM` over the upper 3x3 `M`. Exact for rotation and
/// scale (orthogonal columns); larger, never smaller, under shear.
///
/// GLSL twin: `max_stretch` in `cluster_cull.h`.
pub fn max_stretch(world: &Mat4) -> f32 {
    let columns = [world.x_axis.truncate(), world.y_axis.truncate(), world.z_axis.truncate()];
    let mut largest = 0.0f32;
    for row in &columns {
        let sum = row.dot(columns[0]).abs() + row.dot(columns[1]).abs() + row.dot(columns[2]).abs();
        largest = largest.max(sum);
    }
    largest.sqrt()
}

/// The world sphere of a mesh-space sphere: the centre transformed as a point, the radius
/// times [`max_stretch`], widened by `margin` (relative) for rounding.
pub fn world_sphere(world: &Mat4, center: [f32; 3], radius: f32, margin: f32) -> (Vec3, f32) {
    let center = world.transform_point3(Vec3::from(center));
    let radius = radius.abs() * max_stretch(world) * (1.0 + margin);
    (center, radius)
}

/// The world box of a mesh-space box: the centre transformed as a point and the half
/// extents through `|M|` (the exact box of the transformed box), widened by `margin`
/// (relative to the half extents plus the centre's size) for rounding.
pub fn world_box(world: &Mat4, min: [f32; 3], max: [f32; 3], margin: f32) -> (Vec3, Vec3) {
    let (min, max) = (Vec3::from(min), Vec3::from(max));
    let center = world.transform_point3((min + max) * 0.5);
    let half = ((max - min) * 0.5).abs();
    let columns = [world.x_axis.truncate().abs(), world.y_axis.truncate().abs(), world.z_axis.truncate().abs()];
    let reach = columns[0] * half.x + columns[1] * half.y + columns[2] * half.z;
    let reach = reach + (reach + center.abs()) * margin;
    (center - reach, center + reach)
}

/// Whether a world sphere is entirely outside one plane of `frustum`: the same steps as
/// [`Frustum::may_intersect_sphere`] (a non-finite sphere is never outside).
pub fn sphere_outside(frustum: &Frustum, center: Vec3, radius: f32) -> bool {
    !frustum.may_intersect_sphere(&crate::Sphere { center, radius })
}
