//! The executor: frames in flight, each with its command pool, command buffer, fence,
//! timestamp query pool and descriptor pools. A frame runs in named steps, in this order:
//!
//! 1. [`Executor::begin_frame`]: the frame slot's pool, descriptors and staging region are
//!    reset (the graph waited for the slot's last frame first);
//! 2. [`Executor::prepare_passes`]: every running pass's `prepare` (CPU work, uploads);
//! 3. [`Executor::begin_recording`]: the command buffer begins, the first frame after a
//!    compile clears last frame's versions, and each resource's entry state is decided;
//! 4. [`Executor::record_pass`], once per pass in order: its barriers (and poison fills
//!    under validation), timestamps, uploads, `execute` and `record_draw`;
//! 5. [`Executor::final_barriers`]: kept images join one layout, imports carry their state
//!    to the next frame, host-read barriers, the swapchain image's present transition;
//! 6. [`Executor::submit`]: the command buffer ends and is submitted with the slot's fence.

use std::sync::Arc;
use std::time::Instant;

use ash::vk;

use std::collections::HashMap;

use runtime::profiling::ZoneSite;

use crate::access::MipRange;
use crate::compile::{BarrierSource, PlannedBarrier, Residency, SyncState};
use crate::context::{ExecuteContext, PrepareContext, StepState, Upload};
use crate::device::validation::RecordingScope;
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::gpu_zones::{ZoneLog, ZoneRecorder, MAX_GPU_ZONES};
use crate::memory::{FrameClock, StagingRing};
use crate::pass::Pass;
use crate::pipeline::DescriptorArena;
use crate::recording::{
    begin_rendering, cleared_state, flush_barriers, is_blind_write, push_barrier, record_history_clears, record_poison,
    BarrierScratch,
};
use crate::resources::{Compiled, EntrySource, Import, ImportedResource, PresentSync, Resolved};
use crate::stats::{GraphStats, ZoneStats};

/// Frames the CPU may record ahead of the GPU.
pub const FRAMES_IN_FLIGHT: usize = 2;

/// Bytes of staging memory each frame in flight starts with: a steady frame's uniforms and
/// changed records fit; a frame that needs more grows its region (see `StagingRing`).
const STAGING_BYTES_PER_FRAME: u64 = 4 << 20;

struct FrameSlot {
    pool: vk::CommandPool,
    command_buffer: vk::CommandBuffer,
    fence: vk::Fence,
    queries: vk::QueryPool,
    query_capacity: u32,
    descriptors: DescriptorArena,
    /// The frame submitted from this slot whose statistics are not harvested yet.
    submitted: Option<u64>,
    cpu_ms: Vec<f64>,
    barriers: Vec<u32>,
    timestamps: Vec<u64>,
    /// The GPU zones the passes opened inside themselves.
    zones: ZoneLog,
}

/// Frame slots and reusable scratch space (no heap allocation per frame in steady state).
pub(crate) struct Executor {
    device: Arc<GpuDevice>,
    /// Frames whose fences were waited for (readback buffers check it before reading).
    pub(crate) clock: Arc<FrameClock>,
    slots: Vec<FrameSlot>,
    pub(crate) staging: StagingRing,
    uploads: Vec<Upload>,
    /// The first upload not recorded yet this frame (uploads are in pass order).
    next_upload: usize,
    scratch: BarrierScratch,
    /// Per resource, this frame's source of its first barrier (and whether it is an aliased
    /// buffer's).
    entry_states: Vec<(SyncState, bool)>,
    error: Option<GraphError>,
    #[cfg(feature = "profile")]
    profiler: crate::gpu_profiler::GpuProfiler,
}

