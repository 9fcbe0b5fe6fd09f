//! GPU tests of what a user writing their own passes relies on: declaration-order versions,
//! misuse reported as errors naming pass and resource, poison fills of blind writes, the
//! draw and dispatch helpers, history across recompiles and readback safety. Each runs on a
//! validated device and ends with zero validation messages.

mod common;

use std::sync::{Arc, Mutex};

use ash::vk;
use common::{filled, import_report, updated, ImageRead, ProbeKind, ProbeOp, ProbePass, ProbePipelines, PROBE_BYTES};
use render_graph::readback::ReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context, gpu_test_context_without};
use render_graph::{
    Access, AttachmentLoad, Binding, BufferDesc, BufferRead, BufferWrite, ExecuteContext, GpuDevice, GraphError,
    GraphicsPipeline, GraphicsPipelineDesc, ImageDesc, ImageSize, ImageWrite, Pass, PrepareContext, ReadbackBuffer,
    Registry, RenderGraph, ShaderStage, TypedPass, POISON_WORD,
};
use shaders::{PROBE_ELEMENTS, PROBE_WIDTH, PROBE_WORKGROUP};

const EXTENT: vk::Extent2D = vk::Extent2D { width: 40, height: 24 };
const COMPUTE: ShaderStage = ShaderStage::Compute;

fn fill(resource: &str, kind: ProbeKind, seed: u32) -> ProbeOp {
    ProbeOp::Fill { resource: resource.into(), kind, seed }
}

fn read(resource: &str, kind: ProbeKind) -> ProbeOp {
    ProbeOp::Read { resource: resource.into(), kind, image_read: ImageRead::Storage }
}

fn update(resource: &str, kind: ProbeKind, seed: u32) -> ProbeOp {
    ProbeOp::Update { resource: resource.into(), kind, seed }
}

/// Adds `pass` with its report buffer; returns the report.
fn add_probe(device: &Arc<GpuDevice>, graph: &mut RenderGraph, pass: ProbePass) -> Option<ReadbackBuffer> {
    let report = import_report(device, graph, &pass);
    graph.add_typed_pass(pass);
    report
}

/// A read handle one pass declared, lent to another that uses it without declaring an access
/// of its own (the misuse the tests below check is reported).
type Lent<T> = Arc<Mutex<Option<T>>>;

/// Reads `resource` (a transfer read, a side effect) and lends the read handle.
struct Lender {
    resource: &'static str,
    image: bool,
    lent_buffer: Lent<BufferRead>,
    lent_image: Lent<render_graph::ImageRead>,
}

impl Lender {
    fn buffer(resource: &'static str, lent: &Lent<BufferRead>) -> Lender {
        Lender { resource, image: false, lent_buffer: Arc::clone(lent), lent_image: Lent::default() }
    }

    fn image(resource: &'static str, lent: &Lent<render_graph::ImageRead>) -> Lender {
        Lender { resource, image: true, lent_buffer: Lent::default(), lent_image: Arc::clone(lent) }
    }
}

impl TypedPass for Lender {
    type Handles = ();
    fn name(&self) -> &str {
        "lender"
    }
    fn register(&mut self, registry: &mut Registry) {
        if self.image {
            let image = registry.image(self.resource);
            *self.lent_image.lock().expect("not poisoned") = Some(registry.read_image(image, Access::TransferRead));
        } else {
            let buffer = registry.buffer(self.resource);
            *self.lent_buffer.lock().expect("not poisoned") = Some(registry.read_buffer(buffer, Access::TransferRead));
        }
        registry.side_effect();
    }
}

/// The handle lent by a [`Lender`] registered before.
fn borrowed<T: Copy>(lent: &Lent<T>) -> T {
    lent.lock().expect("not poisoned").expect("the lender registers first")
}

#[test]
fn write_read_modify_runs_in_declaration_order_and_the_reader_sees_the_write() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    for kind in [ProbeKind::Buffer, ProbeKind::Image] {
        let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
        add_probe(&device, &mut graph, ProbePass::new("write", vec![fill("x", kind, 7)], &pipelines));
        let reader = add_probe(&device, &mut graph, ProbePass::new("read", vec![read("x", kind)], &pipelines));
        let modifier =
            add_probe(&device, &mut graph, ProbePass::new("modify", vec![update("x", kind, 99)], &pipelines));
        let after = add_probe(&device, &mut graph, ProbePass::new("read after", vec![read("x", kind)], &pipelines));
        assert_eq!(graph.execution_order().expect("compiles"), ["write", "read", "modify", "read after"]);
        graph.execute_frame().expect("frame runs");
        graph.wait_idle().expect("frame finishes");
        let written = filled(7);
        assert_eq!(reader.expect("reads").read_u32().expect("maps"), written, "{kind:?}: the reader sees the write");
        assert_eq!(modifier.expect("reads").read_u32().expect("maps"), written, "{kind:?}: the modify sees the write");
        assert_eq!(after.expect("reads").read_u32().expect("maps"), updated(&written, 99), "{kind:?}: then the modify");
        drop(graph);
    }
    assert_no_validation_messages(&device);
}

