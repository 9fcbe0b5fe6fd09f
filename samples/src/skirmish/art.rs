//! The skirmish's meshes: ground, trees, rocks, crates and huts (the static props), a unit's
//! body, the pack and the torch it carries, and an arrow; generated in code from a few
//! low-poly shapes and processed by meshopt (LOD chain with screen-space hand-over, meshlets)
//! into one [`MeshLibrary`], with each handle's [`Lod`] chain.

use assets::{process_meshes, MeshData, ProcessOptions, ProcessedMesh};
use culling::occlusion::OccluderMesh;
use ecs::{Aabb, BaseColor, Lod, LodLevel, MaterialHandle, Mesh, MeshHandle};
use glam::Vec3;
use renderer::{MeshLibrary, MeshVertices};

/// The mesh handles of the skirmish. Each handle is the library id of its finest level.
#[derive(Clone, Copy, Debug)]
pub struct SkirmishMeshes;

impl SkirmishMeshes {
    /// The ground under the whole map.
    pub const GROUND: MeshHandle = MeshHandle(1);
    /// A broadleaf tree.
    pub const TREE: MeshHandle = MeshHandle(2);
    /// A boulder.
    pub const ROCK: MeshHandle = MeshHandle(3);
    /// A supply crate.
    pub const CRATE: MeshHandle = MeshHandle(4);
    /// A hut with a pyramid roof (the props that occlude).
    pub const HUT: MeshHandle = MeshHandle(5);
    /// A unit's body.
    pub const UNIT: MeshHandle = MeshHandle(6);
    /// The pack a unit carries.
    pub const PACK: MeshHandle = MeshHandle(7);
    /// The torch a torch bearer carries.
    pub const TORCH: MeshHandle = MeshHandle(8);
    /// An arrow in flight.
    pub const ARROW: MeshHandle = MeshHandle(9);

    /// The static props, in the order [`SkirmishLibrary::prop`] picks them.
    pub const PROPS: [MeshHandle; 4] = [Self::TREE, Self::ROCK, Self::CRATE, Self::HUT];
}

/// Height of a hut's walls, as a share of its mesh's height: the part its occluder covers.
const HUT_WALLS: f32 = 0.6;

/// The skirmish's meshes, their local boxes and their level chains.
pub struct SkirmishLibrary {
    /// The meshes (id = handle for the finest levels; coarser levels after them).
    pub library: MeshLibrary,
    /// Per handle (index = handle id): its box and level chain.
    shapes: Vec<Option<(Aabb, Lod)>>,
}

/// Every handle with a mesh, its generator's output.
fn generators(field: f32) -> Vec<(MeshHandle, MeshData)> {
    vec![
        (SkirmishMeshes::GROUND, ground(field)),
        (SkirmishMeshes::TREE, tree()),
        (SkirmishMeshes::ROCK, rock()),
        (SkirmishMeshes::CRATE, crate_box()),
        (SkirmishMeshes::HUT, hut()),
        (SkirmishMeshes::UNIT, unit()),
        (SkirmishMeshes::PACK, pack()),
        (SkirmishMeshes::TORCH, torch()),
        (SkirmishMeshes::ARROW, arrow()),
    ]
}

impl SkirmishLibrary {
    /// Generates and processes (on the job system) every mesh, for a map `field` metres
    /// square.
    pub fn build(field: f32) -> SkirmishLibrary {
        let generated = generators(field);
        let sources: Vec<MeshData> = generated.iter().map(|(_, mesh)| mesh.clone()).collect();
        let processed: Vec<ProcessedMesh> = process_meshes(&sources, &ProcessOptions::default())
            .into_iter()
            .map(|result| result.expect("the generated meshes are valid"))
            .collect();
        let mut library = MeshLibrary::with_unit_cube();
        // Finest levels first, in handle order, so that a handle is the id of its mesh.
        for ((handle, _), mesh) in generated.iter().zip(&processed) {
            let id = add_level(&mut library, mesh, 0);
            debug_assert_eq!(id, handle.0, "the finest level of a handle has the handle's id");
        }
        let mut shapes = vec![None; generated.len() + 1];
        for ((handle, _), mesh) in generated.iter().zip(&processed) {
            let levels: Vec<LodLevel> = mesh
                .levels
                .iter()
                .enumerate()
                .map(|(level, data)| {
                    let id = if level == 0 { handle.0 } else { add_level(&mut library, mesh, level) };
                    LodLevel { mesh: MeshHandle(id), max_distance: data.max_distance }
                })
                .collect();
            let bounds = Aabb::new(Vec3::from(mesh.bounds_min), Vec3::from(mesh.bounds_max));
            shapes[handle.0 as usize] = Some((bounds, Lod { levels: levels.into(), bias: 1.0 }));
        }
        SkirmishLibrary { library, shapes }
    }

