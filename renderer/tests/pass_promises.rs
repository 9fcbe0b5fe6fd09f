//! What the graph checks so that a pass does what its author meant: work that does nothing
//! is a warning (logged once per pass, counted in the report), a buffer smaller than the
//! shader's block and a shader writing a binding declared as a read are errors that drop the
//! pass (the engine's frame unchanged), a binding the shader only reads needs no qualifier,
//! and the view a pass reads on the host has the image's size. On lavapipe with validation.

mod frame_harness;

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use culling::CullingBackend;
use frame_harness::{assert_same_frames, draw, dropped_message, passes, test_pipeline, UserCompute, CAPACITY};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{
    vk, Binding, BindingKind, BufferDesc, ExecuteContext, Registry, RenderGraph, ShaderStage, TypedPass,
};
use renderer::{points, AddPasses, FrameTarget, FrameView, OBJECT_RECORDS};

const FRAMES: u32 = 3;
const COMPUTE: ShaderStage = ShaderStage::Compute;
const FIXED_ARRAY: &[u8] = include_bytes!("shaders/fixed_array.comp.spv");
const READ_UNQUALIFIED: &[u8] = include_bytes!("shaders/read_unqualified.comp.spv");
const COUNT_UNQUALIFIED: &[u8] = include_bytes!("shaders/count_unqualified.comp.spv");

/// A user pass running the shader `spirv` on `object_records` (declared as a read) and a
/// buffer of its own, `groups` workgroups.
fn records_pass(name: &'static str, spirv: &'static [u8], groups: u32) -> Vec<AddPasses> {
    passes(move |graph| {
        let kinds = [BindingKind::StorageBuffer, BindingKind::StorageBuffer];
        let pass = UserCompute {
            name,
            pipeline: test_pipeline(graph.device(), name, spirv, &kinds)?,
            declare: move |registry: &mut Registry| {
                let records = registry.buffer(OBJECT_RECORDS);
                let records = registry.read_storage_buffer(records, COMPUTE);
                let copy = registry.create_buffer(&format!("{name} copy"), BufferDesc { size: 64 * 4 });
                let copy = registry.write_storage_buffer(copy, COMPUTE);
                registry.side_effect();
                vec![Binding::buffer(records), Binding::buffer(&copy)]
            },
            groups,
        };
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, pass)
    })
}

#[test]
fn a_dispatch_of_nothing_is_a_warning_counted_once_a_frame_and_the_pass_stays() {
    let Some(device) = gpu_test_context() else { return };
    let baseline = draw(&device, CullingBackend::Gpu, Vec::new(), FRAMES);
    let warned = draw(&device, CullingBackend::Gpu, records_pass("empty", READ_UNQUALIFIED, 0), FRAMES);
    assert!(warned.report.dropped_passes.is_empty(), "a warning drops nothing: {:?}", warned.report.dropped_passes);
    assert_eq!(warned.report.pass_warnings, u64::from(FRAMES), "one zero dispatch a frame");
    assert_eq!(warned.report.user_passes.len(), 1, "the pass still runs");
    assert_eq!(warned.report.user_passes[0].name, "empty");
    assert_same_frames(&baseline, &warned);
    assert_no_validation_messages(&device);
}

#[test]
fn a_binding_the_shader_only_reads_needs_no_qualifier_and_one_it_updates_must_be_declared_written() {
    let Some(device) = gpu_test_context() else { return };
    let baseline = draw(&device, CullingBackend::Gpu, Vec::new(), FRAMES);
    let reader = draw(&device, CullingBackend::Gpu, records_pass("copy records", READ_UNQUALIFIED, 1), FRAMES);
    assert!(reader.report.dropped_passes.is_empty(), "{:?}", reader.report.dropped_passes);
    assert_same_frames(&baseline, &reader);
    // The shader adds to `object_records` atomically: declared as a read, it would rewrite
    // the engine's records behind the graph's back.
    let writer = draw(&device, CullingBackend::Gpu, records_pass("count records", COUNT_UNQUALIFIED, 1), FRAMES);
    let message = dropped_message(&writer);
    for wanted in ["`count records`", "binding 0", "stores to it or updates it atomically", "`object_records`"] {
        assert!(message.contains(wanted), "{wanted}: {message}");
    }
    assert_same_frames(&baseline, &writer);
    assert_no_validation_messages(&device);
}

#[test]
fn a_buffer_smaller_than_the_shaders_array_is_refused_naming_both_sizes() {
    let Some(device) = gpu_test_context() else { return };
    let baseline = draw(&device, CullingBackend::Gpu, Vec::new(), FRAMES);
    let faulty = draw(
        &device,
        CullingBackend::Gpu,
        passes(|graph| {
            let pass = UserCompute {
                name: "particles",
                pipeline: test_pipeline(graph.device(), "particles", FIXED_ARRAY, &[BindingKind::StorageBuffer])?,
                declare: |registry: &mut Registry| {
                    // 64 particles' worth, where the shader lifts 256 of them.
                    let particles = registry.create_buffer("particles", BufferDesc { size: 64 * 16 });
                    registry.side_effect();
                    vec![Binding::buffer(&registry.read_write_storage_buffer(particles, COMPUTE))]
                },
                groups: 4,
            };
            graph.add_typed_pass_at(points::AFTER_GEOMETRY, pass)
        }),
        FRAMES,
    );
    let message = dropped_message(&faulty);
    for wanted in ["`particles`", "binding 0", "needs 4096 bytes", "gives 1024"] {
        assert!(message.contains(wanted), "{wanted}: {message}");
    }
    assert_same_frames(&baseline, &faulty);
    assert_no_validation_messages(&device);
}

