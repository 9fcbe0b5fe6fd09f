//! The city's real meshes: low-poly buildings with setbacks and hipped roofs, trees (trunk
//! and crown), cars, wheels, lamps, benches, pedestrians and the ground, generated in code
//! and processed by meshopt (LOD chain with screen-space hand-over, meshlets) into one
//! [`MeshLibrary`].
//!
//! Each mesh lies inside the box [`CityMeshes::local_bounds`] gives its handle, which is what
//! culling tests, and the finest level of each has the library id of its handle, so an
//! entity without a [`Lod`] still draws its real mesh. [`attach_lods`] gives every mesh
//! entity its mesh's chain, the tree's first three levels being the handles `TREE_HIGH`,
//! `TREE_MEDIUM` and `TREE_LOW`.

use assets::{process_skinned_meshes, MeshData, ProcessOptions, ProcessedMesh, SkinnedVertices};
use culling::occlusion::OccluderMesh;
use ecs::{Aabb, Lod, LodLevel, Mesh, MeshHandle, Transform};
use glam::Vec3;
use hecs::{Entity, World};
use renderer::{MeshLibrary, MeshVertices, Meshlet};

use super::scene::{CityConfig, CityMeshes};
use super::shapes::{cone, cuboid, cylinder, ellipsoid, hipped_roof, polygon};
use crate::walker::WalkerRig;

/// Height of a building's full-footprint base block, as a fraction of its height: the part
/// its occluder may cover.
const BUILDING_BASE: f32 = 0.62;

/// The city's meshes in a library, with the LOD chain of each handle.
pub struct CityLibrary {
    /// The meshes (id = handle for the finest levels; coarser levels after them).
    pub library: MeshLibrary,
    /// Per handle (index = handle id): its level list, nearest first.
    lods: Vec<Option<Lod>>,
    /// Per handle: a report line (triangles, errors and hand-over distances per level,
    /// meshlets), for the handles that have a mesh.
    pub summaries: Vec<(MeshHandle, &'static str, String)>,
    /// Per mesh id: its simplification error as a level of its handle's chain.
    level_errors: Vec<Option<f32>>,
}

/// The handles with a mesh of their own, their names and generators (the pedestrian is the
/// walker's body, skinned: [`pedestrian_skin`]).
fn generators(config: &CityConfig) -> Vec<(MeshHandle, &'static str, MeshData)> {
    vec![
        (CityMeshes::BUILDING, "building", building()),
        (CityMeshes::LAMP, "lamp", lamp()),
        (CityMeshes::BENCH, "bench", bench()),
        (CityMeshes::TREE_HIGH, "tree", tree()),
        (CityMeshes::CAR, "car", car()),
        (CityMeshes::WHEEL, "wheel", wheel()),
        (CityMeshes::PEDESTRIAN, "pedestrian", pedestrian()),
        (CityMeshes::GROUND, "ground", ground(config)),
    ]
}

fn building() -> MeshData {
    let mut mesh = MeshData::default();
    cuboid(&mut mesh, Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, BUILDING_BASE, 0.5), false);
    cuboid(&mut mesh, Vec3::new(-0.42, BUILDING_BASE, -0.42), Vec3::new(0.42, 0.84, 0.42), false);
    cuboid(&mut mesh, Vec3::new(-0.32, 0.84, -0.32), Vec3::new(0.32, 0.92, 0.32), false);
    hipped_roof(&mut mesh, Vec3::new(-0.32, 0.92, -0.32), Vec3::new(0.32, 1.0, 0.32));
    // A rooftop tank on the first setback.
    cylinder(&mut mesh, Vec3::new(0.36, 0.84, 0.36), Vec3::Y, 0.04, 0.06, 12);
    mesh
}

fn lamp() -> MeshData {
    let mut mesh = MeshData::default();
    cylinder(&mut mesh, Vec3::ZERO, Vec3::Y, 0.12, 0.3, 12);
    cylinder(&mut mesh, Vec3::new(0.0, 0.3, 0.0), Vec3::Y, 0.05, 3.9, 12);
    ellipsoid(&mut mesh, Vec3::new(0.0, 4.32, 0.0), Vec3::new(0.15, 0.18, 0.15), 8, 12);
    mesh
}

