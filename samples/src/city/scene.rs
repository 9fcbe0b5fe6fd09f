//! Building the city: blocks of buildings, props, trees with LOD levels, cars with wheels
//! (a hierarchy), skinned pedestrians and a camera.

use animation::PoseWhenSeen;
use ecs::{
    scene, Aabb, BaseColor, Camera, Lod, LodLevel, MaterialHandle, Mesh, MeshHandle, ShadowCaster, Transform,
    VisibilityTagged,
};
use glam::{Quat, Vec3};
use hecs::{Entity, World};

use super::meshes::{city_color, CityLibrary};
use super::motion::{CameraPath, Traffic};
use crate::walker::WalkerRig;

/// How big the city is. The defaults give about 45k mesh entities.
#[derive(Clone, Copy, Debug)]
pub struct CityConfig {
    /// Blocks along each horizontal axis.
    pub blocks: u32,
    /// Side of one block, metres.
    pub block_size: f32,
    /// Width of the streets between blocks, metres.
    pub street_width: f32,
    /// Seed of the layout.
    pub seed: u64,
}

impl Default for CityConfig {
    fn default() -> Self {
        CityConfig { blocks: 32, block_size: 40.0, street_width: 12.0, seed: 0x5eed_c17e }
    }
}

impl CityConfig {
    /// Distance between the starts of two neighbouring blocks.
    pub fn pitch(&self) -> f32 {
        self.block_size + self.street_width
    }

    /// Side of the whole city, metres.
    pub fn extent(&self) -> f32 {
        self.blocks as f32 * self.pitch()
    }
}

/// The mesh handles the city uses, each with its local bounds. A renderer maps them to
/// geometry; culling only needs the bounds.
#[derive(Clone, Copy, Debug)]
pub struct CityMeshes;

impl CityMeshes {
    /// A building: a unit-footprint box, scaled per building.
    pub const BUILDING: MeshHandle = MeshHandle(1);
    /// A street lamp.
    pub const LAMP: MeshHandle = MeshHandle(2);
    /// A bench.
    pub const BENCH: MeshHandle = MeshHandle(3);
    /// Tree, finest level.
    pub const TREE_HIGH: MeshHandle = MeshHandle(4);
    /// Tree, middle level.
    pub const TREE_MEDIUM: MeshHandle = MeshHandle(5);
    /// Tree, coarsest level.
    pub const TREE_LOW: MeshHandle = MeshHandle(6);
    /// A car body.
    pub const CAR: MeshHandle = MeshHandle(7);
    /// A wheel.
    pub const WHEEL: MeshHandle = MeshHandle(8);
    /// A pedestrian (skinned).
    pub const PEDESTRIAN: MeshHandle = MeshHandle(9);
    /// The ground.
    pub const GROUND: MeshHandle = MeshHandle(10);

    /// The local box of each of the city's meshes (the ground's depends on the city's size
    /// and is not listed). One table, used by the scene builder and the renderer.
    pub fn local_bounds(mesh: MeshHandle) -> Option<Aabb> {
        let (min, max) = match mesh {
            CityMeshes::BUILDING => (Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.0, 0.5)),
            CityMeshes::LAMP => (Vec3::new(-0.15, 0.0, -0.15), Vec3::new(0.15, 4.5, 0.15)),
            CityMeshes::BENCH => (Vec3::new(-0.9, 0.0, -0.3), Vec3::new(0.9, 0.9, 0.3)),
            CityMeshes::TREE_HIGH | CityMeshes::TREE_MEDIUM | CityMeshes::TREE_LOW => {
                (Vec3::new(-2.0, 0.0, -2.0), Vec3::new(2.0, 7.0, 2.0))
            }
            CityMeshes::CAR => (Vec3::new(-1.0, 0.3, -2.2), Vec3::new(1.0, 1.6, 2.2)),
            CityMeshes::WHEEL => (Vec3::new(-0.15, -0.35, -0.35), Vec3::new(0.15, 0.35, 0.35)),
            CityMeshes::PEDESTRIAN => (Vec3::new(-0.3, 0.0, -0.2), Vec3::new(0.3, 1.8, 0.2)),
            _ => return None,
        };
        Some(Aabb::new(min, max))
    }
}

