//! The blended pass: translucent objects (materials with [`Material::blend`]) over the
//! geometry pass's `color`, farthest first, tested against the frame's depth without writing
//! it.
//!
//! The opaque passes clip blended objects away (their vertex shaders' draw filter), so a
//! translucent surface never enters `depth_prepass` or the Hi-Z pyramid built from it: it
//! hides nothing, on the GPU as on the CPU (whose occluders leave such materials out), and is
//! culled as an occludee only. On the host's list the pass draws the listed blended objects;
//! on a GPU-culled frame it draws every blended object and its vertex shader leaves out
//! those whose bit the late cull cleared; with [`BlendedPass::gpu_culled_levels`] the main
//! view's objects draw the level the camera's cull chose for them (`blended_levels.rs`). A
//! split-screen frame draws every window view's blended objects into its rectangle, sorted
//! for that view, at that view's levels (on the host's lists those its run draws) and
//! (GPU-culled) gated by that view's bits.
//!
//! [`Material::blend`]: crate::Material::blend

use std::sync::Arc;

use render_graph::vk;
use render_graph::{AttachmentLoad, Binding, BindingKind, BufferRead, ColorBlend, ExecuteContext, GpuDevice};
use render_graph::{GraphicsPipeline, PrepareContext, Registry, Result, ShaderStage, TypedPass};

use super::blended_levels::{lock_order, BlendedLevelsPass, BlendedView, SharedOrder, StagedOrder, BLENDED_DRAWS};
use super::draw::SCENE_BINDINGS;
use super::draw::{check_output_extent, frame_push_words, frame_view_projection, scene_pipeline};
use super::draw::{DrawFilter, SceneInputs, ScenePipelineKind, BITS_WORD_SHIFT};
use super::view_draws::set_view_rect;
use super::VISIBILITY_BITS;
use crate::names::{COLOR, COLOR_FORMAT, DEPTH_FORMAT, DEPTH_PREPASS};
use crate::scene::{lock_scene, FrameView, GpuScene, SharedScene, WindowViews, DRAW_COMMAND_BYTES};

/// Bytes from one of [`BLENDED_DRAWS`]' commands to the next.
const STRIDE: u32 = DRAW_COMMAND_BYTES as u32;

/// One view's share of the pass: its objects in `order`, its camera, its rectangle (the whole
/// image when `None`) and the word of `visibility_bits` its bits begin at.
#[derive(Clone, Copy)]
struct ViewRun {
    objects: (usize, usize),
    view_projection: [[f32; 4]; 4],
    rect: Option<[u32; 4]>,
    bits_word: u32,
    /// Whether the run's draws are [`BLENDED_DRAWS`]' commands (with levels), and the view's
    /// side of the level rules for them.
    chosen: Option<BlendedView>,
}

/// Draws the scene's blended objects sorted back to front ([`GpuScene::sort_blended`], with
/// the frame's [`FrameView`](crate::FrameView) parameter) over `color`, blending "over" by
/// alpha and keeping `color`'s alpha; double-sided materials draw both faces. Named
/// `"blended"`; the frames add it after the geometry pass, and it runs only while the scene
/// draws blended objects (it had a blended material at install, or one added since: the
/// graph compiles again then), an optional pass that declares no attachment before.
///
/// [`GpuScene::sort_blended`]: crate::GpuScene::sort_blended
pub struct BlendedPass {
    one_sided: GraphicsPipeline,
    double_sided: GraphicsPipeline,
    scene: SharedScene,
    gated: bool,
    /// The order staged for [`BlendedLevelsPass`]: the main view draws its commands.
    levels: Option<SharedOrder>,
    /// Whether the device draws indirect counts: each command is then drawn as a count draw
    /// of a staged count of one (`one`), as every other indirect draw of a GPU-culled frame.
    /// Lavapipe (Mesa 22.3) keeps the count buffer of the command buffer's last count draw
    /// (the cull's lists) for a later plain indirect draw, which then drew nothing where
    /// that count was 0 (the late list of a frame that saw nothing new).
    count_draws: bool,
    /// This frame's staged count of one (buffer, offset), with `count_draws`.
    one: Option<(vk::Buffer, u64)>,
    /// Whether the scene drew blended objects at the last compile (the pass runs).
    active: bool,
    /// This frame's objects, view after view, each view's farthest first.
    order: Vec<u32>,
    /// The index range each object of `order` draws with directly (its view's level on the
    /// host's lists, [`GpuScene::blended_ranges`]).
    ranges: Vec<[u32; 3]>,
    /// Each view's share of `order` (one for a frame of one view).
    runs: Vec<ViewRun>,
}

