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
use render_graph::{Access, AttachmentLoad, BufferDesc, BufferRead, BufferWrite, ImageDesc, ImageSize, PrepareContext};
use render_graph::{Registry, ShaderStage, TypedPass};

use super::cull::ImageCullNames;
use super::draw::{check_mode, frame_push_words, DrawFilter, DrawMode, OpaquePipelines, SceneInputs};
use super::draw::{SCENE_BINDINGS, SHADOWED_SCENE_BINDINGS};
use super::view_draws::{draw_view_run, SplitDraw};
use crate::names::{DEPTH_FORMAT, SHADOW_ATLAS, SHADOW_LIGHTS};
use crate::scene::{
    as_bytes, lock_scene, DrawCommand, GpuScene, ImageRun, ImageViews, SharedScene, DRAW_COMMAND_BYTES,
};

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

/// Which of an image view's passes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Part {
    /// The depth prepass into `<name> depth` (with the view's GPU cull: its early list).
    Depth,
    /// With the view's GPU cull: the late depth prepass, its late list over the early depth.
    DepthLate,
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
    /// Where the commands come from.
    lists: Lists,
    pass_name: String,
    depth_name: String,
    pipeline: OpaquePipelines,
    scene: SharedScene,
    mode: DrawMode,
    /// This frame's count word of the view's run, staged in [`DrawMode::IndirectCount`]:
    /// its buffer and offset.
    staged_count: Option<(vk::Buffer, u64)>,
}