fn bench() -> MeshData {
    let mut mesh = MeshData::default();
    cuboid(&mut mesh, Vec3::new(-0.9, 0.42, -0.25), Vec3::new(0.9, 0.5, 0.2), true);
    cuboid(&mut mesh, Vec3::new(-0.9, 0.56, 0.2), Vec3::new(0.9, 0.9, 0.28), true);
    for x in [-0.8, 0.75] {
        for z in [-0.22, 0.14] {
            cuboid(&mut mesh, Vec3::new(x, 0.0, z), Vec3::new(x + 0.05, 0.42, z + 0.06), false);
        }
        cuboid(&mut mesh, Vec3::new(x, 0.5, 0.2), Vec3::new(x + 0.05, 0.56, 0.26), true);
    }
    mesh
}

fn tree() -> MeshData {
    let mut mesh = MeshData::default();
    cylinder(&mut mesh, Vec3::ZERO, Vec3::Y, 0.22, 3.2, 10);
    ellipsoid(&mut mesh, Vec3::new(0.0, 4.5, 0.0), Vec3::new(1.9, 2.2, 1.9), 16, 24);
    cone(&mut mesh, Vec3::new(0.0, 5.6, 0.0), 1.2, 1.4, 16);
    mesh
}

fn car() -> MeshData {
    let mut mesh = MeshData::default();
    cuboid(&mut mesh, Vec3::new(-0.95, 0.3, -2.2), Vec3::new(0.95, 0.95, 2.2), true);
    // The cabin: a prism narrowing upwards, windscreen raked.
    let low = |x: f32, z: f32| Vec3::new(x, 0.95, z);
    let high = |x: f32, z: f32| Vec3::new(x, 1.55, z);
    let (lz0, lz1, hz0, hz1) = (-1.2, 1.0, -0.7, 0.4);
    polygon(&mut mesh, &[low(-0.85, lz1), low(0.85, lz1), high(0.75, hz1), high(-0.75, hz1)]);
    polygon(&mut mesh, &[low(0.85, lz0), low(-0.85, lz0), high(-0.75, hz0), high(0.75, hz0)]);
    polygon(&mut mesh, &[low(0.85, lz1), low(0.85, lz0), high(0.75, hz0), high(0.75, hz1)]);
    polygon(&mut mesh, &[low(-0.85, lz0), low(-0.85, lz1), high(-0.75, hz1), high(-0.75, hz0)]);
    polygon(&mut mesh, &[high(-0.75, hz1), high(0.75, hz1), high(0.75, hz0), high(-0.75, hz0)]);
    for x in [-0.75, 0.45] {
        cuboid(&mut mesh, Vec3::new(x, 0.65, 2.12), Vec3::new(x + 0.3, 0.8, 2.2), false);
    }
    mesh
}

fn wheel() -> MeshData {
    let mut mesh = MeshData::default();
    cylinder(&mut mesh, Vec3::new(-0.15, 0.0, 0.0), Vec3::X, 0.34, 0.3, 16);
    mesh
}

fn pedestrian() -> MeshData {
    WalkerRig::new().mesh
}

/// The skinning influences of `handle`'s mesh: the walker's for the pedestrian, none else.
fn pedestrian_skin(handle: MeshHandle) -> Option<SkinnedVertices> {
    (handle == CityMeshes::PEDESTRIAN).then(|| WalkerRig::new().skin)
}

fn ground(config: &CityConfig) -> MeshData {
    let half = config.extent() * 0.5;
    let mut mesh = MeshData::default();
    polygon(
        &mut mesh,
        &[
            Vec3::new(-half, 0.0, half),
            Vec3::new(half, 0.0, half),
            Vec3::new(half, 0.0, -half),
            Vec3::new(-half, 0.0, -half),
        ],
    );
    mesh
}

/// The occluder of a building: its full-footprint base block (the setbacks above are
/// narrower, so a box to the top would hide what shows past them).
pub fn building_occluder() -> OccluderMesh {
    OccluderMesh::from_box(&Aabb::new(Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, BUILDING_BASE, 0.5)))
        .expect("a box of positive size is a valid occluder")
}

