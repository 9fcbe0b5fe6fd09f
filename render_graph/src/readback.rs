//! Readback passes: copy an image ([`ReadbackPass`]) or a buffer ([`BufferReadbackPass`]) of
//! the graph into a persistently mapped buffer imported into the graph, which the host reads
//! once the frame's fence has signalled ([`crate::RenderGraph::wait_idle`], or
//! [`crate::RenderGraph::frame_complete`] for a ring of regions read without waiting).

use std::sync::{Arc, Mutex, PoisonError};

use ash::vk;

use crate::access::Access;
use crate::compile::{BufferRead, BufferWrite, ImageRead, Registry};
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::execute::{ExecuteContext, TypedPass};
use crate::memory::{aspect_of, ReadbackBuffer};
use crate::resources::ResolvedImage;

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

/// Records the copy of mip 0 of `image` (the pass's `source`) to the start of `buffer`,
/// rows tightly packed (row `y` starts at `y * width * texel bytes`).
///
/// # Safety
/// The pass is recording outside a rendering scope and declared `source` as
/// [`Access::TransferRead`]; `buffer` is live, writable by transfers and large enough.
pub unsafe fn record_image_to_buffer(
    context: &ExecuteContext<'_>,
    source: ImageRead,
    image: &ResolvedImage,
    buffer: vk::Buffer,
) {
    let region = vk::BufferImageCopy::default()
        .image_subresource(vk::ImageSubresourceLayers {
            aspect_mask: aspect_of(image.format),
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        })
        .image_extent(vk::Extent3D { width: image.extent.width, height: image.extent.height, depth: 1 });
    let layout = context.image_layout(source);
    // SAFETY: as this function's contract: the layout is the declared transfer source's.
    unsafe {
        context.device().cmd_copy_image_to_buffer(context.command_buffer(), image.image, layout, buffer, &[region])
    };
}

/// Copies one image with 4-byte texels to the host, rows tightly packed (row `y` starts at
/// `y * width * 4`): into a buffer imported into the graph ([`ReadbackPass::with_names`]), or
/// into a buffer the pass owns and sizes to the image every frame ([`ReadbackPass::following`]),
/// which is the one to use for an image that changes size with the window.
///
/// Add it with [`RenderGraph::add_typed_pass`](crate::RenderGraph::add_typed_pass).
pub struct ReadbackPass {
    name: String,
    source_name: String,
    target: Target,
}

/// Where a [`ReadbackPass`] copies to.
enum Target {
    /// A buffer imported into the graph under this name.
    Imported(String),
    /// The pass's own buffer, shared with an [`ImageReadback`].
    Own(Arc<Mutex<FollowingCopy>>),
}

/// A readback pass's name: `readback SOURCE` into the conventional `SOURCE_readback` (or
/// `SOURCE readback`), `readback SOURCE to TARGET` otherwise, so two readbacks of one resource
/// have two names.
fn readback_name(prefix: &str, source: &str, target: &str) -> String {
    let conventional = target.strip_prefix(source).is_some_and(|rest| rest == "_readback" || rest == " readback");
    if conventional {
        format!("{prefix} {source}")
    } else {
        format!("{prefix} {source} to {target}")
    }
}

impl ReadbackPass {
    /// Copies the image `source` into the buffer imported as `target`. The pass is named
    /// `readback SOURCE` when `target` is `SOURCE_readback` (or `SOURCE readback`), else
    /// `readback SOURCE to TARGET`: reading one image into two buffers makes two passes of
    /// distinct names. A buffer smaller than the image (the image grew with the window) is a
    /// frame error naming the buffer; [`ReadbackPass::following`] has no such limit.
    pub fn with_names(source: &str, target: &str) -> ReadbackPass {
        ReadbackPass {
            name: readback_name("readback", source, target),
            source_name: source.to_owned(),
            target: Target::Imported(target.to_owned()),
        }
    }

    /// Copies the image `source` every frame into a host buffer the pass owns and sizes to the
    /// image as it is that frame, so a readback of an output-sized image follows every resize.
    /// The pass is named `readback SOURCE for the host`; the host reads the copy through the
    /// returned [`ImageReadback`].
    ///
    /// ```no_run
    /// # fn demo(graph: &mut render_graph::RenderGraph) -> render_graph::Result<()> {
    /// use render_graph::readback::ReadbackPass;
    /// let (pass, color) = ReadbackPass::following("color");
    /// graph.add_typed_pass(pass);
    /// graph.execute_frame()?;
    /// graph.wait_idle()?;
    /// let (extent, texels) = color.read()?;
    /// assert_eq!(texels.len(), (extent.width * extent.height * 4) as usize);
    /// # Ok(()) }
    /// ```
    pub fn following(source: &str) -> (ReadbackPass, ImageReadback) {
        let copy = Arc::new(Mutex::new(FollowingCopy::default()));
        let pass = ReadbackPass {
            name: format!("readback {source} for the host"),
            source_name: source.to_owned(),
            target: Target::Own(Arc::clone(&copy)),
        };
        (pass, ImageReadback { name: source.to_owned(), copy })
    }
}

