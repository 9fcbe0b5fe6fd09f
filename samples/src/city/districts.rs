//! `city --stream`: the city's districts as glTF files. A district is a square of blocks;
//! its buildings and trees leave the world the city was built into and go to one `.glb` per
//! district, with meshes of its own (building and tree variants seeded by the district, so
//! that districts differ and what is resident matters). The shared small props (cars,
//! pedestrians, lamps, benches) and the ground stay in the preloaded library.
//!
//! The files are written once per seed and object count ([`DistrictFiles::default_folder`])
//! and reused when present; [`super::stream::DistrictStreamer`] loads them as the camera flies.

use std::path::{Path, PathBuf};

use assets::gltf_export::{ExportMesh, GlbWriter};
use assets::MeshData;
use ecs::{Mesh, Transform};
use glam::Vec3;
use hecs::{Entity, World};

use super::meshes::city_color;
use super::scene::{CityConfig, CityMeshes, Layout};
use super::shapes::{cone, cuboid, cylinder, ellipsoid, hipped_roof};

/// Building variants per district (each its own mesh and colour).
const BUILDING_VARIANTS: usize = 3;
/// Tree variants per district.
const TREE_VARIANTS: usize = 2;

/// How the city is cut into districts: squares of `blocks` x `blocks` blocks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistrictGrid {
    /// Blocks along a district's side.
    pub blocks: u32,
    /// Districts along the city's side.
    pub per_side: u32,
    /// Side of a district, metres.
    pub side: f32,
}

impl DistrictGrid {
    /// About seven districts along each side (49 in all; fewer for a city of few blocks).
    pub fn of(config: &CityConfig) -> DistrictGrid {
        let blocks = config.blocks.div_ceil(7).max(1);
        let per_side = config.blocks.div_ceil(blocks);
        DistrictGrid { blocks, per_side, side: blocks as f32 * config.pitch() }
    }

    /// Districts in all.
    pub fn count(&self) -> usize {
        (self.per_side * self.per_side) as usize
    }

    /// The district holding the point `position` (clamped to the city).
    pub fn district_at(&self, position: Vec3) -> usize {
        let cell = |value: f32| ((value / self.side).floor().max(0.0) as u32).min(self.per_side - 1);
        (cell(position.z) * self.per_side + cell(position.x)) as usize
    }

    /// The ground square of district `district`: its minimum and maximum corners (x, z).
    pub fn square(&self, district: usize) -> ([f32; 2], [f32; 2]) {
        let (column, row) = (district as u32 % self.per_side, district as u32 / self.per_side);
        let min = [column as f32 * self.side, row as f32 * self.side];
        (min, [min[0] + self.side, min[1] + self.side])
    }

    /// Horizontal distance from `position` to district `district`'s square (0 inside it).
    pub fn distance(&self, district: usize, position: Vec3) -> f32 {
        let (min, max) = self.square(district);
        let dx = (min[0] - position.x).max(position.x - max[0]).max(0.0);
        let dz = (min[1] - position.z).max(position.z - max[1]).max(0.0);
        (dx * dx + dz * dz).sqrt()
    }
}

/// A building or tree taken out of the world, to be written to its district's file.
#[derive(Clone, Copy, Debug)]
struct Placed {
    transform: Transform,
    building: bool,
}

/// The district files of a city: one `.glb` per district.
#[derive(Clone, Debug)]
pub struct DistrictFiles {
    /// The grid the files follow.
    pub grid: DistrictGrid,
    /// One path per district, row by row.
    pub paths: Vec<PathBuf>,
    /// Buildings and trees the files hold (taken out of the world).
    pub objects: usize,
    /// Whether the files were written by this run (else they were there).
    pub written: bool,
    /// Bytes of the files.
    pub file_bytes: u64,
}

impl DistrictFiles {
    /// The folder `--stream-dir` defaults to: under the system's temporary folder, keyed by
    /// the city's seed and object count.
    pub fn default_folder(seed: u64, objects: u64) -> PathBuf {
        std::env::temp_dir().join(format!("city-stream-{seed:x}-{objects}"))
    }

