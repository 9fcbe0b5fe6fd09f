//! A graph that runs unchanged allocates nothing on the Rust heap per frame once warm
//! (driver and layer allocations are outside Rust's allocator and not counted).

mod common;

use runtime::alloc_counter::{count_allocations, CountingAllocator};
use std::sync::Arc;

use common::{import_report, ImageRead, ProbeKind, ProbeOp, ProbePass, ProbePipelines};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, RenderGraph};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[test]
fn steady_frames_allocate_nothing() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let mut graph =
        RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 16, height: 16 }).expect("graph creates");
    let passes = [
        ProbePass::new(
            "fill",
            vec![ProbeOp::Fill { resource: "image".into(), kind: ProbeKind::Image, seed: 9 }],
            &pipelines,
        ),
        ProbePass::new(
            "read",
            vec![ProbeOp::Read { resource: "image".into(), kind: ProbeKind::Image, image_read: ImageRead::Sampled }],
            &pipelines,
        ),
    ];
    let mut reports = Vec::new();
    for pass in passes {
        reports.extend(import_report(&device, &mut graph, &pass));
        graph.add_typed_pass(pass);
    }
    for _ in 0..4 {
        graph.execute_frame().expect("frame runs");
    }
    let ((), allocations) = count_allocations(|| {
        for _ in 0..8 {
            graph.execute_frame().expect("frame runs");
        }
    });
    graph.wait_idle().expect("frames finish");
    assert_eq!(allocations, 0, "steady-state frames allocated {allocations} times");
    drop(graph);
    assert_no_validation_messages(&device);
}
