//! The readback pass: copies an image of the graph (by default `color`) into a persistently
//! mapped buffer imported into the graph (by default `color_readback`), which the host reads
//! once the frame's fence has signalled ([`crate::RenderGraph::wait_idle`]).

use std::sync::Arc;

use ash::vk;

use crate::access::Access;
use crate::context::ExecuteContext;
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::memory::{aspect_of, ReadbackBuffer};
use crate::pass::Pass;
use crate::passes::{COLOR, COLOR_READBACK};
use crate::registry::{BufferHandle, ImageHandle, Registry};

/// Bytes per texel of the formats the readback pass copies.
pub const READBACK_TEXEL_BYTES: u64 = 4;

/// A readback buffer for a `width` x `height` image of 4-byte texels (RGBA8, R32, D32),
/// rows tightly packed. Returns an error for a zero extent.
pub fn image_readback_buffer(device: &Arc<GpuDevice>, name: &str, extent: vk::Extent2D) -> Result<ReadbackBuffer> {
    if extent.width == 0 || extent.height == 0 {
        return Err(GraphError::InvalidDescription {
            resource: name.to_owned(),
            reason: "a readback of a zero-size image holds nothing; give the graph a non-zero extent",
        });
    }
    let bytes = u64::from(extent.width) * u64::from(extent.height) * READBACK_TEXEL_BYTES;
    ReadbackBuffer::new(device, name, bytes)
}

/// Whether the readback pass can copy images of `format`.
pub fn has_four_byte_texels(format: vk::Format) -> bool {
    matches!(
        format,
        vk::Format::R8G8B8A8_UNORM
            | vk::Format::R8G8B8A8_SRGB
            | vk::Format::B8G8R8A8_UNORM
            | vk::Format::B8G8R8A8_SRGB
            | vk::Format::R32_UINT
            | vk::Format::R32_SINT
            | vk::Format::R32_SFLOAT
            | vk::Format::D32_SFLOAT
    )
}

/// Copies one image with 4-byte texels into an imported host-visible buffer, rows tightly
/// packed (row `y` starts at `y * width * 4`).
pub struct ReadbackPass {
    name: String,
    source_name: String,
    target_name: String,
    source: Option<ImageHandle>,
    target: Option<BufferHandle>,
}

impl ReadbackPass {
    /// Copies `color` into the buffer imported as `color_readback`.
    pub fn new() -> ReadbackPass {
        ReadbackPass::with_names(COLOR, COLOR_READBACK)
    }

    /// Copies the image `source` into the buffer imported as `target`.
    pub fn with_names(source: &str, target: &str) -> ReadbackPass {
        ReadbackPass {
            name: format!("readback {source}"),
            source_name: source.to_owned(),
            target_name: target.to_owned(),
            source: None,
            target: None,
        }
    }
}

impl Default for ReadbackPass {
    fn default() -> Self {
        ReadbackPass::new()
    }
}

impl Pass for ReadbackPass {
    fn name(&self) -> &str {
        &self.name
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        let source = registry.image(&self.source_name);
        self.source = Some(registry.access_image(source, Access::TransferRead));
        let target = registry.buffer(&self.target_name);
        self.target = Some(registry.access_buffer(target, Access::TransferWrite));
    }

    fn execute(&mut self, context: &mut ExecuteContext<'_>) {
        let source_handle = self.source.expect("register runs before execute");
        let source = context.image(source_handle);
        let target = context.buffer(self.target.expect("register runs before execute"));
        if !has_four_byte_texels(source.format) {
            context.fail(GraphError::InvalidDescription {
                resource: self.source_name.clone(),
                reason: "the readback pass copies images of 4-byte texels only",
            });
        }
        let needed = u64::from(source.extent.width) * u64::from(source.extent.height) * READBACK_TEXEL_BYTES;
        if target.size < needed {
            context.fail(GraphError::InvalidDescription {
                resource: self.target_name.clone(),
                reason: "the readback buffer is smaller than the image it receives",
            });
        }
        if context.failed() {
            return;
        }
        let region = vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: aspect_of(source.format),
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 1,
            })
            .image_extent(vk::Extent3D { width: source.extent.width, height: source.extent.height, depth: 1 });
        let layout = context.image_layout(source_handle);
        // SAFETY: recording outside a rendering scope; the graph put the image in
        // TRANSFER_SRC_OPTIMAL and made the buffer writable by transfers (both declared); the
        // copy fits in the buffer (checked above).
        unsafe {
            context.device().cmd_copy_image_to_buffer(
                context.command_buffer(),
                source.image,
                layout,
                target.buffer,
                &[region],
            )
        };
    }
}
