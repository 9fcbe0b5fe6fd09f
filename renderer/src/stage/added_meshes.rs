//! [`RenderMeshes`]: the resource through which a game adds meshes, materials and textures
//! while it runs.

use std::ops::Range;

use meshes::{MeshVertices, Meshlet};

const _: () = assert!(
    ecs::DEFAULT_TRANSFER_BUDGET == meshes::DEFAULT_TRANSFER_BUDGET,
    "the render settings' default budget is the transfer queue's"
);

use super::occluders::{OccluderChanges, SharedOccluderChanges};
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
///
/// Where the renderer derives the CPU occluders from the meshes
/// ([`ecs::RenderSettings::occluders_from_meshes`]), a mesh added here gets one too (a box
/// inside every level, derived on the calling thread), from the next frame; a removed or
/// replaced mesh's levels lose theirs, and a material added or replaced here is marked
/// see-through when it has holes (see `renderer/src/stage/occluders.rs`).
#[derive(Clone)]
pub struct RenderMeshes {
    scene: SharedScene,
    /// The occluder changes for the next frame (`None`: occluders are the game's alone).
    occluders: Option<SharedOccluderChanges>,
}

impl RenderMeshes {
    /// The meshes of `scene`, noting occluder changes in `occluders`.
    pub(super) fn new(scene: SharedScene, occluders: Option<SharedOccluderChanges>) -> RenderMeshes {
        RenderMeshes { scene, occluders }
    }

    /// Adds a lit mesh with its levels of detail (finest first) and returns the levels' ids;
    /// nothing is added on an error (see [`meshes::MeshLibrary::add_mesh_levels`]). Waits
    /// for a frame being recorded on the render thread to let go of the scene.
    pub fn add_mesh_levels(
        &self,
        vertices: MeshVertices<'_>,
        levels: &[(&[u32], &[Meshlet])],
    ) -> meshes::Result<Range<u32>> {
        let ids = lock_scene(&self.scene).add_mesh_levels(vertices, levels)?;
        self.note_occluder(ids.clone(), &vertices, levels);
        Ok(ids)
    }

    /// [`RenderMeshes::add_mesh_levels`] with the mesh's occluder derived already, off the
    /// frame (by [`crate::streamed_occluder`], as an asset loader thread does:
    /// `assets::ProcessOptions::occluders`), so this call only copies the mesh: the inner-box
    /// search over every level's triangles is the longest part of an add. `None`: the mesh
    /// occludes nothing (open or malformed). Where the renderer does not derive occluders
    /// (see the type's docs) the occluder is dropped.
    pub fn add_mesh_levels_with_occluder(
        &self,
        vertices: MeshVertices<'_>,
        levels: &[(&[u32], &[Meshlet])],
        occluder: Option<culling::occlusion::OccluderMesh>,
    ) -> meshes::Result<Range<u32>> {
        let ids = lock_scene(&self.scene).add_mesh_levels(vertices, levels)?;
        if let Some(changes) = &self.occluders {
            OccluderChanges::note_derived(changes, ids.clone(), occluder);
        }
        Ok(ids)
    }

    /// Derives the occluder of levels `ids` (see the type's docs).
    fn note_occluder(&self, ids: Range<u32>, vertices: &MeshVertices<'_>, levels: &[(&[u32], &[Meshlet])]) {
        let Some(changes) = &self.occluders else { return };
        let indices: Vec<&[u32]> = levels.iter().map(|&(indices, _)| indices).collect();
        OccluderChanges::note_mesh(changes, ids, vertices.positions, &indices);
    }

    /// Adds a skinned mesh with its levels of detail (finest first) and its vertices' joints
    /// and weights, as [`RenderMeshes::add_mesh_levels`]: the influences stream to the GPU
    /// with the vertices, so an entity drawing it with an `animation::Skin` is skinned (see
    /// [`GpuScene::add_skinned_mesh_levels`](crate::GpuScene::add_skinned_mesh_levels)).
    pub fn add_skinned_mesh_levels(
        &self,
        vertices: MeshVertices<'_>,
        skin: meshes::VertexSkin<'_>,
        levels: &[(&[u32], &[Meshlet])],
    ) -> meshes::Result<Range<u32>> {
        lock_scene(&self.scene).add_skinned_mesh_levels(vertices, skin, levels)
    }

    /// Removes a mesh added here, named by its finest level's id (the start of what
    /// [`RenderMeshes::add_mesh_levels`] returned): objects still naming its levels draw
    /// nothing from the next frame on, with one warning naming it; an unknown id, another
    /// mesh's or one removed already is refused by name (see
    /// [`GpuScene::remove_mesh`](crate::GpuScene::remove_mesh)).
    pub fn remove_mesh(&self, mesh: u32) -> Result<Range<u32>, crate::RemoveMeshError> {
        let ids = lock_scene(&self.scene).remove_mesh(mesh)?;
        if let Some(changes) = &self.occluders {
            OccluderChanges::note_removed(changes, ids.clone());
        }
        Ok(ids)
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
        let ids = lock_scene(&self.scene).replace_mesh_levels(mesh, vertices, levels)?;
        // The old data draws until the new is on the GPU: neither's box alone is safe.
        if let Some(changes) = &self.occluders {
            OccluderChanges::note_removed(changes, ids.clone());
        }
        Ok(ids)
    }

    /// How much the host library holds: its mesh ids (levels and placeholder boxes) and its
    /// indices. Every mesh added or replaced grows it, so a tool drawing from a copy of the
    /// library ([`RenderMeshes::library`]) compares it to know when to copy again.
    pub fn library_extent(&self) -> (usize, usize) {
        let scene = lock_scene(&self.scene);
        (scene.meshes().len(), scene.meshes().indices().len())
    }

