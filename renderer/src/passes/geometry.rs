//! The geometry pass: draws the scene's draw list into `color` (RGBA8, one flat colour per
//! object), testing against `depth_prepass` with GREATER_OR_EQUAL and writing no depth.

use std::sync::Arc;

use render_graph::vk;

use super::draw::{
    check_mode, check_output_extent, DrawLists, DrawMode, OpaquePipelines, SceneInputs, SCENE_BINDINGS,
    SHADOWED_SCENE_BINDINGS,
};
use crate::names::{COLOR, COLOR_FORMAT, DEPTH_FORMAT, DEPTH_PREPASS, SHADOW_ATLAS, SHADOW_LIGHTS};
use crate::scene::SharedScene;
use render_graph::ExecuteContext;
use render_graph::GpuDevice;
use render_graph::Result;
use render_graph::{AttachmentLoad, ImageDesc, ImageSize, Registry, TypedPass};
use render_graph::{Binding, BindingKind, BufferRead, ImageRead, ShaderStage};

/// Draws every object of the draw lists (early, then late) in its flat colour into `color`,
/// the size of the graph's output, cleared to the pass's clear colour.
///
/// Its vertex shader computes positions with the depth prepass's `precise` function, so each
/// surface reaches the depth test with the depth the prepass stored and passes
/// GREATER_OR_EQUAL; hidden surfaces fail it. Where two
/// objects have equal depth the later draw wins, as it would without a prepass, so the image
/// depends only on the drawn objects and their order.
///
/// [`GeometryPass::shadowed`] makes the pass of a frame with shadows: it lights with the
/// frame's lights (the sun, spot and point lights of [`crate::ShadowFrame`]) and samples
/// `shadow_atlas`, which a [`ShadowAtlasPass`](super::ShadowAtlasPass) drew earlier; a
/// frame without lights shades exactly as the plain pass.
pub struct GeometryPass {
    pipeline: OpaquePipelines,
    scene: SharedScene,
    mode: DrawMode,
    clear_color: [f32; 4],
    shadowed: bool,
}

/// What the geometry pass reads: the scene, and in a frame with shadows the lights and the
/// atlas.
pub struct GeometryInputs {
    scene: SceneInputs,
    shadows: Option<(BufferRead, ImageRead)>,
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
        GeometryPass::build(device, scene, clear_color, mode, false)
    }

    /// The geometry pass of a frame with shadows (see the type's docs), drawing in `mode`.
    pub fn shadowed(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        clear_color: [f32; 4],
        mode: DrawMode,
    ) -> Result<GeometryPass> {
        GeometryPass::build(device, scene, clear_color, mode, true)
    }

    fn build(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        clear_color: [f32; 4],
        mode: DrawMode,
        shadowed: bool,
    ) -> Result<GeometryPass> {
        check_mode(device, mode)?;
        let (vertex, fragment, bindings): (&[u32], &[u32], &[BindingKind]) = if shadowed {
            (shaders::GEOMETRY_SHADOWED_VERT.words(), shaders::GEOMETRY_SHADOWED_FRAG.words(), &SHADOWED_SCENE_BINDINGS)
        } else {
            (shaders::GEOMETRY_VERT.words(), shaders::GEOMETRY_FRAG.words(), &SCENE_BINDINGS)
        };
        let pipeline = OpaquePipelines::new(
            device,
            "geometry",
            (vertex, fragment),
            bindings,
            &[COLOR_FORMAT],
            (DEPTH_FORMAT, vk::CompareOp::GREATER_OR_EQUAL, false),
        )?;
        Ok(GeometryPass { pipeline, scene, mode, clear_color, shadowed })
    }
}

impl TypedPass for GeometryPass {
    type Handles = GeometryInputs;

    fn name(&self) -> &str {
        "geometry"
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> GeometryInputs {
        let scene = SceneInputs::register(registry);
        let depth = registry.image(DEPTH_PREPASS);
        registry.depth_read(depth);
        let color = registry.create_image(COLOR, ImageDesc::new(COLOR_FORMAT, ImageSize::OUTPUT));
        registry.color_attachment(color, AttachmentLoad::ClearColor(self.clear_color));
        let shadows = self.shadowed.then(|| {
            let lights = registry.buffer(SHADOW_LIGHTS);
            let atlas = registry.image(SHADOW_ATLAS);
            (registry.read_storage_buffer(lights, ShaderStage::Fragment), registry.sample(atlas, ShaderStage::Fragment))
        });
        GeometryInputs { scene, shadows }
    }

    fn execute(&mut self, _inputs: &GeometryInputs, context: &mut ExecuteContext<'_>) {
        check_output_extent(context, COLOR);
    }

    fn record_draw(&mut self, inputs: &GeometryInputs, context: &mut ExecuteContext<'_>) {
        if context.failed() {
            return;
        }
        match inputs.shadows {
            Some((lights, atlas)) => {
                let extra = [Binding::buffer(lights), Binding::image(atlas)];
                self.pipeline.draw(&inputs.scene, &extra, context, &self.scene, (self.mode, DrawLists::Both));
            }
            None => self.pipeline.draw(&inputs.scene, &[], context, &self.scene, (self.mode, DrawLists::Both)),
        }
    }
}
