//! The three passes a user writes first, inside the engine's own frame, each with the CPU
//! computation it is checked against (`frame_passes` sample, and its test):
//!
//! - [`DepthPost`]: fog by depth ([`DepthPost::fog`]) and outlines where the depth jumps
//!   ([`DepthPost::outline`]), compute passes at [`points::AFTER_GEOMETRY`] that read and
//!   write the engine's `color` in place and sample its `depth_prepass`: per-view passes
//!   ([`PerView`]), each run over one window view's rectangle with that view's planes (a
//!   split-screen's outline stops at the seam; the whole image in a frame of one view);
//! - [`DebugBoxes`]: every object's world box as lines, coloured by the GPU's visibility bits,
//!   read from the engine's buffers on the GPU ([`points::AFTER_GEOMETRY`], GPU culling): a
//!   per-view pass too, each view's boxes through its camera in its rectangle, coloured by its
//!   own bits;
//! - [`Bob`]: a compute pass at [`points::BEFORE_CULL`] that moves every object up and down on
//!   the GPU; the cull and the draw see the new places in the same frame.
//!
//! Each reads the frame's camera from the engine's `view` uniform. [`FramePassCheck`] (in
//! `check.rs`) adds them to the engine's frame with the readbacks their CPU checks need and
//! checks a drawn frame; the `frame_passes` sample and `city --post/--debug-boxes/--gpu-animate`
//! use it.

mod check;

pub use check::{linear_depth, post_reference, FramePassCheck, FramePassMismatches, PostView};

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use render_graph::{
    vk, AttachmentLoad, Binding, BindingKind, BufferDesc, BufferRead, BufferWrite, ComputePipeline, ExecuteContext,
    GpuDevice, GraphicsPipeline, GraphicsPipelineDesc, HotPipeline, ImageRead, ImageWrite, Registry, Result,
    ShaderStage, TypedPass,
};
use renderer::{
    points, PassView, PerView, ViewPass, COLOR, COLOR_FORMAT, DEPTH_PREPASS, OBJECT_RECORDS, OBJECT_TRANSFORMS,
    OBJECT_TRANSFORM_BYTES, VIEW, VISIBILITY_BITS,
};

const COMPUTE: ShaderStage = ShaderStage::Compute;

fn floats_to_bytes(floats: &[f32]) -> Vec<u8> {
    floats.iter().flat_map(|value| value.to_le_bytes()).collect()
}

/// Bytes of [`DepthPost`]'s push constants: a colour (16), a float (4, padded to 16) and the
/// view's rectangle (4 `int`s, 16-aligned).
const POST_CONSTANT_BYTES: usize = 48;
/// Where the rectangle starts in them.
const POST_RECT_OFFSET: usize = 32;

/// A compute post-process on `color`, in place, from `depth_prepass` and `view`, run once per
/// window view over its rectangle with its block of `view` (add it wrapped in [`PerView`]). Its shader
/// follows its GLSL file with `ENGINE_HOT_RELOAD=1` in a debug build (edit
/// `shaders/glsl/samples/fog.comp.glsl` while the sample runs).
pub struct DepthPost {
    name: &'static str,
    pipeline: HotPipeline<ComputePipeline>,
    constants: Vec<u8>,
    switch: PostSwitch,
}

/// Whether the post-processes ([`DepthPost`]) sharing it draw, switched between frames (the
/// window's overlay). Off, each skips its dispatch while the graph, compiled once with the
/// passes and their barriers, stays as it is: `color` goes through unchanged, and switching
/// costs no rebuild. On by default.
#[derive(Clone, Debug)]
pub struct PostSwitch(Arc<AtomicBool>);

impl Default for PostSwitch {
    fn default() -> Self {
        PostSwitch(Arc::new(AtomicBool::new(true)))
    }
}

impl PostSwitch {
    /// Turns the post-processes on or off from the next frame recorded.
    pub fn set(&self, on: bool) {
        self.0.store(on, Ordering::Relaxed);
    }

