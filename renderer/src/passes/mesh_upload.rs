//! The pass that copies each frame's slice of the meshes added while frames run
//! ([`GpuScene::add_mesh_levels`](crate::scene::GpuScene::add_mesh_levels)) into
//! `mesh_vertices`, `mesh_indices` and `mesh_uvs`, and the material table entries added or
//! changed since the last frame ([`GpuScene::add_material`](crate::scene::GpuScene::add_material))
//! into `materials`.

use crate::names::{MATERIALS, MESH_INDICES, MESH_UVS, MESH_VERTICES};
use crate::scene::{lock_scene, SharedScene};
use render_graph::{Access, BufferWrite, ExecuteContext, PrepareContext, Registry, TypedPass};

/// The handle of `materials` among the pass's.
const MATERIAL_TARGET: usize = 3;

/// Copies the slice of added meshes the frame took
/// ([`GpuScene::stream_frame`](crate::scene::GpuScene::stream_frame), at most the transfer
/// budget) into the mesh buffers, at the start of the frame's passes: the frame's draws may
/// name what it completes. Runs after [`ObjectUploadPass`](crate::passes::ObjectUploadPass),
/// which copies outgrown mesh buffers first. A frame with no slice copies nothing. The
/// material entries marked since the last frame go with it (outside the budget: 16 bytes
/// each).
pub struct MeshUploadPass {
    scene: SharedScene,
}

impl MeshUploadPass {
    /// A pass uploading `scene`'s added meshes; the scene's buffers must be imported
    /// ([`crate::scene::GpuScene::import_into`]).
    pub fn new(scene: SharedScene) -> MeshUploadPass {
        MeshUploadPass { scene }
    }

    /// Name of the pass.
    pub const NAME: &'static str = "mesh_upload";
}

impl TypedPass for MeshUploadPass {
    /// `mesh_vertices`, `mesh_indices` and `mesh_uvs`, in the order of the transfer targets,
    /// then `materials`.
    type Handles = [BufferWrite; 4];

    fn name(&self) -> &str {
        Self::NAME
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> [BufferWrite; 4] {
        [MESH_VERTICES, MESH_INDICES, MESH_UVS, MATERIALS].map(|name| {
            let buffer = registry.buffer(name);
            registry.write_buffer(buffer, Access::TransferWrite)
        })
    }

    fn prepare(&mut self, targets: &[BufferWrite; 4], context: &mut PrepareContext<'_>) {
        let mut scene = lock_scene(&self.scene);
        let mut result = Ok(());
        for (target, offset, bytes) in scene.mesh_slice() {
            result = context.upload_buffer(&targets[target as usize], offset, bytes);
            if result.is_err() {
                break;
            }
        }
        if let (Ok(()), Some((offset, bytes))) = (&result, scene.material_slice()) {
            result = context.upload_buffer(&targets[MATERIAL_TARGET], offset, bytes);
            if result.is_ok() {
                scene.note_material_slice_staged();
            }
        }
        match result {
            Ok(()) => scene.note_mesh_slice_staged(),
            // The slice stays: the next frame copies it again (this one is not submitted).
            Err(error) => context.fail(error),
        }
    }

    fn execute(&mut self, _targets: &[BufferWrite; 4], _context: &mut ExecuteContext<'_>) {}
}
