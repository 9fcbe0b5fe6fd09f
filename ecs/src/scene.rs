//! Scene building for tests, samples and benchmarks: mesh entities, parented chains, cameras,
//! and large batches spawned in one call.
//!
//! Every mesh entity gets `Transform`, `WorldTransform` (its local matrix: right for a root,
//! and overwritten by the first `Transform` stage otherwise), `Mesh` and `Visible(true)`.
//!
//! ```
//! use ecs::scene;
//! let mut world = hecs::World::new();
//! let forest = scene::spawn_forest(&mut world, 10, &[3, 2], scene::unit_cube_mesh());
//! assert_eq!(forest.roots.len(), 10);
//! assert_eq!(forest.entities.len(), 100, "10 roots, 3 children each, 2 grandchildren each");
//! ```

use glam::{Quat, Vec3};
use hecs::{Entity, World};

use crate::bounds::Aabb;
use crate::camera::Camera;
use crate::hierarchy::{self, Children, Parent};
use crate::render::{MaterialHandle, Mesh, MeshHandle, Visible};
use crate::transform::{Transform, WorldTransform};

/// A mesh of a unit cube centred on its origin (mesh 0, material 0).
pub fn unit_cube_mesh() -> Mesh {
    Mesh::new(MeshHandle(0), MaterialHandle(0), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)))
}

/// Spawns one mesh entity placed at `transform` (as a root).
pub fn spawn_mesh(world: &mut World, mesh: Mesh, transform: Transform) -> Entity {
    world.spawn((transform, WorldTransform::from(transform), mesh, Visible(true)))
}

/// Spawns a camera entity placed at `transform`.
pub fn spawn_camera(world: &mut World, camera: Camera, transform: Transform) -> Entity {
    world.spawn((camera, transform, WorldTransform::from(transform)))
}

/// A camera at `eye` looking at `target` with +Y up (falls back to looking down -Z when the
/// two points coincide or the direction is vertical).
pub fn look_at(eye: Vec3, target: Vec3) -> Transform {
    let forward = (target - eye).normalize_or_zero();
    let up = if forward.cross(Vec3::Y).length_squared() > 1.0e-8 { Vec3::Y } else { Vec3::Z };
    if forward == Vec3::ZERO {
        return Transform::from_translation(eye);
    }
    // Camera looks down its -Z: build the basis whose -Z is `forward`.
    let back = -forward;
    let right = up.cross(back).normalize();
    let true_up = back.cross(right);
    let rotation = Quat::from_mat3(&glam::Mat3::from_cols(right, true_up, back));
    Transform::from_translation_rotation(eye, rotation)
}

/// Spawns a chain of mesh entities, each the child of the one before; the first is attached
/// to `parent` when given. Returns the chain, first to last.
///
/// # Panics
/// If `parent` is not alive (a programming error in the caller's scene setup).
pub fn spawn_chain(world: &mut World, parent: Option<Entity>, links: &[Transform], mesh: Mesh) -> Vec<Entity> {
    let mut chain = Vec::with_capacity(links.len());
    let mut above = parent;
    for link in links {
        let entity = spawn_mesh(world, mesh, *link);
        if let Some(above) = above {
            hierarchy::set_parent(world, entity, above)
                .expect("a fresh entity under a living parent cannot make a loop");
        }
        chain.push(entity);
        above = Some(entity);
    }
    chain
}

/// Spawns one mesh entity per item in a single `World::spawn_batch` (one archetype move, one
/// allocation per column). Returns the entities in item order.
pub fn spawn_meshes(world: &mut World, items: impl IntoIterator<Item = (Transform, Mesh)>) -> Vec<Entity> {
    world
        .spawn_batch(
            items
                .into_iter()
                .map(|(transform, mesh)| (transform, WorldTransform::from(transform), mesh, Visible(true))),
        )
        .collect()
}

/// Spawns `count` copies of `mesh` on a square grid in the XZ plane, `spacing` apart, in one
/// batch.
pub fn spawn_mesh_grid(world: &mut World, count: usize, spacing: f32, mesh: Mesh) -> Vec<Entity> {
    let side = grid_side(count);
    spawn_meshes(world, (0..count).map(|index| (grid_transform(index, side, spacing), mesh)))
}

