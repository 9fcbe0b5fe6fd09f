//! Recording one pass of the frame, in the order its commands run: the pass's debug label,
//! its step-0 barriers (after poison fills under validation), its start timestamp, the
//! uploads its `prepare` staged, `execute`, `record_draw` inside a rendering scope over its
//! attachments, then its statistics, end timestamp and the label's end.

use std::ffi::CStr;
use std::time::Instant;

use ash::vk;

use super::execute_context::{ExecuteContext, StepState, TransferLog};
use super::executor::{pass_panicked, Executor, Frame};
use super::gpu_zones::ZoneRecorder;
use super::pass::Pass;
use super::recording::{begin_rendering, cleared_state, flush_barriers, is_blind_write, push_barrier, record_poison};
use crate::compile::{BarrierSource, Owner, PassDecl, PlannedBarrier};
use crate::device::validation::RecordingScope;
use crate::error::GraphError;
use crate::resources::{Compiled, Resolved};

impl Executor {
    /// Records the pass at `position` of the order: its step-0 barriers (after poison fills
    /// of what it only writes, under validation), its timestamps and debug label, the
    /// uploads its `prepare` staged, then `execute` and, inside a rendering scope over its
    /// attachments, `record_draw`.
    pub(super) fn record_pass(
        &mut self,
        frame: &mut Frame,
        slot_index: usize,
        command_buffer: vk::CommandBuffer,
        position: usize,
    ) {
        let compiled = &*frame.compiled;
        let pass_index = compiled.graph.order[position];
        let decl = &compiled.decl.passes[pass_index];
        let label = &compiled.labels[position];
        let _recording = RecordingScope::enter(label);
        self.begin_label(command_buffer, label);
        // Step 0's barriers go before `execute`; later steps' when the pass begins them.
        let all_barriers = &compiled.graph.barriers.per_pass[position];
        let (barriers, later_steps) = all_barriers.split_at(all_barriers.partition_point(|planned| planned.step == 0));
        let step_zero_barriers =
            self.record_step_zero_barriers(compiled, decl, frame.resolved, barriers, command_buffer);
        let timestamps = self.device.capabilities().timestamps;
        if timestamps {
            #[cfg(feature = "profile")]
            self.profiler.begin_pass(
                slot_index,
                position,
                &frame.zone_names[pass_index],
                &frame.origins[pass_index].site,
            );
            self.write_timestamp(command_buffer, slot_index, (position * 2) as u32);
        }
        self.record_uploads(command_buffer, position);
        runtime::profile_zone_site!(frame.zone_names[pass_index].as_str(), &frame.origins[pass_index].site);
        let user = frame.origins[pass_index].owner == Owner::User;
        // A pass whose group failed earlier this frame records nothing of its own.
        let skipped = user && self.group_failed(frame.origins, pass_index);
        let started = Instant::now();
        let raw = self.device.raw();
        let slot = &mut self.slots[slot_index];
        let queries = slot.queries;
        let zones = timestamps.then(|| ZoneRecorder {
            log: &mut slot.zones,
            queries,
            first_query: (compiled.graph.order.len() * 2) as u32,
            position,
            #[cfg(feature = "profile")]
            tracy: (&mut self.profiler, slot_index, &frame.zone_names[pass_index], &frame.origins[pass_index].site),
        });
        let mut context = ExecuteContext {
            device: &self.device,
            command_buffer,
            pass_name: &decl.name,
            accesses: &decl.accesses,
            names: &compiled.decl,
            resolved: frame.resolved,
            descriptors: &mut slot.descriptors,
            error: if user { &mut self.pass_error } else { &mut self.error },
            frame_index: frame.index,
            output_extent: frame.output_extent,
            clock: &self.clock,
            bound: None,
            index_bound: false,
            rendering: false,
            history_reset: if compiled.first_frame { &compiled.history_reset } else { &[] },
            range_views: frame.range_views,
            steps: StepState {
                current: 0,
                last: decl.last_step,
                barriers: later_steps,
                entry_states: &self.entry_states,
                scratch: &mut self.scratch,
                recorded: 0,
            },
            zones,
            params: frame.params,
            warnings: &mut self.warnings,
            transfers: TransferLog::default(),
        };
        let pass = frame.passes[pass_index].as_mut();
        if !skipped {
            execute(pass, &mut context, decl);
            record_draws(raw, command_buffer, pass, &mut context, decl, frame.resolved);
            finish(&mut context, decl);
        }
        if user {
            context.finish_steps();
        }
        let step_barriers = context.steps.recorded;
        let slot = &mut self.slots[slot_index];
        slot.barriers[position] = step_zero_barriers + step_barriers;
        slot.cpu_ms[position] = started.elapsed().as_secs_f64() * 1e3;
        if timestamps {
            #[cfg(feature = "profile")]
            self.profiler.end_pass(slot_index, position);
            self.write_timestamp(command_buffer, slot_index, (position * 2 + 1) as u32);
        }
        self.end_label(command_buffer);
        if user {
            self.user_failed(pass_index);
        }
    }

    /// Opens the pass's debug label (for capture tools), when debug utils are present.
    fn begin_label(&self, command_buffer: vk::CommandBuffer, label: &CStr) {
        if let Some(debug) = self.device.debug_utils() {
            let label = vk::DebugUtilsLabelEXT::default().label_name(label);
            // SAFETY: recording; the label string lives in the compiled graph.
            unsafe { debug.cmd_begin_debug_utils_label(command_buffer, &label) };
        }
    }

