//! What the depth prepass and the geometry pass share: the scene inputs they declare, the
//! pipeline layout of the scene shaders (with the push constants of the frame's view), and how
//! the draw commands are issued on the device at hand.

use std::sync::Arc;

use render_graph::vk;

use super::view_draws::{draw_gpu_window_views, draw_window_views, split_views, GpuSplitDraw, SplitDraw};
use crate::names::{
    DRAW_COMMANDS, DRAW_COUNT, DRAW_INSTANCES, MATERIALS, MATERIAL_TEXTURES, MESH_INDICES, MESH_SKIN, MESH_UVS,
    MESH_VERTICES, OBJECT_RECORDS, OBJECT_TRANSFORMS, SKIN_PALETTE,
};
use crate::scene::{lock_scene, FrameView, GpuScene, SharedScene};
use crate::scene::{DrawCommand, DRAW_COMMAND_BYTES};
use render_graph::ShaderStage;
use render_graph::{Binding, ExecuteContext};
use render_graph::{BindingKind, ColorBlend, GraphicsPipeline, GraphicsPipelineDesc};
use render_graph::{BufferRead, ImageRead, Registry};
use render_graph::{DeviceCapabilities, GpuDevice};
use render_graph::{GraphError, Result};

/// Set-0 bindings of the scene shaders (`scene_common.h`, `material.h`, `skinning.h`): 0
/// `object_transforms`, 1 `object_records`, 2 `mesh_vertices`, 3 `mesh_uvs`, 4 `materials`,
/// 5 `material_textures`, 6 `draw_instances`, 7 `skin_palette`, 8 `mesh_skin`.
pub(crate) const SCENE_BINDINGS: [BindingKind; 9] = [
    BindingKind::StorageBuffer,
    BindingKind::StorageBuffer,
    BindingKind::StorageBuffer,
    BindingKind::StorageBuffer,
    BindingKind::StorageBuffer,
    BindingKind::TextureImage,
    BindingKind::StorageBuffer,
    BindingKind::StorageBuffer,
    BindingKind::StorageBuffer,
];

/// The scene's draw lists (see `draw_commands` in the crate docs): the early list from
/// command 0 (the host's list, or what the early cull appended), the late list from the
/// middle of `draw_commands` (what the late cull appended); `draw_count` holds each one's
/// command count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DrawLists {
    /// The early list (the host's whole list, or the GPU's early phase).
    Early,
    /// The late list alone (the late depth prepass).
    Late,
    /// Both, early then late (the geometry pass).
    Both,
}

impl DrawLists {
    /// The lists drawn, by index (0 early, 1 late).
    fn range(self) -> std::ops::Range<u32> {
        match self {
            DrawLists::Early => 0..1,
            DrawLists::Late => 1..2,
            DrawLists::Both => 0..2,
        }
    }
}

/// The bit of `draw_filter` that says the list is instanced (`DRAW_INSTANCED` in
/// `draw_filter.h`): each command's instances are slots read from `draw_instances`.
pub(crate) const INSTANCED_BIT: u32 = 0x200;

/// The lowest bit of `draw_filter`'s word of `visibility_bits` where a GPU-culled split-screen
/// frame's blended draw of one view reads that view's bits (`DRAW_BITS_WORD_SHIFT` in
/// `draw_filter.h`).
pub(crate) const BITS_WORD_SHIFT: u32 = 12;

/// Set-0 bindings of the shadowed geometry pass: [`SCENE_BINDINGS`], then 9 `shadow_lights`
/// and 10 `shadow_atlas` (`shadows.h`). Built from [`SCENE_BINDINGS`], so a scene binding added
/// there is here too.
pub(crate) const SHADOWED_SCENE_BINDINGS: [BindingKind; SCENE_BINDINGS.len() + 2] = {
    let mut kinds = [BindingKind::StorageBuffer; SCENE_BINDINGS.len() + 2];
    let mut index = 0;
    while index < SCENE_BINDINGS.len() {
        kinds[index] = SCENE_BINDINGS[index];
        index += 1;
    }
    kinds[SCENE_BINDINGS.len() + 1] = BindingKind::SampledImage;
    kinds
};

