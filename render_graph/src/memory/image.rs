//! Images: a 2D image (or image array) with a view of all its mips, a view of each mip,
//! views of mip ranges made on first use, and its memory; the format and mip-chain helpers
//! every image user shares.

use std::sync::{Arc, Mutex};

use ash::vk;
use gpu_allocator::MemoryLocation;

use super::block::{Backing, MemoryBlock};
use crate::access::MipRange;
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};

/// What an image is created with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageInfo {
    /// Texel format.
    pub format: vk::Format,
    /// Width and height in texels.
    pub extent: vk::Extent2D,
    /// Number of mip levels (at least 1).
    pub mip_levels: u32,
    /// How the image is used.
    pub usage: vk::ImageUsageFlags,
}

/// The aspect of a format: depth for depth formats, color otherwise.
pub fn aspect_of(format: vk::Format) -> vk::ImageAspectFlags {
    match format {
        vk::Format::D16_UNORM | vk::Format::D32_SFLOAT | vk::Format::X8_D24_UNORM_PACK32 => vk::ImageAspectFlags::DEPTH,
        vk::Format::D16_UNORM_S8_UINT | vk::Format::D24_UNORM_S8_UINT | vk::Format::D32_SFLOAT_S8_UINT => {
            vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL
        }
        vk::Format::S8_UINT => vk::ImageAspectFlags::STENCIL,
        _ => vk::ImageAspectFlags::COLOR,
    }
}

/// Most mip levels an image may have (a full chain of a 32768-texel image); each mip gets a
/// view of its own.
pub const MAX_MIP_LEVELS: u32 = 16;

/// Most layers of an image array: every Vulkan device supports at least this many.
pub const MAX_ARRAY_LAYERS: u32 = 256;

/// A 2D image with a view of all its mips, a view of each mip, and its memory.
pub struct GpuImage {
    device: Arc<GpuDevice>,
    image: vk::Image,
    view: vk::ImageView,
    mip_views: Box<[vk::ImageView; MAX_MIP_LEVELS as usize]>,
    /// Views of mip ranges asked for by [`GpuImage::range_view`], made on first use.
    range_views: Mutex<Vec<(MipRange, vk::ImageView)>>,
    info: ImageInfo,
    /// Array layers; an image made by [`GpuImage::new_array`] has views of type 2D array.
    layers: u32,
    backing: Option<Backing>,
    /// The image handle is destroyed with this value (false for a swapchain's images).
    owned: bool,
}

impl GpuImage {
    /// Creates an image with its own device-local allocation.
    pub fn new(device: &Arc<GpuDevice>, name: &str, info: ImageInfo) -> Result<GpuImage> {
        let mut image = GpuImage::new_unbound(device, name, info)?;
        let block = MemoryBlock::new(device, name, image.requirements(), MemoryLocation::GpuOnly, false)?;
        image.bind(Backing::Own(block), name)?;
        Ok(image)
    }

    /// Creates an array of `layers` images with its own device-local allocation: every view
    /// is a 2D array (`sampler2DArray` in GLSL), even of one layer, and barriers cover every
    /// layer. Textures of one size live in one such image, a layer each.
    pub fn new_array(device: &Arc<GpuDevice>, name: &str, info: ImageInfo, layers: u32) -> Result<GpuImage> {
        if layers == 0 || layers > MAX_ARRAY_LAYERS {
            return Err(GraphError::InvalidDescription {
                resource: name.into(),
                reason: "an image array has 1 to MAX_ARRAY_LAYERS (256) layers",
            });
        }
        let mut image = GpuImage::create(device, name, info, layers)?;
        let block = MemoryBlock::new(device, name, image.requirements(), MemoryLocation::GpuOnly, false)?;
        image.bind(Backing::Own(block), name)?;
        Ok(image)
    }

    /// Creates an image without memory; bind it with [`GpuImage::bind_shared`].
    pub fn new_unbound(device: &Arc<GpuDevice>, name: &str, info: ImageInfo) -> Result<GpuImage> {
        GpuImage::create(device, name, info, 0)
    }

