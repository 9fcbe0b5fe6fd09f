//! Probe passes shared by the GPU tests: each pass fills, reads or updates 256-element
//! buffers and 16x16 r32ui images and copies what it reads into its own host-visible report
//! buffer, so a test can check that every reader saw exactly what its producer wrote.

#![allow(dead_code)]

pub mod mip_chain;

use std::sync::Arc;

use ash::vk;
use render_graph::{
    Access, Binding, BindingKind, BufferDesc, BufferRead, BufferWrite, ComputePipeline, ExecuteContext, GpuDevice,
    ImageDesc, ImageSize, ImageWrite, ReadbackBuffer, Registry, RenderGraph, ShaderStage, TypedPass,
};
use shaders::{probe_hash, PROBE_ELEMENTS, PROBE_WIDTH, PROBE_WORKGROUP};

/// Bytes of one probe resource and of one report slot.
pub const PROBE_BYTES: u64 = PROBE_ELEMENTS as u64 * 4;

/// The probe pipelines, built once per device.
pub struct ProbePipelines {
    pub fill_buffer: ComputePipeline,
    pub fill_image: ComputePipeline,
    pub read_buffer: ComputePipeline,
    pub read_storage_image: ComputePipeline,
    pub read_sampled_image: ComputePipeline,
    pub update_buffer: ComputePipeline,
    pub update_image: ComputePipeline,
}

impl ProbePipelines {
    pub fn new(device: &Arc<GpuDevice>) -> ProbePipelines {
        use BindingKind::{SampledImage, StorageBuffer, StorageImage};
        let build = |name: &str, shader: &shaders::Shader, bindings: &[BindingKind]| {
            ComputePipeline::new(device, name, shader.words(), bindings, 8).expect("probe pipeline builds")
        };
        ProbePipelines {
            fill_buffer: build("probe fill buffer", &shaders::PROBE_FILL_BUFFER_COMP, &[StorageBuffer]),
            fill_image: build("probe fill image", &shaders::PROBE_FILL_IMAGE_COMP, &[StorageImage]),
            read_buffer: build("probe read buffer", &shaders::PROBE_READ_BUFFER_COMP, &[StorageBuffer, StorageBuffer]),
            read_storage_image: build(
                "probe read storage image",
                &shaders::PROBE_READ_STORAGE_IMAGE_COMP,
                &[StorageImage, StorageBuffer],
            ),
            read_sampled_image: build(
                "probe read sampled image",
                &shaders::PROBE_READ_SAMPLED_IMAGE_COMP,
                &[SampledImage, StorageBuffer],
            ),
            update_buffer: build(
                "probe update buffer",
                &shaders::PROBE_UPDATE_BUFFER_COMP,
                &[StorageBuffer, StorageBuffer],
            ),
            update_image: build(
                "probe update image",
                &shaders::PROBE_UPDATE_IMAGE_COMP,
                &[StorageImage, StorageBuffer],
            ),
        }
    }
}

/// Buffer or r32ui image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    Buffer,
    Image,
}

/// How a probe reads an image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageRead {
    Storage,
    Sampled,
}

/// One operation of a probe pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeOp {
    /// Creates the resource and writes `probe_hash(seed + i)`.
    Fill { resource: String, kind: ProbeKind, seed: u32 },
    /// Reports what the resource holds.
    Read { resource: String, kind: ProbeKind, image_read: ImageRead },
    /// Reports what the resource holds, then writes `probe_hash(seen ^ seed)`.
    Update { resource: String, kind: ProbeKind, seed: u32 },
}

/// A compute pass running probe operations; reading passes own a report buffer imported as
/// `report <name>` with one slot of 256 values per read or update, in operation order.
pub struct ProbePass {
    pub name: String,
    pub ops: Vec<ProbeOp>,
    pub pipelines: Arc<ProbePipelines>,
    pub side_effect: bool,
    pub executed: Arc<std::sync::atomic::AtomicU32>,
}

/// The handle of one probe operation's resource.
pub enum ProbeHandle {
    ReadImage(render_graph::ImageRead),
    WriteImage(ImageWrite),
    ReadBuffer(BufferRead),
    WriteBuffer(BufferWrite),
}

impl ProbeHandle {
    fn binding(&self) -> Binding {
        match self {
            ProbeHandle::ReadImage(image) => Binding::image(*image),
            ProbeHandle::WriteImage(image) => Binding::image(image),
            ProbeHandle::ReadBuffer(buffer) => Binding::buffer(*buffer),
            ProbeHandle::WriteBuffer(buffer) => Binding::buffer(buffer),
        }
    }
}

/// What a probe pass declared: one handle per operation, and its report buffer.
pub struct ProbeHandles {
    ops: Vec<ProbeHandle>,
    report: Option<BufferWrite>,
}

impl ProbePass {
    pub fn new(name: &str, ops: Vec<ProbeOp>, pipelines: &Arc<ProbePipelines>) -> ProbePass {
        ProbePass {
            name: name.to_owned(),
            ops,
            pipelines: Arc::clone(pipelines),
            side_effect: false,
            executed: Arc::default(),
        }
    }

    /// Number of report slots (reads and updates).
    pub fn report_slots(&self) -> usize {
        self.ops.iter().filter(|op| !matches!(op, ProbeOp::Fill { .. })).count()
    }

    /// The imported report buffer's name.
    pub fn report_name(name: &str) -> String {
        format!("report {name}")
    }
}

