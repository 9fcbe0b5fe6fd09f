//! What passes see during Execute: resolved resources and their views and layouts, the
//! pass's steps, GPU zones, push constants, history resets and host copies. Descriptor
//! binding lives in `bind.rs`, the draw and dispatch helpers in `commands.rs`.
//!
//! Vulkan failures inside these helpers do not interrupt the pass: the first one is kept and
//! returned by [`crate::RenderGraph::execute_frame`], and later helper calls do nothing.

use std::sync::Arc;

use ash::vk;

use super::gpu_zones::ZoneRecorder;
use super::params::FrameParams;
use super::recording::{flush_barriers, push_barrier, BarrierScratch};
use super::warnings::Warnings;
use crate::access::{Access, MipRange};
use crate::compile::{
    raw_handle, AccessDecl, AccessedBuffer, AccessedImage, BarrierSource, BufferHandle, BufferRead, BufferWrite,
    GraphDecl, ImageHandle, ImageRead, ImageWrite, PlannedBarrier, SyncState,
};
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::memory::{FrameClock, ReadbackBuffer};
use crate::pipeline::DescriptorArena;
use crate::resources::{Resolved, ResolvedBuffer, ResolvedImage};

fn declared(pass: &str, accesses: &[AccessDecl], names: &GraphDecl, resource: u32) -> Access {
    match accesses.iter().find(|access| access.resource == resource) {
        Some(access) => access.access,
        None if !names.resources[resource as usize].required => panic!(
            "pass `{pass}` uses resource `{}`, which does not exist this frame (an optional reference: ask \
             ExecuteContext::exists first)",
            names.resource_name(resource)
        ),
        None => panic!(
            "pass `{pass}` uses resource `{}` without declaring an access in register",
            names.resource_name(resource)
        ),
    }
}

/// Handed to [`crate::Pass::execute`] and [`crate::Pass::record_draw`].
pub struct ExecuteContext<'frame> {
    pub(crate) device: &'frame Arc<GpuDevice>,
    pub(crate) command_buffer: vk::CommandBuffer,
    pub(crate) pass_name: &'frame str,
    pub(crate) accesses: &'frame [AccessDecl],
    pub(crate) names: &'frame GraphDecl,
    pub(crate) resolved: &'frame [Resolved],
    pub(crate) descriptors: &'frame mut DescriptorArena,
    pub(crate) error: &'frame mut Option<GraphError>,
    pub(crate) frame_index: u64,
    pub(crate) output_extent: vk::Extent2D,
    /// The graph's count of finished frames, for buffers a pass writes outside the graph.
    pub(crate) clock: &'frame Arc<FrameClock>,
    pub(crate) bound: Option<(vk::PipelineLayout, vk::ShaderStageFlags, u32)>,
    /// Whether an index buffer was bound in this pass.
    pub(crate) index_bound: bool,
    /// Whether the graph's rendering scope is open (inside `record_draw`).
    pub(crate) rendering: bool,
    /// Per resource: last frame's version holds zeros this frame (see `history_was_reset`).
    pub(crate) history_reset: &'frame [bool],
    /// This frame's views of declared mip ranges (indexed by `AccessDecl::view`).
    pub(crate) range_views: &'frame [vk::ImageView],
    /// The pass's steps and the barriers of the later ones.
    pub(crate) steps: StepState<'frame>,
    /// GPU zones inside the pass (`None` where the queue has no timestamps).
    pub(crate) zones: Option<ZoneRecorder<'frame>>,
    /// The frame's parameters ([`crate::RenderGraph::set_param`]).
    pub(crate) params: &'frame FrameParams,
    /// Warnings of work that does nothing.
    pub(crate) warnings: &'frame mut Warnings,
    /// The resources this pass wrote by the transfer helpers.
    pub(crate) transfers: TransferLog,
}

