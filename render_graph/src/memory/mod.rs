//! GPU memory through gpu-allocator: buffers, images, memory blocks shared by aliased
//! transient resources, a staging ring for uploads and persistently mapped readback buffers.

// One allocation (`block.rs`, reported to Tracy by `tracy_pools.rs`), what is bound to it
// (`buffer.rs`, `image.rs`), and the mapped memory of a frame: uploads (`staging.rs`),
// readbacks (`readback_buffer.rs`) and the clock that says when a frame's writes are there
// (`frame_clock.rs`).
mod block;
mod buffer;
mod frame_clock;
mod image;
mod readback_buffer;
mod staging;
#[cfg(feature = "profile")]
mod tracy_pools;

pub use block::MemoryBlock;
pub use buffer::GpuBuffer;
pub(crate) use frame_clock::FrameClock;
pub use image::{aspect_of, full_mip_chain, full_range, GpuImage, ImageInfo, MAX_ARRAY_LAYERS, MAX_MIP_LEVELS};
pub use readback_buffer::ReadbackBuffer;
pub use staging::StagingRing;
