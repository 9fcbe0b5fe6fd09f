//! The image-view passes: a camera rendering into a named image
//! ([`ecs::CameraTarget::Image`]) is drawn by two passes, a depth prepass into the image's
//! own depth (`<name> depth`) and a geometry pass into the image itself (`<name>`, the
//! target's size and format), each drawing that view's run of the host list (its own answer)
//! with its own view-projection ([`ImageViews`], the graph's parameter). They shade exactly
//! as the frame's own depth prepass and geometry pass do, so the image is what a frame
//! rendered through that camera at that size shows. Later passes of the same frame sample
//! the image by its name (users' passes placed at `after geometry` or later).

use std::sync::Arc;

use ecs::{ImageFormat, ImageTarget};
use render_graph::{vk, Binding, ExecuteContext, GpuDevice, ImageRead, Result};
use render_graph::{AttachmentLoad, BufferRead, ImageDesc, ImageSize, Registry, ShaderStage, TypedPass};

use super::draw::{check_mode, DrawFilter, DrawMode, OpaquePipelines, SceneInputs};
use super::draw::{SCENE_BINDINGS, SHADOWED_SCENE_BINDINGS};
use super::view_draws::{draw_view_run, SplitDraw};
use crate::names::{DEPTH_FORMAT, SHADOW_ATLAS, SHADOW_LIGHTS};
use crate::scene::{lock_scene, ImageViews, SharedScene};

/// The Vulkan format of an image target's image.
pub fn image_target_format(format: ImageFormat) -> vk::Format {
    match format {
        ImageFormat::Rgba8Srgb => vk::Format::R8G8B8A8_SRGB,
        ImageFormat::Rgba8Unorm => vk::Format::R8G8B8A8_UNORM,
        ImageFormat::Rgba16Float => vk::Format::R16G16B16A16_SFLOAT,
    }
}

/// The name of the depth image an image view's prepass draws: `<name> depth`.
pub fn image_view_depth_name(name: &str) -> String {
    format!("{name} depth")
}

/// Which of an image view's two passes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Part {
    /// The depth prepass into `<name> depth`.
    Depth,
    /// The geometry into `<name>`, cleared to the colour; `shadowed`: lit with the frame's
    /// lights and shadow atlas.
    Color { clear: [f32; 4], shadowed: bool },
}

/// One of the two passes drawing a camera's view into a named image
/// ([`ecs::CameraTarget::Image`]): [`ImageViewPass::depth`] into the image's own depth, then
/// [`ImageViewPass::color`] into the image, each drawing that view's run of the host list
/// ([`ImageViews`], the graph's parameter) with its view-projection, shading as the frame's
/// depth prepass and geometry pass do. Later passes of the frame sample the image by its name.
pub struct ImageViewPass {
    target: ImageTarget,
    part: Part,
    pass_name: String,
    depth_name: String,
    pipeline: OpaquePipelines,
    scene: SharedScene,
    mode: DrawMode,
}

/// What an image-view pass reads: the scene, and in a frame with shadows the lights and the
/// atlas.
pub struct ImageViewInputs {
    scene: SceneInputs,
    shadows: Option<(BufferRead, ImageRead)>,
}

impl ImageViewPass {
    /// The depth prepass of the view drawn into `target`: creates `<name> depth` (D32,
    /// reversed-Z, cleared to 0) of the target's size. Named `image view <name> depth`.
    pub fn depth(device: &Arc<GpuDevice>, scene: SharedScene, target: ImageTarget, mode: DrawMode) -> Result<Self> {
        check_mode(device, mode)?;
        let pipeline = OpaquePipelines::new(
            device,
            "image view depth",
            (shaders::DEPTH_PREPASS_VERT.words(), shaders::DEPTH_PREPASS_FRAG.words()),
            &SCENE_BINDINGS,
            &[],
            (DEPTH_FORMAT, vk::CompareOp::GREATER, true),
        )?;
        let pass_name = format!("image view {} depth", target.name);
        Ok(ImageViewPass::with(target, Part::Depth, pass_name, pipeline, scene, mode))
    }

    /// The geometry pass of the view drawn into `target`: creates the image `<name>` of the
    /// target's size and format, cleared to `clear`, and shades the view's run against its
    /// depth; `shadowed` for a frame with shadows (the frame's lights and atlas, as
    /// [`GeometryPass::shadowed`](crate::GeometryPass::shadowed)). Named `image view <name>`.
    pub fn color(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        target: ImageTarget,
        mode: DrawMode,
        (clear, shadowed): ([f32; 4], bool),
    ) -> Result<Self> {
        check_mode(device, mode)?;
        let (vertex, fragment, bindings): (&[u32], &[u32], &[render_graph::BindingKind]) = if shadowed {
            (shaders::GEOMETRY_SHADOWED_VERT.words(), shaders::GEOMETRY_SHADOWED_FRAG.words(), &SHADOWED_SCENE_BINDINGS)
        } else {
            (shaders::GEOMETRY_VERT.words(), shaders::GEOMETRY_FRAG.words(), &SCENE_BINDINGS)
        };
        let pipeline = OpaquePipelines::new(
            device,
            "image view",
            (vertex, fragment),
            bindings,
            &[image_target_format(target.format)],
            (DEPTH_FORMAT, vk::CompareOp::GREATER_OR_EQUAL, false),
        )?;
        let pass_name = format!("image view {}", target.name);
        Ok(ImageViewPass::with(target, Part::Color { clear, shadowed }, pass_name, pipeline, scene, mode))
    }

