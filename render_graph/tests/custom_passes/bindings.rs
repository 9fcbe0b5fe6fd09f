//! Shaders and their bindings: SPIR-V loaded at run time, uploads and lookups of undeclared
//! resources, and layouts or accesses that do not match what the shader does.

use super::*;

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
