//! A graph of per-mip declared accesses (views per range, barriers per mip segment, an
//! imported image ending each frame in one layout) allocates nothing on the Rust heap per
//! frame once warm.

mod common;

use runtime::alloc_counter::{count_allocations, settle_threads, CountingAllocator};

use common::mip_chain::chain_graph;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[test]
fn steady_per_mip_frames_allocate_nothing() {
    let Some(device) = gpu_test_context() else { return };
    for (imported, one_pass) in [(false, false), (true, false), (true, true)] {
        let (mut graph, _gathered) = chain_graph(&device, imported, one_pass);
        for _ in 0..4 {
            graph.execute_frame().expect("frame runs");
        }
        settle_threads();
        let ((), allocations) = count_allocations(|| {
            for _ in 0..8 {
                graph.execute_frame().expect("frame runs");
            }
        });
        graph.wait_idle().expect("frames finish");
        assert_eq!(
            allocations, 0,
            "steady frames (imported: {imported}, one pass: {one_pass}) allocated {allocations}"
        );
    }
    assert_no_validation_messages(&device);
}
