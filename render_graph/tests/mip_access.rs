//! Declared mip access on lavapipe with validation (synchronization checks on): a chain of
//! compute passes, each reading mip `k - 1` and writing mip `k` of one image through its
//! declared ranges, then a pass sampling mips `0..=N` through a view of just those mips. The
//! barriers come from the compiler, per mip; a CPU reduction of the same texels must equal
//! every mip read back, exactly, frame after frame (validation alone has missed
//! compute-to-compute hazards before).

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use common::mip_chain::{chain_graph, expected_gather, BASE, LAST, PYRAMID, REDUCE_STEPS};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{
    vk, ExecuteContext, GpuImage, GraphError, ImageDesc, ImageInfo, ImageSize, Pass, Registry, RenderGraph, ShaderStage,
};

const COMPUTE: ShaderStage = ShaderStage::Compute;

fn run_chain(imported: bool, one_pass: bool) {
    let Some(device) = gpu_test_context() else { return };
    let (mut graph, gathered) = chain_graph(&device, imported, one_pass);
    for frame in 0..3 {
        graph.execute_frame().expect("frame runs");
        graph.wait_idle().expect("frame finishes");
        let words = gathered.read_u32().expect("maps");
        let seen: Vec<f32> = words.iter().map(|&word| f32::from_bits(word)).collect();
        let expected = expected_gather(frame);
        assert_eq!(seen.len(), expected.len());
        if let Some(index) = (0..expected.len()).find(|&index| seen[index].to_bits() != expected[index].to_bits()) {
            panic!("frame {frame}: word {index} is {} on the GPU, {} on the CPU", seen[index], expected[index]);
        }
        // Each chain pass (or step) waits for one mip and starts another: two barriers,
        // never the whole image.
        let barriers =
            |name: &str| graph.stats().passes.iter().find(|pass| pass.name == name).map(|pass| pass.barriers);
        if one_pass {
            // Mip 0's transition and one barrier for the first writes of mips 1..=LAST
            // before the pass; then one per later step, on the mip it reads.
            assert_eq!(barriers(REDUCE_STEPS), Some(LAST + 1), "{REDUCE_STEPS} in frame {frame}");
        }
        for mip in (1..=LAST).filter(|_| !one_pass) {
            let name = format!("reduce mip {mip}");
            assert_eq!(barriers(&name), Some(2), "{name} in frame {frame}");
        }
    }
    drop(graph);
    assert_no_validation_messages(&device);
}

#[test]
fn a_chain_of_per_mip_passes_equals_the_cpu_reduction_in_every_mip() {
    run_chain(false, false);
}

#[test]
fn an_imported_image_reduced_per_mip_stays_exact_across_frames() {
    run_chain(true, false);
}

#[test]
fn one_pass_reducing_the_chain_in_steps_gets_the_graphs_barriers_between_mips() {
    run_chain(false, true);
    run_chain(true, true);
}

/// Declares two steps and begins only the first.
struct ForgetsAStep;

impl Pass for ForgetsAStep {
    fn name(&self) -> &str {
        "forgets a step"
    }
    fn register(&mut self, registry: &mut Registry) {
        let desc = ImageDesc::new(vk::Format::R32_SFLOAT, ImageSize::OUTPUT).with_mips(2);
        let image = registry.create_image("steps", desc);
        registry.write_storage_image_mip(image, 0, COMPUTE);
        registry.next_step();
        registry.read_storage_image_mip(image, 0, COMPUTE);
        registry.write_storage_image_mip(image, 1, COMPUTE);
        registry.side_effect();
    }
    fn execute(&mut self, _context: &mut ExecuteContext) {}
}

#[test]
fn a_step_the_pass_never_begins_is_an_error_naming_the_pass() {
    let Some(device) = gpu_test_context() else { return };
    let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 16, height: 16 }).expect("creates");
    graph.add_pass(ForgetsAStep);
    match graph.execute_frame() {
        Err(GraphError::InvalidCommand { pass, reason }) => {
            assert_eq!(pass, "forgets a step");
            assert!(reason.contains("next_step"), "{reason}");
        }
        other => panic!("expected an error about the step, got {other:?}"),
    }
    drop(graph);
    assert_no_validation_messages(&device);
}

