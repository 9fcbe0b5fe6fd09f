//! The lagged readback of the GPU's statistics and visibility bits: a ring of host regions,
//! one per frame in flight plus the one being read, so the Input stage reads the newest
//! finished frame without waiting ([`READBACK_SYSTEM`] feeds it back to the Visibility
//! stage as [`GpuFeedback`](culling::GpuFeedback)).

use render_graph::readback::BufferReadbackPass;
use render_graph::{ReadbackBuffer, RenderGraph, TypedPass};

use super::RenderReport;
use crate::passes::{
    shadow_bits_words, visibility_bits_bytes, GpuCullStats, CULL_STAT_WORDS, SHADOW_CASTER_BITS, VISIBILITY_BITS,
};
use crate::scene::MAX_WINDOW_VIEWS;

/// Name of the system [`install_render`](super::install_render) adds to
/// [`Stage::Input`](runtime::Stage::Input) on the GPU backend: it reads back the newest
/// finished frame's statistics and bits without waiting (see the [`stage`](super) docs for
/// the latency).
pub const READBACK_SYSTEM: &str = "renderer::readback";

/// Host regions of each lagged readback: one per frame in flight, plus the one being read.
pub const READBACK_RING: u64 = render_graph::FRAMES_IN_FLIGHT as u64 + 1;

/// Name of the imported ring the visibility bits are copied into.
pub(super) const VISIBILITY_RING: &str = "visibility ring";

/// Name of the imported ring the shadow views' caster bits are copied into.
pub(super) const SHADOW_BITS_RING: &str = "shadow bits ring";

/// Imports a ring of `READBACK_RING` regions of `bytes` as `name` into `graph` and adds the
/// pass copying `source` into it each frame (after every pass added so far).
pub(super) fn add_ring(
    graph: &mut RenderGraph,
    name: &str,
    source: &str,
    bytes: u64,
) -> render_graph::Result<ReadbackBuffer> {
    let buffer = ReadbackBuffer::new(graph.device(), name, bytes * READBACK_RING)?;
    graph.import_buffer(name, buffer.shared());
    graph.add_typed_pass(BufferReadbackPass::ring(source, name, bytes, READBACK_RING));
    Ok(buffer)
}

/// Replaces the ring `name` (and its pass) by one of `bytes` regions, allocated first.
fn replace_ring(graph: &mut RenderGraph, name: &str, source: &str, bytes: u64) -> render_graph::Result<ReadbackBuffer> {
    let buffer = ReadbackBuffer::new(graph.device(), name, bytes * READBACK_RING)?;
    let pass = BufferReadbackPass::ring(source, name, bytes, READBACK_RING);
    graph.remove_pass(pass.name());
    graph.import_buffer(name, buffer.shared());
    graph.add_typed_pass(pass);
    Ok(buffer)
}

/// The rings the GPU culling's readback passes write, and what the CPU knew of each frame.
#[derive(Default)]
pub(super) struct ReadbackRing {
    /// The culling statistics' ring (GPU backend only).
    pub(super) stats: Option<ReadbackBuffer>,
    /// The visibility bits' ring (unless `BitsReadback::None`).
    pub(super) bits: Option<ReadbackBuffer>,
    /// Per ring region: the CPU's bits before occlusion of the frame that wrote the region
    /// (what [`GpuFeedback::in_view`](culling::GpuFeedback::in_view) gets with that frame's
    /// GPU bits).
    pub(super) in_view: Vec<Vec<u64>>,
    /// The shadow views' counts and triangles (shadows culled on the GPU).
    pub(super) shadow_counts: Option<ReadbackBuffer>,
    /// The shadow views' caster bits (shadows culled on the GPU, bits read back).
    pub(super) shadow_bits: Option<ReadbackBuffer>,
    /// u64 words of each view's bits in a `shadow_bits` region.
    pub(super) shadow_words_per_view: usize,
    /// Per ring region: the shadow views of the frame that wrote it, as the host placed them.
    pub(super) shadow_views: Vec<Vec<crate::ShadowViewDraws>>,
    /// Per ring region: the game frame (`FrameTime::frame_index`) of the drawn frame that
    /// wrote it, which names its answers ([`RenderReport::bits_frame`]).
    pub(super) game_frames: [u64; READBACK_RING as usize],
    /// Per ring region: the window views the object cull culled in the frame that wrote it
    /// (1 unless split-screen).
    pub(super) view_counts: [u32; READBACK_RING as usize],
    /// u64 words of one view's bits in a `bits` region (the capacity's).
    pub(super) words_per_view: usize,
    /// The first frame the rings hold: the frames before it wrote rings that were replaced
    /// when the scene grew, and are not read.
    pub(super) valid_from: u64,
    /// Replaced rings, kept until the frames that may write them have finished (the frame
    /// after the growth compiles, which waits for them).
    pub(super) outgrown: Vec<ReadbackBuffer>,
    /// The image-target views' rings (`image_readback.rs`).
    pub(super) image_views: Vec<super::image_readback::ImageRing>,
}