/// The steps of the pass being recorded (see [`crate::Registry::next_step`]).
pub(crate) struct StepState<'frame> {
    /// The step begun last (0 until `next_step`).
    pub(crate) current: u32,
    /// The last step the pass declared.
    pub(crate) last: u32,
    /// The barriers of steps 1 and on, sorted by step.
    pub(crate) barriers: &'frame [PlannedBarrier],
    /// Per resource, the source of an entry barrier this frame.
    pub(crate) entry_states: &'frame [(SyncState, bool)],
    pub(crate) scratch: &'frame mut BarrierScratch,
    /// Barriers recorded by `next_step` (for the statistics).
    pub(crate) recorded: u32,
}

/// The resources a pass wrote by transfers so far (the first few; past them every write is
/// taken for a repeat, which costs a barrier, never a missing one).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TransferLog {
    written: [u32; 8],
    count: usize,
}

impl TransferLog {
    /// Notes a transfer write to `resource`; returns whether the pass may have written it by
    /// a transfer before.
    pub(crate) fn note(&mut self, resource: u32) -> bool {
        if self.count > self.written.len() || self.written[..self.count].contains(&resource) {
            return true;
        }
        if self.count == self.written.len() {
            self.count += 1;
            return true;
        }
        self.written[self.count] = resource;
        self.count += 1;
        false
    }
}

/// Any graph resource handle, for calls that accept images and buffers alike (a handle as
/// `register` named it, a read handle, or a reference to a write handle).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ResourceRef(pub(crate) u32);

macro_rules! resource_ref_from {
    ($($handle:ty),*) => {
        $(impl From<$handle> for ResourceRef {
            fn from(handle: $handle) -> Self {
                ResourceRef(handle.0)
            }
        })*
    };
}

resource_ref_from!(
    ImageHandle,
    BufferHandle,
    ImageRead,
    BufferRead,
    &ImageRead,
    &BufferRead,
    &ImageWrite,
    &BufferWrite
);

impl<'frame> ExecuteContext<'frame> {
    /// The logical device, for commands the helpers do not cover.
    pub fn device(&self) -> &ash::Device {
        self.device.raw()
    }

    /// The whole device wrapper.
    pub fn gpu(&self) -> &Arc<GpuDevice> {
        self.device
    }

    /// The command buffer being recorded.
    pub fn command_buffer(&self) -> vk::CommandBuffer {
        self.command_buffer
    }

    /// Ends a copy this pass recorded into `buffer`, a readback buffer of its own that the
    /// graph does not track: makes the transfer's writes visible to the host and marks the
    /// buffer written by this frame, so [`ReadbackBuffer::read`] says the copy is pending
    /// until the frame's fence has signalled (and its pending frame tells the pass when an
    /// outgrown buffer may be dropped).
    pub fn finish_host_copy(&self, buffer: &ReadbackBuffer) {
        let barrier = vk::BufferMemoryBarrier2::default()
            .src_stage_mask(vk::PipelineStageFlags2::COPY)
            .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
            .dst_stage_mask(vk::PipelineStageFlags2::HOST)
            .dst_access_mask(vk::AccessFlags2::HOST_READ)
            .buffer(buffer.buffer().raw())
            .size(vk::WHOLE_SIZE);
        let barriers = [barrier];
        let dependency = vk::DependencyInfo::default().buffer_memory_barriers(&barriers);
        // SAFETY: recording; the barrier names a live buffer.
        unsafe { self.device.raw().cmd_pipeline_barrier2(self.command_buffer, &dependency) };
        buffer.buffer().mark_gpu_write(self.clock, self.frame_index);
    }

    /// The number of this frame (0 for the first).
    pub fn frame_index(&self) -> u64 {
        self.frame_index
    }

    /// The graph's output extent.
    pub fn output_extent(&self) -> vk::Extent2D {
        self.output_extent
    }

    /// Whether an earlier helper call failed (the frame will return that error).
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Reports a problem the pass found while recording (e.g. an unusable extent):
    /// [`crate::RenderGraph::execute_frame`] returns the first such error and does not
    /// submit the frame; later helper calls of this frame do nothing.
    pub fn fail(&mut self, error: GraphError) {
        if self.error.is_none() {
            *self.error = Some(error);
        }
    }