/// Writes a mip of a full-chain image that the image does not have.
struct PastTheChain;

impl Pass for PastTheChain {
    fn name(&self) -> &str {
        "past the chain"
    }
    fn register(&mut self, registry: &mut Registry) {
        let desc = ImageDesc::new(vk::Format::R32_SFLOAT, ImageSize::OUTPUT).with_mips(ImageDesc::FULL_MIP_CHAIN);
        let pyramid = registry.create_image(PYRAMID, desc);
        registry.write_storage_image_mip(pyramid, 5, COMPUTE);
        registry.side_effect();
    }
    fn execute(&mut self, _context: &mut ExecuteContext) {}
}

#[test]
fn a_mip_past_a_full_chain_is_a_named_error_at_the_output_extent() {
    let Some(device) = gpu_test_context() else { return };
    // 16x16 has mips 0..=4.
    let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 16, height: 16 }).expect("creates");
    graph.add_pass(PastTheChain);
    match graph.execute_frame() {
        Err(GraphError::MipRangeOutOfBounds { pass, resource, base: 5, count: 1, mip_levels: 5 }) => {
            assert_eq!((pass.as_str(), resource.as_str()), ("past the chain", PYRAMID));
        }
        other => panic!("expected a mip range error, got {other:?}"),
    }
    // At 32x32 the chain has a mip 5.
    graph.set_output_extent(vk::Extent2D { width: 32, height: 32 });
    graph.execute_frame().expect("mip 5 exists now");
    graph.wait_idle().expect("frame finishes");
    drop(graph);
    assert_no_validation_messages(&device);
}

#[test]
fn reimporting_the_image_with_fewer_mips_recompiles_and_names_the_range_it_lacks() {
    let Some(device) = gpu_test_context() else { return };
    let (mut graph, _gathered) = chain_graph(&device, true, false);
    graph.execute_frame().expect("frame runs");
    graph.wait_idle().expect("frame finishes");
    let usage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
    let info = ImageInfo { format: vk::Format::R32_SFLOAT, extent: BASE, mip_levels: 3, usage };
    graph.import_image(PYRAMID, Arc::new(GpuImage::new(&device, PYRAMID, info).expect("image creates")));
    match graph.execute_frame() {
        Err(GraphError::MipRangeOutOfBounds { pass, base: 3, count: 1, mip_levels: 3, .. }) => {
            assert_eq!(pass, "reduce mip 3");
        }
        other => panic!("expected a mip range error, got {other:?}"),
    }
    drop(graph);
    assert_no_validation_messages(&device);
}

#[test]
fn the_committed_mip_gather_spirv_is_fresh() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shaders");
    let required = std::env::var("ENGINE_REQUIRE_VULKAN").is_ok_and(|value| value == "1");
    if Command::new("glslc").arg("--version").output().is_err() {
        assert!(!required, "glslc not found, but ENGINE_REQUIRE_VULKAN=1 requires it");
        println!("skipping: glslc not found, cannot check the committed SPIR-V");
        return;
    }
    let output = std::env::temp_dir().join(format!("mip-gather-{}.spv", std::process::id()));
    let status = Command::new("glslc")
        .args(["-fshader-stage=comp", "--target-env=vulkan1.2", "-O", "-o"])
        .arg(&output)
        .arg(dir.join("mip_gather.comp.glsl"))
        .status()
        .expect("glslc runs");
    assert!(status.success(), "glslc failed on mip_gather.comp.glsl");
    let fresh = std::fs::read(&output).expect("glslc wrote its output");
    let _ = std::fs::remove_file(&output);
    let committed = std::fs::read(dir.join("mip_gather.comp.spv")).expect("the committed SPIR-V exists");
    assert!(
        fresh == committed,
        "tests/shaders/mip_gather.comp.spv is stale: recompile it with glslc -fshader-stage=comp \
         --target-env=vulkan1.2 -O and commit it"
    );
}
