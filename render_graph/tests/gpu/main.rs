//! GPU tests on a validated device (lavapipe in CI): each ends with zero validation messages.

mod chain;
#[path = "../common/mod.rs"]
mod common;
mod frames;
mod validation;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use ash::vk;
use common::{filled, import_report, ImageRead, ProbeKind, ProbeOp, ProbePass, ProbePipelines};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{
    Access, AttachmentLoad, Binding, BindingKind, BufferRead, BufferWrite, ComputePipeline, ExecuteContext, GraphError,
    GraphicsPipeline, GraphicsPipelineDesc, ImageDesc, ImageSize, ImageWrite, Pass, ReadbackBuffer, Registry,
    RenderGraph, ShaderStage, TypedPass,
};

const EXTENT: vk::Extent2D = vk::Extent2D { width: 40, height: 24 };

fn probe(name: &str, ops: Vec<ProbeOp>, pipelines: &Arc<ProbePipelines>) -> ProbePass {
    ProbePass::new(name, ops, pipelines)
}

fn fill(resource: &str, kind: ProbeKind, seed: u32) -> ProbeOp {
    ProbeOp::Fill { resource: resource.into(), kind, seed }
}

fn read(resource: &str, kind: ProbeKind) -> ProbeOp {
    ProbeOp::Read { resource: resource.into(), kind, image_read: ImageRead::Storage }
}
