//! Presenting the graph's frames in a window: a surface made from raw window handles
//! (`ash-window`), a swapchain recreated on resize or when out of date, one acquire
//! semaphore per frame in flight and one render-finished semaphore per swapchain image, and
//! [`BlitToSwapchainPass`], which copies `color` into the acquired image inside the graph.
//!
//! A frame: [`Swapchain::acquire`] (after [`crate::RenderGraph::wait_for_free_slot`], so the
//! slot's acquire semaphore is free), [`crate::RenderGraph::import_swapchain_image`] with
//! the [`AcquiredImage`]'s semaphores, [`crate::RenderGraph::execute_frame`],
//! [`Swapchain::present`]. A zero-size window gives no image (skip the frame); out-of-date
//! and suboptimal swapchains are recreated on the next acquire.

use std::ffi::CStr;
use std::sync::Arc;

use ash::vk;
use raw_window_handle::{RawDisplayHandle, RawWindowHandle};

use crate::access::Access;
use crate::compile::{ImageRead, ImageWrite, Registry};
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::execute::{ExecuteContext, TypedPass, FRAMES_IN_FLIGHT};
use crate::memory::{aspect_of, GpuImage, ImageInfo};

/// Name under which the acquired swapchain image is imported.
pub const SWAPCHAIN: &str = "swapchain";

/// The instance extensions a surface on `display` needs, for
/// [`crate::DeviceConfig::surface_extensions`].
pub fn surface_extensions(display: RawDisplayHandle) -> Result<Vec<&'static CStr>> {
    let names = ash_window::enumerate_required_extensions(display)
        .map_err(GraphError::vulkan("ash_window::enumerate_required_extensions"))?;
    // SAFETY: ash-window returns pointers to its static extension-name constants.
    Ok(names.iter().map(|&name| unsafe { CStr::from_ptr(name) }).collect())
}

/// The swapchain image of one frame.
pub struct AcquiredImage {
    /// Index in the swapchain.
    pub index: u32,
    /// The image, to import as [`SWAPCHAIN`].
    pub image: Arc<GpuImage>,
    /// Signalled when the image may be written.
    pub acquired: vk::Semaphore,
    /// To signal when the frame is done; the present waits for it.
    pub rendered: vk::Semaphore,
}

/// A window surface and its swapchain.
pub struct Swapchain {
    device: Arc<GpuDevice>,
    surface_loader: ash::khr::surface::Instance,
    loader: ash::khr::swapchain::Device,
    surface: vk::SurfaceKHR,
    swapchain: vk::SwapchainKHR,
    images: Vec<Arc<GpuImage>>,
    acquired: [vk::Semaphore; FRAMES_IN_FLIGHT],
    /// One per swapchain image: a present may still wait on it until the image is acquired
    /// again.
    rendered: Vec<vk::Semaphore>,
    format: vk::SurfaceFormatKHR,
    extent: vk::Extent2D,
    wanted_mode: vk::PresentModeKHR,
    present_mode: vk::PresentModeKHR,
    /// The window's size in pixels (used where the surface leaves the extent to us).
    window_extent: vk::Extent2D,
    stale: bool,
}

