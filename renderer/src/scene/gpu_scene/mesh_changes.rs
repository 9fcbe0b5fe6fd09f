//! Meshes removed and replaced while frames run.
//!
//! **Removal** ([`GpuScene::remove_mesh`]): a removed mesh's levels and its placeholder box
//! are drawn no more; an object still naming one of them draws nothing (its record is the
//! empty one, [`GpuScene::drawn_mesh`] is `None`), and the first frame that meets such an
//! object logs one warning naming the mesh. The ids are never given out again, so a
//! `MeshHandle` naming a removed mesh cannot come to draw another mesh.
//!
//! **Replacement** ([`GpuScene::replace_mesh_levels`]): the new data is added as a mesh of
//! its own (new ids, queued like any added mesh), each new level noting the level it
//! replaces. Until a new level is resident, an object naming the old level draws the old
//! data (or the old level's stand-in, never nothing); from the frame its last bytes are
//! copied, the old level counts as not resident and draws the new id
//! ([`crate::RenderReport::stand_ins`] lists it so, and the truth reference follows).
//!
//! **Bytes** (`mesh_freeing.rs`). A removed mesh's GPU ranges (its levels' indices, its
//! vertices, its box, and those of its replacements) are freed, and what it still had queued
//! is dropped; a replaced level's indices are freed once its replacement is resident (an
//! earlier replacement's likewise), and a family's shared vertices and box once all its
//! levels are superseded. A freed range is given again once the frames in flight that may
//! read it have finished (`placement.rs`). The host library keeps every byte.

use std::ops::Range;

use meshes::{MeshVertices, Meshlet};

use super::streaming::NO_PLACEHOLDER;
use super::GpuScene;

/// Why [`GpuScene::remove_mesh`] refused a mesh id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoveMeshError {
    /// No mesh has this id.
    Unknown(u32),
    /// The id names no mesh added while frames run: a mesh of the library given at install,
    /// a level other than the finest, or a placeholder box.
    NotAdded(u32),
    /// The mesh was removed already.
    AlreadyRemoved(u32),
}

impl std::fmt::Display for RemoveMeshError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoveMeshError::Unknown(mesh) => write!(formatter, "cannot remove mesh {mesh}: no mesh has this id"),
            RemoveMeshError::NotAdded(mesh) => write!(
                formatter,
                "cannot remove mesh {mesh}: only the finest level of a mesh added while frames run can be removed"
            ),
            RemoveMeshError::AlreadyRemoved(mesh) => {
                write!(formatter, "cannot remove mesh {mesh}: it was removed already")
            }
        }
    }
}

impl std::error::Error for RemoveMeshError {}

/// Why [`GpuScene::replace_mesh_levels`] refused.
#[derive(Debug)]
pub enum ReplaceMeshError {
    /// The mesh id cannot be replaced, for the reason [`GpuScene::remove_mesh`] would refuse it.
    Mesh(RemoveMeshError),
    /// The new data has another number of levels than the mesh (a mesh's level ids are fixed).
    LevelCount {
        /// The mesh replaced.
        mesh: u32,
        /// Its levels.
        levels: u32,
        /// The levels given.
        given: usize,
    },
    /// The library refused the new data.
    Library(meshes::LibraryError),
}

impl std::fmt::Display for ReplaceMeshError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplaceMeshError::Mesh(error) => write!(formatter, "cannot replace: {error}"),
            ReplaceMeshError::LevelCount { mesh, levels, given } => {
                write!(formatter, "cannot replace mesh {mesh}: it has {levels} levels, the new data {given}")
            }
            ReplaceMeshError::Library(error) => write!(formatter, "cannot replace a mesh: {error}"),
        }
    }
}

impl std::error::Error for ReplaceMeshError {}

