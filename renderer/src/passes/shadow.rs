//! The shadow atlas pass: every light view of the frame drawn, depth only, into its tile of
//! `shadow_atlas`, and the frame's lights uploaded into `shadow_lights` for the shadowed
//! geometry pass.

use std::fmt::Write;
use std::sync::Arc;

use render_graph::vk;

use super::cull::CULL_OCCLUSION;
use super::cull::{SHADOW_DRAWS, SHADOW_DRAWS_LATE, SHADOW_DRAW_COUNTS, SHADOW_LATE_COUNTS};
use super::draw::{
    check_mode, draw_direct, scene_push_words, DrawFilter, DrawMode, OpaquePipelines, SceneInputs, SCENE_BINDINGS,
};
use crate::names::{DEPTH_FORMAT, SHADOW_ATLAS, SHADOW_LIGHTS};
use crate::scene::{
    as_bytes, lock_scene, ShadowFrame, ShadowViewDraws, SharedScene, DRAW_COMMAND_BYTES, SHADOW_LIGHTS_BYTES,
};
use render_graph::{Access, AttachmentLoad, BufferDesc, BufferRead, BufferWrite, ImageDesc, ImageSize, Registry};
use render_graph::{ExecuteContext, GpuDevice, GraphError, GraphicsPipeline, PrepareContext, Result, TypedPass};

/// Draws each light view's casters into its tile of `shadow_atlas` (D32, reversed-Z:
/// cleared to 0, compare GREATER), with the depth prepass's shaders (the same `precise`
/// positions and the same holes of masked materials, blended materials left out), and
/// uploads the frame's lights and views into `shadow_lights`. The views, lights and host
/// caster draws are the frame's [`ShadowFrame`] parameter
/// ([`render_graph::RenderGraph::set_param`]), which the shadow culls read too.
///
/// The caster draws are the host's ([`ShadowFrame::commands`]: each view's casters as the
/// Visibility stage's multi-view cull kept them), staged for the frame and drawn straight
/// from staging memory, one indirect draw per view; or, made with
/// [`ShadowAtlasPass::device_culled`], the GPU's lists ([`SHADOW_DRAWS`] and
/// [`SHADOW_DRAW_COUNTS`] of [`ShadowCullPass`](super::ShadowCullPass)), one indirect-count
/// draw per view. The atlas is `atlas_resolution` texels square, fixed when the pass is made.
pub struct ShadowAtlasPass {
    pipeline: OpaquePipelines,
    scene: SharedScene,
    mode: DrawMode,
    resolution: u32,
    /// `Some(region)`: the views' lists are the GPU's, `region` commands apart.
    device_lists: Option<u32>,
    /// The late pass of the cascades' occlusion: draws the late lists over the early depth.
    late: bool,
    /// The name of the GPU zone of the view being drawn (reused).
    zone_name: String,
    /// This frame's staged commands and counts: buffer and offset of each.
    staged: Option<[(vk::Buffer, u64); 2]>,
    error: Option<GraphError>,
}

/// What the shadow atlas pass declared: the scene it draws, `shadow_lights` (the early pass
/// uploads it; the late pass has none) and, on device-culled frames, the GPU's lists and
/// counts.
pub struct ShadowAtlasHandles {
    scene: SceneInputs,
    lights: Option<BufferWrite>,
    device_draws: Option<[BufferRead; 2]>,
}

/// The GPU's caster lists of a device-culled frame: `region` commands per view in `draws`,
/// the counts in `counts`.
#[derive(Clone, Copy)]
struct DeviceLists {
    region: u32,
    draws: vk::Buffer,
    counts: vk::Buffer,
}

impl ShadowAtlasPass {
    /// Name of the pass.
    pub const NAME: &'static str = "shadow_atlas";
    /// Name of the late pass ([`ShadowAtlasPass::device_culled_late`]).
    pub const LATE_NAME: &'static str = "shadow_atlas late";

    /// A pass drawing `scene`'s shadow views into an atlas `atlas_resolution` texels square
    /// (clamped to 256..=16384), in `mode`.
    pub fn new(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        atlas_resolution: u32,
        mode: DrawMode,
    ) -> Result<ShadowAtlasPass> {
        check_mode(device, mode)?;
        let pipeline = OpaquePipelines::new(
            device,
            Self::NAME,
            (shaders::DEPTH_PREPASS_VERT.words(), shaders::DEPTH_PREPASS_FRAG.words()),
            &SCENE_BINDINGS,
            &[],
            (DEPTH_FORMAT, vk::CompareOp::GREATER, true),
        )?;
        Ok(ShadowAtlasPass {
            pipeline,
            scene,
            mode,
            resolution: atlas_resolution.clamp(256, 16_384),
            device_lists: None,
            late: false,
            zone_name: String::new(),
            staged: None,
            error: None,
        })
    }