    fn with(
        target: ImageTarget,
        part: Part,
        pass_name: String,
        pipeline: OpaquePipelines,
        scene: SharedScene,
        mode: DrawMode,
    ) -> ImageViewPass {
        let depth_name = image_view_depth_name(&target.name);
        ImageViewPass { target, part, pass_name, depth_name, pipeline, scene, mode }
    }

    /// The target the pass draws into.
    pub fn target(&self) -> &ImageTarget {
        &self.target
    }
}

impl TypedPass for ImageViewPass {
    type Handles = ImageViewInputs;

    fn name(&self) -> &str {
        &self.pass_name
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> ImageViewInputs {
        let scene = SceneInputs::register(registry);
        let size = ImageSize::Absolute { width: self.target.width, height: self.target.height };
        match self.part {
            Part::Depth => {
                let depth = registry.create_image(&self.depth_name, ImageDesc::new(DEPTH_FORMAT, size));
                // Reversed-Z: 0 is infinitely far.
                registry.depth_attachment(depth, AttachmentLoad::ClearDepth(0.0));
                ImageViewInputs { scene, shadows: None }
            }
            Part::Color { clear, shadowed } => {
                let depth = registry.image(&self.depth_name);
                registry.depth_read(depth);
                let format = image_target_format(self.target.format);
                let color = registry.create_image(&self.target.name, ImageDesc::new(format, size));
                registry.color_attachment(color, AttachmentLoad::ClearColor(clear));
                let shadows = shadowed.then(|| {
                    let lights = registry.buffer(SHADOW_LIGHTS);
                    let atlas = registry.image(SHADOW_ATLAS);
                    let lights = registry.read_storage_buffer(lights, ShaderStage::Fragment);
                    (lights, registry.sample(atlas, ShaderStage::Fragment))
                });
                ImageViewInputs { scene, shadows }
            }
        }
    }

    fn record_draw(&mut self, inputs: &ImageViewInputs, context: &mut ExecuteContext<'_>) {
        if context.failed() {
            return;
        }
        let Some(view) = context.param::<ImageViews>().and_then(|views| views.get(&self.target.name)).cloned() else {
            // The view is not drawn this frame: the image stays cleared.
            return;
        };
        let scene = lock_scene(&self.scene);
        let Some(list) = scene.view_list(view.list as usize) else { return };
        let mut bindings = [Binding::buffer(inputs.scene.index_buffer()); SCENE_BINDINGS.len() + 2];
        bindings[..SCENE_BINDINGS.len()].copy_from_slice(&inputs.scene.bindings());
        let count = match inputs.shadows {
            Some((lights, atlas)) => {
                bindings[SCENE_BINDINGS.len()] = Binding::buffer(lights);
                bindings[SCENE_BINDINGS.len() + 1] = Binding::image(atlas);
                SCENE_BINDINGS.len() + 2
            }
            None => SCENE_BINDINGS.len(),
        };
        let commands = context.buffer(inputs.scene.commands()).buffer;
        let indices = context.buffer(inputs.scene.index_buffer()).buffer;
        let multi_draw = context.gpu().capabilities().multi_draw_indirect;
        let double_sided = scene.meshes().has_double_sided_surfaces();
        let pipelines =
            [(&self.pipeline.one_sided, DrawFilter::OneSided), (&self.pipeline.double_sided, DrawFilter::DoubleSided)];
        for (pipeline, filter) in pipelines.into_iter().take(if double_sided { 2 } else { 1 }) {
            context.bind_graphics(pipeline, &bindings[..count]);
            if context.failed() {
                return;
            }
            let raw = context.device();
            // SAFETY: recording inside the pass's rendering scope; `mesh_indices` was declared
            // as an index buffer and holds u32 indices.
            unsafe { raw.cmd_bind_index_buffer(context.command_buffer(), indices, 0, vk::IndexType::UINT32) };
            let draw = SplitDraw { commands, mode: self.mode, filter, multi_draw };
            // SAFETY: the pipeline, its bindings and the index buffer are bound; the run's
            // commands are the host's, uploaded into `draw_commands`.
            if !unsafe { draw_view_run(context, &scene, list, &view.view_projection, draw) } {
                return;
            }
        }
    }
}
