//! The flat grid the Visibility-stage benches lay their meshes on.

use ecs::WorldTransform;
use glam::{Mat4, Vec3};

/// Where mesh `index` of `count` stands: a square grid of 2 m cells centred on the origin, on
/// the ground (row-major in x, then z).
pub fn grid_place(index: usize, count: usize) -> WorldTransform {
    let side = (count as f32).sqrt().ceil() as usize;
    let (x, z) = ((index % side) as f32, (index / side) as f32);
    WorldTransform(Mat4::from_translation(Vec3::new((x - side as f32 / 2.0) * 2.0, 0.0, (z - side as f32 / 2.0) * 2.0)))
}
