//! GPU memory through gpu-allocator: buffers, images, memory blocks shared by aliased
//! transient resources, a staging ring for uploads and persistently mapped readback buffers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;

use crate::access::MipRange;
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};

/// One allocation, freed when dropped. Several aliased resources can share one block.
pub struct MemoryBlock {
    device: Arc<GpuDevice>,
    allocation: Option<Allocation>,
    /// Tracy builds: the allocation as Tracy saw it, freed with the block.
    #[cfg(feature = "profile")]
    traced: Option<gpu_memory::Traced>,
}

impl MemoryBlock {
    /// Allocates memory for `requirements` at `location`; `linear` is true for buffers.
    pub fn new(
        device: &Arc<GpuDevice>,
        name: &str,
        requirements: vk::MemoryRequirements,
        location: MemoryLocation,
        linear: bool,
    ) -> Result<MemoryBlock> {
        let allocation = device.allocator().allocate(&AllocationCreateDesc {
            name,
            requirements,
            location,
            linear,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        })?;
        Ok(MemoryBlock {
            device: Arc::clone(device),
            #[cfg(feature = "profile")]
            traced: gpu_memory::allocated(location, allocation.size()),
            allocation: Some(allocation),
        })
    }

    fn allocation(&self) -> &Allocation {
        self.allocation.as_ref().expect("a memory block holds its allocation until dropped")
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.allocation().size()
    }

    /// The device memory and the offset of this block in it.
    pub fn memory_and_offset(&self) -> (vk::DeviceMemory, u64) {
        let allocation = self.allocation();
        // SAFETY: the memory is only used to bind resources while this block keeps it alive.
        (unsafe { allocation.memory() }, allocation.offset())
    }

    /// The mapped bytes, when the memory is host visible.
    pub fn mapped(&self) -> Option<&[u8]> {
        self.allocation().mapped_slice()
    }

    /// The mapped bytes for writing, when the memory is host visible.
    pub fn mapped_mut(&mut self) -> Option<&mut [u8]> {
        self.allocation.as_mut().and_then(|allocation| allocation.mapped_slice_mut())
    }

    /// Makes device writes visible to the host for non-coherent memory (after a fence wait).
    pub fn invalidate(&self) -> Result<()> {
        let Some(range) = self.non_coherent_range() else { return Ok(()) };
        // SAFETY: the range lies in mapped memory (rounded to the atom size, which the
        // allocator's block alignment covers).
        unsafe { self.device.raw().invalidate_mapped_memory_ranges(&[range]) }
            .map_err(GraphError::vulkan("vkInvalidateMappedMemoryRanges"))
    }

    /// Makes host writes visible to the device for non-coherent memory (before a submit).
    pub fn flush(&self) -> Result<()> {
        let Some(range) = self.non_coherent_range() else { return Ok(()) };
        // SAFETY: as in `invalidate`.
        unsafe { self.device.raw().flush_mapped_memory_ranges(&[range]) }
            .map_err(GraphError::vulkan("vkFlushMappedMemoryRanges"))
    }

    /// The whole allocation as a mapped range rounded out to the non-coherent atom size, or
    /// `None` for coherent memory, which needs no flush or invalidate.
    fn non_coherent_range(&self) -> Option<vk::MappedMemoryRange<'static>> {
        let allocation = self.allocation();
        if allocation.memory_properties().contains(vk::MemoryPropertyFlags::HOST_COHERENT) {
            return None;
        }
        let atom = self.device.capabilities().non_coherent_atom_size;
        let start = allocation.offset() / atom * atom;
        let end = (allocation.offset() + allocation.size()).div_ceil(atom) * atom;
        let (memory, _) = self.memory_and_offset();
        Some(vk::MappedMemoryRange::default().memory(memory).offset(start).size(end - start))
    }
}

