//! Buffers: a Vulkan buffer with its memory (its own, or a block shared with aliased
//! resources), and the graph frame that writes it last, which readers of mapped memory wait
//! for.

use std::sync::{Arc, Mutex};

use ash::vk;
use gpu_allocator::MemoryLocation;

use super::block::{Backing, MemoryBlock};
use super::frame_clock::FrameClock;
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};

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