impl ReadbackRing {
    /// The CPU's bits in view of game frame `game_frame`, whose answers were read last (an
    /// empty list when no region holds it).
    pub(super) fn in_view_of(&self, game_frame: u64) -> &[u64] {
        self.game_frames.iter().position(|&frame| frame == game_frame).map_or(&[], |region| &self.in_view[region])
    }

    /// At the start of a frame, with `frames` submitted: reads the newest submitted frame
    /// whose fence has signalled, asking without waiting, among the last
    /// `FRAMES_IN_FLIGHT + 1` (the oldest of them, when it exists, was waited for by the
    /// graph already). Does nothing when that frame was read before or none has finished.
    pub(super) fn read_newest(
        &self,
        graph: &RenderGraph,
        frames: u64,
        report: &mut RenderReport,
    ) -> render_graph::Result<()> {
        let Some(newest) = frames.checked_sub(1) else { return Ok(()) };
        let oldest = newest.saturating_sub(render_graph::FRAMES_IN_FLIGHT as u64).max(self.valid_from);
        for candidate in (oldest..=newest).rev() {
            if graph.frame_complete(candidate)? {
                let game_frame = self.game_frames[(candidate % READBACK_RING) as usize];
                if report.bits_frame.is_some_and(|read| read >= game_frame) {
                    return Ok(());
                }
                return self.read_frame(graph, candidate, report);
            }
        }
        Ok(())
    }

    /// The scene grew to `capacity` slots: the rings of bits sized by the capacity are
    /// replaced by rings that hold it (with their passes), from frame `next_frame` on, for
    /// `shadow_views` shadow views.
    pub(super) fn follow_growth(
        &mut self,
        graph: &mut RenderGraph,
        capacity: u32,
        shadow_views: u32,
        next_frame: u64,
    ) -> render_graph::Result<()> {
        self.valid_from = next_frame;
        // Each new ring is allocated before its pass is replaced: a failed allocation leaves
        // the old ring and its pass as they were.
        if self.bits.is_some() {
            let bytes = visibility_bits_bytes(capacity);
            let ring = replace_ring(graph, VISIBILITY_RING, VISIBILITY_BITS, bytes * MAX_WINDOW_VIEWS as u64)?;
            self.outgrown.extend(self.bits.replace(ring));
            self.words_per_view = bytes as usize / 8;
        }
        if self.shadow_bits.is_some() {
            let words = shadow_bits_words(capacity);
            let bytes = u64::from(words) * 4 * u64::from(shadow_views.clamp(1, crate::MAX_SHADOW_VIEWS as u32));
            let ring = replace_ring(graph, SHADOW_BITS_RING, SHADOW_CASTER_BITS, bytes)?;
            self.outgrown.extend(self.shadow_bits.replace(ring));
            self.shadow_words_per_view = words as usize / 2;
        }
        self.grow_image_views(graph, capacity, next_frame)
    }