/// Places `pass` at insertion point `point` with its report buffer; returns the report.
fn add_probe_at(
    device: &Arc<GpuDevice>,
    graph: &mut RenderGraph,
    point: &str,
    pass: ProbePass,
) -> Option<ReadbackBuffer> {
    let report = import_report(device, graph, &pass);
    graph.add_typed_pass_at(point, pass).expect("the point exists");
    report
}

#[test]
fn passes_placed_at_insertion_points_run_there_and_are_seen_by_the_passes_after() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let kind = ProbeKind::Buffer;
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    // An engine's frame: a write, a point, a read, two points, an end; then an appended pass.
    add_probe(&device, &mut graph, ProbePass::new("engine write", vec![fill("x", kind, 7)], &pipelines));
    graph.add_insertion_point("after write").expect("a new point");
    let engine_read = add_probe(&device, &mut graph, ProbePass::new("engine read", vec![read("x", kind)], &pipelines));
    graph.add_insertion_point("after read").expect("a new point");
    graph.add_insertion_point("end").expect("a new point");
    let appended = add_probe(&device, &mut graph, ProbePass::new("appended", vec![read("x", kind)], &pipelines));
    // The user's passes, placed out of frame order: each lands at its point, and passes at
    // one point keep the order they were placed in.
    add_probe_at(&device, &mut graph, "end", ProbePass::new("at end", vec![update("x", kind, 3)], &pipelines));
    add_probe_at(&device, &mut graph, "after write", ProbePass::new("first", vec![update("x", kind, 11)], &pipelines));
    let second =
        add_probe_at(&device, &mut graph, "after write", ProbePass::new("second", vec![read("x", kind)], &pipelines));
    add_probe_at(&device, &mut graph, "after read", ProbePass::new("later", vec![update("x", kind, 5)], &pipelines));
    assert_eq!(
        graph.execution_order().expect("compiles"),
        ["engine write", "first", "second", "engine read", "later", "at end", "appended"]
    );
    assert_eq!(graph.insertion_points().collect::<Vec<_>>(), ["after write", "after read", "end"]);
    graph.execute_frame().expect("frame runs");
    graph.wait_idle().expect("frame finishes");
    let animated = updated(&filled(7), 11);
    assert_eq!(second.expect("reads").read_u32().expect("maps"), animated, "the pass after sees the placed write");
    assert_eq!(engine_read.expect("reads").read_u32().expect("maps"), animated, "so does the engine's next pass");
    let end = updated(&updated(&animated, 5), 3);
    assert_eq!(appended.expect("reads").read_u32().expect("maps"), end, "an appended pass sees every point's write");
    drop(graph);
    assert_no_validation_messages(&device);
}

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
            assert!(site.starts_with("render_graph/tests/custom_passes.rs:"), "where the pass was added: {site}");
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
            assert!(sites.iter().all(|site| site.contains("custom_passes.rs:")), "{sites:?}");
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

const GRID_EXTENT: vk::Extent2D = vk::Extent2D { width: 80, height: 64 };
const BANDS: u32 = 8;
const COLUMNS: u32 = 10;

/// Push constants of `band.vert`, as a `#[repr(C)]` struct pushed as bytes.
#[repr(C)]
#[derive(Clone, Copy)]
struct BandParams {
    band_count: u32,
    column_count: u32,
}
const _: () = assert!(std::mem::size_of::<BandParams>() == 8);

impl BandParams {
    fn bytes(&self) -> [u8; 8] {
        let mut bytes = [0; 8];
        bytes[..4].copy_from_slice(&self.band_count.to_le_bytes());
        bytes[4..].copy_from_slice(&self.column_count.to_le_bytes());
        bytes
    }
}

/// Byte offsets in the `draw args` buffer.
const DRAW_INDIRECT_AT: u64 = 0;
const DRAW_INDEXED_INDIRECT_AT: u64 = 32;
const DRAW_COUNT_AT: u64 = 52;
const DRAW_INDEXED_COUNT_AT: u64 = 100;
const COUNT_AT: u64 = 140;
const INDEXED_COUNT_AT: u64 = 144;
const DISPATCH_AT: u64 = 148;
const ARGS_BYTES: u64 = 160;

fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|word| word.to_le_bytes()).collect()
}

