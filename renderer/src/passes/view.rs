//! The `view` uniform buffer: this frame's [`FrameView`] for every pass that reads it.

use render_graph::{Access, BufferDesc, BufferHandle, ExecuteContext, Pass, PrepareContext, Registry};

use crate::names::VIEW;
use crate::scene::{lock_scene, FrameView, SharedScene};

/// Creates the uniform buffer [`VIEW`] and writes the scene's [`FrameView`] into it at the
/// start of the frame, with the frame's index, object count and viewport (the graph's
/// output extent) filled in. It runs only when
/// a pass reads `view` (it is [`Registry::optional`]), so a frame that does not use it pays
/// nothing.
///
/// A pass reads it with `registry.read_uniform_buffer(registry.buffer(renderer::VIEW), stage)`
/// and its shader declares the block with `ENGINE_VIEW_BLOCK(set, binding)` from `view.h`
/// ([`shaders::ENGINE_INCLUDE_DIR`]).
pub struct ViewUploadPass {
    scene: SharedScene,
    view: Option<BufferHandle>,
}

impl ViewUploadPass {
    /// Name of the pass.
    pub const NAME: &'static str = "view_upload";

    /// The pass for `scene`'s view ([`crate::GpuScene::set_frame_view`]).
    pub fn new(scene: SharedScene) -> ViewUploadPass {
        ViewUploadPass { scene, view: None }
    }
}

impl Pass for ViewUploadPass {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        let view = registry.create_buffer(VIEW, BufferDesc { size: size_of::<FrameView>() as u64 });
        self.view = Some(registry.access_buffer(view, Access::TransferWrite));
        registry.optional();
    }

    fn prepare(&mut self, context: &mut PrepareContext<'_>) {
        let Some(buffer) = self.view else { return };
        let view = {
            let scene = lock_scene(&self.scene);
            let extent = context.output_extent();
            let (width, height) = (extent.width.max(1) as f32, extent.height.max(1) as f32);
            FrameView {
                viewport: [width, height, 1.0 / width, 1.0 / height],
                frame_index: context.frame_index() as u32,
                object_count: scene.object_count(),
                ..*scene.frame_view()
            }
        };
        if let Err(error) = context.upload_buffer(buffer, 0, view.as_bytes()) {
            context.fail(error);
        }
    }

    fn execute(&mut self, _context: &mut ExecuteContext<'_>) {}
}