/// What the blended pass reads: the scene, and on a GPU-culled frame this frame's
/// `visibility_bits`.
pub struct BlendedInputs {
    scene: SceneInputs,
    bits: Option<BufferRead>,
    /// [`BLENDED_DRAWS`], read as indirect commands (with levels).
    draws: Option<BufferRead>,
}

impl BlendedPass {
    /// The pass of a frame that draws the host's list (CPU culling, or none).
    pub fn new(device: &Arc<GpuDevice>, scene: SharedScene) -> Result<BlendedPass> {
        BlendedPass::build(device, scene, false)
    }

    /// The pass of a GPU-culled frame: it reads this frame's `visibility_bits`.
    pub fn gpu_culled(device: &Arc<GpuDevice>, scene: SharedScene) -> Result<BlendedPass> {
        BlendedPass::build(device, scene, true)
    }

    /// The pass of a GPU-culled frame whose camera cull chooses levels of detail, after the
    /// compute step that writes the main view's commands at the chosen levels
    /// ([`BlendedLevelsPass`]): add both, that one first.
    pub fn gpu_culled_levels(device: &Arc<GpuDevice>, scene: SharedScene) -> Result<(BlendedLevelsPass, BlendedPass)> {
        let order = SharedOrder::default();
        let levels = BlendedLevelsPass::new(device, Arc::clone(&scene), Arc::clone(&order))?;
        let mut pass = BlendedPass::build(device, scene, true)?;
        pass.levels = Some(order);
        pass.count_draws = device.capabilities().draw_indirect_count;
        Ok((levels, pass))
    }

    fn build(device: &Arc<GpuDevice>, scene: SharedScene, gated: bool) -> Result<BlendedPass> {
        let mut gated_bindings = SCENE_BINDINGS.to_vec();
        gated_bindings.push(BindingKind::StorageBuffer);
        let (vertex, bindings) = if gated {
            (shaders::BLENDED_CULLED_VERT.words(), &gated_bindings[..])
        } else {
            (shaders::GEOMETRY_VERT.words(), &SCENE_BINDINGS[..])
        };
        let shaders = (vertex, shaders::GEOMETRY_FRAG.words());
        let kind = |cull_mode| ScenePipelineKind {
            depth: (DEPTH_FORMAT, vk::CompareOp::GREATER_OR_EQUAL, false),
            cull_mode,
            blend: ColorBlend::Alpha,
        };
        let pipeline =
            |name, cull_mode| scene_pipeline(device, name, shaders, bindings, &[COLOR_FORMAT], kind(cull_mode));
        Ok(BlendedPass {
            one_sided: pipeline("blended", vk::CullModeFlags::BACK)?,
            double_sided: pipeline("blended double-sided", vk::CullModeFlags::NONE)?,
            scene,
            gated,
            levels: None,
            count_draws: false,
            one: None,
            active: false,
            order: Vec::new(),
            ranges: Vec::new(),
            runs: Vec::new(),
        })
    }

    /// Binds `pipeline` with the scene's bindings (and the bits) and this frame's camera.
    fn bind(inputs: &BlendedInputs, context: &mut ExecuteContext<'_>, pipeline: &GraphicsPipeline, push: &[u32; 17]) {
        let scene = inputs.scene.bindings();
        match inputs.bits {
            Some(bits) => {
                let mut bindings = [Binding::buffer(bits); SCENE_BINDINGS.len() + 1];
                bindings[..SCENE_BINDINGS.len()].copy_from_slice(&scene);
                context.bind_graphics(pipeline, &bindings);
            }
            None => context.bind_graphics(pipeline, &scene),
        }
        context.push_constants(push);
    }
}

impl TypedPass for BlendedPass {
    type Handles = BlendedInputs;

