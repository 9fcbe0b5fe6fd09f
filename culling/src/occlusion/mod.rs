//! CPU occlusion culling: a software depth raster of occluders, a reversed-Z min pyramid
//! and the conservative test of every object that survived the frustum.
//!
//! Per view and frame ([`OcclusionCuller`]):
//!
//! 1. **Select** occluders ([`OccluderSelector`]): objects with a registered
//!    [`OccluderMesh`] whose projected size reaches a threshold, nearest first, within a
//!    triangle budget.
//! 2. **Set up** each occluder on the job system: a small convex occluder entirely beyond
//!    the near plane becomes one silhouette polygon with its exact front depth; any other
//!    occluder becomes its front-facing triangles, clipped to the near plane.
//! 3. **Bin** the primitives into 32x16-pixel tiles and **rasterize** the tiles in parallel
//!    (AVX2 with a scalar twin) into a small reversed-Z buffer (default 256x128; the
//!    Visibility stage gives it the view's aspect, see [`fit_buffer`]) cleared to 0,
//!    infinitely far. The raster is conservative: a primitive writes only pixels it
//!    covers *entirely*, and writes there a value no nearer than its farthest depth in the
//!    pixel (see `setup.rs` for the bounds). Each primitive is trimmed to each tile first
//!    (`tile_plan.rs`: edges that hold over the tile dropped, primitives nowhere nearer
//!    than the tile's farthest depth skipped) without changing a bit.
//! 4. **Build** the min pyramid: each texel keeps the farthest (smallest) depth of its
//!    block; beside each level, 16-bit 2x2 "windows" for a one-read first test.
//!
//!    Past 64 occluders, steps 2 to 4 run twice (`hidden_occluders.rs`): for the nearest
//!    quarter, then for the rest less those whose world box step 5 already proves hidden
//!    (not even set up); the buffer is the same as one pass over all.
//! 5. **Test** each object ([`OcclusionVerdict`]): near-plane crossings and non-finite
//!    bounds are kept; otherwise it is occluded only when its nearest depth is smaller than
//!    the pyramid's minimum over its whole footprint. The batch forms (AVX2) read one
//!    window texel per object first and fall back to the exact reads for what it leaves.
//!
//! False-visible is allowed, false-hidden never: every step above leans towards keeping,
//! and the tests compare against an exact full-resolution raster ([`reference`](mod@reference)).
//!
//! ```
//! use culling::occlusion::{OccluderInstance, OccluderMesh, OccluderMeshes, OcclusionCuller, OcclusionVerdict};
//! use culling::Aabb;
//! use ecs::MeshHandle;
//! use glam::{Mat4, Vec3};
//! let mut meshes = OccluderMeshes::new();
//! let wall = Aabb::new(Vec3::new(-5.0, -5.0, -11.0), Vec3::new(5.0, 5.0, -10.0));
//! meshes.insert(MeshHandle(0), OccluderMesh::from_box(&wall).expect("a valid box"));
//! let view_projection = Mat4::perspective_infinite_reverse_rh(1.0, 2.0, 0.1);
//! let mut culler = OcclusionCuller::default();
//! culler.rasterize(view_projection, &meshes, &[OccluderInstance { mesh: MeshHandle(0), world: Mat4::IDENTITY }]);
//! let behind = Aabb::new(Vec3::new(-0.5, -0.5, -21.0), Vec3::new(0.5, 0.5, -20.0));
//! let in_front = Aabb::new(Vec3::new(-0.5, -0.5, -6.0), Vec3::new(0.5, 0.5, -5.0));
//! assert_eq!(culler.test_aabb(&behind), OcclusionVerdict::Occluded);
//! assert_eq!(culler.test_aabb(&in_front), OcclusionVerdict::Visible);
//! ```

// `!(a > b)` is how these files say "unless proven": a NaN fails the comparison and so falls
// to the safe side, which `a <= b` would not do.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

mod box_test;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod box_test_avx2;
mod buffer_size;
mod hidden_occluders;
mod inner_box;
mod levels;
mod occluders;
mod project;
mod pyramid;
mod raster;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod raster_avx2;
pub mod reference;
mod registry;
mod setup;
pub(crate) mod stage;
mod tile;
mod tile_plan;
mod verdicts;

use std::fmt;

use ecs::Aabb;
use glam::{DVec2, Mat4, Vec3};