/// What [`build_city`] spawned.
#[derive(Debug, Default)]
pub struct City {
    /// The scene camera.
    pub camera: Option<Entity>,
    /// Car bodies (each has four wheel children).
    pub cars: Vec<Entity>,
    /// Skinned pedestrians.
    pub pedestrians: Vec<Entity>,
    /// Every building (the occluders).
    pub buildings: Vec<Entity>,
    /// All mesh entities, the ground included.
    pub mesh_entities: usize,
}

/// A small deterministic generator (xorshift64*): the layout must not depend on a crate's
/// random algorithm changing between versions.
pub(crate) struct Layout(u64);

impl Layout {
    pub(crate) fn new(seed: u64) -> Layout {
        Layout(seed | 1)
    }

    /// Uniform in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32) / (1u64 << 24) as f32
    }

    pub(crate) fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.unit()
    }
}

fn mesh(handle: MeshHandle, material: u32, min: Vec3, max: Vec3) -> Mesh {
    Mesh::new(handle, MaterialHandle(material), Aabb::new(min, max))
}

/// One of the city's meshes, with its box from [`CityMeshes::local_bounds`].
fn city_mesh(handle: MeshHandle, material: u32) -> Mesh {
    let bounds = CityMeshes::local_bounds(handle).expect("every city mesh but the ground has a box in the table");
    Mesh::new(handle, MaterialHandle(material), bounds)
}

/// The colour of the `index`-th object of `mesh` ([`city_color`]: the mesh's colour, shaded
/// per object), as the component the Render stage reads.
fn paint(mesh: &Mesh, index: usize) -> BaseColor {
    BaseColor::from_rgba8(city_color(mesh.mesh, index).to_le_bytes())
}