impl Drop for MemoryBlock {
    fn drop(&mut self) {
        #[cfg(feature = "profile")]
        if let Some(traced) = self.traced.take() {
            gpu_memory::freed(traced);
        }
        if let Some(allocation) = self.allocation.take() {
            // A failed free leaks the memory; the allocator reports leaks itself.
            let _ = self.device.allocator().free(allocation);
        }
    }
}

/// GPU memory in a Tracy capture: every block is an allocation of a named memory pool, one
/// pool per kind of memory (`GPU memory: device local`, `: upload`, `: readback`), so the
/// capture's memory view shows each pool's size over time and its allocations.
#[cfg(feature = "profile")]
mod gpu_memory {
    use std::ffi::CStr;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use gpu_allocator::MemoryLocation;
    use tracy_client::{sys, Client};

    /// Ids of the allocations Tracy was told about: unique per pool while alive, never null.
    static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

    /// An allocation Tracy was told about.
    pub(super) struct Traced {
        id: usize,
        pool: &'static CStr,
    }

    fn pool_of(location: MemoryLocation) -> &'static CStr {
        match location {
            MemoryLocation::GpuOnly => c"GPU memory: device local",
            MemoryLocation::CpuToGpu => c"GPU memory: upload",
            MemoryLocation::GpuToCpu => c"GPU memory: readback",
            MemoryLocation::Unknown => c"GPU memory: other",
        }
    }

    /// Tells Tracy (when it runs) about a new block of `size` bytes at `location`.
    pub(super) fn allocated(location: MemoryLocation, size: u64) -> Option<Traced> {
        Client::running()?;
        let traced = Traced { id: NEXT_ID.fetch_add(1, Ordering::Relaxed), pool: pool_of(location) };
        // SAFETY: Tracy only records the pointer value as an id; the pool name is a static
        // C string, as named pools require.
        unsafe { sys::___tracy_emit_memory_alloc_named(traced.id as *const _, size as usize, traced.pool.as_ptr()) };
        Some(traced)
    }

    /// Tells Tracy the block `traced` was freed.
    pub(super) fn freed(traced: Traced) {
        // SAFETY: as in `allocated`, with the id and pool it was reported under.
        unsafe { sys::___tracy_emit_memory_free_named(traced.id as *const _, traced.pool.as_ptr()) };
    }
}

/// Where a resource's memory comes from.
enum Backing {
    /// Its own allocation.
    Own(MemoryBlock),
    /// A block shared with aliased resources whose lifetimes do not overlap.
    Shared(Arc<MemoryBlock>),
}

impl Backing {
    fn block(&self) -> &MemoryBlock {
        match self {
            Backing::Own(block) => block,
            Backing::Shared(block) => block,
        }
    }
}

/// A buffer with its memory.
pub struct GpuBuffer {
    device: Arc<GpuDevice>,
    buffer: vk::Buffer,
    size: u64,
    usage: vk::BufferUsageFlags,
    /// The latest graph frame that writes the buffer, with the clock of its graph.
    pending_write: Mutex<Option<(Arc<FrameClock>, u64)>>,
    backing: Option<Backing>,
}

impl GpuBuffer {
    /// Creates a buffer with its own allocation. `GpuToCpu` and `CpuToGpu` memory stays
    /// mapped for the buffer's whole life.
    pub fn new(
        device: &Arc<GpuDevice>,
        name: &str,
        size: u64,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
    ) -> Result<GpuBuffer> {
        let mut buffer = GpuBuffer::new_unbound(device, name, size, usage)?;
        let block = MemoryBlock::new(device, name, buffer.requirements(), location, true)?;
        buffer.bind(Backing::Own(block))?;
        Ok(buffer)
    }

    /// Creates a buffer without memory; bind it with [`GpuBuffer::bind_shared`].
    pub fn new_unbound(
        device: &Arc<GpuDevice>,
        name: &str,
        size: u64,
        usage: vk::BufferUsageFlags,
    ) -> Result<GpuBuffer> {
        if size == 0 {
            return Err(GraphError::InvalidDescription { resource: name.into(), reason: "buffer size is zero" });
        }
        let info = vk::BufferCreateInfo::default().size(size).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid create info on a live device.
        let buffer =
            unsafe { device.raw().create_buffer(&info, None) }.map_err(GraphError::vulkan("vkCreateBuffer"))?;
        device.set_name(buffer, name);
        Ok(GpuBuffer {
            device: Arc::clone(device),
            buffer,
            size,
            usage,
            pending_write: Mutex::new(None),
            backing: None,
        })
    }