impl Executor {
    pub(crate) fn new(device: &Arc<GpuDevice>) -> Result<Executor> {
        let mut executor = Executor {
            device: Arc::clone(device),
            clock: Arc::default(),
            slots: Vec::with_capacity(FRAMES_IN_FLIGHT),
            staging: StagingRing::new(device, STAGING_BYTES_PER_FRAME, FRAMES_IN_FLIGHT as u32)?,
            uploads: Vec::new(),
            next_upload: 0,
            scratch: BarrierScratch::default(),
            entry_states: Vec::new(),
            error: None,
            #[cfg(feature = "profile")]
            profiler: crate::gpu_profiler::GpuProfiler::new(FRAMES_IN_FLIGHT),
        };
        let raw = device.raw();
        for _ in 0..FRAMES_IN_FLIGHT {
            let pool_info = vk::CommandPoolCreateInfo::default()
                .queue_family_index(device.queue_family())
                .flags(vk::CommandPoolCreateFlags::TRANSIENT);
            // SAFETY: valid create info on a live device.
            let pool = unsafe { raw.create_command_pool(&pool_info, None) }
                .map_err(GraphError::vulkan("vkCreateCommandPool"))?;
            // The slot joins the executor at once so that Drop frees whatever was created.
            executor.slots.push(FrameSlot {
                pool,
                command_buffer: vk::CommandBuffer::null(),
                fence: vk::Fence::null(),
                queries: vk::QueryPool::null(),
                query_capacity: 0,
                descriptors: DescriptorArena::new(device),
                submitted: None,
                cpu_ms: Vec::new(),
                barriers: Vec::new(),
                timestamps: Vec::new(),
                zones: ZoneLog::default(),
            });
            let slot = executor.slots.last_mut().expect("just pushed");
            let allocate = vk::CommandBufferAllocateInfo::default()
                .command_pool(pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            // SAFETY: the pool is live and used by this slot only.
            let buffers = unsafe { raw.allocate_command_buffers(&allocate) }
                .map_err(GraphError::vulkan("vkAllocateCommandBuffers"))?;
            slot.command_buffer = buffers[0];
            let fence_info = vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED);
            // SAFETY: valid create info on a live device.
            slot.fence = unsafe { raw.create_fence(&fence_info, None) }.map_err(GraphError::vulkan("vkCreateFence"))?;
        }
        Ok(executor)
    }

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
/// The error of a pass that panicked, with the panic's message.
fn pass_panicked(pass: &str, payload: &(dyn std::any::Any + Send)) -> GraphError {
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|message| (*message).to_owned()))
        .unwrap_or_else(|| String::from("a panic without a message"));
    GraphError::PassPanicked { pass: pass.to_owned(), message }
}

fn slot_of(frame: u64) -> usize {
    (frame % FRAMES_IN_FLIGHT as u64) as usize
}

/// What one frame records: the compiled graph, its passes and imports, and this frame's
/// physical resources, all borrowed from the graph.
pub(crate) struct Frame<'graph> {
    pub(crate) compiled: &'graph mut Compiled,
    pub(crate) passes: &'graph mut [Box<dyn Pass>],
    /// Per pass (as `passes`): its type and `add_pass` call, its zones' source.
    pub(crate) pass_sites: &'graph [ZoneSite],
    /// Per pass (as the compiled declarations): its zones' name, `graph: pass`.
    pub(crate) zone_names: &'graph [String],
    /// The graph's name, its Tracy GPU context's.
    pub(crate) graph_name: &'graph str,
    pub(crate) imports: &'graph mut HashMap<String, Import>,
    pub(crate) resolved: &'graph [Resolved],
    /// This frame's views of declared mip ranges (see `Compiled::view_ranges`).
    pub(crate) range_views: &'graph [vk::ImageView],
    /// The swapchain image this frame presents, if any.
    pub(crate) present: Option<PresentSync>,
    /// The frame's number (as [`crate::RenderGraph::frame_index`] counts).
    pub(crate) index: u64,
    pub(crate) output_extent: vk::Extent2D,
}

