//! The validation layer is on and catches what the graph cannot see (a hazard inside a
//! pass), also when the loader forces it; with `profile`, passes become GPU zones.

use super::*;

/// Clears one buffer twice inside one pass: a write-after-write hazard the graph cannot
/// see, because barriers are placed between passes, not inside them.
struct DoubleWrite;
impl TypedPass for DoubleWrite {
    type Handles = BufferWrite;
    fn name(&self) -> &str {
        "double write"
    }
    fn register(&mut self, registry: &mut Registry) -> BufferWrite {
        let buffer = registry.create_buffer("twice", render_graph::BufferDesc { size: common::PROBE_BYTES });
        registry.side_effect();
        registry.write_buffer(buffer, Access::TransferWrite)
    }
    fn execute(&mut self, target: &BufferWrite, context: &mut ExecuteContext) {
        let buffer = context.buffer(target).buffer;
        for value in [1, 2] {
            // SAFETY: recording; the buffer is live and has TRANSFER_DST usage. The missing
            // barrier between the two clears is the point of the test.
            unsafe { context.device().cmd_fill_buffer(context.command_buffer(), buffer, 0, vk::WHOLE_SIZE, value) };
        }
    }
}

#[test]
fn synchronization_validation_is_on_and_catches_a_missing_barrier() {
    let Some(device) = gpu_test_context() else { return };
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    graph.add_typed_pass(DoubleWrite);
    graph.execute_frame().expect("frame runs");
    graph.wait_idle().expect("frame finishes");
    drop(graph);
    let counts = device.validation_counts();
    let messages = device.validation_messages();
    assert!(counts.error > 0, "synchronization validation must report the hazard: {counts:?}");
    let hazard = messages.iter().find(|message| message.contains("WRITE-AFTER-WRITE"));
    let hazard = hazard.unwrap_or_else(|| panic!("no hazard among {messages:?}"));
    assert!(hazard.contains("(recording pass `double write`)"), "the message names the pass: {hazard}");
}

/// Environment of the child process in
/// [`a_layer_forced_by_the_loader_validates_without_the_engine_switch`].
const FORCED_LAYER_CHILD: &str = "ENGINE_TEST_FORCED_LAYER_CHILD";

#[test]
fn a_layer_forced_by_the_loader_validates_without_the_engine_switch() {
    if gpu_test_context().is_none() {
        return;
    }
    // The loader reads the variable at instance creation: set it in a child process only.
    let output = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", "validation::forced_layer_child", "--include-ignored", "--nocapture", "--test-threads=1"])
        .env("VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation")
        .env_remove("ENGINE_VALIDATION")
        .env(FORCED_LAYER_CHILD, "1")
        .output()
        .expect("the test binary runs again");
    let text = String::from_utf8_lossy(&output.stdout) + String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success() && text.contains("1 passed"), "the child failed:\n{text}");
}

#[test]
#[ignore = "run by a_layer_forced_by_the_loader_validates_without_the_engine_switch in a child process"]
fn forced_layer_child() {
    assert_eq!(std::env::var(FORCED_LAYER_CHILD).as_deref(), Ok("1"), "runs only as the child");
    let config = render_graph::DeviceConfig {
        app_name: String::from("forced layer"),
        validation: false,
        withheld_features: Vec::new(),
        surface_extensions: Vec::new(),
    };
    let device = Arc::new(render_graph::GpuDevice::new(&config).expect("device"));
    assert!(device.validation_enabled(), "the loader forces the layer");
    let counts = device.validation_counts();
    assert!(!counts.has_problems(), "the loader's own messages are no problems: {:?}", device.validation_messages());
    // A clean graph stays clean...
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    let mut pass = probe("clean", vec![fill("clean buffer", ProbeKind::Buffer, 5)], &pipelines);
    pass.side_effect = true;
    graph.add_typed_pass(pass);
    graph.execute_frame().expect("frame runs");
    graph.wait_idle().expect("frame finishes");
    drop(graph);
    assert_no_validation_messages(&device);
    // ...and a hazard is counted, naming its pass.
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    graph.add_typed_pass(DoubleWrite);
    graph.execute_frame().expect("frame runs");
    graph.wait_idle().expect("frame finishes");
    drop(graph);
    assert!(device.validation_counts().error > 0, "synchronization validation is on");
    let messages = device.validation_messages();
    assert!(messages.iter().any(|message| message.contains("`double write`")), "{messages:?}");
}

/// With the `profile` feature and a running Tracy client, passes become GPU zones; the frame
/// loop must keep working and stay valid.
#[cfg(feature = "profile")]
#[test]
fn tracy_gpu_zones_follow_the_passes() {
    let Some(device) = gpu_test_context() else { return };
    runtime::profiling::start();
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    let mut pass = probe("zoned", vec![fill("zoned buffer", ProbeKind::Buffer, 5)], &pipelines);
    pass.side_effect = true;
    graph.add_typed_pass(pass);
    for _ in 0..4 {
        graph.execute_frame().expect("frame runs");
    }
    graph.wait_idle().expect("frames finish");
    assert_eq!(graph.stats().passes.len(), 1);
    if device.capabilities().timestamps {
        // Zones are named `graph: pass`, after the graph's default name, then after a new
        // pass and a rename: two graphs' passes of one name never share a zone name.
        assert_eq!(graph.gpu_zone_names(), [format!("{}: zoned", graph.name())]);
        let mut later = probe("later", vec![fill("later buffer", ProbeKind::Buffer, 6)], &pipelines);
        later.side_effect = true;
        graph.add_typed_pass(later);
        graph.set_name("probe graph");
        graph.execute_frame().expect("frame runs");
        graph.wait_idle().expect("frame finishes");
        assert_eq!(graph.gpu_zone_names(), ["probe graph: zoned", "probe graph: later"]);
    }
    drop(graph);
    assert_no_validation_messages(&device);
}
