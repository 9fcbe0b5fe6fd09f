//! The GPU depth pyramid equals the CPU reduction of the same depth values, exactly, at
//! sizes with odd edges; validation (synchronization included) stays silent.

use std::sync::Arc;

use render_graph::readback::{image_readback_buffer, ReadbackPass};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{
    vk, AttachmentLoad, BufferWrite, ExecuteContext, GpuDevice, GraphicsPipeline, GraphicsPipelineDesc, ImageDesc,
    ImageRead, ImageSize, ImageWrite, ReadbackBuffer, Registry, RenderGraph, TypedPass,
};
use renderer::{reduce_depth_pyramid, HiZBuildPass, HIZ_DEPTH};
use renderer::{DEPTH_FORMAT, DEPTH_PREPASS};

/// Writes the hashed depth pattern of `depth_pattern.frag` into `depth_prepass`.
struct DepthPatternPass {
    pipeline: GraphicsPipeline,
    seed: u32,
}

impl TypedPass for DepthPatternPass {
    /// The depth attachment (the graph records its writes).
    type Handles = ();

    fn name(&self) -> &str {
        "depth pattern"
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        let depth = registry.create_image(DEPTH_PREPASS, ImageDesc::new(DEPTH_FORMAT, ImageSize::OUTPUT));
        registry.depth_attachment(depth, AttachmentLoad::ClearDepth(0.0));
    }

    fn record_draw(&mut self, _: &(), context: &mut ExecuteContext<'_>) {
        context.bind_graphics(&self.pipeline, &[]);
        context.push_constants(&[self.seed]);
        context.draw(3, 1);
    }
}

/// Copies every mip of `hiz_depth` into an imported buffer, mip after mip, rows packed.
struct PyramidReadbackPass;

impl TypedPass for PyramidReadbackPass {
    /// The pyramid, and the buffer it is copied into.
    type Handles = (ImageRead, BufferWrite);

    fn name(&self) -> &str {
        "pyramid readback"
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let pyramid = registry.image(HIZ_DEPTH);
        let target = registry.buffer("pyramid readback");
        (
            registry.read_image(pyramid, render_graph::Access::TransferRead),
            registry.write_buffer(target, render_graph::Access::TransferWrite),
        )
    }

    fn execute(&mut self, &(pyramid, ref target): &Self::Handles, context: &mut ExecuteContext<'_>) {
        let image = context.image(pyramid);
        let target = context.buffer(target);
        let mut offset = 0;
        let mut regions = Vec::new();
        for mip in 0..image.mip_levels {
            let extent = image.mip_extent(mip);
            regions.push(
                vk::BufferImageCopy::default()
                    .buffer_offset(offset)
                    .image_subresource(vk::ImageSubresourceLayers {
                        aspect_mask: vk::ImageAspectFlags::COLOR,
                        mip_level: mip,
                        base_array_layer: 0,
                        layer_count: 1,
                    })
                    .image_extent(vk::Extent3D { width: extent.width, height: extent.height, depth: 1 }),
            );
            offset += u64::from(extent.width * extent.height) * 4;
        }
        assert!(offset <= target.size, "the pyramid readback buffer holds every mip");
        let layout = context.image_layout(pyramid);
        // SAFETY: recording outside rendering; the graph put the image in the transfer-source
        // layout and made the buffer a transfer destination (both declared); regions fit.
        unsafe {
            context.device().cmd_copy_image_to_buffer(
                context.command_buffer(),
                image.image,
                layout,
                target.buffer,
                &regions,
            )
        };
    }
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|word| f32::from_le_bytes([word[0], word[1], word[2], word[3]])).collect()
}

fn pattern_pipeline(device: &Arc<GpuDevice>) -> GraphicsPipeline {
    let desc = GraphicsPipelineDesc {
        vertex: shaders::FULLSCREEN_VERT.words(),
        fragment: shaders::DEPTH_PATTERN_FRAG.words(),
        bindings: &[],
        push_constant_bytes: 4,
        color_formats: &[],
        depth: Some((DEPTH_FORMAT, vk::CompareOp::ALWAYS, true)),
        topology: vk::PrimitiveTopology::TRIANGLE_LIST,
        cull_mode: vk::CullModeFlags::NONE,
        blend: render_graph::ColorBlend::Replace,
    };
    GraphicsPipeline::new(device, "depth pattern", &desc).expect("the pattern pipeline builds")
}

