//! The executor: two frames in flight, each with its command pool, command buffer, fence,
//! timestamp query pool and descriptor pools; records the compiled passes with their barrier
//! batches, debug labels and timestamps, and submits.

use std::sync::Arc;
use std::time::Instant;

use ash::vk;

use crate::barriers::{BarrierSource, SyncState};
use crate::context::{ExecuteContext, PrepareContext, Resolved, StepState, Upload};
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::graph::{Compiled, EntrySource, ImportedResource, RenderGraph, FRAMES_IN_FLIGHT};
use crate::memory::{FrameClock, StagingRing};
use crate::mips::MipRange;
use crate::pipeline::DescriptorArena;
use crate::recording::{
    begin_rendering, cleared_state, flush_barriers, is_blind_write, push_barrier, record_history_clears, record_poison,
    BarrierScratch,
};
use crate::stats::GraphStats;
use crate::validation::RecordingScope;

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
}

/// Frame slots and reusable scratch space (no heap allocation per frame in steady state).
pub(crate) struct Executor {
    device: Arc<GpuDevice>,
    /// Frames whose fences were waited for (readback buffers check it before reading).
    pub(crate) clock: Arc<FrameClock>,
    slots: Vec<FrameSlot>,
    pub(crate) staging: StagingRing,
    uploads: Vec<Upload>,
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
            scratch: BarrierScratch::default(),
            entry_states: Vec::new(),
            error: None,
            #[cfg(feature = "profile")]
            profiler: crate::gpu_profiler::GpuProfiler::new(),
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
        let slot = &self.slots[(frame % FRAMES_IN_FLIGHT as u64) as usize];
        if slot.submitted != Some(frame) {
            return Ok(true);
        }
        // SAFETY: the fence belongs to this device; asking its status never blocks.
        unsafe { device.raw().get_fence_status(slot.fence) }.map_err(GraphError::vulkan("vkGetFenceStatus"))
    }

    fn finish_slot(&mut self, device: &GpuDevice, slot_index: usize, stats: &mut GraphStats) -> Result<()> {
        let slot = &mut self.slots[slot_index];
        let raw = device.raw();
        // SAFETY: the fence belongs to this device.
        unsafe { raw.wait_for_fences(&[slot.fence], true, u64::MAX) }.map_err(GraphError::vulkan("vkWaitForFences"))?;
        let Some(frame_index) = slot.submitted.take() else { return Ok(()) };
        self.clock.finish(frame_index);
        let pass_count = slot.cpu_ms.len().min(stats.passes.len());
        let timestamps = device.capabilities().timestamps && slot.query_capacity as usize >= pass_count * 2;
        if timestamps && pass_count > 0 {
            let data = &mut slot.timestamps[..pass_count * 2];
            // SAFETY: the frame that wrote these queries has completed (fence waited); the
            // slice holds exactly the queries written.
            unsafe { raw.get_query_pool_results(slot.queries, 0, data, vk::QueryResultFlags::TYPE_64) }
                .map_err(GraphError::vulkan("vkGetQueryPoolResults"))?;
            #[cfg(feature = "profile")]
            self.profiler.upload(slot_index, &slot.timestamps[..pass_count * 2]);
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
        Ok(())
    }

    /// Sizes the per-slot query pools and statistics for a newly compiled graph.
    pub(crate) fn prepare_for(&mut self, device: &GpuDevice, compiled: &Compiled) -> Result<()> {
        let pass_count = compiled.graph.order.len();
        let needed = (pass_count * 2).max(2) as u32;
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

impl RenderGraph {
    /// Runs one frame: compiles if the graph changed, waits for the frame slot, calls every
    /// running pass's `prepare`, records all passes with their barriers and submits.
    pub fn execute_frame(&mut self) -> Result<()> {
        runtime::profile_zone!("render graph frame");
        let present = self.present.take();
        self.compile()?;
        let slot_index = (self.frame_index % FRAMES_IN_FLIGHT as u64) as usize;
        self.executor.finish_slot(&self.device, slot_index, &mut self.stats)?;
        self.resolve()?;
        let device = Arc::clone(&self.device);
        let raw = device.raw();
        let compiled = self.compiled.as_mut().expect("compiled above");
        let executor = &mut self.executor;
        {
            let slot = &mut executor.slots[slot_index];
            // SAFETY: the slot's fence was waited for, so its command buffer is not in use.
            unsafe { raw.reset_command_pool(slot.pool, vk::CommandPoolResetFlags::empty()) }
                .map_err(GraphError::vulkan("vkResetCommandPool"))?;
            slot.descriptors.reset()?;
        }
        executor.staging.begin_frame(slot_index as u32);
        executor.uploads.clear();
        #[cfg(feature = "profile")]
        {
            executor.profiler.discard(slot_index);
            executor.profiler.ensure_context(&device);
        }
        executor.error = None;
        let output_extent = self.output_extent;
        let frame_index = self.frame_index;

        // Prepare: per-frame CPU work of every running pass.
        for (position, &pass_index) in compiled.graph.order.iter().enumerate() {
            let mut context = PrepareContext {
                pass_name: &compiled.decl.passes[pass_index].name,
                position,
                accesses: &compiled.decl.passes[pass_index].accesses,
                names: &compiled.decl,
                resolved: &self.resolved,
                staging: &mut executor.staging,
                uploads: &mut executor.uploads,
                frame_index,
                output_extent,
                error: &mut executor.error,
            };
            self.passes[pass_index].prepare(&mut context);
        }

        let command_buffer = executor.slots[slot_index].command_buffer;
        let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: the command buffer was reset with its pool and is not in use.
        unsafe { raw.begin_command_buffer(command_buffer, &begin) }
            .map_err(GraphError::vulkan("vkBeginCommandBuffer"))?;
        let timestamps = device.capabilities().timestamps;
        let queries = executor.slots[slot_index].queries;
        let pass_count = compiled.graph.order.len();
        if timestamps && pass_count > 0 {
            // SAFETY: recording; the range lies inside the pool (sized at compile).
            unsafe { raw.cmd_reset_query_pool(command_buffer, queries, 0, (pass_count * 2) as u32) };
        }

        // The first frame after compiling gives last frame's versions defined (zero) contents.
        if compiled.first_frame {
            record_history_clears(raw, command_buffer, compiled, &self.resolved, &mut executor.scratch);
        }

        let entry_state = |resource: usize| -> (SyncState, bool) {
            match compiled.entry[resource] {
                EntrySource::SameFrame(state) => (SyncState { layout: vk::ImageLayout::UNDEFINED, ..state }, true),
                EntrySource::PreviousFrame(state) if !compiled.first_frame => {
                    (SyncState { layout: vk::ImageLayout::UNDEFINED, ..state }, false)
                }
                EntrySource::PreviousFrame(_) => (SyncState::NONE, false),
                EntrySource::HistoryPrevious(_) if compiled.first_frame && compiled.history_reset[resource] => {
                    (cleared_state(matches!(self.resolved[resource], Resolved::Image(_))), false)
                }
                // Kept from the last compilation, whose frames have all finished.
                EntrySource::HistoryPrevious(_) if compiled.first_frame => {
                    (SyncState { layout: compiled.kept_layouts[resource], ..SyncState::NONE }, false)
                }
                EntrySource::HistoryPrevious(state) => (state, false),
                EntrySource::Imported => {
                    let name = &compiled.decl.resources[resource].name;
                    (self.imports.get(name.as_str()).map_or(SyncState::NONE, |import| import.state), false)
                }
            }
        };
        executor.entry_states.clear();
        executor.entry_states.extend((0..compiled.decl.resources.len()).map(entry_state));
        let debug = device.debug_utils();
        let mut upload_cursor = 0;
        for (position, &pass_index) in compiled.graph.order.iter().enumerate() {
            let decl = &compiled.decl.passes[pass_index];
            let _recording = RecordingScope::enter(&compiled.labels[position]);
            if let Some(debug) = debug {
                let label = vk::DebugUtilsLabelEXT::default().label_name(&compiled.labels[position]);
                // SAFETY: recording; the label string lives in the compiled graph.
                unsafe { debug.cmd_begin_debug_utils_label(command_buffer, &label) };
            }
            let mut barrier_count = 0;
            // Step 0's barriers go before `execute`; later steps' when the pass begins them.
            let all_barriers = &compiled.graph.barriers.per_pass[position];
            let (barriers, later_steps) =
                all_barriers.split_at(all_barriers.partition_point(|planned| planned.step == 0));
            // Under validation, transient resources this pass only writes are first filled
            // with poison, so a declared write the pass never performs shows in the output.
            let poisoned = |planned: &crate::barriers::PlannedBarrier| {
                compiled.poison && planned.source == BarrierSource::Entry && is_blind_write(compiled, decl, planned)
            };
            if barriers.iter().any(poisoned) {
                for planned in barriers.iter().filter(|planned| poisoned(planned)) {
                    let resource = planned.resource as usize;
                    let (source, aliased_buffer) = executor.entry_states[resource];
                    push_barrier(
                        &mut executor.scratch,
                        self.resolved[resource],
                        planned.mips,
                        source,
                        vk::PipelineStageFlags2::ALL_TRANSFER,
                        vk::AccessFlags2::TRANSFER_WRITE,
                        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                        aliased_buffer,
                    );
                }
                flush_barriers(raw, command_buffer, &mut executor.scratch);
                for planned in barriers.iter().filter(|planned| poisoned(planned)) {
                    record_poison(raw, command_buffer, self.resolved[planned.resource as usize], planned.mips);
                }
            }
            for planned in barriers {
                let resource = planned.resource as usize;
                let resolved = self.resolved[resource];
                let (source, aliased_buffer) = match planned.source {
                    BarrierSource::Known(state) => (state, false),
                    BarrierSource::Entry if poisoned(planned) => {
                        (cleared_state(matches!(resolved, Resolved::Image(_))), false)
                    }
                    BarrierSource::Entry => executor.entry_states[resource],
                };
                if push_barrier(
                    &mut executor.scratch,
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
            flush_barriers(raw, command_buffer, &mut executor.scratch);
            if timestamps {
                #[cfg(feature = "profile")]
                executor.profiler.begin_pass(slot_index, &decl.name);
                // SAFETY: recording; the query was reset above.
                unsafe {
                    raw.cmd_write_timestamp2(
                        command_buffer,
                        vk::PipelineStageFlags2::ALL_COMMANDS,
                        queries,
                        (position * 2) as u32,
                    )
                };
            }
            while upload_cursor < executor.uploads.len() && executor.uploads[upload_cursor].position == position {
                let upload = executor.uploads[upload_cursor];
                // SAFETY: recording; the pass declared a transfer write on the target, whose
                // barrier was just recorded; the source region lies in the staging ring.
                unsafe { raw.cmd_copy_buffer(command_buffer, upload.source, upload.target, &[upload.region]) };
                upload_cursor += 1;
            }
            runtime::profile_zone_dynamic!(decl.name.as_str());
            let started = Instant::now();
            let mut context = ExecuteContext {
                device: &device,
                command_buffer,
                pass_name: &decl.name,
                accesses: &decl.accesses,
                names: &compiled.decl,
                resolved: &self.resolved,
                descriptors: &mut executor.slots[slot_index].descriptors,
                error: &mut executor.error,
                frame_index,
                output_extent,
                bound: None,
                index_bound: false,
                rendering: false,
                history_reset: if compiled.first_frame { &compiled.history_reset } else { &[] },
                range_views: &self.range_views,
                steps: StepState {
                    current: 0,
                    last: decl.last_step,
                    barriers: later_steps,
                    entry_states: &executor.entry_states,
                    scratch: &mut executor.scratch,
                    recorded: 0,
                },
            };
            let pass = &mut self.passes[pass_index];
            pass.execute(&mut context);
            if let Some(rendering_extent) = begin_rendering(raw, command_buffer, decl, &self.resolved) {
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
                pass.record_draw(&mut context);
                // SAFETY: ends the scope begun above.
                unsafe { raw.cmd_end_rendering(command_buffer) };
            }
            if context.steps.current < context.steps.last {
                context.fail(GraphError::InvalidCommand {
                    pass: decl.name.clone(),
                    reason: "the pass declared steps that execute did not begin (ExecuteContext::next_step)",
                });
            }
            barrier_count += context.steps.recorded;
            executor.slots[slot_index].barriers[position] = barrier_count;
            executor.slots[slot_index].cpu_ms[position] = started.elapsed().as_secs_f64() * 1e3;
            if timestamps {
                #[cfg(feature = "profile")]
                executor.profiler.end_pass(slot_index);
                // SAFETY: recording; the query was reset above.
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

        // Mips of kept images left in different layouts join one layout.
        for planned in &compiled.graph.barriers.final_barriers {
            let resource = planned.resource as usize;
            let source = match planned.source {
                BarrierSource::Known(state) => state,
                BarrierSource::Entry => executor.entry_states[resource].0,
            };
            push_barrier(
                &mut executor.scratch,
                self.resolved[resource],
                planned.mips,
                source,
                planned.dst_stages,
                planned.dst_access,
                planned.new_layout,
                false,
            );
        }
        flush_barriers(raw, command_buffer, &mut executor.scratch);

        // Imported resources carry their state to the next frame; host-visible buffers get
        // their writes made visible to the host.
        for (resource, declared) in compiled.decl.resources.iter().enumerate() {
            let Some(final_state) = compiled.graph.barriers.final_state[resource] else { continue };
            let Some(import) = self.imports.get_mut(declared.name.as_str()) else { continue };
            if compiled.graph.resources[resource].residency != crate::compiler::Residency::Imported {
                continue;
            }
            import.state = final_state;
            if let ImportedResource::Buffer(buffer) = &import.resource {
                if buffer.mapped().is_some() && !final_state.access.is_empty() {
                    push_barrier(
                        &mut executor.scratch,
                        self.resolved[resource],
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
        // A swapchain image goes to the presentation engine's layout; the semaphore signal
        // at the end of the submission orders the present after it.
        if let Some(present) = &present {
            let resource = compiled.decl.resources.iter().position(|declared| declared.name == present.name);
            let import = self.imports.get_mut(present.name.as_str());
            match (resource, import) {
                (Some(resource), Some(import)) => {
                    push_barrier(
                        &mut executor.scratch,
                        self.resolved[resource],
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
                    executor.error.get_or_insert(GraphError::InvalidDescription {
                        resource: present.name.clone(),
                        reason: "the swapchain image is presented but no pass of the frame uses it",
                    });
                }
            }
        }
        flush_barriers(raw, command_buffer, &mut executor.scratch);

        // SAFETY: the command buffer is recording.
        unsafe { raw.end_command_buffer(command_buffer) }.map_err(GraphError::vulkan("vkEndCommandBuffer"))?;
        if let Some(error) = executor.error.take() {
            return Err(error);
        }
        executor.staging.flush()?;
        let slot = &mut executor.slots[slot_index];
        let command_buffers = [command_buffer];
        let (waits, signals): (&[vk::Semaphore], &[vk::Semaphore]) = match &present {
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
                runtime::profile_zone!("lock wait: queue");
                device.queue()
            };
            runtime::profile_zone!("lock held: queue");
            // SAFETY: the fence is signalled and unused (waited above).
            unsafe { raw.reset_fences(&[slot.fence]) }.map_err(GraphError::vulkan("vkResetFences"))?;
            // SAFETY: the queue lock is held; the command buffer is executable.
            unsafe { raw.queue_submit(*queue, &[submit], slot.fence) }.map_err(GraphError::vulkan("vkQueueSubmit"))?;
        }
        slot.submitted = Some(frame_index);
        // Host-visible imported buffers written by this frame: readers must wait for it.
        for (resource, declared) in compiled.decl.resources.iter().enumerate() {
            let written = compiled.graph.barriers.final_state[resource].is_some_and(|state| !state.access.is_empty());
            if !written || compiled.graph.resources[resource].residency != crate::compiler::Residency::Imported {
                continue;
            }
            if let Some(ImportedResource::Buffer(buffer)) =
                self.imports.get(declared.name.as_str()).map(|import| &import.resource)
            {
                buffer.mark_gpu_write(&executor.clock, frame_index);
            }
        }
        compiled.first_frame = false;
        self.frame_index += 1;
        Ok(())
    }

    /// Whether submitted frame `frame` (counted as [`RenderGraph::frame_index`] counts) has
    /// finished on the GPU, asked without waiting (`vkGetFenceStatus`). Once it answers
    /// `true`, host-visible buffers imported into the graph hold what that frame wrote (the
    /// frame ends with a host-read barrier; invalidate non-coherent memory before reading).
    ///
    /// # Panics
    ///
    /// When `frame` was not submitted yet.
    pub fn frame_complete(&self, frame: u64) -> Result<bool> {
        assert!(frame < self.frame_index, "frame {frame} was not submitted (next is {})", self.frame_index);
        self.executor.frame_complete(&self.device, frame)
    }

    /// Names of the Tracy GPU zones the last submitted frame opened, one per pass that ran,
    /// in order (empty until a Tracy client runs and the queue has timestamps). They are the
    /// names [`RenderGraph::stats`] gives the passes.
    #[cfg(feature = "profile")]
    pub fn gpu_zone_names(&self) -> &[String] {
        let Some(last) = self.frame_index.checked_sub(1) else { return &[] };
        self.executor.profiler.zone_names((last % FRAMES_IN_FLIGHT as u64) as usize)
    }

    /// Waits until the frame slot the next [`RenderGraph::execute_frame`] uses is free (the
    /// frame `FRAMES_IN_FLIGHT` before it has finished): per-slot objects of the caller, such
    /// as a swapchain's acquire semaphores, may then be reused.
    pub fn wait_for_free_slot(&mut self) -> Result<()> {
        let slot_index = (self.frame_index % FRAMES_IN_FLIGHT as u64) as usize;
        self.executor.finish_slot(&self.device, slot_index, &mut self.stats)
    }

    /// Waits until every submitted frame has finished on the GPU; afterwards readback
    /// buffers hold the last frame's results and [`RenderGraph::stats`] is up to date.
    pub fn wait_idle(&mut self) -> Result<()> {
        self.executor.wait_all(&self.device, &mut self.stats)
    }
}