impl Swapchain {
    /// A surface for the window and a swapchain of `window_extent` presenting with `mode`
    /// (FIFO, with a log line, where the surface lacks it). The device must have been made
    /// with [`surface_extensions`] of the window's display, and its queue must present to
    /// the surface. A zero extent makes no images until [`Swapchain::resize`] gives one.
    pub fn new(
        device: &Arc<GpuDevice>,
        display: RawDisplayHandle,
        window: RawWindowHandle,
        window_extent: vk::Extent2D,
        mode: vk::PresentModeKHR,
    ) -> Result<Swapchain> {
        if !device.presentation() {
            return Err(GraphError::NoSuitableDevice(String::from(
                "the device was made without surface extensions (DeviceConfig::surface_extensions)",
            )));
        }
        // SAFETY: the handles come from a live window that the caller keeps alive for the
        // swapchain's lifetime; the instance has the display's surface extensions.
        let surface = unsafe { ash_window::create_surface(device.entry(), device.instance(), display, window, None) }
            .map_err(GraphError::vulkan("vkCreate*SurfaceKHR"))?;
        let surface_loader = ash::khr::surface::Instance::new(device.entry(), device.instance());
        let loader = ash::khr::swapchain::Device::new(device.instance(), device.raw());
        let mut swapchain = Swapchain {
            device: Arc::clone(device),
            surface_loader,
            loader,
            surface,
            swapchain: vk::SwapchainKHR::null(),
            images: Vec::new(),
            acquired: [vk::Semaphore::null(); FRAMES_IN_FLIGHT],
            rendered: Vec::new(),
            format: vk::SurfaceFormatKHR::default(),
            extent: vk::Extent2D::default(),
            wanted_mode: mode,
            present_mode: vk::PresentModeKHR::FIFO,
            window_extent,
            stale: false,
        };
        // From here on `Drop` cleans up.
        // SAFETY: the queue family and surface belong to this device's instance.
        let supported = unsafe {
            swapchain.surface_loader.get_physical_device_surface_support(
                device.physical(),
                device.queue_family(),
                surface,
            )
        }
        .map_err(GraphError::vulkan("vkGetPhysicalDeviceSurfaceSupportKHR"))?;
        if !supported {
            return Err(GraphError::NoSuitableDevice(String::from("the device's queue cannot present to the window")));
        }
        for semaphore in &mut swapchain.acquired {
            *semaphore = create_semaphore(device)?;
        }
        swapchain.recreate()?;
        Ok(swapchain)
    }

    /// The images' size (zero while the window is minimised).
    pub fn extent(&self) -> vk::Extent2D {
        self.extent
    }

    /// The images' format.
    pub fn format(&self) -> vk::Format {
        self.format.format
    }

    /// The present mode in use.
    pub fn present_mode(&self) -> vk::PresentModeKHR {
        self.present_mode
    }

    /// The window now has `extent` pixels: the swapchain is recreated at the next acquire.
    pub fn resize(&mut self, extent: vk::Extent2D) {
        if extent != self.window_extent {
            self.window_extent = extent;
            self.stale = true;
        }
    }

