//! Tracy GPU zones (feature `profile`): one Tracy GPU context per graph, named after the
//! graph ([`crate::RenderGraph::set_name`]); one zone per pass, fed with the timestamps the
//! executor already writes around every pass, whose source is the pass's `add_pass` call and
//! whose function is the pass's type.
//!
//! Zones are opened while recording (beside the timestamp queries) and receive their GPU
//! times when the frame slot is harvested after its fence; a frame that is never submitted
//! gives its zones an empty span, so Tracy is never left waiting for a time.
//!
//! **Clocks.** Where the device has `VK_EXT_calibrated_timestamps` (device and
//! `CLOCK_MONOTONIC_RAW` domains), the context is made calibrated and receives a calibration
//! (a GPU timestamp and the CPU clock read at once) at most once a second: Tracy then corrects
//! the drift between the two clocks. Elsewhere (lavapipe, for one) the context starts from a
//! timestamp written by a one-time submit, and is re-synchronised the same way once a second,
//! which bounds the drift to what a second accumulates; the residual offset is the latency of
//! that submit's read-back (tens of microseconds on lavapipe).
//!
//! The contexts are made through `tracy_client::sys` (the calibration flag is not offered by
//! `tracy_client::GpuContext`), numbered by this module: do not mix them with contexts made
//! through `tracy_client::Client::new_gpu_context` in one program.

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use ash::vk;
use runtime::profiling::ZoneSite;
use tracy_client::{sys, Client};

use crate::device::GpuDevice;

/// Tracy's `GpuContextCalibration` flag: the context receives calibrations.
const CALIBRATED: u8 = 1;
/// Tracy's `GpuContextType::Vulkan`.
const VULKAN: u8 = 2;
/// How often the GPU clock is calibrated or re-synchronised against the CPU's.
const RESYNC: Duration = Duration::from_secs(1);

/// Context ids handed out so far (Tracy allows 255).
static CONTEXTS: AtomicU8 = AtomicU8::new(0);

/// One graph's Tracy GPU context and the zones of each frame slot waiting for their times.
pub(crate) struct GpuProfiler {
    context: Option<u8>,
    /// The context receives calibrations (`VK_EXT_calibrated_timestamps`).
    calibrated: bool,
    /// The CPU clock (`CLOCK_MONOTONIC_RAW`, ns) of the last calibration.
    last_cpu_ns: u64,
    /// When the clocks were last calibrated or synchronised.
    last_sync: Instant,
    /// Query ids of slot `s` start at `s * stride` (two per pass).
    stride: usize,
    /// Per slot: zones opened by the frame recorded there and not given times yet.
    pending: Vec<usize>,
    /// Per slot: names of the zones the frame opened (`[..named[slot]]`; strings are
    /// reused, so steady frames allocate nothing).
    names: Vec<Vec<String>>,
    named: Vec<usize>,
    /// The last GPU time given to a zone (a discarded frame's zones get it).
    last_time: i64,
    /// Per slot: zones opened inside passes (`ExecuteContext::begin_gpu_zone`), whose query
    /// ids run down from the top of the slot's range.
    inner_pending: Vec<usize>,
    /// Scratch for an inner zone's name, `pass zone: zone`.
    inner_name: String,
}

impl GpuProfiler {
    /// A profiler without a context yet, for `slots` frames in flight.
    pub(crate) fn new(slots: usize) -> GpuProfiler {
        GpuProfiler {
            context: None,
            calibrated: false,
            last_cpu_ns: 0,
            last_sync: Instant::now(),
            stride: usize::from(u16::MAX) / slots.max(1),
            pending: vec![0; slots],
            names: (0..slots).map(|_| Vec::new()).collect(),
            named: vec![0; slots],
            last_time: 0,
            inner_pending: vec![0; slots],
            inner_name: String::new(),
        }
    }

