//! The city's extent, printed at start so camera paths can be written for it.

use ecs::{Aabb, Mesh, WorldTransform};
use hecs::World;

use super::CityConfig;

/// The union of every mesh entity's box at its world transform (metres; the ground's top is
/// y = 0). `None` for an empty world.
pub fn world_bounds(world: &World) -> Option<Aabb> {
    let mut query = world.query::<(&Mesh, &WorldTransform)>();
    query.iter().map(|(mesh, transform)| mesh.bounds.transformed(&transform.0)).reduce(|a, b| a.union(&b))
}

/// The two lines the demo prints at start: `city bounds: min X Y Z max X Y Z` and
/// `city blocks: N x N of S m, streets W m wide`.
pub fn describe(world: &World, config: &CityConfig) -> [String; 2] {
    let bounds = world_bounds(world).unwrap_or(Aabb::new(glam::Vec3::ZERO, glam::Vec3::ZERO));
    let (min, max) = (bounds.min, bounds.max);
    [
        format!("city bounds: min {:.1} {:.1} {:.1} max {:.1} {:.1} {:.1}", min.x, min.y, min.z, max.x, max.y, max.z),
        format!(
            "city blocks: {} x {} of {} m, streets {} m wide",
            config.blocks, config.blocks, config.block_size, config.street_width
        ),
    ]
}
