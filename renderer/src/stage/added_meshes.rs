//! [`RenderMeshes`]: the resource through which a game adds meshes while it runs.

use std::ops::Range;

use meshes::{MeshVertices, Meshlet};

const _: () = assert!(
    ecs::DEFAULT_TRANSFER_BUDGET == meshes::DEFAULT_TRANSFER_BUDGET,
    "the render settings' default budget is the transfer queue's"
);

use crate::scene::{lock_scene, SharedScene};

/// The renderer's meshes, for a game adding to them while it runs: a resource
/// [`install_render`](super::install_render) inserts when it draws.
///
/// A mesh added here gets its ids at once (a `MeshHandle` may name them in the same frame);
/// its bytes reach the GPU over the next frames under
/// [`ecs::RenderSettings::transfer_budget`], and until then its objects draw a coarser level
/// or a box of its bounds, culled with their own boxes (see
/// [`GpuScene::add_mesh_levels`](crate::GpuScene::add_mesh_levels) and
/// [`crate::RenderReport::stand_ins`]). The ids follow those of the library given to
/// `install_render`, each mesh's levels then one id for its placeholder box.
#[derive(Clone)]
pub struct RenderMeshes {
    scene: SharedScene,
}

impl RenderMeshes {
    /// The meshes of `scene`.
    pub(super) fn new(scene: SharedScene) -> RenderMeshes {
        RenderMeshes { scene }
    }

    /// Adds a lit mesh with its levels of detail (finest first) and returns the levels' ids;
    /// nothing is added on an error (see [`meshes::MeshLibrary::add_mesh_levels`]). Waits
    /// for a frame being recorded on the render thread to let go of the scene.
    pub fn add_mesh_levels(
        &self,
        vertices: MeshVertices<'_>,
        levels: &[(&[u32], &[Meshlet])],
    ) -> meshes::Result<Range<u32>> {
        lock_scene(&self.scene).add_mesh_levels(vertices, levels)
    }

    /// Removes a mesh added here, named by its finest level's id (the start of what
    /// [`RenderMeshes::add_mesh_levels`] returned): objects still naming its levels draw
    /// nothing from the next frame on, with one warning naming it; an unknown id, another
    /// mesh's or one removed already is refused by name (see
    /// [`GpuScene::remove_mesh`](crate::GpuScene::remove_mesh)).
    pub fn remove_mesh(&self, mesh: u32) -> Result<Range<u32>, crate::RemoveMeshError> {
        lock_scene(&self.scene).remove_mesh(mesh)
    }

    /// Replaces the data of a mesh added here (named by its finest level's id) by new
    /// levels, as many as it has, keeping its ids: its objects draw the new data once it is
    /// on the GPU and the old until then (see
    /// [`GpuScene::replace_mesh_levels`](crate::GpuScene::replace_mesh_levels)).
    pub fn replace_mesh_levels(
        &self,
        mesh: u32,
        vertices: MeshVertices<'_>,
        levels: &[(&[u32], &[Meshlet])],
    ) -> Result<Range<u32>, crate::ReplaceMeshError> {
        lock_scene(&self.scene).replace_mesh_levels(mesh, vertices, levels)
    }

    /// Whether mesh `mesh`'s own triangles are drawn (its bytes are on the GPU).
    pub fn is_resident(&self, mesh: u32) -> bool {
        lock_scene(&self.scene).is_resident(mesh)
    }

    /// Bytes the GPU mesh buffers (`mesh_vertices`, `mesh_indices`, `mesh_uvs`) take now:
    /// they grow when the meshes no longer fit, and a level loaded into a range an evicted
    /// or removed one left takes no more.
    pub fn buffer_bytes(&self) -> u64 {
        lock_scene(&self.scene).mesh_buffer_bytes()
    }

    /// Bytes of added meshes still waiting for a frame to take them.
    pub fn pending_bytes(&self) -> u64 {
        lock_scene(&self.scene).pending_mesh_bytes()
    }
}