    /// `layers` 0: a plain 2D image; otherwise an array of that many.
    fn create(device: &Arc<GpuDevice>, name: &str, info: ImageInfo, layers: u32) -> Result<GpuImage> {
        if info.extent.width == 0 || info.extent.height == 0 || info.mip_levels == 0 {
            return Err(GraphError::InvalidDescription {
                resource: name.into(),
                reason: "image extent or mip count is zero",
            });
        }
        if info.mip_levels > full_mip_chain(info.extent) {
            return Err(GraphError::InvalidDescription {
                resource: name.into(),
                reason: "more mips than the full chain of the image's extent",
            });
        }
        let create = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(info.format)
            .extent(vk::Extent3D { width: info.extent.width, height: info.extent.height, depth: 1 })
            .mip_levels(info.mip_levels)
            .array_layers(layers.max(1))
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(info.usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: valid create info on a live device.
        let image = unsafe { device.raw().create_image(&create, None) }.map_err(GraphError::vulkan("vkCreateImage"))?;
        device.set_name(image, name);
        Ok(GpuImage {
            device: Arc::clone(device),
            image,
            view: vk::ImageView::null(),
            mip_views: Box::new([vk::ImageView::null(); MAX_MIP_LEVELS as usize]),
            range_views: Mutex::new(Vec::new()),
            info,
            layers,
            backing: None,
            owned: true,
        })
    }

    /// Wraps an image owned by someone else (a swapchain's image) with a view of its one mip;
    /// dropping the wrapper destroys the view, not the image, which must outlive it.
    pub fn borrowed(device: &Arc<GpuDevice>, name: &str, image: vk::Image, info: ImageInfo) -> Result<GpuImage> {
        if info.extent.width == 0 || info.extent.height == 0 || info.mip_levels != 1 {
            return Err(GraphError::InvalidDescription {
                resource: name.into(),
                reason: "a borrowed image has one mip and a non-zero extent",
            });
        }
        let view_info = vk::ImageViewCreateInfo::default()
            .image(image)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(info.format)
            .subresource_range(full_range(info.format, 1));
        // SAFETY: the caller's image is live and has `info`'s format; the create info is valid.
        let view = unsafe { device.raw().create_image_view(&view_info, None) }
            .map_err(GraphError::vulkan("vkCreateImageView"))?;
        device.set_name(view, name);
        let mut mip_views = Box::new([vk::ImageView::null(); MAX_MIP_LEVELS as usize]);
        mip_views[0] = view;
        Ok(GpuImage {
            device: Arc::clone(device),
            image,
            view,
            mip_views,
            range_views: Mutex::new(Vec::new()),
            info,
            layers: 0,
            backing: None,
            owned: false,
        })
    }

    /// Memory requirements of the unbound image.
    pub fn requirements(&self) -> vk::MemoryRequirements {
        // SAFETY: the image is live.
        unsafe { self.device.raw().get_image_memory_requirements(self.image) }
    }

    /// Binds the image at the start of a block shared with other (aliased) images and creates
    /// its view.
    pub fn bind_shared(&mut self, block: &Arc<MemoryBlock>, name: &str) -> Result<()> {
        self.bind(Backing::Shared(Arc::clone(block)), name)
    }

    fn bind(&mut self, backing: Backing, name: &str) -> Result<()> {
        let (memory, offset) = backing.block().memory_and_offset();
        // SAFETY: the image is unbound; the block was sized and aligned from its requirements
        // and outlives the image through `backing`.
        unsafe { self.device.raw().bind_image_memory(self.image, memory, offset) }
            .map_err(GraphError::vulkan("vkBindImageMemory"))?;
        self.backing = Some(backing);
        let view_info = vk::ImageViewCreateInfo::default()
            .image(self.image)
            .view_type(self.view_type())
            .format(self.info.format)
            .subresource_range(full_range(self.info.format, self.info.mip_levels));
        // SAFETY: the image is bound to memory; the create info is valid.
        self.view = unsafe { self.device.raw().create_image_view(&view_info, None) }
            .map_err(GraphError::vulkan("vkCreateImageView"))?;
        self.device.set_name(self.view, name);
        if self.info.mip_levels > 1 {
            for level in 0..self.info.mip_levels {
                let range = vk::ImageSubresourceRange {
                    base_mip_level: level,
                    level_count: 1,
                    ..full_range(self.info.format, self.info.mip_levels)
                };
                let view_info = view_info.subresource_range(range);
                // SAFETY: as above; the range lies inside the image's mips.
                let view = unsafe { self.device.raw().create_image_view(&view_info, None) }
                    .map_err(GraphError::vulkan("vkCreateImageView"))?;
                self.device.set_name(view, name);
                self.mip_views[level as usize] = view;
            }
        } else {
            self.mip_views[0] = self.view;
        }
        Ok(())
    }

    /// The Vulkan image.
    pub fn raw(&self) -> vk::Image {
        self.image
    }

    /// A view of all mips.
    pub fn view(&self) -> vk::ImageView {
        self.view
    }

    /// Views of each mip (`[..mip_levels]`; the rest are null). A one-mip image's only entry
    /// is [`GpuImage::view`].
    pub fn mip_views(&self) -> &[vk::ImageView; MAX_MIP_LEVELS as usize] {
        &self.mip_views
    }

    /// What the image was created with.
    pub fn info(&self) -> &ImageInfo {
        &self.info
    }

    /// Its array layers (1 for a plain image).
    pub fn layers(&self) -> u32 {
        self.layers.max(1)
    }

    fn view_type(&self) -> vk::ImageViewType {
        if self.layers > 0 {
            vk::ImageViewType::TYPE_2D_ARRAY
        } else {
            vk::ImageViewType::TYPE_2D
        }
    }

    /// A view of the mips `mips`: [`GpuImage::view`] when they are all of the image's mips,
    /// the level's own view for one level, otherwise a view made on first use, kept and
    /// destroyed with the image (later calls allocate nothing). Mips the image does not have
    /// are an [`GraphError::InvalidDescription`].
    pub fn range_view(&self, mips: MipRange) -> Result<vk::ImageView> {
        let Some((base, count)) = mips.resolve(self.info.mip_levels).filter(|_| mips.fits(self.info.mip_levels)) else {
            return Err(GraphError::InvalidDescription {
                resource: String::from("(image)"),
                reason: "a view of mips the image does not have",
            });
        };
        if count == self.info.mip_levels {
            return Ok(self.view);
        }
        if count == 1 {
            return Ok(self.mip_views[base as usize]);
        }
        let mut views = self.range_views.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = MipRange::new(base, count);
        if let Some(&(_, view)) = views.iter().find(|(range, _)| *range == key) {
            return Ok(view);
        }
        let view_info = vk::ImageViewCreateInfo::default()
            .image(self.image)
            .view_type(self.view_type())
            .format(self.info.format)
            .subresource_range(vk::ImageSubresourceRange {
                base_mip_level: base,
                level_count: count,
                ..full_range(self.info.format, 1)
            });
        // SAFETY: the image is bound to memory (it has views); the range lies inside its mips.
        let view = unsafe { self.device.raw().create_image_view(&view_info, None) }
            .map_err(GraphError::vulkan("vkCreateImageView"))?;
        views.push((key, view));
        Ok(view)
    }
}

impl Drop for GpuImage {
    fn drop(&mut self) {
        // SAFETY: the owner guarantees the GPU no longer uses the image; destroying a null
        // view is allowed.
        unsafe {
            self.device.raw().destroy_image_view(self.view, None);
        }
        if self.info.mip_levels > 1 {
            for &view in self.mip_views.iter() {
                // SAFETY: as above; each view was made for this image (or is null).
                unsafe { self.device.raw().destroy_image_view(view, None) };
            }
        }
        for &(_, view) in self.range_views.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner).iter() {
            // SAFETY: as above; made by `range_view` for this image.
            unsafe { self.device.raw().destroy_image_view(view, None) };
        }
        if self.owned {
            // SAFETY: as above.
            unsafe { self.device.raw().destroy_image(self.image, None) };
        }
    }
}

/// Mip levels of a full chain for `extent`: down to 1x1, each level half the previous one
/// rounded down (Vulkan's rule), so `floor(log2(max(width, height))) + 1`.
pub fn full_mip_chain(extent: vk::Extent2D) -> u32 {
    32 - extent.width.max(extent.height).max(1).leading_zeros()
}

/// The subresource range covering every mip and every layer of an image.
pub fn full_range(format: vk::Format, mip_levels: u32) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: aspect_of(format),
        base_mip_level: 0,
        level_count: mip_levels,
        base_array_layer: 0,
        layer_count: vk::REMAINING_ARRAY_LAYERS,
    }
}
