//! The GPU-culled scene frame: the standard passes of [`render_graph::passes`] with the draw
//! list written by two-phase GPU culling instead of the host, and the readback of the bits.

use std::sync::Arc;

use render_graph::passes::{
    image_readback_buffer, lock_scene, DepthPrepass, DrawMode, GeometryPass, ObjectUploadPass, ReadbackPass,
    ScenePassOptions, SharedScene, COLOR, COLOR_READBACK,
};
use render_graph::{
    vk, Access, BufferHandle, ExecuteContext, GraphError, Pass, ReadbackBuffer, Registry, RenderGraph, Result,
};

use super::cull::{
    visibility_bits_bytes, CullPhase, CullResetPass, GpuCullPass, SharedCullSettings, CULL_STATS, CULL_STAT_WORDS,
    VISIBILITY_BITS,
};
use super::hiz::HiZBuildPass;
use super::render::READBACK_RING;

/// Name of the imported host-visible buffer the bits are copied into.
pub const VISIBILITY_READBACK: &str = "visibility_readback";

/// Name of the imported host-visible buffer the cull counters are copied into.
pub const CULL_STATS_READBACK: &str = "cull_stats_readback";

/// What [`add_gpu_culled_scene_passes`] made.
pub struct GpuCulledScene {
    /// The readback of `color`, when asked for.
    pub color: Option<ReadbackBuffer>,
    /// The readback of [`VISIBILITY_BITS`], when asked for: this frame's bits once the
    /// frame has finished ([`RenderGraph::wait_idle`]).
    pub bits: Option<ReadbackBuffer>,
    /// The readback of [`CULL_STATS`] (always): this frame's counters once the frame has
    /// finished; decode with [`GpuCullStats::from_counters`](super::GpuCullStats).
    pub stats: ReadbackBuffer,
    /// How the scene passes draw: [`DrawMode::IndirectCount`] where the device has it, else
    /// [`DrawMode::Indirect`] over one command per object (the reset pass zeroes unused ones;
    /// the scene draws from the GPU's list, [`GpuScene::draw_gpu_list`](render_graph::passes::GpuScene::draw_gpu_list)).
    pub mode: DrawMode,
}

/// Imports the scene's buffers and adds the GPU-culled scene passes, in order: object
/// upload, [`CullResetPass`], [`GpuCullPass`] early, depth prepass, [`HiZBuildPass`],
/// [`GpuCullPass`] late, late depth prepass, geometry, and the readbacks asked for.
///
/// Returns [`GraphError::InvalidDescription`] when the output extent is zero or the device
/// cannot draw indirectly with a first instance (then cull on the CPU).
pub fn add_gpu_culled_scene_passes(
    graph: &mut RenderGraph,
    scene: &SharedScene,
    options: &ScenePassOptions,
    settings: &SharedCullSettings,
    read_bits: bool,
) -> Result<GpuCulledScene> {
    let (extent, mode) =
        culled_frame_mode(graph, "GPU culling needs indirect draws with a first instance (drawIndirectFirstInstance)")?;
    let device = Arc::clone(graph.device());
    let capacity = lock_scene(scene).capacity();
    let early = GpuCullPass::new(&device, Arc::clone(scene), Arc::clone(settings), CullPhase::Early)?;
    let late = GpuCullPass::new(&device, Arc::clone(scene), Arc::clone(settings), CullPhase::Late)?;
    let depth = DepthPrepass::with_mode(&device, Arc::clone(scene), mode)?;
    let late_depth = DepthPrepass::late(&device, Arc::clone(scene), mode)?;
    let geometry = GeometryPass::with_mode(&device, Arc::clone(scene), options.clear_color, mode)?;
    let hiz = HiZBuildPass::new(&device)?;
    let color = if options.readback { Some(image_readback_buffer(&device, COLOR_READBACK, extent)?) } else { None };
    let bits = if read_bits {
        Some(ReadbackBuffer::new(&device, VISIBILITY_READBACK, visibility_bits_bytes(capacity))?)
    } else {
        None
    };
    let stats = ReadbackBuffer::new(&device, CULL_STATS_READBACK, CULL_STAT_WORDS as u64 * 4)?;
    {
        let mut scene = lock_scene(scene);
        scene.import_into(graph);
        scene.draw_gpu_list();
    }
    graph.add_pass(ObjectUploadPass::new(&device, Arc::clone(scene))?);
    graph.add_pass(CullResetPass::new(capacity, mode != DrawMode::IndirectCount));
    graph.add_pass(early);
    graph.add_pass(depth);
    graph.add_pass(hiz);
    graph.add_pass(late);
    graph.add_pass(late_depth);
    graph.add_pass(geometry);
    if let Some(color) = &color {
        graph.import_buffer(COLOR_READBACK, color.shared());
        graph.add_pass(ReadbackPass::new());
    }
    if let Some(bits) = &bits {
        graph.import_buffer(VISIBILITY_READBACK, bits.shared());
        graph.add_pass(BufferReadbackPass::new(VISIBILITY_BITS, VISIBILITY_READBACK));
    }
    graph.import_buffer(CULL_STATS_READBACK, stats.shared());
    graph.add_pass(BufferReadbackPass::new(CULL_STATS, CULL_STATS_READBACK));
    Ok(GpuCulledScene { color, bits, stats, mode })
}

