//! The shadow atlas pass: every light view of the frame drawn, depth only, into its tile of
//! `shadow_atlas`, and the frame's lights uploaded into `shadow_lights` for the shadowed
//! geometry pass.

use std::fmt::Write;
use std::sync::Arc;

use render_graph::vk;

use super::cull::CULL_OCCLUSION;
use super::cull::{SHADOW_DRAWS, SHADOW_DRAWS_LATE, SHADOW_DRAW_COUNTS, SHADOW_LATE_COUNTS};
use super::draw::{check_mode, scene_push_words, DrawFilter, DrawMode, OpaquePipelines, SceneInputs, SCENE_BINDINGS};
use crate::names::{DEPTH_FORMAT, SHADOW_ATLAS, SHADOW_LIGHTS};
use crate::scene::{
    as_bytes, lock_scene, CameraConstants, ShadowCulling, SharedScene, DRAW_COMMAND_BYTES, SHADOW_LIGHTS_BYTES,
};
use render_graph::{Access, AttachmentLoad, Binding, BufferDesc, BufferHandle, ImageDesc, ImageSize, Registry};
use render_graph::{ExecuteContext, GpuDevice, GraphError, Pass, PrepareContext, Result};

/// Draws each light view's casters into its tile of `shadow_atlas` (D32, reversed-Z:
/// cleared to 0, compare GREATER), with the depth prepass's shaders (the same `precise`
/// positions and the same holes of masked materials, blended materials left out), and
/// uploads the frame's lights and views into `shadow_lights`.
///
/// The caster draws are the host's ([`crate::ShadowFrame::commands`]: each view's casters
/// as the Visibility stage's multi-view cull kept them), staged for the frame and drawn
/// straight from staging memory, one indirect draw per view; or, made with
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
    inputs: Option<SceneInputs>,
    lights: Option<BufferHandle>,
    /// The GPU's lists and counts (device-culled frames).
    device_draws: Option<[BufferHandle; 2]>,
    /// The name of the GPU zone of the view being drawn (reused).
    zone_name: String,
    /// This frame's staged commands and counts: buffer and offset of each.
    staged: Option<[(vk::Buffer, u64); 2]>,
    error: Option<GraphError>,
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
            inputs: None,
            lights: None,
            device_draws: None,
            zone_name: String::new(),
            staged: None,
            error: None,
        })
    }

    /// A pass drawing the lists the GPU's [`ShadowCullPass`](super::ShadowCullPass) wrote
    /// (one indirect-count draw per view, [`DrawMode::IndirectCount`]); the scene's shadow
    /// frame is set to be culled on the device ([`ShadowCulling::Device`]) for at most `views`
    /// views, the cascades' occlusion reading a pyramid `pyramid` texels square.
    pub fn device_culled(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        atlas_resolution: u32,
        (views, pyramid): (u32, u32),
    ) -> Result<ShadowAtlasPass> {
        let region = {
            let mut locked = lock_scene(&scene);
            let region = locked.capacity().max(1);
            locked.set_shadow_culling(ShadowCulling::Device { region, views, pyramid });
            region
        };
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
        let region = lock_scene(&scene).capacity().max(1);
        let mut pass = ShadowAtlasPass::new(device, scene, atlas_resolution, DrawMode::IndirectCount)?;
        pass.device_lists = Some(region);
        pass.late = true;
        Ok(pass)
    }
}

impl Pass for ShadowAtlasPass {
    fn name(&self) -> &str {
        if self.late {
            Self::LATE_NAME
        } else {
            Self::NAME
        }
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        if self.late {
            self.inputs = Some(SceneInputs::register(registry));
            let atlas = registry.image(SHADOW_ATLAS);
            registry.depth_attachment(atlas, AttachmentLoad::Load);
            let draws = registry.buffer(SHADOW_DRAWS_LATE);
            let counts = registry.buffer(SHADOW_DRAW_COUNTS);
            self.device_draws = Some([registry.indirect_buffer(draws), registry.indirect_buffer(counts)]);
            return;
        }
        self.inputs = Some(SceneInputs::register(registry));
        let size = ImageSize::Absolute { width: self.resolution, height: self.resolution };
        let atlas = registry.create_image(SHADOW_ATLAS, ImageDesc::new(DEPTH_FORMAT, size));
        // Reversed-Z: 0 is the far end of every view, so an empty tile shadows nothing.
        registry.depth_attachment(atlas, AttachmentLoad::ClearDepth(0.0));
        let lights = registry.create_buffer(SHADOW_LIGHTS, BufferDesc { size: SHADOW_LIGHTS_BYTES as u64 });
        self.lights = Some(registry.access_buffer(lights, Access::TransferWrite));
        if self.device_lists.is_some() {
            let draws = registry.buffer(SHADOW_DRAWS);
            let counts = registry.buffer(SHADOW_DRAW_COUNTS);
            self.device_draws = Some([registry.indirect_buffer(draws), registry.indirect_buffer(counts)]);
        }
    }

    fn prepare(&mut self, context: &mut PrepareContext<'_>) {
        self.staged = None;
        if self.late {
            return;
        }
        let scene = lock_scene(&self.scene);
        let shadows = scene.shadows();
        let lights = self.lights.expect("registered");
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
        match staged {
            Ok([Binding::External { buffer, offset, .. }, Binding::External { buffer: counts, offset: at, .. }]) => {
                self.staged = Some([(buffer, offset), (counts, at)])
            }
            Ok(_) => unreachable!("staged data is an external binding"),
            Err(error) => self.error = Some(error),
        }
    }

