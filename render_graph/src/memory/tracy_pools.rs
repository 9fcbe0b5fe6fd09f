//! GPU memory in a Tracy capture (feature `profile`): every block is an allocation of a named
//! memory pool, one pool per kind of memory (`GPU memory: device local`, `: upload`,
//! `: readback`), so the capture's memory view shows each pool's size over time and its
//! allocations.

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
