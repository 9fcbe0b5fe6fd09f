//! Recording helpers of the executor: barrier batches, the first frame's clears of last
//! frame's versions, poison fills of what a pass only writes (under validation), and the
//! dynamic-rendering scope of passes with attachments.

use ash::vk;

use crate::access::MipRange;
use crate::compile::{AttachmentLoad, PassDecl, PlannedBarrier, Residency, SyncState};
use crate::memory::full_range;
use crate::resources::{Compiled, EntrySource, Resolved, ResolvedImage};

/// Most color attachments one pass may declare.
const MAX_COLOR_ATTACHMENTS: usize = 8;

fn color_clear(load: AttachmentLoad) -> (vk::AttachmentLoadOp, vk::ClearValue) {
    match load {
        AttachmentLoad::Load => (vk::AttachmentLoadOp::LOAD, vk::ClearValue::default()),
        AttachmentLoad::ClearColor(color) => {
            (vk::AttachmentLoadOp::CLEAR, vk::ClearValue { color: vk::ClearColorValue { float32: color } })
        }
        AttachmentLoad::ClearDepth(depth) => (
            vk::AttachmentLoadOp::CLEAR,
            vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth, stencil: 0 } },
        ),
        AttachmentLoad::DontCare => (vk::AttachmentLoadOp::DONT_CARE, vk::ClearValue::default()),
    }
}

/// Barriers gathered for one `vkCmdPipelineBarrier2` (kept between frames: no allocation in
/// steady state).
#[derive(Default)]
pub(crate) struct BarrierScratch {
    pub(crate) image: Vec<vk::ImageMemoryBarrier2<'static>>,
    pub(crate) buffer: Vec<vk::BufferMemoryBarrier2<'static>>,
    pub(crate) memory: Vec<vk::MemoryBarrier2<'static>>,
}

/// The subresource range of `mips` of `image`, or `None` when the image has none of them.
pub(crate) fn mip_subresources(image: &ResolvedImage, mips: MipRange) -> Option<vk::ImageSubresourceRange> {
    let (base, count) = mips.resolve(image.mip_levels)?;
    Some(vk::ImageSubresourceRange { base_mip_level: base, level_count: count, ..full_range(image.format, 1) })
}

/// Adds one barrier to the scratch lists (for images, on the mips `mips`); skips barriers
/// with nothing to wait for and no layout to change.
#[allow(clippy::too_many_arguments)]
pub(crate) fn push_barrier(
    scratch: &mut BarrierScratch,
    resolved: Resolved,
    mips: MipRange,
    source: SyncState,
    dst_stages: vk::PipelineStageFlags2,
    dst_access: vk::AccessFlags2,
    new_layout: vk::ImageLayout,
    aliased_buffer: bool,
) -> bool {
    match resolved {
        Resolved::Image(image) => {
            let same_layout = source.layout == new_layout && source.layout != vk::ImageLayout::UNDEFINED;
            let Some(range) = mip_subresources(&image, mips) else { return false };
            if source.stages.is_empty() && same_layout {
                return false;
            }
            scratch.image.push(
                vk::ImageMemoryBarrier2::default()
                    .src_stage_mask(source.stages)
                    .src_access_mask(source.access)
                    .dst_stage_mask(dst_stages)
                    .dst_access_mask(dst_access)
                    .old_layout(source.layout)
                    .new_layout(new_layout)
                    .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .image(image.image)
                    .subresource_range(range),
            );
            true
        }
        Resolved::Buffer(buffer) => {
            if source.stages.is_empty() {
                return false;
            }
            if aliased_buffer {
                // The previous occupant is another buffer: a global barrier covers the memory.
                scratch.memory.push(
                    vk::MemoryBarrier2::default()
                        .src_stage_mask(source.stages)
                        .src_access_mask(source.access)
                        .dst_stage_mask(dst_stages)
                        .dst_access_mask(dst_access),
                );
            } else {
                scratch.buffer.push(
                    vk::BufferMemoryBarrier2::default()
                        .src_stage_mask(source.stages)
                        .src_access_mask(source.access)
                        .dst_stage_mask(dst_stages)
                        .dst_access_mask(dst_access)
                        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                        .buffer(buffer.buffer)
                        .offset(0)
                        .size(vk::WHOLE_SIZE),
                );
            }
            true
        }
        Resolved::None => false,
    }
}