    /// Memory requirements of the unbound buffer.
    pub fn requirements(&self) -> vk::MemoryRequirements {
        // SAFETY: the buffer is live.
        unsafe { self.device.raw().get_buffer_memory_requirements(self.buffer) }
    }

    /// Binds the buffer at the start of a block shared with other (aliased) resources.
    pub fn bind_shared(&mut self, block: &Arc<MemoryBlock>) -> Result<()> {
        self.bind(Backing::Shared(Arc::clone(block)))
    }

    fn bind(&mut self, backing: Backing) -> Result<()> {
        let (memory, offset) = backing.block().memory_and_offset();
        // SAFETY: the buffer is unbound; the block was sized and aligned from its
        // requirements and outlives the buffer through `backing`.
        unsafe { self.device.raw().bind_buffer_memory(self.buffer, memory, offset) }
            .map_err(GraphError::vulkan("vkBindBufferMemory"))?;
        self.backing = Some(backing);
        Ok(())
    }

    /// The Vulkan buffer.
    pub fn raw(&self) -> vk::Buffer {
        self.buffer
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Records that graph frame `frame`, counted by `clock`, writes the buffer.
    pub(crate) fn mark_gpu_write(&self, clock: &Arc<FrameClock>, frame: u64) {
        let mut pending = self.pending_write.lock().unwrap_or_else(|poison| poison.into_inner());
        *pending = Some((Arc::clone(clock), frame));
    }

    /// The graph frame that writes the buffer and is not known to have finished, if any.
    /// A frame counts as finished once its graph waited for it (`wait_idle`, a later frame
    /// reusing its slot, a recompile, or dropping the graph).
    pub fn pending_gpu_write(&self) -> Option<u64> {
        let pending = self.pending_write.lock().unwrap_or_else(|poison| poison.into_inner());
        pending.as_ref().filter(|(clock, frame)| !clock.has_finished(*frame)).map(|&(_, frame)| frame)
    }

    /// How the buffer may be used.
    pub fn usage(&self) -> vk::BufferUsageFlags {
        self.usage
    }

    /// The mapped bytes (host-visible buffers only).
    pub fn mapped(&self) -> Option<&[u8]> {
        let bytes = self.backing.as_ref()?.block().mapped()?;
        bytes.get(..self.size as usize)
    }

    /// The mapped bytes for writing (own host-visible buffers only).
    pub fn mapped_mut(&mut self) -> Option<&mut [u8]> {
        let size = self.size as usize;
        match self.backing.as_mut()? {
            Backing::Own(block) => block.mapped_mut()?.get_mut(..size),
            Backing::Shared(_) => None,
        }
    }

    /// Flushes host writes (no-op on coherent memory).
    pub fn flush(&self) -> Result<()> {
        self.backing.as_ref().map_or(Ok(()), |backing| backing.block().flush())
    }

    /// Invalidates host caches before reading device writes (no-op on coherent memory).
    pub fn invalidate(&self) -> Result<()> {
        self.backing.as_ref().map_or(Ok(()), |backing| backing.block().invalidate())
    }
}

impl Drop for GpuBuffer {
    fn drop(&mut self) {
        // SAFETY: the owner guarantees the GPU no longer uses the buffer (the graph waits for
        // its frames' fences before dropping resources).
        unsafe { self.device.raw().destroy_buffer(self.buffer, None) };
    }
}

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

/// Persistently mapped upload memory, one region per frame in flight. Data written in frame N
/// stays untouched until that frame's fence has signalled.
///
/// A region grows when a frame needs more than it holds (to the next power of two, at least
/// twice its size): uploads are never refused for being many. The region it outgrew may still
/// hold this frame's earlier uploads, which copies recorded later read, so it is kept until
/// the region's frame slot comes round again (its fence waited for) and dropped then. So a
/// scene whose upload doubles pays one allocation per doubling, and a steady one none.
pub struct StagingRing {
    device: Arc<GpuDevice>,
    regions: Vec<StagingRegion>,
    /// The frame slot being written.
    current: usize,
}

/// One frame slot's upload memory.
struct StagingRegion {
    buffer: GpuBuffer,
    /// Bytes used this frame.
    head: u64,
    /// Buffers this region outgrew during its current frame: read by that frame's copies,
    /// dropped when the slot's fence has been waited for.
    retired: Vec<GpuBuffer>,
}

/// Usage of staging memory: copy source, staged uniform and storage data, and host-written
/// indirect draw arguments (a pass may draw straight from what it staged).
const STAGING_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::TRANSFER_SRC.as_raw()
        | vk::BufferUsageFlags::UNIFORM_BUFFER.as_raw()
        | vk::BufferUsageFlags::STORAGE_BUFFER.as_raw()
        | vk::BufferUsageFlags::INDIRECT_BUFFER.as_raw(),
);

