//! Where the viewer puts several files' models: side by side along +x by their bounds, so
//! none overlaps another (the default), or each at its own origin (`--as-is`).
//!
//! Side by side, the first model stays at its own origin (one file is drawn exactly where its
//! nodes put it) and each next one is shifted along x only, so that its bounds start a gap
//! after the previous one's end; y and z stay the file's own. The gap is a tenth of the
//! largest model's largest side, so models of any scale are set apart visibly.

use assets::GltfScene;
use ecs::Aabb;
use glam::Vec3;

/// How [`place_models`] arranges the models.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Placement {
    /// Along +x by their bounds, the first at its origin, a gap between neighbours.
    #[default]
    SideBySide,
    /// Each at its own origin (models may overlap).
    AsIs,
}

/// The scene's bounds: every drawable node's mesh box in world space (`None` without one).
pub fn scene_bounds(scene: &GltfScene) -> Option<Aabb> {
    let mut bounds: Option<Aabb> = None;
    for (node, world) in scene.nodes.iter().zip(scene.node_worlds()) {
        for &mesh in &node.meshes {
            let mesh = &scene.meshes[mesh];
            let local_box = Aabb::new(Vec3::from(mesh.bounds_min), Vec3::from(mesh.bounds_max));
            let world_box = local_box.transformed(&world);
            bounds = Some(bounds.map_or(world_box, |all| all.union(&world_box)));
        }
    }
    bounds
}

/// The translation of each model (given by its bounds; `None` for one with nothing to draw,
/// which stays at its origin and takes no room) under `placement`.
///
/// ```
/// use ecs::Aabb;
/// use glam::Vec3;
/// use samples::viewer::{place_models, Placement};
/// let unit = Aabb::new(Vec3::splat(-1.0), Vec3::splat(1.0));
/// let offsets = place_models(&[Some(unit), None, Some(unit)], Placement::SideBySide);
/// // The third starts a tenth of the largest side (0.2) after the first ends.
/// assert_eq!(offsets, vec![Vec3::ZERO, Vec3::ZERO, Vec3::new(2.2, 0.0, 0.0)]);
/// assert_eq!(place_models(&[Some(unit), Some(unit)], Placement::AsIs), vec![Vec3::ZERO; 2]);
/// ```
pub fn place_models(bounds: &[Option<Aabb>], placement: Placement) -> Vec<Vec3> {
    if placement == Placement::AsIs {
        return vec![Vec3::ZERO; bounds.len()];
    }
    let largest = bounds.iter().flatten().map(|bounds| (bounds.max - bounds.min).max_element()).fold(0.0, f32::max);
    let gap = largest * 0.1;
    // The x where the next model's bounds may start.
    let mut cursor: Option<f32> = None;
    bounds
        .iter()
        .map(|bounds| {
            let Some(bounds) = bounds else {
                return Vec3::ZERO;
            };
            let shift = cursor.map_or(0.0, |start| start - bounds.min.x);
            cursor = Some(bounds.max.x + shift + gap);
            Vec3::new(shift, 0.0, 0.0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_of_any_scale_side_by_side_do_not_overlap() {
        let tiny = Aabb::new(Vec3::new(0.01, -0.01, 0.0), Vec3::new(0.03, 0.01, 0.02));
        let huge = Aabb::new(Vec3::new(-1000.0, 0.0, -5.0), Vec3::new(1000.0, 2000.0, 5.0));
        let bounds = [Some(tiny), Some(huge), Some(tiny)];
        let offsets = place_models(&bounds, Placement::SideBySide);
        assert_eq!(offsets[0], Vec3::ZERO, "the first model stays at its origin");
        let placed: Vec<Aabb> = bounds
            .iter()
            .zip(&offsets)
            .map(|(bounds, &offset)| bounds.map(|b| Aabb::new(b.min + offset, b.max + offset)).unwrap())
            .collect();
        for pair in placed.windows(2) {
            assert!(pair[1].min.x > pair[0].max.x, "each model starts after the previous ends: {pair:?}");
            assert!((pair[1].min.x - pair[0].max.x - 200.0).abs() < 1.0e-3, "a tenth of the largest side apart");
        }
        assert!(offsets.iter().all(|offset| offset.y == 0.0 && offset.z == 0.0), "only x moves: {offsets:?}");
    }
}