    /// The frame's parameter of type `T` ([`crate::RenderGraph::set_param`]), if the host set
    /// one; [`ExecuteContext::require_param`] for a pass that cannot run without it. It
    /// borrows the frame, not the context, so the pass may record while it holds it.
    #[inline]
    pub fn param<T: 'static>(&self) -> Option<&'frame T> {
        self.params.get()
    }

    /// The frame's parameter of type `T`, or [`GraphError::MissingParam`] naming this pass
    /// and the type (see [`crate::PrepareContext::require_param`]):
    ///
    /// ```
    /// # fn main() -> render_graph::Result<()> {
    /// # let Some(device) = render_graph::testing::gpu_test_context() else { return Ok(()) };
    /// use render_graph::{ExecuteContext, Registry, RenderGraph, TypedPass};
    ///
    /// #[derive(Clone, Copy, Debug, PartialEq)]
    /// struct Exposure(f32);
    ///
    /// struct Tonemap;
    /// impl TypedPass for Tonemap {
    ///     type Handles = ();
    ///     fn name(&self) -> &str { "tonemap" }
    ///     fn register(&mut self, registry: &mut Registry) { registry.side_effect(); }
    ///     fn execute(&mut self, _: &(), context: &mut ExecuteContext) {
    ///         if let Err(error) = context.require_param::<Exposure>() {
    ///             context.fail(error);
    ///         }
    ///     }
    /// }
    ///
    /// let mut graph = RenderGraph::new(device, render_graph::vk::Extent2D { width: 8, height: 8 })?;
    /// graph.add_typed_pass(Tonemap);
    /// let missing = graph.execute_frame().expect_err("no exposure was set");
    /// assert_eq!(missing.pass(), Some("tonemap"));
    /// graph.set_param(Exposure(1.5));
    /// graph.execute_frame()?;
    /// assert_eq!(graph.param::<Exposure>(), Some(&Exposure(1.5)));
    /// # Ok(())
    /// # }
    /// ```
    pub fn require_param<T: 'static>(&self) -> Result<&'frame T> {
        self.params.require(self.pass_name)
    }

    /// Whether `resource` exists this frame: false for an optional reference
    /// ([`crate::Registry::optional_image`], [`crate::Registry::optional_buffer`]) to a
    /// resource no pass creates and nobody imported, whose accesses the graph dropped. A pass
    /// that serves frames with and without it asks before it binds or resolves it:
    ///
    /// ```no_run
    /// # use render_graph::{ExecuteContext, ImageRead};
    /// # fn execute(pyramid: ImageRead, context: &mut ExecuteContext) {
    /// let occlusion = context.exists(pyramid); // `hiz_depth` exists with GPU culling only
    /// # }
    /// ```
    pub fn exists(&self, resource: impl Into<ResourceRef>) -> bool {
        let resource = resource.into().0 as usize;
        !matches!(self.resolved.get(resource), None | Some(Resolved::None))
    }

    /// The image behind `handle`, or [`GraphError::UndeclaredAccess`] naming the pass and the
    /// resource when the pass did not declare an access to it.
    pub fn try_image(&self, handle: impl AccessedImage) -> Result<ResolvedImage> {
        self.resolved_image(raw_handle(handle).0)
    }

    fn resolved_image(&self, resource: u32) -> Result<ResolvedImage> {
        self.declared_access(resource)?;
        match self.resolved[resource as usize] {
            Resolved::Image(image) => Ok(image),
            _ => Err(GraphError::InvalidAccess {
                pass: self.pass_name.to_owned(),
                resource: self.names.resource_name(resource).to_owned(),
                reason: "it is not an image",
            }),
        }
    }

