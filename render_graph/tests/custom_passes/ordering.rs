//! Passes run in the order their accesses were declared, and at the insertion points they
//! were placed at.

use super::*;

#[test]
fn write_read_modify_runs_in_declaration_order_and_the_reader_sees_the_write() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    for kind in [ProbeKind::Buffer, ProbeKind::Image] {
        let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
        add_probe(&device, &mut graph, ProbePass::new("write", vec![fill("x", kind, 7)], &pipelines));
        let reader = add_probe(&device, &mut graph, ProbePass::new("read", vec![read("x", kind)], &pipelines));
        let modifier =
            add_probe(&device, &mut graph, ProbePass::new("modify", vec![update("x", kind, 99)], &pipelines));
        let after = add_probe(&device, &mut graph, ProbePass::new("read after", vec![read("x", kind)], &pipelines));
        assert_eq!(graph.execution_order().expect("compiles"), ["write", "read", "modify", "read after"]);
        graph.execute_frame().expect("frame runs");
        graph.wait_idle().expect("frame finishes");
        let written = filled(7);
        assert_eq!(reader.expect("reads").read_u32().expect("maps"), written, "{kind:?}: the reader sees the write");
        assert_eq!(modifier.expect("reads").read_u32().expect("maps"), written, "{kind:?}: the modify sees the write");
        assert_eq!(after.expect("reads").read_u32().expect("maps"), updated(&written, 99), "{kind:?}: then the modify");
        drop(graph);
    }
    assert_no_validation_messages(&device);
}

#[test]
fn passes_placed_at_insertion_points_run_there_and_are_seen_by_the_passes_after() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let kind = ProbeKind::Buffer;
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    // An engine's frame: a write, a point, a read, two points, an end; then an appended pass.
    add_probe(&device, &mut graph, ProbePass::new("engine write", vec![fill("x", kind, 7)], &pipelines));
    graph.add_insertion_point("after write").expect("a new point");
    let engine_read = add_probe(&device, &mut graph, ProbePass::new("engine read", vec![read("x", kind)], &pipelines));
    graph.add_insertion_point("after read").expect("a new point");
    graph.add_insertion_point("end").expect("a new point");
    let appended = add_probe(&device, &mut graph, ProbePass::new("appended", vec![read("x", kind)], &pipelines));
    // The user's passes, placed out of frame order: each lands at its point, and passes at
    // one point keep the order they were placed in.
    add_probe_at(&device, &mut graph, "end", ProbePass::new("at end", vec![update("x", kind, 3)], &pipelines));
    add_probe_at(&device, &mut graph, "after write", ProbePass::new("first", vec![update("x", kind, 11)], &pipelines));
    let second =
        add_probe_at(&device, &mut graph, "after write", ProbePass::new("second", vec![read("x", kind)], &pipelines));
    add_probe_at(&device, &mut graph, "after read", ProbePass::new("later", vec![update("x", kind, 5)], &pipelines));
    assert_eq!(
        graph.execution_order().expect("compiles"),
        ["engine write", "first", "second", "engine read", "later", "at end", "appended"]
    );
    assert_eq!(graph.insertion_points().collect::<Vec<_>>(), ["after write", "after read", "end"]);
    graph.execute_frame().expect("frame runs");
    graph.wait_idle().expect("frame finishes");
    let animated = updated(&filled(7), 11);
    assert_eq!(second.expect("reads").read_u32().expect("maps"), animated, "the pass after sees the placed write");
    assert_eq!(engine_read.expect("reads").read_u32().expect("maps"), animated, "so does the engine's next pass");
    let end = updated(&updated(&animated, 5), 3);
    assert_eq!(appended.expect("reads").read_u32().expect("maps"), end, "an appended pass sees every point's write");
    drop(graph);
    assert_no_validation_messages(&device);
}
