//! Graphs compiled and run: aliased transients, culled passes, compile errors, history,
//! staged uploads, recompiles only on change, imported images and undeclared resources.

use super::chain::CopyOutPass;
use super::*;

#[test]
fn transient_images_with_disjoint_lifetimes_share_memory_and_stay_right() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    let passes = [
        probe("make first", vec![fill("first", ProbeKind::Image, 100)], &pipelines),
        probe("use first", vec![read("first", ProbeKind::Image)], &pipelines),
        probe("make second", vec![fill("second", ProbeKind::Image, 200)], &pipelines),
        probe("use second", vec![read("second", ProbeKind::Image)], &pipelines),
    ];
    let mut reports = Vec::new();
    for pass in passes {
        if let Some(report) = import_report(&device, &mut graph, &pass) {
            reports.push(report);
        }
        graph.add_typed_pass(pass);
    }
    for _ in 0..3 {
        graph.execute_frame().expect("frame runs");
    }
    graph.wait_idle().expect("frames finish");
    let alias = graph.alias_report().expect("compiles");
    assert_eq!(alias.shared, vec![vec!["first".to_owned(), "second".to_owned()]], "{alias:?}");
    assert!(alias.bytes_saved > 0, "{alias:?}");
    assert_eq!(graph.stats().aliased_bytes_saved, alias.bytes_saved);
    assert_eq!(reports[0].read_u32().expect("maps"), filled(100), "reader of `first`");
    assert_eq!(reports[1].read_u32().expect("maps"), filled(200), "reader of `second`");
    drop(graph);
    assert_no_validation_messages(&device);
}

#[test]
fn a_pass_whose_output_nobody_reads_is_not_executed() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    let unread = probe("unread", vec![fill("scratch", ProbeKind::Buffer, 1)], &pipelines);
    let unread_runs = Arc::clone(&unread.executed);
    let mut kept = probe("kept", vec![fill("scratch 2", ProbeKind::Buffer, 2)], &pipelines);
    kept.side_effect = true;
    let kept_runs = Arc::clone(&kept.executed);
    graph.add_typed_pass(unread);
    graph.add_typed_pass(kept);
    graph.execute_frame().expect("frame runs");
    graph.execute_frame().expect("frame runs");
    graph.wait_idle().expect("frames finish");
    assert_eq!(unread_runs.load(Ordering::Relaxed), 0, "the culled pass never executes");
    assert_eq!(kept_runs.load(Ordering::Relaxed), 2, "a pass with a side effect runs every frame");
    assert_eq!(graph.culled_passes().expect("compiles"), ["unread"]);
    drop(graph);
    assert_no_validation_messages(&device);
}

#[test]
fn cycles_and_missing_resources_are_clear_compile_errors() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));

    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    let mut first = probe("first", vec![fill("a", ProbeKind::Buffer, 1), read("b", ProbeKind::Buffer)], &pipelines);
    first.side_effect = true;
    let second = probe("second", vec![fill("b", ProbeKind::Buffer, 2), read("a", ProbeKind::Buffer)], &pipelines);
    let reports = [import_report(&device, &mut graph, &first), import_report(&device, &mut graph, &second)];
    graph.add_typed_pass(first);
    graph.add_typed_pass(second);
    let error = graph.execute_frame().expect_err("the passes form a cycle");
    assert!(matches!(&error, GraphError::Cycle(names) if names.len() == 3), "{error}");
    let message = error.to_string();
    assert!(message.contains("first") && message.contains("second"), "{message}");
    drop(reports);

    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    let reader = probe("reader", vec![read("nowhere", ProbeKind::Image)], &pipelines);
    let _report = import_report(&device, &mut graph, &reader);
    graph.add_typed_pass(reader);
    let error = graph.compile().expect_err("`nowhere` is never declared");
    assert_eq!(
        error.to_string(),
        "pass `reader` uses resource `nowhere`, which no pass creates and nobody imported; \
         refer to a resource only some frames have with Registry::optional_image or optional_buffer"
    );

    struct Lonely;
    impl Pass for Lonely {
        fn name(&self) -> &str {
            "lonely reader"
        }
        fn register(&mut self, registry: &mut Registry) {
            let image = registry.create_image("never written", ImageDesc::new(vk::Format::R8_UNORM, ImageSize::OUTPUT));
            registry.sample(image, ShaderStage::Compute);
            registry.side_effect();
        }
        fn execute(&mut self, _context: &mut ExecuteContext) {}
    }
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    graph.add_pass(Lonely);
    let error = graph.compile().expect_err("nobody writes the image");
    assert_eq!(error.to_string(), "pass `lonely reader` reads resource `never written`, which no pass writes");
    drop(graph);
    assert_no_validation_messages(&device);
}

