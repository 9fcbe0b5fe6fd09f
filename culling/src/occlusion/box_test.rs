//! The occlusion test of one object against the pyramid, and its batch forms.
//!
//! For an axis-aligned box that survived the frustum:
//!
//! 1. Non-finite bounds are kept (and counted), never culled.
//! 2. The eight corners are projected (`project.rs`, AVX2 with a scalar twin). A corner with `w` at or below a small epsilon, or at
//!    or in front of the near plane (`z >= w` in reversed-Z), means the box reaches the
//!    camera plane: it is kept, whatever the pyramid says.
//! 3. The footprint is the pixel rectangle of the corners' screen bounds (widened by a
//!    rounding margin and clipped to the buffer; off-screen parts are not visible anyway).
//!    The nearest depth is the largest reversed-Z value of the corners (depth is monotone
//!    in view distance, and the nearest point of a box is one of its corners), raised by a
//!    rounding margin.
//! 4. The texels over the footprint are read on the finest level where it spans at most
//!    2x2 texels, and if that does not prove it hidden, on the finest level where it spans
//!    at most [`FOOTPRINT_TEXELS`] texels per axis. A pyramid texel is at most every depth
//!    it covers, so if the object's nearest depth is smaller than all the texels of either
//!    level, every pixel of its footprint holds an occluder nearer than any point of it.
//!
//! The AVX2 batch (`box_test_avx2.rs`) settles most boxes in one read of the 2x2 level: its
//! window proves a box hidden, and its ceiling (the largest depth under the block, see
//! `pyramid.rs`) proves one seen when no occluder over it is nearer than the box, which is
//! most of what a camera sees where few occluders are drawn. Only the boxes it leaves go
//! through the reference above, so the verdicts are the reference's.

use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{Vec2, Vec3};

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use super::box_test_avx2::{coarse_finish, coarse_issue, coarse_occluded, LevelTable};
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use super::project::project_lanes_avx2;
use super::project::{project_scalar, Projected, Rows};
use super::pyramid::MinPyramid;
use super::verdicts::{BatchVerdicts, DEPTH_MARGIN, FOOTPRINT_MARGIN, FOOTPRINT_TEXELS};
use super::{OcclusionDetail, OcclusionRead, OcclusionStats, OcclusionVerdict};
use crate::bits::BITS_PER_WORD;
use crate::soa::AabbSlices;
use crate::Kernel;

/// What the test reads: the view, the buffer and its pyramid.
pub(crate) struct TestTarget<'a> {
    pub rows: Rows,
    pub view_finite: bool,
    pub kernel: Kernel,
    pub size: Vec2,
    pub pyramid: &'a MinPyramid,
    /// Where the pyramid's levels lie, for the AVX2 batch read.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    pub table: LevelTable,
}

