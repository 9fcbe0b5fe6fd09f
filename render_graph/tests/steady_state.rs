//! A graph that runs unchanged allocates nothing on the Rust heap per frame once warm
//! (driver and layer allocations are outside Rust's allocator and not counted).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use common::{import_report, ImageRead, ProbeKind, ProbeOp, ProbePass, ProbePipelines};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, RenderGraph};

/// Counts allocations made while `COUNTING` is set.
struct CountingAllocator;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to the system allocator with the same arguments; counting
// touches only atomics.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `pointer` came from `System.alloc` with `layout`.
        unsafe { System.dealloc(pointer, layout) }
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::realloc`'s contract.
        unsafe { System.realloc(pointer, layout, new_size) }
    }
}

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
        graph.add_pass(pass);
    }
    for _ in 0..4 {
        graph.execute_frame().expect("frame runs");
    }
    COUNTING.store(true, Ordering::Relaxed);
    for _ in 0..8 {
        graph.execute_frame().expect("frame runs");
    }
    COUNTING.store(false, Ordering::Relaxed);
    let allocations = ALLOCATIONS.load(Ordering::Relaxed);
    graph.wait_idle().expect("frames finish");
    assert_eq!(allocations, 0, "steady-state frames allocated {allocations} times");
    drop(graph);
    assert_no_validation_messages(&device);
}
