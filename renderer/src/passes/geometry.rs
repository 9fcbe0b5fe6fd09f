//! The geometry pass: draws the scene's draw list into `color` (RGBA8, one flat colour per
//! object), testing against `depth_prepass` with GREATER_OR_EQUAL and writing no depth.

use std::sync::Arc;

use render_graph::vk;

use super::draw::{check_mode, check_output_extent, DrawMode, OpaquePipelines, SceneInputs};
use crate::names::{COLOR, COLOR_FORMAT, DEPTH_FORMAT, DEPTH_PREPASS};
use crate::scene::SharedScene;
use render_graph::ExecuteContext;
use render_graph::GpuDevice;
use render_graph::Pass;
use render_graph::Result;
use render_graph::{AttachmentLoad, ImageDesc, ImageSize, Registry};

/// Draws every object of the draw list in its flat colour into `color`, the size of the
/// graph's output, cleared to the pass's clear colour.
///
/// Its vertex shader computes positions with the depth prepass's `precise` function, so each
/// surface reaches the depth test with the depth the prepass stored and passes
/// GREATER_OR_EQUAL; hidden surfaces fail it. Where two
/// objects have equal depth the later draw wins, as it would without a prepass, so the image
/// depends only on the drawn objects and their order.
pub struct GeometryPass {
    pipeline: OpaquePipelines,
    scene: SharedScene,
    mode: DrawMode,
    clear_color: [f32; 4],
    inputs: Option<SceneInputs>,
}

impl GeometryPass {
    /// A geometry pass drawing `scene` in the best [`DrawMode`] of the device, clearing
    /// `color` to `clear_color`.
    pub fn new(device: &Arc<GpuDevice>, scene: SharedScene, clear_color: [f32; 4]) -> Result<GeometryPass> {
        GeometryPass::with_mode(device, scene, clear_color, DrawMode::best(device.capabilities()))
    }

    /// A geometry pass drawing in `mode`; an error when the device does not support it.
    pub fn with_mode(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        clear_color: [f32; 4],
        mode: DrawMode,
    ) -> Result<GeometryPass> {
        check_mode(device, mode)?;
        let pipeline = OpaquePipelines::new(
            device,
            "geometry",
            (shaders::GEOMETRY_VERT.words(), shaders::GEOMETRY_FRAG.words()),
            &[COLOR_FORMAT],
            (DEPTH_FORMAT, vk::CompareOp::GREATER_OR_EQUAL, false),
        )?;
        Ok(GeometryPass { pipeline, scene, mode, clear_color, inputs: None })
    }
}

impl Pass for GeometryPass {
    fn name(&self) -> &str {
        "geometry"
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        self.inputs = Some(SceneInputs::register(registry));
        let depth = registry.image(DEPTH_PREPASS);
        registry.depth_read(depth);
        let color = registry.create_image(COLOR, ImageDesc::new(COLOR_FORMAT, ImageSize::OUTPUT));
        registry.color_attachment(color, AttachmentLoad::ClearColor(self.clear_color));
    }

    fn execute(&mut self, context: &mut ExecuteContext<'_>) {
        check_output_extent(context, COLOR);
    }

    fn record_draw(&mut self, context: &mut ExecuteContext<'_>) {
        if context.failed() {
            return;
        }
        let inputs = self.inputs.expect("register runs before record_draw");
        self.pipeline.draw(&inputs, context, &self.scene, self.mode);
    }
}
