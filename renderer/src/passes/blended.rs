//! The blended pass: translucent objects (materials with [`Material::blend`]) over the
//! geometry pass's `color`, farthest first, tested against the frame's depth without writing
//! it.
//!
//! The opaque passes clip blended objects away (their vertex shaders' draw filter), so a
//! translucent surface never enters `depth_prepass` or the Hi-Z pyramid built from it: it
//! hides nothing, on the GPU as on the CPU (whose occluders leave such materials out), and is
//! culled as an occludee only. On the host's list the pass draws the listed blended objects;
//! on a GPU-culled frame it draws every blended object and its vertex shader leaves out
//! those whose bit the late cull cleared. A split-screen frame draws every window view's
//! blended objects into its rectangle, sorted for that view and (GPU-culled) gated by that
//! view's bits.
//!
//! [`Material::blend`]: crate::Material::blend

use std::sync::Arc;

use render_graph::vk;
use render_graph::{AttachmentLoad, Binding, BindingKind, BufferRead, ColorBlend, ExecuteContext, GpuDevice};
use render_graph::{GraphicsPipeline, Registry, Result, ShaderStage, TypedPass};

use super::draw::SCENE_BINDINGS;
use super::draw::{check_output_extent, frame_push_words, frame_view_projection, scene_pipeline};
use super::draw::{DrawFilter, SceneInputs, ScenePipelineKind, BITS_WORD_SHIFT};
use super::view_draws::{set_view_rect, split_views};
use super::VISIBILITY_BITS;
use crate::names::{COLOR, COLOR_FORMAT, DEPTH_FORMAT, DEPTH_PREPASS};
use crate::scene::{lock_scene, GpuScene, SharedScene, WindowViews};

/// One view's share of the pass: its objects in `order`, its camera, its rectangle (the whole
/// image when `None`) and the word of `visibility_bits` its bits begin at.
#[derive(Clone, Copy)]
struct ViewRun {
    objects: (usize, usize),
    view_projection: [[f32; 4]; 4],
    rect: Option<[u32; 4]>,
    bits_word: u32,
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
    /// Whether the scene drew blended objects at the last compile (the pass runs).
    active: bool,
    /// This frame's objects, view after view, each view's farthest first.
    order: Vec<u32>,
    /// Each view's share of `order` (one for a frame of one view).
    runs: Vec<ViewRun>,
}

/// What the blended pass reads: the scene, and on a GPU-culled frame this frame's
/// `visibility_bits`.
pub struct BlendedInputs {
    scene: SceneInputs,
    bits: Option<BufferRead>,
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
            active: false,
            order: Vec::new(),
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
            return BlendedInputs { scene, bits };
        }
        let depth = registry.image(DEPTH_PREPASS);
        registry.depth_read(depth);
        let color = registry.image(COLOR);
        registry.color_attachment(color, AttachmentLoad::Load);
        BlendedInputs { scene, bits }
    }

    fn execute(&mut self, _inputs: &BlendedInputs, context: &mut ExecuteContext<'_>) {
        self.order.clear();
        self.runs.clear();
        if !self.active || !check_output_extent(context, COLOR) {
            return;
        }
        let Some(view_projection) = frame_view_projection(context) else { return };
        let scene = Arc::clone(&self.scene);
        let mut scene = lock_scene(&scene);
        match split_views(context, &scene) {
            Some(views) if views.is_split() => self.sort_views(&mut scene, views),
            // A truth check's one view: the frame's camera, in that view's rectangle.
            one => {
                let rect = one.and_then(|views| views.views().get(views.main())).map(|view| view.rect);
                self.order.extend_from_slice(scene.sort_blended(glam::Mat4::from_cols_array_2d(&view_projection)));
                self.runs.push(ViewRun { objects: (0, self.order.len()), view_projection, rect, bits_word: 0 });
            }
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
        for view in views.views() {
            let start = self.order.len();
            let view_projection = glam::Mat4::from_cols_array_2d(&view.view_projection);
            self.order.extend_from_slice(scene.sort_blended_in_view(view_projection, view.list as usize));
            let bits_word = if self.gated { view.list * words_per_view } else { 0 };
            if bits_word >> (32 - BITS_WORD_SHIFT) != 0 {
                // Bits past what the draw filter can address (over 2^20 words before the
                // view's): that view's blended objects are left out rather than gated wrongly.
                self.order.truncate(start);
                continue;
            }
            let objects = (start, self.order.len());
            let run = ViewRun { objects, view_projection: view.view_projection, rect: Some(view.rect), bits_word };
            self.runs.push(run);
        }
    }

    /// Draws one view's run of `order`.
    fn draw_run(&self, inputs: &BlendedInputs, context: &mut ExecuteContext<'_>, scene: &GpuScene, run: &ViewRun) {
        let mut push = frame_push_words(context, &run.view_projection, DrawFilter::Blended);
        push[16] |= run.bits_word << BITS_WORD_SHIFT;
        let mut bound_double_sided = None;
        let indices = context.buffer(inputs.scene.index_buffer()).buffer;
        for &slot in &self.order[run.objects.0..run.objects.1] {
            let Some(record) = scene.record(slot) else { continue };
            let double_sided = scene.meshes().material_is_double_sided(record.material);
            if bound_double_sided != Some(double_sided) {
                let pipeline = if double_sided { &self.double_sided } else { &self.one_sided };
                BlendedPass::bind(inputs, context, pipeline, &push);
                if context.failed() {
                    return;
                }
                let command_buffer = context.command_buffer();
                // SAFETY: recording inside the pass's rendering scope; `mesh_indices` was
                // declared as an index buffer and holds u32 indices.
                unsafe { context.device().cmd_bind_index_buffer(command_buffer, indices, 0, vk::IndexType::UINT32) };
                bound_double_sided = Some(double_sided);
            }
            let command_buffer = context.command_buffer();
            // SAFETY: recording with a scene pipeline and the index buffer bound; the record's
            // range lies in `mesh_indices` (the library checked it), and direct draws may use
            // any first instance.
            unsafe {
                context.device().cmd_draw_indexed(
                    command_buffer,
                    record.index_count,
                    1,
                    record.first_index,
                    record.vertex_offset,
                    slot,
                )
            };
        }
    }
}