/// The indirect commands; `(band, column)` cells each one draws are listed in the test.
fn draw_args() -> Vec<u8> {
    let mut bytes = vec![0; ARGS_BYTES as usize];
    let mut put = |offset: u64, words: &[u32]| {
        bytes[offset as usize..offset as usize + words.len() * 4].copy_from_slice(&words_to_bytes(words));
    };
    // vertexCount, instanceCount, firstVertex (6 per column), firstInstance (band).
    put(DRAW_INDIRECT_AT, &[6, 1, 18, 3, 6, 1, 24, 4]);
    // indexCount, instanceCount, firstIndex, vertexOffset, firstInstance.
    put(DRAW_INDEXED_INDIRECT_AT, &[6, 1, 0, 30, 5]);
    // Three commands, the count says two: the third (column 0, band 2) must not show.
    put(DRAW_COUNT_AT, &[6, 1, 36, 6, 6, 1, 42, 7, 6, 1, 0, 2]);
    put(DRAW_INDEXED_COUNT_AT, &[6, 1, 0, 48, 0, 6, 1, 0, 54, 1]);
    put(COUNT_AT, &[2]);
    put(INDEXED_COUNT_AT, &[1]);
    // Workgroups of the probe fill: 4 x 64 = 256 elements.
    put(DISPATCH_AT, &[PROBE_ELEMENTS / PROBE_WORKGROUP, 1, 1]);
    bytes
}

/// Uploads the indirect arguments and the index buffer.
struct UploadArgs;

impl TypedPass for UploadArgs {
    /// The arguments, and the indices.
    type Handles = (BufferWrite, BufferWrite);
    fn name(&self) -> &str {
        "upload args"
    }
    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let args = registry.create_buffer("draw args", BufferDesc { size: ARGS_BYTES });
        let indices = registry.create_buffer("indices", BufferDesc { size: 24 });
        (registry.write_buffer(args, Access::TransferWrite), registry.write_buffer(indices, Access::TransferWrite))
    }
    fn prepare(&mut self, (args, indices): &Self::Handles, context: &mut PrepareContext) {
        context.upload_buffer(args, 0, &draw_args()).expect("fits");
        context.upload_buffer(indices, 0, &words_to_bytes(&[0, 1, 2, 3, 4, 5])).expect("fits");
    }
}

/// Draws cells with every draw helper.
struct Cells {
    pipeline: GraphicsPipeline,
}

impl TypedPass for Cells {
    /// The indirect arguments, and the indices.
    type Handles = (BufferRead, BufferRead);
    fn name(&self) -> &str {
        "cells"
    }
    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let args = registry.buffer("draw args");
        let indices = registry.buffer("indices");
        let color = registry.create_image("color", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT));
        registry.color_attachment(color, AttachmentLoad::ClearColor([0.0, 0.0, 0.0, 1.0]));
        (registry.indirect_buffer(args), registry.index_buffer(indices))
    }
    fn record_draw(&mut self, &(args, indices): &Self::Handles, context: &mut ExecuteContext) {
        context.bind_graphics(&self.pipeline, &[]);
        context.push_constant_bytes(&BandParams { band_count: BANDS, column_count: COLUMNS }.bytes());
        context.draw(6, 1);
        context.draw_ranges(6..12, 1..2);
        context.bind_index_buffer(indices, 0, vk::IndexType::UINT32);
        context.draw_indexed(0..6, 12, 2..3);
        context.draw_indirect(args, DRAW_INDIRECT_AT, 2, 16);
        context.draw_indexed_indirect(args, DRAW_INDEXED_INDIRECT_AT, 1, 20);
        context.draw_indirect_count(args, DRAW_COUNT_AT, args, COUNT_AT, 3, 16);
        context.draw_indexed_indirect_count(args, DRAW_INDEXED_COUNT_AT, args, INDEXED_COUNT_AT, 2, 20);
    }
}

/// Fills `indirect filled` with the probe fill, dispatched with GPU-side arguments.
struct IndirectFill {
    pipelines: Arc<ProbePipelines>,
}

impl TypedPass for IndirectFill {
    /// The arguments, and the buffer filled.
    type Handles = (BufferRead, BufferWrite);
    fn name(&self) -> &str {
        "indirect fill"
    }
    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let args = registry.buffer("draw args");
        let target = registry.create_buffer("indirect filled", BufferDesc { size: PROBE_BYTES });
        (registry.indirect_buffer(args), registry.write_storage_buffer(target, COMPUTE))
    }
    fn execute(&mut self, (args, target): &Self::Handles, context: &mut ExecuteContext) {
        context.bind_compute(&self.pipelines.fill_buffer, &[Binding::buffer(target)]);
        context.push_constants(&[123, 0]);
        context.dispatch_indirect(*args, DISPATCH_AT);
    }
}

