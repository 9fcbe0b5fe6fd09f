//! Readback buffers: persistently mapped memory the GPU writes and the host reads once the
//! frame that wrote it is known to have finished.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use super::buffer::GpuBuffer;
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};

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
