//! The three passes a user writes first, inside the engine's own frame, each with the CPU
//! computation it is checked against (`frame_passes` sample, and its test):
//!
//! - [`DepthPost`]: fog by depth ([`DepthPost::fog`]) and outlines where the depth jumps
//!   ([`DepthPost::outline`]), compute passes at [`points::AFTER_GEOMETRY`] that read and
//!   write the engine's `color` in place and sample its `depth_prepass`;
//! - [`DebugBoxes`]: every object's world box as lines, coloured by the GPU's visibility bits,
//!   read from the engine's buffers on the GPU ([`points::AFTER_GEOMETRY`], GPU culling);
//! - [`Bob`]: a compute pass at [`points::BEFORE_CULL`] that moves every object on the GPU;
//!   the cull and the draw see the new places in the same frame.
//!
//! Each reads the frame's camera from the engine's `view` uniform.

use std::sync::Arc;

use render_graph::{
    vk, AttachmentLoad, Binding, BindingKind, BufferHandle, ComputePipeline, ExecuteContext, GpuDevice,
    GraphicsPipeline, GraphicsPipelineDesc, ImageHandle, Registry, Result, ShaderStage, TypedPass,
};
use renderer::{points, COLOR, COLOR_FORMAT, DEPTH_PREPASS, OBJECT_RECORDS, OBJECT_TRANSFORMS, VIEW, VISIBILITY_BITS};

const COMPUTE: ShaderStage = ShaderStage::Compute;

fn floats_to_bytes(floats: &[f32]) -> Vec<u8> {
    floats.iter().flat_map(|value| value.to_le_bytes()).collect()
}

/// A compute post-process on `color`, in place, from `depth_prepass` and `view`.
pub struct DepthPost {
    name: &'static str,
    pipeline: ComputePipeline,
    constants: Vec<u8>,
}

impl DepthPost {
    fn new(device: &Arc<GpuDevice>, name: &'static str, shader: &shaders::Shader, constants: [f32; 5]) -> Result<Self> {
        let kinds = [BindingKind::StorageImage, BindingKind::SampledImage, BindingKind::UniformBuffer];
        let pipeline = ComputePipeline::new(device, name, shader.words(), &kinds, 20)?;
        Ok(DepthPost { name, pipeline, constants: floats_to_bytes(&constants) })
    }

    /// Fog of `fog` (linear RGB) thickening by `density` per metre.
    pub fn fog(device: &Arc<GpuDevice>, fog: [f32; 3], density: f32) -> Result<Self> {
        Self::new(device, "fog", &shaders::FOG_COMP, [fog[0], fog[1], fog[2], 1.0, density])
    }

    /// Black lines where the depth jumps by more than `threshold` of the nearer distance.
    pub fn outline(device: &Arc<GpuDevice>, threshold: f32) -> Result<Self> {
        Self::new(device, "outline", &shaders::OUTLINE_COMP, [0.0, 0.0, 0.0, 1.0, threshold])
    }
}

impl TypedPass for DepthPost {
    type Handles = (ImageHandle, ImageHandle, BufferHandle);

    fn name(&self) -> &str {
        self.name
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let (color, depth, view) = (registry.image(COLOR), registry.image(DEPTH_PREPASS), registry.buffer(VIEW));
        let color = registry.read_write_storage_image(color, COMPUTE);
        let depth = registry.sample(depth, COMPUTE);
        (color, depth, registry.read_uniform_buffer(view, COMPUTE))
    }

    fn execute(&mut self, &(color, depth, view): &Self::Handles, context: &mut ExecuteContext<'_>) {
        context.bind_compute(&self.pipeline, &[Binding::Image(color), Binding::Image(depth), Binding::Buffer(view)]);
        context.push_constant_bytes(&self.constants);
        let extent = context.output_extent();
        context.dispatch(extent.width.div_ceil(8), extent.height.div_ceil(8), 1);
    }
}

/// Every object's world box as green (visible on the GPU this frame) or red lines.
pub struct DebugBoxes {
    pipeline: GraphicsPipeline,
    capacity: u32,
}

impl DebugBoxes {
    /// The pass for a scene of `capacity` slots.
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
            push_constant_bytes: 0,
            color_formats: &[COLOR_FORMAT],
            depth: None,
            topology: vk::PrimitiveTopology::LINE_LIST,
            cull_mode: vk::CullModeFlags::NONE,
        };
        Ok(DebugBoxes { pipeline: GraphicsPipeline::new(device, "debug boxes", &desc)?, capacity })
    }
}

impl TypedPass for DebugBoxes {
    type Handles = [BufferHandle; 4];

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

    fn record_draw(&mut self, &handles: &Self::Handles, context: &mut ExecuteContext<'_>) {
        context.bind_graphics(&self.pipeline, &handles.map(Binding::Buffer));
        context.draw(24, self.capacity);
    }
}

