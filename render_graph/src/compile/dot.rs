//! Graphviz dump of the compiled graph: passes (culled ones dashed), resources, the accesses
//! between them, and the barriers placed before each pass.

use std::fmt::Write;

use super::barriers::BarrierSource;
use super::compiler::{CompiledGraph, Residency};
use super::decl::GraphDecl;
use super::desc::ResourceKind;

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The compiled graph in Graphviz DOT (see [`crate::RenderGraph::to_dot`]).
pub(crate) fn compiled_to_dot(decl: &GraphDecl, graph: &CompiledGraph) -> String {
    let mut dot = String::from("digraph render_graph {\n  rankdir=LR;\n");
    for (position, &pass) in graph.order.iter().enumerate() {
        let mut label = format!("{}. {}", position + 1, escape(&decl.passes[pass].name));
        for barrier in &graph.barriers.per_pass[position] {
            let resource = escape(decl.resource_name(barrier.resource));
            let kind = match barrier.source {
                BarrierSource::Entry => "entry",
                BarrierSource::Known(_) => "barrier",
            };
            let _ = write!(label, "\\n{kind}: {resource} -> {:?}", barrier.new_layout);
        }
        let _ = writeln!(dot, "  p{pass} [shape=box, label=\"{label}\"];");
    }
    for &pass in &graph.culled {
        let _ = writeln!(
            dot,
            "  p{pass} [shape=box, style=dashed, label=\"{} (culled)\"];",
            escape(&decl.passes[pass].name)
        );
    }
    for (index, resource) in decl.resources.iter().enumerate() {
        let shape = match resource.kind {
            ResourceKind::Image => "ellipse",
            ResourceKind::Buffer => "box, style=rounded",
        };
        let residency = graph.resources[index].residency;
        let note = match residency {
            Residency::Transient => "transient",
            Residency::HistoryCurrent => "double-buffered",
            Residency::HistoryPrevious => "last frame",
            Residency::Imported => "imported",
            Residency::Unused => "unused",
        };
        let _ = writeln!(dot, "  r{index} [shape={shape}, label=\"{}\\n({note})\"];", escape(&resource.name));
    }
    for (pass_index, pass) in decl.passes.iter().enumerate() {
        for access in &pass.accesses {
            let (kind, mips) = (access.access, access.mips);
            let label = if mips.is_all() { format!("{kind:?}") } else { format!("{kind:?} {mips}") };
            if access.access.is_write() {
                let _ = writeln!(dot, "  p{pass_index} -> r{} [label=\"{label}\"];", access.resource);
            } else {
                let _ = writeln!(dot, "  r{} -> p{pass_index} [label=\"{label}\"];", access.resource);
            }
        }
    }
    dot.push_str("}\n");
    dot
}