/// How the scene passes issue their draws.
///
/// Every mode draws the same commands in the same order, so the image does not depend on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrawMode {
    /// One `vkCmdDrawIndexedIndirectCount`: the count comes from `draw_count` on the GPU, so
    /// a GPU culling pass may write both buffers. Needs `drawIndirectCount`,
    /// `multiDrawIndirect` and `drawIndirectFirstInstance`.
    IndirectCount,
    /// `vkCmdDrawIndexedIndirect` over `draw_commands` with the count of the host's draw list
    /// (one call, or one per command without `multiDrawIndirect`). Needs
    /// `drawIndirectFirstInstance`.
    Indirect,
    /// One `vkCmdDrawIndexed` per command of the host's draw list (any device).
    Direct,
}

impl DrawMode {
    /// The best mode the device supports.
    pub fn best(capabilities: &DeviceCapabilities) -> DrawMode {
        if !capabilities.draw_indirect_first_instance {
            DrawMode::Direct
        } else if capabilities.draw_indirect_count && capabilities.multi_draw_indirect {
            DrawMode::IndirectCount
        } else {
            DrawMode::Indirect
        }
    }

    /// Whether the device can draw in this mode.
    pub fn is_supported(self, capabilities: &DeviceCapabilities) -> bool {
        match self {
            DrawMode::IndirectCount => {
                capabilities.draw_indirect_count
                    && capabilities.multi_draw_indirect
                    && capabilities.draw_indirect_first_instance
            }
            DrawMode::Indirect => capabilities.draw_indirect_first_instance,
            DrawMode::Direct => true,
        }
    }
}

/// Checks that `mode` works on `device`.
pub(crate) fn check_mode(device: &GpuDevice, mode: DrawMode) -> Result<()> {
    if mode.is_supported(device.capabilities()) {
        Ok(())
    } else {
        Err(GraphError::InvalidDescription {
            resource: String::from(DRAW_COMMANDS),
            reason: "the device lacks a feature this draw mode needs",
        })
    }
}

/// Which objects of the list one draw of a scene pass is for (`draw_filter` in
/// `scene_common.h`): the vertex shader clips the others away, so one list serves
/// pipelines that differ in face culling and blending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DrawFilter {
    /// Opaque and masked objects of one-sided materials (back faces culled).
    OneSided = 0,
    /// Opaque and masked objects of double-sided materials (no face culling).
    DoubleSided = 1,
    /// Every object of the list (the blended pass's own list).
    Blended = 2,
}

/// The bit of `draw_filter` that asks the geometry pass for the object-id image
/// (`DRAW_OBJECT_IDS` in `draw_filter.h`): see [`ObjectIdImage`].
const OBJECT_IDS_BIT: u32 = 0x100;

/// A graph parameter: while the graph holds `ObjectIdImage(true)`, its geometry pass draws the
/// object-id image instead of the lit colours. Each fragment writes its object colour's red,
/// green and blue bytes as they are (unlit, untextured) with alpha 0, so a colour holding an
/// id comes back whole; a masked material still cuts its holes with the colour's alpha byte
/// times its texel's, as in the frame drawn with the real colours; blended surfaces hide
/// nothing and are left out. The truth checks' reference renderer sets it for its id draws.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ObjectIdImage(pub(crate) bool);

/// [`scene_push_words`] for a draw of the frame `context` executes: with [`OBJECT_IDS_BIT`]
/// while the graph holds [`ObjectIdImage`]`(true)`.
pub(crate) fn frame_push_words(
    context: &ExecuteContext<'_>,
    view_projection: &[[f32; 4]; 4],
    filter: DrawFilter,
) -> [u32; 17] {
    let mut words = scene_push_words(view_projection, filter);
    if context.param::<ObjectIdImage>().is_some_and(|ids| ids.0) {
        words[16] |= OBJECT_IDS_BIT;
    }
    words
}

/// Push-constant bytes of the scene shaders (the block `CameraConstants` of
/// `scene_common.h`): the view-projection matrix, then the draw filter.
const SCENE_PUSH_BYTES: u32 = 17 * 4;

/// The scene shaders' push constants: `view_projection` (world to clip, column-major: the
/// frame's [`FrameView`]'s, or a light view's) and `filter`.
pub(crate) fn scene_push_words(view_projection: &[[f32; 4]; 4], filter: DrawFilter) -> [u32; 17] {
    let mut words = [0; 17];
    for (word, value) in words.iter_mut().zip(view_projection.as_flattened()) {
        *word = value.to_bits();
    }
    words[16] = filter as u32;
    words
}

