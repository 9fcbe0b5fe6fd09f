//! The CPU's level-of-detail histogram for the culling panel: how many objects the Visibility
//! answer draws at each level, beside the GPU cull's (`renderer::GpuCullStats::lod_levels`).
//!
//! An object's draw names a mesh id, not a level. [`LevelTable`] maps mesh ids to their level
//! in the chains the world's [`Lod`] components list, whatever library or importer made them
//! (a chain of one `add_mesh_levels`, or levels added one by one as the city's): it is
//! rebuilt from the world now and then ([`LevelTable::refresh`]; entities sharing one chain,
//! as spawned copies do, cost one comparison each), and each frame's histogram is one table
//! read per visible object ([`LevelTable::histogram`]).

use culling::Visibility;
use ecs::Lod;
use renderer::LOD_STAT_LEVELS;
use runtime::hecs::World;

/// Mesh id to level of detail (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct LevelTable {
    /// Per mesh id: its level, [`LevelTable::NONE`] for a mesh no chain lists.
    levels: Vec<u8>,
    /// Whether any chain was found at the last refresh.
    chains: bool,
}

impl LevelTable {
    /// The entry of a mesh id no chain lists (drawn as level 0).
    const NONE: u8 = u8::MAX;

    /// Rebuilds the table from every [`Lod`] of `world`. Keeps its memory.
    pub fn refresh(&mut self, world: &World) {
        self.levels.fill(Self::NONE);
        self.chains = false;
        let mut last: Option<*const ecs::LodLevel> = None;
        for lod in world.query::<&Lod>().iter() {
            let chain = lod.levels.as_ptr();
            if last == Some(chain) || lod.levels.is_empty() {
                continue;
            }
            last = Some(chain);
            self.chains = true;
            for (level, entry) in lod.levels.iter().enumerate() {
                let mesh = entry.mesh.0 as usize;
                if !entry.mesh.is_some() {
                    continue;
                }
                if mesh >= self.levels.len() {
                    self.levels.resize(mesh + 1, Self::NONE);
                }
                // A mesh two chains list keeps the finer level.
                let level = level.min(usize::from(Self::NONE) - 1) as u8;
                self.levels[mesh] = self.levels[mesh].min(level);
            }
        }
    }

    /// Objects `visibility` finds visible at each level of detail, the last entry counting that
    /// level and every coarser one (as the GPU's histogram); an object whose mesh no chain
    /// lists counts at level 0. `None` when the world had no chain at the last refresh.
    pub fn histogram(&self, visibility: &Visibility) -> Option<[u32; LOD_STAT_LEVELS]> {
        if !self.chains {
            return None;
        }
        let draws = &visibility.objects().draws;
        let mut counts = [0u32; LOD_STAT_LEVELS];
        for object in visibility.bits().iter_visible() {
            let mesh = draws.get(object).map_or(usize::MAX, |draw| draw.mesh.0 as usize);
            let level = match self.levels.get(mesh) {
                Some(&level) if level != Self::NONE => usize::from(level),
                _ => 0,
            };
            counts[level.min(LOD_STAT_LEVELS - 1)] += 1;
        }
        Some(counts)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use ecs::{scene, Camera, LodLevel, Mesh, MeshHandle, Transform};
    use glam::Vec3;

    /// A chain of `levels` meshes from `first`, each level reaching `step` further.
    fn chain(first: u32, levels: u32, step: f32) -> Lod {
        let levels: Vec<LodLevel> = (0..levels)
            .map(|level| LodLevel { mesh: MeshHandle(first + level), max_distance: step * (level + 1) as f32 })
            .collect();
        Lod { levels: Arc::from(levels), bias: 1.0 }
    }

    /// Each visible object's level, looked up in its own `Lod` (what the table saves).
    fn per_object(app: &runtime::App) -> [u32; LOD_STAT_LEVELS] {
        let visibility = app.resource::<Visibility>();
        let objects = visibility.objects();
        let mut counts = [0u32; LOD_STAT_LEVELS];
        for object in visibility.bits().iter_visible() {
            let drawn = objects.draws[object].mesh;
            let level = app
                .world()
                .get::<&Lod>(objects.entities[object])
                .ok()
                .and_then(|lod| lod.levels.iter().position(|level| level.mesh == drawn));
            counts[level.unwrap_or(0).min(LOD_STAT_LEVELS - 1)] += 1;
        }
        counts
    }

    #[test]
    fn the_table_counts_each_visible_object_at_the_level_its_chain_drew() {
        let mut app = runtime::App::with_threads(1);
        culling::install(&mut app);
        let world = app.world_mut();
        scene::spawn_camera(
            world,
            Camera::default(),
            scene::look_at(Vec3::new(0.0, 2.0, 0.0), Vec3::new(0.0, 2.0, -10.0)),
        );
        // Two chains (one shared by many entities, one of five levels), a mesh without one,
        // and objects behind the camera (not visible, not counted).
        let near = chain(10, 3, 20.0);
        let long = chain(20, 5, 8.0);
        for index in 0..60 {
            let distance = 2.0 + index as f32 * 1.5;
            let lod = if index % 2 == 0 { near.clone() } else { long.clone() };
            let mesh = Mesh { mesh: lod.levels[0].mesh, ..scene::unit_cube_mesh() };
            let entity = scene::spawn_mesh(world, mesh, Transform::from_translation(Vec3::new(0.0, 2.0, -distance)));
            world.insert_one(entity, lod).expect("just spawned");
        }
        for index in 0..5 {
            let position = Vec3::new(index as f32 - 2.0, 2.0, if index < 3 { -6.0 } else { 6.0 });
            scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform::from_translation(position));
        }
        app.run_frame();
        let mut table = LevelTable::default();
        assert_eq!(table.histogram(&app.resource::<Visibility>()), None, "no chain known before a refresh");
        table.refresh(app.world());
        let counts = table.histogram(&app.resource::<Visibility>()).expect("the world has chains");
        assert_eq!(counts, per_object(&app));
        assert_eq!(counts.iter().sum::<u32>() as usize, app.resource::<Visibility>().stats().visible);
        assert!(counts.iter().filter(|&&count| count > 0).count() >= 3, "several levels drawn: {counts:?}");
        assert!(counts[LOD_STAT_LEVELS - 1] > 0, "the coarsest bucket holds the five-level chain's far end");
    }
}