pub(crate) fn flush_barriers(device: &ash::Device, command_buffer: vk::CommandBuffer, scratch: &mut BarrierScratch) {
    if scratch.image.is_empty() && scratch.buffer.is_empty() && scratch.memory.is_empty() {
        return;
    }
    let dependency = vk::DependencyInfo::default()
        .memory_barriers(&scratch.memory)
        .buffer_memory_barriers(&scratch.buffer)
        .image_memory_barriers(&scratch.image);
    // SAFETY: the command buffer is recording; every barrier names a live resource.
    unsafe { device.cmd_pipeline_barrier2(command_buffer, &dependency) };
    scratch.image.clear();
    scratch.buffer.clear();
    scratch.memory.clear();
}

/// State a history resource is in after the first frame's clear.
pub(crate) fn cleared_state(is_image: bool) -> SyncState {
    SyncState {
        stages: vk::PipelineStageFlags2::ALL_TRANSFER,
        access: vk::AccessFlags2::TRANSFER_WRITE,
        layout: if is_image { vk::ImageLayout::TRANSFER_DST_OPTIMAL } else { vk::ImageLayout::UNDEFINED },
    }
}

/// Clears last frame's versions of double-buffered resources created by this compilation, in
/// its first frame.
pub(crate) fn record_history_clears(
    raw: &ash::Device,
    command_buffer: vk::CommandBuffer,
    compiled: &Compiled,
    resolved: &[Resolved],
    scratch: &mut BarrierScratch,
) {
    let to_clear = |resource: usize| {
        matches!(compiled.entry[resource], EntrySource::HistoryPrevious(_))
            && compiled.graph.resources[resource].lifetime.is_some()
            && compiled.history_reset[resource]
    };
    for resource in (0..resolved.len()).filter(|&resource| to_clear(resource)) {
        push_barrier(
            scratch,
            resolved[resource],
            MipRange::ALL,
            SyncState::NONE,
            vk::PipelineStageFlags2::ALL_TRANSFER,
            vk::AccessFlags2::TRANSFER_WRITE,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            false,
        );
    }
    flush_barriers(raw, command_buffer, scratch);
    for resource in (0..resolved.len()).filter(|&resource| to_clear(resource)) {
        match resolved[resource] {
            Resolved::Image(image) => {
                let range = full_range(image.format, image.mip_levels);
                let layout = vk::ImageLayout::TRANSFER_DST_OPTIMAL;
                if range.aspect_mask.contains(vk::ImageAspectFlags::COLOR) {
                    let color = vk::ClearColorValue { uint32: [0; 4] };
                    // SAFETY: recording outside rendering; the image is in TRANSFER_DST layout.
                    unsafe { raw.cmd_clear_color_image(command_buffer, image.image, layout, &color, &[range]) };
                } else {
                    let depth = vk::ClearDepthStencilValue { depth: 0.0, stencil: 0 };
                    // SAFETY: as above.
                    unsafe { raw.cmd_clear_depth_stencil_image(command_buffer, image.image, layout, &depth, &[range]) };
                }
            }
            Resolved::Buffer(buffer) => {
                // SAFETY: recording; the buffer has TRANSFER_DST usage (added at compile).
                unsafe { raw.cmd_fill_buffer(command_buffer, buffer.buffer, 0, vk::WHOLE_SIZE, 0) };
            }
            Resolved::None => {}
        }
    }
}

/// The word poison fills write into buffers and integer images under validation.
pub const POISON_WORD: u32 = 0xBAAD_F00D;

/// The color poison fills write into float and normalized images (opaque magenta).
pub const POISON_COLOR: [f32; 4] = [1.0, 0.0, 1.0, 1.0];

/// The depth poison fills write into depth images.
pub const POISON_DEPTH: f32 = 0.5;

/// Whether `planned` is the first access this frame of a transient resource (or of some of
/// its mips) that the pass writes without reading or clearing it: it must overwrite
/// everything it declared, or the output shows whatever the memory held.
pub(crate) fn is_blind_write(compiled: &Compiled, pass: &PassDecl, planned: &PlannedBarrier) -> bool {
    if compiled.graph.resources[planned.resource as usize].residency != Residency::Transient {
        return false;
    }
    pass.accesses.iter().any(|access| {
        access.resource == planned.resource
            && access.mips.contains(planned.mips)
            && access.access.is_write()
            && !access.access.is_read()
            && matches!(access.load, None | Some(AttachmentLoad::DontCare))
    })
}