impl Executor {
    /// Records and submits one frame, step by step (see the module docs). The slot must be
    /// free ([`Executor::wait_for_slot`]) and `frame.resolved` point at this frame's copies.
    pub(crate) fn run_frame(&mut self, mut frame: Frame) -> Result<()> {
        let slot = slot_of(frame.index);
        self.begin_frame(slot, frame.graph_name)?;
        self.prepare_passes(&mut frame);
        let command_buffer = self.begin_recording(slot, &frame)?;
        for position in 0..frame.compiled.graph.order.len() {
            self.record_pass(&mut frame, slot, command_buffer, position);
        }
        self.final_barriers(&mut frame, command_buffer);
        self.submit(&mut frame, slot, command_buffer)?;
        frame.compiled.first_frame = false;
        Ok(())
    }

    /// Resets the slot's command pool, descriptor pools and staging region, and the frame's
    /// error and upload lists.
    fn begin_frame(&mut self, slot_index: usize, graph_name: &str) -> Result<()> {
        #[cfg(not(feature = "profile"))]
        let _ = graph_name;
        let slot = &mut self.slots[slot_index];
        // SAFETY: the slot's fence was waited for, so its command buffer is not in use.
        unsafe { self.device.raw().reset_command_pool(slot.pool, vk::CommandPoolResetFlags::empty()) }
            .map_err(GraphError::vulkan("vkResetCommandPool"))?;
        slot.descriptors.reset()?;
        self.staging.begin_frame(slot_index as u32);
        self.uploads.clear();
        self.next_upload = 0;
        #[cfg(feature = "profile")]
        {
            self.profiler.discard(slot_index);
            self.profiler.ensure_context(&self.device, graph_name);
        }
        self.error = None;
        Ok(())
    }

