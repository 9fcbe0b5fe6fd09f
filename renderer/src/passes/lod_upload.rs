//! [`LodUploadPass`]: the chains' entries (`lod_entries`) uploaded in a frame without the
//! batch pass, which uploads them in the GPU-culled frame
//! ([`DrawBatchPass`](crate::passes::DrawBatchPass)): the cluster-culled frame's culls choose
//! levels from them too.

use crate::names::LOD_ENTRIES;
use crate::scene::{as_bytes, lock_scene, SharedScene};
use render_graph::{Access, BufferWrite, ExecuteContext, PrepareContext, Registry, TypedPass};

/// Uploads the whole chain table when it changed since the last upload (a new chain, a level
/// drawing another mesh, the table grown); nothing otherwise.
pub struct LodUploadPass {
    scene: SharedScene,
}

impl LodUploadPass {
    /// The upload of `scene`'s chain table (imported with the scene).
    pub fn new(scene: SharedScene) -> LodUploadPass {
        LodUploadPass { scene }
    }

    /// Name of the pass.
    pub const NAME: &'static str = "lod_upload";
}

impl TypedPass for LodUploadPass {
    /// `lod_entries`.
    type Handles = BufferWrite;

    fn name(&self) -> &str {
        Self::NAME
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> BufferWrite {
        let entries = registry.buffer(LOD_ENTRIES);
        registry.write_buffer(entries, Access::TransferWrite)
    }

    fn prepare(&mut self, entries: &BufferWrite, context: &mut PrepareContext<'_>) {
        let mut scene = lock_scene(&self.scene);
        if let Some(table) = scene.lod_entries_to_upload() {
            if let Err(error) = context.upload_buffer(entries, 0, as_bytes(table)) {
                // Marked dirty again: the next frame uploads it.
                scene.lod_upload_failed();
                context.fail(error);
            }
        }
    }

    fn execute(&mut self, _entries: &BufferWrite, _context: &mut ExecuteContext<'_>) {}
}