fn band_pipeline(device: &Arc<GpuDevice>) -> GraphicsPipeline {
    GraphicsPipeline::new(
        device,
        "band",
        &GraphicsPipelineDesc {
            vertex: shaders::BAND_VERT.words(),
            fragment: shaders::BAND_FRAG.words(),
            bindings: &[],
            push_constant_bytes: 8,
            color_formats: &[vk::Format::R8G8B8A8_UNORM],
            depth: None,
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            cull_mode: vk::CullModeFlags::NONE,
            blend: render_graph::ColorBlend::Replace,
        },
    )
    .expect("band pipeline builds")
}

#[test]
fn every_draw_and_dispatch_helper_draws_exactly_its_cells() {
    let Some(device) = gpu_test_context() else { return };
    draw_cells(&device);
}

#[test]
fn without_multi_draw_and_indirect_count_the_documented_fallbacks_draw() {
    let Some(device) = gpu_test_context_without(&["multiDrawIndirect", "drawIndirectCount"]) else { return };
    let capabilities = device.capabilities();
    assert!(!capabilities.multi_draw_indirect && !capabilities.draw_indirect_count, "withheld");
    draw_cells(&device);
}

/// Draws every cell with every helper on `device` and checks the image (the fallbacks of
/// devices without `drawIndirectCount` draw up to the maximum count).
fn draw_cells(device: &Arc<GpuDevice>) {
    let device = Arc::clone(device);
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let capabilities = device.capabilities().clone();
    assert!(capabilities.draw_indirect_first_instance, "the test's commands use firstInstance");
    let readback = render_graph::readback::image_readback_buffer(&device, "readback", GRID_EXTENT).expect("allocates");
    let mut graph = RenderGraph::new(Arc::clone(&device), GRID_EXTENT).expect("graph creates");
    graph.import_buffer("readback", readback.shared());
    graph.add_typed_pass(UploadArgs);
    graph.add_typed_pass(Cells { pipeline: band_pipeline(&device) });
    graph.add_typed_pass(ReadbackPass::with_names("color", "readback"));
    graph.add_typed_pass(IndirectFill { pipelines: Arc::clone(&pipelines) });
    let filled_report = add_probe(
        &device,
        &mut graph,
        ProbePass::new("read filled", vec![read("indirect filled", ProbeKind::Buffer)], &pipelines),
    )
    .expect("reads");
    graph.execute_frame().expect("frame runs");
    graph.wait_idle().expect("frame finishes");

    assert_eq!(filled_report.read_u32().expect("maps"), filled(123), "dispatch_indirect ran 4 workgroups");
    // (band, column) of every draw: draw, draw_ranges, draw_indexed, draw_indirect (2),
    // draw_indexed_indirect, draw_indirect_count (2 of 3), draw_indexed_indirect_count (1 of 2).
    let mut cells = vec![(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7), (0, 8)];
    if !capabilities.draw_indirect_count {
        // The documented fallback draws up to the maximum.
        cells.extend([(2, 0), (1, 9)]);
    }
    let pixels = readback.read().expect("maps");
    let cell_width = GRID_EXTENT.width / COLUMNS;
    let cell_height = GRID_EXTENT.height / BANDS;
    for (index, pixel) in pixels.chunks_exact(4).enumerate() {
        let (x, y) = (index as u32 % GRID_EXTENT.width, index as u32 / GRID_EXTENT.width);
        let cell = (y / cell_height, x / cell_width);
        let expected =
            if cells.contains(&cell) { [cell.0 as u8 + 1, cell.1 as u8 + 1, 0, 255] } else { [0, 0, 0, 255] };
        assert_eq!(pixel, expected, "pixel ({x}, {y}) in cell {cell:?}");
    }
    drop(graph);
    assert_no_validation_messages(&device);
}

/// One misuse of the draw helpers at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Misuse {
    /// Binds as index buffer a buffer declared as indirect arguments.
    IndexBufferDeclaredIndirect,
    /// Draws in `execute`, outside the rendering scope.
    DrawOutsideRendering,
    /// Draws indexed without binding an index buffer.
    IndexedWithoutIndexBuffer,
    /// Dispatches inside the rendering scope.
    DispatchInRendering,
}

struct WrongDraws {
    pipeline: GraphicsPipeline,
    misuse: Misuse,
}