impl TypedPass for ReadbackPass {
    /// The image, and the imported buffer it is copied into (none for the pass's own).
    type Handles = (ImageRead, Option<BufferWrite>);

    fn name(&self) -> &str {
        &self.name
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let source = registry.image(&self.source_name);
        let source = registry.read_image(source, Access::TransferRead);
        match &self.target {
            Target::Imported(name) => {
                let target = registry.buffer(name);
                (source, Some(registry.write_buffer(target, Access::TransferWrite)))
            }
            Target::Own(_) => {
                // Nothing in the graph reads the pass's own buffer: the host does.
                registry.side_effect();
                (source, None)
            }
        }
    }

    fn execute(&mut self, (source_handle, imported): &Self::Handles, context: &mut ExecuteContext<'_>) {
        let source = context.image(*source_handle);
        if !has_four_byte_texels(source.format) {
            context.fail(GraphError::InvalidDescription {
                resource: self.source_name.clone(),
                reason: "the readback pass copies images of 4-byte texels only",
            });
            return;
        }
        match (&self.target, imported) {
            (Target::Imported(name), Some(target)) => {
                let target = context.buffer(target);
                let needed = u64::from(source.extent.width) * u64::from(source.extent.height) * READBACK_TEXEL_BYTES;
                if target.size < needed {
                    context.fail(GraphError::InvalidDescription {
                        resource: name.clone(),
                        reason: "the readback buffer is smaller than the image it receives \
                                 (ReadbackPass::following sizes its buffer to the image)",
                    });
                }
                if context.failed() {
                    return;
                }
                // SAFETY: the graph put the image in a transfer-source layout and made the
                // buffer writable by transfers (both declared); the copy fits (checked above).
                unsafe { record_image_to_buffer(context, *source_handle, &source, target.buffer) };
            }
            (Target::Own(copy), _) => {
                let mut copy = copy.lock().unwrap_or_else(PoisonError::into_inner);
                if copy.host.record(context, &self.name, *source_handle, &source) {
                    (copy.extent, copy.format) = (source.extent, source.format);
                }
            }
            // `register` declared the imported target.
            (Target::Imported(_), None) => {}
        }
    }
}

/// The host's side of a [`ReadbackPass::following`]: the image as the last frame that ran
/// the pass copied it, at that frame's size.
#[derive(Clone)]
pub struct ImageReadback {
    name: String,
    copy: Arc<Mutex<FollowingCopy>>,
}

/// What a following readback pass copied last.
#[derive(Default)]
struct FollowingCopy {
    host: HostImageCopy,
    extent: vk::Extent2D,
    format: vk::Format,
}

/// A host buffer a pass owns (not the graph's) and grows to hold each image it copies: what
/// [`ReadbackPass::following`] and screenshot passes copy into.
#[derive(Default)]
pub struct HostImageCopy {
    buffer: Option<ReadbackBuffer>,
    /// Outgrown buffers that frames still in flight may write.
    retired: Vec<ReadbackBuffer>,
}

impl HostImageCopy {
    /// Records the copy of mip 0 of `source` (resolved as `image`, 4-byte texels, declared
    /// [`Access::TransferRead`] by the recording pass, outside a rendering scope) into the
    /// buffer, first growing it (a new buffer named `name`) when the image does not fit, and
    /// makes the copy visible to the host ([`ExecuteContext::finish_host_copy`]). An outgrown
    /// buffer is kept until the frames that wrote it have finished. Returns whether the copy
    /// was recorded (a failed allocation fails the frame).
    pub fn record(
        &mut self,
        context: &mut ExecuteContext<'_>,
        name: &str,
        source: ImageRead,
        image: &ResolvedImage,
    ) -> bool {
        self.retired.retain(|buffer| buffer.buffer().pending_gpu_write().is_some());
        let needed = u64::from(image.extent.width) * u64::from(image.extent.height) * READBACK_TEXEL_BYTES;
        if self.buffer.as_ref().is_none_or(|buffer| buffer.buffer().size() < needed) {
            match ReadbackBuffer::new(context.gpu(), name, needed) {
                Ok(buffer) => {
                    if let Some(outgrown) = self.buffer.replace(buffer) {
                        self.retired.push(outgrown);
                    }
                }
                Err(error) => {
                    context.fail(error);
                    return false;
                }
            }
        }
        if context.failed() {
            return false;
        }
        let Some(buffer) = self.buffer.as_ref() else { return false };
        // SAFETY: as this function's contract: the image is in its declared transfer-source
        // layout; the buffer is this copy's own, writable by transfers and holds the image.
        unsafe { record_image_to_buffer(context, source, image, buffer.buffer().raw()) };
        context.finish_host_copy(buffer);
        true
    }