fn image_desc() -> ImageDesc {
    ImageDesc::new(vk::Format::R32_UINT, ImageSize::Absolute { width: PROBE_WIDTH, height: PROBE_WIDTH })
}

impl TypedPass for ProbePass {
    type Handles = ProbeHandles;

    fn name(&self) -> &str {
        &self.name
    }

    fn register(&mut self, registry: &mut Registry) -> ProbeHandles {
        let compute = ShaderStage::Compute;
        let mut ops = Vec::with_capacity(self.ops.len());
        for op in &self.ops {
            let (resource, kind, access) = match op {
                ProbeOp::Fill { resource, kind, .. } => (resource, *kind, Access::StorageWrite(compute)),
                ProbeOp::Read { resource, kind, image_read } => {
                    let access = match (kind, image_read) {
                        (ProbeKind::Image, ImageRead::Sampled) => Access::Sampled(compute),
                        _ => Access::StorageRead(compute),
                    };
                    (resource, *kind, access)
                }
                ProbeOp::Update { resource, kind, .. } => (resource, *kind, Access::StorageReadWrite(compute)),
            };
            let create = matches!(op, ProbeOp::Fill { .. });
            ops.push(match kind {
                ProbeKind::Buffer => {
                    let handle = if create {
                        registry.create_buffer(resource, BufferDesc { size: PROBE_BYTES })
                    } else {
                        registry.buffer(resource)
                    };
                    if access.is_write() {
                        ProbeHandle::WriteBuffer(registry.write_buffer(handle, access))
                    } else {
                        ProbeHandle::ReadBuffer(registry.read_buffer(handle, access))
                    }
                }
                ProbeKind::Image => {
                    let handle =
                        if create { registry.create_image(resource, image_desc()) } else { registry.image(resource) };
                    if access.is_write() {
                        ProbeHandle::WriteImage(registry.write_image(handle, access))
                    } else {
                        ProbeHandle::ReadImage(registry.read_image(handle, access))
                    }
                }
            });
        }
        let report = (self.report_slots() > 0).then(|| {
            let report = registry.buffer(&ProbePass::report_name(&self.name));
            registry.write_storage_buffer(report, compute)
        });
        if self.side_effect {
            registry.side_effect();
        }
        ProbeHandles { ops, report }
    }

    fn execute(&mut self, handles: &ProbeHandles, context: &mut ExecuteContext) {
        self.executed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let groups = PROBE_ELEMENTS / PROBE_WORKGROUP;
        let mut slot = 0_u64;
        for (op, handle) in self.ops.iter().zip(&handles.ops) {
            let target = handle.binding();
            let report =
                handles.report.as_ref().map(|buffer| Binding::buffer_range(buffer, slot * PROBE_BYTES, PROBE_BYTES));
            let pipelines = &self.pipelines;
            let seed = match op {
                ProbeOp::Fill { kind, seed, .. } => {
                    let pipeline = match kind {
                        ProbeKind::Buffer => &pipelines.fill_buffer,
                        ProbeKind::Image => &pipelines.fill_image,
                    };
                    context.bind_compute(pipeline, &[target]);
                    *seed
                }
                ProbeOp::Read { kind, image_read, .. } => {
                    let pipeline = match (kind, image_read) {
                        (ProbeKind::Buffer, _) => &pipelines.read_buffer,
                        (ProbeKind::Image, ImageRead::Storage) => &pipelines.read_storage_image,
                        (ProbeKind::Image, ImageRead::Sampled) => &pipelines.read_sampled_image,
                    };
                    context.bind_compute(pipeline, &[target, report.expect("readers have a report")]);
                    slot += 1;
                    0
                }
                ProbeOp::Update { kind, seed, .. } => {
                    let pipeline = match kind {
                        ProbeKind::Buffer => &pipelines.update_buffer,
                        ProbeKind::Image => &pipelines.update_image,
                    };
                    context.bind_compute(pipeline, &[target, report.expect("updaters have a report")]);
                    slot += 1;
                    *seed
                }
            };
            context.push_constants(&[seed, 0]);
            context.dispatch(groups, 1, 1);
        }
    }
}

/// Creates and imports the report buffer of `pass` into `graph`.
pub fn import_report(device: &Arc<GpuDevice>, graph: &mut RenderGraph, pass: &ProbePass) -> Option<ReadbackBuffer> {
    let slots = pass.report_slots() as u64;
    if slots == 0 {
        return None;
    }
    let name = ProbePass::report_name(&pass.name);
    let readback = ReadbackBuffer::new(device, &name, slots * PROBE_BYTES).expect("report buffer allocates");
    graph.import_buffer(&name, readback.shared());
    Some(readback)
}

/// What a fill writes.
pub fn filled(seed: u32) -> Vec<u32> {
    (0..PROBE_ELEMENTS).map(|index| probe_hash(seed.wrapping_add(index))).collect()
}

/// What an update writes over `seen`.
pub fn updated(seen: &[u32], seed: u32) -> Vec<u32> {
    seen.iter().map(|&value| probe_hash(value ^ seed)).collect()
}

/// A short checksum for messages.
pub fn checksum(values: &[u32]) -> u64 {
    values.iter().enumerate().fold(0xcbf2_9ce4_8422_2325, |hash, (index, &value)| {
        (hash ^ (u64::from(value) << 8 | index as u64)).wrapping_mul(0x0100_0000_01b3)
    })
}