pub use buffer_size::fit_buffer;
pub use levels::{inner_box_of_level, streamed_occluder};
pub use occluders::{
    OccluderCandidate, OccluderInstance, OccluderMesh, OccluderSelector, MAX_HULL_FACES, MAX_HULL_VERTICES,
};
pub use registry::OccluderMeshes;
pub use tile::{TILE_HEIGHT, TILE_WIDTH};
pub use verdicts::FOOTPRINT_TEXELS;

use crate::soa::AabbSlices;
use crate::Kernel;
use pyramid::MinPyramid;
use raster::TiledDepth;
use setup::{InstanceSetup, Primitive, ViewSetup};

/// Default buffer width in pixels.
pub const DEFAULT_WIDTH: usize = 256;
/// Default buffer height in pixels.
pub const DEFAULT_HEIGHT: usize = 128;
/// Largest buffer side accepted.
pub const MAX_SIDE: usize = 4096;
/// Objects per job of the batch tests.
pub const TEST_GRAIN: usize = 4096;
/// Primitives per job of the occluder setup: a silhouette costs a few hundred nanoseconds,
/// so small jobs keep both threads busy when a city has a few hundred of them.
const PRIMITIVE_GRAIN: usize = 32;
/// Occluders per job of the second pass's test (a few hundred occluders: several jobs).
const OCCLUDER_TEST_GRAIN: usize = 128;
/// How many occluders ahead the setup loops prefetch mesh data.
const PREFETCH_AHEAD: usize = 4;

/// What the occlusion test says of one object. The GPU occlusion pass uses the same three
/// classes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OcclusionVerdict {
    /// Not proven hidden: drawn.
    #[default]
    Visible,
    /// Every pixel of its footprint holds an occluder nearer than its nearest point.
    Occluded,
    /// Drawn because the test cannot judge it: it reaches the near or camera plane, or its
    /// bounds (or the view) are not finite.
    KeptConservatively,
}

/// What the occlusion test read for one box, for an explanation ([`OcclusionCuller::detail`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OcclusionDetail {
    /// The verdict (the batch test's for the same box).
    pub verdict: OcclusionVerdict,
    /// What the pyramid said, when the box was judged against it (`None`: kept without a
    /// read, or off the buffer).
    pub read: Option<OcclusionRead>,
    /// The depth buffer's size, pixels (mip 0 of the pyramid).
    pub buffer: [u32; 2],
}

/// The pyramid read that decided an occlusion verdict. Depths are reversed-Z (1 at the near
/// plane, 0 infinitely far): the box is hidden when every texel over its footprint is nearer,
/// that is when `occluder_depth > nearest_depth`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OcclusionRead {
    /// The pyramid level (mip) read.
    pub level: u32,
    /// Texels read on that level, across and down.
    pub texels: [u32; 2],
    /// The farthest occluder depth over the footprint on that level (the smallest texel).
    pub occluder_depth: f32,
    /// The box's nearest depth (its nearest corner's, raised by the rounding margin).
    pub nearest_depth: f32,
}

/// Counts of one batch test.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OcclusionStats {
    /// Objects tested.
    pub tested: usize,
    /// Objects found occluded.
    pub occluded: usize,
    /// Objects kept because they could not be judged.
    pub kept_conservatively: usize,
}

impl OcclusionStats {
    fn count(&mut self, verdict: OcclusionVerdict) {
        self.tested += 1;
        match verdict {
            OcclusionVerdict::Visible => {}
            OcclusionVerdict::Occluded => self.occluded += 1,
            OcclusionVerdict::KeptConservatively => self.kept_conservatively += 1,
        }
    }
}

/// What a raster pass drew.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RasterStats {
    /// Occluders given.
    pub occluders: usize,
    /// Occluders drawn as one convex silhouette.
    pub silhouettes: usize,
    /// Primitives that reached the tiles (silhouettes and front triangles).
    pub primitives: usize,
    /// Occluders not drawn because the nearer ones already hide them (their world box
    /// passes the object test against the first pass; see [`OcclusionCuller::rasterize`]).
    pub hidden: usize,
}

/// An error a caller of the occlusion cull can cause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OcclusionError {
    /// The depth buffer size is unusable.
    BadSize {
        /// Requested width.
        width: usize,
        /// Requested height.
        height: usize,
    },
    /// An occluder mesh is malformed.
    BadMesh(&'static str),
    /// A render mesh has more triangles than an occluder may.
    TooDetailed {
        /// Triangles of the mesh.
        triangles: usize,
        /// Triangles allowed.
        budget: usize,
    },
}