    /// Closes the label [`Executor::begin_label`] opened.
    fn end_label(&self, command_buffer: vk::CommandBuffer) {
        if let Some(debug) = self.device.debug_utils() {
            // SAFETY: closes the label opened for this pass.
            unsafe { debug.cmd_end_debug_utils_label(command_buffer) };
        }
    }

    /// Writes timestamp `query` of the slot's pool once every earlier command has run.
    fn write_timestamp(&self, command_buffer: vk::CommandBuffer, slot_index: usize, query: u32) {
        let queries = self.slots[slot_index].queries;
        // SAFETY: recording; the query was reset in `begin_recording`.
        unsafe {
            self.device.raw().cmd_write_timestamp2(
                command_buffer,
                vk::PipelineStageFlags2::ALL_COMMANDS,
                queries,
                query,
            )
        };
    }

    /// Records the barriers the pass needs before `execute` in one batch (entry barriers
    /// take their source from this frame's entry states), after poison fills of what it
    /// only writes; returns how many barriers it recorded.
    fn record_step_zero_barriers(
        &mut self,
        compiled: &Compiled,
        decl: &PassDecl,
        resolved: &[Resolved],
        barriers: &[PlannedBarrier],
        command_buffer: vk::CommandBuffer,
    ) -> u32 {
        // Under validation, transient resources this pass only writes are first filled
        // with poison, so a declared write the pass never performs shows in the output.
        let poisoned = |planned: &PlannedBarrier| {
            compiled.poison && planned.source == BarrierSource::Entry && is_blind_write(compiled, decl, planned)
        };
        if barriers.iter().any(poisoned) {
            self.record_poison_fills(resolved, barriers.iter().filter(|planned| poisoned(planned)), command_buffer);
        }
        let mut barrier_count = 0;
        for planned in barriers {
            let resource = planned.resource as usize;
            let (source, aliased_buffer) = match planned.source {
                BarrierSource::Known(state) => (state, false),
                BarrierSource::Entry if poisoned(planned) => {
                    (cleared_state(matches!(resolved[resource], Resolved::Image(_))), false)
                }
                BarrierSource::Entry => self.entry_states[resource],
            };
            if push_barrier(
                &mut self.scratch,
                resolved[resource],
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
        flush_barriers(self.device.raw(), command_buffer, &mut self.scratch);
        barrier_count
    }

    /// Fills the resources of `poisoned` (their first access this frame, a write of a
    /// transient resource) with poison: one batch of barriers into transfer destinations,
    /// then the fills.
    fn record_poison_fills<'plan>(
        &mut self,
        resolved: &[Resolved],
        poisoned: impl Iterator<Item = &'plan PlannedBarrier> + Clone,
        command_buffer: vk::CommandBuffer,
    ) {
        let raw = self.device.raw();
        for planned in poisoned.clone() {
            let resource = planned.resource as usize;
            let (source, aliased_buffer) = self.entry_states[resource];
            push_barrier(
                &mut self.scratch,
                resolved[resource],
                planned.mips,
                source,
                vk::PipelineStageFlags2::ALL_TRANSFER,
                vk::AccessFlags2::TRANSFER_WRITE,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                aliased_buffer,
            );
        }
        flush_barriers(raw, command_buffer, &mut self.scratch);
        for planned in poisoned {
            record_poison(raw, command_buffer, resolved[planned.resource as usize], planned.mips);
        }
    }

    /// Records the copies from the staging ring that the pass at `position` staged in
    /// `prepare` (uploads are in pass order).
    fn record_uploads(&mut self, command_buffer: vk::CommandBuffer, position: usize) {
        let raw = self.device.raw();
        while self.next_upload < self.uploads.len() && self.uploads[self.next_upload].position == position {
            let upload = self.uploads[self.next_upload];
            // SAFETY: recording; the pass declared a transfer write on the target, whose
            // barrier was just recorded; the source region lies in the staging ring.
            unsafe { raw.cmd_copy_buffer(command_buffer, upload.source, upload.target, &[upload.region]) };
            self.next_upload += 1;
        }
    }
}

/// Runs the pass's `execute`. A pass's panic (a resource it never declared, an `expect` of
/// its own) fails the frame, naming the pass, instead of taking the program down; the
/// command buffer is never submitted and is reset with its pool.
fn execute(pass: &mut dyn Pass, context: &mut ExecuteContext, decl: &PassDecl) {
    if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pass.execute(context))) {
        context.fail(pass_panicked(&decl.name, payload.as_ref()));
    }
}

/// Runs the pass's `record_draw` inside a rendering scope over its attachments, viewport
/// and scissor set to their extent; a pass without attachments draws nothing.
fn record_draws(
    raw: &ash::Device,
    command_buffer: vk::CommandBuffer,
    pass: &mut dyn Pass,
    context: &mut ExecuteContext,
    decl: &PassDecl,
    resolved: &[Resolved],
) {
    let Some(rendering_extent) = begin_rendering(raw, command_buffer, decl, resolved) else { return };
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
    if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pass.record_draw(context))) {
        context.fail(pass_panicked(&decl.name, payload.as_ref()));
    }
    // SAFETY: ends the scope begun above.
    unsafe { raw.cmd_end_rendering(command_buffer) };
}

/// The pass's end: closes its last GPU zone, and fails the frame when `execute` began
/// fewer steps than the pass declared.
fn finish(context: &mut ExecuteContext, decl: &PassDecl) {
    context.end_gpu_zone();
    if context.steps.current < context.steps.last {
        context.fail(GraphError::InvalidCommand {
            pass: decl.name.clone(),
            reason: "the pass declared steps that execute did not begin (ExecuteContext::next_step)",
        });
    }
}
