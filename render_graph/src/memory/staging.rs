//! The staging ring: persistently mapped upload memory, one region per frame in flight,
//! which grows instead of refusing an upload.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use super::buffer::GpuBuffer;
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};

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
