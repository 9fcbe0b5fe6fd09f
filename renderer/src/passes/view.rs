//! The `view` uniform buffer: this frame's [`FrameView`] for every pass that reads it.

use render_graph::{Access, BufferDesc, BufferWrite, PrepareContext, Registry, TypedPass};

use crate::names::VIEW;
use crate::scene::{lock_scene, FrameView, SharedScene};

/// Creates the uniform buffer [`VIEW`] and writes the frame's [`FrameView`] (the graph's
/// parameter, [`render_graph::RenderGraph::set_param`]) into it at the start of the frame,
/// with the frame's index, the scene's object count and the viewport (the graph's output
/// extent) filled in. It runs only when a pass reads `view` (it is [`Registry::optional`]),
/// so a frame that does not use it pays nothing; a frame that reads it without a view set
/// fails with [`render_graph::GraphError::MissingParam`].
///
/// A pass reads it with `registry.read_uniform_buffer(registry.buffer(renderer::VIEW), stage)`
/// and its shader declares the block with `ENGINE_VIEW_BLOCK(set, binding)` from `view.h`
/// ([`shaders::ENGINE_INCLUDE_DIR`]).
pub struct ViewUploadPass {
    scene: SharedScene,
}

impl ViewUploadPass {
    /// Name of the pass.
    pub const NAME: &'static str = "view_upload";

    /// The pass for the frames of `scene` (its object count goes into the block).
    pub fn new(scene: SharedScene) -> ViewUploadPass {
        ViewUploadPass { scene }
    }
}

impl TypedPass for ViewUploadPass {
    type Handles = BufferWrite;

    fn name(&self) -> &str {
        Self::NAME
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> BufferWrite {
        let view = registry.create_buffer(VIEW, BufferDesc { size: size_of::<FrameView>() as u64 });
        registry.optional();
        registry.write_buffer(view, Access::TransferWrite)
    }

    fn prepare(&mut self, buffer: &BufferWrite, context: &mut PrepareContext<'_>) {
        let view = match context.require_param::<FrameView>() {
            Ok(view) => view,
            Err(error) => return context.fail(error),
        };
        let extent = context.output_extent();
        let (width, height) = (extent.width.max(1) as f32, extent.height.max(1) as f32);
        let view = FrameView {
            viewport: [width, height, 1.0 / width, 1.0 / height],
            frame_index: context.frame_index() as u32,
            object_count: lock_scene(&self.scene).object_count(),
            ..*view
        };
        if let Err(error) = context.upload_buffer(buffer, 0, view.as_bytes()) {
            context.fail(error);
        }
    }
}