    /// The drawable of `handle`, with its mesh's box, in material `material`.
    ///
    /// # Panics
    /// When `handle` is not one of [`SkirmishMeshes`]' handles.
    pub fn mesh(&self, handle: MeshHandle) -> Mesh {
        let (bounds, _) = self.shape(handle);
        Mesh::new(handle, MaterialHandle(handle.0), *bounds)
    }

    /// The level chain of `handle`, biased by `scale` (the entity's largest scale: the
    /// chain's distances are in mesh units).
    ///
    /// # Panics
    /// When `handle` is not one of [`SkirmishMeshes`]' handles.
    pub fn lod(&self, handle: MeshHandle, scale: f32) -> Lod {
        let (_, lod) = self.shape(handle);
        Lod { levels: lod.levels.clone(), bias: if scale.is_finite() && scale > 0.0 { scale } else { 1.0 } }
    }

    fn shape(&self, handle: MeshHandle) -> &(Aabb, Lod) {
        self.shapes
            .get(handle.0 as usize)
            .and_then(Option::as_ref)
            .unwrap_or_else(|| panic!("{handle:?} is not a skirmish mesh"))
    }

    /// The prop for a roll `roll` in `[0, 1)`: trees 45%, rocks 25%, crates 20%, huts 10%.
    pub fn prop(roll: f32) -> MeshHandle {
        match roll {
            roll if roll < 0.45 => SkirmishMeshes::TREE,
            roll if roll < 0.70 => SkirmishMeshes::ROCK,
            roll if roll < 0.90 => SkirmishMeshes::CRATE,
            _ => SkirmishMeshes::HUT,
        }
    }
}

/// The occluder of a hut: its walls (the roof above them is narrower at the top).
pub fn hut_occluder() -> OccluderMesh {
    let (min, max) = hut_box();
    OccluderMesh::from_box(&Aabb::new(min, Vec3::new(max.x, max.y * HUT_WALLS, max.z)))
        .expect("a box of positive size is a valid occluder")
}

/// The colour of the `index`-th object of `handle`, shaded a little per object.
pub fn color(handle: MeshHandle, index: usize) -> BaseColor {
    let shade = (index.wrapping_mul(2_654_435_761) >> 13) as u8 % 40;
    let [red, green, blue]: [u8; 3] = match handle {
        SkirmishMeshes::GROUND => [96, 110, 70],
        SkirmishMeshes::TREE => [50, 120, 45],
        SkirmishMeshes::ROCK => [120, 118, 112],
        SkirmishMeshes::CRATE => [140, 100, 55],
        SkirmishMeshes::HUT => [160, 130, 95],
        SkirmishMeshes::UNIT => [60, 70, 160],
        SkirmishMeshes::PACK => [110, 80, 40],
        SkirmishMeshes::TORCH => [230, 170, 40],
        SkirmishMeshes::ARROW => [40, 40, 40],
        _ => [255, 0, 255],
    };
    BaseColor::from_rgba8([red.saturating_add(shade), green.saturating_add(shade), blue.saturating_add(shade), 255])
}

fn add_level(library: &mut MeshLibrary, mesh: &ProcessedMesh, level: usize) -> u32 {
    let vertices = MeshVertices { positions: &mesh.positions, normals: &mesh.normals, uvs: &mesh.uvs };
    let level = &mesh.levels[level];
    let levels: [(&[u32], &[renderer::Meshlet]); 1] = [(&level.indices, &level.meshlets)];
    library.add_mesh_levels(vertices, &levels).expect("processed meshes are valid library meshes").start
}

/// Appends a flat polygon (a fan over `corners`, counter-clockwise seen from its front), with
/// vertices of its own so its normal is the face's.
fn polygon(mesh: &mut MeshData, corners: &[Vec3]) {
    let first = mesh.positions.len() as u32;
    mesh.positions.extend(corners.iter().map(|corner| corner.to_array()));
    for index in 1..corners.len() as u32 - 1 {
        mesh.indices.extend_from_slice(&[first, first + index, first + index + 1]);
    }
}

