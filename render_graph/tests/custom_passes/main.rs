//! GPU tests of what a user writing their own passes relies on: declaration-order versions,
//! misuse reported as errors naming pass and resource, poison fills of blind writes, the
//! draw and dispatch helpers, history across recompiles and readback safety. Each runs on a
//! validated device and ends with zero validation messages.

mod bindings;
#[path = "../common/mod.rs"]
mod common;
mod draws;
mod history;
mod misuse;
mod ordering;
mod typed;

use std::sync::{Arc, Mutex};

use ash::vk;
use common::{filled, import_report, updated, ImageRead, ProbeKind, ProbeOp, ProbePass, ProbePipelines, PROBE_BYTES};
use render_graph::readback::ReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context, gpu_test_context_without};
use render_graph::{
    Access, AttachmentLoad, Binding, BufferDesc, BufferRead, BufferWrite, ExecuteContext, GpuDevice, GraphError,
    GraphicsPipeline, GraphicsPipelineDesc, ImageDesc, ImageSize, ImageWrite, Pass, PrepareContext, ReadbackBuffer,
    Registry, RenderGraph, ShaderStage, TypedPass, POISON_WORD,
};
use shaders::{PROBE_ELEMENTS, PROBE_WIDTH, PROBE_WORKGROUP};

const EXTENT: vk::Extent2D = vk::Extent2D { width: 40, height: 24 };
const COMPUTE: ShaderStage = ShaderStage::Compute;

fn fill(resource: &str, kind: ProbeKind, seed: u32) -> ProbeOp {
    ProbeOp::Fill { resource: resource.into(), kind, seed }
}

fn read(resource: &str, kind: ProbeKind) -> ProbeOp {
    ProbeOp::Read { resource: resource.into(), kind, image_read: ImageRead::Storage }
}

fn update(resource: &str, kind: ProbeKind, seed: u32) -> ProbeOp {
    ProbeOp::Update { resource: resource.into(), kind, seed }
}

/// Adds `pass` with its report buffer; returns the report.
fn add_probe(device: &Arc<GpuDevice>, graph: &mut RenderGraph, pass: ProbePass) -> Option<ReadbackBuffer> {
    let report = import_report(device, graph, &pass);
    graph.add_typed_pass(pass);
    report
}

/// A read handle one pass declared, lent to another that uses it without declaring an access
/// of its own (the misuse the tests below check is reported).
type Lent<T> = Arc<Mutex<Option<T>>>;

/// Reads `resource` (a transfer read, a side effect) and lends the read handle.
struct Lender {
    resource: &'static str,
    image: bool,
    lent_buffer: Lent<BufferRead>,
    lent_image: Lent<render_graph::ImageRead>,
}

impl Lender {
    fn buffer(resource: &'static str, lent: &Lent<BufferRead>) -> Lender {
        Lender { resource, image: false, lent_buffer: Arc::clone(lent), lent_image: Lent::default() }
    }

    fn image(resource: &'static str, lent: &Lent<render_graph::ImageRead>) -> Lender {
        Lender { resource, image: true, lent_buffer: Lent::default(), lent_image: Arc::clone(lent) }
    }
}

impl TypedPass for Lender {
    type Handles = ();
    fn name(&self) -> &str {
        "lender"
    }
    fn register(&mut self, registry: &mut Registry) {
        if self.image {
            let image = registry.image(self.resource);
            *self.lent_image.lock().expect("not poisoned") = Some(registry.read_image(image, Access::TransferRead));
        } else {
            let buffer = registry.buffer(self.resource);
            *self.lent_buffer.lock().expect("not poisoned") = Some(registry.read_buffer(buffer, Access::TransferRead));
        }
        registry.side_effect();
    }
}

/// The handle lent by a [`Lender`] registered before.
fn borrowed<T: Copy>(lent: &Lent<T>) -> T {
    lent.lock().expect("not poisoned").expect("the lender registers first")
}

/// Places `pass` at insertion point `point` with its report buffer; returns the report.
fn add_probe_at(
    device: &Arc<GpuDevice>,
    graph: &mut RenderGraph,
    point: &str,
    pass: ProbePass,
) -> Option<ReadbackBuffer> {
    let report = import_report(device, graph, &pass);
    graph.add_typed_pass_at(point, pass).expect("the point exists");
    report
}

/// `words` as little-endian bytes, for uploads.
fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|word| word.to_le_bytes()).collect()
}