/// A window whose swapchain is smaller than the game's viewport: it sets the graph's extent.
struct SmallWindow;

impl FrameTarget for SmallWindow {
    fn add_passes(&mut self, _: &mut RenderGraph) -> render_graph::Result<()> {
        Ok(())
    }
    fn begin_frame(&mut self, graph: &mut RenderGraph, _: renderer::TargetFrame) -> render_graph::Result<bool> {
        graph.set_output_extent(vk::Extent2D { width: 24, height: 16 });
        Ok(true)
    }
    fn end_frame(&mut self, _: &mut RenderGraph, _: renderer::TargetFrame) -> render_graph::Result<()> {
        Ok(())
    }
}

/// The viewport of the frame's view, beside the extent the pass draws at.
type Seen = ([f32; 2], [u32; 2]);

/// Notes what it sees each frame.
struct SeesViewport(Arc<Mutex<Vec<Seen>>>);

impl TypedPass for SeesViewport {
    type Handles = ();
    fn name(&self) -> &str {
        "sees viewport"
    }
    fn register(&mut self, registry: &mut Registry<'_>) {
        registry.side_effect();
    }
    fn execute(&mut self, _: &(), context: &mut ExecuteContext<'_>) {
        let Ok(view) = context.require_param::<FrameView>() else { return };
        let extent = context.output_extent();
        self.0
            .lock()
            .expect("not poisoned")
            .push(([view.viewport[0], view.viewport[1]], [extent.width, extent.height]));
    }
}

#[test]
fn the_view_a_pass_reads_has_the_size_of_the_image_drawn_not_a_stale_viewport() {
    let Some(device) = gpu_test_context() else { return };
    let seen = Arc::new(Mutex::new(Vec::new()));
    let noted = Arc::clone(&seen);
    let setup = renderer::RenderSetup {
        shadows: false,
        backend: CullingBackend::Gpu,
        device: Some(Arc::clone(&device)),
        extent: vk::Extent2D { width: 48, height: 32 },
        capacity: CAPACITY,
        meshes: renderer::MeshLibrary::with_unit_cube(),
        clear_color: [0.0, 0.0, 0.0, 1.0],
        bits: renderer::BitsReadback::None,
        passes: passes(move |graph| graph.add_typed_pass_at(points::AFTER_GEOMETRY, SeesViewport(noted))),
    };
    let mut app = runtime::App::with_threads(1);
    renderer::install_render_to(&mut app, setup, Some(Box::new(SmallWindow))).expect("a device is there");
    let eye = glam::Vec3::new(0.0, 0.0, 5.0);
    ecs::scene::spawn_camera(app.world_mut(), ecs::Camera::default(), ecs::scene::look_at(eye, glam::Vec3::ZERO));
    for _ in 0..2 {
        app.run_frame();
        assert!(app.resource::<renderer::RenderReport>().error.is_none());
    }
    drop(app);
    assert_eq!(*seen.lock().unwrap(), [([24.0, 16.0], [24, 16]); 2], "the viewport is the window's image");
    assert_no_validation_messages(&device);
}

#[test]
fn the_committed_test_spirv_is_fresh() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shaders");
    let required = std::env::var("ENGINE_REQUIRE_VULKAN").is_ok_and(|value| value == "1");
    if Command::new("glslc").arg("--version").output().is_err() {
        assert!(!required, "glslc not found, but ENGINE_REQUIRE_VULKAN=1 requires it");
        println!("skipping: glslc not found, cannot check the committed SPIR-V");
        return;
    }
    for name in [
        "fixed_array",
        "read_unqualified",
        "count_unqualified",
        "guide_cull",
        "lod_select",
        "view_copy",
        "lod_distance",
    ] {
        let output = std::env::temp_dir().join(format!("{name}-{}.spv", std::process::id()));
        let status = Command::new("glslc")
            .args(["-fshader-stage=comp", "--target-env=vulkan1.2", "-O", "-I", shaders::ENGINE_INCLUDE_DIR, "-o"])
            .arg(&output)
            .arg(dir.join(format!("{name}.comp.glsl")))
            .status()
            .expect("glslc runs");
        assert!(status.success(), "glslc failed on {name}.comp.glsl");
        let fresh = std::fs::read(&output).expect("glslc wrote its output");
        let _ = std::fs::remove_file(&output);
        let committed = std::fs::read(dir.join(format!("{name}.comp.spv"))).expect("the committed SPIR-V exists");
        assert!(
            fresh == committed,
            "tests/shaders/{name}.comp.spv is stale: recompile it with glslc -fshader-stage=comp \
             --target-env=vulkan1.2 -O -I ../shaders/glsl/engine and commit it"
        );
    }
}