/// The view-projection of the frame's [`FrameView`] parameter, or the frame's error naming
/// the pass when the host set none.
pub(crate) fn frame_view_projection(context: &mut ExecuteContext<'_>) -> Option<[[f32; 4]; 4]> {
    match context.require_param::<FrameView>() {
        Ok(view) => Some(view.view_projection),
        Err(error) => {
            context.fail(error);
            None
        }
    }
}

/// The fixed-function choices of a scene pipeline that vary between its uses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScenePipelineKind {
    pub(crate) depth: (vk::Format, vk::CompareOp, bool),
    pub(crate) cull_mode: vk::CullModeFlags,
    pub(crate) blend: ColorBlend,
}

/// Builds a pipeline of the scene shaders (both vertex shaders share the layout of
/// `scene_common.h`; `bindings` are [`SCENE_BINDINGS`] or a superset).
pub(crate) fn scene_pipeline(
    device: &Arc<GpuDevice>,
    name: &str,
    (vertex, fragment): (&[u32], &[u32]),
    bindings: &[BindingKind],
    color_formats: &[vk::Format],
    kind: ScenePipelineKind,
) -> Result<GraphicsPipeline> {
    GraphicsPipeline::new(
        device,
        name,
        &GraphicsPipelineDesc {
            vertex,
            fragment,
            bindings,
            push_constant_bytes: SCENE_PUSH_BYTES,
            color_formats,
            depth: Some(kind.depth),
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            cull_mode: kind.cull_mode,
            blend: kind.blend,
        },
    )
}

/// The opaque passes' two pipelines: one-sided (back faces culled) and double-sided (none),
/// the second drawn only when the library has double-sided surfaces.
pub(crate) struct OpaquePipelines {
    pub(crate) one_sided: GraphicsPipeline,
    pub(crate) double_sided: GraphicsPipeline,
}

impl OpaquePipelines {
    pub(crate) fn new(
        device: &Arc<GpuDevice>,
        name: &str,
        shaders: (&[u32], &[u32]),
        bindings: &[BindingKind],
        color_formats: &[vk::Format],
        depth: (vk::Format, vk::CompareOp, bool),
    ) -> Result<OpaquePipelines> {
        let kind = |cull_mode| ScenePipelineKind { depth, cull_mode, blend: ColorBlend::Replace };
        Ok(OpaquePipelines {
            one_sided: scene_pipeline(device, name, shaders, bindings, color_formats, kind(vk::CullModeFlags::BACK))?,
            double_sided: scene_pipeline(
                device,
                &format!("{name} double-sided"),
                shaders,
                bindings,
                color_formats,
                kind(vk::CullModeFlags::NONE),
            )?,
        })
    }

    /// Draws the scene's `lists` with the one-sided pipeline, then, when the library has
    /// double-sided surfaces, again with the double-sided one, binding `extra` after the
    /// scene's bindings, with the frame's view ([`FrameView`], the graph's parameter).
    pub(crate) fn draw(
        &self,
        inputs: &SceneInputs,
        extra: &[Binding],
        context: &mut ExecuteContext<'_>,
        scene: &SharedScene,
        (mode, lists): (DrawMode, DrawLists),
    ) {
        let Some(view_projection) = frame_view_projection(context) else { return };
        let filter = DrawFilter::OneSided;
        let draw = SceneDraw { pipeline: &self.one_sided, extra, view_projection, mode, filter, lists };
        inputs.draw_with(context, scene, &draw);
        if lock_scene(scene).meshes().has_double_sided_surfaces() {
            let draw = SceneDraw { pipeline: &self.double_sided, filter: DrawFilter::DoubleSided, ..draw };
            inputs.draw_with(context, scene, &draw);
        }
    }
}

/// One draw of the scene's lists: the pipeline, the bindings after the scene's, the camera
/// pushed, how the commands are issued, which objects it is for and which lists.
#[derive(Clone, Copy)]
pub(crate) struct SceneDraw<'a> {
    pub(crate) pipeline: &'a GraphicsPipeline,
    pub(crate) extra: &'a [Binding],
    pub(crate) view_projection: [[f32; 4]; 4],
    pub(crate) mode: DrawMode,
    pub(crate) filter: DrawFilter,
    pub(crate) lists: DrawLists,
}