    /// The buffer the last copy went to, if any was made.
    pub fn buffer(&self) -> Option<&ReadbackBuffer> {
        self.buffer.as_ref()
    }
}

impl ImageReadback {
    /// The size and format of the last copy (zero before the first).
    pub fn extent(&self) -> (vk::Extent2D, vk::Format) {
        let copy = self.copy.lock().unwrap_or_else(PoisonError::into_inner);
        (copy.extent, copy.format)
    }

    /// The last copy: its size and its texels, `width * height * 4` bytes, rows tightly packed.
    /// Returns [`GraphError::ReadbackPending`] while the frame that copied it may still run
    /// (wait for it first, as for [`ReadbackBuffer::read`]) and an error naming the image
    /// before any frame has copied it.
    pub fn read(&self) -> Result<(vk::Extent2D, Vec<u8>)> {
        let copy = self.copy.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(buffer) = copy.host.buffer() else {
            return Err(GraphError::InvalidDescription {
                resource: self.name.clone(),
                reason: "no frame has copied this image yet",
            });
        };
        let bytes = copy.extent.width as usize * copy.extent.height as usize * READBACK_TEXEL_BYTES as usize;
        let texels = buffer.read()?;
        Ok((copy.extent, texels[..bytes.min(texels.len())].to_vec()))
    }
}

/// Copies a graph buffer into an imported host-visible buffer: at its start
/// ([`BufferReadbackPass::new`]), or into region `frame % regions` of a ring
/// ([`BufferReadbackPass::ring`]), so the host reads older frames' regions without waiting.
/// Add it with [`RenderGraph::add_typed_pass`](crate::RenderGraph::add_typed_pass).
pub struct BufferReadbackPass {
    name: String,
    source_name: String,
    target_name: String,
    /// The ring's region size in bytes and region count, or `None` for a copy to the start.
    ring: Option<(u64, u64)>,
}

impl BufferReadbackPass {
    /// Copies `source` into the buffer imported as `target` (as much as fits).
    pub fn new(source: &str, target: &str) -> BufferReadbackPass {
        BufferReadbackPass {
            name: readback_name("readback", source, target),
            source_name: source.to_owned(),
            target_name: target.to_owned(),
            ring: None,
        }
    }

    /// Copies `source` (up to `region` bytes) into region `frame % regions` of the ring
    /// imported as `target`; a ring smaller than its regions fails the frame.
    pub fn ring(source: &str, target: &str, region: u64, regions: u64) -> BufferReadbackPass {
        BufferReadbackPass {
            name: readback_name("ring readback", source, target),
            ring: Some((region, regions.max(1))),
            ..BufferReadbackPass::new(source, target)
        }
    }
}

impl TypedPass for BufferReadbackPass {
    /// The source, and the imported buffer it is copied into.
    type Handles = (BufferRead, BufferWrite);

    fn name(&self) -> &str {
        &self.name
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let source = registry.buffer(&self.source_name);
        let target = registry.buffer(&self.target_name);
        (registry.read_buffer(source, Access::TransferRead), registry.write_buffer(target, Access::TransferWrite))
    }

    fn execute(&mut self, (source, target): &Self::Handles, context: &mut ExecuteContext<'_>) {
        let (source, target) = (context.buffer(*source), context.buffer(target));
        let (offset, size) = match self.ring {
            None => (0, source.size.min(target.size)),
            Some((region, regions)) => (context.frame_index() % regions * region, region.min(source.size)),
        };
        if offset + size > target.size {
            context.fail(GraphError::InvalidDescription {
                resource: self.target_name.clone(),
                reason: "the readback ring is smaller than its regions",
            });
            return;
        }
        let region = vk::BufferCopy { src_offset: 0, dst_offset: offset, size };
        // SAFETY: recording outside rendering; the graph made the source readable and the
        // target writable by transfers (both declared); the copy fits (checked above).
        unsafe { context.device().cmd_copy_buffer(context.command_buffer(), source.buffer, target.buffer, &[region]) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_readbacks_of_one_resource_have_distinct_names() {
        assert_eq!(ReadbackPass::with_names("color", "color_readback").name(), "readback color");
        assert_eq!(ReadbackPass::with_names("color", "color readback").name(), "readback color");
        let (first, second) =
            (ReadbackPass::with_names("color", "screenshot"), ReadbackPass::with_names("color", "thumbnail"));
        assert_eq!((first.name(), second.name()), ("readback color to screenshot", "readback color to thumbnail"));
        assert_eq!(BufferReadbackPass::new("bits", "bits_readback").name(), "readback bits");
        assert_eq!(BufferReadbackPass::ring("bits", "bits ring", 8, 3).name(), "ring readback bits to bits ring");
        assert_eq!(
            ReadbackPass::with_names("colorful", "color_readback").name(),
            "readback colorful to color_readback"
        );
    }
}