    /// The image for the frame in slot `slot` (`frame % FRAMES_IN_FLIGHT`; the slot's last
    /// frame must have finished: [`crate::RenderGraph::wait_for_free_slot`]). Recreates a
    /// stale swapchain first (waiting for the device). `None`: nothing to draw into now (a
    /// minimised window, or out of date and recreated: try the next frame).
    pub fn acquire(&mut self, slot: usize) -> Result<Option<AcquiredImage>> {
        if self.stale || self.swapchain == vk::SwapchainKHR::null() {
            self.recreate()?;
        }
        if self.swapchain == vk::SwapchainKHR::null() {
            return Ok(None);
        }
        let semaphore = self.acquired[slot % FRAMES_IN_FLIGHT];
        // SAFETY: the swapchain is live; the semaphore has no pending signal or wait (its
        // last wait belonged to the slot's previous frame, which finished).
        let acquired =
            unsafe { self.loader.acquire_next_image(self.swapchain, u64::MAX, semaphore, vk::Fence::null()) };
        match acquired {
            Ok((index, suboptimal)) => {
                // Suboptimal still acquired the image (and will signal): draw, recreate after.
                self.stale |= suboptimal;
                Ok(Some(AcquiredImage {
                    index,
                    image: Arc::clone(&self.images[index as usize]),
                    acquired: semaphore,
                    rendered: self.rendered[index as usize],
                }))
            }
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                self.stale = true;
                Ok(None)
            }
            Err(result) => Err(GraphError::vulkan("vkAcquireNextImageKHR")(result)),
        }
    }

    /// Presents `image` once its frame's `rendered` semaphore signals. Out of date and
    /// suboptimal mark the swapchain for recreation; they are not errors.
    pub fn present(&mut self, image: &AcquiredImage) -> Result<()> {
        let swapchains = [self.swapchain];
        let indices = [image.index];
        let waits = [image.rendered];
        let info =
            vk::PresentInfoKHR::default().wait_semaphores(&waits).swapchains(&swapchains).image_indices(&indices);
        let queue = {
            runtime::profile_zone!("lock wait: queue (present)");
            self.device.queue()
        };
        runtime::profile_zone!("lock held: queue (present)");
        // SAFETY: the queue lock is held; the image was acquired from this swapchain and its
        // frame, which signals `rendered`, was submitted on this queue.
        match unsafe { self.loader.queue_present(*queue, &info) } {
            Ok(suboptimal) => {
                self.stale |= suboptimal;
                Ok(())
            }
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                self.stale = true;
                Ok(())
            }
            Err(result) => Err(GraphError::vulkan("vkQueuePresentKHR")(result)),
        }
    }

    /// Makes the swapchain for the surface's current size; none while it is zero.
    fn recreate(&mut self) -> Result<()> {
        self.device.wait_idle()?;
        let physical = self.device.physical();
        // SAFETY: the surface belongs to this instance.
        let capabilities =
            unsafe { self.surface_loader.get_physical_device_surface_capabilities(physical, self.surface) }
                .map_err(GraphError::vulkan("vkGetPhysicalDeviceSurfaceCapabilitiesKHR"))?;
        let extent = if capabilities.current_extent.width == u32::MAX {
            vk::Extent2D {
                width: self
                    .window_extent
                    .width
                    .clamp(capabilities.min_image_extent.width, capabilities.max_image_extent.width),
                height: self
                    .window_extent
                    .height
                    .clamp(capabilities.min_image_extent.height, capabilities.max_image_extent.height),
            }
        } else {
            capabilities.current_extent
        };
        self.stale = false;
        if extent.width == 0 || extent.height == 0 {
            // Minimised: keep the old swapchain (if any) unused until a size comes back.
            self.extent = vk::Extent2D::default();
            self.destroy_swapchain();
            return Ok(());
        }
        // SAFETY: as above.
        let formats = unsafe { self.surface_loader.get_physical_device_surface_formats(physical, self.surface) }
            .map_err(GraphError::vulkan("vkGetPhysicalDeviceSurfaceFormatsKHR"))?;
        // UNORM keeps the blit of `color` an exact copy of its bytes.
        let format = formats
            .iter()
            .copied()
            .find(|format| {
                matches!(format.format, vk::Format::B8G8R8A8_UNORM | vk::Format::R8G8B8A8_UNORM)
                    && format.color_space == vk::ColorSpaceKHR::SRGB_NONLINEAR
            })
            .or_else(|| formats.first().copied())
            .ok_or_else(|| GraphError::NoSuitableDevice(String::from("the surface has no formats")))?;
        // SAFETY: as above.
        let modes = unsafe { self.surface_loader.get_physical_device_surface_present_modes(physical, self.surface) }
            .map_err(GraphError::vulkan("vkGetPhysicalDeviceSurfacePresentModesKHR"))?;
        let mode = if modes.contains(&self.wanted_mode) {
            self.wanted_mode
        } else {
            log::info!("present mode {:?} is not supported by the surface; presenting with FIFO", self.wanted_mode);
            self.wanted_mode = vk::PresentModeKHR::FIFO;
            vk::PresentModeKHR::FIFO
        };
        // Colour attachment is always supported (and gives the images views); transfer
        // destination takes the blit, transfer source the screenshot where offered.
        let wanted_usage = vk::ImageUsageFlags::COLOR_ATTACHMENT
            | vk::ImageUsageFlags::TRANSFER_DST
            | vk::ImageUsageFlags::TRANSFER_SRC;
        if !capabilities.supported_usage_flags.contains(vk::ImageUsageFlags::TRANSFER_DST) {
            return Err(GraphError::NoSuitableDevice(String::from("swapchain images cannot be transfer targets")));
        }
        let usage = wanted_usage & capabilities.supported_usage_flags;
        let mut count = capabilities.min_image_count + 1;
        if capabilities.max_image_count > 0 {
            count = count.min(capabilities.max_image_count);
        }
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(self.surface)
            .min_image_count(count)
            .image_format(format.format)
            .image_color_space(format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(usage)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(capabilities.current_transform)
            .composite_alpha(vk::CompositeAlphaFlagsKHR::OPAQUE)
            .present_mode(mode)
            .clipped(true)
            .old_swapchain(self.swapchain);
        // SAFETY: valid create info; the old swapchain (if any) is retired by this call.
        let swapchain =
            unsafe { self.loader.create_swapchain(&info, None) }.map_err(GraphError::vulkan("vkCreateSwapchainKHR"))?;
        self.destroy_swapchain();
        self.swapchain = swapchain;
        self.format = format;
        self.extent = extent;
        self.present_mode = mode;
        // SAFETY: the swapchain was just created.
        let raw_images = unsafe { self.loader.get_swapchain_images(swapchain) }
            .map_err(GraphError::vulkan("vkGetSwapchainImagesKHR"))?;
        let info = ImageInfo { format: format.format, extent, mip_levels: 1, usage };
        for (index, &image) in raw_images.iter().enumerate() {
            self.images.push(Arc::new(GpuImage::borrowed(
                &self.device,
                &format!("swapchain image {index}"),
                image,
                info,
            )?));
        }
        while self.rendered.len() < self.images.len() {
            self.rendered.push(create_semaphore(&self.device)?);
        }
        Ok(())
    }

    /// Destroys the swapchain and its image views (the device is idle).
    fn destroy_swapchain(&mut self) {
        self.images.clear();
        if self.swapchain != vk::SwapchainKHR::null() {
            // SAFETY: the device is idle and the images' views were destroyed above (the
            // graph's imports hold clones only while a frame records).
            unsafe { self.loader.destroy_swapchain(self.swapchain, None) };
            self.swapchain = vk::SwapchainKHR::null();
        }
    }
}