fn is_integer_format(format: vk::Format) -> bool {
    matches!(
        format,
        vk::Format::R8_UINT
            | vk::Format::R8_SINT
            | vk::Format::R8G8_UINT
            | vk::Format::R8G8_SINT
            | vk::Format::R8G8B8A8_UINT
            | vk::Format::R8G8B8A8_SINT
            | vk::Format::R16_UINT
            | vk::Format::R16_SINT
            | vk::Format::R16G16_UINT
            | vk::Format::R16G16_SINT
            | vk::Format::R16G16B16A16_UINT
            | vk::Format::R16G16B16A16_SINT
            | vk::Format::R32_UINT
            | vk::Format::R32_SINT
            | vk::Format::R32G32_UINT
            | vk::Format::R32G32_SINT
            | vk::Format::R32G32B32A32_UINT
            | vk::Format::R32G32B32A32_SINT
    )
}

/// Fills a resource (the mips `mips` of an image, in TRANSFER_DST layout) with poison.
pub(crate) fn record_poison(raw: &ash::Device, command_buffer: vk::CommandBuffer, resolved: Resolved, mips: MipRange) {
    match resolved {
        Resolved::Image(image) => {
            let Some(range) = mip_subresources(&image, mips) else { return };
            let layout = vk::ImageLayout::TRANSFER_DST_OPTIMAL;
            if range.aspect_mask.contains(vk::ImageAspectFlags::COLOR) {
                let color = if is_integer_format(image.format) {
                    vk::ClearColorValue { uint32: [POISON_WORD; 4] }
                } else {
                    vk::ClearColorValue { float32: POISON_COLOR }
                };
                // SAFETY: recording outside rendering; the image is in TRANSFER_DST layout and
                // has TRANSFER_DST usage (added at compile under validation).
                unsafe { raw.cmd_clear_color_image(command_buffer, image.image, layout, &color, &[range]) };
            } else {
                let depth = vk::ClearDepthStencilValue { depth: POISON_DEPTH, stencil: 0 };
                // SAFETY: as above.
                unsafe { raw.cmd_clear_depth_stencil_image(command_buffer, image.image, layout, &depth, &[range]) };
            }
        }
        Resolved::Buffer(buffer) => {
            // SAFETY: recording outside rendering; the buffer has TRANSFER_DST usage.
            unsafe { raw.cmd_fill_buffer(command_buffer, buffer.buffer, 0, vk::WHOLE_SIZE, POISON_WORD) };
        }
        Resolved::None => {}
    }
}

/// Begins dynamic rendering on the pass's declared attachments; returns their extent, or
/// `None` when the pass declares no attachment.
pub(crate) fn begin_rendering(
    raw: &ash::Device,
    command_buffer: vk::CommandBuffer,
    decl: &PassDecl,
    resolved: &[Resolved],
) -> Option<vk::Extent2D> {
    let mut colors = [vk::RenderingAttachmentInfo::default(); MAX_COLOR_ATTACHMENTS];
    let mut color_count = 0;
    let mut depth = None;
    let mut extent = None;
    for access in &decl.accesses {
        let Some(load) = access.load else { continue };
        let Resolved::Image(image) = resolved[access.resource as usize] else { continue };
        extent.get_or_insert(image.extent);
        let (load_op, clear) = color_clear(load);
        let read_only = access.access == crate::access::Access::DepthRead;
        let info = vk::RenderingAttachmentInfo::default()
            .image_view(image.view)
            .image_layout(access.access.image_layout())
            .load_op(load_op)
            .store_op(if read_only { vk::AttachmentStoreOp::NONE } else { vk::AttachmentStoreOp::STORE })
            .clear_value(clear);
        if access.access == crate::access::Access::ColorAttachment {
            assert!(
                color_count < MAX_COLOR_ATTACHMENTS,
                "pass `{}` has more than {MAX_COLOR_ATTACHMENTS} color attachments",
                decl.name
            );
            colors[color_count] = info;
            color_count += 1;
        } else {
            depth = Some(info);
        }
    }
    let extent = extent?;
    let mut rendering = vk::RenderingInfo::default()
        .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent })
        .layer_count(1)
        .color_attachments(&colors[..color_count]);
    if let Some(depth) = depth.as_ref() {
        rendering = rendering.depth_attachment(depth);
    }
    // SAFETY: recording outside any rendering scope; every view is live and in the layout
    // the pass's barriers established.
    unsafe { raw.cmd_begin_rendering(command_buffer, &rendering) };
    Some(extent)
}
