//! Memory blocks: one gpu-allocator allocation each, freed when dropped, owned by one
//! resource or shared by aliased transient resources whose lifetimes do not overlap.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;

#[cfg(feature = "profile")]
use super::tracy_pools;
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};

/// One allocation, freed when dropped. Several aliased resources can share one block.
pub struct MemoryBlock {
    device: Arc<GpuDevice>,
    allocation: Option<Allocation>,
    /// Tracy builds: the allocation as Tracy saw it, freed with the block.
    #[cfg(feature = "profile")]
    traced: Option<tracy_pools::Traced>,
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
            traced: tracy_pools::allocated(location, allocation.size()),
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
            tracy_pools::freed(traced);
        }
        if let Some(allocation) = self.allocation.take() {
            // A failed free leaks the memory; the allocator reports leaks itself.
            let _ = self.device.allocator().free(allocation);
        }
    }
}

/// Where a resource's memory comes from.
pub(super) enum Backing {
    /// Its own allocation.
    Own(MemoryBlock),
    /// A block shared with aliased resources whose lifetimes do not overlap.
    Shared(Arc<MemoryBlock>),
}

impl Backing {
    pub(super) fn block(&self) -> &MemoryBlock {
        match self {
            Backing::Own(block) => block,
            Backing::Shared(block) => block,
        }
    }
}
