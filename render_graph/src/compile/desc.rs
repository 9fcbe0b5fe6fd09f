//! The descriptions of the images and buffers the graph creates (sizes absolute or relative
//! to the output extent, mip counts, how attachments start); the handles passes name them by
//! are in `handles.rs`.

use ash::vk;

/// Size of an image: fixed, or a fraction of the graph's output extent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ImageSize {
    /// Fixed width and height in texels.
    Absolute {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
    },
    /// Output extent times the scale (rounded up, at least one texel; a zero output extent
    /// does not resolve).
    Relative {
        /// Horizontal scale.
        scale_x: f32,
        /// Vertical scale.
        scale_y: f32,
    },
}

impl ImageSize {
    /// The size of the output itself.
    pub const OUTPUT: ImageSize = ImageSize::Relative { scale_x: 1.0, scale_y: 1.0 };

    /// Resolves the size against the output extent; `None` for zero or non-finite results.
    pub fn resolve(self, output: vk::Extent2D) -> Option<vk::Extent2D> {
        let extent = match self {
            ImageSize::Absolute { width, height } => vk::Extent2D { width, height },
            ImageSize::Relative { scale_x, scale_y } => {
                let scaled = scale_x.is_finite() && scale_y.is_finite() && scale_x > 0.0 && scale_y > 0.0;
                if !scaled || output.width == 0 || output.height == 0 {
                    return None;
                }
                let scale = |size: u32, factor: f32| ((size as f64 * factor as f64).ceil() as u32).max(1);
                vk::Extent2D { width: scale(output.width, scale_x), height: scale(output.height, scale_y) }
            }
        };
        (extent.width > 0 && extent.height > 0).then_some(extent)
    }
}

/// Description of an image the graph creates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImageDesc {
    /// Texel format.
    pub format: vk::Format,
    /// Absolute or output-relative size.
    pub size: ImageSize,
    /// Mip levels (at least 1), or [`ImageDesc::FULL_MIP_CHAIN`].
    pub mip_levels: u32,
}

impl ImageDesc {
    /// A one-mip image.
    pub fn new(format: vk::Format, size: ImageSize) -> ImageDesc {
        ImageDesc { format, size, mip_levels: 1 }
    }

    /// `mip_levels` meaning every mip down to 1x1 of the size the image resolves to
    /// (`floor(log2(max(width, height))) + 1`), so an output-relative pyramid follows the
    /// output extent.
    pub const FULL_MIP_CHAIN: u32 = u32::MAX;

    /// The same image with `mip_levels` mips ([`ImageDesc::FULL_MIP_CHAIN`] for all).
    pub fn with_mips(self, mip_levels: u32) -> ImageDesc {
        ImageDesc { mip_levels, ..self }
    }

    /// The mip count for an image of `extent`.
    pub fn resolve_mips(&self, extent: vk::Extent2D) -> u32 {
        if self.mip_levels == Self::FULL_MIP_CHAIN {
            crate::memory::full_mip_chain(extent)
        } else {
            self.mip_levels
        }
    }
}

/// Description of a buffer the graph creates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferDesc {
    /// Size in bytes.
    pub size: u64,
}

/// How a color or depth attachment starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AttachmentLoad {
    /// Keep the previous contents.
    Load,
    /// Clear to this color.
    ClearColor([f32; 4]),
    /// Clear to this depth.
    ClearDepth(f32),
    /// Contents are undefined at the start.
    DontCare,
}

/// Whether a resource is an image or a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    /// An image.
    Image,
    /// A buffer.
    Buffer,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_sizes_round_up_and_reject_nonsense() {
        let output = vk::Extent2D { width: 101, height: 51 };
        let half = ImageSize::Relative { scale_x: 0.5, scale_y: 0.5 };
        assert_eq!(half.resolve(output), Some(vk::Extent2D { width: 51, height: 26 }));
        assert_eq!(ImageSize::Relative { scale_x: f32::NAN, scale_y: 1.0 }.resolve(output), None);
        assert_eq!(ImageSize::Absolute { width: 0, height: 4 }.resolve(output), None);
        assert_eq!(ImageSize::OUTPUT.resolve(vk::Extent2D { width: 0, height: 0 }), None, "never 1x1 from nothing");
    }
}
