//! The frame slots: each frame in flight has a command pool and buffer, a fence, a
//! timestamp query pool and descriptor pools. Waiting for a slot harvests the statistics of
//! the frame it held; a new compilation sizes the slots' query pools and statistics.

use ash::vk;

use super::executor::Executor;
use super::executor::FRAMES_IN_FLIGHT;
use super::gpu_zones::{ZoneLog, MAX_GPU_ZONES};
use super::stats::{GraphStats, ZoneStats};
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::pipeline::DescriptorArena;
use crate::resources::Compiled;

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

impl Executor {
    /// Waits for every frame in flight and harvests its statistics.
    pub(crate) fn wait_all(&mut self, device: &GpuDevice, stats: &mut GraphStats) -> Result<()> {
        let mut pending: Vec<usize> =
            (0..self.slots.len()).filter(|&slot| self.slots[slot].submitted.is_some()).collect();
        pending.sort_by_key(|&slot| self.slots[slot].submitted);
        for slot in pending {
            self.finish_slot(device, slot, stats)?;
        }
        Ok(())
    }

    /// Whether frame `frame` (already submitted) has finished on the GPU, without waiting:
    /// a frame no longer held by its slot was waited for; otherwise its fence is asked.
    pub(crate) fn frame_complete(&self, device: &GpuDevice, frame: u64) -> Result<bool> {
        let slot = &self.slots[slot_of(frame)];
        if slot.submitted != Some(frame) {
            return Ok(true);
        }
        // SAFETY: the fence belongs to this device; asking its status never blocks.
        unsafe { device.raw().get_fence_status(slot.fence) }.map_err(GraphError::vulkan("vkGetFenceStatus"))
    }

    /// Waits until the slot frame `frame` will use is free, harvesting the statistics of the
    /// frame it held.
    pub(crate) fn wait_for_slot(&mut self, device: &GpuDevice, frame: u64, stats: &mut GraphStats) -> Result<()> {
        self.finish_slot(device, slot_of(frame), stats)
    }

    fn finish_slot(&mut self, device: &GpuDevice, slot_index: usize, stats: &mut GraphStats) -> Result<()> {
        let slot = &mut self.slots[slot_index];
        let raw = device.raw();
        // SAFETY: the fence belongs to this device.
        unsafe { raw.wait_for_fences(&[slot.fence], true, u64::MAX) }.map_err(GraphError::vulkan("vkWaitForFences"))?;
        let Some(frame_index) = slot.submitted.take() else { return Ok(()) };
        self.clock.finish(frame_index);
        let pass_count = slot.cpu_ms.len().min(stats.passes.len());
        // The zones' queries follow the passes' (see `begin_recording`).
        let zones = if pass_count == slot.cpu_ms.len() { slot.zones.used } else { 0 };
        let written = (pass_count + zones) * 2;
        let timestamps = device.capabilities().timestamps && slot.query_capacity as usize >= written;
        if timestamps && pass_count > 0 {
            let data = &mut slot.timestamps[..written];
            // SAFETY: the frame that wrote these queries has completed (fence waited); the
            // slice holds exactly the queries written.
            unsafe { raw.get_query_pool_results(slot.queries, 0, data, vk::QueryResultFlags::TYPE_64) }
                .map_err(GraphError::vulkan("vkGetQueryPoolResults"))?;
            #[cfg(feature = "profile")]
            {
                self.profiler.upload(slot_index, &slot.timestamps[..written], pass_count);
                self.profiler.keep_clocks(device);
            }
        }
        let period_ms = f64::from(device.capabilities().timestamp_period_ns) / 1e6;
        stats.frame_index = frame_index;
        stats.total_gpu_ms = 0.0;
        stats.total_cpu_record_ms = 0.0;
        for position in 0..pass_count {
            let entry = &mut stats.passes[position];
            entry.cpu_record_ms = slot.cpu_ms[position];
            entry.barriers = slot.barriers[position];
            entry.gpu_ms = timestamps.then(|| {
                let (start, end) = (slot.timestamps[position * 2], slot.timestamps[position * 2 + 1]);
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
            stats.passes[slot.zones.passes[index]].name.clone_into(&mut zone.pass);
            slot.zones.names[index].clone_into(&mut zone.name);
            let at = (pass_count + index) * 2;
            zone.gpu_ms =
                timestamps.then(|| slot.timestamps[at + 1].saturating_sub(slot.timestamps[at]) as f64 * period_ms);
        }
        Ok(())
    }

    /// Sizes the per-slot query pools and statistics for a newly compiled graph.
    pub(crate) fn prepare_for(&mut self, device: &GpuDevice, compiled: &Compiled) -> Result<()> {
        let pass_count = compiled.graph.order.len();
        let needed = ((pass_count + MAX_GPU_ZONES) * 2) as u32;
        for slot in &mut self.slots {
            slot.cpu_ms.clear();
            slot.cpu_ms.resize(pass_count, 0.0);
            slot.barriers.clear();
            slot.barriers.resize(pass_count, 0);
            slot.timestamps.clear();
            slot.timestamps.resize(needed as usize, 0);
            if device.capabilities().timestamps && slot.query_capacity < needed {
                // SAFETY: no frame of this slot is in flight (the graph waited); destroying a
                // null pool is allowed.
                unsafe { device.raw().destroy_query_pool(slot.queries, None) };
                slot.queries = vk::QueryPool::null();
                slot.query_capacity = 0;
                let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(needed);
                // SAFETY: valid create info on a live device.
                slot.queries = unsafe { device.raw().create_query_pool(&info, None) }
                    .map_err(GraphError::vulkan("vkCreateQueryPool"))?;
                slot.query_capacity = needed;
            }
        }
        Ok(())
    }
}

/// The slot frame `frame` records into.
pub(super) fn slot_of(frame: u64) -> usize {
    (frame % FRAMES_IN_FLIGHT as u64) as usize
}