impl GpuScene {
    /// The family of an added mesh named by its finest level, neither removed nor unknown.
    fn added_family(&self, mesh: u32) -> Result<super::streaming::Family, RemoveMeshError> {
        if self.meshes.range(mesh).is_none() {
            return Err(RemoveMeshError::Unknown(mesh));
        }
        let family = match self.stream.families.get(mesh as usize) {
            Some(family) if family.first == mesh && family.placeholder != NO_PLACEHOLDER => *family,
            _ => return Err(RemoveMeshError::NotAdded(mesh)),
        };
        if family.removed {
            return Err(RemoveMeshError::AlreadyRemoved(mesh));
        }
        Ok(family)
    }

    /// Replaces the data of a mesh added while frames run (named by its finest level's id)
    /// by `vertices` and `levels` (finest first, as many levels as it has), keeping its ids:
    /// objects naming a level draw its new data once that is on the GPU, and the old until
    /// then (see the module docs). Returns the ids the new data has internally (each level
    /// is drawn under the old id). A game whose new data has other bounds updates its
    /// objects' `Mesh::bounds`: culling uses the object's box. Nothing changes on an error.
    pub fn replace_mesh_levels(
        &mut self,
        mesh: u32,
        vertices: MeshVertices<'_>,
        levels: &[(&[u32], &[Meshlet])],
    ) -> Result<Range<u32>, ReplaceMeshError> {
        let family = self.added_family(mesh).map_err(ReplaceMeshError::Mesh)?;
        if levels.len() != family.levels as usize {
            return Err(ReplaceMeshError::LevelCount { mesh, levels: family.levels, given: levels.len() });
        }
        let added = self.add_mesh_levels(vertices, levels).map_err(ReplaceMeshError::Library)?;
        for (new, old) in added.clone().zip(family.first..) {
            self.stream.families[new as usize].replaces = old;
        }
        // The new levels stand for the old ids, which the views name: they are all loaded,
        // budget or not, and never evicted.
        if self.stream.families[added.end as usize - 1].vertices_out {
            self.queue_coarsest(added.end - 1);
        }
        for id in added.clone().rev().skip(1) {
            if !self.stream.placement.place(id).placed {
                self.queue_level(id, None);
            }
        }
        Ok(added)
    }

    /// Removes a mesh added while frames run ([`GpuScene::add_mesh_levels`]), named by its
    /// finest level's id, with every level and its placeholder box; returns the levels' ids.
    /// An object that still names one of them draws nothing from the next frame on, and the
    /// frame logs one warning naming the mesh (see the module docs for what becomes of the
    /// bytes). An unknown id, an id that is not the finest level of an added mesh, or a mesh
    /// removed already is refused by name, and nothing changes.
    pub fn remove_mesh(&mut self, mesh: u32) -> Result<Range<u32>, RemoveMeshError> {
        let family = self.added_family(mesh)?;
        let frame = self.last_reader();
        self.stream.changed_since.push(family.first);
        let levels = family.first..family.first + family.levels;
        self.free_family(family.first, frame);
        // Its replacements, resident or on their way, go with it.
        let families = &self.stream.families;
        let replacements: Vec<u32> = (levels.end..families.len() as u32)
            .filter(|&id| families[id as usize].first == id && levels.contains(&families[id as usize].replaces))
            .filter(|&id| !families[id as usize].removed)
            .collect();
        for first in replacements {
            self.free_family(first, frame);
        }
        Ok(levels)
    }

    /// Whether `mesh` is a level or the placeholder of a removed mesh.
    pub fn is_removed(&self, mesh: u32) -> bool {
        self.stream.families.get(mesh as usize).is_some_and(|family| family.removed)
    }

    /// Logs, once per removed mesh, that an object still names `mesh`, removed (the Render
    /// stage calls it for each such object it writes).
    pub(crate) fn warn_removed_once(&mut self, mesh: u32) {
        let Some(family) = self.stream.families.get(mesh as usize) else { return };
        let first = family.first;
        if !self.stream.warned.contains(&first) {
            self.stream.warned.push(first);
            log::warn!("an object names mesh {mesh}, whose mesh (finest level {first}) was removed: it draws nothing");
        }
    }
}
