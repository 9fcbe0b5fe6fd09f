//! The Render stage's Input-stage half ([`READBACK_SYSTEM`]): at the start of a frame, the
//! GPU's statistics and visibility bits of the newest finished frame, read from a ring of host
//! regions without waiting, and fed back to the Visibility stage ([`GpuFeedback`]).

use std::sync::{Arc, Mutex};

use culling::GpuFeedback;
use render_graph::ReadbackBuffer;
use runtime::System;

use super::state::RenderState;
use super::RenderReport;
use crate::passes::GpuCullStats;

/// Name of the system [`install_render`](super::install_render) adds to
/// [`Stage::Input`](runtime::Stage::Input) on the GPU backend: it reads back the newest
/// finished frame's statistics and bits without waiting (see the [`stage`](super) docs for
/// the latency).
pub const READBACK_SYSTEM: &str = "renderer::readback";

/// Host regions of each lagged readback: one per frame in flight, plus the one being read.
pub const READBACK_RING: u64 = render_graph::FRAMES_IN_FLIGHT as u64 + 1;

impl RenderState {
    /// At the start of a frame: reads the newest submitted frame whose fence has signalled,
    /// asking without waiting, among the last `FRAMES_IN_FLIGHT + 1` (the oldest of them,
    /// when it exists, was waited for by the graph already). Does nothing when that frame was
    /// read before or none has finished.
    pub(super) fn read_back(&mut self, report: &mut RenderReport) -> render_graph::Result<()> {
        let Some(newest) = self.frames.checked_sub(1) else { return Ok(()) };
        let oldest = newest.saturating_sub(render_graph::FRAMES_IN_FLIGHT as u64);
        for candidate in (oldest..=newest).rev() {
            if self.graph.frame_complete(candidate)? {
                if report.bits_frame.is_some_and(|read| read >= candidate) {
                    return Ok(());
                }
                return self.read_frame(candidate, report);
            }
        }
        Ok(())
    }

    /// Reads `frame`'s (finished) statistics and bits into `report`.
    pub(super) fn read_frame(&self, frame: u64, report: &mut RenderReport) -> render_graph::Result<()> {
        let Some(stats) = &self.stats else { return Ok(()) };
        report.bits_frame = Some(frame);
        let region = ring_region(stats, frame)?;
        report.gpu = Some(GpuCullStats::from_counters(region, self.graph.stats()));
        if let Some(bits) = &self.bits {
            let region = ring_region(bits, frame)?;
            report.bits.clear();
            report.bits.extend(region.chunks_exact(8).map(|word| u64::from_le_bytes(word.try_into().expect("8"))));
        }
        Ok(())
    }
}

/// The bytes ring region `frame % READBACK_RING` of `buffer`, which that frame wrote and
/// whose fence has signalled (the caller checked it, or waited). The region is not
/// rewritten before frame `frame + READBACK_RING`, which cannot be submitted before the
/// caller's frame ends.
fn ring_region(buffer: &ReadbackBuffer, frame: u64) -> render_graph::Result<&[u8]> {
    let gpu = buffer.buffer();
    gpu.invalidate()?;
    let bytes = gpu.mapped().ok_or_else(|| render_graph::GraphError::Allocation(String::from("ring not mapped")))?;
    let region = bytes.len() as u64 / READBACK_RING;
    let start = (frame % READBACK_RING * region) as usize;
    Ok(&bytes[start..start + region as usize])
}

/// The Input-stage half of the renderer: the lagged readback and the [`GpuFeedback`] the
/// Visibility stage reads later in the same frame.
pub(super) fn readback_system(state: Arc<Mutex<RenderState>>, feeds_back: bool) -> System {
    System::new(READBACK_SYSTEM, move |ctx| {
        runtime::profile_zone!("render readback");
        let mut report = ctx.resource_mut::<RenderReport>();
        // Locks show in a capture: the wait for the lock, then the time it is held.
        let mut state = {
            runtime::profile_zone!("lock wait: render state");
            state.lock().unwrap_or_else(|poison| poison.into_inner())
        };
        runtime::profile_zone!("lock held: render state");
        if let Err(error) = state.read_back(&mut report) {
            report.error = Some(error.to_string());
        }
        if feeds_back {
            let mut feedback = ctx.resource_mut::<GpuFeedback>();
            if report.bits_frame != feedback.frame {
                feedback.frame = report.bits_frame;
                feedback.visible.clear();
                feedback.visible.extend_from_slice(&report.bits);
                feedback.in_view.clear();
                if let Some(frame) = report.bits_frame {
                    feedback.in_view.extend_from_slice(&state.in_view[(frame % READBACK_RING) as usize]);
                }
            }
        }
    })
    .writes_resource::<RenderReport>()
    .writes_resource::<GpuFeedback>()
}
