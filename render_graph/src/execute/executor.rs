//! The executor: frames in flight, each with its command pool, command buffer, fence,
//! timestamp query pool and descriptor pools. A frame runs in named steps, in this order:
//!
//! 1. [`Executor::begin_frame`]: the frame slot's pool, descriptors and staging region are
//!    reset (the graph waited for the slot's last frame first);
//! 2. [`Executor::prepare_passes`]: every running pass's `prepare` (CPU work, uploads);
//! 3. [`Executor::begin_recording`]: the command buffer begins, the first frame after a
//!    compile clears last frame's versions, and each resource's entry state is decided;
//! 4. [`Executor::record_pass`] (`record_pass.rs`), once per pass in order: its barriers
//!    (and poison fills under validation), timestamps, uploads, `execute` and `record_draw`;
//! 5. [`Executor::final_barriers`]: kept images join one layout, imports carry their state
//!    to the next frame, host-read barriers, the swapchain image's present transition;
//! 6. [`Executor::submit`]: the command buffer ends and is submitted with the slot's fence.
//!
//! Between frames the graph waits for a slot and harvests its statistics (`frame_slots.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use ash::vk;

use super::frame_slots::FrameSlot;
#[cfg(feature = "profile")]
use super::gpu_profiler::GpuProfiler;
use super::gpu_zones::{ZoneLog, MAX_GPU_ZONES};
use super::params::FrameParams;
use super::pass::{Pass, PassOrigin};
use super::prepare_context::{PrepareContext, Upload};
use super::recording::{cleared_state, flush_barriers, push_barrier, record_history_clears, BarrierScratch};
use super::stats::GraphStats;
use super::warnings::Warnings;
use crate::access::MipRange;
use crate::compile::{BarrierSource, Owner, Residency, SyncState};
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::memory::{FrameClock, StagingRing};
use crate::pipeline::DescriptorArena;
use crate::resources::{Compiled, EntrySource, Import, ImportedResource, PresentSync, Resolved};

/// Frames the CPU may record ahead of the GPU.
pub const FRAMES_IN_FLIGHT: usize = 2;

// A pipeline replaced by a hot reload must outlive the frames in flight that used it.
const _: () = assert!(crate::pipeline::HOT_RETIRE_FRAMES > FRAMES_IN_FLIGHT as u64);

/// Bytes of staging memory each frame in flight starts with: a steady frame's uniforms and
/// changed records fit; a frame that needs more grows its region (see `StagingRing`).
const STAGING_BYTES_PER_FRAME: u64 = 4 << 20;

/// Frame slots and reusable scratch space (no heap allocation per frame in steady state).
pub(crate) struct Executor {
    pub(super) device: Arc<GpuDevice>,
    /// Frames whose fences were waited for (readback buffers check it before reading).
    pub(crate) clock: Arc<FrameClock>,
    pub(super) slots: Vec<FrameSlot>,
    pub(crate) staging: StagingRing,
    pub(super) uploads: Vec<Upload>,
    /// The first upload not recorded yet this frame (uploads are in pass order).
    pub(super) next_upload: usize,
    pub(super) scratch: BarrierScratch,
    /// Per resource, this frame's source of its first barrier (and whether it is an aliased
    /// buffer's).
    pub(super) entry_states: Vec<(SyncState, bool)>,
    pub(super) error: Option<GraphError>,
    /// The error of the user pass being prepared or recorded (kept apart from the frame's:
    /// a user pass's failure does not fail the frame).
    pub(super) pass_error: Option<GraphError>,
    /// The user passes that failed this frame (declared index, error), which the graph drops.
    pub(crate) user_failures: Vec<(usize, GraphError)>,
    /// Warnings of work that does nothing, per pass.
    pub(crate) warnings: Warnings,
    #[cfg(feature = "profile")]
    pub(super) profiler: GpuProfiler,
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
            pass_error: None,
            user_failures: Vec::new(),
            warnings: Warnings::default(),
            #[cfg(feature = "profile")]
            profiler: GpuProfiler::new(FRAMES_IN_FLIGHT),
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

    /// Whether frame `frame` (already submitted) has finished on the GPU, without waiting.
    pub(crate) fn frame_complete(&self, device: &GpuDevice, frame: u64) -> Result<bool> {
        self.slots[slot_of(frame)].frame_complete(device, frame)
    }