/// Moves every object up and down on the GPU: `height * sin(frame * speed)` from where the host
/// put it after graph frame `frame` ([`bob_offset`]), by adding each frame's change.
pub struct Bob {
    pipeline: ComputePipeline,
    capacity: u32,
    height: f32,
    speed: f32,
}

/// Where [`Bob`] has moved an object the host left still, after graph frame `frame`.
pub fn bob_offset(frame: u64, height: f32, speed: f32) -> f32 {
    height * ((frame + 1) as f32 * speed).sin()
}

impl Bob {
    /// The pass for a scene of `capacity` slots.
    pub fn new(device: &Arc<GpuDevice>, capacity: u32, height: f32, speed: f32) -> Result<Self> {
        let kinds = [BindingKind::StorageBuffer, BindingKind::UniformBuffer];
        let pipeline = ComputePipeline::new(device, "bob", shaders::MOVE_OBJECTS_COMP.words(), &kinds, 16)?;
        Ok(Bob { pipeline, capacity, height, speed })
    }
}

impl TypedPass for Bob {
    type Handles = (BufferHandle, BufferHandle);

    fn name(&self) -> &str {
        "bob"
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let (transforms, view) = (registry.buffer(OBJECT_TRANSFORMS), registry.buffer(VIEW));
        let transforms = registry.read_write_storage_buffer(transforms, COMPUTE);
        (transforms, registry.read_uniform_buffer(view, COMPUTE))
    }

    fn execute(&mut self, &(transforms, view): &Self::Handles, context: &mut ExecuteContext<'_>) {
        let frame = context.frame_index();
        let step = bob_offset(frame, self.height, self.speed)
            - frame.checked_sub(1).map_or(0.0, |last| bob_offset(last, self.height, self.speed));
        context.bind_compute(&self.pipeline, &[Binding::Buffer(transforms), Binding::Buffer(view)]);
        context.push_constant_bytes(&floats_to_bytes(&[0.0, step, 0.0, 0.0]));
        context.dispatch(self.capacity.div_ceil(64), 1, 1);
    }
}

/// Adds the passes chosen to a graph of the engine's frame, at their insertion points.
pub fn add_frame_passes(graph: &mut render_graph::RenderGraph, choice: &FramePassChoice, capacity: u32) -> Result<()> {
    let device = Arc::clone(graph.device());
    if choice.bob {
        graph.add_typed_pass_at(points::BEFORE_CULL, Bob::new(&device, capacity, BOB_HEIGHT, BOB_SPEED)?)?;
    }
    if choice.fog {
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, DepthPost::fog(&device, FOG_COLOR, FOG_DENSITY)?)?;
    }
    if choice.outline {
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, DepthPost::outline(&device, OUTLINE_THRESHOLD)?)?;
    }
    if choice.boxes {
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, DebugBoxes::new(&device, capacity)?)?;
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

/// The distance along the view of a reversed-Z depth, as `view_linear_depth` in `view.h`.
pub fn linear_depth(depth: f32, near: f32, far: f32) -> f32 {
    if far.is_infinite() {
        near / depth.max(1e-30)
    } else {
        near * far / (near + depth * (far - near)).max(1e-30)
    }
}

/// What [`DepthPost::fog`] then (when `outline`) [`DepthPost::outline`] make of `color`
/// (RGBA8) over `depth`, computed on the CPU.
pub fn post_reference(
    color: &[u8],
    depth: &[f32],
    width: usize,
    planes: (f32, f32),
    fog: bool,
    outline: bool,
) -> Vec<u8> {
    let along: Vec<f32> = depth.iter().map(|&depth| linear_depth(depth, planes.0, planes.1)).collect();
    let mut out = color.to_vec();
    for (index, texel) in out.chunks_exact_mut(4).enumerate() {
        if fog {
            let amount = 1.0 - (-FOG_DENSITY * along[index]).exp();
            for (channel, fog_channel) in texel.iter_mut().zip(FOG_COLOR) {
                let seen = f32::from(*channel) / 255.0;
                *channel = ((seen + (fog_channel - seen) * amount).clamp(0.0, 1.0) * 255.0).round() as u8;
            }
        }
        let (x, y, height) = (index % width, index / width, along.len() / width);
        let neighbour = |dx: isize, dy: isize| {
            let (nx, ny) =
                ((x as isize + dx).clamp(0, width as isize - 1), (y as isize + dy).clamp(0, height as isize - 1));
            along[ny as usize * width + nx as usize]
        };
        let here = along[index];
        let edge = [(1, 0), (-1, 0), (0, 1), (0, -1)].iter().any(|&(dx, dy)| {
            let there = neighbour(dx, dy);
            (there - here).abs() > OUTLINE_THRESHOLD * here.min(there)
        });
        if outline && edge {
            texel.copy_from_slice(&[0, 0, 0, 255]);
        }
    }
    out
}

/// Whether texel `a` and `b` differ by at most `tolerance` in every channel.
pub fn close(a: &[u8], b: &[u8], tolerance: u8) -> bool {
    a.iter().zip(b).all(|(&a, &b)| a.abs_diff(b) <= tolerance)
}