impl fmt::Display for OcclusionError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OcclusionError::BadSize { width, height } => write!(
                formatter,
                "occlusion buffer {width}x{height}: the width must be a positive multiple of 8 and both sides at most {MAX_SIDE}"
            ),
            OcclusionError::BadMesh(why) => write!(formatter, "bad occluder mesh: {why}"),
            OcclusionError::TooDetailed { triangles, budget } => {
                write!(formatter, "a mesh of {triangles} triangles exceeds the occluder budget of {budget}; author an occluder")
            }
        }
    }
}

impl std::error::Error for OcclusionError {}

/// The CPU occlusion cull of one view: its depth buffer, pyramid and scratch, kept between
/// frames so a steady frame allocates nothing.
#[derive(Clone, Debug)]
pub struct OcclusionCuller {
    depth: TiledDepth,
    pyramid: MinPyramid,
    kernel: Kernel,
    view_projection: Mat4,
    view_finite: bool,
    instances: Vec<InstanceSetup>,
    unit_starts: Vec<usize>,
    primitives: Vec<Primitive>,
    /// Second pass: one bit per remaining occluder, testable ones (`tested_words`) and
    /// those found hidden (`hidden_words`).
    tested_words: Vec<u64>,
    hidden_words: Vec<u64>,
}

impl Default for OcclusionCuller {
    /// A 256x128 culler with the detected kernel.
    fn default() -> Self {
        OcclusionCuller::new(DEFAULT_WIDTH, DEFAULT_HEIGHT).expect("the default size is valid")
    }
}

impl OcclusionCuller {
    /// A culler with a `width` x `height` depth buffer and the detected kernel
    /// ([`Kernel::detect`]). Everything is visible until the first raster.
    ///
    /// # Errors
    /// [`OcclusionError::BadSize`] unless `width` is a positive multiple of 8, `height` is
    /// positive, and both are at most [`MAX_SIDE`].
    pub fn new(width: usize, height: usize) -> Result<OcclusionCuller, OcclusionError> {
        if width == 0 || !width.is_multiple_of(tile::LANES) || height == 0 || width > MAX_SIDE || height > MAX_SIDE {
            return Err(OcclusionError::BadSize { width, height });
        }
        Ok(OcclusionCuller {
            depth: TiledDepth::new(width, height),
            pyramid: MinPyramid::new(width, height),
            kernel: Kernel::detect(),
            view_projection: Mat4::IDENTITY,
            view_finite: true,
            instances: Vec::new(),
            unit_starts: Vec::new(),
            primitives: Vec::new(),
            tested_words: Vec::new(),
            hidden_words: Vec::new(),
        })
    }

    /// Uses `kernel` for the tile raster and the batch projection of occludees (the scalar
    /// reference, or AVX2 where supported; the portable choice runs the scalar kernels).
    pub fn set_kernel(&mut self, kernel: Kernel) {
        self.kernel = kernel;
    }

    /// Buffer width in pixels.
    pub fn width(&self) -> usize {
        self.depth.width()
    }

    /// Buffer height in pixels.
    pub fn height(&self) -> usize {
        self.depth.height()
    }

    /// Number of pyramid levels (the buffer included).
    pub fn level_count(&self) -> usize {
        self.pyramid.level_count()
    }

    /// The depth stored at pixel `(x, y)` of the buffer (0 where nothing was drawn).
    ///
    /// # Panics
    /// When the pixel is outside the buffer.
    pub fn depth(&self, x: usize, y: usize) -> f32 {
        assert!(x < self.width() && y < self.height(), "pixel ({x}, {y}) is outside the occlusion buffer");
        self.depth.at(x, y)
    }

