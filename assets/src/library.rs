//! Putting processed meshes into a [`MeshLibrary`], which the renderer uploads.

use std::ops::Range;

use ecs::{Aabb, Lod, LodLevel, MeshHandle};
use glam::Vec3;
use meshes::{MeshLibrary, MeshVertices, Meshlet};

use crate::process::ProcessedMesh;

/// Where a processed mesh went in a [`MeshLibrary`].
#[derive(Clone, Debug, PartialEq)]
pub struct LibraryMesh {
    /// Mesh ids of its levels, finest first.
    pub levels: Range<u32>,
    /// Its local bounds.
    pub bounds: Aabb,
    /// The level list for an [`ecs::Lod`] component (each level's hand-over distance).
    pub lod: Lod,
}

impl LibraryMesh {
    /// The finest level, the mesh an entity's [`ecs::Mesh`] names.
    pub fn finest(&self) -> MeshHandle {
        MeshHandle(self.levels.start)
    }
}

/// Adds `mesh` (every level, with its meshlets) to `library`.
///
/// An error is the library's refusal, which [`crate::process_mesh`]'s output never earns.
pub fn add_to_library(library: &mut MeshLibrary, mesh: &ProcessedMesh) -> meshes::Result<LibraryMesh> {
    runtime::profile_zone!("add mesh to library");
    let levels: Vec<(&[u32], &[Meshlet])> =
        mesh.levels.iter().map(|level| (level.indices.as_slice(), level.meshlets.as_slice())).collect();
    let vertices = MeshVertices { positions: &mesh.positions, normals: &mesh.normals, uvs: &mesh.uvs };
    let ids = library.add_mesh_levels(vertices, &levels)?;
    let lod = Lod {
        levels: ids
            .clone()
            .zip(&mesh.levels)
            .map(|(id, level)| LodLevel { mesh: MeshHandle(id), max_distance: level.max_distance })
            .collect(),
        bias: 1.0,
    };
    Ok(LibraryMesh {
        levels: ids,
        bounds: Aabb { min: Vec3::from(mesh.bounds_min), max: Vec3::from(mesh.bounds_max) },
        lod,
    })
}