impl TypedPass for WrongDraws {
    type Handles = BufferRead;
    fn name(&self) -> &str {
        "wrong draws"
    }
    fn register(&mut self, registry: &mut Registry) -> BufferRead {
        let args = registry.buffer("draw args");
        let color = registry.create_image("color", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT));
        registry.color_attachment(color, AttachmentLoad::ClearColor([0.0; 4]));
        registry.side_effect();
        registry.indirect_buffer(args)
    }
    fn execute(&mut self, _args: &BufferRead, context: &mut ExecuteContext) {
        if self.misuse == Misuse::DrawOutsideRendering {
            context.draw(3, 1);
        }
    }
    fn record_draw(&mut self, &args: &BufferRead, context: &mut ExecuteContext) {
        context.bind_graphics(&self.pipeline, &[]);
        context.push_constants(&[BANDS, COLUMNS]);
        if self.misuse == Misuse::DispatchInRendering {
            context.dispatch(1, 1, 1);
        }
        if self.misuse == Misuse::IndexBufferDeclaredIndirect {
            context.bind_index_buffer(args, 0, vk::IndexType::UINT32);
        }
        context.draw_indexed(0..6, 0, 0..1);
    }
}

#[test]
fn draws_with_wrong_declarations_or_outside_rendering_are_errors() {
    let Some(device) = gpu_test_context() else { return };
    let misuses = [
        Misuse::IndexBufferDeclaredIndirect,
        Misuse::DrawOutsideRendering,
        Misuse::IndexedWithoutIndexBuffer,
        Misuse::DispatchInRendering,
    ];
    for misuse in misuses {
        let mut graph = RenderGraph::new(Arc::clone(&device), GRID_EXTENT).expect("graph creates");
        graph.add_typed_pass(UploadArgs);
        graph.add_typed_pass(WrongDraws { pipeline: band_pipeline(&device), misuse });
        let error = graph.execute_frame().expect_err("misuse is reported");
        let expected = match misuse {
            Misuse::IndexBufferDeclaredIndirect => {
                matches!(&error, GraphError::InvalidAccess { pass, resource, reason }
                if pass == "wrong draws" && resource == "draw args" && reason.contains("index_buffer"))
            }
            Misuse::DrawOutsideRendering => matches!(&error, GraphError::InvalidCommand { pass, reason }
                if pass == "wrong draws" && reason.contains("record_draw")),
            Misuse::IndexedWithoutIndexBuffer => matches!(&error, GraphError::InvalidCommand { pass, reason }
                if pass == "wrong draws" && reason.contains("bind_index_buffer")),
            Misuse::DispatchInRendering => matches!(&error, GraphError::InvalidCommand { pass, reason }
                if pass == "wrong draws" && reason.contains("dispatches")),
        };
        assert!(expected, "{misuse:?}: {error}");
        drop(graph);
    }
    assert_no_validation_messages(&device);
}

/// Fills `user filled` with a pipeline built from SPIR-V bytes loaded at run time.
struct UserShaderFill {
    pipeline: render_graph::ComputePipeline,
}

impl TypedPass for UserShaderFill {
    type Handles = BufferWrite;
    fn name(&self) -> &str {
        "user shader"
    }
    fn register(&mut self, registry: &mut Registry) -> BufferWrite {
        let target = registry.create_buffer("user filled", BufferDesc { size: PROBE_BYTES });
        registry.write_storage_buffer(target, COMPUTE)
    }
    fn execute(&mut self, target: &BufferWrite, context: &mut ExecuteContext) {
        context.bind_compute(&self.pipeline, &[Binding::buffer(target)]);
        context.push_constant_bytes(&[42, 0, 0, 0, 0, 0, 0, 0]);
        context.dispatch(PROBE_ELEMENTS / PROBE_WORKGROUP, 1, 1);
    }
}

#[test]
fn a_shader_loaded_from_a_spv_file_runs_in_a_pass() {
    let Some(device) = gpu_test_context() else { return };
    // Any .spv file a user compiled with glslc; here one of the engine's, read as bytes.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../shaders/spirv/probes/probe_fill_buffer.comp.spv");
    let bytes = std::fs::read(path).expect("the .spv file exists");
    let shader = shaders::Shader::from_bytes("mine.comp", shaders::Stage::Compute, &bytes).expect("valid SPIR-V");
    let pipeline = render_graph::ComputePipeline::new(
        &device,
        "user shader",
        shader.words(),
        &[render_graph::BindingKind::StorageBuffer],
        8,
    )
    .expect("the pipeline builds");
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    graph.add_typed_pass(UserShaderFill { pipeline });
    let report = add_probe(
        &device,
        &mut graph,
        ProbePass::new("check", vec![read("user filled", ProbeKind::Buffer)], &pipelines),
    )
    .expect("reads");
    graph.execute_frame().expect("frame runs");
    graph.wait_idle().expect("frame finishes");
    assert_eq!(report.read_u32().expect("maps"), filled(42));
    drop(graph);
    assert_no_validation_messages(&device);
}