    /// Takes the buildings and trees out of `world` (built by [`super::build_city`] for
    /// `config`) and makes sure `folder` holds each district's file: written when missing,
    /// else reused (the city is deterministic, so the same seed and size give the same
    /// files).
    pub fn take_from(world: &mut World, config: &CityConfig, folder: &Path) -> std::io::Result<DistrictFiles> {
        let grid = DistrictGrid::of(config);
        let mut districts: Vec<Vec<Placed>> = vec![Vec::new(); grid.count()];
        let mut taken: Vec<Entity> = Vec::new();
        for (entity, mesh, transform) in world.query::<(Entity, &Mesh, &Transform)>().iter() {
            let building = mesh.mesh == CityMeshes::BUILDING;
            if building || mesh.mesh == CityMeshes::TREE_HIGH {
                districts[grid.district_at(transform.translation)].push(Placed { transform: *transform, building });
                taken.push(entity);
            }
        }
        for &entity in &taken {
            world.despawn(entity).expect("a building or tree just found");
        }
        std::fs::create_dir_all(folder)?;
        let paths: Vec<PathBuf> =
            (0..grid.count()).map(|district| folder.join(format!("district-{district:03}.glb"))).collect();
        let mut written = false;
        for (district, (placed, path)) in districts.iter().zip(&paths).enumerate() {
            if path.is_file() {
                continue;
            }
            let bytes = district_glb(config.seed, district, placed);
            // Written aside, then renamed: a run stopped half way leaves no short file.
            let partial = path.with_extension("partial");
            std::fs::write(&partial, bytes)?;
            std::fs::rename(&partial, path)?;
            written = true;
        }
        let mut file_bytes = 0;
        for path in &paths {
            file_bytes += std::fs::metadata(path)?.len();
        }
        Ok(DistrictFiles { grid, paths, objects: taken.len(), written, file_bytes })
    }
}

/// The `.glb` of one district: its building and tree variants, and a node per object.
fn district_glb(seed: u64, district: usize, placed: &[Placed]) -> Vec<u8> {
    let mut layout = Layout::new(seed ^ (district as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut writer = GlbWriter::new();
    let add = |writer: &mut GlbWriter, mesh: &MeshData, color: u32| {
        let [red, green, blue, alpha] = color.to_le_bytes().map(|value| f32::from(value) / 255.0);
        let material = writer.add_material([red, green, blue, alpha]);
        writer.add_mesh(ExportMesh {
            positions: &mesh.positions,
            normals: &mesh.normals,
            uvs: &mesh.uvs,
            indices: &mesh.indices,
            material: Some(material),
        })
    };
    let buildings: Vec<u32> = (0..BUILDING_VARIANTS)
        .map(|variant| {
            let color = city_color(CityMeshes::BUILDING, district * BUILDING_VARIANTS + variant);
            add(&mut writer, &building_variant(&mut layout), color)
        })
        .collect();
    let trees: Vec<u32> = (0..TREE_VARIANTS)
        .map(|variant| {
            let color = city_color(CityMeshes::TREE_HIGH, district * TREE_VARIANTS + variant);
            add(&mut writer, &tree_variant(&mut layout), color)
        })
        .collect();
    for (index, object) in placed.iter().enumerate() {
        let mesh = if object.building { buildings[index % buildings.len()] } else { trees[index % trees.len()] };
        writer.add_node(mesh, object.transform);
    }
    writer.to_glb()
}

/// A building of unit footprint and height, like the preloaded one, with setbacks, roof and
/// rooftop details drawn from `layout`.
fn building_variant(layout: &mut Layout) -> MeshData {
    let mut mesh = MeshData::default();
    let base = layout.range(0.45, 0.7);
    let middle = layout.range(base + 0.1, 0.88);
    let (first, second) = (layout.range(0.36, 0.45), layout.range(0.22, 0.34));
    cuboid(&mut mesh, Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, base, 0.5), false);
    cuboid(&mut mesh, Vec3::new(-first, base, -first), Vec3::new(first, middle, first), false);
    cuboid(&mut mesh, Vec3::new(-second, middle, -second), Vec3::new(second, 0.93, second), false);
    hipped_roof(&mut mesh, Vec3::new(-second, 0.93, -second), Vec3::new(second, 1.0, second));
    // Rooftop tanks and domes: the detail the finer levels carry.
    let tanks = 2 + (layout.unit() * 3.0) as u32;
    for tank in 0..tanks {
        let angle = std::f32::consts::TAU * tank as f32 / tanks as f32;
        let place = Vec3::new(angle.cos() * (first - 0.05), middle, angle.sin() * (first - 0.05));
        cylinder(&mut mesh, place, Vec3::Y, 0.03, layout.range(0.03, 0.06), 24);
    }
    ellipsoid(&mut mesh, Vec3::new(0.0, 0.93, 0.0), Vec3::new(second * 0.5, 0.05, second * 0.5), 12, 32);
    mesh
}

/// A tree like the preloaded one (trunk, crown, top), its shape and detail drawn from
/// `layout`.
fn tree_variant(layout: &mut Layout) -> MeshData {
    let mut mesh = MeshData::default();
    let trunk = layout.range(2.6, 3.4);
    cylinder(&mut mesh, Vec3::ZERO, Vec3::Y, layout.range(0.18, 0.26), trunk, 12);
    let crown = Vec3::new(layout.range(1.5, 1.95), layout.range(1.8, 2.2), layout.range(1.5, 1.95));
    ellipsoid(&mut mesh, Vec3::new(0.0, trunk + crown.y * 0.6, 0.0), crown, 24, 40);
    cone(&mut mesh, Vec3::new(0.0, trunk + crown.y * 1.1, 0.0), crown.x * 0.6, layout.range(0.8, 1.3), 24);
    mesh
}