fn add_level(library: &mut MeshLibrary, mesh: &ProcessedMesh, level: usize) -> u32 {
    if mesh.skin.is_some() {
        return WalkerRig::add_level(library, mesh, level);
    }
    let vertices = MeshVertices { positions: &mesh.positions, normals: &mesh.normals, uvs: &mesh.uvs };
    let level = &mesh.levels[level];
    let levels: [(&[u32], &[Meshlet]); 1] = [(&level.indices, &level.meshlets)];
    library.add_mesh_levels(vertices, &levels).expect("processed meshes are valid library meshes").start
}

impl CityLibrary {
    /// Generates and processes (in parallel, on the job system) every mesh of the city.
    pub fn build(config: &CityConfig) -> CityLibrary {
        runtime::profile_zone!("city meshes");
        let generated = generators(config);
        let sources: Vec<MeshData> = generated.iter().map(|(_, _, mesh)| mesh.clone()).collect();
        let skins: Vec<Option<SkinnedVertices>> =
            generated.iter().map(|(handle, ..)| pedestrian_skin(*handle)).collect();
        let processed: Vec<ProcessedMesh> = process_skinned_meshes(&sources, &skins, &ProcessOptions::default())
            .into_iter()
            .map(|result| result.expect("the generated meshes are valid"))
            .collect();
        let handle_count = CityMeshes::GROUND.0 as usize + 1;
        let by_handle = |handle: MeshHandle| generated.iter().position(|(mesh, _, _)| *mesh == handle);
        let tree = &processed[by_handle(CityMeshes::TREE_HIGH).expect("the tree has a generator")];
        let mut library = MeshLibrary::with_unit_cube();
        // Finest levels first, so that a handle is the id of its mesh.
        for handle in 1..handle_count as u32 {
            let id = match MeshHandle(handle) {
                CityMeshes::TREE_MEDIUM => add_level(&mut library, tree, 1.min(tree.levels.len() - 1)),
                CityMeshes::TREE_LOW => add_level(&mut library, tree, 2.min(tree.levels.len() - 1)),
                other => {
                    let index = by_handle(other).expect("every other handle has a generator");
                    add_level(&mut library, &processed[index], 0)
                }
            };
            debug_assert_eq!(id, handle, "the finest level of a handle has the handle's id");
        }
        let mut lods = vec![None; handle_count];
        let mut level_errors = Vec::new();
        let mut summaries = Vec::new();
        for ((handle, name, _), mesh) in generated.iter().zip(&processed) {
            let mut levels = Vec::with_capacity(mesh.levels.len());
            for (level, data) in mesh.levels.iter().enumerate() {
                let id = match (*handle, level) {
                    (_, 0) => handle.0,
                    (CityMeshes::TREE_HIGH, 1) => CityMeshes::TREE_MEDIUM.0,
                    (CityMeshes::TREE_HIGH, 2) => CityMeshes::TREE_LOW.0,
                    _ => add_level(&mut library, mesh, level),
                };
                levels.push(LodLevel { mesh: MeshHandle(id), max_distance: data.max_distance });
                if level_errors.len() <= id as usize {
                    level_errors.resize(id as usize + 1, None);
                }
                level_errors[id as usize] = Some(data.error);
            }
            lods[handle.0 as usize] = Some(Lod { levels: levels.into(), bias: 1.0 });
            summaries.push((*handle, *name, mesh.summary()));
        }
        CityLibrary { library, lods, summaries, level_errors }
    }

    /// Triangles of the objects `visibility` found visible: at the levels their LOD chose, and
    /// at full detail (each object's finest level, its handle's own mesh).
    pub fn triangles_in_view(&self, visibility: &culling::Visibility, world: &World) -> (u64, u64) {
        let objects = visibility.objects();
        let mut chosen = 0;
        let mut finest = 0;
        // From the bits, which every answer policy keeps (the list is refused on request;
        // there the bits name what the GPU drew in the fed-back frame).
        for object in visibility.bits().iter_visible() {
            chosen += u64::from(self.library.triangle_count(objects.draws[object].mesh.0));
            let handle =
                world.get::<&Mesh>(objects.entities[object]).map_or(objects.draws[object].mesh, |mesh| mesh.mesh);
            finest += u64::from(self.library.triangle_count(handle.0));
        }
        (chosen, finest)
    }