/// Uploads to a buffer it declared as a storage write, and asks for an image it never
/// declared (another pass's handle).
struct WrongUpload {
    other: Lent<render_graph::ImageRead>,
    seen: Arc<Mutex<Option<GraphError>>>,
}

impl TypedPass for WrongUpload {
    type Handles = BufferWrite;
    fn name(&self) -> &str {
        "wrong upload"
    }
    fn register(&mut self, registry: &mut Registry) -> BufferWrite {
        let target = registry.create_buffer("upload target", BufferDesc { size: 16 });
        registry.image("never declared");
        registry.side_effect();
        registry.write_storage_buffer(target, COMPUTE)
    }
    fn prepare(&mut self, target: &BufferWrite, context: &mut PrepareContext) {
        if let Err(error) = context.upload_buffer(target, 0, &[1, 2, 3, 4]) {
            context.fail(error);
        }
    }
    fn execute(&mut self, _target: &BufferWrite, context: &mut ExecuteContext) {
        *self.seen.lock().expect("not poisoned") = context.try_image(borrowed(&self.other)).err();
    }
}

#[test]
fn uploads_and_lookups_of_undeclared_or_mismatched_resources_are_errors() {
    let Some(device) = gpu_test_context() else { return };
    let seen = Arc::new(Mutex::new(None));
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    let image = ImageDesc::new(vk::Format::R32_UINT, ImageSize::OUTPUT);
    struct Maker(ImageDesc);
    impl Pass for Maker {
        fn name(&self) -> &str {
            "maker"
        }
        fn register(&mut self, registry: &mut Registry) {
            let image = registry.create_image("never declared", self.0);
            registry.write_storage_image(image, COMPUTE);
            registry.side_effect();
        }
        fn execute(&mut self, _context: &mut ExecuteContext) {}
    }
    graph.add_pass(Maker(image));
    let other = Lent::default();
    graph.add_typed_pass(Lender::image("never declared", &other));
    graph.add_typed_pass(WrongUpload { other, seen: Arc::clone(&seen) });
    let error = graph.execute_frame().expect_err("the upload is refused");
    assert!(
        matches!(&error, GraphError::InvalidAccess { pass, resource, reason }
            if pass == "wrong upload" && resource == "upload target" && reason.contains("TransferWrite")),
        "{error}"
    );
    let seen = seen.lock().expect("not poisoned").take();
    assert!(
        matches!(&seen, Some(GraphError::UndeclaredAccess { pass, resource })
            if pass == "wrong upload" && resource == "never declared"),
        "{seen:?}"
    );
    drop(graph);
    assert_no_validation_messages(&device);
}

#[test]
fn a_pipeline_whose_layout_does_not_match_its_shader_is_an_error_naming_binding_and_kinds() {
    use render_graph::{BindingKind, ComputePipeline};
    let Some(device) = gpu_test_context() else { return };
    let words = shaders::PATTERN_COMP.words();
    // pattern.comp: an rgba8 storage image at binding 0, push constants `uvec2 extent`.
    ComputePipeline::new(&device, "pattern", words, &[BindingKind::StorageImage], 8).expect("the right layout");
    let wrong_kind = ComputePipeline::new(&device, "pattern", words, &[BindingKind::UniformBuffer], 8);
    let error = wrong_kind.err().expect("a uniform buffer where the shader has an image");
    assert!(
        matches!(&error, GraphError::ShaderMismatch { pipeline, stage: "compute", binding: Some(0), reason }
            if pipeline == "pattern" && reason.contains("StorageImage") && reason.contains("UniformBuffer")),
        "{error}"
    );
    let missing = ComputePipeline::new(&device, "pattern", words, &[], 8).err().expect("no binding 0");
    assert!(matches!(&missing, GraphError::ShaderMismatch { binding: Some(0), .. }), "{missing}");
    assert!(missing.to_string().contains("declares 0 binding(s)"), "{missing}");
    let small = ComputePipeline::new(&device, "pattern", words, &[BindingKind::StorageImage], 4).err().expect("4 < 8");
    assert!(
        matches!(&small, GraphError::ShaderMismatch { binding: None, reason, .. } if reason.contains("take 8 bytes")),
        "{small}"
    );
    let garbage = [shaders::SPIRV_MAGIC, 0x0001_0500, 0, 99, 0, 0xdead_beef];
    let unreadable = ComputePipeline::new(&device, "garbage", &garbage, &[], 0).err().expect("not SPIR-V");
    assert!(
        matches!(&unreadable, GraphError::ShaderMismatch { pipeline, .. } if pipeline == "garbage"),
        "{unreadable}"
    );
    let too_many = ComputePipeline::new(&device, "pattern", words, &[BindingKind::StorageImage; 17], 8);
    assert!(too_many.is_err(), "more bindings than a pipeline takes is an error, not a panic");
    assert_no_validation_messages(&device);
}