    /// Waits until the slot frame `frame` will use is free, harvesting the statistics of the
    /// frame it held.
    pub(crate) fn wait_for_slot(&mut self, device: &GpuDevice, frame: u64, stats: &mut GraphStats) -> Result<()> {
        self.finish_slot(device, slot_of(frame), stats)
    }

    /// Waits for slot `slot_index`; the frame it held is then finished (readers of what it
    /// wrote may read) and its statistics go to `stats` and, under the feature `profile`,
    /// its timestamps to Tracy.
    fn finish_slot(&mut self, device: &GpuDevice, slot_index: usize, stats: &mut GraphStats) -> Result<()> {
        let slot = &mut self.slots[slot_index];
        let Some(frame_index) = slot.wait(device)? else { return Ok(()) };
        self.clock.finish(frame_index);
        let timestamps = slot.harvest(device, frame_index, stats)?;
        #[cfg(feature = "profile")]
        if let Some((timestamps, pass_count)) = timestamps {
            self.profiler.upload(slot_index, timestamps, pass_count);
            self.profiler.keep_clocks(device);
        }
        #[cfg(not(feature = "profile"))]
        let _ = timestamps;
        Ok(())
    }

    /// Sizes the per-slot query pools and statistics for a newly compiled graph.
    pub(crate) fn prepare_for(&mut self, device: &GpuDevice, compiled: &Compiled) -> Result<()> {
        let pass_count = compiled.graph.order.len();
        for slot in &mut self.slots {
            slot.size_for(device, pass_count)?;
        }
        Ok(())
    }
}

/// The slot frame `frame` records into.
fn slot_of(frame: u64) -> usize {
    (frame % FRAMES_IN_FLIGHT as u64) as usize
}

/// The error of a pass that panicked, with the panic's message.
pub(super) fn pass_panicked(pass: &str, payload: &(dyn std::any::Any + Send)) -> GraphError {
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|message| (*message).to_owned()))
        .unwrap_or_else(|| String::from("a panic without a message"));
    GraphError::PassPanicked { pass: pass.to_owned(), message }
}

/// What one frame records: the compiled graph, its passes and imports, and this frame's
/// physical resources, all borrowed from the graph.
pub(crate) struct Frame<'graph> {
    pub(crate) compiled: &'graph mut Compiled,
    pub(crate) passes: &'graph mut [Box<dyn Pass>],
    /// Per pass (as `passes`): its type and `add_pass` call (its zones' source), owner and
    /// group.
    pub(crate) origins: &'graph [PassOrigin],
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
    /// The frame's parameters, which passes read.
    pub(crate) params: &'graph FrameParams,
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
        self.user_failures.clear();
        self.pass_error = None;
        #[cfg(feature = "profile")]
        {
            self.profiler.discard(slot_index);
            self.profiler.ensure_context(&self.device, graph_name);
        }
        self.error = None;
        Ok(())
    }

    /// Calls every running pass's `prepare`: per-frame CPU work and staged uploads. A user
    /// pass's failure is kept apart (see [`Executor::user_failed`]).
    fn prepare_passes(&mut self, frame: &mut Frame) {
        let compiled = &*frame.compiled;
        for (position, &pass_index) in compiled.graph.order.iter().enumerate() {
            let user = frame.origins[pass_index].owner == Owner::User;
            if user && self.group_failed(frame.origins, pass_index) {
                continue;
            }
            let error = if user { &mut self.pass_error } else { &mut self.error };
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
                error,
                params: frame.params,
            };
            let pass = &mut frame.passes[pass_index];
            if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pass.prepare(&mut context)))
            {
                context.fail(pass_panicked(&compiled.decl.passes[pass_index].name, payload.as_ref()));
            }
            if user {
                self.user_failed(pass_index);
            }
        }
    }

    /// Moves the error the user pass `pass_index` left (if any) to the frame's user failures.
    pub(super) fn user_failed(&mut self, pass_index: usize) {
        if let Some(error) = self.pass_error.take() {
            self.user_failures.push((pass_index, error));
        }
    }

    /// Whether a pass of the group of `pass_index` failed earlier this frame: the rest of the
    /// group skips its work (it would read what the failed pass did not write).
    pub(super) fn group_failed(&self, origins: &[PassOrigin], pass_index: usize) -> bool {
        let group = origins[pass_index].group;
        self.user_failures.iter().any(|&(failed, _)| origins[failed].group == group)
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
