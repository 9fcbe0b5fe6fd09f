//! Tracy GPU zones (feature `profile`): one zone per pass, fed with the timestamps the
//! executor already writes around every pass.
//!
//! The Tracy GPU context is calibrated once with a timestamp written by a one-time submit.
//! Zones are allocated while recording (beside the timestamp queries) and receive their GPU
//! times when the frame slot is harvested after its fence.

use ash::vk;
use tracy_client::{Client, GpuContext, GpuContextType, GpuSpan};

use crate::device::GpuDevice;

/// Tracy GPU context and the zones of each frame slot waiting for their timestamps.
pub(crate) struct GpuProfiler {
    context: Option<GpuContext>,
    spans: Vec<Vec<GpuSpan>>,
    /// Names of the zones each slot's frame opened (`[..named[slot]]`; strings are reused,
    /// so steady frames allocate nothing).
    names: Vec<Vec<String>>,
    named: Vec<usize>,
}

impl GpuProfiler {
    /// A profiler without a context yet, for `slots` frames in flight.
    pub(crate) fn new(slots: usize) -> GpuProfiler {
        GpuProfiler {
            context: None,
            spans: (0..slots).map(|_| Vec::new()).collect(),
            names: (0..slots).map(|_| Vec::new()).collect(),
            named: vec![0; slots],
        }
    }

    /// Creates the Tracy GPU context once Tracy runs (the application may start it after the
    /// graph exists), when the queue has timestamps.
    pub(crate) fn ensure_context(&mut self, device: &GpuDevice) {
        if self.context.is_some() || !device.capabilities().timestamps {
            return;
        }
        self.context = Client::running().and_then(|client| {
            let timestamp = calibration_timestamp(device)?;
            let period = device.capabilities().timestamp_period_ns;
            client.new_gpu_context(Some("render graph"), GpuContextType::Vulkan, timestamp, period).ok()
        });
    }

    /// Drops zones of a frame that was never submitted from `slot`.
    pub(crate) fn discard(&mut self, slot: usize) {
        self.spans[slot].clear();
        self.named[slot] = 0;
    }

    /// Names of the zones the last frame recorded in `slot` opened, in order.
    pub(crate) fn zone_names(&self, slot: usize) -> &[String] {
        &self.names[slot][..self.named[slot]]
    }

    /// Opens the zone of a pass (next to its first timestamp).
    pub(crate) fn begin_pass(&mut self, slot: usize, name: &str) {
        if let Some(context) = &self.context {
            if let Ok(span) = context.span_alloc(name, "execute_frame", file!(), line!()) {
                self.spans[slot].push(span);
                let (names, named) = (&mut self.names[slot], &mut self.named[slot]);
                match names.get_mut(*named) {
                    Some(kept) => name.clone_into(kept),
                    None => names.push(name.to_owned()),
                }
                *named += 1;
            }
        }
    }

    /// Closes the zone opened last (next to the pass's second timestamp).
    pub(crate) fn end_pass(&mut self, slot: usize) {
        if let Some(span) = self.spans[slot].last_mut() {
            span.end_zone();
        }
    }

    /// Gives the zones of `slot` their GPU times: two timestamps per pass, in order.
    pub(crate) fn upload(&mut self, slot: usize, timestamps: &[u64]) {
        for (span, pair) in self.spans[slot].drain(..).zip(timestamps.chunks_exact(2)) {
            span.upload_timestamp_start(pair[0] as i64);
            span.upload_timestamp_end(pair[1] as i64);
        }
    }
}

/// Writes one timestamp on the queue and reads it back.
fn calibration_timestamp(device: &GpuDevice) -> Option<i64> {
    let raw = device.raw();
    let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(1);
    // SAFETY: valid create info on a live device.
    let pool = unsafe { raw.create_query_pool(&info, None) }.ok()?;
    let recorded = device.submit_and_wait(|command_buffer| {
        // SAFETY: recording a one-time command buffer; the pool has one query.
        unsafe { raw.cmd_reset_query_pool(command_buffer, pool, 0, 1) };
        // SAFETY: as above; the query was just reset.
        unsafe { raw.cmd_write_timestamp2(command_buffer, vk::PipelineStageFlags2::ALL_COMMANDS, pool, 0) };
    });
    let mut timestamp = [0_u64; 1];
    let read = recorded.ok().and_then(|()| {
        // SAFETY: the submit completed, so the query is available.
        unsafe { raw.get_query_pool_results(pool, 0, &mut timestamp, vk::QueryResultFlags::TYPE_64) }.ok()
    });
    // SAFETY: the pool is no longer used by any command buffer.
    unsafe { raw.destroy_query_pool(pool, None) };
    read.map(|()| timestamp[0] as i64)
}