    /// The buffer behind `handle`, or [`GraphError::UndeclaredAccess`] (see
    /// [`ExecuteContext::try_image`]).
    pub fn try_buffer(&self, handle: impl AccessedBuffer) -> Result<ResolvedBuffer> {
        let resource = raw_handle(handle).0;
        self.declared_access(resource)?;
        match self.resolved[resource as usize] {
            Resolved::Buffer(buffer) => Ok(buffer),
            _ => Err(GraphError::InvalidAccess {
                pass: self.pass_name.to_owned(),
                resource: self.names.resource_name(resource).to_owned(),
                reason: "it is not a buffer",
            }),
        }
    }

    /// The image behind `handle` (a read handle, or a reference to a write handle).
    ///
    /// # Panics
    /// When the pass did not declare an access to it (the message names the pass and the
    /// resource); the graph turns the panic into [`GraphError::PassPanicked`] and does not
    /// submit the frame. [`ExecuteContext::try_image`] and the bind and draw helpers return
    /// [`GraphError::UndeclaredAccess`] instead.
    pub fn image(&self, handle: impl AccessedImage) -> ResolvedImage {
        let resource = raw_handle(handle).0;
        declared(self.pass_name, self.accesses, self.names, resource);
        match self.resolved[resource as usize] {
            Resolved::Image(image) => image,
            _ => panic!("pass `{}`: `{}` is not an image", self.pass_name, self.names.resource_name(resource)),
        }
    }

    /// The buffer behind `handle` (a read handle, or a reference to a write handle).
    ///
    /// # Panics
    /// As [`ExecuteContext::image`].
    pub fn buffer(&self, handle: impl AccessedBuffer) -> ResolvedBuffer {
        let resource = raw_handle(handle).0;
        declared(self.pass_name, self.accesses, self.names, resource);
        match self.resolved[resource as usize] {
            Resolved::Buffer(buffer) => buffer,
            _ => panic!("pass `{}`: `{}` is not a buffer", self.pass_name, self.names.resource_name(resource)),
        }
    }

    /// The layout an image is in during this pass (for an image declared per mip range, the
    /// layout of its first declaration; see [`ExecuteContext::image_layout_mips`]).
    pub fn image_layout(&self, handle: impl AccessedImage) -> vk::ImageLayout {
        declared(self.pass_name, self.accesses, self.names, raw_handle(handle).0).image_layout()
    }

    /// The layout the mips `mips` of an image are in during this pass, or an error naming
    /// the pass and image when no declaration of this pass covers them.
    pub fn image_layout_mips(&self, handle: impl AccessedImage, mips: MipRange) -> Result<vk::ImageLayout> {
        self.layout_of(raw_handle(handle).0, mips)
    }

    pub(crate) fn layout_of(&self, resource: u32, mips: MipRange) -> Result<vk::ImageLayout> {
        Ok(self.declaration_of(resource, mips)?.access.image_layout())
    }

    /// A view of the mips `mips` of `image` for a descriptor or an attachment: the image's
    /// view when they are all its mips, the level's view for one level, and for other ranges
    /// the view of a range this pass declared ([`crate::Registry::read_image_mips`]),
    /// made once and destroyed with the image. Errors name the pass and the image: mips this
    /// pass did not declare, mips past the image's chain, or a range of several levels that
    /// is not exactly a declared one.
    pub fn image_view_mips(&self, image: impl AccessedImage, mips: impl Into<MipRange>) -> Result<vk::ImageView> {
        self.view_of(raw_handle(image).0, mips.into())
    }

    pub(crate) fn view_of(&self, resource: u32, mips: MipRange) -> Result<vk::ImageView> {
        let declaration = self.declaration_of(resource, mips)?;
        let resolved = self.resolved_image(resource)?;
        let error = |reason| GraphError::InvalidAccess {
            pass: self.pass_name.to_owned(),
            resource: self.names.resource_name(resource).to_owned(),
            reason,
        };
        let Some((base, count)) = mips.resolve(resolved.mip_levels).filter(|_| mips.fits(resolved.mip_levels)) else {
            return Err(error("the view's mips are past the image's mip chain"));
        };
        if count == resolved.mip_levels {
            return Ok(resolved.view);
        }
        if count == 1 {
            return Ok(resolved.mip_views[base as usize]);
        }
        let declared = declaration.mips.resolve(resolved.mip_levels);
        match self.range_views.get(declaration.view as usize) {
            Some(&view) if declared == Some((base, count)) => Ok(view),
            _ => Err(error("views of several mips are made per declared range; declare exactly these mips")),
        }
    }

