//! The per-mip chain graph of the declared-mip-access tests: `upload texels` and `seed mip
//! 0` copy this frame's texels into mip 0, `reduce mip k` reads mip `k - 1` and writes mip `k`
//! (k = 1..=LAST, `hiz_reduce.comp`: a min reduction), and `gather mips` samples mips
//! `0..=LAST` through the view of that declared range into an imported readback buffer.

use std::sync::Arc;

use render_graph::{
    vk, Access, Binding, BindingKind, BufferDesc, BufferRead, BufferWrite, ComputePipeline, ExecuteContext, GpuDevice,
    GpuImage, GraphError, ImageDesc, ImageInfo, ImageRead, ImageSize, ImageWrite, MipRange, PrepareContext,
    ReadbackBuffer, Registry, RenderGraph, ShaderStage, TypedPass,
};

const COMPUTE: ShaderStage = ShaderStage::Compute;
/// The image reduced mip by mip.
pub const PYRAMID: &str = "pyramid";
const TEXELS: &str = "texels";
const GATHERED: &str = "gathered";
/// Mip 0 of the pyramid: odd on both axes, so every reduction meets an odd edge.
pub const BASE: vk::Extent2D = vk::Extent2D { width: 37, height: 23 };
/// Mips of the whole chain of `BASE` (37x23 down to 1x1).
const CHAIN: u32 = 6;
/// The chain passes write mips `1..=LAST`; mip `CHAIN - 1` is never touched.
pub const LAST: u32 = 4;

fn mip_extent(mip: u32) -> vk::Extent2D {
    vk::Extent2D { width: (BASE.width >> mip).max(1), height: (BASE.height >> mip).max(1) }
}

/// Texel `index` of mip 0 in frame `frame`: hashed values in [0, 1), exact in f32.
fn base_texel(index: u32, frame: u64) -> f32 {
    let hash = shaders::probe_hash(index ^ (frame as u32).wrapping_mul(0x9E37_79B9));
    (hash >> 8) as f32 / (1 << 24) as f32
}

/// Mip 0 of frame `frame`.
pub fn base_texels(frame: u64) -> Vec<f32> {
    (0..BASE.width * BASE.height).map(|index| base_texel(index, frame)).collect()
}

/// The CPU twin of `hiz_reduce.comp`: each texel keeps the minimum of the source texels it
/// covers, the last texel of an odd axis covering the last source texel too.
fn reduce(source: &[f32], size: vk::Extent2D) -> Vec<f32> {
    let target = vk::Extent2D { width: (size.width / 2).max(1), height: (size.height / 2).max(1) };
    let mut out = Vec::with_capacity((target.width * target.height) as usize);
    for y in 0..target.height {
        for x in 0..target.width {
            let end_x = if x == target.width - 1 { size.width } else { (2 * x + 2).min(size.width) };
            let end_y = if y == target.height - 1 { size.height } else { (2 * y + 2).min(size.height) };
            let mut farthest = f32::INFINITY;
            for source_y in 2 * y..end_y {
                for source_x in 2 * x..end_x {
                    farthest = farthest.min(source[(source_y * size.width + source_x) as usize]);
                }
            }
            out.push(farthest);
        }
    }
    out
}

/// What the gather pass must write for frame `frame`: the level count, then mips `0..=LAST`.
pub fn expected_gather(frame: u64) -> Vec<f32> {
    let mut mip = base_texels(frame);
    let mut expected = vec![(LAST + 1) as f32];
    expected.extend_from_slice(&mip);
    for level in 1..=LAST {
        mip = reduce(&mip, mip_extent(level - 1));
        expected.extend_from_slice(&mip);
    }
    expected
}

fn gather_words() -> u64 {
    1 + (0..=LAST).map(|mip| u64::from(mip_extent(mip).width * mip_extent(mip).height)).sum::<u64>()
}

/// Uploads this frame's mip 0 texels into a buffer (through bytes it keeps: no allocation
/// per frame).
struct UploadTexels {
    bytes: Vec<u8>,
}

impl TypedPass for UploadTexels {
    type Handles = BufferWrite;
    fn name(&self) -> &str {
        "upload texels"
    }
    fn register(&mut self, registry: &mut Registry) -> BufferWrite {
        let texels = registry.create_buffer(TEXELS, BufferDesc { size: u64::from(BASE.width * BASE.height) * 4 });
        registry.write_buffer(texels, Access::TransferWrite)
    }
    fn prepare(&mut self, texels: &BufferWrite, context: &mut PrepareContext) {
        let frame = context.frame_index();
        self.bytes.clear();
        self.bytes.extend((0..BASE.width * BASE.height).flat_map(|index| base_texel(index, frame).to_le_bytes()));
        if let Err(error) = context.upload_buffer(texels, 0, &self.bytes) {
            context.fail(error);
        }
    }
}

