//! A pass's mistakes are errors naming the pass and the resource, never panics: unknown
//! insertion points, duplicate names, empty extents, undeclared bindings, too many push
//! constants, writes never performed (poison under validation) and early readbacks.

use super::*;

#[test]
fn unknown_and_duplicate_insertion_points_and_misspelt_resources_are_named_errors() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let kind = ProbeKind::Buffer;
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    let error = graph
        .add_typed_pass_at("before cull", ProbePass::new("early", vec![fill("x", kind, 1)], &pipelines))
        .expect_err("a graph without points");
    assert!(error.to_string().contains("it has none"), "{error}");
    graph.add_insertion_point("before cull").expect("a new point");
    graph.add_insertion_point("after geometry").expect("a new point");
    assert!(
        matches!(graph.add_insertion_point("after geometry"), Err(GraphError::DuplicateInsertionPoint(name)) if name == "after geometry")
    );
    let error = graph
        .add_typed_pass_at("after geometr", ProbePass::new("fog", vec![fill("x", kind, 1)], &pipelines))
        .expect_err("a misspelt point");
    match &error {
        GraphError::UnknownInsertionPoint { pass, point, known, nearest, site } => {
            assert!(
                site.starts_with("render_graph/tests/custom_passes/misuse.rs:"),
                "where the pass was added: {site}"
            );
            assert_eq!((pass.as_str(), point.as_str()), ("fog", "after geometr"));
            assert_eq!(known, &["before cull", "after geometry"]);
            assert_eq!(nearest.as_deref(), Some("after geometry"));
        }
        other => panic!("{other:?}"),
    }
    assert!(error.to_string().contains("did you mean `after geometry`?"), "{error}");
    // Nothing was added by the failed calls.
    assert!(graph.execution_order().expect("an empty graph compiles").is_empty());

    add_probe(&device, &mut graph, ProbePass::new("writer", vec![fill("shadow_map", kind, 1)], &pipelines));
    add_probe(&device, &mut graph, ProbePass::new("reader", vec![read("shadow_mpa", kind)], &pipelines));
    let error = graph.execution_order().expect_err("a misspelt resource");
    assert!(
        matches!(&error, GraphError::MissingResource { pass, resource, nearest: Some(nearest) }
            if pass == "reader" && resource == "shadow_mpa" && nearest == "shadow_map"),
        "{error:?}"
    );
    assert!(error.to_string().contains("(did you mean `shadow_map`?)"), "{error}");
    drop(graph);
    assert_no_validation_messages(&device);
}

#[test]
fn two_passes_with_one_name_are_an_error() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    let twin = |resource: &str| {
        let mut pass = ProbePass::new("twin", vec![fill(resource, ProbeKind::Buffer, 1)], &pipelines);
        pass.side_effect = true;
        pass
    };
    graph.add_typed_pass(twin("a"));
    graph.add_typed_pass(twin("b"));
    let error = graph.execute_frame().expect_err("names are unique");
    match &error {
        GraphError::DuplicatePass { name, sites } => {
            assert_eq!(name, "twin");
            assert_eq!(sites.len(), 2, "both add sites: {sites:?}");
            assert!(sites.iter().all(|site| site.contains("custom_passes/misuse.rs:")), "{sites:?}");
            assert_ne!(sites[0], sites[1]);
        }
        other => panic!("{other}"),
    }
    drop(graph);
    assert_no_validation_messages(&device);
}

#[test]
fn a_zero_output_extent_is_an_error_naming_pass_and_image() {
    let Some(device) = gpu_test_context() else { return };
    struct Sized;
    impl Pass for Sized {
        fn name(&self) -> &str {
            "sized"
        }
        fn register(&mut self, registry: &mut Registry) {
            let image = registry.create_image("half", ImageDesc::new(vk::Format::R32_UINT, ImageSize::OUTPUT));
            registry.write_storage_image(image, COMPUTE);
            registry.side_effect();
        }
        fn execute(&mut self, _context: &mut ExecuteContext) {}
    }
    let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 0, height: 0 }).expect("graph");
    graph.add_pass(Sized);
    let error = graph.execute_frame().expect_err("no 1x1 image out of nothing");
    assert!(
        matches!(&error, GraphError::ZeroOutputExtent { pass, resource } if pass == "sized" && resource == "half"),
        "{error}"
    );
    graph.set_output_extent(EXTENT);
    graph.execute_frame().expect("a real extent works");
    drop(graph);
    assert_no_validation_messages(&device);
}