    /// A pass drawing the lists the GPU's [`ShadowCullPass`](super::ShadowCullPass) wrote
    /// (one indirect-count draw per view, [`DrawMode::IndirectCount`]), with room for every
    /// slot of `scene` per view. The frame's [`ShadowFrame`] must be culled on the device
    /// ([`ShadowFrame::with_culling`] of a
    /// [`ShadowCulling::Device`](crate::ShadowCulling::Device), as
    /// [`add_gpu_culled_scene_passes`](crate::add_gpu_culled_scene_passes) sets it).
    pub fn device_culled(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        atlas_resolution: u32,
    ) -> Result<ShadowAtlasPass> {
        let region = lock_scene(&scene).capacity().max(1);
        let mut pass = ShadowAtlasPass::new(device, scene, atlas_resolution, DrawMode::IndirectCount)?;
        pass.device_lists = Some(region);
        Ok(pass)
    }

    /// The late pass of the sun's cascades' occlusion culling: draws, over the depth the
    /// early pass left in `shadow_atlas`, the late lists the GPU's late cull wrote
    /// ([`SHADOW_DRAWS_LATE`]: casters visible now that the early lists did not hold). After
    /// a [`ShadowAtlasPass::device_culled`] of the same scene.
    pub fn device_culled_late(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        atlas_resolution: u32,
    ) -> Result<ShadowAtlasPass> {
        let mut pass = ShadowAtlasPass::device_culled(device, scene, atlas_resolution)?;
        pass.late = true;
        Ok(pass)
    }

    /// Draws view `index`'s list of the GPU's: one indirect-count draw.
    fn draw_device_list(&self, context: &ExecuteContext<'_>, lists: DeviceLists, index: usize) {
        let start = index as u64 * u64::from(lists.region) * DRAW_COMMAND_BYTES;
        let count_at = if self.late { SHADOW_LATE_COUNTS + index as u64 } else { index as u64 };
        // SAFETY: both buffers were declared indirect arguments of this pass and the shadow
        // cull wrote them before it (the graph's barrier); view `index`'s `region` commands
        // lie in the lists, its count at `4 * count_at`; the pass was made in the
        // indirect-count mode, whose features were checked.
        unsafe {
            context.device().cmd_draw_indexed_indirect_count(
                context.command_buffer(),
                lists.draws,
                start,
                lists.counts,
                4 * count_at,
                lists.region,
                DRAW_COMMAND_BYTES as u32,
            )
        };
    }

    /// Draws view `index`'s casters of the host's: from the staged commands and counts
    /// (indirect, with or without the count), or one direct draw per command.
    fn draw_host_list(
        &self,
        context: &ExecuteContext<'_>,
        shadows: &ShadowFrame,
        index: usize,
        view: &ShadowViewDraws,
    ) {
        let (raw, command_buffer) = (context.device(), context.command_buffer());
        let stride = DRAW_COMMAND_BYTES as u32;
        match (self.staged, self.mode) {
            (Some([(buffer, offset), (counts, at)]), DrawMode::IndirectCount) => {
                let start = offset + u64::from(view.first) * DRAW_COMMAND_BYTES;
                let count_at = at + 4 * index as u64;
                // SAFETY: both staged ranges have INDIRECT_BUFFER usage and hold this frame's
                // data (made visible by the submit); the view's `count` commands lie in the
                // first, its count at `count_at` in the second; the mode's features were
                // checked when the pass was made.
                unsafe {
                    raw.cmd_draw_indexed_indirect_count(
                        command_buffer,
                        buffer,
                        start,
                        counts,
                        count_at,
                        view.count,
                        stride,
                    )
                };
            }
            (Some([(buffer, offset), _]), DrawMode::Indirect) => {
                let start = offset + u64::from(view.first) * DRAW_COMMAND_BYTES;
                if context.gpu().capabilities().multi_draw_indirect {
                    // SAFETY: the staged buffer has INDIRECT_BUFFER usage, holds this frame's
                    // commands (made visible by the submit), and the view's `count` commands
                    // lie in it.
                    unsafe { raw.cmd_draw_indexed_indirect(command_buffer, buffer, start, view.count, stride) };
                } else {
                    for command in 0..u64::from(view.count) {
                        let at = start + command * DRAW_COMMAND_BYTES;
                        // SAFETY: as above, one command at a time.
                        unsafe { raw.cmd_draw_indexed_indirect(command_buffer, buffer, at, 1, stride) };
                    }
                }
            }
            _ => {
                let commands = &shadows.commands()[view.first as usize..(view.first + view.count) as usize];
                // SAFETY: recording with the pipeline bound and the index buffer set.
                unsafe { draw_direct(context, commands) };
            }
        }
    }
}