/// Appends an axis-aligned box without its floor.
fn cuboid(mesh: &mut MeshData, min: Vec3, max: Vec3) {
    let corner = |x: bool, y: bool, z: bool| {
        Vec3::new(if x { max.x } else { min.x }, if y { max.y } else { min.y }, if z { max.z } else { min.z })
    };
    let (f, t) = (false, true);
    polygon(mesh, &[corner(f, f, t), corner(t, f, t), corner(t, t, t), corner(f, t, t)]);
    polygon(mesh, &[corner(t, f, f), corner(f, f, f), corner(f, t, f), corner(t, t, f)]);
    polygon(mesh, &[corner(t, f, t), corner(t, f, f), corner(t, t, f), corner(t, t, t)]);
    polygon(mesh, &[corner(f, f, f), corner(f, f, t), corner(f, t, t), corner(f, t, f)]);
    polygon(mesh, &[corner(f, t, t), corner(t, t, t), corner(t, t, f), corner(f, t, f)]);
}

/// A point on the unit circle in the ground plane, `segment` of `segments` around
/// (counter-clockwise seen from above).
fn around(segment: u32, segments: u32) -> Vec3 {
    let angle = std::f32::consts::TAU * segment as f32 / segments as f32;
    Vec3::new(angle.cos(), 0.0, -angle.sin())
}

/// Appends a vertical cone (a cylinder when `top` equals `bottom`) from `base` up `height`,
/// radius `bottom` at the base and `top` at the top, with its caps.
fn frustum(mesh: &mut MeshData, base: Vec3, (bottom, top): (f32, f32), height: f32, segments: u32) {
    let lift = Vec3::Y * height;
    for segment in 0..segments {
        let (here, next) = (around(segment, segments), around(segment + 1, segments));
        let (low, low_next) = (base + here * bottom, base + next * bottom);
        let (high, high_next) = (base + lift + here * top, base + lift + next * top);
        if top > 0.0 {
            polygon(mesh, &[low, low_next, high_next, high]);
        } else {
            polygon(mesh, &[low, low_next, base + lift]);
        }
    }
    let ring = |radius: f32, height: f32| {
        (0..segments).map(move |segment| base + around(segment, segments) * radius + Vec3::Y * height)
    };
    if top > 0.0 {
        polygon(mesh, &ring(top, height).collect::<Vec<_>>());
    }
    polygon(mesh, &ring(bottom, 0.0).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>());
}

/// Appends a smooth ellipsoid of `radii` around `center` (shared vertices: normals are
/// computed smooth).
fn ellipsoid(mesh: &mut MeshData, center: Vec3, radii: Vec3, rings: u32, segments: u32) {
    let first = mesh.positions.len() as u32;
    for ring in 0..=rings {
        let polar = std::f32::consts::PI * ring as f32 / rings as f32;
        for segment in 0..=segments {
            let unit = around(segment, segments) * polar.sin() + Vec3::Y * polar.cos();
            mesh.positions.push((center + unit * radii).to_array());
        }
    }
    let row = segments + 1;
    for ring in 0..rings {
        for segment in 0..segments {
            let corner = first + ring * row + segment;
            mesh.indices.extend_from_slice(&[
                corner,
                corner + row,
                corner + 1,
                corner + 1,
                corner + row,
                corner + row + 1,
            ]);
        }
    }
}

fn ground(field: f32) -> MeshData {
    let mut mesh = MeshData::default();
    let margin = field * 0.05;
    let (low, high) = (-margin, field + margin);
    polygon(
        &mut mesh,
        &[Vec3::new(low, 0.0, high), Vec3::new(high, 0.0, high), Vec3::new(high, 0.0, low), Vec3::new(low, 0.0, low)],
    );
    mesh
}

fn tree() -> MeshData {
    let mut mesh = MeshData::default();
    frustum(&mut mesh, Vec3::ZERO, (0.25, 0.18), 2.5, 8);
    ellipsoid(&mut mesh, Vec3::new(0.0, 4.2, 0.0), Vec3::new(2.0, 2.3, 2.0), 12, 18);
    mesh
}

fn rock() -> MeshData {
    let mut mesh = MeshData::default();
    ellipsoid(&mut mesh, Vec3::new(0.0, 0.55, 0.0), Vec3::new(1.1, 0.7, 0.9), 10, 14);
    mesh
}

fn crate_box() -> MeshData {
    let mut mesh = MeshData::default();
    cuboid(&mut mesh, Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.0, 0.5));
    // Battens on the lid.
    cuboid(&mut mesh, Vec3::new(-0.5, 1.0, -0.08), Vec3::new(0.5, 1.06, 0.08));
    mesh
}