/// Copies the texels into mip 0 only (a transfer write of one mip); creates the pyramid
/// unless it is imported.
struct SeedMip0 {
    create: bool,
}

impl TypedPass for SeedMip0 {
    /// The texels, and mip 0 of the pyramid.
    type Handles = (BufferRead, ImageWrite);
    fn name(&self) -> &str {
        "seed mip 0"
    }
    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let texels = registry.buffer(TEXELS);
        let texels = registry.read_buffer(texels, Access::TransferRead);
        let pyramid = if self.create {
            let size = ImageSize::Absolute { width: BASE.width, height: BASE.height };
            let desc = ImageDesc::new(vk::Format::R32_SFLOAT, size).with_mips(ImageDesc::FULL_MIP_CHAIN);
            registry.create_image(PYRAMID, desc)
        } else {
            registry.image(PYRAMID)
        };
        (texels, registry.write_image_mips(pyramid, MipRange::level(0), Access::TransferWrite))
    }
    fn execute(&mut self, (texels, pyramid): &Self::Handles, context: &mut ExecuteContext) {
        let image = context.image(pyramid);
        let texels = context.buffer(*texels);
        let layout = context.image_layout_mips(pyramid, MipRange::level(0)).expect("mip 0 is declared");
        let region = vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 1,
            })
            .image_extent(vk::Extent3D { width: BASE.width, height: BASE.height, depth: 1 });
        // SAFETY: recording outside rendering; the graph put mip 0 in TRANSFER_DST and made
        // the buffer readable by transfers (both declared); the copy fits both.
        unsafe {
            context.device().cmd_copy_buffer_to_image(
                context.command_buffer(),
                texels.buffer,
                image.image,
                layout,
                &[region],
            )
        };
    }
}

/// Reads mip `mip - 1` and writes mip `mip`, both declared per mip.
struct ReduceMip {
    name: String,
    mip: u32,
    pipeline: Arc<ComputePipeline>,
}

impl TypedPass for ReduceMip {
    /// Mip `mip - 1`, read; mip `mip`, written.
    type Handles = (ImageRead, ImageWrite);
    fn name(&self) -> &str {
        &self.name
    }
    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let pyramid = registry.image(PYRAMID);
        (
            registry.read_storage_image_mip(pyramid, self.mip - 1, COMPUTE),
            registry.write_storage_image_mip(pyramid, self.mip, COMPUTE),
        )
    }
    fn execute(&mut self, (source, target): &Self::Handles, context: &mut ExecuteContext) {
        // Both binding forms of one level.
        let bindings =
            [Binding::image_mip(*source, self.mip - 1), Binding::image_mips(target, MipRange::level(self.mip))];
        context.bind_compute(&self.pipeline, &bindings);
        let extent = mip_extent(self.mip);
        context.dispatch(extent.width.div_ceil(8), extent.height.div_ceil(8), 1);
    }
}

/// The whole chain in one pass of `LAST` steps: step `k - 1` reads mip `k - 1` and writes
/// mip `k`; the graph records the barriers between steps.
struct ReduceSteps {
    pipeline: Arc<ComputePipeline>,
}

impl TypedPass for ReduceSteps {
    /// Per step: the mip it reads and the mip it writes.
    type Handles = Vec<(ImageRead, ImageWrite)>;
    fn name(&self) -> &str {
        REDUCE_STEPS
    }
    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let pyramid = registry.image(PYRAMID);
        let mut steps = Vec::new();
        for mip in 1..=LAST {
            if mip > 1 {
                registry.next_step();
            }
            let source = registry.read_storage_image_mip(pyramid, mip - 1, COMPUTE);
            steps.push((source, registry.write_storage_image_mip(pyramid, mip, COMPUTE)));
        }
        steps
    }
    fn execute(&mut self, steps: &Self::Handles, context: &mut ExecuteContext) {
        for (mip, (source, target)) in (1..=LAST).zip(steps) {
            if mip > 1 {
                context.next_step();
            }
            let bindings = [Binding::image_mip(*source, mip - 1), Binding::image_mip(target, mip)];
            context.bind_compute(&self.pipeline, &bindings);
            let extent = mip_extent(mip);
            context.dispatch(extent.width.div_ceil(8), extent.height.div_ceil(8), 1);
        }
    }
}

