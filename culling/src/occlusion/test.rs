//! The occlusion test of one object against the pyramid, and its batch forms.
//!
//! For an axis-aligned box that survived the frustum:
//!
//! 1. Non-finite bounds are kept (and counted), never culled.
//! 2. The eight corners are projected. A corner with `w` at or below a small epsilon, or at
//!    or in front of the near plane (`z >= w` in reversed-Z), means the box reaches the
//!    camera plane: it is kept, whatever the pyramid says.
//! 3. The footprint is the pixel rectangle of the corners' screen bounds (widened by a
//!    rounding margin and clipped to the buffer; off-screen parts are not visible anyway).
//!    The nearest depth is the largest reversed-Z value of the corners (depth is monotone
//!    in view distance, and the nearest point of a box is one of its corners), raised by a
//!    rounding margin.
//! 4. The level is the finest one on which the footprint spans at most
//!    [`FOOTPRINT_TEXELS`] texels per axis; every texel it touches is read. A pyramid texel
//!    is at most every depth it covers, so if the object's nearest depth is smaller than all
//!    of them, every pixel of its footprint holds an occluder nearer than any point of it.

use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{Mat4, Vec2, Vec3, Vec4};

use super::pyramid::MinPyramid;
use super::raster::TiledDepth;
use super::{OcclusionStats, OcclusionVerdict};
use crate::bits::BITS_PER_WORD;
use crate::soa::AabbSlices;

/// Most texels per axis the footprint may span on the level chosen for it.
pub const FOOTPRINT_TEXELS: usize = 4;
/// Smallest `w` of a corner that still counts as in front of the camera plane.
const MIN_W: f32 = 1.0e-6;
/// Footprint widening in buffer pixels, for the `f32` rounding of the projection.
const FOOTPRINT_MARGIN: f32 = 1.0e-2;
/// Relative raise of the nearest depth, for the same rounding.
const DEPTH_MARGIN: f32 = 4.0e-6;

/// What the test reads: the view, the buffer and its pyramid.
pub(crate) struct TestTarget<'a> {
    pub view_projection: Mat4,
    pub view_finite: bool,
    pub size: Vec2,
    pub depth: &'a TiledDepth,
    pub pyramid: &'a MinPyramid,
}