/// Binds a report buffer it never declared (another pass's handle) to a probe pipeline, or
/// binds the image it declared as sampled to a storage-image pipeline.
struct Binder {
    pipelines: Arc<ProbePipelines>,
    undeclared: Lent<BufferRead>,
    bind_undeclared: bool,
}

impl TypedPass for Binder {
    type Handles = render_graph::ImageRead;
    fn name(&self) -> &str {
        "binder"
    }
    fn register(&mut self, registry: &mut Registry) -> render_graph::ImageRead {
        let image = registry.image("probe image");
        // Named, but no access declared.
        registry.buffer("report binder");
        registry.side_effect();
        registry.sample(image, COMPUTE)
    }
    fn execute(&mut self, &declared: &render_graph::ImageRead, context: &mut ExecuteContext) {
        let image = Binding::image(declared);
        let report = Binding::buffer(borrowed(&self.undeclared));
        if self.bind_undeclared {
            context.bind_compute(&self.pipelines.read_sampled_image, &[image, report]);
        } else {
            // The storage-image pipeline for an image declared as sampled.
            context.bind_compute(&self.pipelines.read_storage_image, &[image, report]);
        }
        context.push_constants(&[0, 0]);
        context.dispatch(1, 1, 1);
    }
}

#[test]
fn undeclared_and_mismatched_bindings_are_errors_naming_pass_resource_and_slot() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    for bind_undeclared in [true, false] {
        let report = ReadbackBuffer::new(&device, "report binder", PROBE_BYTES).expect("allocates");
        let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
        graph.import_buffer("report binder", report.shared());
        graph.add_typed_pass(ProbePass::new("make", vec![fill("probe image", ProbeKind::Image, 3)], &pipelines));
        let undeclared = Lent::default();
        graph.add_typed_pass(Lender::buffer("report binder", &undeclared));
        graph.add_typed_pass(Binder { pipelines: Arc::clone(&pipelines), undeclared, bind_undeclared });
        let error = graph.execute_frame().expect_err("misuse is an error, not a panic");
        if bind_undeclared {
            assert!(
                matches!(&error, GraphError::UndeclaredAccess { pass, resource }
                    if pass == "binder" && resource == "report binder"),
                "{error}"
            );
        } else {
            assert!(
                matches!(&error, GraphError::BindingMismatch { pass, slot: 0, reason }
                    if pass == "binder" && reason.contains("StorageImage") && reason.contains("`probe image`")),
                "{error}"
            );
        }
        drop(graph);
    }
    assert_no_validation_messages(&device);
}

/// Declares a write of `name` and never performs it.
struct Lazy {
    kind: ProbeKind,
}

impl TypedPass for Lazy {
    type Handles = ();
    fn name(&self) -> &str {
        "lazy"
    }
    fn register(&mut self, registry: &mut Registry) {
        match self.kind {
            ProbeKind::Buffer => {
                let buffer = registry.create_buffer("lazy", BufferDesc { size: PROBE_BYTES });
                registry.write_storage_buffer(buffer, COMPUTE);
            }
            ProbeKind::Image => {
                let size = ImageSize::Absolute { width: PROBE_WIDTH, height: PROBE_WIDTH };
                let image = registry.create_image("lazy", ImageDesc::new(vk::Format::R32_UINT, size));
                registry.write_storage_image(image, COMPUTE);
            }
        }
    }
}

/// A pass that makes a mistake the type system cannot catch: it asks for an image it never
/// declared an access to (another pass's handle), or pushes more constants than its pipeline
/// takes.
struct Careless {
    pipeline: render_graph::ComputePipeline,
    undeclared_image: bool,
    image: Lent<render_graph::ImageRead>,
}