    /// Whether the post-processes draw.
    pub fn is_on(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

impl DepthPost {
    fn new(device: &Arc<GpuDevice>, name: &'static str, shader: &shaders::Shader, constants: [f32; 5]) -> Result<Self> {
        let kinds = [BindingKind::StorageImage, BindingKind::SampledImage, BindingKind::UniformBuffer];
        let engine = PathBuf::from(shaders::ENGINE_INCLUDE_DIR);
        let glsl = engine.join("../..").join(shader.source_path);
        let bytes = POST_CONSTANT_BYTES as u32;
        let pipeline = HotPipeline::compute(device, name, glsl, shader.words(), &kinds, bytes, &[engine])?;
        let mut packed = floats_to_bytes(&constants);
        packed.resize(POST_CONSTANT_BYTES, 0);
        Ok(DepthPost { name, pipeline, constants: packed, switch: PostSwitch::default() })
    }

    /// Fog of `fog` (linear RGB) thickening by `density` per metre.
    pub fn fog(device: &Arc<GpuDevice>, fog: [f32; 3], density: f32) -> Result<Self> {
        Self::new(device, "fog", &shaders::FOG_COMP, [fog[0], fog[1], fog[2], 1.0, density])
    }

    /// Black lines where the depth jumps by more than `threshold` of the nearer distance.
    pub fn outline(device: &Arc<GpuDevice>, threshold: f32) -> Result<Self> {
        Self::new(device, "outline", &shaders::OUTLINE_COMP, [0.0, 0.0, 0.0, 1.0, threshold])
    }

    /// The pass, drawing only while `switch` is on.
    pub fn switched(self, switch: &PostSwitch) -> Self {
        DepthPost { switch: switch.clone(), ..self }
    }
}

impl ViewPass for DepthPost {
    /// `color`, written in place; `depth_prepass` and `view`, read.
    type Handles = (ImageWrite, ImageRead, BufferRead);

    fn name(&self) -> &str {
        self.name
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let (color, depth, view) = (registry.image(COLOR), registry.image(DEPTH_PREPASS), registry.buffer(VIEW));
        let color = registry.read_write_storage_image(color, COMPUTE);
        let depth = registry.sample(depth, COMPUTE);
        (color, depth, registry.read_uniform_buffer(view, COMPUTE))
    }

    fn execute_view(&mut self, (color, depth, view): &Self::Handles, at: &PassView, context: &mut ExecuteContext<'_>) {
        if !self.switch.is_on() {
            return;
        }
        let pipeline = self.pipeline.current(context.frame_index());
        context.bind_compute(pipeline, &[Binding::image(color), Binding::image(*depth), at.uniform(*view)]);
        for (index, value) in at.rect.iter().enumerate() {
            let at = POST_RECT_OFFSET + index * 4;
            self.constants[at..at + 4].copy_from_slice(&value.to_le_bytes());
        }
        context.push_constant_bytes(&self.constants);
        let [_, _, width, height] = at.rect;
        context.dispatch(width.div_ceil(8), height.div_ceil(8), 1);
    }
}

/// Every object's world box as green (visible on the GPU this frame) or red lines, once per
/// window view (add it wrapped in [`PerView`]): through the view's camera, coloured by the
/// view's own bits.
pub struct DebugBoxes {
    pipeline: GraphicsPipeline,
    capacity: u32,
}

impl DebugBoxes {
    /// The pass for a scene of `capacity` slots (the capacity the Render stage was given: each
    /// view's bits follow the one before at that stride).
    pub fn new(device: &Arc<GpuDevice>, capacity: u32) -> Result<Self> {
        let bindings = [
            BindingKind::StorageBuffer,
            BindingKind::StorageBuffer,
            BindingKind::StorageBuffer,
            BindingKind::UniformBuffer,
        ];
        let desc = GraphicsPipelineDesc {
            vertex: shaders::DEBUG_BOXES_VERT.words(),
            fragment: shaders::DEBUG_BOXES_FRAG.words(),
            bindings: &bindings,
            push_constant_bytes: 4,
            color_formats: &[COLOR_FORMAT],
            depth: None,
            topology: vk::PrimitiveTopology::LINE_LIST,
            cull_mode: vk::CullModeFlags::NONE,
            blend: render_graph::ColorBlend::Replace,
        };
        Ok(DebugBoxes { pipeline: GraphicsPipeline::new(device, "debug boxes", &desc)?, capacity })
    }
}

impl ViewPass for DebugBoxes {
    /// `object_transforms`, `object_records`, `visibility_bits` and `view`, all read.
    type Handles = [BufferRead; 4];

    fn name(&self) -> &str {
        "debug boxes"
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let color = registry.image(COLOR);
        registry.color_attachment(color, AttachmentLoad::Load);
        let vertex = ShaderStage::Vertex;
        let names = [OBJECT_TRANSFORMS, OBJECT_RECORDS, VISIBILITY_BITS];
        let [transforms, records, bits] = names.map(|name| {
            let buffer = registry.buffer(name);
            registry.read_storage_buffer(buffer, vertex)
        });
        let view = registry.buffer(VIEW);
        [transforms, records, bits, registry.read_uniform_buffer(view, vertex)]
    }

    fn record_draw_view(&mut self, &handles: &Self::Handles, at: &PassView, context: &mut ExecuteContext<'_>) {
        let [transforms, records, bits, view] = handles;
        let bindings = [Binding::buffer(transforms), Binding::buffer(records), Binding::buffer(bits), at.uniform(view)];
        context.bind_graphics(&self.pipeline, &bindings);
        // The view's bits: its words of `visibility_bits`, as uints.
        let words = renderer::visibility_bits_bytes(self.capacity) / 4;
        let offset = u32::try_from(u64::from(at.list) * words).unwrap_or(u32::MAX);
        context.push_constant_bytes(&offset.to_le_bytes());
        context.draw(24, self.capacity);
    }
}

/// The game frame whose [`Bob`] wave the passes sharing it apply: the host sets it before each
/// frame (a per-frame pass parameter), so the engine's frame and a reference renderer of the
/// same scene bob alike, however often each graph runs.
#[derive(Clone, Debug, Default)]
pub struct BobClock(Arc<AtomicU64>);

impl BobClock {
    /// The wave of game frame `frame` from now on.
    pub fn set(&self, frame: u64) {
        self.0.store(frame, Ordering::Relaxed);
    }

    /// The frame whose wave is applied.
    pub fn frame(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Moves every object up and down on the GPU: slot `s` sits [`bob_offset`] above the place the
/// host gave it, whether the host re-uploads the object every frame or left it since its
/// spawn (the pass remembers, per slot, what it wrote; see `bob.comp.glsl`).
pub struct Bob {
    pipeline: ComputePipeline,
    capacity: u32,
    clock: BobClock,
}

/// The history buffer of what [`Bob`] wrote and applied per slot.
const BOB_STATE: &str = "bob state";

/// How far [`Bob`] moves slot `slot` up in game frame `frame`, as its shader computes it.
pub fn bob_offset(slot: u32, frame: u64) -> f32 {
    let angle = bob_phase(frame) + (slot % 64) as f32 * BOB_SPREAD;
    BOB_HEIGHT * angle.sin()
}

/// The wave's phase in frame `frame`, reduced to one turn on the host.
fn bob_phase(frame: u64) -> f32 {
    (frame as f64 * f64::from(BOB_SPEED)).rem_euclid(std::f64::consts::TAU) as f32
}

impl Bob {
    /// The pass for up to `capacity` slots, bobbing as `clock` says.
    pub fn new(device: &Arc<GpuDevice>, capacity: u32, clock: BobClock) -> Result<Self> {
        let kinds = [
            BindingKind::StorageBuffer,
            BindingKind::StorageBuffer,
            BindingKind::StorageBuffer,
            BindingKind::UniformBuffer,
        ];
        let pipeline = ComputePipeline::new(device, "bob", shaders::BOB_COMP.words(), &kinds, 16)?;
        Ok(Bob { pipeline, capacity: capacity.max(1), clock })
    }
}

/// What [`Bob`] declared: the transforms it moves, last frame's state it reads, this frame's
/// state it writes, the `view` it reads.
pub struct BobHandles {
    transforms: BufferWrite,
    last: BufferRead,
    state: BufferWrite,
    view: BufferRead,
}

impl TypedPass for Bob {
    type Handles = BobHandles;

    fn name(&self) -> &str {
        "bob"
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let (transforms, view) = (registry.buffer(OBJECT_TRANSFORMS), registry.buffer(VIEW));
        // The engine's transforms are read-only to users' passes: moving objects on the GPU
        // is the audited exception, asked for here (and logged once by the graph).
        registry.claim_engine_write(transforms);
        let transforms = registry.read_write_storage_buffer(transforms, COMPUTE);
        let last = registry.history_buffer(BOB_STATE);
        let last = registry.read_storage_buffer(last, COMPUTE);
        let state = registry.create_buffer(BOB_STATE, BufferDesc { size: u64::from(self.capacity) * 8 });
        let state = registry.write_storage_buffer(state, COMPUTE);
        BobHandles { transforms, last, state, view: registry.read_uniform_buffer(view, COMPUTE) }
    }

    fn execute(&mut self, handles: &BobHandles, context: &mut ExecuteContext<'_>) {
        let transform_slots = (context.buffer(&handles.transforms).size / OBJECT_TRANSFORM_BYTES) as u32;
        let slots = self.capacity.min(transform_slots);
        let bindings = [
            Binding::buffer(&handles.transforms),
            Binding::buffer(handles.last),
            Binding::buffer(&handles.state),
            Binding::buffer(handles.view),
        ];
        context.bind_compute(&self.pipeline, &bindings);
        let mut constants = floats_to_bytes(&[BOB_HEIGHT, bob_phase(self.clock.frame()), BOB_SPREAD]);
        constants.extend_from_slice(&slots.to_le_bytes());
        context.push_constant_bytes(&constants);
        context.dispatch(slots.div_ceil(64), 1, 1);
    }
}

/// Adds the passes chosen to a graph of the engine's frame, at their insertion points.
/// `capacity` is the most slots [`Bob`] and [`DebugBoxes`] cover; `clock` drives [`Bob`].
pub fn add_frame_passes(
    graph: &mut render_graph::RenderGraph,
    choice: &FramePassChoice,
    capacity: u32,
    clock: &BobClock,
) -> Result<()> {
    add_switched_frame_passes(graph, choice, capacity, clock, &PostSwitch::default())
}

/// [`add_frame_passes`], the post-processes drawing while `post` is on.
pub fn add_switched_frame_passes(
    graph: &mut render_graph::RenderGraph,
    choice: &FramePassChoice,
    capacity: u32,
    clock: &BobClock,
    post: &PostSwitch,
) -> Result<()> {
    let device = Arc::clone(graph.device());
    if choice.bob {
        graph.add_typed_pass_at(points::BEFORE_CULL, Bob::new(&device, capacity, clock.clone())?)?;
    }
    if choice.fog {
        let fog = DepthPost::fog(&device, FOG_COLOR, FOG_DENSITY)?.switched(post);
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, PerView::new(fog))?;
    }
    if choice.outline {
        let outline = DepthPost::outline(&device, OUTLINE_THRESHOLD)?.switched(post);
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, PerView::new(outline))?;
    }
    if choice.boxes {
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, PerView::new(DebugBoxes::new(&device, capacity)?))?;
    }
    Ok(())
}

/// Which of the passes run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FramePassChoice {
    /// [`Bob`] before the cull.
    pub bob: bool,
    /// [`DepthPost::fog`] after the geometry.
    pub fog: bool,
    /// [`DepthPost::outline`] after the fog.
    pub outline: bool,
    /// [`DebugBoxes`] last.
    pub boxes: bool,
}

