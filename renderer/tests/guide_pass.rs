//! The pass of the pass author's guide (`docs/passes.md`), written only against the guide and
//! the engine's include headers: it culls boxes of its own against the frame's view and the
//! final depth's pyramid, and its answers are what the scene says (in front of the wall: seen;
//! behind it: hidden; behind the camera: outside), on the GPU-culled and the CPU-list frame
//! alike, with the engine's frame unchanged. The guide's GLSL and Rust are this file's and
//! `shaders/guide_cull.comp.glsl`, checked word for word.

mod frame_harness;

use std::sync::Arc;

use culling::CullingBackend;
use frame_harness::{assert_same_frames, draw, Drawn};
use render_graph::readback::BufferReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{
    Binding, BindingKind, BufferDesc, BufferRead, BufferWrite, ComputePipeline, ExecuteContext, GpuDevice, ImageRead,
    PrepareContext, ReadbackBuffer, Registry, RenderGraph, ShaderStage, TypedPass,
};
use renderer::points;

const GUIDE_CULL: &[u8] = include_bytes!("shaders/guide_cull.comp.spv");

// guide: CullBoxes
/// Culls `boxes` (world-space min and max corners) against the frame's view and the final
/// depth's pyramid; `seen boxes` holds one u32 per box, 1 when it may be seen.
pub struct CullBoxes {
    pipeline: ComputePipeline,
    boxes: Vec<[[f32; 4]; 2]>,
    staged: Option<Binding>,
}

impl CullBoxes {
    pub fn new(device: &Arc<GpuDevice>, spirv: &[u32], boxes: Vec<[[f32; 4]; 2]>) -> render_graph::Result<Self> {
        use BindingKind::{SampledImage, StorageBuffer, UniformBuffer};
        let kinds = [UniformBuffer, SampledImage, StorageBuffer, StorageBuffer];
        let pipeline = ComputePipeline::new(device, "cull boxes", spirv, &kinds, 4)?;
        Ok(CullBoxes { pipeline, boxes, staged: None })
    }
}

impl TypedPass for CullBoxes {
    /// The view, the pyramid, and the answers.
    type Handles = (BufferRead, ImageRead, BufferWrite);

    fn name(&self) -> &str {
        "cull boxes"
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let view = registry.buffer(renderer::VIEW);
        let pyramid = registry.image(renderer::HIZ_DEPTH_FINAL);
        let bytes = (self.boxes.len().max(1) * 4) as u64;
        let seen = registry.create_buffer("seen boxes", BufferDesc { size: bytes });
        (
            registry.read_uniform_buffer(view, ShaderStage::Compute),
            registry.sample(pyramid, ShaderStage::Compute),
            registry.write_storage_buffer(seen, ShaderStage::Compute),
        )
    }

    fn prepare(&mut self, _: &Self::Handles, context: &mut PrepareContext<'_>) {
        let bytes: Vec<u8> = self.boxes.iter().flatten().flatten().flat_map(|value| value.to_le_bytes()).collect();
        match context.stage_data(&bytes) {
            Ok(binding) => self.staged = Some(binding),
            Err(error) => context.fail(error),
        }
    }

    fn execute(&mut self, (view, pyramid, seen): &Self::Handles, context: &mut ExecuteContext<'_>) {
        let Some(boxes) = self.staged.take() else { return };
        let bindings = [Binding::buffer(*view), Binding::image(*pyramid), boxes, Binding::buffer(seen)];
        context.bind_compute(&self.pipeline, &bindings);
        let count = self.boxes.len() as u32;
        context.push_constants(&[count]);
        context.dispatch(count.div_ceil(64), 1, 1);
    }
}
// guide: end

/// The boxes of the test: in front of the wall, behind it, behind the camera.
fn boxes() -> Vec<[[f32; 4]; 2]> {
    let cube = |x: f32, y: f32, z: f32| [[x - 0.3, y - 0.3, z - 0.3, 1.0], [x + 0.3, y + 0.3, z + 0.3, 1.0]];
    vec![cube(0.0, 0.0, 4.0), cube(1.0, 0.5, 1.0), cube(0.0, 0.0, -3.0), cube(-1.0, 0.5, -6.0), cube(0.0, 1.0, 14.0)]
}

/// What the scene says of each box: seen, seen, hidden, hidden, outside the view.
const EXPECTED: [u32; 5] = [1, 1, 0, 0, 0];

/// The engine's frames with the guide's pass at `after depth prepass` and its answers read
/// back; returns the frames and the last frame's answers.
fn frames_with_the_guide_pass(device: &Arc<GpuDevice>, backend: CullingBackend) -> (Drawn, Vec<u32>) {
    let answers = ReadbackBuffer::new(device, "seen boxes readback", EXPECTED.len() as u64 * 4).expect("allocates");
    let shared = answers.shared();
    let spirv = shaders::Shader::from_bytes("guide_cull.comp", shaders::Stage::Compute, GUIDE_CULL).expect("SPIR-V");
    let add = move |graph: &mut RenderGraph| {
        let pass = CullBoxes::new(graph.device(), spirv.words(), boxes())?;
        graph.add_typed_pass_at(points::AFTER_DEPTH_PREPASS, pass)?;
        graph.import_buffer("seen boxes readback", shared);
        graph.add_typed_pass_at(points::BEFORE_OUTPUT, BufferReadbackPass::new("seen boxes", "seen boxes readback"))
    };
    let drawn = draw(device, backend, vec![Box::new(add)], 3);
    // The app waited for the last frame (screenshots), so its answers are there.
    let bytes = answers.read().expect("the last frame finished");
    let words = bytes.chunks_exact(4).map(|word| u32::from_le_bytes(word.try_into().unwrap())).collect();
    (drawn, words)
}

#[test]
fn the_guides_pass_culls_its_boxes_on_both_frames_and_leaves_the_engine_alone() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        let baseline = draw(&device, backend, Vec::new(), 3);
        let (drawn, answers) = frames_with_the_guide_pass(&device, backend);
        assert!(drawn.report.dropped_passes.is_empty(), "{backend:?}: {:?}", drawn.report.dropped_passes);
        assert_eq!(answers, EXPECTED, "{backend:?}: seen, seen, hidden by the wall, hidden, behind the camera");
        assert_same_frames(&baseline, &drawn);
    }
    assert_no_validation_messages(&device);
}

/// The fenced blocks of `docs/passes.md` in `language`.
fn guide_blocks(language: &str) -> Vec<String> {
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/passes.md")).expect("the guide");
    let fence = format!("```{language}");
    guide.split(fence.as_str()).skip(1).filter_map(|rest| rest.split("```").next()).map(str::to_owned).collect()
}

#[test]
fn the_guide_shows_the_pass_and_the_shader_this_test_runs() {
    let shader = include_str!("shaders/guide_cull.comp.glsl");
    assert!(
        guide_blocks("glsl").iter().any(|block| block.trim() == shader.trim()),
        "docs/passes.md shows renderer/tests/shaders/guide_cull.comp.glsl word for word"
    );
    let source = include_str!("guide_pass.rs");
    let start = source.find("// guide: CullBoxes\n").expect("marked") + "// guide: CullBoxes\n".len();
    let end = source.find("// guide: end").expect("marked");
    let pass = source[start..end].trim();
    assert!(
        guide_blocks("rust").iter().any(|block| block.trim() == pass),
        "docs/passes.md shows the CullBoxes pass of renderer/tests/guide_pass.rs word for word"
    );
    // The guide's pass names the engine's resources by their constants.
    assert!(pass.contains("renderer::VIEW") && pass.contains("renderer::HIZ_DEPTH_FINAL"));
}
