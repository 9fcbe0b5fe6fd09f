//! The `view` uniform buffer: this frame's [`FrameView`] for every pass that reads it, then
//! one block per window view for the passes that run once per view
//! ([`PerView`](crate::PerView)).

use render_graph::{Access, BufferDesc, BufferWrite, PrepareContext, Registry, TypedPass};

use crate::names::VIEW;
use crate::scene::{lock_scene, FrameView, SharedScene, WindowViews, MAX_WINDOW_VIEWS};

/// Bytes from one block of the `view` uniform to the next: a [`FrameView`] rounded up to 256,
/// the largest `minUniformBufferOffsetAlignment` Vulkan allows, so every block may be bound
/// on its own (`Binding::buffer_range`).
pub const VIEW_BLOCK_STRIDE: u64 = size_of::<FrameView>().next_multiple_of(256) as u64;

/// Blocks the `view` uniform holds: the frame's view (block 0, what a pass binding the whole
/// buffer reads), then one per window view in draw order (block `1 + k` for view `k` of
/// [`WindowViews`]; a frame of one view has that view's block 1 equal to block 0).
pub const VIEW_BLOCKS: usize = 1 + MAX_WINDOW_VIEWS;

/// Creates the uniform buffer [`VIEW`] and writes the frame's [`FrameView`] (the graph's
/// parameter, [`render_graph::RenderGraph::set_param`]) into it at the start of the frame,
/// with the frame's index, the scene's object count and the viewport (the graph's output
/// extent) filled in; then, [`VIEW_BLOCK_STRIDE`] bytes apart, each window view's block
/// (the [`WindowViews`] parameter's [`WindowViews::uniforms`], filled in the same way but
/// for the viewport, the view's rectangle), [`VIEW_BLOCKS`] in all. It runs only when a pass reads `view` (it is [`Registry::optional`]),
/// so a frame that does not use it pays nothing; a frame that reads it without a view set
/// fails with [`render_graph::GraphError::MissingParam`].
///
/// A pass reads it with `registry.read_uniform_buffer(registry.buffer(renderer::VIEW), stage)`
/// and its shader declares the block with `ENGINE_VIEW_BLOCK(set, binding)` from `view.h`
/// ([`shaders::ENGINE_INCLUDE_DIR`]).
pub struct ViewUploadPass {
    scene: SharedScene,
    /// The blocks as uploaded, kept so a steady frame allocates nothing.
    bytes: Vec<u8>,
}

impl ViewUploadPass {
    /// Name of the pass.
    pub const NAME: &'static str = "view_upload";

    /// The pass for the frames of `scene` (its object count goes into the block).
    pub fn new(scene: SharedScene) -> ViewUploadPass {
        ViewUploadPass { scene, bytes: vec![0; VIEW_BLOCK_STRIDE as usize * VIEW_BLOCKS] }
    }
}

impl TypedPass for ViewUploadPass {
    type Handles = BufferWrite;

    fn name(&self) -> &str {
        Self::NAME
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> BufferWrite {
        let view = registry.create_buffer(VIEW, BufferDesc { size: VIEW_BLOCK_STRIDE * VIEW_BLOCKS as u64 });
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
        let (frame_index, object_count) = (context.frame_index() as u32, lock_scene(&self.scene).object_count());
        let frame =
            FrameView { viewport: [width, height, 1.0 / width, 1.0 / height], frame_index, object_count, ..*view };
        let views = context.param::<WindowViews>().map_or(&[][..], WindowViews::uniforms);
        // Block 0 the frame's view; with no window views listed, block 1 the same (the one
        // view a per-view pass runs for).
        let one = [frame];
        let blocks = std::iter::once(&frame).chain(if views.is_empty() { &one[..] } else { views });
        let stride = VIEW_BLOCK_STRIDE as usize;
        let mut used = 0;
        for (chunk, block) in self.bytes.chunks_exact_mut(stride).zip(blocks) {
            let block = FrameView { frame_index, object_count, ..*block };
            chunk[..size_of::<FrameView>()].copy_from_slice(block.as_bytes());
            used += stride;
        }
        if let Err(error) = context.upload_buffer(buffer, 0, &self.bytes[..used]) {
            context.fail(error);
        }
    }
}