/// Where an image-view pass's commands come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lists {
    /// A run of the host list (the CPU culling backend).
    Host,
    /// The view's own commands and instances (`<name> commands`, `<name> instances`), made by
    /// the host from its answer and uploaded by its [`ImageViewListPass`].
    Own,
    /// The lists the view's own GPU cull writes ([`ImageCullPass`](crate::ImageCullPass)):
    /// `<name> commands` (early, then late), counted in `<name> draw count`.
    Gpu,
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
        let lists = Lists::Host;
        ImageViewPass { target, part, lists, pass_name, depth_name, pipeline, scene, mode, staged_count: None }
    }

    /// The pass drawing the view's own commands and instances, which its
    /// [`ImageViewListPass`] writes (the GPU culling backend's fallback, made by the host from
    /// the view's answer), instead of a run of the host list.
    pub fn with_own_lists(self) -> ImageViewPass {
        ImageViewPass { lists: Lists::Own, ..self }
    }

    /// The pass drawing the lists the view's own GPU cull writes
    /// ([`ImageCullPass`](crate::ImageCullPass)): the depth prepass its early list, the
    /// geometry both.
    pub fn with_gpu_lists(self) -> ImageViewPass {
        ImageViewPass { lists: Lists::Gpu, ..self }
    }

    /// The late depth prepass of the view drawn into `target` by its GPU cull: its late list
    /// over the depth its early list left in `<name> depth` (loaded). Named `image view <name>
    /// depth late`.
    pub fn depth_late(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        target: ImageTarget,
        mode: DrawMode,
    ) -> Result<Self> {
        let mut pass = ImageViewPass::depth(device, scene, target, mode)?.with_gpu_lists();
        pass.part = Part::DepthLate;
        pass.pass_name.push_str(" late");
        Ok(pass)
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
        let scene = match self.lists {
            Lists::Host => SceneInputs::register(registry),
            Lists::Own => {
                let (commands, instances) = image_view_list_names(&self.target.name);
                SceneInputs::register_with(registry, &commands, &instances)
            }
            Lists::Gpu => {
                let names = ImageCullNames::new(&self.target.name);
                SceneInputs::register_lists(registry, (&names.commands, &names.counts, &names.instances))
            }
        };
        let size = ImageSize::Absolute { width: self.target.width, height: self.target.height };
        match self.part {
            Part::Depth => {
                let depth = registry.create_image(&self.depth_name, ImageDesc::new(DEPTH_FORMAT, size));
                // Reversed-Z: 0 is infinitely far.
                registry.depth_attachment(depth, AttachmentLoad::ClearDepth(0.0));
                ImageViewInputs { scene, shadows: None }
            }
            Part::DepthLate => {
                let depth = registry.image(&self.depth_name);
                registry.depth_attachment(depth, AttachmentLoad::Load);
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

    /// Stages the count of the view's run for a count draw (see `draw_view_run`).
    fn prepare(&mut self, _inputs: &ImageViewInputs, context: &mut PrepareContext<'_>) {
        self.staged_count = None;
        if self.mode != DrawMode::IndirectCount || self.lists == Lists::Gpu {
            return;
        }
        let Some(views) = context.param::<ImageViews>() else { return };
        let Some(view) = views.get(&self.target.name) else { return };
        let count = {
            let scene = lock_scene(&self.scene);
            view_run(&scene, views, view.run).map_or(0, |(draws, _, _)| draws.len() as u32)
        };
        match context.stage_data(as_bytes(&[count])).map(|binding| binding.external_range()) {
            Ok(Some((buffer, offset, _))) => self.staged_count = Some((buffer, offset)),
            Ok(None) => unreachable!("staged data is an external binding"),
            Err(error) => context.fail(error),
        }
    }

    fn record_draw(&mut self, inputs: &ImageViewInputs, context: &mut ExecuteContext<'_>) {
        if context.failed() {
            return;
        }
        let Some(views) = context.param::<ImageViews>() else { return };
        // The view not drawn this frame leaves the image cleared.
        let Some(view) = views.get(&self.target.name) else { return };
        let scene = lock_scene(&self.scene);
        let run = match (self.lists, view.run) {
            (Lists::Gpu, ImageRun::Gpu) => None,
            // The view's lists and the pass's kind agree once the Render stage has followed
            // the frame's views (before the frame runs); a pass used otherwise draws nothing.
            (Lists::Gpu, _) | (_, ImageRun::Gpu) => return,
            (_, run) => match view_run(&scene, views, run) {
                Some(run) => Some(run),
                None => return,
            },
        };
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
            let Some(run) = run else {
                let counts = context.buffer(inputs.scene.counts());
                let lists = GpuLists { commands: (commands, context.buffer(inputs.scene.commands()).size), counts };
                let phases = match self.part {
                    Part::Depth => 0..1,
                    Part::DepthLate => 1..2,
                    Part::Color { .. } => 0..2,
                };
                let draw = (self.mode, filter, multi_draw);
                // SAFETY: the pipeline, its bindings and the index buffer are bound; the lists
                // are the view's GPU cull's, declared as indirect arguments.
                if !unsafe { draw_gpu_lists(context, lists, &view.view_projection, draw, phases) } {
                    return;
                }
                continue;
            };
            let draw = SplitDraw { commands, mode: self.mode, filter, multi_draw, run_counts: None };
            // SAFETY: the pipeline, its bindings and the index buffer are bound; the run's
            // commands are the host's, uploaded into the commands buffer bound (`draw_commands`
            // at the run's place, or the view's own from 0, with its instances).
            if !unsafe { draw_view_run(context, run, &view.view_projection, draw, self.staged_count) } {
                return;
            }
        }
    }
}

/// The buffers of an image view's GPU lists as the pass binds them: `<name> commands` (with
/// its size in bytes: two lists of equal room) and `<name> draw count`.
struct GpuLists {
    commands: (vk::Buffer, u64),
    counts: render_graph::ResolvedBuffer,
}

/// Draws the lists `phases` (0 early, 1 late) of an image view's GPU cull with
/// `view_projection` pushed: a count draw of each where the mode has one, else every command
/// of the list (the unused ones zeroed by the cull's setup). False when the frame failed.
///
/// # Safety
/// The pass is recording inside its rendering scope with a scene pipeline bound, its bindings
/// set and `mesh_indices` bound as the index buffer; the lists' buffers hold this frame's
/// lists and were declared as indirect arguments.
unsafe fn draw_gpu_lists(
    context: &mut ExecuteContext<'_>,
    lists: GpuLists,
    view_projection: &[[f32; 4]; 4],
    (mode, filter, multi_draw): (DrawMode, DrawFilter, bool),
    phases: std::ops::Range<u32>,
) -> bool {
    let push = frame_push_words(context, view_projection, filter);
    context.push_constants(&push);
    if context.failed() {
        return false;
    }
    let room = (lists.commands.1 / DRAW_COMMAND_BYTES / 2) as u32;
    let stride = DRAW_COMMAND_BYTES as u32;
    let (raw, command_buffer) = (context.device(), context.command_buffer());
    for list in phases {
        let first = u64::from(list) * u64::from(room) * DRAW_COMMAND_BYTES;
        match mode {
            // SAFETY: the caller's contract; `room` commands from `first` lie in the commands,
            // the list's count word at `4 list` of the counts.
            DrawMode::IndirectCount => unsafe {
                raw.cmd_draw_indexed_indirect_count(
                    command_buffer,
                    lists.commands.0,
                    first,
                    lists.counts.buffer,
                    u64::from(list) * 4,
                    room,
                    stride,
                )
            },
            // SAFETY: as above, every command of the list.
            DrawMode::Indirect if multi_draw => unsafe {
                raw.cmd_draw_indexed_indirect(command_buffer, lists.commands.0, first, room, stride)
            },
            DrawMode::Indirect => {
                for index in 0..u64::from(room) {
                    let at = first + index * DRAW_COMMAND_BYTES;
                    // SAFETY: as above, one command at a time.
                    unsafe { raw.cmd_draw_indexed_indirect(command_buffer, lists.commands.0, at, 1, stride) };
                }
            }
            // A GPU cull's lists are never drawn directly.
            DrawMode::Direct => {}
        }
    }
    true
}

/// The commands `run` draws, where they lie in the commands buffer the pass binds (the first
/// command's index) and whether they are instanced: a run of the host list in `draw_commands`,
/// or the view's own commands from 0 (with GPU culling). `None` when the run is gone.
fn view_run<'a>(scene: &'a GpuScene, views: &'a ImageViews, run: ImageRun) -> Option<(&'a [DrawCommand], u32, bool)> {
    match run {
        ImageRun::HostList(list) => scene.view_list(list as usize).and_then(|list| {
            let range = list.first as usize..(list.first + list.count) as usize;
            scene.draw_commands().get(range).map(|draws| (draws, list.first, list.instanced))
        }),
        ImageRun::Gpu => None,
        ImageRun::Own(index) => {
            // The upload keeps no more commands than the scene has slots.
            let capacity = scene.capacity() as usize;
            views.own_run(index).map(|own| (&own.commands[..own.commands.len().min(capacity)], 0, true))
        }
    }
}