    /// Begins the pass's next step ([`crate::Registry::next_step`]): records the barriers its
    /// declarations need, such as the write of mip `k - 1` made visible to the step that
    /// reads it to write mip `k`. Call it from `execute`, once per declared step after the
    /// first, in order; beginning more steps than declared (or fewer by the end of the pass)
    /// fails the frame with an error naming the pass.
    pub fn next_step(&mut self) {
        if self.error.is_some() {
            return;
        }
        let reason = if self.rendering {
            Some("steps begin in execute, outside the rendering scope")
        } else if self.steps.current >= self.steps.last {
            Some("the pass begins more steps than it declared")
        } else {
            None
        };
        if let Some(reason) = reason {
            return self.fail(GraphError::InvalidCommand { pass: self.pass_name.to_owned(), reason });
        }
        self.steps.current += 1;
        self.record_step_barriers(self.steps.current);
    }

    /// Records the barriers of the steps the pass declared and did not begin (a user pass
    /// that failed, or was skipped, midway): later passes were planned on their layouts.
    pub(crate) fn finish_steps(&mut self) {
        while self.steps.current < self.steps.last {
            self.steps.current += 1;
            self.record_step_barriers(self.steps.current);
        }
    }

    /// Records the barriers step `step` of the pass needs.
    fn record_step_barriers(&mut self, step: u32) {
        let barriers = self.steps.barriers;
        let start = barriers.partition_point(|planned| planned.step < step);
        let end = barriers.partition_point(|planned| planned.step <= step);
        for planned in &barriers[start..end] {
            let resource = planned.resource as usize;
            let (source, aliased_buffer) = match planned.source {
                BarrierSource::Known(state) => (state, false),
                BarrierSource::Entry => self.steps.entry_states[resource],
            };
            let resolved = self.resolved[resource];
            let (stages, access, layout) = (planned.dst_stages, planned.dst_access, planned.new_layout);
            if push_barrier(self.steps.scratch, resolved, planned.mips, source, stages, access, layout, aliased_buffer)
            {
                self.steps.recorded += 1;
            }
        }
        flush_barriers(self.device.raw(), self.command_buffer, self.steps.scratch);
    }

    /// The step begun last (0 before the first [`ExecuteContext::next_step`]).
    pub fn step(&self) -> u32 {
        self.steps.current
    }

    /// The declaration of this pass that covers the mips `mips` of `resource` in the current
    /// step: the latest one declared in this step or an earlier one.
    pub(crate) fn declaration_of(&self, resource: u32, mips: MipRange) -> Result<&AccessDecl> {
        let mut declared = self.accesses.iter().filter(|access| access.resource == resource).peekable();
        if declared.peek().is_none() {
            return Err(GraphError::UndeclaredAccess {
                pass: self.pass_name.to_owned(),
                resource: self.names.resource_name(resource).to_owned(),
            });
        }
        let current = self.steps.current;
        let covering = declared.filter(|access| access.step <= current && access.mips.contains(mips));
        covering.max_by_key(|access| access.step).ok_or_else(|| GraphError::InvalidAccess {
            pass: self.pass_name.to_owned(),
            resource: self.names.resource_name(resource).to_owned(),
            reason: "no declaration of the pass covers these mips",
        })
    }

