//! Putting processed meshes into a [`MeshLibrary`], which the renderer uploads.

use std::ops::Range;

use ecs::{Aabb, Lod, LodLevel, MeshHandle};
use glam::Vec3;
use meshes::{MeshLibrary, MeshVertices, Meshlet, VertexSkin};

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

/// Adds `mesh` (every level, with its meshlets, and a skinned mesh's joints and weights) to
/// `library`.
///
/// An error is the library's refusal, which [`crate::process_mesh`]'s output never earns.
pub fn add_to_library(library: &mut MeshLibrary, mesh: &ProcessedMesh) -> meshes::Result<LibraryMesh> {
    runtime::profile_zone!("add mesh to library");
    let placed = add_levels_with(mesh, |vertices, levels| match &mesh.skin {
        Some(skin) => {
            let influences = VertexSkin { joints: &skin.joints, weights: &skin.weights };
            library.add_skinned_mesh_levels(vertices, influences, levels)
        }
        None => library.add_mesh_levels(vertices, levels),
    })?;
    let errors: Vec<f32> = mesh.levels.iter().map(|level| level.error).collect();
    library.set_level_errors(placed.levels.clone(), &errors)?;
    Ok(placed)
}

/// Hands `mesh` (every level, with its meshlets, finest first; a skinned mesh without
/// meshlets) to `add_levels`, which adds
/// them where they are drawn and returns their ids (as [`MeshLibrary::add_mesh_levels`]
/// does; a renderer's meshes while frames run take the same call), and says where it went.
pub(crate) fn add_levels_with(
    mesh: &ProcessedMesh,
    add_levels: impl FnOnce(MeshVertices<'_>, &[(&[u32], &[Meshlet])]) -> meshes::Result<Range<u32>>,
) -> meshes::Result<LibraryMesh> {
    // A skinned mesh's meshlets are left out: their bounds are of the bind pose, which the
    // drawn pose leaves, so cluster culling would hide what shows. Without meshlets its
    // objects are culled and drawn whole by the object path, by their posed box.
    let skinned = mesh.skin.is_some();
    let levels: Vec<(&[u32], &[Meshlet])> = mesh
        .levels
        .iter()
        .map(|level| (level.indices.as_slice(), if skinned { &[][..] } else { level.meshlets.as_slice() }))
        .collect();
    let vertices = MeshVertices { positions: &mesh.positions, normals: &mesh.normals, uvs: &mesh.uvs };
    let ids = add_levels(vertices, &levels)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::MeshData;
    use crate::process::{process_mesh, ProcessOptions};

    #[test]
    fn the_library_keeps_each_levels_error_for_the_gpu_rule() {
        // A wavy grid of quads: enough triangles for a chain of several levels.
        let side = 16u32;
        let positions: Vec<[f32; 3]> = (0..=side)
            .flat_map(|row| {
                (0..=side).map(move |column| [column as f32, ((row * column) as f32 * 0.3).sin(), row as f32])
            })
            .collect();
        let mut indices = Vec::new();
        for row in 0..side {
            for column in 0..side {
                let corner = row * (side + 1) + column;
                indices.extend_from_slice(&[
                    corner,
                    corner + side + 1,
                    corner + 1,
                    corner + 1,
                    corner + side + 1,
                    corner + side + 2,
                ]);
            }
        }
        let mesh = process_mesh(&MeshData::new(positions, indices), &ProcessOptions::default()).unwrap();
        assert!(mesh.levels.len() > 1, "a chain to record");
        let mut library = MeshLibrary::new();
        let placed = add_to_library(&mut library, &mesh).unwrap();
        assert_eq!(library.lod_chain(placed.levels.start), placed.levels);
        for (id, level) in placed.levels.zip(&mesh.levels) {
            assert_eq!(library.level_error(id), Some(level.error), "mesh {id}: the importer's error");
        }
    }
}
