//! The engine's frames, assembled from the passes: which passes run, in which order, and
//! what they read back.
//!
//! - [`add_scene_passes`] (`cpu_list.rs`): the host's draw list (CPU culling, or none):
//!   upload, draw list, depth prepass, geometry, readback.
//! - [`add_gpu_culled_scene_passes`] (`gpu_culled.rs`): two-phase GPU culling: upload, cull
//!   reset, early cull, depth prepass, Hi-Z build, late cull, late depth prepass, geometry,
//!   readbacks.
//! - [`add_cluster_culled_scene_passes`] (`cluster_culled.rs`): the same, culled meshlet by
//!   meshlet after the object pass.

//!
//! Each has the insertion points of [`points`] between its passes, where a user's pass runs
//! inside the frame.

mod cluster_culled;
mod cpu_list;
mod gpu_culled;
pub mod points;
mod post;

pub use cluster_culled::{
    add_cluster_culled_scene_passes, cluster_pass_ms, ClusterCulledScene, ClusterReadbacks, CLUSTER_BITS_READBACK,
    CLUSTER_STATS_READBACK, CLUSTER_VERDICTS_READBACK, EARLY_DEPTH_READBACK,
};
pub use cpu_list::{add_scene_passes, ScenePassOptions};
pub(crate) use gpu_culled::culled_frame_mode;
pub use gpu_culled::{
    add_gpu_culled_scene_passes, read_visibility_words, shadow_culling_on_device, shadow_pyramid_side, GpuCulledScene,
    CULL_STATS_READBACK, VISIBILITY_READBACK,
};
pub use post::add_post_process;
