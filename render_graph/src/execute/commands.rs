//! The draw and dispatch helpers of [`ExecuteContext`]: direct, indexed and indirect draws
//! (with count), indirect dispatch. Each checks the pass's declarations (index and indirect
//! buffers declared as such, ranges inside the buffer), where it is called (draws inside
//! `record_draw`) and the device's features, with the documented fallbacks; a failure is kept
//! and returned by [`crate::RenderGraph::execute_frame`].

use std::ops::Range;

use ash::vk;

use super::execute_context::ExecuteContext;
use super::warnings::{ZERO_DISPATCH, ZERO_DRAW};
use crate::access::{Access, ShaderStage};
use crate::compile::{raw_handle, AccessedBuffer, ImageWrite};
use crate::error::GraphError;
use crate::resources::{Resolved, ResolvedBuffer};

/// Bytes of one `VkDrawIndirectCommand`.
pub const DRAW_INDIRECT_COMMAND_BYTES: u32 = 16;
/// Bytes of one `VkDrawIndexedIndirectCommand`.
pub const DRAW_INDEXED_INDIRECT_COMMAND_BYTES: u32 = 20;
/// Bytes of one `VkDispatchIndirectCommand`.
pub const DISPATCH_INDIRECT_COMMAND_BYTES: u32 = 12;

