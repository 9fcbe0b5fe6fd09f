//! GPU culling passes on top of [`render_graph`] (cargo feature `gpu`, on by default).
//!
//! - [`HiZBuildPass`] reduces `depth_prepass` into the depth pyramid `hiz_depth`.
//!
//! Passes find each other's resources by the stable names of [`render_graph::passes`] and
//! [`HIZ_DEPTH`].

mod cull;
mod frame;
mod hiz;

pub use cull::{
    visibility_bits_bytes, CullPhase, CullResetPass, CullUniforms, GpuCullPass, GpuCullSettings, SharedCullSettings,
    CULL_FRUSTUM, CULL_GROUP, CULL_OCCLUSION, DEPTH_MARGIN, FOOTPRINT_MARGIN, VISIBILITY_BITS,
};
pub use frame::{
    add_gpu_culled_scene_passes, read_visibility_words, GpuCulledScene, VisibilityReadbackPass, VISIBILITY_READBACK,
};
pub use hiz::{reduce_depth_pyramid, HiZBuildPass, HIZ_DEPTH, HIZ_FORMAT, HIZ_GROUP};