/// The scene buffers a drawing pass reads, declared in its `register` (the handles of the
/// depth prepasses and of the geometry, blended and shadow atlas passes): the objects'
/// transforms and records, the meshes' vertices, indices and UVs, the materials and their
/// textures, and the draw lists with their counts and instances.
#[derive(Clone, Copy, Debug)]
pub struct SceneInputs {
    transforms: BufferRead,
    objects: BufferRead,
    vertices: BufferRead,
    indices: BufferRead,
    commands: BufferRead,
    count: BufferRead,
    instances: BufferRead,
    uvs: BufferRead,
    materials: BufferRead,
    textures: ImageRead,
    palette: BufferRead,
    skin: BufferRead,
}

impl SceneInputs {
    /// Declares the reads of `object_transforms`, `object_records`, `mesh_vertices` and
    /// `draw_instances`, `mesh_uvs`, `skin_palette` and `mesh_skin` (vertex shader),
    /// `materials` and `material_textures`, `mesh_indices` (index buffer), `draw_commands`
    /// and `draw_count` (indirect arguments).
    pub(crate) fn register(registry: &mut Registry<'_>) -> SceneInputs {
        SceneInputs::register_with(registry, DRAW_COMMANDS, DRAW_INSTANCES)
    }

    /// [`SceneInputs::register`] with the commands and their instances read from the buffers
    /// `commands` and `instances` (an image view's own, on the GPU culling backend).
    pub(crate) fn register_with(registry: &mut Registry<'_>, commands: &str, instances: &str) -> SceneInputs {
        SceneInputs::register_lists(registry, (commands, DRAW_COUNT, instances))
    }

    /// [`SceneInputs::register`] with the commands, their counts and their instances read from
    /// the buffers named (an image view's own, written by its GPU cull).
    pub(crate) fn register_lists(
        registry: &mut Registry<'_>,
        (commands, count, instances): (&str, &str, &str),
    ) -> SceneInputs {
        let transforms = registry.buffer(OBJECT_TRANSFORMS);
        let objects = registry.buffer(OBJECT_RECORDS);
        let vertices = registry.buffer(MESH_VERTICES);
        let indices = registry.buffer(MESH_INDICES);
        let commands = registry.buffer(commands);
        let count = registry.buffer(count);
        let instances = registry.buffer(instances);
        let (uvs, materials) = (registry.buffer(MESH_UVS), registry.buffer(MATERIALS));
        let textures = registry.image(MATERIAL_TEXTURES);
        let (palette, skin) = (registry.buffer(SKIN_PALETTE), registry.buffer(MESH_SKIN));
        SceneInputs {
            palette: registry.read_storage_buffer(palette, ShaderStage::Vertex),
            skin: registry.read_storage_buffer(skin, ShaderStage::Vertex),
            uvs: registry.read_storage_buffer(uvs, ShaderStage::Vertex),
            materials: registry.read_storage_buffer(materials, ShaderStage::Graphics),
            textures: registry.sample(textures, ShaderStage::Fragment),
            transforms: registry.read_storage_buffer(transforms, ShaderStage::Vertex),
            objects: registry.read_storage_buffer(objects, ShaderStage::Vertex),
            vertices: registry.read_storage_buffer(vertices, ShaderStage::Vertex),
            indices: registry.index_buffer(indices),
            commands: registry.indirect_buffer(commands),
            count: registry.indirect_buffer(count),
            instances: registry.read_storage_buffer(instances, ShaderStage::Vertex),
        }
    }

    /// The bindings of [`SCENE_BINDINGS`], in order.
    pub(crate) fn bindings(&self) -> [Binding; SCENE_BINDINGS.len()] {
        [
            Binding::buffer(self.transforms),
            Binding::buffer(self.objects),
            Binding::buffer(self.vertices),
            Binding::buffer(self.uvs),
            Binding::buffer(self.materials),
            Binding::image(self.textures),
            Binding::buffer(self.instances),
            Binding::buffer(self.palette),
            Binding::buffer(self.skin),
        ]
    }

    /// The index buffer the scene draws from.
    pub(crate) fn index_buffer(&self) -> BufferRead {
        self.indices
    }

