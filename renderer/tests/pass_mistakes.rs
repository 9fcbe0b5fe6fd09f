//! The mistakes a user writing passes for the engine's frame makes, one test each: what the
//! graph says (the dropped pass's message, naming the pass and where it was added), and that
//! the engine's frame is still drawn with its answers unchanged (the image, the host's and the
//! GPU's `visibility_bits` and the cull counts compared with a frame without the faulty pass).
//! On lavapipe with validation (zero messages).

mod frame_harness;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use culling::CullingBackend;
use frame_harness::{assert_same_frames, draw, dropped_message, fill_pipeline, passes, Marker, UserCompute};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{
    AttachmentLoad, Binding, BindingKind, ComputePipeline, ExecuteContext, ImageRead, Registry, ShaderStage, TypedPass,
};
use renderer::{points, COLOR, DEPTH_PREPASS, HIZ_DEPTH, VISIBILITY_BITS};

const FRAMES: u32 = 3;
const COMPUTE: ShaderStage = ShaderStage::Compute;

#[test]
fn a_user_pass_writing_visibility_bits_is_refused_naming_both_passes_and_the_gpu_answer_is_unchanged() {
    let Some(device) = gpu_test_context() else { return };
    let baseline = draw(&device, CullingBackend::Gpu, Vec::new(), FRAMES);
    let faulty = draw(
        &device,
        CullingBackend::Gpu,
        passes(|graph| {
            let pass = UserCompute {
                name: "hide everything",
                pipeline: fill_pipeline(graph.device())?,
                declare: |registry: &mut Registry| {
                    let bits = registry.buffer(VISIBILITY_BITS);
                    vec![Binding::buffer(&registry.write_storage_buffer(bits, COMPUTE))]
                },
                groups: 1,
            };
            graph.add_typed_pass_at(points::AFTER_GEOMETRY, pass)
        }),
        FRAMES,
    );
    let message = dropped_message(&faulty);
    for wanted in ["`hide everything`", "pass_mistakes.rs:", "writes `visibility_bits`", "belongs to the engine"] {
        assert!(message.contains(wanted), "{wanted}: {message}");
    }
    assert!(message.contains("its pass `gpu cull"), "the engine's pass that writes it: {message}");
    assert!(message.contains("claim_engine_write"), "the way to ask: {message}");
    assert_same_frames(&baseline, &faulty);
    assert_no_validation_messages(&device);
}

#[test]
fn a_misspelt_insertion_point_drops_its_group_naming_the_nearest_point_and_the_frame_is_unchanged() {
    let Some(device) = gpu_test_context() else { return };
    let baseline = draw(&device, CullingBackend::Gpu, Vec::new(), FRAMES);
    let mut setup = passes(|graph| {
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, Marker("fog"))?;
        graph.add_typed_pass_at("after geometyr", Marker("outline"))
    });
    setup.extend(passes(|graph| graph.add_typed_pass_at(points::BEFORE_OUTPUT, Marker("kept"))));
    let faulty = draw(&device, CullingBackend::Gpu, setup, FRAMES);
    let message = dropped_message(&faulty);
    for wanted in ["`outline`", "pass_mistakes.rs:", "`after geometyr`", "did you mean `after geometry`?", "`fog`"] {
        assert!(message.contains(wanted), "{wanted}: {message}");
    }
    let ran: Vec<&str> = faulty.report.user_passes.iter().map(|pass| pass.name.as_str()).collect();
    assert_eq!(ran, ["kept"], "the other closure's pass runs; the failed group's do not");
    assert_same_frames(&baseline, &faulty);
    assert_no_validation_messages(&device);
}