/// Runs the noise shader (a `writeonly` storage image at binding 0) on another pass's r32ui
/// image, declared as a storage read (a read handle) or write.
struct Noise {
    pipeline: render_graph::ComputePipeline,
    write: bool,
}

/// The image as [`Noise`] declared it.
enum NoiseTarget {
    Read(render_graph::ImageRead),
    Write(ImageWrite),
}

impl TypedPass for Noise {
    type Handles = NoiseTarget;
    fn name(&self) -> &str {
        "noise"
    }
    fn register(&mut self, registry: &mut Registry) -> NoiseTarget {
        let image = registry.image("probe image");
        registry.side_effect();
        if self.write {
            NoiseTarget::Write(registry.write_storage_image(image, COMPUTE))
        } else {
            NoiseTarget::Read(registry.read_storage_image(image, COMPUTE))
        }
    }
    fn execute(&mut self, target: &NoiseTarget, context: &mut ExecuteContext) {
        let binding = match target {
            NoiseTarget::Read(image) => Binding::image(*image),
            NoiseTarget::Write(image) => Binding::image(image),
        };
        context.bind_compute(&self.pipeline, &[binding]);
        context.dispatch(EXTENT.width.div_ceil(8), EXTENT.height.div_ceil(8), 1);
    }
}

#[test]
fn a_shader_write_declared_as_a_read_is_an_error_naming_pass_binding_and_resource() {
    let Some(device) = gpu_test_context() else { return };
    let noise = || {
        render_graph::ComputePipeline::new(
            &device,
            "noise",
            shaders::NOISE_COMP.words(),
            &[render_graph::BindingKind::StorageImage],
            0,
        )
        .expect("pipeline")
    };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    graph.add_typed_pass(ProbePass::new("make", vec![fill("probe image", ProbeKind::Image, 3)], &pipelines));
    graph.add_typed_pass(Noise { pipeline: noise(), write: false });
    let error = graph.execute_frame().expect_err("a writeonly binding declared as a read");
    assert!(
        matches!(&error, GraphError::BindingMismatch { pass, slot: 0, reason }
            if pass == "noise" && reason.contains("writeonly") && reason.contains("`probe image`")),
        "{error}"
    );
    drop(graph);
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    graph.add_typed_pass(ProbePass::new("make", vec![fill("probe image", ProbeKind::Image, 3)], &pipelines));
    graph.add_typed_pass(Noise { pipeline: noise(), write: true });
    graph.execute_frame().expect("declared as the write it is");
    graph.wait_idle().expect("idle");
    drop(graph);
    assert_no_validation_messages(&device);
}

/// Binds a buffer it declared as a storage read (a read handle) to the probe update shader,
/// whose binding 0 has no `readonly`: the shader may write it.
struct ReadIntoWritable {
    pipelines: Arc<ProbePipelines>,
}

impl TypedPass for ReadIntoWritable {
    /// The buffer read, and the report.
    type Handles = (BufferRead, BufferWrite);
    fn name(&self) -> &str {
        "read into writable"
    }
    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let source = registry.buffer("probe buffer");
        let report = registry.buffer(&ProbePass::report_name("read into writable"));
        (registry.read_storage_buffer(source, COMPUTE), registry.write_storage_buffer(report, COMPUTE))
    }
    fn execute(&mut self, (source, report): &Self::Handles, context: &mut ExecuteContext) {
        context.bind_compute(&self.pipelines.update_buffer, &[Binding::buffer(*source), Binding::buffer(report)]);
        context.push_constants(&[1, 0]);
        context.dispatch(PROBE_ELEMENTS / PROBE_WORKGROUP, 1, 1);
    }
}

#[test]
fn a_read_handle_bound_where_the_shader_may_write_is_a_binding_mismatch_naming_pass_binding_and_resource() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let report = ReadbackBuffer::new(&device, "report read into writable", PROBE_BYTES).expect("allocates");
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    graph.import_buffer("report read into writable", report.shared());
    graph.add_typed_pass(ProbePass::new("make", vec![fill("probe buffer", ProbeKind::Buffer, 3)], &pipelines));
    graph.add_typed_pass(ReadIntoWritable { pipelines: Arc::clone(&pipelines) });
    let error = graph.execute_frame().expect_err("a read handle at a slot the shader may write");
    assert!(
        matches!(&error, GraphError::BindingMismatch { pass, slot: 0, reason }
            if pass == "read into writable" && reason.contains("read handle") && reason.contains("`probe buffer`")),
        "{error}"
    );
    assert_eq!(error.to_string().split(':').next(), Some("pass `read into writable`, binding 0"), "{error}");
    graph.wait_idle().expect("the graph is usable after the failed frame");
    drop(graph);
    assert_no_validation_messages(&device);
}

