//! The physical resource behind a graph resource in one frame, as passes and the recording
//! helpers see it: raw handles with their format, size and views.

use ash::vk;

use crate::memory::{GpuBuffer, GpuImage, MAX_MIP_LEVELS};

/// An image as a pass sees it this frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolvedImage {
    /// The image.
    pub image: vk::Image,
    /// A view of all its mips.
    pub view: vk::ImageView,
    /// Its format.
    pub format: vk::Format,
    /// Its size.
    pub extent: vk::Extent2D,
    /// Its mip count.
    pub mip_levels: u32,
    /// A view of each mip (`[..mip_levels]`, the rest null); for a one-mip image the only
    /// entry is `view`.
    pub mip_views: [vk::ImageView; MAX_MIP_LEVELS as usize],
}

impl ResolvedImage {
    /// The size of mip `level` (each level half the previous one, rounded down, at least 1).
    pub fn mip_extent(&self, level: u32) -> vk::Extent2D {
        vk::Extent2D { width: (self.extent.width >> level).max(1), height: (self.extent.height >> level).max(1) }
    }
}

/// A buffer as a pass sees it this frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolvedBuffer {
    /// The buffer.
    pub buffer: vk::Buffer,
    /// Its size in bytes.
    pub size: u64,
}

/// The physical resource behind a graph resource this frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resolved {
    None,
    Image(ResolvedImage),
    Buffer(ResolvedBuffer),
}

impl Resolved {
    /// An image of the graph this frame.
    pub(crate) fn image(image: &GpuImage) -> Resolved {
        let info = image.info();
        Resolved::Image(ResolvedImage {
            image: image.raw(),
            view: image.view(),
            format: info.format,
            extent: info.extent,
            mip_levels: info.mip_levels,
            mip_views: *image.mip_views(),
        })
    }

    /// A buffer of the graph this frame.
    pub(crate) fn buffer(buffer: &GpuBuffer) -> Resolved {
        Resolved::Buffer(ResolvedBuffer { buffer: buffer.raw(), size: buffer.size() })
    }
}
