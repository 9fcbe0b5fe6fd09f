//! Visibility culling on the CPU: bounds and frustum math, SIMD frustum kernels, the
//! Visibility stage (the answer a game reads), LOD, shadow casters, CPU occlusion and the CPU
//! reference of meshlet culling. It needs no GPU: the GPU culling passes are the `renderer`
//! crate's, and give the same frustum bits.
//!
//! The rule of every cull here: false-visible is allowed, false-hidden never. A box that
//! straddles a plane is kept, and an object or a view with non-finite numbers is kept and
//! counted, never culled.
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod backend;
mod bits;
pub mod cluster;
mod frustum;
mod kernels;
mod lod;
mod lod_error;
pub mod occlusion;
mod parallel;
mod plane_lanes;
mod prefetch;
pub mod shadow;
mod size;
mod soa;
mod view;
mod visibility;

pub use backend::{
    cpu_culling_forced, CullingBackend, CullingChoice, GpuFeedback, GpuVerdict, NoGpuCulling, FORCE_CPU_CULLING_ENV,
};
pub use bits::{words_for, VisibilityBits, BITS_PER_WORD};
pub use ecs::{Aabb, Sphere};
pub use frustum::{Frustum, PlaneLanes, MAX_PLANES};
pub use kernels::{cull_aabbs, cull_spheres, CullStats, Kernel, NO_AVX512_ENV, NO_SIMD_ENV};
pub use lod::{is_orthographic, lod_scale, select_lod, REFERENCE_P11};
pub use lod_error::{
    error_level_slack, lod_box_distance_sq, lod_scale_sq, select_lod_by_error, select_lod_by_error_of, LodErrorView,
};
pub use occlusion::{OcclusionCuller, OcclusionDetail, OcclusionRead, OcclusionStats, OcclusionVerdict};
pub use parallel::DEFAULT_GRAIN;
pub use shadow::{ShadowCull, ShadowViews, SHADOW_VIEWS_SYSTEM};
pub use size::{is_near_enough, max_distance_sq, ScreenSizeCull};
pub use soa::{AabbBlock, AabbSlices, AabbSoa, SphereSlices, SphereSoa};
pub use view::{CullParams, CullVerdict, ViewCullContext};
pub use visibility::{
    install, visibility_system, visibility_tags_system, Explanation, FrustumPlane, Kept, ListsRefused, LodChoice,
    Missing, ObjectColumns, ObjectDraw, ObjectState, Reason, SlotChanges, ViewVisibility, Visibility, VisibilityStats,
    VISIBILITY_SYSTEM, VISIBILITY_TAGS_SYSTEM,
};