    fn name(&self) -> &str {
        "blended"
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> BlendedInputs {
        let scene = SceneInputs::register(registry);
        let bits = self.gated.then(|| {
            let bits = registry.buffer(VISIBILITY_BITS);
            registry.read_storage_buffer(bits, ShaderStage::Vertex)
        });
        self.active = lock_scene(&self.scene).draws_blended();
        if !self.active {
            // Nothing reads what it writes without attachments: the graph leaves it out, and
            // compiles again with it once a blended material comes.
            registry.optional();
            return BlendedInputs { scene, bits, draws: None };
        }
        let draws = self.levels.is_some().then(|| {
            let draws = registry.buffer(BLENDED_DRAWS);
            registry.indirect_buffer(draws)
        });
        let depth = registry.image(DEPTH_PREPASS);
        registry.depth_read(depth);
        let color = registry.image(COLOR);
        registry.color_attachment(color, AttachmentLoad::Load);
        BlendedInputs { scene, bits, draws }
    }

    /// Sorts this frame's objects (in `prepare`, so the main view's order can be staged for
    /// [`BlendedLevelsPass`], which records before this pass).
    fn prepare(&mut self, _inputs: &BlendedInputs, context: &mut PrepareContext<'_>) {
        self.order.clear();
        self.ranges.clear();
        self.runs.clear();
        self.one = None;
        if let Some(levels) = &self.levels {
            *lock_order(levels) = StagedOrder::default();
        }
        // A missing view fails the frame in `execute`.
        let Some(view) = context.param::<FrameView>().filter(|_| self.active) else { return };
        let view_projection = view.view_projection;
        let scene = Arc::clone(&self.scene);
        let mut scene = lock_scene(&scene);
        let lists = scene.view_list(0).is_some() || scene.draws_gpu_list();
        let views = context.param::<WindowViews>().filter(|views| !views.views().is_empty() && lists);
        match views {
            Some(views) if views.is_split() => self.sort_views(&mut scene, views),
            // A truth check's one view: the frame's camera, in that view's rectangle.
            one => {
                let rect = one.and_then(|views| views.views().get(views.main())).map(|view| view.rect);
                self.order.extend_from_slice(scene.sort_blended(glam::Mat4::from_cols_array_2d(&view_projection)));
                self.ranges.extend_from_slice(scene.blended_ranges());
                let objects = (0, self.order.len());
                let chosen = self.levels.is_some().then(BlendedView::main);
                self.runs.push(ViewRun { objects, view_projection, rect, bits_word: 0, chosen });
            }
        }
        drop(scene);
        self.stage_order(context);
    }

    fn execute(&mut self, _inputs: &BlendedInputs, context: &mut ExecuteContext<'_>) {
        if !self.active || !check_output_extent(context, COLOR) || frame_view_projection(context).is_none() {
            self.order.clear();
            self.ranges.clear();
            self.runs.clear();
        }
    }

    fn record_draw(&mut self, inputs: &BlendedInputs, context: &mut ExecuteContext<'_>) {
        if context.failed() || self.order.is_empty() {
            return;
        }
        let scene = Arc::clone(&self.scene);
        let scene = lock_scene(&scene);
        for index in 0..self.runs.len() {
            let run = self.runs[index];
            if run.rect.is_some_and(|rect| !set_view_rect(context, rect)) {
                continue;
            }
            self.draw_run(inputs, context, &scene, &run);
            if context.failed() {
                return;
            }
        }
    }
}

impl BlendedPass {
    /// Sorts every window view's blended objects for that view, one run per view: its share
    /// of the host list, or on a GPU-culled frame every blended object gated by its bits.
    fn sort_views(&mut self, scene: &mut GpuScene, views: &WindowViews) {
        let words_per_view = scene.capacity().div_ceil(64) * 2;
        // The camera's cull chooses a window view's error chains only while it chooses the
        // main view's (`camera.rs`).
        let main_lod = scene.lod_view().is_some();
        for view in views.views() {
            let start = self.order.len();
            let view_projection = glam::Mat4::from_cols_array_2d(&view.view_projection);
            self.order.extend_from_slice(scene.sort_blended_in_view(view_projection, view.list as usize));
            // Each at the level of the view's host list (the record's on the GPU's lists).
            self.ranges.extend_from_slice(scene.blended_ranges());
            let bits_word = if self.gated { view.list * words_per_view } else { 0 };
            if bits_word >> (32 - BITS_WORD_SHIFT) != 0 {
                // Bits past what the draw filter can address (over 2^20 words before the
                // view's): that view's blended objects are left out rather than gated wrongly.
                self.order.truncate(start);
                self.ranges.truncate(start);
                continue;
            }
            let objects = (start, self.order.len());
            // Each view's levels: the main view's the slots' states, another's chosen by its
            // own rules as its cull does.
            let cull = crate::CullView::default()
                .with_lod(view.lod.filter(|_| main_lod), false)
                .with_distance_lod(view.lod_distance);
            let blended_view = if view.list == 0 { BlendedView::main() } else { BlendedView::window(&cull) };
            let chosen = self.levels.is_some().then_some(blended_view);
            let run =
                ViewRun { objects, view_projection: view.view_projection, rect: Some(view.rect), bits_word, chosen };
            self.runs.push(run);
        }
    }