/// Opens view `index`'s GPU zone (`view N <kind>`, per draw filter, named in `zone_name`),
/// sets its tile as viewport and scissor and pushes its matrix.
fn begin_view(
    zone_name: &mut String,
    context: &mut ExecuteContext<'_>,
    (index, view): (usize, &ShadowViewDraws),
    filter: DrawFilter,
) {
    zone_name.clear();
    let _ = write!(zone_name, "view {index} {}", view_kind_name(view.kind));
    if filter == DrawFilter::DoubleSided {
        zone_name.push_str(" double-sided");
    }
    context.begin_gpu_zone(zone_name);
    let [x, y, size] = view.tile;
    let viewport = vk::Viewport {
        x: x as f32,
        y: y as f32,
        width: size as f32,
        height: size as f32,
        min_depth: 0.0,
        max_depth: 1.0,
    };
    let scissor = vk::Rect2D {
        offset: vk::Offset2D { x: x as i32, y: y as i32 },
        extent: vk::Extent2D { width: size, height: size },
    };
    context.push_constants(&scene_push_words(&view.view_projection, filter));
    let (raw, command_buffer) = (context.device(), context.command_buffer());
    // SAFETY: recording inside the rendering scope; the pipelines take viewport and
    // scissor as dynamic state, and the tile lies inside the atlas.
    unsafe {
        raw.cmd_set_viewport(command_buffer, 0, &[viewport]);
        raw.cmd_set_scissor(command_buffer, 0, &[scissor]);
    }
}

/// Binds `pipeline` with the scene's bindings and its index buffer; false when the frame
/// has failed.
fn bind_scene(context: &mut ExecuteContext<'_>, pipeline: &GraphicsPipeline, inputs: &SceneInputs) -> bool {
    context.bind_graphics(pipeline, &inputs.bindings());
    if context.failed() {
        return false;
    }
    let indices = context.buffer(inputs.index_buffer());
    // SAFETY: recording inside the pass's rendering scope; `mesh_indices` was declared as an
    // index buffer and holds u32 indices.
    unsafe {
        context.device().cmd_bind_index_buffer(context.command_buffer(), indices.buffer, 0, vk::IndexType::UINT32)
    };
    true
}

impl TypedPass for ShadowAtlasPass {
    type Handles = ShadowAtlasHandles;