/// Name of the one-pass reduction of [`chain_graph`] with `one_pass`.
pub const REDUCE_STEPS: &str = "reduce mips in steps";

/// Samples mips `0..=LAST` through the view of that declared range into the readback buffer.
struct GatherMips {
    pipeline: Arc<ComputePipeline>,
}

impl TypedPass for GatherMips {
    /// The pyramid's mips, and the buffer they are gathered into.
    type Handles = (ImageRead, BufferWrite);
    fn name(&self) -> &str {
        "gather mips"
    }
    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let pyramid = registry.image(PYRAMID);
        let gathered = registry.buffer(GATHERED);
        (
            registry.read_sampled_image_mips(pyramid, 0..LAST + 1, COMPUTE),
            registry.write_storage_buffer(gathered, COMPUTE),
        )
    }
    fn execute(&mut self, (pyramid, gathered): &Self::Handles, context: &mut ExecuteContext) {
        let pyramid = *pyramid;
        let mips = MipRange::from(0..LAST + 1);
        if context.frame_index() == 0 {
            // (Errors allocate their messages: checked once, off the steady state.)
            let view = context.image_view_mips(pyramid, mips).expect("the declared range has a view");
            assert_ne!(view, context.image(pyramid).view, "a view of 5 of 6 mips is not the whole image's");
            assert_eq!(context.image_view_mips(pyramid, mips).expect("again"), view, "the view is cached");
            let undeclared = context.image_view_mips(pyramid, 0..3);
            assert!(matches!(undeclared, Err(GraphError::InvalidAccess { .. })), "{undeclared:?}");
            let outside = context.image_view_mips(pyramid, MipRange::level(LAST + 1));
            assert!(matches!(outside, Err(GraphError::InvalidAccess { .. })), "{outside:?}");
        }
        let bindings = [Binding::image_mips(pyramid, mips), Binding::buffer(gathered)];
        context.bind_compute(&self.pipeline, &bindings);
        context.dispatch((BASE.width * BASE.height).div_ceil(64), 1, 1);
    }
}

fn gather_pipeline(device: &Arc<GpuDevice>) -> ComputePipeline {
    let bytes = include_bytes!("../shaders/mip_gather.comp.spv");
    let shader = shaders::Shader::from_bytes("mip_gather.comp", shaders::Stage::Compute, bytes).expect("valid SPIR-V");
    let bindings = [BindingKind::SampledImage, BindingKind::StorageBuffer];
    ComputePipeline::new(device, "mip gather", shader.words(), &bindings, 0).expect("the pipeline builds")
}

/// Builds the chain graph; `imported`: the pyramid is imported (kept across frames) instead
/// of created by the graph (transient); `one_pass`: one pass reduces the chain in steps
/// instead of one pass per mip.
pub fn chain_graph(device: &Arc<GpuDevice>, imported: bool, one_pass: bool) -> (RenderGraph, ReadbackBuffer) {
    let reduce = Arc::new(
        ComputePipeline::new(
            device,
            "reduce",
            shaders::HIZ_REDUCE_COMP.words(),
            &[BindingKind::StorageImage, BindingKind::StorageImage],
            0,
        )
        .expect("the pipeline builds"),
    );
    let mut graph = RenderGraph::new(Arc::clone(device), BASE).expect("graph creates");
    if imported {
        let usage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
        let info = ImageInfo { format: vk::Format::R32_SFLOAT, extent: BASE, mip_levels: CHAIN, usage };
        graph.import_image(PYRAMID, Arc::new(GpuImage::new(device, PYRAMID, info).expect("image creates")));
    }
    let gathered = ReadbackBuffer::new(device, GATHERED, gather_words() * 4).expect("readback creates");
    graph.import_buffer(GATHERED, gathered.shared());
    graph.add_typed_pass(UploadTexels { bytes: Vec::new() });
    graph.add_typed_pass(SeedMip0 { create: !imported });
    if one_pass {
        graph.add_typed_pass(ReduceSteps { pipeline: Arc::clone(&reduce) });
    }
    for mip in (1..=LAST).filter(|_| !one_pass) {
        graph.add_typed_pass(ReduceMip { name: format!("reduce mip {mip}"), mip, pipeline: Arc::clone(&reduce) });
    }
    graph.add_typed_pass(GatherMips { pipeline: Arc::new(gather_pipeline(device)) });
    (graph, gathered)
}
