//! A compute, graphics and transfer chain of passes gives the right pixels.

use super::*;

struct PatternPass {
    pipeline: ComputePipeline,
}

impl TypedPass for PatternPass {
    type Handles = ImageWrite;
    fn name(&self) -> &str {
        "pattern"
    }
    fn register(&mut self, registry: &mut Registry) -> ImageWrite {
        let image = registry.create_image("pattern", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT));
        registry.write_storage_image(image, ShaderStage::Compute)
    }
    fn execute(&mut self, target: &ImageWrite, context: &mut ExecuteContext) {
        let extent = context.image(target).extent;
        context.bind_compute(&self.pipeline, &[Binding::image(target)]);
        context.push_constants(&[extent.width, extent.height]);
        context.dispatch(extent.width.div_ceil(8), extent.height.div_ceil(8), 1);
    }
}

struct InvertPass {
    pipeline: GraphicsPipeline,
}

impl TypedPass for InvertPass {
    type Handles = render_graph::ImageRead;
    fn name(&self) -> &str {
        "invert"
    }
    fn register(&mut self, registry: &mut Registry) -> render_graph::ImageRead {
        let source = registry.image("pattern");
        let color = registry.create_image("color", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT));
        registry.color_attachment(color, AttachmentLoad::ClearColor([0.0, 0.0, 0.0, 0.0]));
        registry.sample(source, ShaderStage::Fragment)
    }
    fn record_draw(&mut self, &source: &render_graph::ImageRead, context: &mut ExecuteContext) {
        context.bind_graphics(&self.pipeline, &[Binding::image(source)]);
        context.draw(3, 1);
    }
}

pub(super) struct CopyOutPass;

impl TypedPass for CopyOutPass {
    /// The color image, and the buffer it is copied into.
    type Handles = (render_graph::ImageRead, BufferWrite);
    fn name(&self) -> &str {
        "copy out"
    }
    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let color = registry.image("color");
        let target = registry.buffer("readback");
        (registry.read_image(color, Access::TransferRead), registry.write_buffer(target, Access::TransferWrite))
    }
    fn execute(&mut self, (color_handle, target): &Self::Handles, context: &mut ExecuteContext) {
        let color = context.image(*color_handle);
        let target = context.buffer(target);
        let region = vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 1,
            })
            .image_extent(vk::Extent3D { width: color.extent.width, height: color.extent.height, depth: 1 });
        let layout = context.image_layout(*color_handle);
        // SAFETY: recording; both resources were declared with transfer accesses, so the graph
        // placed the barriers and the image is in TRANSFER_SRC_OPTIMAL.
        unsafe {
            context.device().cmd_copy_image_to_buffer(
                context.command_buffer(),
                color.image,
                layout,
                target.buffer,
                &[region],
            )
        };
    }
}

fn invert_pipeline(device: &Arc<render_graph::GpuDevice>) -> GraphicsPipeline {
    GraphicsPipeline::new(
        device,
        "invert",
        &GraphicsPipelineDesc {
            vertex: shaders::FULLSCREEN_VERT.words(),
            fragment: shaders::INVERT_FRAG.words(),
            bindings: &[BindingKind::SampledImage],
            push_constant_bytes: 0,
            color_formats: &[vk::Format::R8G8B8A8_UNORM],
            depth: None,
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            cull_mode: vk::CullModeFlags::NONE,
            blend: render_graph::ColorBlend::Replace,
        },
    )
    .expect("invert pipeline builds")
}

#[test]
fn compute_graphics_transfer_chain_produces_the_right_pixels() {
    let Some(device) = gpu_test_context() else { return };
    let pattern =
        ComputePipeline::new(&device, "pattern", shaders::PATTERN_COMP.words(), &[BindingKind::StorageImage], 8)
            .expect("pattern pipeline builds");
    let readback = ReadbackBuffer::new(&device, "readback", u64::from(EXTENT.width * EXTENT.height * 4))
        .expect("readback allocates");
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    // Declared out of order on purpose: the compiler orders by dependencies.
    graph.add_typed_pass(CopyOutPass);
    graph.add_typed_pass(InvertPass { pipeline: invert_pipeline(&device) });
    graph.add_typed_pass(PatternPass { pipeline: pattern });
    graph.import_buffer("readback", readback.shared());
    for _ in 0..3 {
        graph.execute_frame().expect("frame runs");
    }
    graph.wait_idle().expect("frames finish");
    assert_eq!(graph.execution_order().expect("compiles"), ["pattern", "invert", "copy out"]);
    assert_eq!(graph.compile_count(), 1, "an unchanged graph compiles once");
    let pixels = readback.read().expect("readback maps");
    for y in 0..EXTENT.height {
        for x in 0..EXTENT.width {
            let at = ((y * EXTENT.width + x) * 4) as usize;
            let blue = if ((x / 8) + (y / 8)) % 2 == 0 { 255 } else { 0 };
            let expected = [255 - (x % 256) as u8, 255 - (y % 256) as u8, 255 - blue, 255];
            assert_eq!(&pixels[at..at + 4], &expected, "pixel ({x}, {y})");
        }
    }
    let stats = graph.stats();
    assert_eq!(stats.passes.len(), 3);
    if device.capabilities().timestamps {
        assert!(stats.passes.iter().all(|pass| pass.gpu_ms.is_some_and(|ms| ms >= 0.0)), "{stats:?}");
    }
    let dot = graph.to_dot().expect("compiles");
    assert!(dot.starts_with("digraph") && dot.contains("invert") && dot.contains("READ_ONLY_OPTIMAL"), "{dot}");
    drop(graph);
    assert_no_validation_messages(&device);
}
