//! The passes of the engine's frame, in the order a frame runs
//! them:
//!
//! 1. [`ObjectUploadPass`] (`upload.rs`): the changed object transforms and records into
//!    their slots; [`ViewUploadPass`] (`view.rs`) the frame's view into the `view` uniform,
//!    when a pass reads it; [`DrawListPass`] (`upload.rs`) the host's draw list, on the CPU
//!    path (then one block per window view, which users' passes wrapped in [`PerView`],
//!    `per_view.rs`, bind view by view);
//! 2. [`CullResetPass`] (`cull/`): the draw lists and the cull counters to zero;
//!    [`DrawBatchPass`] (`batches.rs`): the changed slots' batch ids and, batched, the lists'
//!    template commands (one per (mesh, level, material));
//! 3. [`GpuCullPass`] early (`cull/camera.rs`): last frame's visible objects in this frame's
//!    frustum; [`ClusterCullPass`] early (`cull/cluster.rs`) under meshlet culling;
//! 4. [`DepthPrepass`] (`depth_prepass.rs`);
//! 5. [`HiZBuildPass`] (`hiz.rs`): the depth pyramid;
//! 6. [`GpuCullPass`] late: everything against the frustum and the pyramid;
//!    [`ClusterSurvivorPass`] (`cull/cluster_survivors.rs`) and [`ClusterCullPass`] late;
//! 7. [`DepthPrepass::late`]; in a frame with shadows, on GPU-culled frames
//!    [`CullResetPass::shadows`] and [`ShadowCullPass`] (`cull/shadow.rs`: every caster against
//!    every light view, one list per view), then [`ShadowAtlasPass`] (`shadow.rs`): every
//!    light view's casters into its tile of `shadow_atlas`; on GPU-culled frames then the
//!    cascades' occlusion: [`HiZBuildPass::shadow_atlas`], [`ShadowCullPass::late`],
//!    [`ShadowAtlasPass::device_culled_late`];
//!    then, for each camera rendering into an image, its [`ImageViewPass`]es (`image_view.rs`:
//!    depth, then colour into the image; on GPU-culled frames after its [`ImageViewListPass`]
//!    uploads its own lists) and the copies into the texture layers that show it
//!    ([`ViewTexturePass`], `view_texture.rs`);
//! 8. [`GeometryPass`] (`geometry.rs`), then [`BlendedPass`] (`blended.rs`): translucent
//!    objects back to front, run only once the scene has a blended material;
//! 9. the readbacks ([`color_readback_pass`], and [`render_graph::readback`]'s passes for
//!    buffers).
//!
//! The three culls are one skeleton, [`TwoPhaseCull`], specialised by a [`CullKind`] each
//! (`cull/`). `draw.rs` holds what the two drawing passes share ([`DrawMode`]). Passes find each
//! other's resources by the stable names of [`crate::names`].

mod batches;
mod blended;
mod blended_levels;
mod cull;
mod depth_prepass;
mod draw;
mod geometry;
mod hiz;
mod image_view;
mod lod_upload;
mod mesh_upload;
mod per_view;
mod shadow;
mod upload;
mod view;
mod view_draws;
mod view_texture;

pub use batches::DrawBatchPass;
pub use blended::{BlendedInputs, BlendedPass};
pub use blended_levels::{BlendedLevelsHandles, BlendedLevelsPass, BLENDED_DRAWS, BLENDED_LEVELS_GROUP};
pub use cull::{
    cluster_bits_bytes, cluster_dispatch_shape, rect_mips, shadow_bits_words, shadow_draws_bytes,
    visibility_bits_bytes, ClusterCull, ClusterCullHandles, ClusterCullPass, ClusterRowWidth, ClusterSurvivorHandles,
    ClusterSurvivorPass, ClusterSurvivors, CullConstants, CullInputs, CullKind, CullPhase, CullResetPass, CullView,
    DistanceLod, GpuCullPass, GpuCullSettings, GpuCullStats, ImageCullHandles, ImageCullNames, ImageCullPass,
    ImageCullSetupPass, ImageObjectCull, ObjectCull, ObjectCullHandles, ShadowCull, ShadowCullHandles, ShadowCullPass,
    SharedClusterSettings, SharedCullSettings, TwoPhaseCull, CLUSTER_BITS, CLUSTER_DISPATCH, CLUSTER_GROUP,
    CLUSTER_MAX_GROUPS, CLUSTER_STATS, CLUSTER_SURVIVORS, CLUSTER_VERDICTS, CULL_CONE, CULL_FRUSTUM, CULL_GROUP,
    CULL_LOD, CULL_LOD_DISTANCE, CULL_LOD_EVERY_OBJECT, CULL_OCCLUSION, CULL_STATS, CULL_STAT_WORDS, CULL_TWO_PHASE,
    DEPTH_MARGIN, FOOTPRINT_MARGIN, LOD_STAT_LEVELS, SHADOW_CASTER_BITS, SHADOW_DRAWS, SHADOW_DRAWS_LATE,
    SHADOW_DRAWS_MAX_BYTES, SHADOW_DRAW_COUNTS, SHADOW_DRAW_COUNT_BYTES, SHADOW_HIZ, SHADOW_LATE_COUNTS,
    SURVIVOR_LEVEL_SHIFT, VISIBILITY_BITS,
};
pub(crate) use cull::{lock_cluster_settings, lock_settings};
pub use depth_prepass::DepthPrepass;
pub(crate) use draw::ObjectIdImage;
pub use draw::{DrawMode, SceneInputs};
pub use geometry::{GeometryInputs, GeometryPass};
pub use hiz::{
    image_view_hiz_name, reduce_depth_pyramid, HiZBuildPass, HiZHandles, HIZ_DEPTH, HIZ_DEPTH_FINAL, HIZ_FORMAT,
    HIZ_GROUP,
};
pub use image_view::{
    image_target_format, image_view_depth_name, image_view_list_names, ImageViewInputs, ImageViewListPass,
    ImageViewPass,
};
pub use lod_upload::LodUploadPass;
pub use mesh_upload::MeshUploadPass;
pub use per_view::{PassView, PerView, ViewPass};
pub use shadow::{ShadowAtlasHandles, ShadowAtlasPass};
pub use upload::{DrawListPass, ObjectUploadPass, SCATTER_GROUP};
pub use view::{ViewUploadPass, VIEW_BLOCKS, VIEW_BLOCK_STRIDE};
pub use view_texture::ViewTexturePass;

use render_graph::readback::ReadbackPass;

/// The GPU time of two passes that do one job (a phase and its helper, an early and a late
/// pass): their sum, either alone when the other has no time, `None` when neither has.
pub(crate) fn sum_gpu_ms(first: Option<f64>, second: Option<f64>) -> Option<f64> {
    match (first, second) {
        (Some(first), Some(second)) => Some(first + second),
        (first, second) => first.or(second),
    }
}

/// The pass that copies the frame's `color` into the buffer imported as `color_readback`
/// ([`crate::names::COLOR_READBACK`], made by [`render_graph::readback::image_readback_buffer`]).
pub fn color_readback_pass() -> ReadbackPass {
    ReadbackPass::with_names(crate::names::COLOR, crate::names::COLOR_READBACK)
}
