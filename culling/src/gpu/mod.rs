//! GPU culling passes on top of [`render_graph`] (cargo feature `gpu`, on by default).
//!
//! - [`HiZBuildPass`] reduces `depth_prepass` into the depth pyramid `hiz_depth`.
//! - [`GpuCullPass`] culls the shared `object_records` (frustum, then Hi-Z occlusion), one
//!   thread per object, and compacts the survivors into `draw_commands` + `draw_count`.
//!
//! A GPU-culled frame ([`add_gpu_culled_scene_passes`]), two-phase so that nothing pops:
//!
//! 1. object upload (dirty ranges of `object_records`);
//! 2. [`CullResetPass`]: `draw_count` and [`CULL_STATS`] to zero;
//! 3. [`GpuCullPass`] early: last frame's visible objects (history of [`VISIBILITY_BITS`])
//!    that pass this frame's frustum are appended to the draw list;
//! 4. depth prepass of that list; 5. [`HiZBuildPass`] from that depth;
//! 6. [`GpuCullPass`] late: every object against the frustum and the new pyramid; the bits
//!    become next frame's history, the newly visible objects are appended;
//! 7. a late depth prepass and the geometry pass draw the whole list
//!    (`vkCmdDrawIndexedIndirectCount`), then the readbacks.
//!
//! On the first frame the history is zero, so the early phase draws nothing, the pyramid is
//! empty and the late phase draws everything in view; after a camera cut the late phase
//! likewise draws whatever the early phase missed in the same frame.
//!
//! Passes find each other's resources by the stable names of [`render_graph::passes`] and
//! [`HIZ_DEPTH`].

mod cull;
mod frame;
mod hiz;
mod render;
mod target;

pub use cull::{
    visibility_bits_bytes, CullPhase, CullResetPass, CullUniforms, GpuCullPass, GpuCullSettings, GpuCullStats,
    SharedCullSettings, CULL_FRUSTUM, CULL_GROUP, CULL_OCCLUSION, CULL_STATS, CULL_STAT_WORDS, DEPTH_MARGIN,
    FOOTPRINT_MARGIN, VISIBILITY_BITS,
};
pub use frame::{
    add_gpu_culled_scene_passes, read_visibility_words, BufferReadbackPass, GpuCulledScene, CULL_STATS_READBACK,
    VISIBILITY_READBACK,
};
pub use hiz::{reduce_depth_pyramid, HiZBuildPass, HIZ_DEPTH, HIZ_FORMAT, HIZ_GROUP};
pub use render::{
    install_render, install_render_to, BitsReadback, GpuCullControl, ObjectStyle, RenderReport, RenderSetup,
    READBACK_RING, RENDER_SYSTEM,
};
pub use target::FrameTarget;