/// The output extent and draw mode of a GPU-culled frame: an error when the extent is zero
/// or the device cannot draw indirectly with a first instance (`needs` says what needs it).
pub(crate) fn culled_frame_mode(graph: &RenderGraph, needs: &'static str) -> Result<(vk::Extent2D, DrawMode)> {
    let extent = graph.output_extent();
    if extent.width == 0 || extent.height == 0 {
        return Err(GraphError::InvalidDescription {
            resource: String::from(COLOR),
            reason: "the output extent is zero; give the graph a non-zero extent",
        });
    }
    let capabilities = graph.device().capabilities();
    if DrawMode::IndirectCount.is_supported(capabilities) {
        Ok((extent, DrawMode::IndirectCount))
    } else if DrawMode::Indirect.is_supported(capabilities) {
        Ok((extent, DrawMode::Indirect))
    } else {
        Err(GraphError::InvalidDescription {
            resource: String::from(render_graph::passes::DRAW_COMMANDS),
            reason: needs,
        })
    }
}

/// Copies a graph buffer (such as [`VISIBILITY_BITS`] or [`CULL_STATS`]) into an imported
/// host-visible buffer: at its start ([`BufferReadbackPass::new`]), or into region
/// `frame % READBACK_RING` of a ring ([`BufferReadbackPass::ring`]), so the host reads older
/// frames' regions without waiting.
pub struct BufferReadbackPass {
    name: String,
    source_name: String,
    target_name: String,
    /// The ring's region size in bytes, or `None` for a copy to the buffer's start.
    ring_region: Option<u64>,
    source: Option<BufferHandle>,
    target: Option<BufferHandle>,
}

impl BufferReadbackPass {
    /// Copies `source` into the buffer imported as `target` (as much as fits).
    pub fn new(source: &str, target: &str) -> BufferReadbackPass {
        BufferReadbackPass {
            name: format!("readback {source}"),
            source_name: source.to_owned(),
            target_name: target.to_owned(),
            ring_region: None,
            source: None,
            target: None,
        }
    }

    /// Copies `source` (up to `region` bytes) into region `frame % READBACK_RING` of the ring
    /// imported as `target`; a ring smaller than its regions fails the frame.
    pub fn ring(source: &str, target: &str, region: u64) -> BufferReadbackPass {
        BufferReadbackPass {
            name: format!("ring readback {source}"),
            ring_region: Some(region),
            ..BufferReadbackPass::new(source, target)
        }
    }
}

impl Pass for BufferReadbackPass {
    fn name(&self) -> &str {
        &self.name
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        let source = registry.buffer(&self.source_name);
        self.source = Some(registry.access_buffer(source, Access::TransferRead));
        let target = registry.buffer(&self.target_name);
        self.target = Some(registry.access_buffer(target, Access::TransferWrite));
    }

    fn execute(&mut self, context: &mut ExecuteContext<'_>) {
        let source = context.buffer(self.source.expect("register ran"));
        let target = context.buffer(self.target.expect("register ran"));
        let (offset, size) = match self.ring_region {
            None => (0, source.size.min(target.size)),
            Some(region) => (context.frame_index() % READBACK_RING * region, region.min(source.size)),
        };
        if offset + size > target.size {
            context.fail(GraphError::InvalidDescription {
                resource: self.target_name.clone(),
                reason: "the readback ring is smaller than its regions",
            });
            return;
        }
        let region = vk::BufferCopy { src_offset: 0, dst_offset: offset, size };
        // SAFETY: recording outside rendering; the graph made the source readable and the
        // target writable by transfers (both declared); the copy fits (checked above).
        unsafe { context.device().cmd_copy_buffer(context.command_buffer(), source.buffer, target.buffer, &[region]) };
    }
}

/// Reads bits copied by a [`BufferReadbackPass`] as u64 words (bit `i` of word `i / 64`
/// = object `i`), the layout of [`VisibilityBits`](crate::VisibilityBits).
pub fn read_visibility_words(buffer: &ReadbackBuffer, out: &mut Vec<u64>) -> Result<()> {
    let bytes = buffer.read()?;
    out.clear();
    out.extend(bytes.chunks_exact(8).map(|word| u64::from_le_bytes(word.try_into().expect("chunks of 8 bytes"))));
    Ok(())
}