/// The entities of a forest built by [`spawn_forest`].
#[derive(Clone, Debug, Default)]
pub struct Forest {
    /// The roots, in grid order.
    pub roots: Vec<Entity>,
    /// Every entity, level by level (roots first).
    pub entities: Vec<Entity>,
}

/// Spawns `roots` trees of mesh entities: each node of level `k` gets `branching[k]` children,
/// so a tree has `1 + b0 + b0*b1 + ...` nodes and `branching.len() + 1` levels. Roots sit on a
/// grid 10 units apart; children are offset, turned and scaled a little so every level of the
/// product matters. Each level is spawned with one `spawn_batch`; `Children` lists are filled
/// in attachment order.
pub fn spawn_forest(world: &mut World, roots: usize, branching: &[usize], mesh: Mesh) -> Forest {
    let side = grid_side(roots);
    let root_entities = spawn_meshes(world, (0..roots).map(|index| (grid_transform(index, side, 10.0), mesh)));
    let mut entities = root_entities.clone();
    let mut level = root_entities.clone();
    for &count in branching {
        let parents = std::mem::take(&mut level);
        let spawned: Vec<Entity> = world
            .spawn_batch(parents.iter().flat_map(|&parent| {
                (0..count).map(move |slot| {
                    let local = child_transform(slot, count);
                    (local, WorldTransform::from(local), mesh, Visible(true), Parent(parent))
                })
            }))
            .collect();
        if count > 0 {
            for (parent, children) in parents.iter().zip(spawned.chunks(count)) {
                world.insert_one(*parent, Children(children.to_vec())).expect("the parent was spawned just above");
            }
        }
        entities.extend_from_slice(&spawned);
        level = spawned;
    }
    Forest { roots: root_entities, entities }
}

fn grid_side(count: usize) -> usize {
    ((count as f64).sqrt().ceil() as usize).max(1)
}

fn grid_transform(index: usize, side: usize, spacing: f32) -> Transform {
    let column = (index % side) as f32;
    let row = (index / side) as f32;
    Transform::from_translation(Vec3::new(column * spacing, 0.0, row * spacing))
}

