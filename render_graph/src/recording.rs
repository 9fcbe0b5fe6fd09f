//! Recording helpers of the executor: barrier batches, the first frame's clears of last
//! frame's versions, and the dynamic-rendering scope of passes with attachments.

use ash::vk;

use crate::barriers::SyncState;
use crate::context::Resolved;
use crate::executor::Executor;
use crate::graph::{Compiled, EntrySource};
use crate::memory::full_range;
use crate::registry::{AttachmentLoad, PassDecl};

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

/// Adds one barrier to the scratch lists; skips barriers with nothing to wait for and no
/// layout to change.
pub(crate) fn push_barrier(
    executor: &mut Executor,
    resolved: Resolved,
    source: SyncState,
    dst_stages: vk::PipelineStageFlags2,
    dst_access: vk::AccessFlags2,
    new_layout: vk::ImageLayout,
    aliased_buffer: bool,
) -> bool {
    match resolved {
        Resolved::Image(image) => {
            let same_layout = source.layout == new_layout && source.layout != vk::ImageLayout::UNDEFINED;
            if source.stages.is_empty() && same_layout {
                return false;
            }
            executor.image_barriers.push(
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
                    .subresource_range(full_range(image.format, image.mip_levels)),
            );
            true
        }
        Resolved::Buffer(buffer) => {
            if source.stages.is_empty() {
                return false;
            }
            if aliased_buffer {
                // The previous occupant is another buffer: a global barrier covers the memory.
                executor.memory_barriers.push(
                    vk::MemoryBarrier2::default()
                        .src_stage_mask(source.stages)
                        .src_access_mask(source.access)
                        .dst_stage_mask(dst_stages)
                        .dst_access_mask(dst_access),
                );
            } else {
                executor.buffer_barriers.push(
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

pub(crate) fn flush_barriers(device: &ash::Device, command_buffer: vk::CommandBuffer, executor: &mut Executor) {
    if executor.image_barriers.is_empty() && executor.buffer_barriers.is_empty() && executor.memory_barriers.is_empty()
    {
        return;
    }
    let dependency = vk::DependencyInfo::default()
        .memory_barriers(&executor.memory_barriers)
        .buffer_memory_barriers(&executor.buffer_barriers)
        .image_memory_barriers(&executor.image_barriers);
    // SAFETY: the command buffer is recording; every barrier names a live resource.
    unsafe { device.cmd_pipeline_barrier2(command_buffer, &dependency) };
    executor.image_barriers.clear();
    executor.buffer_barriers.clear();
    executor.memory_barriers.clear();
}

/// State a history resource is in after the first frame's clear.
pub(crate) fn cleared_state(is_image: bool) -> SyncState {
    SyncState {
        stages: vk::PipelineStageFlags2::ALL_TRANSFER,
        access: vk::AccessFlags2::TRANSFER_WRITE,
        layout: if is_image { vk::ImageLayout::TRANSFER_DST_OPTIMAL } else { vk::ImageLayout::UNDEFINED },
    }
}

/// Clears last frame's versions of double-buffered resources in the first frame.
pub(crate) fn record_history_clears(
    raw: &ash::Device,
    command_buffer: vk::CommandBuffer,
    compiled: &Compiled,
    resolved: &[Resolved],
    executor: &mut Executor,
) {
    let to_clear = |resource: usize| {
        matches!(compiled.entry[resource], EntrySource::HistoryPrevious(_))
            && compiled.graph.resources[resource].lifetime.is_some()
    };
    for resource in (0..resolved.len()).filter(|&resource| to_clear(resource)) {
        push_barrier(
            executor,
            resolved[resource],
            SyncState::NONE,
            vk::PipelineStageFlags2::ALL_TRANSFER,
            vk::AccessFlags2::TRANSFER_WRITE,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            false,
        );
    }
    flush_barriers(raw, command_buffer, executor);
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