impl TestTarget<'_> {
    /// Classifies the box of centre `center` and half extents `half`.
    #[inline]
    pub fn test(&self, center: Vec3, half: Vec3) -> OcclusionVerdict {
        self.judge(&project_scalar(&self.rows, center.to_array(), half.to_array()))
    }

    /// Classifies a projected box (steps 1 and 2 of the module docs are in the projection).
    #[inline]
    pub fn judge(&self, projected: &Projected) -> OcclusionVerdict {
        self.judge_from(projected, false)
    }

    /// [`TestTarget::judge`] for a box whose 2x2 read is known to have failed
    /// ([`BatchVerdicts::coarse_failed`]): the same verdict, without that read again.
    #[inline]
    pub fn judge_after_coarse(&self, projected: &Projected) -> OcclusionVerdict {
        self.judge_from(projected, true)
    }

    /// Steps 1 to 3: the footprint (pixel rectangle, inclusive) and the nearest depth with its
    /// margin, or the verdict when the box is not judged against the pyramid.
    #[inline(always)]
    fn footprint(&self, projected: &Projected) -> Result<([usize; 4], f32), OcclusionVerdict> {
        // Steps 1 and 2: non-finite bounds or view, or a corner at the camera or near plane.
        if !(self.view_finite && projected.judgeable) {
            return Err(OcclusionVerdict::KeptConservatively);
        }
        let (low, high, nearest) = (Vec2::from(projected.low), Vec2::from(projected.high), projected.nearest);
        if !(low.is_finite() && high.is_finite() && nearest.is_finite()) {
            return Err(OcclusionVerdict::KeptConservatively);
        }
        // Step 3: the footprint in pixels, clipped to the buffer.
        let low = (low * 0.5 + 0.5) * self.size - FOOTPRINT_MARGIN;
        let high = (high * 0.5 + 0.5) * self.size + FOOTPRINT_MARGIN;
        if high.x < 0.0 || high.y < 0.0 || low.x >= self.size.x || low.y >= self.size.y {
            // Off the buffer entirely: the frustum's call, not ours.
            return Err(OcclusionVerdict::Visible);
        }
        // Clipped into [0, size): `low` is below the size and `high` at least 0 (just checked),
        // and neither is NaN (finite inputs; an overflow gives an infinity, which the clip
        // removes), so the truncations below are exact (`as` would add saturation checks).
        let (low, high) = (low.max(Vec2::ZERO), high.min(self.size - 1.0));
        let pixel = |value: f32| {
            debug_assert!((0.0..self.size.x.max(self.size.y)).contains(&value), "{value} is clipped");
            // SAFETY: `value` is finite and in [0, size) (above), which `u32` holds.
            unsafe { value.to_int_unchecked::<u32>() as usize }
        };
        let rect = [pixel(low.x), pixel(low.y), pixel(high.x), pixel(high.y)];
        Ok((rect, nearest + nearest.abs() * DEPTH_MARGIN + f32::MIN_POSITIVE))
    }

    /// Step 4's two levels for the footprint `rect`: the finest where it spans at most 2x2
    /// texels and the finest where it spans at most [`FOOTPRINT_TEXELS`] per axis.
    #[inline(always)]
    fn levels(rect: [usize; 4]) -> (usize, usize) {
        let [x0, y0, x1, y1] = rect;
        let span = |level: usize| ((x1 >> level) - (x0 >> level)).max((y1 >> level) - (y0 >> level));
        let mut fine = 0;
        while span(fine) >= FOOTPRINT_TEXELS {
            fine += 1;
        }
        let mut coarse = fine;
        while span(coarse) >= 2 {
            coarse += 1;
        }
        (coarse, fine)
    }

    /// The judge; with `coarse_failed`, step 4's first read is known to fail.
    #[inline(always)]
    fn judge_from(&self, projected: &Projected, coarse_failed: bool) -> OcclusionVerdict {
        let (rect, nearest) = match self.footprint(projected) {
            Ok(footprint) => footprint,
            Err(verdict) => return verdict,
        };
        // Step 4: first the finest level where the footprint spans at most 2x2 texels (four
        // reads prove most hidden objects hidden), then, if that fails, the finest level
        // where it spans at most FOOTPRINT_TEXELS per axis.
        let (coarse, fine) = Self::levels(rect);
        if coarse_failed {
            // Where the footprint spans at most 2x2 texels on the fine level already, that
            // level is the 2x2 read's, and it failed.
            if coarse == fine || !self.all_farther(fine, rect, nearest) {
                return OcclusionVerdict::Visible;
            }
            return OcclusionVerdict::Occluded;
        }
        if coarse != fine && self.all_farther(coarse, rect, nearest) {
            return OcclusionVerdict::Occluded;
        }
        if !self.all_farther(fine, rect, nearest) {
            return OcclusionVerdict::Visible;
        }
        OcclusionVerdict::Occluded
    }

    /// The reference test of a projected box with what it read (see [`OcclusionDetail`]):
    /// the level that decided (the 2x2 read's when it proved the box hidden, else the finer
    /// one) and the farthest occluder depth over the footprint there.
    pub fn detail(&self, projected: &Projected) -> OcclusionDetail {
        let buffer = [self.size.x as u32, self.size.y as u32];
        let (rect, nearest) = match self.footprint(projected) {
            Ok(footprint) => footprint,
            Err(verdict) => return OcclusionDetail { verdict, read: None, buffer },
        };
        let (coarse, fine) = Self::levels(rect);
        let level = if coarse != fine && self.all_farther(coarse, rect, nearest) { coarse } else { fine };
        let verdict =
            if self.all_farther(level, rect, nearest) { OcclusionVerdict::Occluded } else { OcclusionVerdict::Visible };
        let (width, texels) = self.pyramid.level(level);
        let mut farthest = f32::INFINITY;
        for y in (rect[1] >> level)..=(rect[3] >> level) {
            let row = &texels[y * width + (rect[0] >> level)..=y * width + (rect[2] >> level)];
            farthest = row.iter().fold(farthest, |farthest, &texel| farthest.min(texel));
        }
        let read = OcclusionRead {
            level: level as u32,
            texels: [(rect[2] >> level) - (rect[0] >> level) + 1, (rect[3] >> level) - (rect[1] >> level) + 1]
                .map(|side| side as u32),
            occluder_depth: farthest,
            nearest_depth: nearest,
        };
        OcclusionDetail { verdict, read: Some(read), buffer }
    }

    /// Whether every texel of `level` over the pixel rectangle `rect` (inclusive) stores a
    /// value strictly larger (nearer) than `nearest`; a NaN counts as not larger.
    #[inline]
    fn all_farther(&self, level: usize, rect: [usize; 4], nearest: f32) -> bool {
        let (width, texels) = self.pyramid.level(level);
        let (first, last) = (rect[0] >> level, rect[2] >> level);
        for y in (rect[1] >> level)..=(rect[3] >> level) {
            // One range check per row: the rectangle lies within the level.
            if !texels[y * width + first..=y * width + last].iter().all(|&texel| texel > nearest) {
                return false;
            }
        }
        true
    }

    /// Projects the boxes `first .. first + 8` of `boxes` into `out`, eight at once when
    /// the kernel is AVX2 and all eight exist, else one by one; returns what the batch read
    /// settled (see `TestTarget::batch_read`). `out` may be left unwritten when every lane of
    /// `mask` is proven occluded.
    #[inline]
    fn project_eight(
        &self,
        boxes: &AabbSlices<'_>,
        first: usize,
        mask: u64,
        out: &mut [Projected; 8],
    ) -> BatchVerdicts {
        let available = boxes.len().saturating_sub(first).min(8);
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if available == 8 && self.kernel.uses_avx2() {
            fn lanes(array: &[f32], first: usize) -> &[f32; 8] {
                array[first..first + 8].try_into().expect("eight boxes exist from `first`, checked above")
            }
            let center = boxes.center.map(|array| lanes(array, first));
            let half = boxes.half.map(|array| lanes(array, first));
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { self.batch_read(center, half, mask, out) };
        }
        for (lane, projected) in out.iter_mut().enumerate().take(available) {
            let index = first + lane;
            *projected =
                project_scalar(&self.rows, box_center(boxes, index).to_array(), box_half(boxes, index).to_array());
        }
        BatchVerdicts::default()
    }

    /// Projects eight boxes (centres and half extents by axis) and returns what the AVX2 2x2
    /// read settled; when some lane of `mask` is not proven occluded, writes all eight
    /// projections to `out` for the reference judge. One function, so the projection and
    /// the read inline into each other and the lanes stay in registers.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    #[target_feature(enable = "avx2")]
    unsafe fn batch_read(
        &self,
        center: [&[f32; 8]; 3],
        half: [&[f32; 8]; 3],
        mask: u64,
        out: &mut [Projected; 8],
    ) -> BatchVerdicts {
        // SAFETY: AVX2 is available (the caller's duty).
        let lanes = unsafe { project_lanes_avx2(&self.rows, center, half) };
        let read = if self.view_finite {
            // SAFETY: AVX2 is available (the caller's duty), and the table describes the
            // pyramid (both come from the same culler).
            unsafe { coarse_occluded(&lanes, self.size, self.pyramid, &self.table, mask as u32) }
        } else {
            BatchVerdicts::default()
        };
        if u64::from(read.settled()) & mask != mask {
            // SAFETY: AVX2 is available (the caller's duty).
            unsafe { lanes.store(out) };
        }
        read
    }

    /// Projects the boxes of `first .. first + 8` whose bit is set in `mask` (bit `lane`),
    /// gathered through `box_of`, eight at once when the kernel is AVX2; returns what the
    /// batch read settled, as [`TestTarget::project_eight`] does.
    #[inline]
    fn project_gathered(
        &self,
        first: usize,
        mask: u64,
        box_of: &impl Fn(usize) -> (Vec3, Vec3),
        out: &mut [Projected; 8],
    ) -> BatchVerdicts {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if self.kernel.uses_avx2() {
            let (mut center, mut half) = ([[0.0f32; 8]; 3], [[0.0f32; 8]; 3]);
            for lane in (0..8).filter(|lane| mask >> lane & 1 == 1) {
                let (box_center, box_half) = box_of(first + lane);
                for axis in 0..3 {
                    center[axis][lane] = box_center[axis];
                    half[axis][lane] = box_half[axis];
                }
            }
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe {
                self.batch_read([&center[0], &center[1], &center[2]], [&half[0], &half[1], &half[2]], mask, out)
            };
        }
        for lane in (0..8).filter(|lane| mask >> lane & 1 == 1) {
            let (center, half) = box_of(first + lane);
            out[lane] = project_scalar(&self.rows, center.to_array(), half.to_array());
        }
        BatchVerdicts::default()
    }

    /// Which of up to eight boxes are occluded (bits of `mask`; lane `lane`'s box is
    /// `box_of(lane)`): the batch projection and 2x2 read first (AVX2), then the judge for
    /// the lanes it did not prove, exactly as the per-object tests do.
    #[inline]
    pub fn occluded_lanes(&self, mask: u64, box_of: &impl Fn(usize) -> (Vec3, Vec3)) -> u64 {
        debug_assert!(mask >> 8 == 0, "eight lanes at most");
        let mut projected = [Projected::default(); 8];
        let read = self.project_gathered(0, mask, box_of, &mut projected);
        let proven = u64::from(read.occluded()) & mask;
        let (mut occluded, mut remaining) = (proven, mask & !proven & !u64::from(read.visible()));
        while remaining != 0 {
            let lane = remaining.trailing_zeros() as usize;
            remaining &= remaining - 1;
            if self.judge_lane(&projected[lane], read, lane) == OcclusionVerdict::Occluded {
                occluded |= 1 << lane;
            }
        }
        occluded
    }

    /// The judge for lane `lane` of a batch whose read gave `read`.
    #[inline]
    fn judge_lane(&self, projected: &Projected, read: BatchVerdicts, lane: usize) -> OcclusionVerdict {
        if read.coarse_failed() >> lane & 1 == 1 {
            self.judge_after_coarse(projected)
        } else {
            self.judge(projected)
        }
    }

    /// Tests the boxes whose bit is set in `words` and clears the bits of those occluded,
    /// in parallel on the current job system: for every 16 bits of a word with a set bit,
    /// `project(first, mask, out)` projects the boxes `first .. first + 16` whose bit is set
    /// in `mask` and returns what its batch read settled, then the lanes not proven occluded
    /// are judged.
    fn cull_words(
        &self,
        words: &mut [u64],
        grain: usize,
        project: impl Fn(usize, u64, &mut [Projected; 16]) -> BatchVerdicts + Sync,
    ) -> OcclusionStats {
        let stats = SharedStats::default();
        let grain_words = grain.div_ceil(BITS_PER_WORD).max(1);
        let _job_label = runtime::profiling::job_label("occlusion test job");
        runtime::jobs::parallel_for_chunks(words, grain_words, |first_word, chunk| {
            let mut local = OcclusionStats::default();
            let mut projected = [Projected::default(); 16];
            for (offset, word) in chunk.iter_mut().enumerate() {
                let base = (first_word + offset) * BITS_PER_WORD;
                for part in 0..BITS_PER_WORD / 16 {
                    let mask = (*word >> (part * 16)) & 0xffff;
                    if mask == 0 {
                        continue;
                    }
                    let read = project(base + part * 16, mask, &mut projected);
                    let proven = u64::from(read.occluded()) & mask;
                    let seen = u64::from(read.visible()) & mask;
                    // The proven lanes in one go; the others one by one through the judge.
                    local.tested += (proven | seen).count_ones() as usize;
                    local.occluded += proven.count_ones() as usize;
                    *word &= !(proven << (part * 16));
                    let mut remaining = mask & !proven & !seen;
                    while remaining != 0 {
                        let lane = remaining.trailing_zeros() as usize;
                        remaining &= remaining - 1;
                        let verdict = self.judge_lane(&projected[lane], read, lane);
                        local.count(verdict);
                        if verdict == OcclusionVerdict::Occluded {
                            *word &= !(1u64 << (part * 16 + lane));
                        }
                    }
                }
            }
            stats.add(local);
        });
        stats.total()
    }

    /// Projects the boxes `first .. first + 16` whose bit is set in `mask` into `out` and
    /// returns what the batch read settled: two batches of eight, interleaved when
    /// the kernel is AVX2 and all sixteen exist (both window reads in flight at once).
    #[inline]
    fn project_sixteen(
        &self,
        boxes: &AabbSlices<'_>,
        first: usize,
        mask: u64,
        out: &mut [Projected; 16],
    ) -> BatchVerdicts {
        let (low, high) = out.split_at_mut(8);
        let (low, high): (&mut [Projected; 8], &mut [Projected; 8]) =
            (low.try_into().expect("eight"), high.try_into().expect("eight"));
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if boxes.len() >= first + 16 && self.kernel.uses_avx2() {
            // SAFETY: the CPU supports AVX2 and sixteen boxes exist from `first`, checked just above.
            return unsafe { self.batch_read_pair(boxes, first, mask, [low, high]) };
        }
        let mut read = BatchVerdicts::default();
        if mask & 0xff != 0 {
            read = read | self.project_eight(boxes, first, mask & 0xff, low);
        }
        if mask >> 8 != 0 {
            read = read | self.project_eight(boxes, first + 8, mask >> 8, high).upper();
        }
        read
    }

    /// Two batches of [`TestTarget::batch_read`] interleaved: both projections, both window
    /// reads issued, then both finished, so one read's wait overlaps the other's work.
    ///
    /// # Safety
    /// The CPU must support AVX2, and `boxes` must hold sixteen boxes from `first`.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    #[target_feature(enable = "avx2")]
    unsafe fn batch_read_pair(
        &self,
        boxes: &AabbSlices<'_>,
        first: usize,
        mask: u64,
        out: [&mut [Projected; 8]; 2],
    ) -> BatchVerdicts {
        fn lanes(array: &[f32], first: usize) -> &[f32; 8] {
            array[first..first + 8].try_into().expect("sixteen boxes exist from `first` (the caller's duty)")
        }
        let project = |first: usize| {
            let center = boxes.center.map(|array| lanes(array, first));
            let half = boxes.half.map(|array| lanes(array, first));
            // SAFETY: AVX2 is available (the caller's duty).
            unsafe { project_lanes_avx2(&self.rows, center, half) }
        };
        let batches = [project(first), project(first + 8)];
        let issued = if self.view_finite {
            // SAFETY: AVX2 is available; the table describes the pyramid (same culler).
            Some(batches.map(|lanes| unsafe { coarse_issue(&lanes, self.size, self.pyramid, &self.table) }))
        } else {
            None
        };
        let mut read = BatchVerdicts::default();
        for (half, ((lanes, out), wanted)) in batches.iter().zip(out).zip([mask & 0xff, mask >> 8]).enumerate() {
            let batch = match &issued {
                // SAFETY: AVX2 is available; `issued` comes from coarse_issue on this pyramid.
                Some(issued) => unsafe { coarse_finish(&issued[half], self.pyramid, wanted as u32) },
                None => BatchVerdicts::default(),
            };
            if u64::from(batch.settled()) & wanted != wanted {
                // SAFETY: AVX2 is available (the caller's duty).
                unsafe { lanes.store(out) };
            }
            read = read | if half == 0 { batch } else { batch.upper() };
        }
        read
    }

    /// Writes one verdict per box of `boxes`, in parallel on the current job system, one box
    /// at a time with the scalar projection (the reference the batch paths are checked by).
    pub fn classify(&self, boxes: AabbSlices<'_>, verdicts: &mut [OcclusionVerdict], grain: usize) -> OcclusionStats {
        assert_eq!(verdicts.len(), boxes.len(), "one verdict per box");
        let stats = SharedStats::default();
        let _job_label = runtime::profiling::job_label("occlusion classify job");
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

    /// Tests the boxes (in structure-of-arrays form) whose bit is set in `words` and clears
    /// the bits of those occluded.
    pub fn cull_bits_soa(&self, boxes: AabbSlices<'_>, words: &mut [u64], grain: usize) -> OcclusionStats {
        self.cull_words(words, grain, |first, mask, out| self.project_sixteen(&boxes, first, mask, out))
    }

    /// Tests the boxes whose bit is set in `words` and clears the bits of those occluded;
    /// `box_of(i)` gives box `i`'s centre and half extents.
    pub fn cull_bits(
        &self,
        words: &mut [u64],
        grain: usize,
        box_of: impl Fn(usize) -> (Vec3, Vec3) + Sync,
    ) -> OcclusionStats {
        self.cull_words(words, grain, |first, mask, out| {
            let (low, high) = out.split_at_mut(8);
            let mut read = BatchVerdicts::default();
            if mask & 0xff != 0 {
                read = read | self.project_gathered(first, mask & 0xff, &box_of, low.try_into().expect("eight"));
            }
            if mask >> 8 != 0 {
                let upper = self.project_gathered(first + 8, mask >> 8, &box_of, high.try_into().expect("eight"));
                read = read | upper.upper();
            }
            read
        })
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

#[cfg(test)]
mod tests {
    use ecs::{Aabb, MeshHandle};
    use glam::Mat4;

    use super::*;
    use crate::occlusion::{OccluderInstance, OccluderMesh, OccluderMeshes, OcclusionCuller};

    /// The ceiling read proves visible the boxes with no nearer occluder over them (beside the
    /// wall, in front of it), never one the reference hides, and leaves the judge nothing to
    /// do for them; the hidden ones are still proven occluded.
    #[test]
    fn the_ceiling_proves_visible_what_no_nearer_occluder_covers() {
        if !Kernel::detect().uses_avx2() {
            return;
        }
        let wall = Aabb::new(Vec3::new(-5.0, -5.0, -11.0), Vec3::new(5.0, 5.0, -10.0));
        let mut meshes = OccluderMeshes::new();
        meshes.insert(MeshHandle(0), OccluderMesh::from_box(&wall).expect("a valid box"));
        let instances = [OccluderInstance { mesh: MeshHandle(0), world: Mat4::IDENTITY }];
        let view_projection = Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 2.0, 0.1)
            * Mat4::look_at_rh(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y);
        let mut culler = OcclusionCuller::default();
        culler.rasterize(view_projection, &meshes, &instances);
        let boxes = [
            // Behind the wall (hidden), in front of it, beside it, far beside it, in front of it,
            // behind it, across its edge, beside it.
            (Vec3::new(0.0, 0.0, -20.5), Vec3::ONE),
            (Vec3::new(0.0, 0.0, -5.5), Vec3::ONE),
            (Vec3::new(15.0, 0.0, -20.5), Vec3::ONE),
            (Vec3::new(-60.0, 10.0, -80.0), Vec3::splat(2.0)),
            (Vec3::new(0.0, 0.0, -5.5), Vec3::new(0.5, 0.5, 0.5)),
            (Vec3::new(-3.0, 2.0, -30.0), Vec3::splat(0.25)),
            (Vec3::new(5.0, 0.0, -20.5), Vec3::ONE),
            (Vec3::new(30.0, -8.0, -40.0), Vec3::ONE),
        ];
        let target = culler.target();
        let mut projected = [Projected::default(); 8];
        let read = target.project_gathered(0, 0xff, &|lane| boxes[lane], &mut projected);
        for (lane, &(center, half)) in boxes.iter().enumerate() {
            let verdict = target.test(center, half);
            if read.visible() >> lane & 1 == 1 {
                assert_eq!(verdict, OcclusionVerdict::Visible, "lane {lane} proven visible is visible");
            }
            if read.occluded() >> lane & 1 == 1 {
                assert_eq!(verdict, OcclusionVerdict::Occluded, "lane {lane} proven occluded is occluded");
            }
        }
        assert_eq!(read.occluded() & 0b10_0001, 0b10_0001, "the boxes behind the wall are proven hidden");
        assert_eq!(read.visible() & 0b1001_1110, 0b1001_1110, "the boxes with no nearer occluder are proven seen");
        assert_eq!(read.coarse_failed() & read.visible(), 0, "a lane has one verdict");
    }
}