    /// Objects `visibility` found visible at each level of detail their chains chose (the last
    /// entry counting that level and every coarser one; an object without a chain at 0).
    pub fn lod_histogram(&self, visibility: &culling::Visibility, world: &World) -> [u32; renderer::LOD_STAT_LEVELS] {
        let objects = visibility.objects();
        let mut levels = [0u32; renderer::LOD_STAT_LEVELS];
        for object in visibility.bits().iter_visible() {
            let drawn = objects.draws[object].mesh;
            let handle = world.get::<&Mesh>(objects.entities[object]).map_or(drawn, |mesh| mesh.mesh);
            let level = self.lod(handle).and_then(|lod| lod.levels.iter().position(|level| level.mesh == drawn));
            levels[level.unwrap_or(0).min(renderer::LOD_STAT_LEVELS - 1)] += 1;
        }
        levels
    }

    /// Each mesh's simplification error as a level of its chain (meshopt's, from the
    /// processing), for the error rule of levels of detail (`--lod-rule error`): the rule the
    /// GPU cull can choose levels by.
    pub fn lod_errors(&self) -> ecs::LodErrors {
        ecs::LodErrors::from_fn(self.library.len() as u32, |mesh| {
            self.level_errors.get(mesh as usize).copied().flatten()
        })
    }

    /// The level list of `handle`'s mesh, if it has one.
    pub fn lod(&self, handle: MeshHandle) -> Option<&Lod> {
        self.lods.get(handle.0 as usize)?.as_ref()
    }

    /// The LOD chain an entity of mesh `handle` placed by `transform` gets: its mesh's chain,
    /// biased by the transform's largest scale (1 without a transform or for a degenerate
    /// scale); `None` for a mesh without levels.
    pub fn lod_for(&self, handle: MeshHandle, transform: Option<&Transform>) -> Option<Lod> {
        let mut lod = self.lod(handle)?.clone();
        let scale = transform.map_or(1.0, |transform| transform.scale.abs().max_element());
        lod.bias = if scale.is_finite() && scale > 0.0 { scale } else { 1.0 };
        Some(lod)
    }
}

/// Gives every mesh entity of `world` the LOD chain of its mesh, biased by its largest scale
/// (the chain's distances are in mesh units; a building scaled 20 times shows its error 20
/// times larger). Returns how many entities carry their chain.
///
/// An entity that already carries exactly its chain (spawned with it: see [`build_city`](super::build_city)
/// with a library) is left alone: inserting a component moves the entity to another
/// archetype, and hecs keeps the capacity the old archetype grew to, so attaching chains to a
/// million spawned entities after the fact would hold their components twice for the run.
pub fn attach_lods(world: &mut World, meshes: &CityLibrary) -> usize {
    let mut carrying = 0;
    let chosen: Vec<(Entity, Lod)> = world
        .query::<(Entity, &Mesh, Option<&Transform>, Option<&Lod>)>()
        .iter()
        .filter_map(|(entity, mesh, transform, current)| {
            let lod = meshes.lod_for(mesh.mesh, transform)?;
            carrying += 1;
            (current != Some(&lod)).then_some((entity, lod))
        })
        .collect();
    for (entity, lod) in chosen {
        world.insert_one(entity, lod).expect("the entity was just queried");
    }
    carrying
}