    /// Calls every running pass's `prepare`: per-frame CPU work and staged uploads.
    fn prepare_passes(&mut self, frame: &mut Frame) {
        let compiled = &*frame.compiled;
        for (position, &pass_index) in compiled.graph.order.iter().enumerate() {
            let mut context = PrepareContext {
                pass_name: &compiled.decl.passes[pass_index].name,
                position,
                accesses: &compiled.decl.passes[pass_index].accesses,
                names: &compiled.decl,
                resolved: frame.resolved,
                staging: &mut self.staging,
                uploads: &mut self.uploads,
                frame_index: frame.index,
                output_extent: frame.output_extent,
                error: &mut self.error,
            };
            let pass = &mut frame.passes[pass_index];
            if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pass.prepare(&mut context)))
            {
                context.fail(pass_panicked(&compiled.decl.passes[pass_index].name, payload.as_ref()));
            }
        }
    }

    /// Begins the slot's command buffer, resets its timestamp queries, clears last frame's
    /// versions in the first frame after a compile, and decides where each resource's first
    /// barrier of the frame takes its source from.
    fn begin_recording(&mut self, slot_index: usize, frame: &Frame) -> Result<vk::CommandBuffer> {
        let raw = self.device.raw();
        let compiled = &*frame.compiled;
        let command_buffer = self.slots[slot_index].command_buffer;
        let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: the command buffer was reset with its pool and is not in use.
        unsafe { raw.begin_command_buffer(command_buffer, &begin) }
            .map_err(GraphError::vulkan("vkBeginCommandBuffer"))?;
        let pass_count = compiled.graph.order.len();
        self.slots[slot_index].zones.reset();
        if self.device.capabilities().timestamps && pass_count > 0 {
            let queries = self.slots[slot_index].queries;
            // SAFETY: recording; the range (the passes' queries, then the zones') lies inside
            // the pool (sized at compile).
            unsafe { raw.cmd_reset_query_pool(command_buffer, queries, 0, ((pass_count + MAX_GPU_ZONES) * 2) as u32) };
        }
        // The first frame after compiling gives last frame's versions defined (zero) contents.
        if compiled.first_frame {
            record_history_clears(raw, command_buffer, compiled, frame.resolved, &mut self.scratch);
        }
        let entry_state = |resource: usize| -> (SyncState, bool) {
            match compiled.entry[resource] {
                EntrySource::SameFrame(state) => (SyncState { layout: vk::ImageLayout::UNDEFINED, ..state }, true),
                EntrySource::PreviousFrame(state) if !compiled.first_frame => {
                    (SyncState { layout: vk::ImageLayout::UNDEFINED, ..state }, false)
                }
                EntrySource::PreviousFrame(_) => (SyncState::NONE, false),
                EntrySource::HistoryPrevious(_) if compiled.first_frame && compiled.history_reset[resource] => {
                    (cleared_state(matches!(frame.resolved[resource], Resolved::Image(_))), false)
                }
                // Kept from the last compilation, whose frames have all finished.
                EntrySource::HistoryPrevious(_) if compiled.first_frame => {
                    (SyncState { layout: compiled.kept_layouts[resource], ..SyncState::NONE }, false)
                }
                EntrySource::HistoryPrevious(state) => (state, false),
                EntrySource::Imported => {
                    let name = &compiled.decl.resources[resource].name;
                    (frame.imports.get(name.as_str()).map_or(SyncState::NONE, |import| import.state), false)
                }
            }
        };
        self.entry_states.clear();
        self.entry_states.extend((0..compiled.decl.resources.len()).map(entry_state));
        Ok(command_buffer)
    }

    /// Records the pass at `position` of the order: its step-0 barriers (after poison fills
    /// of what it only writes, under validation), its timestamps and debug label, the
    /// uploads its `prepare` staged, then `execute` and, inside a rendering scope over its
    /// attachments, `record_draw`.
    fn record_pass(
        &mut self,
        frame: &mut Frame,
        slot_index: usize,
        command_buffer: vk::CommandBuffer,
        position: usize,
    ) {
        // Disjoint borrows of the executor's parts (the profiler is used beside them).
        let (device, slots, uploads) = (&self.device, &mut self.slots, &self.uploads);
        let (next_upload, scratch) = (&mut self.next_upload, &mut self.scratch);
        let (entry_states, error) = (&self.entry_states, &mut self.error);
        let clock = &self.clock;
        let raw = device.raw();
        let compiled = &*frame.compiled;
        let pass_index = compiled.graph.order[position];
        let decl = &compiled.decl.passes[pass_index];
        let timestamps = device.capabilities().timestamps;
        let queries = slots[slot_index].queries;
        let _recording = RecordingScope::enter(&compiled.labels[position]);
        let debug = device.debug_utils();
        if let Some(debug) = debug {
            let label = vk::DebugUtilsLabelEXT::default().label_name(&compiled.labels[position]);
            // SAFETY: recording; the label string lives in the compiled graph.
            unsafe { debug.cmd_begin_debug_utils_label(command_buffer, &label) };
        }
        let mut barrier_count = 0;
        // Step 0's barriers go before `execute`; later steps' when the pass begins them.
        let all_barriers = &compiled.graph.barriers.per_pass[position];
        let (barriers, later_steps) = all_barriers.split_at(all_barriers.partition_point(|planned| planned.step == 0));
        // Under validation, transient resources this pass only writes are first filled
        // with poison, so a declared write the pass never performs shows in the output.
        let poisoned = |planned: &PlannedBarrier| {
            compiled.poison && planned.source == BarrierSource::Entry && is_blind_write(compiled, decl, planned)
        };
        if barriers.iter().any(poisoned) {
            for planned in barriers.iter().filter(|planned| poisoned(planned)) {
                let resource = planned.resource as usize;
                let (source, aliased_buffer) = entry_states[resource];
                push_barrier(
                    scratch,
                    frame.resolved[resource],
                    planned.mips,
                    source,
                    vk::PipelineStageFlags2::ALL_TRANSFER,
                    vk::AccessFlags2::TRANSFER_WRITE,
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    aliased_buffer,
                );
            }
            flush_barriers(raw, command_buffer, scratch);
            for planned in barriers.iter().filter(|planned| poisoned(planned)) {
                record_poison(raw, command_buffer, frame.resolved[planned.resource as usize], planned.mips);
            }
        }
        for planned in barriers {
            let resource = planned.resource as usize;
            let resolved = frame.resolved[resource];
            let (source, aliased_buffer) = match planned.source {
                BarrierSource::Known(state) => (state, false),
                BarrierSource::Entry if poisoned(planned) => {
                    (cleared_state(matches!(resolved, Resolved::Image(_))), false)
                }
                BarrierSource::Entry => entry_states[resource],
            };
            if push_barrier(
                scratch,
                resolved,
                planned.mips,
                source,
                planned.dst_stages,
                planned.dst_access,
                planned.new_layout,
                aliased_buffer,
            ) {
                barrier_count += 1;
            }
        }
        flush_barriers(raw, command_buffer, scratch);
        if timestamps {
            #[cfg(feature = "profile")]
            self.profiler.begin_pass(
                slot_index,
                position,
                &frame.zone_names[pass_index],
                &frame.pass_sites[pass_index],
            );
            // SAFETY: recording; the query was reset in `begin_recording`.
            unsafe {
                raw.cmd_write_timestamp2(
                    command_buffer,
                    vk::PipelineStageFlags2::ALL_COMMANDS,
                    queries,
                    (position * 2) as u32,
                )
            };
        }
        while *next_upload < uploads.len() && uploads[*next_upload].position == position {
            let upload = uploads[*next_upload];
            // SAFETY: recording; the pass declared a transfer write on the target, whose
            // barrier was just recorded; the source region lies in the staging ring.
            unsafe { raw.cmd_copy_buffer(command_buffer, upload.source, upload.target, &[upload.region]) };
            *next_upload += 1;
        }
        runtime::profile_zone_site!(frame.zone_names[pass_index].as_str(), &frame.pass_sites[pass_index]);
        let started = Instant::now();
        let slot = &mut slots[slot_index];
        let zones = timestamps.then(|| ZoneRecorder {
            log: &mut slot.zones,
            queries,
            first_query: (compiled.graph.order.len() * 2) as u32,
            position,
            #[cfg(feature = "profile")]
            tracy: (&mut self.profiler, slot_index, &frame.zone_names[pass_index], &frame.pass_sites[pass_index]),
        });
        let mut context = ExecuteContext {
            device,
            command_buffer,
            pass_name: &decl.name,
            accesses: &decl.accesses,
            names: &compiled.decl,
            resolved: frame.resolved,
            descriptors: &mut slot.descriptors,
            error,
            frame_index: frame.index,
            output_extent: frame.output_extent,
            clock,
            bound: None,
            index_bound: false,
            rendering: false,
            history_reset: if compiled.first_frame { &compiled.history_reset } else { &[] },
            range_views: frame.range_views,
            steps: StepState {
                current: 0,
                last: decl.last_step,
                barriers: later_steps,
                entry_states,
                scratch,
                recorded: 0,
            },
            zones,
        };
        let pass = &mut frame.passes[pass_index];
        // A pass's panic (a resource it never declared, an `expect` of its own) fails the
        // frame, naming the pass, instead of taking the program down; the command buffer is
        // never submitted and is reset with its pool.
        if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pass.execute(&mut context))) {
            context.fail(pass_panicked(&decl.name, payload.as_ref()));
        }
        if let Some(rendering_extent) = begin_rendering(raw, command_buffer, decl, frame.resolved) {
            let viewport = vk::Viewport {
                x: 0.0,
                y: 0.0,
                width: rendering_extent.width as f32,
                height: rendering_extent.height as f32,
                min_depth: 0.0,
                max_depth: 1.0,
            };
            let scissor = vk::Rect2D { offset: vk::Offset2D::default(), extent: rendering_extent };
            // SAFETY: recording inside the rendering scope just begun.
            unsafe { raw.cmd_set_viewport(command_buffer, 0, &[viewport]) };
            // SAFETY: as above.
            unsafe { raw.cmd_set_scissor(command_buffer, 0, &[scissor]) };
            context.bound = None;
            context.index_bound = false;
            context.rendering = true;
            if let Err(payload) =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pass.record_draw(&mut context)))
            {
                context.fail(pass_panicked(&decl.name, payload.as_ref()));
            }
            // SAFETY: ends the scope begun above.
            unsafe { raw.cmd_end_rendering(command_buffer) };
        }
        // The pass's end closes its last GPU zone.
        context.end_gpu_zone();
        if context.steps.current < context.steps.last {
            context.fail(GraphError::InvalidCommand {
                pass: decl.name.clone(),
                reason: "the pass declared steps that execute did not begin (ExecuteContext::next_step)",
            });
        }
        barrier_count += context.steps.recorded;
        slot.barriers[position] = barrier_count;
        slot.cpu_ms[position] = started.elapsed().as_secs_f64() * 1e3;
        if timestamps {
            #[cfg(feature = "profile")]
            self.profiler.end_pass(slot_index, position);
            // SAFETY: recording; the query was reset in `begin_recording`.
            unsafe {
                raw.cmd_write_timestamp2(
                    command_buffer,
                    vk::PipelineStageFlags2::ALL_COMMANDS,
                    queries,
                    (position * 2 + 1) as u32,
                )
            };
        }
        if let Some(debug) = debug {
            // SAFETY: closes the label opened for this pass.
            unsafe { debug.cmd_end_debug_utils_label(command_buffer) };
        }
    }

    /// The frame's last barriers: mips of kept images left in different layouts join one
    /// layout; imported resources carry their final state to the next frame (host-visible
    /// buffers get their writes made visible to the host); the swapchain image goes to the
    /// presentation layout.
    fn final_barriers(&mut self, frame: &mut Frame, command_buffer: vk::CommandBuffer) {
        let raw = self.device.raw();
        let compiled = &*frame.compiled;
        for planned in &compiled.graph.barriers.final_barriers {
            let resource = planned.resource as usize;
            let source = match planned.source {
                BarrierSource::Known(state) => state,
                BarrierSource::Entry => self.entry_states[resource].0,
            };
            push_barrier(
                &mut self.scratch,
                frame.resolved[resource],
                planned.mips,
                source,
                planned.dst_stages,
                planned.dst_access,
                planned.new_layout,
                false,
            );
        }
        flush_barriers(raw, command_buffer, &mut self.scratch);

        for (resource, declared) in compiled.decl.resources.iter().enumerate() {
            let Some(final_state) = compiled.graph.barriers.final_state[resource] else { continue };
            let Some(import) = frame.imports.get_mut(declared.name.as_str()) else { continue };
            if compiled.graph.resources[resource].residency != Residency::Imported {
                continue;
            }
            import.state = final_state;
            if let ImportedResource::Buffer(buffer) = &import.resource {
                if buffer.mapped().is_some() && !final_state.access.is_empty() {
                    push_barrier(
                        &mut self.scratch,
                        frame.resolved[resource],
                        MipRange::ALL,
                        final_state,
                        vk::PipelineStageFlags2::HOST,
                        vk::AccessFlags2::HOST_READ,
                        vk::ImageLayout::UNDEFINED,
                        false,
                    );
                    import.state = SyncState { access: vk::AccessFlags2::NONE, ..final_state };
                }
            }
        }
        // The semaphore signal at the end of the submission orders the present after the
        // layout change.
        if let Some(present) = &frame.present {
            let resource = compiled.decl.resources.iter().position(|declared| declared.name == present.name);
            let import = frame.imports.get_mut(present.name.as_str());
            match (resource, import) {
                (Some(resource), Some(import)) => {
                    push_barrier(
                        &mut self.scratch,
                        frame.resolved[resource],
                        MipRange::ALL,
                        import.state,
                        vk::PipelineStageFlags2::NONE,
                        vk::AccessFlags2::NONE,
                        vk::ImageLayout::PRESENT_SRC_KHR,
                        false,
                    );
                    import.state = SyncState { layout: vk::ImageLayout::PRESENT_SRC_KHR, ..SyncState::NONE };
                }
                _ => {
                    self.error.get_or_insert(GraphError::InvalidDescription {
                        resource: present.name.clone(),
                        reason: "the swapchain image is presented but no pass of the frame uses it",
                    });
                }
            }
        }
        flush_barriers(raw, command_buffer, &mut self.scratch);
    }

    /// Ends the command buffer and submits it with the slot's fence (waiting for the
    /// swapchain image's acquire and signalling its present); returns the first error a pass
    /// helper kept instead, submitting nothing. Host-visible imports the frame wrote are
    /// marked, so their readers wait for it.
    fn submit(&mut self, frame: &mut Frame, slot_index: usize, command_buffer: vk::CommandBuffer) -> Result<()> {
        let raw = self.device.raw();
        // SAFETY: the command buffer is recording.
        unsafe { raw.end_command_buffer(command_buffer) }.map_err(GraphError::vulkan("vkEndCommandBuffer"))?;
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        self.staging.flush()?;
        let slot = &mut self.slots[slot_index];
        let command_buffers = [command_buffer];
        let (waits, signals): (&[vk::Semaphore], &[vk::Semaphore]) = match &frame.present {
            Some(present) => (std::slice::from_ref(&present.acquired), std::slice::from_ref(&present.rendered)),
            None => (&[], &[]),
        };
        let wait_stages = &[vk::PipelineStageFlags::ALL_COMMANDS][..waits.len()];
        let submit = vk::SubmitInfo::default()
            .command_buffers(&command_buffers)
            .wait_semaphores(waits)
            .wait_dst_stage_mask(wait_stages)
            .signal_semaphores(signals);
        {
            let queue = {
                runtime::profile_zone!("lock wait: queue (submit)");
                self.device.queue()
            };
            runtime::profile_zone!("lock held: queue (submit)");
            // SAFETY: the fence is signalled and unused (the slot was waited for).
            unsafe { raw.reset_fences(&[slot.fence]) }.map_err(GraphError::vulkan("vkResetFences"))?;
            // SAFETY: the queue lock is held; the command buffer is executable.
            unsafe { raw.queue_submit(*queue, &[submit], slot.fence) }.map_err(GraphError::vulkan("vkQueueSubmit"))?;
        }
        slot.submitted = Some(frame.index);
        let compiled = &*frame.compiled;
        for (resource, declared) in compiled.decl.resources.iter().enumerate() {
            let written = compiled.graph.barriers.final_state[resource].is_some_and(|state| !state.access.is_empty());
            if !written || compiled.graph.resources[resource].residency != Residency::Imported {
                continue;
            }
            if let Some(ImportedResource::Buffer(buffer)) =
                frame.imports.get(declared.name.as_str()).map(|import| &import.resource)
            {
                buffer.mark_gpu_write(&self.clock, frame.index);
            }
        }
        Ok(())
    }

    /// Names of the Tracy GPU zones frame `frame` opened, one per pass that ran.
    #[cfg(feature = "profile")]
    pub(crate) fn gpu_zone_names(&self, frame: u64) -> &[String] {
        self.profiler.zone_names(slot_of(frame))
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        let raw = self.device.raw();
        // SAFETY: waiting is always allowed; on failure we still free what we own.
        let _ = unsafe { raw.device_wait_idle() };
        for slot in &self.slots {
            // SAFETY: the device is idle; destroying null handles is allowed.
            unsafe { raw.destroy_fence(slot.fence, None) };
            // SAFETY: as above.
            unsafe { raw.destroy_query_pool(slot.queries, None) };
            // SAFETY: as above; destroying the pool frees its command buffer.
            unsafe { raw.destroy_command_pool(slot.pool, None) };
        }
    }
}