/// Spawns the city into `world`.
///
/// With `lods`, the buildings and props (most of the city) are spawned with their LOD
/// chains ([`CityLibrary::lod_for`]), so [`attach_lods`](super::attach_lods) has only the
/// few entities that gain components later left to move between archetypes.
pub fn build_city(world: &mut World, config: &CityConfig, lods: Option<&CityLibrary>) -> City {
    runtime::profile_zone!("build city");
    let mut layout = Layout::new(config.seed);
    let mut city = City::default();
    let pitch = config.pitch();
    let half_block = config.block_size * 0.5;
    spawn_ground(world, config, &mut city);

    let building = city_mesh(CityMeshes::BUILDING, 1);
    let lamp = city_mesh(CityMeshes::LAMP, 2);
    let bench = city_mesh(CityMeshes::BENCH, 3);
    let tree = city_mesh(CityMeshes::TREE_HIGH, 4);
    let tree_lod = Lod {
        levels: vec![
            LodLevel { mesh: CityMeshes::TREE_HIGH, max_distance: 40.0 },
            LodLevel { mesh: CityMeshes::TREE_MEDIUM, max_distance: 120.0 },
            LodLevel { mesh: CityMeshes::TREE_LOW, max_distance: 240.0 },
        ]
        .into(),
        bias: 1.0,
    };

    let mut rigid = Vec::new();
    for block_x in 0..config.blocks {
        for block_z in 0..config.blocks {
            let origin = Vec3::new(block_x as f32 * pitch, 0.0, block_z as f32 * pitch);
            let centre = origin + Vec3::new(half_block, 0.0, half_block);
            // Buildings: a 3x2 grid of lots, some left empty as plazas.
            for lot in 0..6 {
                if layout.unit() < 0.12 {
                    continue;
                }
                let lot_size = Vec3::new(config.block_size / 3.0, 0.0, config.block_size / 2.0);
                let lot_centre = origin
                    + Vec3::new(lot_size.x * ((lot % 3) as f32 + 0.5), 0.0, lot_size.z * ((lot / 3) as f32 + 0.5));
                let height = layout.range(8.0, 24.0) * if layout.unit() < 0.1 { 4.0 } else { 1.0 };
                let footprint =
                    Vec3::new(lot_size.x * layout.range(0.7, 0.95), height, lot_size.z * layout.range(0.7, 0.95));
                let transform = Transform { translation: lot_centre, rotation: Quat::IDENTITY, scale: footprint };
                let placed = ecs::WorldTransform::from(transform);
                let color = paint(&building, city.buildings.len());
                let entity = match lods.and_then(|lods| lods.lod_for(building.mesh, Some(&transform))) {
                    Some(lod) => {
                        world.spawn((transform, placed, building, ecs::Visible(true), ShadowCaster, color, lod))
                    }
                    None => world.spawn((transform, placed, building, ecs::Visible(true), ShadowCaster, color)),
                };
                city.buildings.push(entity);
            }
            // Props along the block's edge: lamps and benches, small on screen from afar.
            for prop in 0..20 {
                let side = prop % 4;
                let along = layout.range(-half_block, half_block);
                let edge = half_block + 1.5;
                let offset = match side {
                    0 => Vec3::new(along, 0.0, -edge),
                    1 => Vec3::new(along, 0.0, edge),
                    2 => Vec3::new(-edge, 0.0, along),
                    _ => Vec3::new(edge, 0.0, along),
                };
                let item = if prop % 3 == 0 { bench } else { lamp };
                let yaw = Quat::from_rotation_y(if side < 2 { 0.0 } else { std::f32::consts::FRAC_PI_2 });
                rigid.push((Transform::from_translation_rotation(centre + offset, yaw), item));
            }
            // Trees with three levels of detail.
            for _ in 0..4 {
                let position = centre + Vec3::new(layout.range(-half_block, half_block), 0.0, half_block + 4.0);
                let transform = Transform::from_translation(position);
                world.spawn((
                    transform,
                    ecs::WorldTransform::from(transform),
                    tree,
                    ecs::Visible(true),
                    ShadowCaster,
                    paint(&tree, city.mesh_entities),
                    tree_lod.clone(),
                ));
                city.mesh_entities += 1;
            }
        }
    }
    city.mesh_entities += city.buildings.len();
    // Props with levels of detail are spawned with their chain, in one batch of exact size.
    let (chained, plain): (Vec<_>, Vec<_>) = rigid
        .into_iter()
        .map(|(transform, item)| (transform, item, lods.and_then(|lods| lods.lod_for(item.mesh, Some(&transform)))))
        .partition(|(_, _, lod)| lod.is_some());
    let first = city.mesh_entities;
    city.mesh_entities += world
        .spawn_batch(chained.into_iter().enumerate().filter_map(|(index, (transform, item, lod))| {
            let color = paint(&item, first + index);
            Some((transform, ecs::WorldTransform::from(transform), item, ecs::Visible(true), color, lod?))
        }))
        .count();
    let first = city.mesh_entities;
    city.mesh_entities += world
        .spawn_batch(plain.into_iter().enumerate().map(|(index, (transform, item, _))| {
            (transform, ecs::WorldTransform::from(transform), item, ecs::Visible(true), paint(&item, first + index))
        }))
        .count();

    spawn_traffic(world, config, &mut layout, &mut city);
    spawn_pedestrians(world, config, &mut layout, &mut city);

    let street_x = (config.blocks / 2) as f32 * pitch - config.street_width * 0.5;
    let path =
        CameraPath { street_x, length: config.extent(), heights: (1.8, 140.0), period: 40.0, phase: 0.0, facing: 1.0 };
    let camera = scene::spawn_camera(world, Camera::default(), path.pose_at(0.0));
    world.insert_one(camera, path).expect("the camera was just spawned");
    city.camera = Some(camera);
    city
}

