//! Cluster (meshlet) culling, CPU reference: the per-meshlet tests the GPU cluster pass
//! (`renderer::ClusterCullPass`, feature `gpu`) runs, written scalar and simple so that
//! tests can use them as the oracle.
//!
//! A meshlet of an object is tested in this order, cheapest first, each test conservative
//! (it keeps whatever it cannot prove invisible):
//!
//! 1. **object**: the object's box against the frustum and the Hi-Z pyramid (the object pass);
//!    a rejected object rejects all its meshlets with the same reason;
//! 2. **frustum**: the meshlet's bounding sphere, carried to world space with a radius that
//!    bounds any affine stretch ([`world_sphere`]), against the frustum planes;
//! 3. **cone**: meshopt's normal cone, tested in mesh space ([`cone_rejects`]);
//! 4. **occlusion**: the meshlet's box, carried to world space, against the Hi-Z pyramid
//!    ([`occlusion_test`]); a box the pyramid cannot judge (it reaches the near or camera
//!    plane, or is not finite) is kept as [`ClusterVerdict::Conservative`].
//!
//! The GPU twin of every step is in `shaders/glsl/engine/cluster_cull.h`.

// `!(a < b)` is how these tests say "NaN keeps the meshlet": every comparison with NaN is
// false, so the negated form is the conservative one, as in the GLSL twins.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

mod classify;
mod cone;
mod hiz;
mod sphere;
mod stats;
#[cfg(test)]
mod tests;

pub use classify::{classify_cluster, classify_object, ClusterSettings, ClusterView, ObjectVerdict};
pub use cone::{cone_rejects, mesh_space_eye, view_eye};
pub use hiz::{occlusion_test, HiZLevels, OcclusionAnswer};
pub use sphere::{max_stretch, sphere_outside, world_box, world_sphere};
pub use stats::{ClusterStats, CLUSTER_STAT_WORDS};

/// Relative widening of a meshlet's world radius and box for `f32` rounding of the
/// transform.
pub const BOUNDS_MARGIN: f32 = 1.0e-5;

/// Added to meshopt's cone cutoff before a cone may reject: covers the rounding of the
/// inverse transform that brings the eye into mesh space.
pub const CONE_MARGIN: f32 = 1.0e-3;

/// Margins of the tests. The GPU uses [`ClusterMargins::GPU`]; a test oracle may use
/// [`ClusterMargins::NONE`], which rejects at least what the GPU rejects, so that "the GPU
/// keeps everything the oracle keeps" survives the last bit of rounding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClusterMargins {
    /// Relative widening of world spheres and boxes ([`BOUNDS_MARGIN`]).
    pub bounds: f32,
    /// Added to the cone cutoff ([`CONE_MARGIN`]).
    pub cone: f32,
    /// Relative raise of a box's nearest depth (`renderer::DEPTH_MARGIN` on the GPU).
    pub depth: f32,
    /// Footprint widening in texels (`renderer::FOOTPRINT_MARGIN` on the GPU).
    pub footprint: f32,
}

impl ClusterMargins {
    /// The margins of the GPU pass.
    pub const GPU: ClusterMargins =
        ClusterMargins { bounds: BOUNDS_MARGIN, cone: CONE_MARGIN, depth: 4.0e-6, footprint: 1.0e-2 };
    /// No margin at all.
    pub const NONE: ClusterMargins = ClusterMargins { bounds: 0.0, cone: 0.0, depth: 0.0, footprint: 0.0 };
}

impl Default for ClusterMargins {
    fn default() -> Self {
        ClusterMargins::GPU
    }
}

/// What cluster culling decided for one meshlet. The discriminants are the codes the GPU
/// writes (`VERDICT_*` in `cluster_cull.h`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ClusterVerdict {
    /// Not classified (no thread wrote it).
    #[default]
    Untested = 0,
    /// Passed every test: drawn.
    Visible = 1,
    /// Outside the frustum (its sphere, or its object's box): not drawn.
    Frustum = 2,
    /// Every triangle faces away from the camera (normal cone): not drawn.
    BackFacing = 3,
    /// Hidden behind the Hi-Z pyramid (the meshlet's box, or its object's): not drawn.
    Occluded = 4,
    /// Passed frustum and cone, and the occlusion test could not judge it: drawn.
    Conservative = 5,
}

impl ClusterVerdict {
    /// Every verdict, by code.
    pub const ALL: [ClusterVerdict; 6] = [
        ClusterVerdict::Untested,
        ClusterVerdict::Visible,
        ClusterVerdict::Frustum,
        ClusterVerdict::BackFacing,
        ClusterVerdict::Occluded,
        ClusterVerdict::Conservative,
    ];

    /// The verdict of a GPU code; an unknown code is [`ClusterVerdict::Untested`].
    pub fn from_code(code: u32) -> ClusterVerdict {
        ClusterVerdict::ALL.get(code as usize).copied().unwrap_or_default()
    }

    /// Whether the meshlet is drawn.
    pub fn is_drawn(self) -> bool {
        matches!(self, ClusterVerdict::Visible | ClusterVerdict::Conservative)
    }

    /// The classification view's colour (RGBA8): visible green, frustum red, back-facing
    /// purple, occluded blue, conservative amber, untested grey.
    pub fn color(self) -> [u8; 4] {
        match self {
            ClusterVerdict::Untested => [128, 128, 128, 255],
            ClusterVerdict::Visible => [40, 200, 60, 255],
            ClusterVerdict::Frustum => [220, 40, 40, 255],
            ClusterVerdict::BackFacing => [150, 60, 200, 255],
            ClusterVerdict::Occluded => [50, 90, 230, 255],
            ClusterVerdict::Conservative => [240, 170, 20, 255],
        }
    }
}

/// The bounds of one meshlet in mesh space: meshopt's sphere and normal cone, and the box of
/// its vertices.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClusterBounds {
    /// Centre of the bounding sphere.
    pub center: [f32; 3],
    /// Radius of the bounding sphere.
    pub radius: f32,
    /// Apex of the normal cone.
    pub cone_apex: [f32; 3],
    /// Axis of the normal cone (unit).
    pub cone_axis: [f32; 3],
    /// meshopt's cutoff: back-facing when `dot(normalize(apex - eye), axis) >= cutoff`; 1 or
    /// more never rejects.
    pub cone_cutoff: f32,
    /// Minimum corner of the box of the meshlet's vertices.
    pub box_min: [f32; 3],
    /// Maximum corner of that box.
    pub box_max: [f32; 3],
}