/// The colour of an object of mesh `mesh` (RGBA8 packed), varied a little per object.
pub fn city_color(mesh: MeshHandle, object: usize) -> u32 {
    let shade = (object.wrapping_mul(2_654_435_761) >> 13) as u8 % 48;
    let [red, green, blue]: [u8; 3] = match mesh {
        CityMeshes::BUILDING => [168, 156, 140],
        CityMeshes::GROUND => [70, 72, 76],
        CityMeshes::LAMP => [60, 64, 70],
        CityMeshes::BENCH => [130, 90, 50],
        CityMeshes::TREE_HIGH | CityMeshes::TREE_MEDIUM | CityMeshes::TREE_LOW => [60, 130, 55],
        CityMeshes::CAR => [180, 40, 40],
        CityMeshes::WHEEL => [25, 25, 25],
        CityMeshes::PEDESTRIAN => [50, 80, 180],
        _ => [255, 0, 255],
    };
    renderer::pack_rgba8(red.saturating_add(shade), green.saturating_add(shade), blue.saturating_add(shade), 255)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mesh_lies_inside_its_culling_box_with_outward_faces() {
        let config = CityConfig { blocks: 2, ..CityConfig::default() };
        for (handle, name, mesh) in generators(&config) {
            mesh.validate().unwrap_or_else(|error| panic!("{name}: {error}"));
            let bounds = match CityMeshes::local_bounds(handle) {
                Some(bounds) => bounds,
                None => {
                    let half = config.extent() * 0.5;
                    Aabb::new(Vec3::new(-half, -0.1, -half), Vec3::new(half, 0.0, half))
                }
            };
            for &position in &mesh.positions {
                let point = Vec3::from(position);
                assert!(
                    point.cmpge(bounds.min - 1e-5).all() && point.cmple(bounds.max + 1e-5).all(),
                    "{name}: {point} outside its box {bounds:?}"
                );
            }
            for triangle in mesh.indices.chunks_exact(3) {
                let [a, b, c] = [0, 1, 2].map(|corner| Vec3::from(mesh.positions[triangle[corner] as usize]));
                let face = (b - a).cross(c - a);
                // Triangles at a sphere's poles are slivers whose direction is rounding noise.
                if face.length() < 1e-5 {
                    continue;
                }
                for &corner in triangle {
                    let normal = Vec3::from(mesh.normals[corner as usize]);
                    assert!(face.dot(normal) > 0.0, "{name}: triangle {triangle:?} winds against its normal");
                }
            }
        }
    }

    #[test]
    fn street_level_draws_at_least_three_times_fewer_triangles_with_lod() {
        let mut app = runtime::App::with_threads(1);
        culling::install(&mut app);
        app.insert_resource(ecs::Viewport { width: 1280, height: 720 });
        let config = CityConfig { blocks: 12, ..CityConfig::default() };
        crate::city::build_city(app.world_mut(), &config, None);
        let meshes = CityLibrary::build(&config);
        assert!(attach_lods(app.world_mut(), &meshes) > 0);
        // Frame 1 of the flight is at street level, looking down a long street.
        app.run_frame();
        let visibility = app.resource::<culling::Visibility>();
        assert!(visibility.view().is_some_and(|view| view.position.y < 5.0), "the camera starts at street level");
        let (with_lod, full) = meshes.triangles_in_view(&visibility, app.world());
        assert!(with_lod > 0 && with_lod * 3 <= full, "{with_lod} triangles with LOD, {full} at full detail");
    }

    #[test]
    fn handles_name_their_finest_levels_and_chains_coarsen() {
        let config = CityConfig { blocks: 2, ..CityConfig::default() };
        let meshes = CityLibrary::build(&config);
        let tree = meshes.lod(CityMeshes::TREE_HIGH).unwrap();
        let ids: Vec<MeshHandle> = tree.levels.iter().take(3).map(|level| level.mesh).collect();
        assert_eq!(ids, vec![CityMeshes::TREE_HIGH, CityMeshes::TREE_MEDIUM, CityMeshes::TREE_LOW]);
        for pair in tree.levels.windows(2) {
            let (finer, coarser) = (pair[0].mesh.0, pair[1].mesh.0);
            assert!(meshes.library.triangle_count(coarser) < meshes.library.triangle_count(finer));
            assert!(pair[0].max_distance <= pair[1].max_distance);
        }
        for handle in [CityMeshes::BUILDING, CityMeshes::CAR, CityMeshes::PEDESTRIAN, CityMeshes::GROUND] {
            let lod = meshes.lod(handle).unwrap();
            assert_eq!(lod.levels[0].mesh, handle, "the finest level is the handle's own id");
            // The skinned pedestrian has none: its meshlets' bounds would be of the bind pose.
            let skinned = handle == CityMeshes::PEDESTRIAN;
            assert_eq!(meshes.library.meshlets(handle.0).is_empty(), skinned, "every rigid level has meshlets");
        }
        assert_eq!(meshes.summaries.len(), 8);
    }
}