    fn execute(&mut self, context: &mut ExecuteContext<'_>) {
        if let Some(error) = self.error.take() {
            context.fail(error);
        }
    }

    fn record_draw(&mut self, context: &mut ExecuteContext<'_>) {
        if context.failed() {
            return;
        }
        let inputs = self.inputs.expect("register runs before record_draw");
        let scene = lock_scene(&self.scene);
        let shadows = scene.shadows();
        // The GPU's lists are counted on the GPU: every view is drawn.
        if self.device_lists.is_none() && shadows.views().iter().all(|view| view.count == 0) {
            return;
        }
        let device_lists = match (self.device_lists, self.device_draws) {
            (Some(region), Some([draws, counts])) => {
                Some((region, context.buffer(draws).buffer, context.buffer(counts).buffer))
            }
            _ => None,
        };
        let double_sided = scene.meshes().has_double_sided_surfaces();
        let pipelines =
            [(&self.pipeline.one_sided, DrawFilter::OneSided), (&self.pipeline.double_sided, DrawFilter::DoubleSided)];
        for (pipeline, filter) in pipelines.into_iter().take(if double_sided { 2 } else { 1 }) {
            context.bind_graphics(pipeline, &inputs.bindings());
            if context.failed() {
                return;
            }
            let indices = context.buffer(inputs.index_buffer());
            let command_buffer = context.command_buffer();
            let multi_draw = context.gpu().capabilities().multi_draw_indirect;
            // SAFETY: recording inside the pass's rendering scope; `mesh_indices` was declared
            // as an index buffer and holds u32 indices.
            unsafe { context.device().cmd_bind_index_buffer(command_buffer, indices.buffer, 0, vk::IndexType::UINT32) };
            for (index, view) in shadows.views().iter().enumerate() {
                if device_lists.is_none() && view.count == 0 {
                    continue;
                }
                // The late lists are the occlusion views' alone.
                let occlusion = shadows.cull_views().get(index).is_some_and(|view| view.flags & CULL_OCCLUSION != 0);
                if self.late && !occlusion {
                    continue;
                }
                // One GPU zone per light view (and draw filter): `view N <kind>`.
                self.zone_name.clear();
                let _ = write!(self.zone_name, "view {index} {}", view_kind_name(view.kind));
                if filter == DrawFilter::DoubleSided {
                    self.zone_name.push_str(" double-sided");
                }
                context.begin_gpu_zone(&self.zone_name);
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
                let camera = CameraConstants { view_projection: view.view_projection };
                context.push_constants(&scene_push_words(&camera, filter));
                let raw = context.device();
                // SAFETY: recording inside the rendering scope; the pipelines take viewport
                // and scissor as dynamic state, and the tile lies inside the atlas.
                unsafe {
                    raw.cmd_set_viewport(command_buffer, 0, &[viewport]);
                    raw.cmd_set_scissor(command_buffer, 0, &[scissor]);
                }
                if let Some((region, draws, counts)) = device_lists {
                    let start = index as u64 * u64::from(region) * DRAW_COMMAND_BYTES;
                    let count_at = if self.late { SHADOW_LATE_COUNTS + index as u64 } else { index as u64 };
                    // SAFETY: both buffers were declared indirect arguments of this pass and
                    // the shadow cull wrote them before it (the graph's barrier); view
                    // `index`'s `region` commands lie in the lists, its count at `4 * index`;
                    // the pass was made in the indirect-count mode, whose features were checked.
                    unsafe {
                        raw.cmd_draw_indexed_indirect_count(
                            command_buffer,
                            draws,
                            start,
                            counts,
                            4 * count_at,
                            region,
                            DRAW_COMMAND_BYTES as u32,
                        )
                    };
                    continue;
                }
                let commands = &shadows.commands()[view.first as usize..(view.first + view.count) as usize];
                match (self.staged, self.mode) {
                    (Some([(buffer, offset), (counts, at)]), DrawMode::IndirectCount) => {
                        let start = offset + u64::from(view.first) * DRAW_COMMAND_BYTES;
                        let count_at = at + 4 * index as u64;
                        // SAFETY: both staged ranges have INDIRECT_BUFFER usage and hold this
                        // frame's data (made visible by the submit); the view's `count`
                        // commands lie in the first, its count at `count_at` in the second;
                        // the mode's features were checked when the pass was made.
                        unsafe {
                            raw.cmd_draw_indexed_indirect_count(
                                command_buffer,
                                buffer,
                                start,
                                counts,
                                count_at,
                                view.count,
                                DRAW_COMMAND_BYTES as u32,
                            )
                        };
                    }
                    (Some([(buffer, offset), _]), DrawMode::Indirect) => {
                        let start = offset + u64::from(view.first) * DRAW_COMMAND_BYTES;
                        let stride = DRAW_COMMAND_BYTES as u32;
                        if multi_draw {
                            // SAFETY: the staged buffer has INDIRECT_BUFFER usage, holds this
                            // frame's commands (made visible by the submit), and the view's
                            // `count` commands lie in it.
                            unsafe { raw.cmd_draw_indexed_indirect(command_buffer, buffer, start, view.count, stride) };
                        } else {
                            for index in 0..u64::from(view.count) {
                                // SAFETY: as above, one command at a time.
                                unsafe {
                                    raw.cmd_draw_indexed_indirect(
                                        command_buffer,
                                        buffer,
                                        start + index * DRAW_COMMAND_BYTES,
                                        1,
                                        stride,
                                    )
                                };
                            }
                        }
                    }
                    _ => {
                        for draw in commands {
                            // SAFETY: recording with the pipeline bound and the index buffer set.
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