    /// A copy of the host library: every mesh installed or added so far (ids as the frame's
    /// records name them), for a tool drawing the frame's objects on its own (picking).
    /// Copies every mesh: not for every frame.
    pub fn library(&self) -> meshes::MeshLibrary {
        lock_scene(&self.scene).meshes().clone()
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

    /// Adds a material and returns its id, valid at once (a `MaterialHandle` may name it in
    /// the same frame); its entry reaches the GPU with the next frame (see
    /// [`GpuScene::add_material`](crate::GpuScene::add_material)). Where the renderer derives
    /// the occluders, a material with holes (an alpha mask or blending) is marked see-through
    /// for the CPU's occlusion culling from the next frame
    /// ([`culling::occlusion::OccluderMeshes::set_see_through`]); else that is the game's.
    pub fn add_material(&self, material: meshes::Material) -> Result<u32, crate::MaterialError> {
        let id = lock_scene(&self.scene).add_material(material)?;
        if let Some(changes) = &self.occluders {
            OccluderChanges::note_material(changes, id, &material);
        }
        Ok(id)
    }

    /// Replaces material `id`, keeping the id: its objects draw the new one from the next
    /// frame; an unknown or removed id is refused by name (see
    /// [`GpuScene::replace_material`](crate::GpuScene::replace_material)).
    pub fn replace_material(&self, id: u32, material: meshes::Material) -> Result<(), crate::MaterialError> {
        lock_scene(&self.scene).replace_material(id, material)?;
        if let Some(changes) = &self.occluders {
            OccluderChanges::note_material(changes, id, &material);
        }
        Ok(())
    }

    /// Removes material `id`: objects still naming it draw with the default material (their
    /// colour alone) from the next frame, with one warning naming it; the id is refused from
    /// then on (see [`GpuScene::remove_material`](crate::GpuScene::remove_material)).
    pub fn remove_material(&self, id: u32) -> Result<(), crate::MaterialError> {
        lock_scene(&self.scene).remove_material(id)
    }

    /// Adds a base-colour texture (a square power-of-two RGBA8 sRGB image with its full mip
    /// chain, of [`RenderMeshes::texture_size`] when that is not 0) and returns its id, valid
    /// at once for a material; its texels reach the GPU under the transfer budget, smallest
    /// mips first, and its materials sample what arrived (see
    /// [`GpuScene::add_texture`](crate::GpuScene::add_texture)).
    pub fn add_texture(&self, size: u32, mips: Vec<Vec<u8>>) -> Result<u32, crate::MaterialError> {
        lock_scene(&self.scene).add_texture(size, mips)
    }

    /// Replaces texture `id`'s texels, keeping the id (see
    /// [`GpuScene::replace_texture`](crate::GpuScene::replace_texture)).
    pub fn replace_texture(&self, id: u32, size: u32, mips: Vec<Vec<u8>>) -> Result<(), crate::MaterialError> {
        lock_scene(&self.scene).replace_texture(id, size, mips)
    }

    /// Removes texture `id`: its materials draw the colour alone from the next frame, and the
    /// id is refused until a later texture is given its layer (see
    /// [`GpuScene::remove_texture`](crate::GpuScene::remove_texture)).
    pub fn remove_texture(&self, id: u32) -> Result<(), crate::MaterialError> {
        lock_scene(&self.scene).remove_texture(id)
    }

    /// The side every texture added must have (0 before the first texture: any).
    pub fn texture_size(&self) -> u32 {
        lock_scene(&self.scene).texture_size()
    }

    /// Whether every mip of texture `id` is on the GPU.
    pub fn is_texture_resident(&self, id: u32) -> bool {
        lock_scene(&self.scene).is_texture_resident(id)
    }

    /// Bytes of added textures still waiting for a frame to take them.
    pub fn pending_texture_bytes(&self) -> u64 {
        lock_scene(&self.scene).pending_texture_bytes()
    }

    /// Bytes of added meshes still waiting for a frame to take them.
    pub fn pending_bytes(&self) -> u64 {
        lock_scene(&self.scene).pending_mesh_bytes()
    }
}

/// A loaded model's parts go to the renderer while frames run: an importer given the
/// resource adds meshes, textures and materials with ids valid at once.
impl meshes::AssetSink for RenderMeshes {
    fn add_mesh_levels(
        &mut self,
        vertices: MeshVertices<'_>,
        levels: &[(&[u32], &[Meshlet])],
    ) -> meshes::Result<Range<u32>> {
        RenderMeshes::add_mesh_levels(self, vertices, levels)
    }

    fn add_skinned_mesh_levels(
        &mut self,
        vertices: MeshVertices<'_>,
        skin: meshes::VertexSkin<'_>,
        levels: &[(&[u32], &[Meshlet])],
    ) -> meshes::Result<Range<u32>> {
        RenderMeshes::add_skinned_mesh_levels(self, vertices, skin, levels)
    }

    fn texture_size(&self) -> u32 {
        RenderMeshes::texture_size(self)
    }

    fn add_texture(&mut self, size: u32, mips: Vec<Vec<u8>>) -> meshes::Result<u32> {
        RenderMeshes::add_texture(self, size, mips).map_err(Into::into)
    }

    fn add_material(&mut self, material: meshes::Material) -> meshes::Result<u32> {
        RenderMeshes::add_material(self, material).map_err(Into::into)
    }
}