impl StagingRing {
    /// Creates a ring of `frames` regions of `region_size` bytes each to begin with.
    pub fn new(device: &Arc<GpuDevice>, region_size: u64, frames: u32) -> Result<StagingRing> {
        let regions = (0..frames.max(1))
            .map(|_| {
                let size = region_size.max(256);
                let buffer = GpuBuffer::new(device, "staging ring", size, STAGING_USAGE, MemoryLocation::CpuToGpu)?;
                Ok(StagingRegion { buffer, head: 0, retired: Vec::new() })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(StagingRing { device: Arc::clone(device), regions, current: 0 })
    }

    /// Starts using the region of frame slot `slot`; its previous contents must be consumed
    /// (the slot's fence waited for), so the buffers it outgrew then are freed now.
    pub fn begin_frame(&mut self, slot: u32) {
        self.current = slot as usize % self.regions.len();
        let region = &mut self.regions[self.current];
        region.head = 0;
        region.retired.clear();
    }

    /// Copies `data` into the ring and returns (buffer, offset) of the copy; `alignment` must
    /// be a power of two.
    pub fn push(&mut self, data: &[u8], alignment: u64) -> Result<(vk::Buffer, u64)> {
        self.push_with(data.len() as u64, alignment, |bytes| bytes.copy_from_slice(data))
    }

    /// Reserves `len` bytes, lets `fill` write them in place (no copy through another
    /// buffer) and returns (buffer, offset) of the data; `alignment` must be a power of two.
    pub fn push_with(&mut self, len: u64, alignment: u64, fill: impl FnOnce(&mut [u8])) -> Result<(vk::Buffer, u64)> {
        debug_assert!(alignment.is_power_of_two(), "staging alignment {alignment} is not a power of two");
        let mut start = self.regions[self.current].head.next_multiple_of(alignment.max(1));
        if start + len > self.regions[self.current].buffer.size() {
            self.grow(len)?;
            start = 0;
        }
        let region = &mut self.regions[self.current];
        let raw = region.buffer.raw();
        let mapped = region
            .buffer
            .mapped_mut()
            .ok_or_else(|| GraphError::Allocation(String::from("staging ring is not mapped")))?;
        fill(&mut mapped[start as usize..(start + len) as usize]);
        region.head = start + len;
        Ok((raw, start))
    }

    /// Gives the current region a buffer with room for `len` more bytes; the old one is
    /// retired, not freed: this frame's earlier uploads still lie in it.
    fn grow(&mut self, len: u64) -> Result<()> {
        let region = &mut self.regions[self.current];
        let size = (region.buffer.size() * 2).max(len).next_power_of_two();
        let buffer = GpuBuffer::new(&self.device, "staging ring", size, STAGING_USAGE, MemoryLocation::CpuToGpu)
            .map_err(|error| match error {
                GraphError::Allocation(reason) => {
                    GraphError::StagingFull { requested: len, capacity: region.buffer.size(), reason }
                }
                other => other,
            })?;
        let outgrown = std::mem::replace(&mut region.buffer, buffer);
        region.retired.push(outgrown);
        region.head = 0;
        Ok(())
    }

    /// Bytes used in the current region's buffer (since it last grew).
    pub fn used(&self) -> u64 {
        self.regions[self.current].head
    }

    /// Bytes the current region holds before it must grow.
    pub fn capacity(&self) -> u64 {
        self.regions[self.current].buffer.size()
    }

    /// Makes this frame's writes visible to the device (no-op on coherent memory).
    pub fn flush(&self) -> Result<()> {
        let region = &self.regions[self.current];
        region.retired.iter().try_for_each(GpuBuffer::flush)?;
        region.buffer.flush()
    }
}

/// Counts the frames of one graph whose fences were waited for.
#[derive(Debug, Default)]
pub(crate) struct FrameClock {
    // Frames with an index below this have finished. Relaxed is enough: the value is only
    // written after a fence wait on the same thread that submits, and a reader on another
    // thread that sees a stale value only reports "pending" conservatively.
    finished: AtomicU64,
}

impl FrameClock {
    /// Frame `frame` has finished on the GPU (its fence was waited for).
    pub(crate) fn finish(&self, frame: u64) {
        self.finished.fetch_max(frame.saturating_add(1), Ordering::Relaxed);
    }

    /// Every frame has finished (the device is idle and no more frames come).
    pub(crate) fn finish_all(&self) {
        self.finished.store(u64::MAX, Ordering::Relaxed);
    }

    fn has_finished(&self, frame: u64) -> bool {
        frame < self.finished.load(Ordering::Relaxed)
    }
}

/// A persistently mapped buffer the GPU writes and the host reads after the frame's fence.
/// Clones share the buffer.
#[derive(Clone)]
pub struct ReadbackBuffer {
    name: String,
    buffer: Arc<GpuBuffer>,
}

impl ReadbackBuffer {
    /// Creates a host-visible buffer of `size` bytes usable as a copy destination and storage
    /// buffer.
    pub fn new(device: &Arc<GpuDevice>, name: &str, size: u64) -> Result<ReadbackBuffer> {
        let usage = vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER;
        let buffer = GpuBuffer::new(device, name, size, usage, MemoryLocation::GpuToCpu)?;
        Ok(ReadbackBuffer { name: name.to_owned(), buffer: Arc::new(buffer) })
    }

    /// The buffer.
    pub fn buffer(&self) -> &GpuBuffer {
        &self.buffer
    }

    /// A shared reference to the buffer, to import into a graph
    /// ([`crate::RenderGraph::import_buffer`]).
    pub fn shared(&self) -> Arc<GpuBuffer> {
        Arc::clone(&self.buffer)
    }

    /// Reads the contents written by the last graph frame that writes the buffer.
    ///
    /// Returns [`GraphError::ReadbackPending`] when that frame may still run on the GPU: call
    /// [`crate::RenderGraph::wait_idle`] (or drop the graph) first.
    pub fn read(&self) -> Result<&[u8]> {
        if let Some(frame) = self.buffer.pending_gpu_write() {
            return Err(GraphError::ReadbackPending { buffer: self.name.clone(), frame });
        }
        self.buffer.invalidate()?;
        self.buffer.mapped().ok_or_else(|| GraphError::Allocation(String::from("readback buffer is not mapped")))
    }

    /// Reads the contents as 32-bit words (little-endian).
    pub fn read_u32(&self) -> Result<Vec<u32>> {
        let bytes = self.read()?;
        Ok(bytes.chunks_exact(4).map(|word| u32::from_le_bytes([word[0], word[1], word[2], word[3]])).collect())
    }
}
