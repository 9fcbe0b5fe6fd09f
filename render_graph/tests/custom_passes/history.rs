//! History resources across frames and resizes, and readbacks that follow their image's size.

use super::*;

/// Each frame: `counter` = last frame's `counter` (copied by the probe read shader).
struct Carry {
    pipelines: Arc<ProbePipelines>,
    resets: Arc<Mutex<Vec<(bool, bool)>>>,
}

/// Last frame's counter, this frame's, and last frame's `sized`.
type CarryHandles = (BufferRead, BufferWrite, render_graph::ImageRead);

impl TypedPass for Carry {
    type Handles = CarryHandles;
    fn name(&self) -> &str {
        "carry"
    }
    fn register(&mut self, registry: &mut Registry) -> CarryHandles {
        let previous = registry.history_buffer("counter");
        let counter = registry.create_buffer("counter", BufferDesc { size: PROBE_BYTES });
        let sized_previous = registry.history_image("sized");
        (
            registry.read_storage_buffer(previous, COMPUTE),
            registry.write_storage_buffer(counter, COMPUTE),
            registry.read_storage_image(sized_previous, COMPUTE),
        )
    }
    fn execute(&mut self, (previous, counter, sized_previous): &CarryHandles, context: &mut ExecuteContext) {
        let resets = (context.history_was_reset(previous), context.history_was_reset(sized_previous));
        self.resets.lock().expect("not poisoned").push(resets);
        let bindings = [Binding::buffer(*previous), Binding::buffer(counter)];
        context.bind_compute(&self.pipelines.read_buffer, &bindings);
        context.push_constants(&[0, 0]);
        context.dispatch(PROBE_ELEMENTS / PROBE_WORKGROUP, 1, 1);
    }
}

/// Writes the output-sized image `sized` (its first 16x16 texels).
struct SizedWriter {
    pipelines: Arc<ProbePipelines>,
}

impl TypedPass for SizedWriter {
    type Handles = ImageWrite;
    fn name(&self) -> &str {
        "sized writer"
    }
    fn register(&mut self, registry: &mut Registry) -> ImageWrite {
        let image = registry.create_image("sized", ImageDesc::new(vk::Format::R32_UINT, ImageSize::OUTPUT));
        registry.write_storage_image(image, COMPUTE)
    }
    fn execute(&mut self, target: &ImageWrite, context: &mut ExecuteContext) {
        context.bind_compute(&self.pipelines.fill_image, &[Binding::image(target)]);
        context.push_constants(&[1, 0]);
        context.dispatch(PROBE_ELEMENTS / PROBE_WORKGROUP, 1, 1);
    }
}

#[test]
fn history_survives_a_resize_that_keeps_its_description_and_reports_resets() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let resets = Arc::new(Mutex::new(Vec::new()));
    let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 16, height: 16 }).expect("graph");
    graph.add_typed_pass(SizedWriter { pipelines: Arc::clone(&pipelines) });
    graph.add_typed_pass(Carry { pipelines: Arc::clone(&pipelines), resets: Arc::clone(&resets) });
    // Reports last frame's counter, then steps it: counter = hash(counter ^ 77).
    let step = ProbePass::new("step", vec![update("counter", ProbeKind::Buffer, 77)], &pipelines);
    let report = add_probe(&device, &mut graph, step).expect("reads");
    let mut expected = vec![0; PROBE_ELEMENTS as usize];
    for frame in 0..6 {
        if frame == 3 {
            // A window resize: the output-sized image changes, the counter does not.
            graph.set_output_extent(vk::Extent2D { width: 32, height: 24 });
        }
        graph.execute_frame().expect("frame runs");
        graph.wait_idle().expect("frame finishes");
        assert_eq!(report.read_u32().expect("maps"), expected, "frame {frame}: last frame's counter");
        expected = updated(&expected, 77);
    }
    assert_eq!(graph.compile_count(), 2);
    let resets = resets.lock().expect("not poisoned").clone();
    assert_eq!(
        resets,
        [(true, true), (false, false), (false, false), (false, true), (false, false), (false, false)],
        "(counter, sized) reset per frame: both at first, only the resized image after the resize"
    );
    drop(graph);
    assert_no_validation_messages(&device);
}

#[test]
fn a_following_readback_takes_the_size_of_its_image_after_every_resize() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 16, height: 16 }).expect("graph");
    graph.add_typed_pass(SizedWriter { pipelines: Arc::clone(&pipelines) });
    let (pass, sized) = ReadbackPass::following("sized");
    graph.add_typed_pass(pass);
    assert!(sized.read().is_err(), "nothing is copied before the first frame");
    let mut first_block = None;
    for extent in [(16, 16), (48, 40), (8, 8), (64, 64)] {
        let extent = vk::Extent2D { width: extent.0, height: extent.1 };
        graph.set_output_extent(extent);
        graph.execute_frame().expect("frame runs");
        assert!(
            matches!(sized.read(), Err(GraphError::ReadbackPending { .. })),
            "the copy is pending until the frame has finished"
        );
        graph.wait_idle().expect("frame finishes");
        let (copied, texels) = sized.read().expect("copied");
        assert_eq!(copied, extent, "the copy has the image's new size");
        assert_eq!(texels.len(), (extent.width * extent.height * 4) as usize);
        // The writer fills the same top-left texels at every size: the rows are packed at the
        // new width.
        let block: Vec<u8> = (0..extent.height.min(8) as usize)
            .flat_map(|row| {
                let start = row * extent.width as usize * 4;
                texels[start..start + 8 * 4].to_vec()
            })
            .collect();
        assert_eq!(*first_block.get_or_insert_with(|| block.clone()), block, "{extent:?}");
    }
    drop(graph);
    assert_no_validation_messages(&device);
}