#[test]
fn history_reads_see_last_frame_and_zero_first() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    struct HistoryReader {
        pipelines: Arc<ProbePipelines>,
    }
    impl TypedPass for HistoryReader {
        type Handles = (render_graph::ImageRead, BufferWrite);
        fn name(&self) -> &str {
            "hiz"
        }
        fn register(&mut self, registry: &mut Registry) -> Self::Handles {
            let previous = registry.history_image("depth_prepass");
            let report = registry.buffer("report hiz");
            (
                registry.read_image(previous, Access::StorageRead(ShaderStage::Compute)),
                registry.write_storage_buffer(report, ShaderStage::Compute),
            )
        }
        fn execute(&mut self, (previous, report): &Self::Handles, context: &mut ExecuteContext) {
            let bindings = [Binding::image(*previous), Binding::buffer(report)];
            context.bind_compute(&self.pipelines.read_storage_image, &bindings);
            context.push_constants(&[0, 0]);
            context.dispatch(shaders::PROBE_ELEMENTS / shaders::PROBE_WORKGROUP, 1, 1);
        }
    }
    struct Seeded(ProbePass);
    impl TypedPass for Seeded {
        type Handles = common::ProbeHandles;
        fn name(&self) -> &str {
            self.0.name()
        }
        fn register(&mut self, registry: &mut Registry) -> Self::Handles {
            self.0.register(registry)
        }
        fn prepare(&mut self, _handles: &Self::Handles, context: &mut render_graph::PrepareContext) {
            // A different value every frame, so the reader proves which frame it saw.
            let seed = 1000 * (context.frame_index() as u32 + 1);
            self.0.ops = vec![fill("depth_prepass", ProbeKind::Image, seed)];
        }
        fn execute(&mut self, handles: &Self::Handles, context: &mut ExecuteContext) {
            self.0.execute(handles, context)
        }
    }
    let report = ReadbackBuffer::new(&device, "report hiz", common::PROBE_BYTES).expect("allocates");
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    graph.import_buffer("report hiz", report.shared());
    graph.add_typed_pass(HistoryReader { pipelines: Arc::clone(&pipelines) });
    graph.add_typed_pass(Seeded(probe("depth prepass", vec![fill("depth_prepass", ProbeKind::Image, 0)], &pipelines)));
    graph.execute_frame().expect("frame runs");
    graph.wait_idle().expect("frame finishes");
    assert_eq!(report.read_u32().expect("maps"), vec![0; shaders::PROBE_ELEMENTS as usize], "frame 0 sees zeros");
    for frame in 1..4_u32 {
        graph.execute_frame().expect("frame runs");
        graph.wait_idle().expect("frame finishes");
        assert_eq!(report.read_u32().expect("maps"), filled(1000 * frame), "frame {frame} sees frame {}", frame - 1);
    }
    drop(graph);
    assert_no_validation_messages(&device);
}

