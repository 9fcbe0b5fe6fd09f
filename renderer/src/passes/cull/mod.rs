//! The GPU's two-phase culls: one skeleton ([`TwoPhaseCull`], `skeleton.rs`, and its shader
//! half `two_phase_cull.h`) that each cull specialises with a [`CullKind`], and the one form a
//! view takes on its way to the shaders ([`CullView`], `view.rs`):
//!
//! - `camera.rs`: [`GpuCullPass`], the camera's objects (`gpu_cull.h`);
//! - `shadow.rs`: [`ShadowCullPass`], the shadow casters in every light view (`shadow_cull.h`);
//! - `image.rs`: [`ImageCullPass`], the objects in an image-target view, with its own history,
//!   pyramid and lists;
//! - `cluster.rs`: [`ClusterCullPass`], the meshlets of the cluster tables (`cluster_cull.h`),
//!   with `cluster_survivors.rs`, [`ClusterSurvivorPass`], between its phases.
//!
//! Each kind's reset ([`CullResetPass`]) creates and zeroes the buffers it appends to.

mod camera;
mod cluster;
mod cluster_survivors;
mod image;
mod shadow;
mod skeleton;
mod view;

pub(crate) use camera::lock_settings;
pub use camera::{
    visibility_bits_bytes, GpuCullPass, GpuCullSettings, GpuCullStats, ObjectCull, ObjectCullHandles,
    SharedCullSettings, CULL_GROUP, CULL_STATS, CULL_STAT_WORDS, LOD_STAT_LEVELS, VISIBILITY_BITS,
};
pub(crate) use cluster::lock_cluster_settings;
pub use cluster::{
    cluster_bits_bytes, cluster_dispatch_shape, ClusterCull, ClusterCullHandles, ClusterCullPass, ClusterRowWidth,
    SharedClusterSettings, CLUSTER_BITS, CLUSTER_DISPATCH, CLUSTER_GROUP, CLUSTER_MAX_GROUPS, CLUSTER_STATS,
    CLUSTER_SURVIVORS, CLUSTER_VERDICTS,
};
pub use cluster_survivors::{ClusterSurvivorHandles, ClusterSurvivorPass, ClusterSurvivors, SURVIVOR_LEVEL_SHIFT};
pub use image::{ImageCullHandles, ImageCullNames, ImageCullPass, ImageCullSetupPass, ImageObjectCull};
pub use shadow::{
    shadow_bits_words, shadow_draws_bytes, ShadowCull, ShadowCullHandles, ShadowCullPass, SHADOW_CASTER_BITS,
    SHADOW_DRAWS, SHADOW_DRAWS_LATE, SHADOW_DRAWS_MAX_BYTES, SHADOW_DRAW_COUNTS, SHADOW_DRAW_COUNT_BYTES, SHADOW_HIZ,
    SHADOW_LATE_COUNTS,
};
pub use skeleton::{CullInputs, CullKind, CullPhase, CullResetPass, TwoPhaseCull};
pub use view::{
    rect_mips, CullConstants, CullView, DistanceLod, CULL_CONE, CULL_FRUSTUM, CULL_LOD, CULL_LOD_DISTANCE,
    CULL_LOD_EVERY_OBJECT, CULL_OCCLUSION, CULL_TWO_PHASE, DEPTH_MARGIN, FOOTPRINT_MARGIN,
};