impl ExecuteContext<'_> {
    /// Dispatches compute workgroups. A dispatch of zero workgroups records nothing and is
    /// a warning ([`crate::RenderGraph::pass_warnings`], logged once per pass).
    pub fn dispatch(&mut self, groups_x: u32, groups_y: u32, groups_z: u32) {
        if !self.check_dispatching() {
            return;
        }
        if groups_x == 0 || groups_y == 0 || groups_z == 0 {
            self.warnings.warn(self.pass_name, ZERO_DISPATCH);
            return;
        }
        // SAFETY: the command buffer is recording with a compute pipeline bound.
        unsafe { self.device.raw().cmd_dispatch(self.command_buffer, groups_x, groups_y, groups_z) };
    }

    /// Dispatches with the workgroup counts of the `VkDispatchIndirectCommand` at `offset` in
    /// `arguments`, a buffer declared with [`crate::Registry::indirect_buffer`].
    pub fn dispatch_indirect(&mut self, arguments: impl AccessedBuffer, offset: u64) {
        if !self.check_dispatching() {
            return;
        }
        let arguments = raw_handle(arguments).0;
        let Some(buffer) = self.indirect_arguments(arguments, offset, 1, DISPATCH_INDIRECT_COMMAND_BYTES, 4) else {
            return;
        };
        // SAFETY: recording with a compute pipeline bound; the command lies inside the buffer,
        // which the graph made readable as indirect arguments (declared, checked above).
        unsafe { self.device.raw().cmd_dispatch_indirect(self.command_buffer, buffer, offset) };
    }

    /// Makes compute-shader storage writes to mip `mip` of `image` visible to compute-shader
    /// storage reads later in this pass (a barrier on that one mip, layout `GENERAL` kept).
    ///
    /// For a pass that reduces a mip chain in one pass: write mip `k`, call this, read mip `k`
    /// to write mip `k + 1`. The image must be declared
    /// [`read_write_storage_image`](crate::Registry::read_write_storage_image) for compute (the
    /// barrier orders this pass's own writes, so it takes the write handle); any other
    /// declaration, or a mip past the image's chain, fails the frame with an error naming the
    /// pass and the image.
    pub fn mip_barrier(&mut self, image: &ImageWrite, mip: u32) {
        if self.error.is_some() {
            return;
        }
        let image = image.0;
        let name = || self.names.resource_name(image).to_owned();
        let access = match self.declared_access(image) {
            Ok(access) => access,
            Err(error) => return self.fail(error),
        };
        let resolved = match self.resolved[image as usize] {
            Resolved::Image(resolved) if access == Access::StorageReadWrite(ShaderStage::Compute) => resolved,
            _ => {
                let error = GraphError::InvalidAccess {
                    pass: self.pass_name.to_owned(),
                    resource: name(),
                    reason: "a mip barrier needs an image declared read-write storage for compute",
                };
                return self.fail(error);
            }
        };
        if mip >= resolved.mip_levels {
            let error = GraphError::InvalidAccess {
                pass: self.pass_name.to_owned(),
                resource: name(),
                reason: "the mip barrier's level is past the image's mip chain",
            };
            return self.fail(error);
        }
        let barrier = vk::ImageMemoryBarrier2::default()
            .src_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
            .src_access_mask(vk::AccessFlags2::SHADER_STORAGE_WRITE)
            .dst_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
            .dst_access_mask(vk::AccessFlags2::SHADER_STORAGE_READ)
            .old_layout(vk::ImageLayout::GENERAL)
            .new_layout(vk::ImageLayout::GENERAL)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(resolved.image)
            .subresource_range(vk::ImageSubresourceRange {
                base_mip_level: mip,
                level_count: 1,
                ..crate::memory::full_range(resolved.format, resolved.mip_levels)
            });
        let dependency = vk::DependencyInfo::default().image_memory_barriers(std::slice::from_ref(&barrier));
        // SAFETY: the command buffer is recording outside a rendering scope (compute pass);
        // the image is live this frame and in GENERAL, as its declaration makes it.
        unsafe { self.device.raw().cmd_pipeline_barrier2(self.command_buffer, &dependency) };
    }

    /// Draws non-indexed vertices (inside `record_draw`), from vertex 0 and instance 0.
    pub fn draw(&mut self, vertex_count: u32, instance_count: u32) {
        self.draw_ranges(0..vertex_count, 0..instance_count);
    }

    /// Draws the vertices and instances of the two ranges (inside `record_draw`):
    /// `gl_VertexIndex` runs over `vertices`, `gl_InstanceIndex` over `instances`. An empty
    /// range records nothing and is a warning (see [`ExecuteContext::dispatch`]).
    pub fn draw_ranges(&mut self, vertices: Range<u32>, instances: Range<u32>) {
        if !self.check_drawing() {
            return;
        }
        if vertices.is_empty() || instances.is_empty() {
            self.warnings.warn(self.pass_name, ZERO_DRAW);
            return;
        }
        let (vertex_count, instance_count) = (vertices.len() as u32, instances.len() as u32);
        // SAFETY: the command buffer is recording inside a rendering scope with a graphics
        // pipeline bound.
        unsafe {
            self.device.raw().cmd_draw(
                self.command_buffer,
                vertex_count,
                instance_count,
                vertices.start,
                instances.start,
            )
        };
    }

    /// Binds `buffer` (declared with [`crate::Registry::index_buffer`]) from `offset` as the
    /// index buffer of later indexed draws of this pass.
    pub fn bind_index_buffer(&mut self, buffer: impl AccessedBuffer, offset: u64, index_type: vk::IndexType) {
        let buffer = raw_handle(buffer).0;
        let Some(resolved) = self.declared_buffer(buffer, Access::IndexBuffer) else {
            return;
        };
        if offset >= resolved.size {
            self.fail_access(buffer, "the index buffer offset lies past the end of the buffer");
            return;
        }
        // SAFETY: recording; the buffer was declared as an index buffer (usage and barrier
        // come from the declaration) and the offset lies inside it.
        unsafe { self.device.raw().cmd_bind_index_buffer(self.command_buffer, resolved.buffer, offset, index_type) };
        self.index_bound = true;
    }

    /// Draws indexed triangles (inside `record_draw`, after [`ExecuteContext::bind_index_buffer`]):
    /// the indices of `indices`, each plus `vertex_offset`, for the instances of `instances`.
    pub fn draw_indexed(&mut self, indices: Range<u32>, vertex_offset: i32, instances: Range<u32>) {
        if !self.check_drawing() || !self.check_index_buffer() {
            return;
        }
        if indices.is_empty() || instances.is_empty() {
            self.warnings.warn(self.pass_name, ZERO_DRAW);
            return;
        }
        // SAFETY: recording inside a rendering scope with a graphics pipeline and an index
        // buffer bound.
        unsafe {
            self.device.raw().cmd_draw_indexed(
                self.command_buffer,
                indices.len() as u32,
                instances.len() as u32,
                indices.start,
                vertex_offset,
                instances.start,
            )
        };
    }

    /// Draws `draw_count` `VkDrawIndirectCommand`s read from `arguments` (declared with
    /// [`crate::Registry::indirect_buffer`]) from `offset`, `stride` bytes apart. Without
    /// the device's `multiDrawIndirect` feature the graph records one draw per command.
    /// A `firstInstance` other than 0 needs `drawIndirectFirstInstance`
    /// ([`crate::DeviceCapabilities::draw_indirect_first_instance`]).
    pub fn draw_indirect(&mut self, arguments: impl AccessedBuffer, offset: u64, draw_count: u32, stride: u32) {
        self.indirect_draws(raw_handle(arguments).0, offset, draw_count, stride, false);
    }

    /// Like [`ExecuteContext::draw_indirect`] with `VkDrawIndexedIndirectCommand`s and the
    /// bound index buffer.
    pub fn draw_indexed_indirect(&mut self, arguments: impl AccessedBuffer, offset: u64, draw_count: u32, stride: u32) {
        self.indirect_draws(raw_handle(arguments).0, offset, draw_count, stride, true);
    }

    /// Draws as many `VkDrawIndirectCommand`s from `arguments` as the u32 at `count_offset`
    /// in `count` says, at most `max_draw_count` (both buffers declared with
    /// [`crate::Registry::indirect_buffer`]).
    ///
    /// Without the device's `drawIndirectCount` feature
    /// ([`crate::DeviceCapabilities::draw_indirect_count`]) the fallback draws all
    /// `max_draw_count` commands: the producer must then give every command past the count
    /// an `instanceCount` of 0 (which draws nothing), and the results agree on every device.
    #[allow(clippy::too_many_arguments)]
    pub fn draw_indirect_count(
        &mut self,
        arguments: impl AccessedBuffer,
        offset: u64,
        count: impl AccessedBuffer,
        count_offset: u64,
        max_draw_count: u32,
        stride: u32,
    ) {
        let (arguments, count) = (raw_handle(arguments).0, raw_handle(count).0);
        self.indirect_count_draws(arguments, offset, count, count_offset, max_draw_count, stride, false);
    }

    /// Like [`ExecuteContext::draw_indirect_count`] with `VkDrawIndexedIndirectCommand`s and
    /// the bound index buffer (same fallback).
    pub fn draw_indexed_indirect_count(
        &mut self,
        arguments: impl AccessedBuffer,
        offset: u64,
        count: impl AccessedBuffer,
        count_offset: u64,
        max_draw_count: u32,
        stride: u32,
    ) {
        let (arguments, count) = (raw_handle(arguments).0, raw_handle(count).0);
        self.indirect_count_draws(arguments, offset, count, count_offset, max_draw_count, stride, true);
    }

    fn fail_access(&mut self, resource: u32, reason: &'static str) {
        let error = GraphError::InvalidAccess {
            pass: self.pass_name.to_owned(),
            resource: self.names.resource_name(resource).to_owned(),
            reason,
        };
        self.fail(error);
    }

    /// The buffer, when the pass declared exactly `wanted` on it; otherwise fails the frame.
    fn declared_buffer(&mut self, buffer: u32, wanted: Access) -> Option<ResolvedBuffer> {
        if self.error.is_some() {
            return None;
        }
        let access = match self.declared_access(buffer) {
            Ok(access) => access,
            Err(error) => {
                self.fail(error);
                return None;
            }
        };
        if access != wanted {
            let reason = match wanted {
                Access::IndexBuffer => "an index buffer must be declared with Registry::index_buffer",
                _ => "indirect arguments and counts must be declared with Registry::indirect_buffer",
            };
            self.fail_access(buffer, reason);
            return None;
        }
        match self.resolved[buffer as usize] {
            Resolved::Buffer(resolved) => Some(resolved),
            _ => {
                self.fail_access(buffer, "it is not a buffer");
                None
            }
        }
    }

    /// Checks an indirect read of `count` commands of `size` bytes, `stride` apart.
    fn indirect_arguments(
        &mut self,
        arguments: u32,
        offset: u64,
        count: u32,
        size: u32,
        stride: u32,
    ) -> Option<vk::Buffer> {
        let resolved = self.declared_buffer(arguments, Access::IndirectArgument)?;
        let end = offset + u64::from(stride) * u64::from(count.saturating_sub(1)) + u64::from(size);
        if !offset.is_multiple_of(4) || (count > 1 && (stride < size || !stride.is_multiple_of(4))) {
            self.fail_access(
                arguments,
                "indirect offsets and strides must be multiples of 4, strides at least one command",
            );
            return None;
        }
        if end > resolved.size {
            self.fail_access(arguments, "the indirect commands run past the end of the buffer");
            return None;
        }
        Some(resolved.buffer)
    }

    /// Dispatches must be recorded in `execute`, outside the rendering scope.
    fn check_dispatching(&mut self) -> bool {
        self.check_scope(false, "dispatches are recorded in execute, outside the rendering scope")
    }

    /// Draws must be recorded inside the rendering scope, after binding a pipeline.
    fn check_drawing(&mut self) -> bool {
        self.check_scope(
            true,
            "draws are recorded in record_draw, inside the rendering scope of the declared attachments",
        )
    }

    /// Whether recording may go on: no earlier error, and inside the rendering scope exactly
    /// when `rendering` asks for it (else the pass fails with `reason`).
    fn check_scope(&mut self, rendering: bool, reason: &'static str) -> bool {
        if self.error.is_some() {
            return false;
        }
        if self.rendering != rendering {
            self.fail(GraphError::InvalidCommand { pass: self.pass_name.to_owned(), reason });
            return false;
        }
        true
    }

    fn check_index_buffer(&mut self) -> bool {
        if !self.index_bound {
            self.fail(GraphError::InvalidCommand {
                pass: self.pass_name.to_owned(),
                reason: "an indexed draw needs bind_index_buffer first in this pass",
            });
        }
        self.index_bound
    }

    fn indirect_draws(&mut self, arguments: u32, offset: u64, draw_count: u32, stride: u32, indexed: bool) {
        if !self.check_drawing() || (indexed && !self.check_index_buffer()) || draw_count == 0 {
            return;
        }
        let size = if indexed { DRAW_INDEXED_INDIRECT_COMMAND_BYTES } else { DRAW_INDIRECT_COMMAND_BYTES };
        let Some(buffer) = self.indirect_arguments(arguments, offset, draw_count, size, stride) else { return };
        let raw = self.device.raw();
        let record = |offset: u64, count: u32| {
            if indexed {
                // SAFETY: recording in a rendering scope with a pipeline and an index buffer
                // bound; the commands lie inside the declared indirect buffer (checked).
                unsafe { raw.cmd_draw_indexed_indirect(self.command_buffer, buffer, offset, count, stride) };
            } else {
                // SAFETY: as above, without an index buffer.
                unsafe { raw.cmd_draw_indirect(self.command_buffer, buffer, offset, count, stride) };
            }
        };
        if draw_count == 1 || self.device.capabilities().multi_draw_indirect {
            record(offset, draw_count);
        } else {
            for draw in 0..u64::from(draw_count) {
                record(offset + draw * u64::from(stride), 1);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn indirect_count_draws(
        &mut self,
        arguments: u32,
        offset: u64,
        count: u32,
        count_offset: u64,
        max_draw_count: u32,
        stride: u32,
        indexed: bool,
    ) {
        if !self.device.capabilities().draw_indirect_count {
            self.indirect_draws(arguments, offset, max_draw_count, stride, indexed);
            return;
        }
        if !self.check_drawing() || (indexed && !self.check_index_buffer()) || max_draw_count == 0 {
            return;
        }
        let size = if indexed { DRAW_INDEXED_INDIRECT_COMMAND_BYTES } else { DRAW_INDIRECT_COMMAND_BYTES };
        let Some(buffer) = self.indirect_arguments(arguments, offset, max_draw_count, size, stride) else { return };
        let Some(count_buffer) = self.indirect_arguments(count, count_offset, 1, 4, 4) else { return };
        let raw = self.device.raw();
        if indexed {
            // SAFETY: recording in a rendering scope with a pipeline and an index buffer bound;
            // the feature is enabled; commands and count lie inside declared indirect buffers.
            unsafe {
                raw.cmd_draw_indexed_indirect_count(
                    self.command_buffer,
                    buffer,
                    offset,
                    count_buffer,
                    count_offset,
                    max_draw_count,
                    stride,
                )
            };
        } else {
            // SAFETY: as above, without an index buffer.
            unsafe {
                raw.cmd_draw_indirect_count(
                    self.command_buffer,
                    buffer,
                    offset,
                    count_buffer,
                    count_offset,
                    max_draw_count,
                    stride,
                )
            };
        }
    }
}