    /// Rasterizes `occluders` (instances of meshes registered in `meshes`; unknown meshes
    /// are skipped) for the view `view_projection` and rebuilds the pyramid. Runs on the
    /// current job system ([`runtime::JobSystem::install`] picks another).
    ///
    /// Give the occluders nearest first (as [`OccluderSelector`] does): past 64 of them,
    /// the nearest quarter is drawn
    /// first and each other occluder whose world box that pass already hides is not set up
    /// at all ([`RasterStats::hidden`]); the buffer is the same as drawing them all.
    ///
    /// A non-finite view draws nothing and makes every later test keep its object.
    pub fn rasterize(
        &mut self,
        view_projection: Mat4,
        meshes: &OccluderMeshes,
        occluders: &[OccluderInstance],
    ) -> RasterStats {
        runtime::profile_zone!("occlusion raster");
        self.view_projection = view_projection;
        self.view_finite = view_projection.is_finite();
        let occluders = if self.view_finite { occluders } else { &[] };
        let mut stats = RasterStats { occluders: occluders.len(), ..RasterStats::default() };
        // Two passes (see `hidden_occluders.rs`): the nearest occluders, then those of the
        // rest that the first pass's pyramid does not prove hidden.
        let (nearest, rest) = occluders.split_at(hidden_occluders::first_pass_len(occluders.len()));
        self.draw(meshes, nearest, true, &[], &mut stats);
        self.pyramid.build(&self.depth);
        if rest.is_empty() {
            return stats;
        }
        // Testable occluders (a mesh, an affine world) get a bit; the test clears the bits of
        // those hidden; the hidden ones are skipped.
        let (mut tested, mut hidden) = (std::mem::take(&mut self.tested_words), std::mem::take(&mut self.hidden_words));
        tested.resize(rest.len().div_ceil(64), 0);
        hidden.resize(rest.len().div_ceil(64), 0);
        hidden_occluders::testable(meshes, rest, &mut tested);
        hidden.copy_from_slice(&tested);
        let found = self.target().cull_bits(&mut hidden, OCCLUDER_TEST_GRAIN, |index| {
            let occluder = &rest[index];
            let bounds = meshes.get(occluder.mesh).map_or((Vec3::ZERO, Vec3::ZERO), OccluderMesh::bounds);
            // Only testable occluders (a mesh, an affine world) have their bit set.
            hidden_occluders::world_box(&occluder.world, bounds).unwrap_or((Vec3::ZERO, Vec3::splat(f32::NAN)))
        });
        // The test cleared the bits of the hidden ones: those are the ones to skip.
        for (hidden, tested) in hidden.iter_mut().zip(&tested) {
            *hidden = tested & !*hidden;
        }
        stats.hidden = found.occluded;
        self.draw(meshes, rest, false, &hidden, &mut stats);
        (self.tested_words, self.hidden_words) = (tested, hidden);
        self.pyramid.build(&self.depth);
        stats
    }

    /// Sets up and rasterizes `occluders` (clearing the buffer first when `clear`), except
    /// those whose bit is set in `skip` (one bit per occluder, or empty), and counts what
    /// it drew into `stats`.
    fn draw(
        &mut self,
        meshes: &OccluderMeshes,
        occluders: &[OccluderInstance],
        clear: bool,
        skip: &[u64],
        stats: &mut RasterStats,
    ) {
        let size = DVec2::new(self.width() as f64, self.height() as f64);
        let skipped = |index: usize| skip.get(index / 64).is_some_and(|word| word >> (index % 64) & 1 == 1);
        // Per occluder: its transform, eye and kind, in parallel. Every slot is written
        // below, so a steady frame keeps the old ones rather than clearing them first.
        let view = ViewSetup::new(&self.view_projection);
        self.instances.resize(occluders.len(), InstanceSetup::UNUSABLE);
        let _job_label = runtime::profiling::job_label("occlusion instances job");
        runtime::jobs::parallel_for_chunks(&mut self.instances, 64, |first, chunk| {
            for (offset, setup) in chunk.iter_mut().enumerate() {
                // Each mesh is its own allocation: start loading a few occluders ahead.
                if let Some(ahead) = occluders.get(first + offset + PREFETCH_AHEAD) {
                    meshes.get(ahead.mesh).map(OccluderMesh::prefetch);
                }
                let occluder = &occluders[first + offset];
                match meshes.get(occluder.mesh) {
                    Some(mesh) if !skipped(first + offset) => setup.prepare(&view, &occluder.world, mesh),
                    // Only the flag: the other fields of an unusable setup are never read.
                    _ => setup.usable = false,
                }
            }
        });
        // One primitive slot per triangle, or one for a whole silhouette.
        self.unit_starts.clear();
        let mut units = 0;
        for (occluder, setup) in occluders.iter().zip(&self.instances) {
            self.unit_starts.push(units);
            units += match (setup.usable, setup.silhouette, meshes.get(occluder.mesh)) {
                (false, _, _) | (_, _, None) => 0,
                (true, true, Some(_)) => 1,
                (true, false, Some(mesh)) => mesh.triangle_count(),
            };
        }
        // Every slot is written (or emptied) by its setup below.
        self.primitives.resize(units, Primitive::EMPTY);
        let (instances, unit_starts) = (&self.instances, &self.unit_starts);
        let _job_label = runtime::profiling::job_label("occlusion primitives job");
        runtime::jobs::parallel_for_chunks(&mut self.primitives, PRIMITIVE_GRAIN, |first, chunk| {
            let mut owner = unit_starts.partition_point(|&start| start <= first) - 1;
            for (offset, slot) in chunk.iter_mut().enumerate() {
                let unit = first + offset;
                while owner + 1 < unit_starts.len() && unit_starts[owner + 1] <= unit {
                    owner += 1;
                    if let Some(ahead) = occluders.get(owner + PREFETCH_AHEAD) {
                        meshes.get(ahead.mesh).map(OccluderMesh::prefetch);
                    }
                }
                let setup = &instances[owner];
                let mesh = meshes.get(occluders[owner].mesh).expect("only occluders with a mesh own slots");
                if setup.silhouette {
                    setup::setup_silhouette(setup, mesh, size, slot);
                } else {
                    setup::setup_triangle(setup, mesh, unit - unit_starts[owner], size, slot);
                }
            }
        });
        self.depth.bin(&self.primitives);
        self.depth.rasterize(&self.primitives, self.kernel, clear);
        stats.silhouettes += self.instances.iter().filter(|setup| setup.usable && setup.silhouette).count();
        stats.primitives += self.primitives.iter().filter(|primitive| primitive.edge_count > 0).count();
    }

