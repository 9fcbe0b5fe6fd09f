//! Typed passes: the handles `register` returned, and frame parameters in `prepare` and
//! `execute`.

use super::*;

/// Uploads known words into a buffer it creates; its handle comes back from `register`.
struct TypedUpload;

impl TypedPass for TypedUpload {
    type Handles = BufferWrite;

    fn name(&self) -> &str {
        "typed upload"
    }

    fn register(&mut self, registry: &mut Registry) -> BufferWrite {
        let buffer = registry.create_buffer("typed data", BufferDesc { size: PROBE_BYTES });
        registry.write_buffer(buffer, Access::TransferWrite)
    }

    fn prepare(&mut self, buffer: &BufferWrite, context: &mut PrepareContext) {
        let words: Vec<u32> = (0..PROBE_ELEMENTS).map(|index| index * 3 + 1).collect();
        context.upload_buffer(buffer, 0, &words_to_bytes(&words)).expect("declared as a transfer write");
    }
}

#[test]
fn a_typed_pass_gets_the_handles_its_register_returned() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    graph.add_typed_pass(TypedUpload);
    let report = add_probe(
        &device,
        &mut graph,
        ProbePass::new("reader", vec![read("typed data", ProbeKind::Buffer)], &pipelines),
    );
    assert_eq!(graph.execution_order().expect("compiles"), ["typed upload", "reader"]);
    graph.execute_frame().expect("frame runs");
    graph.wait_idle().expect("frame finishes");
    let expected: Vec<u32> = (0..PROBE_ELEMENTS).map(|index| index * 3 + 1).collect();
    assert_eq!(report.expect("reads").read_u32().expect("maps"), expected);
    drop(graph);
    assert_no_validation_messages(&device);
}

/// A frame parameter of the test: the value [`ParamUpload`] writes.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Fill(u32);

/// Uploads [`Fill`]'s value in `prepare` into every word of `param data`, and records the
/// value `execute` sees.
struct ParamUpload {
    seen: Arc<Mutex<Vec<u32>>>,
}

impl TypedPass for ParamUpload {
    type Handles = BufferWrite;

    fn name(&self) -> &str {
        "param upload"
    }

    fn register(&mut self, registry: &mut Registry) -> BufferWrite {
        let buffer = registry.create_buffer("param data", BufferDesc { size: PROBE_BYTES });
        registry.write_buffer(buffer, Access::TransferWrite)
    }

    fn prepare(&mut self, target: &BufferWrite, context: &mut PrepareContext) {
        let fill = match context.require_param::<Fill>() {
            Ok(fill) => *fill,
            Err(error) => return context.fail(error),
        };
        let words = vec![fill.0; PROBE_ELEMENTS as usize];
        context.upload_buffer(target, 0, &words_to_bytes(&words)).expect("declared as a transfer write");
    }

    fn execute(&mut self, _target: &BufferWrite, context: &mut ExecuteContext) {
        let seen = context.param::<Fill>().map_or(u32::MAX, |fill| fill.0);
        self.seen.lock().expect("not poisoned").push(seen);
    }
}

#[test]
fn frame_parameters_reach_prepare_and_execute_and_a_missing_one_names_pass_and_type() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph creates");
    graph.add_typed_pass(ParamUpload { seen: Arc::clone(&seen) });
    let report = add_probe(
        &device,
        &mut graph,
        ProbePass::new("reader", vec![read("param data", ProbeKind::Buffer)], &pipelines),
    )
    .expect("reads");
    let error = graph.execute_frame().expect_err("no Fill was set");
    assert!(
        matches!(&error, GraphError::MissingParam { pass, param } if pass == "param upload" && param.ends_with("Fill")),
        "{error}"
    );
    // The failed frame is recorded but not submitted: execute saw no value.
    assert_eq!(std::mem::take(&mut *seen.lock().expect("not poisoned")), [u32::MAX]);
    for value in [5, 9, 9] {
        graph.set_param(Fill(value));
        graph.execute_frame().expect("frame runs");
        graph.wait_idle().expect("frame finishes");
        assert_eq!(report.read_u32().expect("maps"), vec![value; PROBE_ELEMENTS as usize], "prepare saw {value}");
    }
    assert_eq!(*seen.lock().expect("not poisoned"), [5, 9, 9], "execute saw the frame's value");
    assert_eq!(graph.param::<Fill>(), Some(&Fill(9)));
    if let Some(fill) = graph.param_mut::<Fill>() {
        fill.0 = 11;
    }
    assert_eq!(graph.remove_param::<Fill>(), Some(Fill(11)));
    assert!(matches!(graph.execute_frame(), Err(GraphError::MissingParam { .. })), "removed, it is missing again");
    graph.wait_idle().expect("the graph is usable after the failed frame");
    drop(graph);
    assert_no_validation_messages(&device);
}