impl TypedPass for Careless {
    type Handles = ImageWrite;
    fn name(&self) -> &str {
        "careless"
    }
    fn register(&mut self, registry: &mut Registry) -> ImageWrite {
        let target =
            registry.create_image("careless target", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT));
        registry.side_effect();
        registry.write_storage_image(target, COMPUTE)
    }
    fn execute(&mut self, target: &ImageWrite, context: &mut ExecuteContext) {
        if self.undeclared_image {
            let _ = context.image(borrowed(&self.image));
        }
        context.bind_compute(&self.pipeline, &[Binding::image(target)]);
        context.push_constants(&[EXTENT.width, EXTENT.height, 0, 0, 0]);
        context.dispatch(1, 1, 1);
    }
}

#[test]
fn an_undeclared_image_and_too_many_push_constants_are_errors_not_panics() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    for undeclared_image in [true, false] {
        let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
        graph.add_typed_pass(ProbePass::new("make", vec![fill("probe image", ProbeKind::Image, 3)], &pipelines));
        let image = Lent::default();
        graph.add_typed_pass(Lender::image("probe image", &image));
        let pipeline = render_graph::ComputePipeline::new(
            &device,
            "pattern",
            shaders::PATTERN_COMP.words(),
            &[render_graph::BindingKind::StorageImage],
            8,
        )
        .expect("pipeline");
        graph.add_typed_pass(Careless { pipeline, undeclared_image, image });
        for _ in 0..2 {
            let error = graph.execute_frame().expect_err("a mistake is an error");
            if undeclared_image {
                assert!(
                    matches!(&error, GraphError::PassPanicked { pass, message }
                        if pass == "careless" && message.contains("probe image")),
                    "{error}"
                );
            } else {
                assert!(
                    matches!(&error, GraphError::PushConstantSize { pass, bytes: 20, capacity: 8 } if pass == "careless"),
                    "{error}"
                );
            }
        }
        graph.wait_idle().expect("the device is fine");
        drop(graph);
    }
    assert_no_validation_messages(&device);
}

#[test]
fn a_declared_write_never_performed_shows_as_poison_under_validation() {
    let Some(device) = gpu_test_context() else { return };
    assert!(device.validation_enabled(), "GPU tests validate");
    let pipelines = Arc::new(ProbePipelines::new(&device));
    for kind in [ProbeKind::Buffer, ProbeKind::Image] {
        let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
        // Something else lives in the memory first: without poison the reader would see it.
        add_probe(&device, &mut graph, ProbePass::new("earlier", vec![fill("earlier", kind, 5)], &pipelines));
        let earlier =
            add_probe(&device, &mut graph, ProbePass::new("use earlier", vec![read("earlier", kind)], &pipelines));
        graph.add_typed_pass(Lazy { kind });
        let reader = add_probe(&device, &mut graph, ProbePass::new("reader", vec![read("lazy", kind)], &pipelines));
        for _ in 0..2 {
            graph.execute_frame().expect("frame runs");
        }
        graph.wait_idle().expect("frames finish");
        assert_eq!(earlier.expect("reads").read_u32().expect("maps"), filled(5));
        let seen = reader.expect("reads").read_u32().expect("maps");
        assert!(seen.iter().all(|&value| value == POISON_WORD), "{kind:?}: {:#x?}", &seen[..4]);
        drop(graph);
    }
    assert_no_validation_messages(&device);
}

#[test]
fn readback_before_the_frame_finished_is_an_error() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    add_probe(&device, &mut graph, ProbePass::new("write", vec![fill("x", ProbeKind::Buffer, 11)], &pipelines));
    let report = add_probe(&device, &mut graph, ProbePass::new("read", vec![read("x", ProbeKind::Buffer)], &pipelines))
        .expect("reads");
    graph.execute_frame().expect("frame runs");
    let error = report.read().expect_err("nobody waited for the frame");
    assert!(matches!(&error, GraphError::ReadbackPending { buffer, frame: 0 } if buffer == "report read"), "{error}");
    graph.wait_idle().expect("frame finishes");
    assert_eq!(report.read_u32().expect("the frame finished"), filled(11));
    graph.execute_frame().expect("frame runs");
    assert!(report.read().is_err(), "a new frame writes it again");
    drop(graph);
    assert_eq!(report.read_u32().expect("dropping the graph waits"), filled(11));
    assert_no_validation_messages(&device);
}