    fn name(&self) -> &str {
        if self.late {
            Self::LATE_NAME
        } else {
            Self::NAME
        }
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> ShadowAtlasHandles {
        if self.device_lists.is_some() {
            // One list per view with room for every slot: the scene may have grown.
            self.device_lists = Some(lock_scene(&self.scene).capacity().max(1));
        }
        let scene = SceneInputs::register(registry);
        if self.late {
            let atlas = registry.image(SHADOW_ATLAS);
            registry.depth_attachment(atlas, AttachmentLoad::Load);
            let [draws, counts] = [SHADOW_DRAWS_LATE, SHADOW_DRAW_COUNTS].map(|name| registry.buffer(name));
            let device_draws = Some([registry.indirect_buffer(draws), registry.indirect_buffer(counts)]);
            return ShadowAtlasHandles { scene, lights: None, device_draws };
        }
        let size = ImageSize::Absolute { width: self.resolution, height: self.resolution };
        let atlas = registry.create_image(SHADOW_ATLAS, ImageDesc::new(DEPTH_FORMAT, size));
        // Reversed-Z: 0 is the far end of every view, so an empty tile shadows nothing.
        registry.depth_attachment(atlas, AttachmentLoad::ClearDepth(0.0));
        let lights = registry.create_buffer(SHADOW_LIGHTS, BufferDesc { size: SHADOW_LIGHTS_BYTES as u64 });
        let lights = Some(registry.write_buffer(lights, Access::TransferWrite));
        let device_draws = self.device_lists.map(|_| {
            let [draws, counts] = [SHADOW_DRAWS, SHADOW_DRAW_COUNTS].map(|name| registry.buffer(name));
            [registry.indirect_buffer(draws), registry.indirect_buffer(counts)]
        });
        ShadowAtlasHandles { scene, lights, device_draws }
    }

    fn prepare(&mut self, handles: &ShadowAtlasHandles, context: &mut PrepareContext<'_>) {
        self.staged = None;
        let Some(lights) = &handles.lights else { return };
        let shadows = match context.require_param::<ShadowFrame>() {
            Ok(shadows) => shadows,
            Err(error) => return context.fail(error),
        };
        let mut words = shadows.light_words();
        let empty = [0u32; SHADOW_LIGHTS_BYTES / 4];
        if words.len() != empty.len() {
            // No frame of shadows set yet: no light.
            words = &empty;
        }
        if let Err(error) = context.upload_buffer(lights, 0, as_bytes(words)) {
            self.error = Some(error);
            return;
        }
        if self.device_lists.is_some() || shadows.commands().is_empty() || self.mode == DrawMode::Direct {
            return;
        }
        let staged = context
            .stage_data(as_bytes(shadows.commands()))
            .and_then(|commands| Ok([commands, context.stage_data(as_bytes(shadows.counts()))?]));
        match staged.map(|staged| staged.map(|binding| binding.external_range())) {
            Ok([Some((buffer, offset, _)), Some((counts, at, _))]) => {
                self.staged = Some([(buffer, offset), (counts, at)])
            }
            Ok(_) => unreachable!("staged data is an external binding"),
            Err(error) => self.error = Some(error),
        }
    }

    fn execute(&mut self, _handles: &ShadowAtlasHandles, context: &mut ExecuteContext<'_>) {
        if let Some(error) = self.error.take() {
            context.fail(error);
        }
    }

    fn record_draw(&mut self, handles: &ShadowAtlasHandles, context: &mut ExecuteContext<'_>) {
        if context.failed() {
            return;
        }
        let shadows = match context.require_param::<ShadowFrame>() {
            Ok(shadows) => shadows,
            Err(error) => return context.fail(error),
        };
        // The GPU's lists are counted on the GPU: every view is drawn.
        if self.device_lists.is_none() && shadows.views().iter().all(|view| view.count == 0) {
            return;
        }
        let device_lists = match (self.device_lists, handles.device_draws) {
            (Some(region), Some([draws, counts])) => {
                Some(DeviceLists { region, draws: context.buffer(draws).buffer, counts: context.buffer(counts).buffer })
            }
            _ => None,
        };
        let double_sided = lock_scene(&self.scene).meshes().has_double_sided_surfaces();
        let pipelines =
            [(&self.pipeline.one_sided, DrawFilter::OneSided), (&self.pipeline.double_sided, DrawFilter::DoubleSided)];
        for (pipeline, filter) in pipelines.into_iter().take(if double_sided { 2 } else { 1 }) {
            if !bind_scene(context, pipeline, &handles.scene) {
                return;
            }
            for (index, view) in shadows.views().iter().enumerate() {
                if device_lists.is_none() && view.count == 0 {
                    continue;
                }
                // The late lists are the occlusion views' alone.
                let occlusion = shadows.cull_views().get(index).is_some_and(|view| view.flags & CULL_OCCLUSION != 0);
                if self.late && !occlusion {
                    continue;
                }
                begin_view(&mut self.zone_name, context, (index, view), filter);
                match device_lists {
                    Some(lists) => self.draw_device_list(context, lists, index),
                    None => self.draw_host_list(context, shadows, index, view),
                }
            }
        }
    }
}

/// A light view's kind as its GPU zone names it.
fn view_kind_name(kind: culling::shadow::LightViewKind) -> &'static str {
    use culling::shadow::LightViewKind::{Cascade, CubeFace, Spot};
    const CASCADES: [&str; 4] = ["cascade 0", "cascade 1", "cascade 2", "cascade 3"];
    const FACES: [&str; 6] = ["cube face 0", "cube face 1", "cube face 2", "cube face 3", "cube face 4", "cube face 5"];
    match kind {
        Cascade(index) => CASCADES.get(usize::from(index)).copied().unwrap_or("cascade"),
        Spot => "spot",
        CubeFace(face) => FACES.get(usize::from(face)).copied().unwrap_or("cube face"),
    }
}