    fn target(&self) -> box_test::TestTarget<'_> {
        box_test::TestTarget {
            rows: project::Rows::new(&self.view_projection),
            view_finite: self.view_finite,
            kernel: self.kernel,
            size: self.depth.size(),
            pyramid: &self.pyramid,
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            table: box_test_avx2::LevelTable::new(&self.pyramid),
        }
    }

    /// Classifies one world-space box against the last raster.
    pub fn test_aabb(&self, aabb: &Aabb) -> OcclusionVerdict {
        self.target().test(aabb.center(), aabb.half_extent())
    }

    /// [`OcclusionCuller::test_aabb`] with what the test read: the mip, the occluder depth
    /// against the box's nearest depth.
    pub fn detail(&self, aabb: &Aabb) -> OcclusionDetail {
        let target = self.target();
        target.detail(&project::project_scalar(&target.rows, aabb.center().to_array(), aabb.half_extent().to_array()))
    }

    /// Classifies every box of `boxes` into `verdicts`, in parallel on the current job
    /// system, and counts the classes.
    ///
    /// # Panics
    /// When `verdicts.len() != boxes.len()`.
    pub fn classify(&self, boxes: AabbSlices<'_>, verdicts: &mut [OcclusionVerdict]) -> OcclusionStats {
        runtime::profile_zone!("occlusion classify");
        self.target().classify(boxes, verdicts, TEST_GRAIN)
    }

    /// Tests the boxes whose bit is set in `words` (one bit per box, as in
    /// [`crate::VisibilityBits`]) and clears the bits of the occluded ones, in parallel on
    /// the current job system.
    ///
    /// # Panics
    /// When `words.len() != boxes.len().div_ceil(64)`.
    pub fn cull_bits(&self, boxes: AabbSlices<'_>, words: &mut [u64]) -> OcclusionStats {
        runtime::profile_zone!("occlusion test");
        assert_eq!(words.len(), boxes.len().div_ceil(64), "one bit per box");
        self.target().cull_bits_soa(boxes, words, TEST_GRAIN)
    }

    /// [`OcclusionCuller::cull_bits`] over an array of boxes.
    ///
    /// # Panics
    /// When `words.len() != boxes.len().div_ceil(64)`.
    pub fn cull_bits_aabbs(&self, boxes: &[Aabb], words: &mut [u64]) -> OcclusionStats {
        runtime::profile_zone!("occlusion test");
        assert_eq!(words.len(), boxes.len().div_ceil(64), "one bit per box");
        self.target().cull_bits(words, TEST_GRAIN, |index| (boxes[index].center(), boxes[index].half_extent()))
    }
}

#[cfg(test)]
mod tests;