fn child_transform(slot: usize, count: usize) -> Transform {
    let spread = slot as f32 - (count as f32 - 1.0) * 0.5;
    Transform {
        translation: Vec3::new(spread * 2.0, 1.5, 0.0),
        rotation: Quat::from_rotation_y(0.3 * slot as f32 + 0.1),
        scale: Vec3::splat(0.8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_is_parented_in_order() {
        let mut world = World::new();
        let links = [Transform::from_translation(Vec3::X); 3];
        let chain = spawn_chain(&mut world, None, &links, unit_cube_mesh());
        assert_eq!(hierarchy::parent_of(&world, chain[0]), None);
        assert_eq!(hierarchy::parent_of(&world, chain[2]), Some(chain[1]));
        assert_eq!(hierarchy::children(&world, chain[0]), vec![chain[1]]);
    }

    #[test]
    fn forest_links_children_in_order() {
        let mut world = World::new();
        let forest = spawn_forest(&mut world, 4, &[3, 2], unit_cube_mesh());
        assert_eq!(forest.entities.len(), 4 * 10);
        let first_children = hierarchy::children(&world, forest.roots[0]);
        assert_eq!(first_children.len(), 3);
        for child in first_children {
            assert_eq!(hierarchy::parent_of(&world, child), Some(forest.roots[0]));
            assert_eq!(hierarchy::children(&world, child).len(), 2);
        }
    }

    #[test]
    fn look_at_faces_the_target() {
        let transform = look_at(Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO);
        let forward = transform.rotation * Vec3::NEG_Z;
        assert!(forward.abs_diff_eq(Vec3::NEG_Z, 1e-5), "expected to look down -Z, got {forward}");
        let down = look_at(Vec3::Y, Vec3::ZERO).rotation * Vec3::NEG_Z;
        assert!(down.abs_diff_eq(Vec3::NEG_Y, 1e-5), "vertical view must work, got {down}");
    }

    #[test]
    fn grid_spawns_the_requested_count() {
        let mut world = World::new();
        let entities = spawn_mesh_grid(&mut world, 1000, 2.0, unit_cube_mesh());
        assert_eq!(entities.len(), 1000);
        assert_eq!(world.len(), 1000);
    }
}

/// Triangle geometry of a generated mesh: positions, one normal per position, and indices
/// wound counter-clockwise seen from outside.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Geometry {
    /// Vertex positions.
    pub positions: Vec<[f32; 3]>,
    /// Unit normal of each vertex.
    pub normals: Vec<[f32; 3]>,
    /// Three indices per triangle.
    pub indices: Vec<u32>,
}

/// A box from -0.5 to 0.5 with `side` x `side` quads per face; faces do not share vertices
/// (flat normals). Large closed meshes for meshlet and cluster-culling tests.
///
/// ```
/// let cube = ecs::scene::subdivided_box(2);
/// assert_eq!(cube.indices.len(), 6 * 2 * 2 * 2 * 3, "six faces of 2 x 2 quads");
/// assert_eq!(cube.positions.len(), cube.normals.len());
/// ```
pub fn subdivided_box(side: u32) -> Geometry {
    let mut geometry = Geometry::default();
    // (normal axis, sign): each face spans the other two axes.
    for (axis, sign) in [(0, 1.0f32), (0, -1.0), (1, 1.0), (1, -1.0), (2, 1.0), (2, -1.0)] {
        let (u_axis, v_axis) = ((axis + 1) % 3, (axis + 2) % 3);
        let first = geometry.positions.len() as u32;
        for v in 0..=side {
            for u in 0..=side {
                let mut point = [0.0f32; 3];
                point[axis] = 0.5 * sign;
                point[u_axis] = u as f32 / side as f32 - 0.5;
                point[v_axis] = v as f32 / side as f32 - 0.5;
                geometry.positions.push(point);
                let mut normal = [0.0f32; 3];
                normal[axis] = sign;
                geometry.normals.push(normal);
            }
        }
        let row = side + 1;
        for v in 0..side {
            for u in 0..side {
                let corner = first + v * row + u;
                let (a, b, c, d) = (corner, corner + 1, corner + row + 1, corner + row);
                // u x v points along +axis: counter-clockwise from outside for sign > 0.
                if sign > 0.0 {
                    geometry.indices.extend_from_slice(&[a, b, c, a, c, d]);
                } else {
                    geometry.indices.extend_from_slice(&[a, c, b, a, d, c]);
                }
            }
        }
    }
    geometry
}

/// A unit sphere of `segments` around and `segments / 2` rings, without the degenerate
/// triangles at the poles.
///
/// ```
/// let sphere = ecs::scene::uv_sphere(8);
/// assert_eq!(sphere.indices.len(), (8 * 4 * 2 - 2 * 8) * 3, "two per quad, one per pole quad");
/// ```
pub fn uv_sphere(segments: u32) -> Geometry {
    let rings = segments / 2;
    let mut positions = Vec::new();
    for ring in 0..=rings {
        let polar = std::f32::consts::PI * ring as f32 / rings as f32;
        for segment in 0..=segments {
            let azimuth = std::f32::consts::TAU * segment as f32 / segments as f32;
            positions.push([polar.sin() * azimuth.cos(), polar.cos(), polar.sin() * azimuth.sin()]);
        }
    }
    let row = segments + 1;
    let mut indices = Vec::new();
    for ring in 0..rings {
        for segment in 0..segments {
            let corner = ring * row + segment;
            if ring != 0 {
                indices.extend_from_slice(&[corner, corner + 1, corner + row]);
            }
            if ring + 1 != rings {
                indices.extend_from_slice(&[corner + 1, corner + row + 1, corner + row]);
            }
        }
    }
    Geometry { normals: positions.clone(), positions, indices }
}