    /// Creates the Tracy GPU context named `name` once Tracy runs (the application may start
    /// it after the graph exists), when the queue has timestamps.
    pub(crate) fn ensure_context(&mut self, device: &GpuDevice, name: &str) {
        if self.context.is_some() || !device.capabilities().timestamps || Client::running().is_none() {
            return;
        }
        let calibrated = device.calibrated_timestamps();
        let Some(gpu_time) = calibrated.map(|(gpu, _)| gpu as i64).or_else(|| one_time_timestamp(device)) else {
            return;
        };
        let Ok(context) = CONTEXTS.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |next| next.checked_add(1)) else {
            return;
        };
        let flags = if calibrated.is_some() { CALIBRATED } else { 0 };
        let period = device.capabilities().timestamp_period_ns;
        // SAFETY: a fresh context id; Tracy copies the name into its queue.
        unsafe {
            sys::___tracy_emit_gpu_new_context_serial(sys::___tracy_gpu_new_context_data {
                gpuTime: gpu_time,
                period,
                context,
                flags,
                type_: VULKAN,
            });
            sys::___tracy_emit_gpu_context_name_serial(sys::___tracy_gpu_context_name_data {
                context,
                name: name.as_ptr().cast(),
                len: name.len().min(usize::from(u16::MAX)) as u16,
            });
        }
        self.context = Some(context);
        self.calibrated = calibrated.is_some();
        self.last_cpu_ns = calibrated.map_or(0, |(_, cpu)| cpu);
        self.last_sync = Instant::now();
        self.last_time = gpu_time;
    }

    /// Keeps the GPU clock on the CPU's (see the module docs), at most once a [`RESYNC`].
    pub(crate) fn keep_clocks(&mut self, device: &GpuDevice) {
        let Some(context) = self.context else { return };
        if self.last_sync.elapsed() < RESYNC {
            return;
        }
        self.last_sync = Instant::now();
        if self.calibrated {
            let Some((gpu, cpu)) = device.calibrated_timestamps() else { return };
            let Some(delta) = calibration_delta(self.last_cpu_ns, cpu) else { return };
            self.last_cpu_ns = cpu;
            // SAFETY: a context this profiler made, calibrated.
            unsafe {
                sys::___tracy_emit_gpu_calibration_serial(sys::___tracy_gpu_calibration_data {
                    gpuTime: gpu as i64,
                    cpuDelta: delta,
                    context,
                });
            }
        } else if let Some(gpu_time) = one_time_timestamp(device) {
            // SAFETY: a context this profiler made.
            unsafe {
                sys::___tracy_emit_gpu_time_sync_serial(sys::___tracy_gpu_time_sync_data {
                    gpuTime: gpu_time,
                    context,
                });
            }
        }
    }

    /// Gives the zones of a frame that was never submitted from `slot` an empty span, so
    /// that no zone waits for a time.
    pub(crate) fn discard(&mut self, slot: usize) {
        let time = self.last_time;
        self.give_times(slot, |_| time);
        self.give_inner_times(slot, |_| time);
        self.named[slot] = 0;
    }

    /// Names of the zones the last frame recorded in `slot` opened, in order.
    pub(crate) fn zone_names(&self, slot: usize) -> &[String] {
        &self.names[slot][..self.named[slot]]
    }

    /// The query id of pass `position`'s start (its end is the next id) in `slot`, when it
    /// fits the slot's range.
    fn query_id(&self, slot: usize, position: usize) -> Option<u16> {
        let offset = position * 2;
        (offset + 1 < self.stride).then(|| (slot * self.stride + offset) as u16)
    }

    /// The query id of inner zone `index`'s start (its end is the next id) in `slot`: from the
    /// top of the slot's range down, clear of the passes' ids.
    fn inner_query_id(&self, slot: usize, index: usize) -> Option<u16> {
        let offset = self.stride.checked_sub(2 * (index + 1))?;
        (offset >= self.stride / 2).then(|| (slot * self.stride + offset) as u16)
    }

    /// Opens inner zone `index` of the pass whose zone is `pass_zone`, named `name`, from the
    /// pass's `site`, nested in the pass's zone (next to its first timestamp).
    pub(crate) fn begin_zone(&mut self, slot: usize, index: usize, pass_zone: &str, name: &str, site: &ZoneSite) {
        let (Some(context), Some(query)) = (self.context, self.inner_query_id(slot, index)) else { return };
        if index != self.inner_pending[slot] {
            return;
        }
        self.inner_name.clear();
        self.inner_name.push_str(pass_zone);
        self.inner_name.push_str(": ");
        self.inner_name.push_str(name);
        emit_zone_begin(context, query, &self.inner_name, site);
        self.inner_pending[slot] += 1;
    }

    /// Closes inner zone `index` (next to its second timestamp).
    pub(crate) fn end_zone(&mut self, slot: usize, index: usize) {
        let (Some(context), Some(query)) = (self.context, self.inner_query_id(slot, index)) else { return };
        if index + 1 != self.inner_pending[slot] {
            return;
        }
        emit_zone_end(context, query);
    }

    /// Opens the zone of the pass at `position`, named `name`, from `site` (next to its first
    /// timestamp).
    pub(crate) fn begin_pass(&mut self, slot: usize, position: usize, name: &str, site: &ZoneSite) {
        let (Some(context), Some(query)) = (self.context, self.query_id(slot, position)) else { return };
        if position != self.pending[slot] {
            return;
        }
        emit_zone_begin(context, query, name, site);
        self.pending[slot] += 1;
        let (names, named) = (&mut self.names[slot], &mut self.named[slot]);
        match names.get_mut(*named) {
            Some(kept) => name.clone_into(kept),
            None => names.push(name.to_owned()),
        }
        *named += 1;
    }

    /// Closes the zone of the pass at `position` (next to its second timestamp).
    pub(crate) fn end_pass(&mut self, slot: usize, position: usize) {
        let (Some(context), Some(query)) = (self.context, self.query_id(slot, position)) else { return };
        if position + 1 != self.pending[slot] {
            return;
        }
        emit_zone_end(context, query);
    }

    /// Gives the zones of `slot` their GPU times: two timestamps per pass, in order, then two
    /// per inner zone (after the `passes` passes' own).
    pub(crate) fn upload(&mut self, slot: usize, timestamps: &[u64], passes: usize) {
        let zones = self.pending[slot];
        self.give_times(slot, |index| timestamps.get(index).map_or(0, |&time| time as i64));
        let inner = |index: usize| timestamps.get(passes * 2 + index).map_or(0, |&time| time as i64);
        self.give_inner_times(slot, inner);
        if let Some(&last) = zones.checked_sub(1).and_then(|last| timestamps.get(last * 2 + 1)) {
            self.last_time = last as i64;
        }
    }

    /// Emits the times of every pending zone of `slot`: `time(2 p)` and `time(2 p + 1)` for the
    /// zone of pass `p`.
    fn give_times(&mut self, slot: usize, time: impl Fn(usize) -> i64) {
        let Some(context) = self.context else { return };
        let pending = std::mem::take(&mut self.pending[slot]);
        for position in 0..pending {
            let Some(query) = self.query_id(slot, position) else { break };
            emit_zone_times(context, query, [time(position * 2), time(position * 2 + 1)]);
        }
    }

    /// Emits the times of every pending inner zone of `slot`: `time(2 k)` and `time(2 k + 1)`
    /// for zone `k`.
    fn give_inner_times(&mut self, slot: usize, time: impl Fn(usize) -> i64) {
        let Some(context) = self.context else { return };
        let pending = std::mem::take(&mut self.inner_pending[slot]);
        for index in 0..pending {
            let Some(query) = self.inner_query_id(slot, index) else { break };
            emit_zone_times(context, query, [time(index * 2), time(index * 2 + 1)]);
        }
    }
}

