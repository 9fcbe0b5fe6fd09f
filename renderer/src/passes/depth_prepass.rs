//! The depth prepass: draws the scene's draw list into `depth_prepass` (D32_SFLOAT,
//! reversed-Z: cleared to 0, compare GREATER, depth written), so that the geometry pass
//! shades each pixel once and the Hi-Z build has this frame's depth.

use std::sync::Arc;

use render_graph::vk;

use super::draw::{check_mode, check_output_extent, DrawLists, DrawMode, OpaquePipelines, SceneInputs, SCENE_BINDINGS};
use crate::names::{DEPTH_FORMAT, DEPTH_PREPASS};
use crate::scene::SharedScene;
use render_graph::ExecuteContext;
use render_graph::GpuDevice;
use render_graph::Result;
use render_graph::{AttachmentLoad, ImageDesc, ImageSize, Registry, TypedPass};

/// Writes the nearest depth of the drawn objects to `depth_prepass`, the size of the
/// graph's output: the early list of `draw_commands` (the host's whole list, or what the
/// early cull appended). Reads `object_records`, `mesh_vertices`, `mesh_indices`,
/// `draw_commands`, `draw_count` and `draw_instances`, and the frame's
/// [`FrameView`](crate::FrameView) parameter (its `view_projection`).
///
/// [`DepthPrepass::late`] makes the second prepass of two-phase occlusion culling: it adds
/// to the `depth_prepass` an earlier prepass drew (loaded, not cleared), drawing only the
/// late list, the commands the late culling passes appended.
pub struct DepthPrepass {
    pipeline: OpaquePipelines,
    scene: SharedScene,
    mode: DrawMode,
    late: bool,
}

impl DepthPrepass {
    /// A prepass drawing `scene` in the best [`DrawMode`] of the device.
    pub fn new(device: &Arc<GpuDevice>, scene: SharedScene) -> Result<DepthPrepass> {
        DepthPrepass::with_mode(device, scene, DrawMode::best(device.capabilities()))
    }

    /// A prepass drawing in `mode`; an error when the device does not support it.
    pub fn with_mode(device: &Arc<GpuDevice>, scene: SharedScene, mode: DrawMode) -> Result<DepthPrepass> {
        check_mode(device, mode)?;
        let pipeline = OpaquePipelines::new(
            device,
            DEPTH_PREPASS,
            (shaders::DEPTH_PREPASS_VERT.words(), shaders::DEPTH_PREPASS_FRAG.words()),
            &SCENE_BINDINGS,
            &[],
            (DEPTH_FORMAT, vk::CompareOp::GREATER, true),
        )?;
        Ok(DepthPrepass { pipeline, scene, mode, late: false })
    }

    /// The late prepass of two-phase culling, named [`DepthPrepass::LATE_NAME`]: loads
    /// `depth_prepass` instead of creating and clearing it.
    pub fn late(device: &Arc<GpuDevice>, scene: SharedScene, mode: DrawMode) -> Result<DepthPrepass> {
        Ok(DepthPrepass { late: true, ..DepthPrepass::with_mode(device, scene, mode)? })
    }

    /// Name of the pass made by [`DepthPrepass::late`].
    pub const LATE_NAME: &'static str = "depth_prepass late";
}

impl TypedPass for DepthPrepass {
    /// The scene's buffers (the depth attachment is the graph's to record).
    type Handles = SceneInputs;

    fn name(&self) -> &str {
        if self.late {
            Self::LATE_NAME
        } else {
            DEPTH_PREPASS
        }
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> SceneInputs {
        let inputs = SceneInputs::register(registry);
        if self.late {
            let depth = registry.image(DEPTH_PREPASS);
            registry.depth_attachment(depth, AttachmentLoad::Load);
            return inputs;
        }
        let depth = registry.create_image(DEPTH_PREPASS, ImageDesc::new(DEPTH_FORMAT, ImageSize::OUTPUT));
        // Reversed-Z: 0 is infinitely far.
        registry.depth_attachment(depth, AttachmentLoad::ClearDepth(0.0));
        inputs
    }

    fn execute(&mut self, _inputs: &SceneInputs, context: &mut ExecuteContext<'_>) {
        check_output_extent(context, DEPTH_PREPASS);
    }

    fn record_draw(&mut self, inputs: &SceneInputs, context: &mut ExecuteContext<'_>) {
        if context.failed() {
            return;
        }
        let lists = if self.late { DrawLists::Late } else { DrawLists::Early };
        self.pipeline.draw(inputs, &[], context, &self.scene, (self.mode, lists));
    }
}