impl TestTarget<'_> {
    /// Classifies the box of centre `center` and half extents `half`.
    #[inline]
    pub fn test(&self, center: Vec3, half: Vec3) -> OcclusionVerdict {
        // Step 1: non-finite bounds (or view) are kept.
        if !(self.view_finite && center.is_finite() && half.is_finite()) {
            return OcclusionVerdict::KeptConservatively;
        }
        let half = half.abs();
        let matrix = &self.view_projection;
        let middle = *matrix * center.extend(1.0);
        let axes = [matrix.x_axis * half.x, matrix.y_axis * half.y, matrix.z_axis * half.z];
        // Step 2: project the corners; any at or before the camera or near plane keeps it.
        let (mut low, mut high, mut nearest) = (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY), 0.0f32);
        for corner in 0..8 {
            let pick = |bit: usize, axis: Vec4| if corner & bit == 0 { -axis } else { axis };
            let clip = middle + pick(1, axes[0]) + pick(2, axes[1]) + pick(4, axes[2]);
            if !(clip.w > MIN_W && clip.z < clip.w) {
                return OcclusionVerdict::KeptConservatively;
            }
            let inverse_w = 1.0 / clip.w;
            let screen = Vec2::new(clip.x, clip.y) * inverse_w;
            low = low.min(screen);
            high = high.max(screen);
            nearest = nearest.max(clip.z * inverse_w);
        }
        if !(low.is_finite() && high.is_finite() && nearest.is_finite()) {
            return OcclusionVerdict::KeptConservatively;
        }
        // Step 3: the footprint in pixels, clipped to the buffer.
        let low = (low * 0.5 + 0.5) * self.size - FOOTPRINT_MARGIN;
        let high = (high * 0.5 + 0.5) * self.size + FOOTPRINT_MARGIN;
        if high.x < 0.0 || high.y < 0.0 || low.x >= self.size.x || low.y >= self.size.y {
            // Off the buffer entirely: the frustum's call, not ours.
            return OcclusionVerdict::Visible;
        }
        let last = self.size - 1.0;
        let (x0, y0) = (low.x.max(0.0) as usize, low.y.max(0.0) as usize);
        let (x1, y1) = (high.x.min(last.x) as usize, high.y.min(last.y) as usize);
        let nearest = nearest + nearest.abs() * DEPTH_MARGIN + f32::MIN_POSITIVE;
        // Step 4: the finest level where the footprint spans at most FOOTPRINT_TEXELS texels.
        let mut level = 0;
        while (x1 >> level) - (x0 >> level) >= FOOTPRINT_TEXELS || (y1 >> level) - (y0 >> level) >= FOOTPRINT_TEXELS {
            level += 1;
        }
        for y in (y0 >> level)..=(y1 >> level) {
            for x in (x0 >> level)..=(x1 >> level) {
                // Occluded needs every texel strictly farther... than the object's nearest
                // point, i.e. every stored value strictly larger; anything else keeps it.
                if !(self.pyramid.at(self.depth, level, x, y) > nearest) {
                    return OcclusionVerdict::Visible;
                }
            }
        }
        OcclusionVerdict::Occluded
    }

    /// Writes one verdict per box of `boxes`, in parallel on the current job system.
    pub fn classify(&self, boxes: AabbSlices<'_>, verdicts: &mut [OcclusionVerdict], grain: usize) -> OcclusionStats {
        assert_eq!(verdicts.len(), boxes.len(), "one verdict per box");
        let stats = SharedStats::default();
        runtime::jobs::parallel_for_chunks(verdicts, grain, |first, chunk| {
            let mut local = OcclusionStats::default();
            for (offset, verdict) in chunk.iter_mut().enumerate() {
                *verdict = self.test(box_center(&boxes, first + offset), box_half(&boxes, first + offset));
                local.count(*verdict);
            }
            stats.add(local);
        });
        stats.total()
    }

    /// Tests the boxes whose bit is set in `words` and clears the bits of those occluded;
    /// `box_of(i)` gives box `i`'s centre and half extents.
    pub fn cull_bits(
        &self,
        words: &mut [u64],
        grain: usize,
        box_of: impl Fn(usize) -> (Vec3, Vec3) + Sync,
    ) -> OcclusionStats {
        let stats = SharedStats::default();
        let grain_words = grain.div_ceil(BITS_PER_WORD).max(1);
        runtime::jobs::parallel_for_chunks(words, grain_words, |first_word, chunk| {
            let mut local = OcclusionStats::default();
            for (offset, word) in chunk.iter_mut().enumerate() {
                let base = (first_word + offset) * BITS_PER_WORD;
                let mut remaining = *word;
                while remaining != 0 {
                    let bit = remaining.trailing_zeros() as usize;
                    remaining &= remaining - 1;
                    let (center, half) = box_of(base + bit);
                    let verdict = self.test(center, half);
                    local.count(verdict);
                    if verdict == OcclusionVerdict::Occluded {
                        *word &= !(1u64 << bit);
                    }
                }
            }
            stats.add(local);
        });
        stats.total()
    }
}

/// Centre of box `index`.
#[inline]
pub(crate) fn box_center(boxes: &AabbSlices<'_>, index: usize) -> Vec3 {
    Vec3::new(boxes.center[0][index], boxes.center[1][index], boxes.center[2][index])
}

/// Half extents of box `index`.
#[inline]
pub(crate) fn box_half(boxes: &AabbSlices<'_>, index: usize) -> Vec3 {
    Vec3::new(boxes.half[0][index], boxes.half[1][index], boxes.half[2][index])
}

/// Totals the jobs report; relaxed atomics, since only the sum is read after the join.
#[derive(Default)]
struct SharedStats {
    tested: AtomicUsize,
    occluded: AtomicUsize,
    kept_conservatively: AtomicUsize,
}

impl SharedStats {
    fn add(&self, stats: OcclusionStats) {
        self.tested.fetch_add(stats.tested, Ordering::Relaxed);
        self.occluded.fetch_add(stats.occluded, Ordering::Relaxed);
        self.kept_conservatively.fetch_add(stats.kept_conservatively, Ordering::Relaxed);
    }

    fn total(&self) -> OcclusionStats {
        OcclusionStats {
            tested: self.tested.load(Ordering::Relaxed),
            occluded: self.occluded.load(Ordering::Relaxed),
            kept_conservatively: self.kept_conservatively.load(Ordering::Relaxed),
        }
    }
}