    /// `draw_commands`, read as indirect arguments.
    pub(crate) fn commands(&self) -> BufferRead {
        self.commands
    }

    /// The lists' counts (`draw_count`, or the buffer named to [`SceneInputs::register_lists`]),
    /// read as indirect arguments.
    pub(crate) fn counts(&self) -> BufferRead {
        self.count
    }

    /// Binds the draw's pipeline with the scene buffers and its camera, then draws the
    /// scene's lists the draw names in its mode (inside the pass's rendering scope), each from
    /// its place in `draw_commands` (the early list from command 0, the late one from the
    /// middle) with its count (`draw_count` word 0 or 1). Without a GPU count the host's list
    /// is drawn, or the commands a GPU pass may have written ([`GpuScene`]'s indirect counts).
    /// An instanced list sets the `DRAW_INSTANCED` bit, so the vertex shader reads each
    /// instance's slot from `draw_instances`. The draw's `extra` bindings follow the scene's
    /// (the shadowed geometry pass's lights and atlas).
    ///
    /// [`GpuScene`]: crate::GpuScene
    pub(crate) fn draw_with(&self, context: &mut ExecuteContext<'_>, scene: &SharedScene, draw: &SceneDraw<'_>) {
        let SceneDraw { pipeline, extra, view_projection, mode, filter, lists } = *draw;
        let scene = lock_scene(scene);
        const SCENE: usize = SCENE_BINDINGS.len();
        let mut bindings = [Binding::buffer(self.transforms); SCENE + 2];
        bindings[..SCENE].copy_from_slice(&self.bindings());
        let count = SCENE + extra.len().min(2);
        bindings[SCENE..count].copy_from_slice(&extra[..count - SCENE]);
        context.bind_graphics(pipeline, &bindings[..count]);
        let mut push = frame_push_words(context, &view_projection, filter);
        if scene.draws_instanced() {
            push[16] |= INSTANCED_BIT;
        }
        context.push_constants(&push);
        if context.failed() {
            return;
        }
        let indices = context.buffer(self.indices);
        let commands = context.buffer(self.commands);
        if self.draw_split_views(context, &scene, draw) {
            return;
        }
        // Each list (two per view the cull has room for, a count word each) has an equal share
        // of the buffer's commands.
        let list_count = (context.buffer(self.count).size / 4).max(2);
        let room = (commands.size / DRAW_COMMAND_BYTES / list_count) as u32;
        let host_draws = scene.draw_commands();
        let host_counts = scene.indirect_draw_counts().map(|count| count.min(room));
        let stride = DRAW_COMMAND_BYTES as u32;
        let command_buffer = context.command_buffer();
        let multi_draw = context.gpu().capabilities().multi_draw_indirect;
        let raw = context.device();
        // SAFETY: recording inside the pass's rendering scope; `mesh_indices` was declared as
        // an index buffer and holds u32 indices.
        unsafe { raw.cmd_bind_index_buffer(command_buffer, indices.buffer, 0, vk::IndexType::UINT32) };
        for list in lists.range() {
            let first = u64::from(list) * u64::from(room) * DRAW_COMMAND_BYTES;
            let host_count = host_counts[list as usize];
            match mode {
                DrawMode::IndirectCount => {
                    let count = context.buffer(self.count);
                    // SAFETY: recording with the scene pipeline bound; both buffers were
                    // declared as indirect arguments; `room` commands from `first` fit in
                    // `draw_commands`, the list's count word in `draw_count`, and the mode's
                    // features were checked when the pass was built.
                    unsafe {
                        raw.cmd_draw_indexed_indirect_count(
                            command_buffer,
                            commands.buffer,
                            first,
                            count.buffer,
                            u64::from(list) * 4,
                            room,
                            stride,
                        )
                    };
                }
                DrawMode::Indirect if multi_draw => {
                    if host_count > 0 {
                        // SAFETY: as above; `host_count` commands from `first` fit in the buffer.
                        unsafe {
                            raw.cmd_draw_indexed_indirect(command_buffer, commands.buffer, first, host_count, stride)
                        };
                    }
                }
                DrawMode::Indirect => {
                    for draw in 0..u64::from(host_count) {
                        // SAFETY: as above; one command at a time without multiDrawIndirect.
                        unsafe {
                            raw.cmd_draw_indexed_indirect(
                                command_buffer,
                                commands.buffer,
                                first + draw * DRAW_COMMAND_BYTES,
                                1,
                                stride,
                            )
                        };
                    }
                }
                DrawMode::Direct if list == 0 => {
                    let draws = &host_draws[..host_draws.len().min(host_count as usize)];
                    // SAFETY: recording with the scene pipeline bound and the index buffer set.
                    unsafe { draw_direct(context, draws) };
                }
                // The host's list is the early list alone.
                DrawMode::Direct => {}
            }
        }
    }