impl FramePassChoice {
    /// The choice of command-line options: `post` names post-processes (`fog`, `outline`).
    pub fn parse(post: &[String], boxes: bool, bob: bool) -> std::result::Result<FramePassChoice, String> {
        if let Some(unknown) = post.iter().find(|post| !["fog", "outline"].contains(&post.as_str())) {
            return Err(format!("unknown post-process `{unknown}` (fog, outline)"));
        }
        let has = |name: &str| post.iter().any(|post| post == name);
        Ok(FramePassChoice { bob, fog: has("fog"), outline: has("outline"), boxes })
    }

    /// Whether any pass is chosen.
    pub fn any(&self) -> bool {
        self.bob || self.fog || self.outline || self.boxes
    }
}

/// The fog's colour.
pub const FOG_COLOR: [f32; 3] = [0.7, 0.75, 0.8];
/// The fog's density per metre.
pub const FOG_DENSITY: f32 = 0.04;
/// The outline's depth-jump threshold.
pub const OUTLINE_THRESHOLD: f32 = 0.2;
/// [`Bob`]'s height.
pub const BOB_HEIGHT: f32 = 1.5;
/// [`Bob`]'s speed (radians per frame).
pub const BOB_SPEED: f32 = 0.3;
/// [`Bob`]'s phase step from one slot to the next (radians).
pub const BOB_SPREAD: f32 = 0.37;
