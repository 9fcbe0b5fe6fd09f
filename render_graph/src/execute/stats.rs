//! Per-frame statistics: GPU time per pass from timestamp queries and CPU recording time.

/// Timings of one pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassStats {
    /// The pass name.
    pub name: String,
    /// GPU time between the timestamps around the pass, in milliseconds (`None` when the
    /// queue has no timestamps).
    pub gpu_ms: Option<f64>,
    /// CPU time spent in `execute` and `record_draw`, in milliseconds.
    pub cpu_record_ms: f64,
    /// Barriers recorded before the pass.
    pub barriers: u32,
    /// Who added the pass ([`crate::RenderGraph::set_owner`]).
    pub owner: crate::compile::Owner,
}

/// Timing of one GPU zone a pass opened inside itself ([`crate::ExecuteContext::begin_gpu_zone`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ZoneStats {
    /// The pass that opened it.
    pub pass: String,
    /// The zone's name.
    pub name: String,
    /// GPU time between its two timestamps, in milliseconds (`None` without timestamps).
    pub gpu_ms: Option<f64>,
}

/// Statistics of the latest frame whose GPU work has completed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GraphStats {
    /// The frame these numbers belong to.
    pub frame_index: u64,
    /// One entry per executed pass, in execution order.
    pub passes: Vec<PassStats>,
    /// The zones passes opened inside themselves, in recording order (at most
    /// [`MAX_GPU_ZONES`](crate::MAX_GPU_ZONES) a frame).
    pub zones: Vec<ZoneStats>,
    /// Sum of the passes' GPU times, in milliseconds.
    pub total_gpu_ms: f64,
    /// Sum of the passes' CPU recording times, in milliseconds.
    pub total_cpu_record_ms: f64,
    /// Bytes of transient memory allocated (after aliasing).
    pub transient_bytes: u64,
    /// Bytes saved by aliasing transient resources.
    pub aliased_bytes_saved: u64,
}

impl GraphStats {
    /// GPU milliseconds of the pass named `name`: `None` when the frame had no such pass or
    /// the queue has no timestamps.
    pub fn pass_gpu_ms(&self, name: &str) -> Option<f64> {
        self.passes.iter().find(|pass| pass.name == name).and_then(|pass| pass.gpu_ms)
    }
}