#[test]
fn uploads_through_the_staging_ring_arrive() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    struct Upload;
    impl TypedPass for Upload {
        type Handles = BufferWrite;
        fn name(&self) -> &str {
            "upload"
        }
        fn register(&mut self, registry: &mut Registry) -> BufferWrite {
            let buffer = registry.create_buffer("uploaded", render_graph::BufferDesc { size: common::PROBE_BYTES });
            registry.write_buffer(buffer, Access::TransferWrite)
        }
        fn prepare(&mut self, target: &BufferWrite, context: &mut render_graph::PrepareContext) {
            let bytes: Vec<u8> = filled(77).iter().flat_map(|value| value.to_le_bytes()).collect();
            context.upload_buffer(target, 0, &bytes).expect("fits the ring");
        }
    }
    let reader = probe("reader", vec![read("uploaded", ProbeKind::Buffer)], &pipelines);
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    let report = import_report(&device, &mut graph, &reader).expect("the reader reports");
    graph.add_typed_pass(Upload);
    graph.add_typed_pass(reader);
    for _ in 0..3 {
        graph.execute_frame().expect("frame runs");
    }
    graph.wait_idle().expect("frames finish");
    assert_eq!(report.read_u32().expect("maps"), filled(77));
    drop(graph);
    assert_no_validation_messages(&device);
}

#[test]
fn the_graph_recompiles_only_when_it_changes() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    let mut first = probe("first", vec![fill("some buffer", ProbeKind::Buffer, 3)], &pipelines);
    first.side_effect = true;
    graph.add_typed_pass(first);
    for _ in 0..3 {
        graph.execute_frame().expect("frame runs");
    }
    assert_eq!(graph.compile_count(), 1, "unchanged graph");
    graph.set_output_extent(EXTENT);
    graph.execute_frame().expect("frame runs");
    assert_eq!(graph.compile_count(), 1, "same extent is no change");
    graph.set_output_extent(vk::Extent2D { width: 8, height: 8 });
    graph.execute_frame().expect("frame runs");
    assert_eq!(graph.compile_count(), 2, "a new extent recompiles");
    let mut second = probe("second", vec![fill("other buffer", ProbeKind::Buffer, 4)], &pipelines);
    second.side_effect = true;
    graph.add_typed_pass(second);
    graph.execute_frame().expect("frame runs");
    assert_eq!(graph.compile_count(), 3, "a new pass recompiles");
    assert_eq!(graph.execution_order().expect("compiles"), ["first", "second"]);

    struct Nonsense;
    impl Pass for Nonsense {
        fn name(&self) -> &str {
            "nonsense"
        }
        fn register(&mut self, registry: &mut Registry) {
            let size = ImageSize::Relative { scale_x: f32::NAN, scale_y: 1.0 };
            let image = registry.create_image("nan sized", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, size));
            registry.write_storage_image(image, ShaderStage::Compute);
            registry.side_effect();
        }
        fn execute(&mut self, _context: &mut ExecuteContext) {}
    }
    graph.add_pass(Nonsense);
    let error = graph.execute_frame().expect_err("a NaN scale is rejected");
    assert!(matches!(&error, GraphError::InvalidDescription { resource, .. } if resource == "nan sized"), "{error}");
    drop(graph);
    assert_no_validation_messages(&device);
}