impl Drop for Swapchain {
    fn drop(&mut self) {
        let _ = self.device.wait_idle();
        self.destroy_swapchain();
        for &semaphore in self.acquired.iter().chain(&self.rendered) {
            // SAFETY: the device is idle; destroying a null handle is allowed.
            unsafe { self.device.raw().destroy_semaphore(semaphore, None) };
        }
        // SAFETY: the swapchain made from the surface is gone.
        unsafe { self.surface_loader.destroy_surface(self.surface, None) };
    }
}

fn create_semaphore(device: &GpuDevice) -> Result<vk::Semaphore> {
    // SAFETY: valid create info on a live device.
    unsafe { device.raw().create_semaphore(&vk::SemaphoreCreateInfo::default(), None) }
        .map_err(GraphError::vulkan("vkCreateSemaphore"))
}

/// Copies an image (by default `color`) into the imported swapchain image, converting the
/// format where they differ (a nearest-filter blit of the same size is exact between UNORM
/// formats), so the window shows the same bytes a readback of `color` gives. Add it with
/// [`RenderGraph::add_typed_pass`](crate::RenderGraph::add_typed_pass).
pub struct BlitToSwapchainPass {
    name: String,
    source_name: String,
}

impl BlitToSwapchainPass {
    /// Copies `source` into [`SWAPCHAIN`].
    pub fn new(source: &str) -> BlitToSwapchainPass {
        BlitToSwapchainPass { name: format!("present {source}"), source_name: source.to_owned() }
    }
}

impl TypedPass for BlitToSwapchainPass {
    /// The source, and the swapchain image.
    type Handles = (ImageRead, ImageWrite);

    fn name(&self) -> &str {
        &self.name
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let source = registry.image(&self.source_name);
        let target = registry.image(SWAPCHAIN);
        (registry.read_image(source, Access::TransferRead), registry.write_image(target, Access::TransferWrite))
    }

    fn execute(&mut self, (source_handle, target_handle): &Self::Handles, context: &mut ExecuteContext<'_>) {
        let source = context.image(*source_handle);
        let target = context.image(target_handle);
        let (source_layout, target_layout) =
            (context.image_layout(*source_handle), context.image_layout(target_handle));
        let layers = |format| vk::ImageSubresourceLayers {
            aspect_mask: aspect_of(format),
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        };
        let corner = |extent: vk::Extent2D| vk::Offset3D { x: extent.width as i32, y: extent.height as i32, z: 1 };
        let region = vk::ImageBlit::default()
            .src_subresource(layers(source.format))
            .src_offsets([vk::Offset3D::default(), corner(source.extent)])
            .dst_subresource(layers(target.format))
            .dst_offsets([vk::Offset3D::default(), corner(target.extent)]);
        // SAFETY: recording outside a rendering scope; the graph put the source in
        // TRANSFER_SRC_OPTIMAL and the target in TRANSFER_DST_OPTIMAL (both declared); the
        // regions are the images' full extents.
        unsafe {
            context.device().cmd_blit_image(
                context.command_buffer(),
                source.image,
                source_layout,
                target.image,
                target_layout,
                &[region],
                vk::Filter::NEAREST,
            )
        };
    }
}