#[test]
fn passes_named_like_another_are_dropped_naming_where_both_were_added() {
    let Some(device) = gpu_test_context() else { return };
    let baseline = draw(&device, CullingBackend::Gpu, Vec::new(), FRAMES);
    let mut setup = passes(|graph| graph.add_typed_pass_at(points::AFTER_GEOMETRY, Marker("geometry")));
    setup.extend(passes(|graph| graph.add_typed_pass_at(points::AFTER_GEOMETRY, Marker("fog"))));
    setup.extend(passes(|graph| graph.add_typed_pass_at(points::BEFORE_OUTPUT, Marker("fog"))));
    let faulty = draw(&device, CullingBackend::Gpu, setup, FRAMES);
    let dropped = &faulty.report.dropped_passes;
    assert_eq!(dropped.len(), 2, "{dropped:?}");
    let engine_twin = dropped.iter().find(|message| message.contains("`geometry`")).expect("the engine's name");
    assert!(engine_twin.contains("two passes are named `geometry`"), "{engine_twin}");
    assert!(
        engine_twin.contains("geometry.rs") || engine_twin.contains("gpu_culled.rs"),
        "the engine's site: {engine_twin}"
    );
    assert!(engine_twin.matches("pass_mistakes.rs:").count() >= 2, "the user's site: {engine_twin}");
    let user_twin = dropped.iter().find(|message| message.contains("`fog`")).expect("two user passes named alike");
    assert!(user_twin.contains(" and at "), "both sites: {user_twin}");
    let ran: Vec<&str> = faulty.report.user_passes.iter().map(|pass| pass.name.as_str()).collect();
    assert_eq!(ran, ["fog"], "the first of the two runs");
    assert_same_frames(&baseline, &faulty);
    assert_no_validation_messages(&device);
}

/// Samples `depth_prepass`, but binds it to a pipeline whose binding 0 is a storage image.
struct WrongKind {
    pipeline: ComputePipeline,
}

impl TypedPass for WrongKind {
    type Handles = ImageRead;
    fn name(&self) -> &str {
        "wrong kind"
    }
    fn register(&mut self, registry: &mut Registry<'_>) -> ImageRead {
        registry.side_effect();
        let depth = registry.image(DEPTH_PREPASS);
        registry.sample(depth, COMPUTE)
    }
    fn execute(&mut self, depth: &ImageRead, context: &mut ExecuteContext<'_>) {
        context.bind_compute(&self.pipeline, &[Binding::image(*depth)]);
        context.dispatch(1, 1, 1);
    }
}

#[test]
fn a_pipeline_unlike_its_shader_and_a_binding_of_the_wrong_kind_drop_their_passes_and_the_frame_is_unchanged() {
    let Some(device) = gpu_test_context() else { return };
    let baseline = draw(&device, CullingBackend::Gpu, Vec::new(), FRAMES);
    let mut setup = passes(|graph| {
        // The shader's binding 0 is a storage buffer.
        let kinds = [BindingKind::UniformBuffer];
        let pipeline =
            ComputePipeline::new(graph.device(), "uniform fill", shaders::PROBE_FILL_BUFFER_COMP.words(), &kinds, 8)?;
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, WrongKind { pipeline })
    });
    setup.extend(passes(|graph| {
        let kinds = [BindingKind::StorageImage];
        let image_shader = shaders::PROBE_FILL_IMAGE_COMP.words();
        let pipeline = ComputePipeline::new(graph.device(), "storage fill", image_shader, &kinds, 8)?;
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, WrongKind { pipeline })
    }));
    let faulty = draw(&device, CullingBackend::Gpu, setup, FRAMES);
    let dropped = &faulty.report.dropped_passes;
    assert_eq!(dropped.len(), 2, "{dropped:?}");
    assert!(dropped[0].contains("pipeline `uniform fill`, compute shader, binding 0"), "{}", dropped[0]);
    assert!(dropped[0].contains("user passes of RenderSetup::passes[0] were not added"), "{}", dropped[0]);
    // Dropped after its first frame, which the engine drew all the same.
    assert!(dropped[1].contains("`wrong kind`") && dropped[1].contains("binding 0"), "{}", dropped[1]);
    assert!(dropped[1].contains("pass_mistakes.rs:"), "{}", dropped[1]);
    assert_same_frames(&baseline, &faulty);
    assert_no_validation_messages(&device);
}

/// Reads `hiz_depth` (optionally, or not) and notes whether it existed.
struct ReadsPyramid {
    name: &'static str,
    optional: bool,
    seen: Arc<AtomicU32>,
}