#[test]
fn imported_images_keep_their_contents_when_imported_in_layout() {
    let Some(device) = gpu_test_context() else { return };
    let extent = vk::Extent2D { width: 8, height: 8 };
    let usage = vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::SAMPLED;
    let info = render_graph::ImageInfo { format: vk::Format::R8G8B8A8_UNORM, extent, mip_levels: 1, usage };
    let image = Arc::new(render_graph::GpuImage::new(&device, "texture", info).expect("image allocates"));
    let range = render_graph::memory::full_range(info.format, 1);
    device
        .submit_and_wait(|command_buffer| {
            let to_transfer = vk::ImageMemoryBarrier2::default()
                .dst_stage_mask(vk::PipelineStageFlags2::ALL_TRANSFER)
                .dst_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                .old_layout(vk::ImageLayout::UNDEFINED)
                .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
                .image(image.raw())
                .subresource_range(range);
            let to_read = vk::ImageMemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::ALL_TRANSFER)
                .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                .old_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
                .new_layout(vk::ImageLayout::READ_ONLY_OPTIMAL)
                .image(image.raw())
                .subresource_range(range);
            let color = vk::ClearColorValue { float32: [1.0, 0.0, 1.0, 1.0] };
            let raw = device.raw();
            // SAFETY: recording a one-time command buffer; the image is live and the barriers
            // put it in TRANSFER_DST_OPTIMAL for the clear, then READ_ONLY_OPTIMAL.
            unsafe {
                raw.cmd_pipeline_barrier2(
                    command_buffer,
                    &vk::DependencyInfo::default().image_memory_barriers(&[to_transfer]),
                );
                raw.cmd_clear_color_image(
                    command_buffer,
                    image.raw(),
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    &color,
                    &[range],
                );
                raw.cmd_pipeline_barrier2(
                    command_buffer,
                    &vk::DependencyInfo::default().image_memory_barriers(&[to_read]),
                );
            }
        })
        .expect("setup runs");
    let readback =
        ReadbackBuffer::new(&device, "readback", u64::from(extent.width * extent.height * 4)).expect("allocates");
    let mut graph = RenderGraph::new(Arc::clone(&device), extent).expect("graph creates");
    graph.import_image_in_layout("color", Arc::clone(&image), vk::ImageLayout::READ_ONLY_OPTIMAL);
    graph.import_buffer("readback", readback.shared());
    graph.add_typed_pass(CopyOutPass);
    graph.execute_frame().expect("frame runs");
    graph.wait_idle().expect("frame finishes");
    let pixels = readback.read().expect("maps");
    assert!(pixels.chunks_exact(4).all(|pixel| pixel == [255, 0, 255, 255]), "{:?}", &pixels[..8]);
    drop(graph);
    assert_no_validation_messages(&device);
}

#[test]
fn using_an_undeclared_resource_fails_the_frame_naming_pass_and_resource() {
    let Some(device) = gpu_test_context() else { return };
    // A handle another pass declared: using it without an access of its own is misuse.
    type Borrowed = Arc<std::sync::Mutex<Option<BufferRead>>>;
    struct Sneaky {
        other: Borrowed,
    }
    impl Pass for Sneaky {
        fn name(&self) -> &str {
            "sneaky"
        }
        fn register(&mut self, registry: &mut Registry) {
            // Refers to the buffer by name but declares no access to it.
            registry.buffer("declared elsewhere");
            registry.side_effect();
        }
        fn execute(&mut self, context: &mut ExecuteContext) {
            let other = self.other.lock().expect("not poisoned").expect("the reader registered first");
            context.buffer(other);
        }
    }
    struct Owner;
    impl TypedPass for Owner {
        type Handles = BufferWrite;
        fn name(&self) -> &str {
            "owner"
        }
        fn register(&mut self, registry: &mut Registry) -> BufferWrite {
            let buffer = registry.create_buffer("declared elsewhere", render_graph::BufferDesc { size: 16 });
            registry.side_effect();
            registry.write_buffer(buffer, Access::TransferWrite)
        }
    }
    struct Lender {
        lent: Borrowed,
    }
    impl TypedPass for Lender {
        type Handles = ();
        fn name(&self) -> &str {
            "lender"
        }
        fn register(&mut self, registry: &mut Registry) {
            let buffer = registry.buffer("declared elsewhere");
            *self.lent.lock().expect("not poisoned") = Some(registry.read_buffer(buffer, Access::TransferRead));
            registry.side_effect();
        }
    }
    let lent = Borrowed::default();
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    graph.add_typed_pass(Owner);
    graph.add_typed_pass(Lender { lent: Arc::clone(&lent) });
    graph.add_pass(Sneaky { other: lent });
    // The pass's panic is the frame's error, naming the pass and the resource; the program
    // and the graph go on (the frame is not submitted).
    let error = graph.execute_frame().expect_err("an undeclared access is programmer misuse");
    assert!(
        matches!(&error, render_graph::GraphError::PassPanicked { pass, message }
            if pass == "sneaky" && message.contains("`declared elsewhere`")),
        "{error}"
    );
    graph.wait_idle().expect("the graph is usable after the failed frame");
    drop(graph);
    assert_no_validation_messages(&device);
}
