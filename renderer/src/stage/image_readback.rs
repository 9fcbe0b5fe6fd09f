//! The lagged readback of the image-target views culled on the GPU: per view, a ring of its
//! cull's counters and (when bits are read back) of its bits, read with the window's answer
//! into [`RenderReport::image_views`].

use std::sync::Arc;

use render_graph::readback::BufferReadbackPass;
use render_graph::{ReadbackBuffer, RenderGraph, TypedPass};

use super::readback::{add_ring, ReadbackRing, READBACK_RING};
use super::RenderReport;
use crate::passes::{visibility_bits_bytes, GpuCullStats, HiZBuildPass, ImageCullNames, CULL_STAT_WORDS};
use crate::scene::ImageViewGpu;

/// An image-target view's rings.
pub(super) struct ImageRing {
    name: Arc<str>,
    names: ImageCullNames,
    /// Its pyramid pass's name (`<image> hi-z build`).
    pyramid: String,
    stats: ReadbackBuffer,
    bits: Option<ReadbackBuffer>,
    /// The first drawn frame that writes the rings.
    from: u64,
}

/// The name of an image view's counters' ring.
fn stats_ring(image: &str) -> String {
    format!("{image} cull stats ring")
}

/// The name of an image view's bits' ring.
fn bits_ring(image: &str) -> String {
    format!("{image} bits ring")
}

impl ReadbackRing {
    /// Adds the rings of the cull of the view drawn into `image` (after every pass added so
    /// far), for `capacity` slots, written from drawn frame `from` on. Nothing on the CPU
    /// backend (no counters are read back).
    pub(super) fn add_image_view(
        &mut self,
        graph: &mut RenderGraph,
        image: &Arc<str>,
        capacity: u32,
        from: u64,
    ) -> render_graph::Result<()> {
        if self.stats.is_none() {
            return Ok(());
        }
        let names = ImageCullNames::new(image);
        let stats = add_ring(graph, &stats_ring(image), &names.stats, CULL_STAT_WORDS as u64 * 4)?;
        let bits = match self.bits {
            Some(_) => Some(add_ring(graph, &bits_ring(image), &names.bits, visibility_bits_bytes(capacity))?),
            None => None,
        };
        let pyramid = format!("{image} {}", HiZBuildPass::IMAGE_VIEW_SUFFIX);
        self.image_views.push(ImageRing { name: Arc::clone(image), names, pyramid, stats, bits, from });
        Ok(())
    }

    /// Removes the rings of the view drawn into `image` and their passes; the buffers are
    /// kept until the frames that may write them have finished.
    pub(super) fn remove_image_view(&mut self, graph: &mut RenderGraph, image: &str) {
        let Some(index) = self.image_views.iter().position(|ring| &*ring.name == image) else { return };
        let ring = self.image_views.remove(index);
        let bytes = CULL_STAT_WORDS as u64 * 4;
        graph.remove_pass(BufferReadbackPass::ring(&ring.names.stats, &stats_ring(image), bytes, READBACK_RING).name());
        self.outgrown.push(ring.stats);
        if let Some(bits) = ring.bits {
            graph.remove_pass(BufferReadbackPass::ring(&ring.names.bits, &bits_ring(image), 8, READBACK_RING).name());
            self.outgrown.push(bits);
        }
    }

    /// The scene grew to `capacity` slots: every image view's bits ring is replaced by one that
    /// holds them, written from drawn frame `from` on.
    pub(super) fn grow_image_views(
        &mut self,
        graph: &mut RenderGraph,
        capacity: u32,
        from: u64,
    ) -> render_graph::Result<()> {
        let images: Vec<Arc<str>> = self.image_views.iter().map(|ring| Arc::clone(&ring.name)).collect();
        for image in images {
            self.remove_image_view(graph, &image);
            self.add_image_view(graph, &image, capacity, from)?;
        }
        Ok(())
    }

    /// Reads drawn frame `frame`'s (finished) image views' counters and bits into `report`.
    pub(super) fn read_image_views(
        &self,
        graph: &RenderGraph,
        frame: u64,
        report: &mut RenderReport,
    ) -> render_graph::Result<()> {
        // The report's entries and their bits are reused: steady frames allocate nothing.
        let mut used = 0;
        for ring in self.image_views.iter().filter(|ring| ring.from <= frame) {
            let counters = ring_region(&ring.stats, frame)?;
            let pass_ms = |name: &str| graph.stats().pass_gpu_ms(name);
            let stats = GpuCullStats {
                gpu_ms: [pass_ms(&ring.names.early), pass_ms(&ring.pyramid), pass_ms(&ring.names.late)],
                ..GpuCullStats::from_counters(counters, graph.stats())
            };
            if used == report.image_views.len() {
                report.image_views.push(ImageViewGpu::default());
            }
            let own = &mut report.image_views[used];
            used += 1;
            if own.name != ring.name {
                own.name = Arc::clone(&ring.name);
            }
            own.stats = stats;
            own.bits.clear();
            if let Some(ring) = &ring.bits {
                let region = ring_region(ring, frame)?;
                own.bits.extend(region.chunks_exact(8).map(|word| u64::from_le_bytes(word.try_into().expect("8"))));
            }
        }
        report.image_views.truncate(used);
        Ok(())
    }
}

/// The ring region `frame` wrote (see the window's rings).
fn ring_region(buffer: &ReadbackBuffer, frame: u64) -> render_graph::Result<&[u8]> {
    super::readback::ring_region(buffer, frame)
}
