//! GPU zones inside a pass: a pass that records several pieces of work (the shadow atlas's
//! light views, say) names each with [`ExecuteContext::begin_gpu_zone`](crate::ExecuteContext::begin_gpu_zone);
//! each zone gets two timestamps from a range of the frame slot's query pool after the
//! passes' own, its GPU time in [`GraphStats::zones`](crate::GraphStats::zones), and, under
//! the feature `profile`, a Tracy GPU zone nested in the pass's.

use ash::vk;

/// Most GPU zones the passes of one frame open; further ones are not timed.
pub const MAX_GPU_ZONES: usize = 128;

/// One frame slot's zones, in the order they were opened (strings reused across frames).
#[derive(Debug, Default)]
pub(crate) struct ZoneLog {
    /// Zones opened this frame.
    pub(crate) used: usize,
    /// Their names (`[..used]`).
    pub(crate) names: Vec<String>,
    /// The execution position of the pass that opened each.
    pub(crate) passes: Vec<usize>,
    /// The zone open now, if any.
    pub(crate) open: Option<usize>,
}

impl ZoneLog {
    /// Forgets last frame's zones.
    pub(crate) fn reset(&mut self) {
        self.used = 0;
        self.open = None;
    }

    /// Opens zone `name` of the pass at `position`: its index, or `None` when the frame has
    /// opened [`MAX_GPU_ZONES`] already.
    pub(crate) fn begin(&mut self, position: usize, name: &str) -> Option<usize> {
        if self.used == MAX_GPU_ZONES {
            return None;
        }
        let index = self.used;
        match self.names.get_mut(index) {
            Some(kept) => name.clone_into(kept),
            None => self.names.push(name.to_owned()),
        }
        match self.passes.get_mut(index) {
            Some(kept) => *kept = position,
            None => self.passes.push(position),
        }
        self.used += 1;
        self.open = Some(index);
        Some(index)
    }
}

/// What an [`ExecuteContext`](crate::ExecuteContext) needs to time zones: the slot's log,
/// its query pool and where the zones' queries start.
pub(crate) struct ZoneRecorder<'frame> {
    pub(crate) log: &'frame mut ZoneLog,
    pub(crate) queries: vk::QueryPool,
    /// Query of zone 0's start (zone `k` uses `first_query + 2k` and the next).
    pub(crate) first_query: u32,
    /// Execution position of the pass recording.
    pub(crate) position: usize,
    /// The pass's Tracy zone (name and source) and the slot, for nested Tracy zones.
    #[cfg(feature = "profile")]
    pub(crate) tracy:
        (&'frame mut super::gpu_profiler::GpuProfiler, usize, &'frame str, &'frame runtime::profiling::ZoneSite),
}

impl ZoneRecorder<'_> {
    /// Opens zone `name` (the caller closed the one open) with its start timestamp; past
    /// [`MAX_GPU_ZONES`] in a frame, it opens nothing.
    pub(crate) fn begin(&mut self, device: &ash::Device, command_buffer: vk::CommandBuffer, name: &str) {
        let Some(index) = self.log.begin(self.position, name) else { return };
        #[cfg(feature = "profile")]
        {
            let (profiler, slot, pass_zone, site) = &mut self.tracy;
            profiler.begin_zone(*slot, index, pass_zone, name, site);
        }
        // SAFETY: recording; the query lies in the slot's pool and was reset with the frame.
        unsafe {
            device.cmd_write_timestamp2(
                command_buffer,
                vk::PipelineStageFlags2::ALL_COMMANDS,
                self.queries,
                self.first_query + 2 * index as u32,
            )
        };
    }

    /// Closes the zone open, if any, with its end timestamp.
    pub(crate) fn end(&mut self, device: &ash::Device, command_buffer: vk::CommandBuffer) {
        let Some(index) = self.log.open.take() else { return };
        #[cfg(feature = "profile")]
        {
            let (profiler, slot, _, _) = &mut self.tracy;
            profiler.end_zone(*slot, index);
        }
        // SAFETY: as in `begin`.
        unsafe {
            device.cmd_write_timestamp2(
                command_buffer,
                vk::PipelineStageFlags2::ALL_COMMANDS,
                self.queries,
                self.first_query + 2 * index as u32 + 1,
            )
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_keeps_its_strings_and_stops_at_the_limit() {
        let mut log = ZoneLog::default();
        assert_eq!(log.begin(3, "c0"), Some(0));
        assert_eq!(log.begin(3, "c1"), Some(1));
        assert_eq!((log.names[1].as_str(), log.passes[1], log.open), ("c1", 3, Some(1)));
        log.reset();
        assert_eq!(log.begin(5, "spot"), Some(0), "a new frame starts at zone 0");
        assert_eq!(log.names.len(), 2, "the strings are kept");
        for _ in 1..MAX_GPU_ZONES {
            assert!(log.begin(5, "more").is_some());
        }
        assert_eq!(log.begin(5, "one too many"), None);
    }
}