    /// Stages every run's slots drawn from [`BLENDED_DRAWS`] (`[slot, run]` each) and the
    /// runs' views for [`BlendedLevelsPass`]; a staging failure fails the frame.
    fn stage_order(&mut self, context: &mut PrepareContext<'_>) {
        let Some(levels) = &self.levels else { return };
        // Views past the room of `blended_draws` (a slot per view the cull has room for) draw
        // their records' levels.
        let room = {
            let scene = lock_scene(&self.scene);
            scene.capacity().max(1) as usize * scene.gpu_view_room().max(1) as usize
        };
        let mut total = 0;
        for run in &mut self.runs {
            total += run.objects.1 - run.objects.0;
            if total > room {
                run.chosen = None;
            }
        }
        let runs = &self.runs;
        let count =
            runs.iter().filter(|run| run.chosen.is_some()).map(|run| run.objects.1 - run.objects.0).sum::<usize>();
        if count == 0 {
            return;
        }
        let order = &self.order;
        let staged = context.stage_with(count as u64 * 8, |bytes| {
            let entries = runs.iter().enumerate().filter(|(_, run)| run.chosen.is_some()).flat_map(|(index, run)| {
                order[run.objects.0..run.objects.1].iter().map(move |&slot| [slot, index as u32])
            });
            for (chunk, entry) in bytes.chunks_exact_mut(8).zip(entries) {
                chunk[..4].copy_from_slice(&entry[0].to_ne_bytes());
                chunk[4..].copy_from_slice(&entry[1].to_ne_bytes());
            }
        });
        let views = context.stage_with(runs.len() as u64 * 48, |bytes| {
            for (chunk, run) in bytes.chunks_exact_mut(48).zip(runs) {
                chunk.copy_from_slice(&run.chosen.unwrap_or_default().bytes());
            }
        });
        match (staged, views) {
            (Ok(binding), Ok(views)) => {
                *lock_order(levels) = StagedOrder { slots: Some((binding, count as u32)), views: Some(views) };
            }
            (Err(error), _) | (_, Err(error)) => return context.fail(error),
        }
        if self.count_draws {
            match context.stage_data(&1u32.to_ne_bytes()) {
                Ok(one) => self.one = one.external_range().map(|(buffer, offset, _)| (buffer, offset)),
                Err(error) => context.fail(error),
            }
        }
    }

    /// Draws one view's run of `order`.
    fn draw_run(&self, inputs: &BlendedInputs, context: &mut ExecuteContext<'_>, scene: &GpuScene, run: &ViewRun) {
        let mut push = frame_push_words(context, &run.view_projection, DrawFilter::Blended);
        push[16] |= run.bits_word << BITS_WORD_SHIFT;
        let mut bound_double_sided = None;
        let indices = inputs.scene.index_buffer();
        let chosen = inputs.draws.filter(|_| run.chosen.is_some());
        for (index, &slot) in self.order[run.objects.0..run.objects.1].iter().enumerate() {
            let Some(record) = scene.record(slot) else { continue };
            let double_sided = scene.meshes().material_is_double_sided(record.material);
            if bound_double_sided != Some(double_sided) {
                let pipeline = if double_sided { &self.double_sided } else { &self.one_sided };
                BlendedPass::bind(inputs, context, pipeline, &push);
                if context.failed() {
                    return;
                }
                // `mesh_indices` holds u32 indices.
                context.bind_index_buffer(indices, 0, vk::IndexType::UINT32);
                bound_double_sided = Some(double_sided);
            }
            if let Some(draws) = chosen {
                // The object's command, at the level the view's cull chose: the runs' commands
                // follow one another as `order` holds them (every run is chosen with levels).
                let offset = (run.objects.0 + index) as u64 * DRAW_COMMAND_BYTES;
                match self.one {
                    Some((count, at)) => {
                        let (raw, command_buffer) = (context.device(), context.command_buffer());
                        let buffer = context.buffer(draws).buffer;
                        // SAFETY: recording with a scene pipeline and the index buffer bound;
                        // the command lies in `blended_draws` (declared indirect, one per
                        // slot of the capacity), the count word in staged memory made with
                        // INDIRECT_BUFFER usage, and the device draws indirect counts.
                        unsafe {
                            raw.cmd_draw_indexed_indirect_count(command_buffer, buffer, offset, count, at, 1, STRIDE)
                        };
                    }
                    None => context.draw_indexed_indirect(draws, offset, 1, STRIDE),
                }
                continue;
            }
            let [first_index, index_count, vertex_offset] = self.ranges[run.objects.0 + index];
            let command_buffer = context.command_buffer();
            // SAFETY: recording with a scene pipeline and the index buffer bound; the range
            // (the record's, or the view's host list's) lies in `mesh_indices` (the library
            // checked it, the scene placed the level), and direct draws may use any first
            // instance.
            unsafe {
                context.device().cmd_draw_indexed(
                    command_buffer,
                    index_count,
                    1,
                    first_index,
                    vertex_offset as i32,
                    slot,
                )
            };
        }
    }
}
