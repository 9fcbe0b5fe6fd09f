//! The transfer helpers of [`ExecuteContext`]: fill and update a buffer, clear an image,
//! copy between buffers and between images, each checked against the pass's declarations
//! (a transfer write on what it writes, a transfer read on what it reads) and the resources'
//! sizes, so a pass needs no `unsafe` call of its own for the common transfers. A write to a
//! resource this pass already wrote by a transfer is preceded by a transfer-to-transfer
//! barrier on it, so a pass's transfers to one resource (a fill, then an update over it) run
//! in the order recorded; the first write of each resource needs none (the graph's barriers
//! order it after the earlier passes). A failure names the
//! pass and the resource, is kept, and later helper calls of the pass do nothing.

use ash::vk;

use super::execute_context::ExecuteContext;
use super::Binding;
use crate::access::Access;
use crate::compile::{raw_handle, AccessedBuffer, AccessedImage, BufferWrite, ImageWrite};
use crate::error::GraphError;
use crate::memory::full_range;
use crate::resources::{Resolved, ResolvedBuffer, ResolvedImage};

impl ExecuteContext<'_> {
    /// Fills `size` bytes of `buffer` from byte `offset` with the 32-bit `word`
    /// (`vkCmdFillBuffer`; [`vk::WHOLE_SIZE`] fills to the end). The buffer must be declared
    /// with [`Access::TransferWrite`]; `offset` and `size` are multiples of 4 inside it.
    pub fn fill_buffer(&mut self, buffer: &BufferWrite, offset: u64, size: u64, word: u32) {
        let Some(target) = self.transfer_buffer(buffer.0, Access::TransferWrite) else { return };
        let size = if size == vk::WHOLE_SIZE { target.size.saturating_sub(offset) & !3 } else { size };
        if !self.fits(buffer.0, offset, size, target.size) || size == 0 {
            return;
        }
        self.before_transfer_write(buffer.0, Some(target.buffer), None);
        // SAFETY: recording outside a rendering scope; the graph made the buffer a transfer
        // destination (its declared access) and the range lies inside it, 4-byte aligned.
        unsafe { self.device.raw().cmd_fill_buffer(self.command_buffer, target.buffer, offset, size, word) };
    }

    /// Writes `data` into `buffer` at `offset` inside the command buffer
    /// (`vkCmdUpdateBuffer`: at most 65,536 bytes, a multiple of 4): for small per-pass
    /// constants; larger data goes through [`crate::PrepareContext::upload_buffer`]. The
    /// buffer must be declared with [`Access::TransferWrite`].
    pub fn update_buffer(&mut self, buffer: &BufferWrite, offset: u64, data: &[u8]) {
        let Some(target) = self.transfer_buffer(buffer.0, Access::TransferWrite) else { return };
        if data.len() > 65_536 {
            return self.fail_transfer(buffer.0, "an update of more than 65,536 bytes; upload it in prepare");
        }
        if !self.fits(buffer.0, offset, data.len() as u64, target.size) || data.is_empty() {
            return;
        }
        self.before_transfer_write(buffer.0, Some(target.buffer), None);
        // SAFETY: recording outside a rendering scope; a transfer destination (declared); the
        // range lies inside the buffer, 4-byte aligned, at most 65,536 bytes.
        unsafe { self.device.raw().cmd_update_buffer(self.command_buffer, target.buffer, offset, data) };
    }

    /// Copies the `regions` of `source` (declared [`Access::TransferRead`]) into
    /// `target` (declared [`Access::TransferWrite`]); every region must lie inside both.
    pub fn copy_buffer(&mut self, source: impl AccessedBuffer, target: &BufferWrite, regions: &[vk::BufferCopy]) {
        let source = raw_handle(source).0;
        let Some(from) = self.transfer_buffer(source, Access::TransferRead) else { return };
        let Some(to) = self.transfer_buffer(target.0, Access::TransferWrite) else { return };
        for region in regions {
            let inside = region.src_offset.checked_add(region.size).is_some_and(|end| end <= from.size)
                && region.dst_offset.checked_add(region.size).is_some_and(|end| end <= to.size);
            if !inside {
                return self.fail_transfer(target.0, "a copy region lies past the end of a buffer");
            }
        }
        if regions.is_empty() {
            return;
        }
        self.before_transfer_write(target.0, Some(to.buffer), None);
        // SAFETY: recording outside a rendering scope; both buffers are in the transfer states
        // their declarations give; every region lies inside both.
        unsafe { self.device.raw().cmd_copy_buffer(self.command_buffer, from.buffer, to.buffer, regions) };
    }

    /// Clears every mip of a colour image, declared [`Access::TransferWrite`], to `color`.
    pub fn clear_color_image(&mut self, image: &ImageWrite, color: [f32; 4]) {
        let Some(target) = self.transfer_image(image.0, Access::TransferWrite) else { return };
        let range = full_range(target.format, target.mip_levels);
        if range.aspect_mask != vk::ImageAspectFlags::COLOR {
            return self.fail_transfer(image.0, "a colour clear of a depth image; use clear_depth_image");
        }
        let value = vk::ClearColorValue { float32: color };
        self.before_transfer_write(image.0, None, Some((target.image, range)));
        // SAFETY: recording outside a rendering scope; the image is in the transfer
        // destination layout its declared access gives; the range covers its mips.
        unsafe {
            self.device.raw().cmd_clear_color_image(
                self.command_buffer,
                target.image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &value,
                &[range],
            )
        };
    }

    /// Clears every mip of a depth image, declared [`Access::TransferWrite`], to `depth`.
    pub fn clear_depth_image(&mut self, image: &ImageWrite, depth: f32) {
        let Some(target) = self.transfer_image(image.0, Access::TransferWrite) else { return };
        let range = full_range(target.format, target.mip_levels);
        if !range.aspect_mask.contains(vk::ImageAspectFlags::DEPTH) {
            return self.fail_transfer(image.0, "a depth clear of a colour image; use clear_color_image");
        }
        let value = vk::ClearDepthStencilValue { depth, stencil: 0 };
        self.before_transfer_write(image.0, None, Some((target.image, range)));
        // SAFETY: as in `clear_color_image`.
        unsafe {
            self.device.raw().cmd_clear_depth_stencil_image(
                self.command_buffer,
                target.image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &value,
                &[range],
            )
        };
    }

    /// Copies mip 0 of `source` (declared [`Access::TransferRead`]) into mip 0 of `target`
    /// (declared [`Access::TransferWrite`]), over the extent both share; the formats must be
    /// the same.
    pub fn copy_image(&mut self, source: impl AccessedImage, target: &ImageWrite) {
        let source = raw_handle(source).0;
        let Some(from) = self.transfer_image(source, Access::TransferRead) else { return };
        let Some(to) = self.transfer_image(target.0, Access::TransferWrite) else { return };
        if from.format != to.format {
            return self.fail_transfer(target.0, "a copy between images of different formats");
        }
        let aspect_mask = full_range(from.format, 1).aspect_mask;
        let layers = vk::ImageSubresourceLayers { aspect_mask, mip_level: 0, base_array_layer: 0, layer_count: 1 };
        let extent = vk::Extent3D {
            width: from.extent.width.min(to.extent.width),
            height: from.extent.height.min(to.extent.height),
            depth: 1,
        };
        let region = vk::ImageCopy::default().src_subresource(layers).dst_subresource(layers).extent(extent);
        self.record_image_copy(target, &from, &to, &[region]);
    }

    /// Copies every mip of layers `0..layers` of the image array `source` (declared
    /// [`Access::TransferRead`]) into the same layers of `target` (declared
    /// [`Access::TransferWrite`]): an array outgrown by one with more layers. Both have the
    /// same format, size and mip count, and at least `layers` layers.
    pub fn copy_image_layers(&mut self, source: impl AccessedImage, target: &ImageWrite, layers: u32) {
        let source = raw_handle(source).0;
        let Some(from) = self.transfer_image(source, Access::TransferRead) else { return };
        let Some(to) = self.transfer_image(target.0, Access::TransferWrite) else { return };
        if from.format != to.format || from.extent != to.extent || from.mip_levels != to.mip_levels {
            return self.fail_transfer(target.0, "a layer copy between images of different formats, sizes or mips");
        }
        if layers == 0 {
            return;
        }
        let aspect_mask = full_range(from.format, 1).aspect_mask;
        let regions: Vec<vk::ImageCopy> = (0..from.mip_levels)
            .map(|mip_level| {
                let layers =
                    vk::ImageSubresourceLayers { aspect_mask, mip_level, base_array_layer: 0, layer_count: layers };
                let extent = vk::Extent3D {
                    width: (from.extent.width >> mip_level).max(1),
                    height: (from.extent.height >> mip_level).max(1),
                    depth: 1,
                };
                vk::ImageCopy::default().src_subresource(layers).dst_subresource(layers).extent(extent)
            })
            .collect();
        // Every mip and layer copied exists in both: same size and mips, and `layers` at most
        // either's count by the caller's contract, which validation checks.
        self.record_image_copy(target, &from, &to, &regions);
    }

    /// Records the copy of `regions` from `from` into `to` (the image `target` declares),
    /// after the barrier that brings `to` to its transfer write.
    fn record_image_copy(
        &mut self,
        target: &ImageWrite,
        from: &ResolvedImage,
        to: &ResolvedImage,
        regions: &[vk::ImageCopy],
    ) {
        self.before_transfer_write(target.0, None, Some((to.image, full_range(to.format, to.mip_levels))));
        // SAFETY: recording outside a rendering scope; both images are in the transfer layouts
        // their declarations give; the callers' regions fit both images.
        unsafe {
            self.device.raw().cmd_copy_image(
                self.command_buffer,
                from.image,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                to.image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                regions,
            )
        };
    }

    /// Copies texels staged in prepare ([`crate::PrepareContext::stage_data`] or
    /// [`crate::PrepareContext::stage_with`]: `staged`) into `target` (declared
    /// [`Access::TransferWrite`]); each region's `buffer_offset` counts from the start of
    /// `staged` and must lie inside it.
    pub fn copy_staged_to_image(&mut self, staged: &Binding, target: &ImageWrite, regions: &[vk::BufferImageCopy]) {
        let Some(to) = self.transfer_image(target.0, Access::TransferWrite) else { return };
        let Some((buffer, offset, size)) = staged.external_range() else {
            return self.fail_transfer(target.0, "texels must come from this frame's staging (stage_data)");
        };
        if regions.iter().any(|region| region.buffer_offset >= size) {
            return self.fail_transfer(target.0, "a texel region starts past the staged bytes");
        }
        let regions: Vec<vk::BufferImageCopy> =
            regions.iter().map(|region| region.buffer_offset(region.buffer_offset + offset)).collect();
        self.before_transfer_write(target.0, None, Some((to.image, full_range(to.format, to.mip_levels))));
        // SAFETY: recording outside a rendering scope; the image is in TRANSFER_DST_OPTIMAL
        // (its declaration); the staging buffer lives until the frame has finished.
        unsafe {
            self.device.raw().cmd_copy_buffer_to_image(
                self.command_buffer,
                buffer,
                to.image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &regions,
            )
        };
    }

    /// Before a transfer write to `resource`: when this pass wrote it by a transfer already,
    /// a barrier orders the earlier write first (the image stays in `TRANSFER_DST_OPTIMAL`,
    /// as its declaration keeps it).
    fn before_transfer_write(
        &mut self,
        resource: u32,
        buffer: Option<vk::Buffer>,
        image: Option<(vk::Image, vk::ImageSubresourceRange)>,
    ) {
        if self.transfers.note(resource) {
            self.transfer_barrier(buffer, image);
        }
    }

    fn transfer_barrier(&self, buffer: Option<vk::Buffer>, image: Option<(vk::Image, vk::ImageSubresourceRange)>) {
        let (stages, written) = (vk::PipelineStageFlags2::ALL_TRANSFER, vk::AccessFlags2::TRANSFER_WRITE);
        let buffers = [vk::BufferMemoryBarrier2::default()
            .src_stage_mask(stages)
            .src_access_mask(written)
            .dst_stage_mask(stages)
            .dst_access_mask(written | vk::AccessFlags2::TRANSFER_READ)
            .buffer(buffer.unwrap_or_default())
            .size(vk::WHOLE_SIZE)];
        let (image, range) = image.unwrap_or_default();
        let images = [vk::ImageMemoryBarrier2::default()
            .src_stage_mask(stages)
            .src_access_mask(written)
            .dst_stage_mask(stages)
            .dst_access_mask(written | vk::AccessFlags2::TRANSFER_READ)
            .old_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
            .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
            .image(image)
            .subresource_range(range)];
        let dependency = match buffer {
            Some(_) => vk::DependencyInfo::default().buffer_memory_barriers(&buffers),
            None => vk::DependencyInfo::default().image_memory_barriers(&images),
        };
        // SAFETY: recording outside a rendering scope; the barrier names a live resource of
        // this frame in the layout its declaration gives.
        unsafe { self.device.raw().cmd_pipeline_barrier2(self.command_buffer, &dependency) };
    }

    /// The buffer `resource`, when the pass may record a transfer (no error, outside the
    /// rendering scope) and declared exactly `wanted` on it.
    fn transfer_buffer(&mut self, resource: u32, wanted: Access) -> Option<ResolvedBuffer> {
        match self.transfer_target(resource, wanted)? {
            Resolved::Buffer(buffer) => Some(buffer),
            _ => {
                self.fail_transfer(resource, "it is not a buffer");
                None
            }
        }
    }

    /// The image `resource` (see [`ExecuteContext::transfer_buffer`]).
    fn transfer_image(&mut self, resource: u32, wanted: Access) -> Option<ResolvedImage> {
        match self.transfer_target(resource, wanted)? {
            Resolved::Image(image) => Some(image),
            _ => {
                self.fail_transfer(resource, "it is not an image");
                None
            }
        }
    }

    fn transfer_target(&mut self, resource: u32, wanted: Access) -> Option<Resolved> {
        if self.error.is_some() {
            return None;
        }
        if self.rendering {
            self.fail(GraphError::InvalidCommand {
                pass: self.pass_name.to_owned(),
                reason: "transfers are recorded in execute, outside the rendering scope",
            });
            return None;
        }
        match self.declared_access(resource) {
            Ok(access) if access == wanted => Some(self.resolved[resource as usize]),
            Ok(_) if wanted == Access::TransferWrite => {
                self.fail_transfer(resource, "a transfer writes it: declare it with Access::TransferWrite");
                None
            }
            Ok(_) => {
                self.fail_transfer(resource, "a transfer reads it: declare it with Access::TransferRead");
                None
            }
            Err(error) => {
                self.fail(error);
                None
            }
        }
    }

    /// Whether `offset..offset + size` lies inside a buffer of `capacity` bytes, 4-byte
    /// aligned; fails the pass otherwise.
    fn fits(&mut self, resource: u32, offset: u64, size: u64, capacity: u64) -> bool {
        let inside = offset.checked_add(size).is_some_and(|end| end <= capacity);
        if !inside || !offset.is_multiple_of(4) || !size.is_multiple_of(4) {
            self.fail_transfer(resource, "a transfer range past the end of the buffer, or not in whole 4-byte words");
            return false;
        }
        true
    }

    fn fail_transfer(&mut self, resource: u32, reason: &'static str) {
        self.fail(GraphError::InvalidAccess {
            pass: self.pass_name.to_owned(),
            resource: self.names.resource_name(resource).to_owned(),
            reason,
        });
    }
}