/// The names of an image view's own commands and instances buffers (the GPU culling backend):
/// `<name> commands` and `<name> instances`.
pub fn image_view_list_names(name: &str) -> (String, String) {
    (format!("{name} commands"), format!("{name} instances"))
}

/// Uploads an image view's own commands and instances ([`ImageRun::Own`], made by the host
/// from the view's answer) into `<name> commands` and `<name> instances`, room for the scene's
/// capacity each: the GPU culling backend, whose lists the GPU writes, draws an image view
/// from them. Named `image view <name> lists`.
pub struct ImageViewListPass {
    name: Arc<str>,
    pass_name: String,
    buffers: (String, String),
    scene: SharedScene,
}

impl ImageViewListPass {
    /// The upload of the lists of the view drawn into the image `name`.
    pub fn new(scene: SharedScene, name: Arc<str>) -> ImageViewListPass {
        let pass_name = format!("image view {name} lists");
        let buffers = image_view_list_names(&name);
        ImageViewListPass { name, pass_name, buffers, scene }
    }
}

impl TypedPass for ImageViewListPass {
    /// The commands and the instances written.
    type Handles = (BufferWrite, BufferWrite);

    fn name(&self) -> &str {
        &self.pass_name
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> (BufferWrite, BufferWrite) {
        let capacity = u64::from(lock_scene(&self.scene).capacity().max(1));
        let commands = registry.create_buffer(&self.buffers.0, BufferDesc { size: capacity * DRAW_COMMAND_BYTES });
        let instances = registry.create_buffer(&self.buffers.1, BufferDesc { size: capacity * 4 });
        (
            registry.write_buffer(commands, Access::TransferWrite),
            registry.write_buffer(instances, Access::TransferWrite),
        )
    }

    fn prepare(&mut self, (commands, instances): &Self::Handles, context: &mut PrepareContext<'_>) {
        let Some(views) = context.param::<ImageViews>() else { return };
        let Some(view) = views.get(&self.name) else { return };
        let ImageRun::Own(index) = view.run else { return };
        let Some(run) = views.own_run(index) else { return };
        // A run never holds more commands or instances than the scene has slots.
        let capacity = lock_scene(&self.scene).capacity() as usize;
        let (draws, slots) = (&run.commands[..run.commands.len().min(capacity)], &run.instances);
        let mut result = Ok(());
        if !draws.is_empty() {
            result = context.upload_buffer(commands, 0, as_bytes(draws));
        }
        if result.is_ok() && !slots.is_empty() {
            result = context.upload_buffer(instances, 0, as_bytes(&slots[..slots.len().min(capacity)]));
        }
        if let Err(error) = result {
            context.fail(error);
        }
    }
}