    /// Reads drawn frame `frame`'s (finished) statistics and bits into `report`, named by its
    /// game frame.
    pub(super) fn read_frame(
        &self,
        graph: &RenderGraph,
        frame: u64,
        report: &mut RenderReport,
    ) -> render_graph::Result<()> {
        let Some(stats) = &self.stats else { return Ok(()) };
        let game_frame = self.game_frames[(frame % READBACK_RING) as usize];
        report.bits_frame = Some(game_frame);
        let region = ring_region(stats, frame)?;
        let gpu = GpuCullStats::from_counters(region, graph.stats());
        let from_bytes = |counts: &[u8]| GpuCullStats::from_counters(counts, graph.stats());
        // The GPU's own counts, plotted as they arrive: `gpu stats frame` says which frame
        // they belong to (one or more frames before the one being recorded).
        runtime::profile_plot!("gpu stats frame", game_frame);
        runtime::profile_plot!("gpu drawn early", gpu.early_drawn);
        runtime::profile_plot!("gpu drawn late", gpu.late_drawn);
        runtime::profile_plot!("gpu frustum rejected", gpu.frustum_rejected);
        runtime::profile_plot!("gpu occlusion rejected", gpu.occlusion_rejected);
        runtime::profile_plot!("gpu triangles", gpu.triangles);
        // The GPU's LOD histogram: objects drawn at each level the cull chose.
        runtime::profile_plot!("gpu lod level 0", gpu.lod_levels[0]);
        runtime::profile_plot!("gpu lod level 1", gpu.lod_levels[1]);
        runtime::profile_plot!("gpu lod level 2", gpu.lod_levels[2]);
        runtime::profile_plot!("gpu lod level 3+", gpu.lod_levels[3]);
        report.gpu = Some(gpu);
        // A split-screen frame's every window view, by its index among the cull's views.
        let views = self.view_counts[(frame % READBACK_RING) as usize].max(1) as usize;
        report.view_gpu.clear();
        if views > 1 {
            let counters = CULL_STAT_WORDS * 4;
            let view_stats = region.chunks_exact(counters).take(views);
            report.view_gpu.extend(view_stats.map(|counts| GpuCullStats { gpu_ms: [None; 3], ..from_bytes(counts) }));
            report.view_gpu[0] = gpu;
            cull_view_times(graph.stats(), &mut report.view_gpu);
        }
        report.view_bits.clear();
        if let Some(bits) = &self.bits {
            let region = ring_region(bits, frame)?;
            let words = region.chunks_exact(8).map(|word| u64::from_le_bytes(word.try_into().expect("8")));
            report.bits.clear();
            report.bits.extend(words.clone().take(self.words_per_view));
            if views > 1 {
                report.view_bits.extend(words.take(self.words_per_view * views));
            }
        }
        let pass_ms = |name: &str| graph.stats().pass_gpu_ms(name);
        let both = crate::passes::sum_gpu_ms;
        report.shadows.gpu_ms = [
            both(pass_ms(crate::ShadowCullPass::NAME), pass_ms(crate::ShadowCullPass::LATE_NAME)),
            both(pass_ms(crate::ShadowAtlasPass::NAME), pass_ms(crate::ShadowAtlasPass::LATE_NAME)),
            pass_ms(crate::HiZBuildPass::SHADOW_NAME),
        ];
        if let Some(counts) = &self.shadow_counts {
            self.read_shadows(counts, frame, report)?;
        }
        shadow_view_times(graph.stats(), &mut report.shadows.views);
        self.read_image_views(graph, frame, report)
    }