impl TypedPass for ReadsPyramid {
    type Handles = ImageRead;
    fn name(&self) -> &str {
        self.name
    }
    fn register(&mut self, registry: &mut Registry<'_>) -> ImageRead {
        registry.side_effect();
        let pyramid = if self.optional { registry.optional_image(HIZ_DEPTH) } else { registry.image(HIZ_DEPTH) };
        registry.sample(pyramid, COMPUTE)
    }
    fn execute(&mut self, pyramid: &ImageRead, context: &mut ExecuteContext<'_>) {
        let bit = if context.exists(*pyramid) { 2 } else { 1 };
        self.seen.fetch_or(bit, Ordering::Relaxed);
    }
}

#[test]
fn a_resource_of_gpu_culling_alone_drops_the_pass_on_the_cpu_and_an_optional_read_serves_both() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        let baseline = draw(&device, backend, Vec::new(), FRAMES);
        let (required, optional) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let (required_seen, optional_seen) = (Arc::clone(&required), Arc::clone(&optional));
        let mut setup = passes(move |graph| {
            let pass = ReadsPyramid { name: "grass", optional: false, seen: required_seen };
            graph.add_typed_pass_at(points::AFTER_DEPTH_PREPASS, pass)
        });
        setup.extend(passes(move |graph| {
            let pass = ReadsPyramid { name: "grass either way", optional: true, seen: optional_seen };
            graph.add_typed_pass_at(points::AFTER_DEPTH_PREPASS, pass)
        }));
        let drawn = draw(&device, backend, setup, FRAMES);
        if backend == CullingBackend::Cpu {
            let message = dropped_message(&drawn);
            assert!(message.contains("`grass`") && message.contains("`hiz_depth`"), "{message}");
            assert!(message.contains("which no pass creates"), "{message}");
            assert_eq!(required.load(Ordering::Relaxed), 0, "dropped before it ran");
            assert_eq!(optional.load(Ordering::Relaxed), 1, "runs, and hears the pyramid is absent");
        } else {
            assert!(drawn.report.dropped_passes.is_empty(), "{:?}", drawn.report.dropped_passes);
            assert_eq!(required.load(Ordering::Relaxed), 2);
            assert_eq!(optional.load(Ordering::Relaxed), 2, "runs, and hears the pyramid is there");
        }
        assert_same_frames(&baseline, &drawn);
    }
    assert_no_validation_messages(&device);
}

#[test]
fn a_misspelt_resource_suggests_the_name_it_begins() {
    let Some(device) = gpu_test_context() else { return };
    let baseline = draw(&device, CullingBackend::Gpu, Vec::new(), 2);
    let faulty = draw(
        &device,
        CullingBackend::Gpu,
        passes(|graph| {
            let pass = UserCompute {
                name: "grass",
                pipeline: fill_pipeline(graph.device())?,
                declare: |registry: &mut Registry| {
                    let pyramid = registry.image("hiz");
                    registry.sample(pyramid, COMPUTE);
                    Vec::new()
                },
                groups: 1,
            };
            graph.add_typed_pass_at(points::AFTER_DEPTH_PREPASS, pass)
        }),
        2,
    );
    let message = dropped_message(&faulty);
    assert!(message.contains("`hiz`") && message.contains("(did you mean `hiz_depth`?)"), "{message}");
    assert_same_frames(&baseline, &faulty);
    assert_no_validation_messages(&device);
}

#[test]
fn a_pass_before_the_cull_reading_the_pyramid_is_an_error_naming_its_writer_not_a_silent_move() {
    let Some(device) = gpu_test_context() else { return };
    let baseline = draw(&device, CullingBackend::Gpu, Vec::new(), FRAMES);
    let seen = Arc::new(AtomicU32::new(0));
    let faulty = draw(
        &device,
        CullingBackend::Gpu,
        passes(|graph| {
            let pass = ReadsPyramid { name: "early grass", optional: false, seen };
            graph.add_typed_pass_at(points::BEFORE_CULL, pass)
        }),
        FRAMES,
    );
    let message = dropped_message(&faulty);
    for wanted in ["`early grass`", "`before cull`", "reads `hiz_depth`", "pass `hi-z build` writes only later"] {
        assert!(message.contains(wanted), "{wanted}: {message}");
    }
    assert!(message.contains("history_image"), "the way out: {message}");
    assert_same_frames(&baseline, &faulty);
    assert_no_validation_messages(&device);
}