/// Uploads known words into a buffer it creates; its handle comes back from `register`.
struct TypedUpload;

impl TypedPass for TypedUpload {
    type Handles = BufferWrite;

    fn name(&self) -> &str {
        "typed upload"
    }

    fn register(&mut self, registry: &mut Registry) -> BufferWrite {
        let buffer = registry.create_buffer("typed data", BufferDesc { size: PROBE_BYTES });
        registry.write_buffer(buffer, Access::TransferWrite)
    }

    fn prepare(&mut self, buffer: &BufferWrite, context: &mut PrepareContext) {
        let words: Vec<u32> = (0..PROBE_ELEMENTS).map(|index| index * 3 + 1).collect();
        context.upload_buffer(buffer, 0, &words_to_bytes(&words)).expect("declared as a transfer write");
    }
}

#[test]
fn a_typed_pass_gets_the_handles_its_register_returned() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    graph.add_typed_pass(TypedUpload);
    let report = add_probe(
        &device,
        &mut graph,
        ProbePass::new("reader", vec![read("typed data", ProbeKind::Buffer)], &pipelines),
    );
    assert_eq!(graph.execution_order().expect("compiles"), ["typed upload", "reader"]);
    graph.execute_frame().expect("frame runs");
    graph.wait_idle().expect("frame finishes");
    let expected: Vec<u32> = (0..PROBE_ELEMENTS).map(|index| index * 3 + 1).collect();
    assert_eq!(report.expect("reads").read_u32().expect("maps"), expected);
    drop(graph);
    assert_no_validation_messages(&device);
}

/// A frame parameter of the test: the value [`ParamUpload`] writes.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Fill(u32);

/// Uploads [`Fill`]'s value in `prepare` into every word of `param data`, and records the
/// value `execute` sees.
struct ParamUpload {
    seen: Arc<Mutex<Vec<u32>>>,
}

impl TypedPass for ParamUpload {
    type Handles = BufferWrite;

    fn name(&self) -> &str {
        "param upload"
    }

    fn register(&mut self, registry: &mut Registry) -> BufferWrite {
        let buffer = registry.create_buffer("param data", BufferDesc { size: PROBE_BYTES });
        registry.write_buffer(buffer, Access::TransferWrite)
    }

    fn prepare(&mut self, target: &BufferWrite, context: &mut PrepareContext) {
        let fill = match context.require_param::<Fill>() {
            Ok(fill) => *fill,
            Err(error) => return context.fail(error),
        };
        let words = vec![fill.0; PROBE_ELEMENTS as usize];
        context.upload_buffer(target, 0, &words_to_bytes(&words)).expect("declared as a transfer write");
    }

    fn execute(&mut self, _target: &BufferWrite, context: &mut ExecuteContext) {
        let seen = context.param::<Fill>().map_or(u32::MAX, |fill| fill.0);
        self.seen.lock().expect("not poisoned").push(seen);
    }
}

#[test]
fn frame_parameters_reach_prepare_and_execute_and_a_missing_one_names_pass_and_type() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    graph.add_typed_pass(ParamUpload { seen: Arc::clone(&seen) });
    let report = add_probe(
        &device,
        &mut graph,
        ProbePass::new("reader", vec![read("param data", ProbeKind::Buffer)], &pipelines),
    )
    .expect("reads");
    let error = graph.execute_frame().expect_err("no Fill was set");
    assert!(
        matches!(&error, GraphError::MissingParam { pass, param } if pass == "param upload" && param.ends_with("Fill")),
        "{error}"
    );
    // The failed frame is recorded but not submitted: execute saw no value.
    assert_eq!(std::mem::take(&mut *seen.lock().expect("not poisoned")), [u32::MAX]);
    for value in [5, 9, 9] {
        graph.set_param(Fill(value));
        graph.execute_frame().expect("frame runs");
        graph.wait_idle().expect("frame finishes");
        assert_eq!(report.read_u32().expect("maps"), vec![value; PROBE_ELEMENTS as usize], "prepare saw {value}");
    }
    assert_eq!(*seen.lock().expect("not poisoned"), [5, 9, 9], "execute saw the frame's value");
    assert_eq!(graph.param::<Fill>(), Some(&Fill(9)));
    if let Some(fill) = graph.param_mut::<Fill>() {
        fill.0 = 11;
    }
    assert_eq!(graph.remove_param::<Fill>(), Some(Fill(11)));
    assert!(matches!(graph.execute_frame(), Err(GraphError::MissingParam { .. })), "removed, it is missing again");
    graph.wait_idle().expect("the graph is usable after the failed frame");
    drop(graph);
    assert_no_validation_messages(&device);
}
