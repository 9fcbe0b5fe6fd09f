//! Shader hot reload: a pass's compute pipeline follows its GLSL file while frames run. An
//! edit is recompiled by `glslc` and built on the watcher's thread, and the pass records the
//! next frame with it; a source that does not compile is logged and the old pipeline stays,
//! frame after frame, until the source is fixed. On a validated device, zero messages.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use render_graph::readback::BufferReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{
    vk, Binding, BindingKind, BufferDesc, BufferWrite, ComputePipeline, ExecuteContext, GpuDevice, HotPipeline,
    HotSource, ReadbackBuffer, Registry, RenderGraph, ShaderStage, TypedPass,
};

/// A fill shader writing `value` into every word of binding 0 (or, `broken`, not GLSL).
fn source(value: u32, broken: bool) -> String {
    let body = if broken { "target.data[gl_GlobalInvocationID.x] = ;" } else { "" };
    format!(
        "#version 450\nlayout(local_size_x = 64) in;\n\
         layout(set = 0, binding = 0) writeonly buffer Target {{ uint data[]; }} target;\n\
         void main() {{ {body} target.data[gl_GlobalInvocationID.x] = {value}u; }}\n"
    )
}

/// The words `glslc` makes of `path`.
fn compiled(path: &Path) -> Vec<u32> {
    let output = path.with_extension("spv");
    let status = Command::new("glslc")
        .args(["-fshader-stage=comp", "--target-env=vulkan1.2", "-O", "-o"])
        .arg(&output)
        .arg(path)
        .status()
        .expect("glslc runs");
    assert!(status.success());
    let bytes = std::fs::read(&output).expect("written");
    bytes.chunks_exact(4).map(|word| u32::from_le_bytes(word.try_into().expect("4 bytes"))).collect()
}

/// Fills `hot words` with its hot pipeline; notes the last rebuild's error.
struct HotFill {
    pipeline: HotPipeline<ComputePipeline>,
    error: Arc<Mutex<Option<String>>>,
}

impl TypedPass for HotFill {
    type Handles = BufferWrite;
    fn name(&self) -> &str {
        "hot fill"
    }
    fn register(&mut self, registry: &mut Registry<'_>) -> BufferWrite {
        let words = registry.create_buffer("hot words", BufferDesc { size: 256 });
        registry.write_storage_buffer(words, ShaderStage::Compute)
    }
    fn execute(&mut self, words: &BufferWrite, context: &mut ExecuteContext<'_>) {
        let pipeline = self.pipeline.current(context.frame_index());
        context.bind_compute(pipeline, &[Binding::buffer(words)]);
        *self.error.lock().expect("not poisoned") = self.pipeline.last_error().map(str::to_owned);
        context.dispatch(1, 1, 1);
    }
}

/// Runs frames until the first word read back is `wanted` (or 20 seconds pass); returns it.
fn frames_until(graph: &mut RenderGraph, readback: &ReadbackBuffer, wanted: u32) -> u32 {
    let started = Instant::now();
    loop {
        graph.execute_frame().expect("the frame runs");
        graph.wait_idle().expect("finishes");
        let bytes = readback.read().expect("finished");
        let first = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"));
        if first == wanted || started.elapsed() > Duration::from_secs(20) {
            return first;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Writes `text` to `path` with a modification time the watcher sees as new.
fn edit(path: &Path, text: &str) {
    std::thread::sleep(Duration::from_millis(30));
    std::fs::write(path, text).expect("the source is written");
}

#[test]
fn an_edited_shader_replaces_the_pipeline_and_a_broken_one_keeps_the_last() {
    let Some(device) = gpu_test_context() else { return };
    let required = std::env::var("ENGINE_REQUIRE_VULKAN").is_ok_and(|value| value == "1");
    if Command::new("glslc").arg("--version").output().is_err() {
        assert!(!required, "glslc not found, but ENGINE_REQUIRE_VULKAN=1 requires it");
        println!("skipping: glslc not found");
        return;
    }
    let folder = std::env::temp_dir().join(format!("hot-reload-test-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("a temporary folder");
    let path: PathBuf = folder.join("fill.comp.glsl");
    std::fs::write(&path, source(11, false)).expect("written");
    let kinds = [BindingKind::StorageBuffer];
    let initial = ComputePipeline::new(&device, "hot fill", &compiled(&path), &kinds, 0).expect("builds");
    let mut pipeline = HotPipeline::with_builder("hot fill", initial);
    let sources = vec![HotSource { path: path.clone(), stage: "comp" }];
    pipeline.watch(&device, sources, &[], move |device: &Arc<GpuDevice>, words: &[Vec<u32>]| {
        ComputePipeline::new(device, "hot fill", &words[0], &kinds, 0)
    });
    assert!(pipeline.is_watching(), "a debug build watches when asked");
    let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 8, height: 8 }).expect("graph");
    let readback = ReadbackBuffer::new(&device, "hot readback", 256).expect("allocates");
    graph.import_buffer("hot readback", readback.shared());
    let error = Arc::new(Mutex::new(None));
    graph.add_typed_pass(HotFill { pipeline, error: Arc::clone(&error) });
    graph.add_typed_pass(BufferReadbackPass::new("hot words", "hot readback"));
    assert_eq!(frames_until(&mut graph, &readback, 11), 11, "the pipeline it was made with");

    edit(&path, &source(22, false));
    assert_eq!(frames_until(&mut graph, &readback, 22), 22, "the edit reaches the frames");
    edit(&path, &source(33, true));
    // The broken source is logged; frames go on with the last good pipeline.
    let started = Instant::now();
    while error.lock().unwrap().is_none() && started.elapsed() < Duration::from_secs(20) {
        assert_eq!(frames_until(&mut graph, &readback, 22), 22, "the last build stays");
    }
    let message = error.lock().unwrap().clone().expect("the broken source is reported");
    assert!(message.contains("fill.comp.glsl does not compile"), "{message}");
    for _ in 0..3 {
        assert_eq!(frames_until(&mut graph, &readback, 22), 22, "the last build stays");
    }
    edit(&path, &source(44, false));
    assert_eq!(frames_until(&mut graph, &readback, 44), 44, "fixed, the source is followed again");
    drop(graph);
    let _ = std::fs::remove_dir_all(&folder);
    assert_no_validation_messages(&device);
}