    /// Frame `frame`'s shadow views with the GPU's counts, triangles and (when read back)
    /// bits into `report.shadows`.
    fn read_shadows(&self, counts: &ReadbackBuffer, frame: u64, report: &mut RenderReport) -> render_graph::Result<()> {
        let region = ring_region(counts, frame)?;
        let word = |index: usize| {
            region.get(index * 4..index * 4 + 4).map_or(0, |word| u32::from_le_bytes(word.try_into().expect("4")))
        };
        let shadows = &mut report.shadows;
        shadows.on_device = true;
        shadows.views.clear();
        shadows.views.extend_from_slice(&self.shadow_views[(frame % READBACK_RING) as usize]);
        let late = crate::SHADOW_LATE_COUNTS as usize;
        for (index, view) in shadows.views.iter_mut().enumerate() {
            view.late = word(late + index);
            view.count = word(index) + view.late;
            let triangles = word(crate::MAX_SHADOW_VIEWS + index) + word(late + crate::MAX_SHADOW_VIEWS + index);
            view.triangles = u64::from(triangles);
        }
        shadows.bits.clear();
        shadows.words_per_view = 0;
        if let Some(bits) = &self.shadow_bits {
            let region = ring_region(bits, frame)?;
            shadows.words_per_view = self.shadow_words_per_view;
            let words = shadows.views.len() * self.shadow_words_per_view;
            let bytes = &region[..(words * 8).min(region.len())];
            shadows.bits.extend(bytes.chunks_exact(8).map(|word| u64::from_le_bytes(word.try_into().expect("8"))));
        }
        Ok(())
    }
}

/// Each window view's GPU times of the object cull's early and late passes (its zones
/// `view N` there, when the views are dispatched one by one; `None` otherwise) in the newest
/// frame whose times are known; the Hi-Z build is one over the whole window, not a view's.
fn cull_view_times(stats: &render_graph::GraphStats, views: &mut [GpuCullStats]) {
    for view in views.iter_mut() {
        view.gpu_ms = [None; 3];
    }
    let passes = [(crate::GpuCullPass::EARLY_NAME, 0), (crate::GpuCullPass::LATE_NAME, 2)];
    for zone in &stats.zones {
        let Some(&(_, phase)) = passes.iter().find(|(pass, _)| *pass == zone.pass) else { continue };
        let index = zone.name.strip_prefix("view ").and_then(|rest| rest.parse::<usize>().ok());
        if let Some(view) = index.and_then(|index| views.get_mut(index)) {
            view.gpu_ms[phase] = zone.gpu_ms;
        }
    }
}

/// Each view's GPU time: the sum of its zones (`view N ...`) in the shadow atlas passes of
/// the newest frame whose times are known.
fn shadow_view_times(stats: &render_graph::GraphStats, views: &mut [crate::ShadowViewDraws]) {
    for view in views.iter_mut() {
        view.gpu_ms = None;
    }
    let atlas = [crate::ShadowAtlasPass::NAME, crate::ShadowAtlasPass::LATE_NAME];
    for zone in stats.zones.iter().filter(|zone| atlas.contains(&zone.pass.as_str())) {
        let index = zone.name.strip_prefix("view ").and_then(|rest| rest.split(' ').next()?.parse::<usize>().ok());
        if let (Some(view), Some(ms)) = (index.and_then(|index| views.get_mut(index)), zone.gpu_ms) {
            view.gpu_ms = Some(view.gpu_ms.unwrap_or(0.0) + ms);
        }
    }
}

/// The bytes ring region `frame % READBACK_RING` of `buffer`, which that frame wrote and
/// whose fence has signalled (the caller checked it, or waited). The region is not
/// rewritten before frame `frame + READBACK_RING`, which cannot be submitted before the
/// caller's frame ends.
pub(super) fn ring_region(buffer: &ReadbackBuffer, frame: u64) -> render_graph::Result<&[u8]> {
    let gpu = buffer.buffer();
    gpu.invalidate()?;
    let bytes = gpu.mapped().ok_or_else(|| render_graph::GraphError::Allocation(String::from("ring not mapped")))?;
    let region = bytes.len() as u64 / READBACK_RING;
    let start = (frame % READBACK_RING * region) as usize;
    Ok(&bytes[start..start + region as usize])
}