/// The box a hut's mesh fills.
fn hut_box() -> (Vec3, Vec3) {
    (Vec3::new(-2.0, 0.0, -2.0), Vec3::new(2.0, 4.0, 2.0))
}

fn hut() -> MeshData {
    let (min, max) = hut_box();
    let walls = max.y * HUT_WALLS;
    let mut mesh = MeshData::default();
    cuboid(&mut mesh, min, Vec3::new(max.x, walls, max.z));
    // A pyramid roof from the top of the walls to the ridge.
    let eave = |x: f32, z: f32| Vec3::new(x, walls, z);
    let apex = Vec3::new(0.0, max.y, 0.0);
    polygon(&mut mesh, &[eave(min.x, max.z), eave(max.x, max.z), apex]);
    polygon(&mut mesh, &[eave(max.x, max.z), eave(max.x, min.z), apex]);
    polygon(&mut mesh, &[eave(max.x, min.z), eave(min.x, min.z), apex]);
    polygon(&mut mesh, &[eave(min.x, min.z), eave(min.x, max.z), apex]);
    mesh
}

fn unit() -> MeshData {
    let mut mesh = MeshData::default();
    frustum(&mut mesh, Vec3::ZERO, (0.3, 0.22), 1.45, 10);
    ellipsoid(&mut mesh, Vec3::new(0.0, 1.62, 0.0), Vec3::splat(0.17), 8, 12);
    mesh
}

fn pack() -> MeshData {
    let mut mesh = MeshData::default();
    cuboid(&mut mesh, Vec3::new(-0.2, -0.25, -0.12), Vec3::new(0.2, 0.25, 0.12));
    mesh
}

fn torch() -> MeshData {
    let mut mesh = MeshData::default();
    frustum(&mut mesh, Vec3::ZERO, (0.03, 0.04), 0.7, 6);
    frustum(&mut mesh, Vec3::new(0.0, 0.7, 0.0), (0.08, 0.0), 0.22, 6);
    mesh
}

fn arrow() -> MeshData {
    let mut mesh = MeshData::default();
    // Along -Z, the way it flies.
    cuboid(&mut mesh, Vec3::new(-0.02, -0.02, -0.4), Vec3::new(0.02, 0.02, 0.4));
    let tip = Vec3::new(0.0, 0.0, -0.55);
    let back = |x: f32, y: f32| Vec3::new(x, y, -0.4);
    polygon(&mut mesh, &[back(-0.05, -0.05), back(0.05, -0.05), tip]);
    polygon(&mut mesh, &[back(0.05, 0.05), back(-0.05, 0.05), tip]);
    mesh
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_handle_has_its_mesh_box_and_a_coarsening_chain() {
        let library = SkirmishLibrary::build(100.0);
        for handle in [SkirmishMeshes::TREE, SkirmishMeshes::ROCK, SkirmishMeshes::HUT, SkirmishMeshes::UNIT] {
            let lod = library.lod(handle, 1.0);
            assert_eq!(lod.levels[0].mesh, handle, "the finest level is the handle's own mesh");
            for pair in lod.levels.windows(2) {
                assert!(
                    library.library.triangle_count(pair[1].mesh.0) < library.library.triangle_count(pair[0].mesh.0)
                );
            }
            assert!(library.mesh(handle).is_drawable());
        }
        let tree = library.mesh(SkirmishMeshes::TREE).bounds;
        assert!(tree.max.y > 6.0 && tree.min.y >= 0.0, "a tree stands on the ground: {tree:?}");
        assert_eq!(SkirmishLibrary::prop(0.0), SkirmishMeshes::TREE);
        assert_eq!(SkirmishLibrary::prop(0.95), SkirmishMeshes::HUT);
    }

    #[test]
    fn the_engine_finds_occluders_for_every_solid_prop_and_unit() {
        let library = SkirmishLibrary::build(100.0);
        let mut occluders = culling::occlusion::OccluderMeshes::new();
        occluders.insert(SkirmishMeshes::HUT, hut_occluder());
        let found = renderer::derive_occluders(&library.library, &mut occluders);
        for handle in [SkirmishMeshes::TREE, SkirmishMeshes::ROCK, SkirmishMeshes::CRATE, SkirmishMeshes::UNIT] {
            assert!(occluders.get(handle).is_some(), "{handle:?} is solid (open below at most)");
        }
        assert!(occluders.get(SkirmishMeshes::GROUND).is_none(), "a flat ground hides nothing");
        assert_eq!(occluders.get(SkirmishMeshes::HUT), Some(&hut_occluder()), "the game's own occluder stays");
        assert_eq!(found.registered, 1);
    }
}