/// Opens a GPU zone named `name` from `site` on `context`, timed by `query` and the next id.
fn emit_zone_begin(context: u8, query: u16, name: &str, site: &ZoneSite) {
    let (file, function) = (site.location.file(), site.function);
    // SAFETY: the strings outlive the call (Tracy copies them); the caller's context is one
    // this module made, and the query id is not pending (each slot's ids are given times
    // before reuse).
    unsafe {
        let srcloc = sys::___tracy_alloc_srcloc_name(
            site.location.line(),
            file.as_ptr().cast(),
            file.len(),
            function.as_ptr().cast(),
            function.len(),
            name.as_ptr().cast(),
            name.len(),
            0,
        );
        sys::___tracy_emit_gpu_zone_begin_alloc_serial(sys::___tracy_gpu_zone_begin_data {
            srcloc,
            queryId: query,
            context,
        });
    }
}

/// Closes the zone [`emit_zone_begin`] opened with `query`.
fn emit_zone_end(context: u8, query: u16) {
    // SAFETY: closes a zone this module opened with `query` in `context`.
    unsafe { sys::___tracy_emit_gpu_zone_end_serial(sys::___tracy_gpu_zone_end_data { queryId: query + 1, context }) };
}

/// Gives the zone of `query` its start and end GPU times.
fn emit_zone_times(context: u8, query: u16, times: [i64; 2]) {
    for (offset, time) in (0..).zip(times) {
        // SAFETY: the query id belongs to a zone this module opened in `context`.
        unsafe {
            sys::___tracy_emit_gpu_time_serial(sys::___tracy_gpu_time_data {
                gpuTime: time,
                queryId: query + offset,
                context,
            });
        }
    }
}

/// The CPU time between two calibrations, or `None` when the clock did not advance (Tracy
/// ignores a calibration whose CPU delta is not positive).
fn calibration_delta(previous_ns: u64, now_ns: u64) -> Option<i64> {
    let delta = now_ns.checked_sub(previous_ns)?;
    (delta > 0).then_some(delta.min(i64::MAX as u64) as i64)
}

/// Writes one timestamp on the queue and reads it back (the GPU's clock "now", late by the
/// read-back's latency).
fn one_time_timestamp(device: &GpuDevice) -> Option<i64> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calibration_needs_the_cpu_clock_to_advance() {
        assert_eq!(calibration_delta(100, 250), Some(150));
        assert_eq!(calibration_delta(100, 100), None);
        assert_eq!(calibration_delta(100, 50), None, "a clock going back gives no calibration");
    }

    #[test]
    fn query_ids_of_the_slots_never_overlap() {
        let profiler = GpuProfiler::new(2);
        let first = profiler.query_id(0, profiler.stride / 2 - 1).expect("the last pass of slot 0 fits");
        let second = profiler.query_id(1, 0).expect("the first pass of slot 1 fits");
        assert!(first + 1 < second, "slot 0 ends before slot 1 starts");
        assert_eq!(profiler.query_id(0, profiler.stride / 2), None, "past the slot's range: no zone");
    }
}
