//! A pass that does not run because nothing reads what it writes is usually a mistake (an
//! output declared as a read): the graph logs it once, naming it, unless the pass is marked
//! optional. Its own test binary, since it installs the process's logger.

mod common;

use std::sync::{Arc, Mutex};

use ash::vk;
use common::{ProbeKind, ProbeOp, ProbePass, ProbePipelines};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{BufferDesc, ExecuteContext, Pass, Registry, RenderGraph};

static LOGGED: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        if record.level() <= log::Level::Warn {
            LOGGED.lock().unwrap().push(record.args().to_string());
        }
    }
    fn flush(&self) {}
}

/// Writes a buffer of its own that nobody reads; optional or not.
struct Orphan {
    name: &'static str,
    optional: bool,
}

impl Pass for Orphan {
    fn name(&self) -> &str {
        self.name
    }
    fn register(&mut self, registry: &mut Registry<'_>) {
        let buffer = registry.create_buffer(&format!("{} output", self.name), BufferDesc { size: 16 });
        registry.write_buffer(buffer, render_graph::Access::TransferWrite);
        if self.optional {
            registry.optional();
        }
    }
    fn execute(&mut self, _: &mut ExecuteContext<'_>) {}
}

#[test]
fn a_pass_dropped_as_unused_is_logged_once_unless_optional() {
    let Some(device) = gpu_test_context() else { return };
    log::set_logger(&Capture).expect("the only logger of this binary");
    log::set_max_level(log::LevelFilter::Warn);
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 8, height: 8 }).expect("graph");
    graph.set_name("logged graph");
    let mut kept = ProbePass::new(
        "kept",
        vec![ProbeOp::Fill { resource: "x".into(), kind: ProbeKind::Buffer, seed: 1 }],
        &pipelines,
    );
    kept.side_effect = true;
    graph.add_typed_pass(kept);
    graph.add_pass(Orphan { name: "forgotten", optional: false });
    graph.add_pass(Orphan { name: "view upload", optional: true });
    for _ in 0..3 {
        graph.execute_frame().expect("frame runs");
    }
    // A recompile (a new extent) drops the same pass again: still one message.
    graph.set_output_extent(vk::Extent2D { width: 16, height: 16 });
    graph.execute_frame().expect("frame runs");
    graph.wait_idle().expect("idle");
    assert_eq!(graph.culled_passes().expect("compiles"), ["forgotten", "view upload"]);
    let logged = LOGGED.lock().unwrap().clone();
    let about_unused: Vec<&String> = logged.iter().filter(|message| message.contains("does not run")).collect();
    assert_eq!(about_unused.len(), 1, "{logged:?}");
    assert!(about_unused[0].contains("`forgotten`") && about_unused[0].contains("`logged graph`"), "{logged:?}");
    drop(graph);
    assert_no_validation_messages(&device);
}