/// Clears `color` after the geometry (drawing nothing).
struct Wipe;

impl TypedPass for Wipe {
    type Handles = ();
    fn name(&self) -> &str {
        "wipe"
    }
    fn register(&mut self, registry: &mut Registry<'_>) {
        let color = registry.image(COLOR);
        registry.color_attachment(color, AttachmentLoad::ClearColor([1.0, 0.0, 1.0, 1.0]));
    }
}

#[test]
fn a_user_pass_clearing_the_colour_after_the_geometry_is_dropped_and_the_image_is_unchanged() {
    let Some(device) = gpu_test_context() else { return };
    let baseline = draw(&device, CullingBackend::Gpu, Vec::new(), FRAMES);
    let faulty = draw(
        &device,
        CullingBackend::Gpu,
        passes(|graph| graph.add_typed_pass_at(points::AFTER_GEOMETRY, Wipe)),
        FRAMES,
    );
    let message = dropped_message(&faulty);
    assert!(message.contains("`wipe`") && message.contains("clears the engine's image"), "{message}");
    assert_same_frames(&baseline, &faulty);
    assert_no_validation_messages(&device);
}

/// Panics in `execute` of frame `at`; notes every frame number it saw before.
struct PanicsAt {
    at: u64,
    seen: Arc<Mutex<Vec<u64>>>,
}

impl TypedPass for PanicsAt {
    type Handles = ();
    fn name(&self) -> &str {
        "fragile"
    }
    fn register(&mut self, registry: &mut Registry<'_>) {
        registry.side_effect();
    }
    fn execute(&mut self, _: &(), context: &mut ExecuteContext<'_>) {
        assert_ne!(context.frame_index(), self.at, "the pass's own bug");
        self.seen.lock().expect("not poisoned").push(context.frame_index());
    }
}

/// Notes every frame number its `prepare` sees.
struct Counts(Arc<AtomicU64>, Arc<Mutex<Vec<u64>>>);

impl TypedPass for Counts {
    type Handles = ();
    fn name(&self) -> &str {
        "counts"
    }
    fn register(&mut self, registry: &mut Registry<'_>) {
        registry.side_effect();
    }
    fn prepare(&mut self, _: &(), context: &mut render_graph::PrepareContext<'_>) {
        self.0.fetch_add(1, Ordering::Relaxed);
        self.1.lock().expect("not poisoned").push(context.frame_index());
    }
}

#[test]
fn a_user_pass_that_panics_is_dropped_the_frame_is_drawn_and_counted_once() {
    let Some(device) = gpu_test_context() else { return };
    const PANIC_FRAMES: u32 = 4;
    let baseline = draw(&device, CullingBackend::Gpu, Vec::new(), PANIC_FRAMES);
    let (fragile_seen, counted) = (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(Vec::new())));
    let prepares = Arc::new(AtomicU64::new(0));
    let (fragile, count, prepared) = (Arc::clone(&fragile_seen), Arc::clone(&counted), Arc::clone(&prepares));
    let mut setup =
        passes(move |graph| graph.add_typed_pass_at(points::AFTER_GEOMETRY, PanicsAt { at: 1, seen: fragile }));
    setup.extend(passes(move |graph| graph.add_typed_pass_at(points::BEFORE_OUTPUT, Counts(prepared, count))));
    let faulty = draw(&device, CullingBackend::Gpu, setup, PANIC_FRAMES);
    let message = dropped_message(&faulty);
    assert!(
        message.contains("`fragile`") && message.contains("panicked") && message.contains("the pass's own bug"),
        "{message}"
    );
    assert_eq!(*fragile_seen.lock().unwrap(), [0], "it ran once, then panicked in frame 1 and was dropped");
    // The frame it panicked in was drawn and counted once: no frame number repeats, and the
    // passes beside it prepared exactly once per frame.
    assert_eq!(*counted.lock().unwrap(), [0, 1, 2, 3]);
    assert_eq!(prepares.load(Ordering::Relaxed), u64::from(PANIC_FRAMES));
    assert_same_frames(&baseline, &faulty);
    assert_no_validation_messages(&device);
}