    /// Draws a split frame: each window view into its rectangle from its own lists (the GPU's
    /// per-view lists, or the host's runs). False when the frame has one view, or when the
    /// GPU's per-view lists could not be drawn: the caller then draws the lists as usual.
    fn draw_split_views(&self, context: &mut ExecuteContext<'_>, scene: &GpuScene, draw: &SceneDraw<'_>) -> bool {
        let SceneDraw { mode, filter, lists, .. } = *draw;
        let indices = context.buffer(self.indices);
        let commands = context.buffer(self.commands);
        if scene.draws_gpu_list() {
            if let Some(views) = split_views(context, scene) {
                let raw = context.device();
                // SAFETY: recording inside the pass's rendering scope; `mesh_indices` was
                // declared as an index buffer and holds u32 indices.
                unsafe {
                    raw.cmd_bind_index_buffer(context.command_buffer(), indices.buffer, 0, vk::IndexType::UINT32)
                };
                let counts = context.buffer(self.count);
                let split = GpuSplitDraw {
                    commands: (commands.buffer, commands.size),
                    counts: (counts.buffer, counts.size),
                    mode,
                    filter,
                    multi_draw: context.gpu().capabilities().multi_draw_indirect,
                    host_count: scene.indirect_draw_counts()[0],
                };
                // SAFETY: the pipeline, its bindings and the index buffer are bound, and the
                // mode was checked when the pass was built.
                return unsafe { draw_gpu_window_views(context, views, split, lists.range()) };
            }
        } else if lists != DrawLists::Late {
            if let Some(views) = split_views(context, scene) {
                let raw = context.device();
                // SAFETY: recording inside the pass's rendering scope; `mesh_indices` was
                // declared as an index buffer and holds u32 indices.
                unsafe {
                    raw.cmd_bind_index_buffer(context.command_buffer(), indices.buffer, 0, vk::IndexType::UINT32)
                };
                let multi_draw = context.gpu().capabilities().multi_draw_indirect;
                let run_counts = scene.staged_run_counts();
                let split = SplitDraw { commands: commands.buffer, mode, filter, multi_draw, run_counts };
                // SAFETY: the pipeline, its bindings and the index buffer are bound, and
                // `draw_commands` holds the host's commands (the scene has window views' runs).
                unsafe { draw_window_views(context, scene, views, split) };
                return true;
            }
        }
        false
    }
}

/// Records one `vkCmdDrawIndexed` per command of `draws` (direct draws may use any first
/// instance): the [`DrawMode::Direct`] form of a list the host holds.
///
/// # Safety
/// The pass is recording inside its rendering scope with its pipeline bound and the index
/// buffer of the commands' ranges set.
pub(crate) unsafe fn draw_direct(context: &ExecuteContext<'_>, draws: &[DrawCommand]) {
    let (raw, command_buffer) = (context.device(), context.command_buffer());
    for draw in draws {
        // SAFETY: the caller's contract: a pipeline and an index buffer are bound.
        unsafe {
            raw.cmd_draw_indexed(
                command_buffer,
                draw.index_count,
                draw.instance_count,
                draw.first_index,
                draw.vertex_offset,
                draw.first_instance,
            )
        };
    }
}

/// Reports a zero output extent as the frame's error; returns whether the extent is usable.
pub(crate) fn check_output_extent(context: &mut ExecuteContext<'_>, resource: &str) -> bool {
    let extent = context.output_extent();
    if extent.width == 0 || extent.height == 0 {
        context.fail(GraphError::InvalidDescription {
            resource: resource.to_owned(),
            reason: "the output extent is zero; give the graph a non-zero extent",
        });
        return false;
    }
    true
}