/// Builds the pyramid of a pattern at `width` x `height` on the GPU for two frames (the
/// second reuses the graph) and compares every mip with the CPU reduction of the depth the
/// GPU read back.
fn pyramid_matches_the_cpu(device: &Arc<GpuDevice>, width: u32, height: u32) {
    let extent = vk::Extent2D { width, height };
    let mut graph = RenderGraph::new(Arc::clone(device), extent).expect("graph");
    let depth_readback = image_readback_buffer(device, "depth readback", extent).expect("depth readback");
    let texels: u64 = (0..32).map(|mip| u64::from((width >> mip).max(1) * (height >> mip).max(1))).sum();
    let pyramid_readback = ReadbackBuffer::new(device, "pyramid readback", texels * 4).expect("pyramid readback");
    graph.import_buffer("depth readback", depth_readback.shared());
    graph.import_buffer("pyramid readback", pyramid_readback.shared());
    graph.add_typed_pass(DepthPatternPass { pipeline: pattern_pipeline(device), seed: 1 });
    graph.add_typed_pass(HiZBuildPass::new(device).expect("hi-z pass"));
    graph.add_typed_pass(ReadbackPass::with_names(DEPTH_PREPASS, "depth readback"));
    graph.add_typed_pass(PyramidReadbackPass);
    for frame in 0..2 {
        graph.execute_frame().expect("frame");
        graph.wait_idle().expect("idle");
        let depth = floats(depth_readback.read().expect("depth"));
        assert_eq!(depth.len(), (width * height) as usize);
        assert!(depth.iter().any(|&value| value > 0.0 && value < 1.0), "the pattern wrote depths");
        let expected = reduce_depth_pyramid(&depth, width as usize, height as usize);
        let gpu = floats(pyramid_readback.read().expect("pyramid"));
        let mut offset = 0;
        for (mip, expected) in expected.iter().enumerate() {
            let got = &gpu[offset..offset + expected.len()];
            let differing = got.iter().zip(expected).position(|(got, expected)| got.to_bits() != expected.to_bits());
            if let Some(texel) = differing {
                panic!(
                    "{width}x{height} frame {frame}: mip {mip} texel {texel} is {} on the GPU, {} on the CPU",
                    got[texel], expected[texel]
                );
            }
            offset += expected.len();
        }
    }
    drop(graph);
    assert_no_validation_messages(device);
}

#[test]
fn the_pyramid_equals_the_cpu_reduction_at_odd_sizes() {
    let Some(device) = gpu_test_context() else { return };
    for (width, height) in [(1000, 563), (7, 3), (1, 1)] {
        pyramid_matches_the_cpu(&device, width, height);
    }
}

/// Calls `mip_barrier` on `hiz_depth` declared a storage write (not read-write): a misuse
/// the types cannot see (a sampled image's read handle does not even compile there).
struct MisusedMipBarrier;

impl TypedPass for MisusedMipBarrier {
    type Handles = ImageWrite;

    fn name(&self) -> &str {
        "misused mip barrier"
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> ImageWrite {
        let pyramid = registry.image(HIZ_DEPTH);
        registry.side_effect();
        registry.write_storage_image(pyramid, render_graph::ShaderStage::Compute)
    }

    fn execute(&mut self, pyramid: &ImageWrite, context: &mut ExecuteContext<'_>) {
        context.mip_barrier(pyramid, 0);
    }
}

#[test]
fn a_mip_barrier_on_an_image_not_declared_read_write_storage_is_an_error() {
    let Some(device) = gpu_test_context() else { return };
    let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 8, height: 8 }).expect("graph");
    graph.add_typed_pass(DepthPatternPass { pipeline: pattern_pipeline(&device), seed: 3 });
    graph.add_typed_pass(HiZBuildPass::new(&device).expect("hi-z pass"));
    graph.add_typed_pass(MisusedMipBarrier);
    let error = graph.execute_frame().expect_err("the misuse fails the frame");
    let text = error.to_string();
    assert!(text.contains("misused mip barrier") && text.contains(HIZ_DEPTH), "the error names pass and image: {text}");
    drop(graph);
    assert_no_validation_messages(&device);
}
