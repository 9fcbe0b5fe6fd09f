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
//! **Cluster culling** ([`add_cluster_culled_scene_passes`]) refines this per meshlet: the
//! object passes only write `visibility_bits` for the objects the [`ClusterTable`] covers
//! ([`GpuCullPass::drawing_from`]), and [`ClusterCullPass`] early (last frame's visible
//! meshlets: sphere-frustum and cone tests) and late (every meshlet of every surviving
//! object: sphere, cone, box against `hiz_depth`) append one command per meshlet, its own
//! index range with `firstInstance` = the object, which the same depth and geometry passes
//! draw. The CPU reference of every test is [`crate::cluster`]; the counters are
//! [`ClusterStats`](crate::cluster::ClusterStats).
//!
//! Passes find each other's resources by the stable names of [`render_graph::passes`] and
//! [`HIZ_DEPTH`].

mod cluster;
mod cluster_frame;
mod cluster_survivors;
mod cluster_table;
mod cull;
mod frame;
mod hiz;
mod render;
mod scene_sync;
mod target;

pub use cluster::{
    cluster_bits_bytes, ClusterCullPass, ClusterResetPass, ClusterUniforms, SharedClusterSettings, CLUSTER_BITS,
    CLUSTER_CONE, CLUSTER_DISPATCH, CLUSTER_FRUSTUM, CLUSTER_GROUP, CLUSTER_OCCLUSION, CLUSTER_STATS,
    CLUSTER_SURVIVORS, CLUSTER_UNIFORM_BYTES, CLUSTER_VERDICTS,
};
pub use cluster_frame::{
    add_cluster_culled_scene_passes, cluster_pass_ms, ClusterCulledScene, ClusterReadbacks, CLUSTER_BITS_READBACK,
    CLUSTER_STATS_READBACK, CLUSTER_VERDICTS_READBACK, EARLY_DEPTH_READBACK,
};
pub use cluster_survivors::ClusterSurvivorPass;
pub use cluster_table::{
    ClusterBuffers, ClusterTable, GpuMeshlet, CLUSTER_MESHLETS, CLUSTER_OBJECTS, CLUSTER_OBJECT_PAIRS, CLUSTER_PAIRS,
    PAIR_FIRST, PAIR_WHOLE,
};
pub use cull::{
    visibility_bits_bytes, CullPhase, CullResetPass, CullUniforms, GpuCullPass, GpuCullSettings, GpuCullStats,
    SharedCullSettings, CULL_FRUSTUM, CULL_GROUP, CULL_OCCLUSION, CULL_STATS, CULL_STAT_WORDS, CULL_UNIFORM_BYTES,
    DEPTH_MARGIN, FOOTPRINT_MARGIN, VISIBILITY_BITS,
};
pub use frame::{
    add_gpu_culled_scene_passes, read_visibility_words, BufferReadbackPass, GpuCulledScene, CULL_STATS_READBACK,
    VISIBILITY_READBACK,
};
pub use hiz::{reduce_depth_pyramid, HiZBuildPass, HIZ_DEPTH, HIZ_FORMAT, HIZ_GROUP};
pub use render::{
    install_render, install_render_to, BitsReadback, GpuCullControl, RenderReport, RenderSetup, READBACK_RING,
    RENDER_SYSTEM,
};
pub use target::FrameTarget;