/// The ground under the whole city, streets included.
fn spawn_ground(world: &mut World, config: &CityConfig, city: &mut City) {
    let ground_half = config.extent() * 0.5;
    let ground = mesh(
        CityMeshes::GROUND,
        0,
        Vec3::new(-ground_half, -0.1, -ground_half),
        Vec3::new(ground_half, 0.0, ground_half),
    );
    let ground_place = Transform::from_translation(Vec3::new(
        ground_half - config.street_width,
        0.0,
        ground_half - config.street_width,
    ));
    world.spawn((ground_place, ecs::WorldTransform::from(ground_place), ground, ecs::Visible(true), paint(&ground, 0)));
    city.mesh_entities += 1;
}

/// Two cars per street segment, each a body with four wheels parented to it.
fn spawn_traffic(world: &mut World, config: &CityConfig, layout: &mut Layout, city: &mut City) {
    let body = city_mesh(CityMeshes::CAR, 5);
    let wheel = city_mesh(CityMeshes::WHEEL, 6);
    let wheel_offsets = [
        Vec3::new(-1.0, 0.35, -1.4),
        Vec3::new(1.0, 0.35, -1.4),
        Vec3::new(-1.0, 0.35, 1.4),
        Vec3::new(1.0, 0.35, 1.4),
    ];
    let pitch = config.pitch();
    for street in 0..config.blocks {
        for lane in 0..2 {
            let street_centre = street as f32 * pitch - config.street_width * 0.5;
            let along = layout.range(0.0, config.extent());
            let position = Vec3::new(street_centre + if lane == 0 { -2.5 } else { 2.5 }, 0.0, along);
            let car = scene::spawn_mesh(world, body, Transform::from_translation(position));
            let speed = layout.range(6.0, 14.0) * if lane == 0 { 1.0 } else { -1.0 };
            let color = paint(&body, city.cars.len());
            world
                .insert(car, (ShadowCaster, Traffic { speed, street_length: config.extent() }, color))
                .expect("the car was just spawned");
            for (index, offset) in wheel_offsets.into_iter().enumerate() {
                let place = Transform::from_translation(offset);
                let color = paint(&wheel, city.cars.len() * 4 + index);
                let wheel_entity =
                    world.spawn((place, ecs::WorldTransform::from(place), wheel, ecs::Visible(true), color));
                ecs::hierarchy::set_parent(world, wheel_entity, car)
                    .expect("a fresh wheel cannot be the car's ancestor");
            }
            city.cars.push(car);
            city.mesh_entities += 5;
        }
    }
}

/// Pedestrians on the sidewalks: walkers ([`WalkerRig`]) each playing the walk from its own
/// phase at its own speed; the animation system poses them and writes the box they are
/// culled by. They carry their visibility tags and [`PoseWhenSeen`], so only the crowd in view
/// (last frame) is posed each frame. The GPU skins the body with the palette the posed box
/// was made from, so the box needs no padding (skin radius 0).
fn spawn_pedestrians(world: &mut World, config: &CityConfig, layout: &mut Layout, city: &mut City) {
    let body = city_mesh(CityMeshes::PEDESTRIAN, 7);
    let walker = WalkerRig::new();
    let pitch = config.pitch();
    for block_x in 0..config.blocks {
        for block_z in 0..config.blocks {
            let corner = Vec3::new(block_x as f32 * pitch - 2.0, 0.0, block_z as f32 * pitch - 2.0);
            let position = corner + Vec3::new(layout.range(0.0, config.block_size), 0.0, 0.0);
            let entity = scene::spawn_mesh(world, body, Transform::from_translation(position));
            let (mesh, skin, player, pose) = walker.components(layout.range(0.0, 1.0), layout.range(0.8, 1.25));
            let color = paint(&body, city.pedestrians.len());
            world
                .insert(entity, (mesh, skin, player, pose, ShadowCaster, color, VisibilityTagged, PoseWhenSeen))
                .expect("the pedestrian was just spawned");
            city.pedestrians.push(entity);
            city.mesh_entities += 1;
        }
    }
}