    /// The access this pass declared on `resource`, or the error naming both.
    /// (In a pass with steps: its latest declaration up to the current step.)
    pub(crate) fn declared_access(&self, resource: u32) -> Result<Access> {
        let current = self.steps.current;
        let mut declared = self.accesses.iter().filter(|access| access.resource == resource);
        let latest = declared.clone().rfind(|access| access.step <= current);
        latest.or_else(|| declared.next()).map(|access| access.access).ok_or_else(|| GraphError::UndeclaredAccess {
            pass: self.pass_name.to_owned(),
            resource: self.names.resource_name(resource).to_owned(),
        })
    }
    /// Opens a GPU zone named `name` inside this pass, closing the one open (zones do not
    /// nest): its GPU time comes back in [`GraphStats::zones`](crate::GraphStats::zones) and,
    /// under the feature `profile`, as a Tracy GPU zone inside the pass's. The pass's end
    /// closes the last one. Without timestamps, or past
    /// [`MAX_GPU_ZONES`](crate::MAX_GPU_ZONES) in a frame, it times nothing.
    ///
    /// ```no_run
    /// # fn record(context: &mut render_graph::ExecuteContext<'_>, views: &[&str]) {
    /// for view in views {
    ///     context.begin_gpu_zone(view);
    ///     // ... this view's draws ...
    /// }
    /// context.end_gpu_zone();
    /// # }
    /// ```
    pub fn begin_gpu_zone(&mut self, name: &str) {
        self.end_gpu_zone();
        if let Some(zones) = &mut self.zones {
            zones.begin(self.device.raw(), self.command_buffer, name);
        }
    }

    /// Closes the GPU zone open in this pass, if any (see [`ExecuteContext::begin_gpu_zone`]).
    pub fn end_gpu_zone(&mut self) {
        if let Some(zones) = &mut self.zones {
            zones.end(self.device.raw(), self.command_buffer);
        }
    }

    /// Sets the push constants of the last bound pipeline from 32-bit words; see
    /// [`ExecuteContext::push_constant_bytes`] for what is an error.
    pub fn push_constants(&mut self, words: &[u32]) {
        let mut bytes = [0_u8; 256];
        if words.len() * 4 > bytes.len() {
            let capacity = self.bound.map_or(0, |(_, _, capacity)| capacity);
            self.fail(GraphError::PushConstantSize {
                pass: self.pass_name.to_owned(),
                bytes: words.len() * 4,
                capacity,
            });
            return;
        }
        for (chunk, word) in bytes.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        self.push_constant_bytes(&bytes[..words.len() * 4]);
    }

    /// Sets the push constants of the last bound pipeline from bytes, e.g. a `#[repr(C)]`
    /// struct viewed as bytes (`bytemuck::bytes_of(&constants)`); the length must be a
    /// multiple of 4 and fit the pipeline's push-constant block. Pushing before a pipeline is
    /// bound is [`GraphError::InvalidCommand`], a length that does not fit
    /// [`GraphError::PushConstantSize`]; both name the pass, and the frame is not submitted.
    pub fn push_constant_bytes(&mut self, bytes: &[u8]) {
        if self.error.is_some() {
            return;
        }
        let Some((layout, stages, capacity)) = self.bound else {
            self.fail(GraphError::InvalidCommand {
                pass: self.pass_name.to_owned(),
                reason: "pushes constants before binding a pipeline",
            });
            return;
        };
        let length = bytes.len();
        if length as u32 > capacity || !length.is_multiple_of(4) {
            self.fail(GraphError::PushConstantSize { pass: self.pass_name.to_owned(), bytes: length, capacity });
            return;
        }
        if length == 0 {
            return;
        }
        // SAFETY: the command buffer is recording; the range lies inside the layout's range.
        unsafe { self.device.raw().cmd_push_constants(self.command_buffer, layout, stages, 0, bytes) };
    }

    /// Whether last frame's version of `resource` (its history handle or the resource's own
    /// handle) holds zeros this frame instead of the previous frame's contents: in the first
    /// frame, and in the first frame after a recompile that had to recreate it because its
    /// description (format, size, mips, usage) changed. A temporal pass restarts its
    /// accumulation when this is true. A recompile that leaves the description unchanged (a
    /// window resize that does not change this resource's size) keeps the contents.
    pub fn history_was_reset(&self, resource: impl Into<ResourceRef>) -> bool {
        self.history_reset.get(resource.into().0 as usize).copied().unwrap_or(false)
    }
}
