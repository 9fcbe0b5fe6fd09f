//! The frame slots: each frame in flight has a command pool and buffer, a fence, a
//! timestamp query pool, descriptor pools and the statistics its frame records. A slot is
//! waited for before it is reused, and the statistics of the frame it held are harvested
//! then; a new compilation sizes its query pool and statistics.

use ash::vk;

use super::gpu_zones::{ZoneLog, MAX_GPU_ZONES};
use super::stats::{GraphStats, ZoneStats};
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::pipeline::DescriptorArena;

/// One frame in flight's command buffer, fence, queries, descriptors and the statistics it
/// records.
pub(super) struct FrameSlot {
    pub(super) pool: vk::CommandPool,
    pub(super) command_buffer: vk::CommandBuffer,
    pub(super) fence: vk::Fence,
    pub(super) queries: vk::QueryPool,
    pub(super) query_capacity: u32,
    pub(super) descriptors: DescriptorArena,
    /// The frame submitted from this slot whose statistics are not harvested yet.
    pub(super) submitted: Option<u64>,
    pub(super) cpu_ms: Vec<f64>,
    pub(super) barriers: Vec<u32>,
    pub(super) timestamps: Vec<u64>,
    /// The GPU zones the passes opened inside themselves.
    pub(super) zones: ZoneLog,
}

impl FrameSlot {
    /// Whether frame `frame`, submitted from this slot, has finished on the GPU, without
    /// waiting: a frame the slot no longer holds was waited for; otherwise its fence is asked.
    pub(super) fn frame_complete(&self, device: &GpuDevice, frame: u64) -> Result<bool> {
        if self.submitted != Some(frame) {
            return Ok(true);
        }
        // SAFETY: the fence belongs to this device; asking its status never blocks.
        unsafe { device.raw().get_fence_status(self.fence) }.map_err(GraphError::vulkan("vkGetFenceStatus"))
    }

    /// Waits for the slot's fence; returns the frame it held whose statistics are not
    /// harvested yet, if any.
    pub(super) fn wait(&mut self, device: &GpuDevice) -> Result<Option<u64>> {
        // SAFETY: the fence belongs to this device.
        unsafe { device.raw().wait_for_fences(&[self.fence], true, u64::MAX) }
            .map_err(GraphError::vulkan("vkWaitForFences"))?;
        Ok(self.submitted.take())
    }

    /// Fills `stats` from the finished frame `frame_index`: each pass's recording time,
    /// barriers and (where the queue has timestamps) GPU time, and each GPU zone's. Returns
    /// the timestamps read, the passes' then the zones', with the number of passes.
    pub(super) fn harvest(
        &mut self,
        device: &GpuDevice,
        frame_index: u64,
        stats: &mut GraphStats,
    ) -> Result<Option<(&[u64], usize)>> {
        let pass_count = self.cpu_ms.len().min(stats.passes.len());
        // The zones' queries follow the passes' (see `begin_recording`).
        let zones = if pass_count == self.cpu_ms.len() { self.zones.used } else { 0 };
        let written = (pass_count + zones) * 2;
        let timestamps = device.capabilities().timestamps && self.query_capacity as usize >= written;
        let has_results = timestamps && pass_count > 0;
        if has_results {
            let data = &mut self.timestamps[..written];
            // SAFETY: the frame that wrote these queries has completed (fence waited); the
            // slice holds exactly the queries written.
            unsafe { device.raw().get_query_pool_results(self.queries, 0, data, vk::QueryResultFlags::TYPE_64) }
                .map_err(GraphError::vulkan("vkGetQueryPoolResults"))?;
        }
        let period_ms = f64::from(device.capabilities().timestamp_period_ns) / 1e6;
        stats.frame_index = frame_index;
        stats.total_gpu_ms = 0.0;
        stats.total_cpu_record_ms = 0.0;
        for position in 0..pass_count {
            let entry = &mut stats.passes[position];
            entry.cpu_record_ms = self.cpu_ms[position];
            entry.barriers = self.barriers[position];
            entry.gpu_ms = timestamps.then(|| {
                let (start, end) = (self.timestamps[position * 2], self.timestamps[position * 2 + 1]);
                end.saturating_sub(start) as f64 * period_ms
            });
            stats.total_gpu_ms += entry.gpu_ms.unwrap_or(0.0);
            stats.total_cpu_record_ms += entry.cpu_record_ms;
        }
        stats.zones.truncate(zones);
        for index in 0..zones {
            if stats.zones.len() == index {
                stats.zones.push(ZoneStats::default());
            }
            let zone = &mut stats.zones[index];
            stats.passes[self.zones.passes[index]].name.clone_into(&mut zone.pass);
            self.zones.names[index].clone_into(&mut zone.name);
            let at = (pass_count + index) * 2;
            zone.gpu_ms =
                timestamps.then(|| self.timestamps[at + 1].saturating_sub(self.timestamps[at]) as f64 * period_ms);
        }
        Ok(has_results.then(|| (&self.timestamps[..written], pass_count)))
    }

    /// Sizes the slot's statistics and query pool for a newly compiled graph of `pass_count`
    /// passes (the query pool only grows).
    pub(super) fn size_for(&mut self, device: &GpuDevice, pass_count: usize) -> Result<()> {
        let needed = ((pass_count + MAX_GPU_ZONES) * 2) as u32;
        self.cpu_ms.clear();
        self.cpu_ms.resize(pass_count, 0.0);
        self.barriers.clear();
        self.barriers.resize(pass_count, 0);
        self.timestamps.clear();
        self.timestamps.resize(needed as usize, 0);
        if device.capabilities().timestamps && self.query_capacity < needed {
            // SAFETY: no frame of this slot is in flight (the graph waited); destroying a
            // null pool is allowed.
            unsafe { device.raw().destroy_query_pool(self.queries, None) };
            self.queries = vk::QueryPool::null();
            self.query_capacity = 0;
            let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(needed);
            // SAFETY: valid create info on a live device.
            self.queries = unsafe { device.raw().create_query_pool(&info, None) }
                .map_err(GraphError::vulkan("vkCreateQueryPool"))?;
            self.query_capacity = needed;
        }
        Ok(())
    }
}
