//! Shadow-caster culls: the casters' world boxes against each light view (sun cascades,
//! a spot light's perspective), one bitset per view, reused across frames.
//!
//! A shadow pass is the scene drawn again from the light, so the same conservative box test
//! applies per pass. Culling each cascade to its own frustum matters: a near cascade covers
//! a few metres, and drawing every caster into every cascade multiplies the shadow cost by
//! the cascade count.

use glam::Mat4;
use runtime::JobSystem;

use crate::bits::{words_for, VisibilityBits};
use crate::frustum::Frustum;
use crate::kernels::{CullStats, Kernel};
use crate::soa::AabbSlices;

/// The frusta of a frame's light views and the caster bits of each, kept across frames.
///
/// ```
/// use culling::{Aabb, AabbSoa, ShadowCull};
/// use glam::{Mat4, Vec3};
/// let mut casters = AabbSoa::default();
/// casters.push(&Aabb::new(Vec3::splat(-1.0), Vec3::splat(1.0)));
/// casters.push(&Aabb::new(Vec3::splat(50.0), Vec3::splat(51.0)));
/// let light = Mat4::look_at_rh(Vec3::new(0.0, 20.0, 0.0), Vec3::ZERO, Vec3::Z);
/// let cascade = Mat4::orthographic_rh(-5.0, 5.0, -5.0, 5.0, 40.0, 0.1) * light;
/// let mut shadows = ShadowCull::default();
/// shadows.set_views(&[cascade]);
/// shadows.cull(casters.slices());
/// assert!(shadows.bits(0).is_visible(0) && !shadows.bits(0).is_visible(1));
/// ```
#[derive(Clone, Debug, Default)]
pub struct ShadowCull {
    frusta: Vec<Frustum>,
    bits: Vec<VisibilityBits>,
    stats: Vec<CullStats>,
}

impl ShadowCull {
    /// Sets this frame's light views (world to light clip space, reversed-Z). Keeps the
    /// bitsets of earlier frames, so a steady cascade count allocates nothing.
    pub fn set_views(&mut self, light_view_projections: &[Mat4]) {
        self.frusta.clear();
        self.frusta.extend(light_view_projections.iter().map(|&matrix| Frustum::from_view_projection(matrix)));
        let count = self.frusta.len();
        if self.bits.len() < count {
            self.bits.resize_with(count, VisibilityBits::default);
        }
        self.stats.clear();
        self.stats.resize(count, CullStats::default());
    }

    /// Number of light views.
    #[inline]
    pub fn view_count(&self) -> usize {
        self.frusta.len()
    }

    /// The frustum of light view `view`.
    ///
    /// # Panics
    /// When `view >= view_count()`.
    #[inline]
    pub fn frustum(&self, view: usize) -> &Frustum {
        &self.frusta[view]
    }

    /// The caster bits of light view `view` (bit `i` = caster `i` may cast into it).
    ///
    /// # Panics
    /// When `view >= view_count()`.
    #[inline]
    pub fn bits(&self, view: usize) -> &VisibilityBits {
        assert!(view < self.frusta.len(), "light view {view} of {}", self.frusta.len());
        &self.bits[view]
    }

    /// What the last cull of light view `view` saw.
    #[inline]
    pub fn stats(&self, view: usize) -> CullStats {
        self.stats[view]
    }

    /// Culls the casters against every light view with the detected kernel; returns the
    /// statistics summed over the views.
    pub fn cull(&mut self, casters: AabbSlices<'_>) -> CullStats {
        self.cull_with(Kernel::detect(), casters)
    }

    /// As [`ShadowCull::cull`], with a chosen kernel.
    pub fn cull_with(&mut self, kernel: Kernel, casters: AabbSlices<'_>) -> CullStats {
        let mut total = CullStats::default();
        for (view, frustum) in self.frusta.iter().enumerate() {
            let bits = &mut self.bits[view];
            bits.reset(casters.len());
            let stats = kernel.cull_aabbs(frustum, casters, bits.words_mut());
            self.stats[view] = stats;
            total += stats;
        }
        total
    }

    /// As [`ShadowCull::cull`], each view split over `pool` in ranges of about `grain`
    /// casters; the same bits and statistics as the serial cull.
    pub fn cull_parallel(&mut self, pool: &JobSystem, casters: AabbSlices<'_>, grain: usize) -> CullStats {
        let kernel = Kernel::detect();
        let mut total = CullStats::default();
        for (view, frustum) in self.frusta.iter().enumerate() {
            let bits = &mut self.bits[view];
            bits.reset(casters.len());
            let stats = kernel.cull_aabbs_parallel(pool, frustum, casters, bits.words_mut(), grain);
            self.stats[view] = stats;
            total += stats;
        }
        total
    }

    /// Sizes every view's bits to `caster_count` and hands out each view's frustum and
    /// words, for callers that cull 64-caster-aligned ranges in parallel (caster range
    /// `64 * w ..` goes to words `w ..`). Statistics of such a cull are the caller's.
    pub fn prepare_parallel(&mut self, caster_count: usize) -> impl Iterator<Item = (&Frustum, &mut [u64])> {
        let views = self.frusta.len();
        for bits in &mut self.bits[..views] {
            bits.reset(caster_count);
            debug_assert_eq!(bits.words().len(), words_for(caster_count));
        }
        self.frusta.iter().zip(self.bits[..views].iter_mut().map(VisibilityBits::words_mut))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::soa::AabbSoa;
    use ecs::Aabb;
    use glam::Vec3;

    /// A sun looking straight down, with two square cascades around the origin.
    fn cascades() -> [Mat4; 2] {
        let light = Mat4::look_at_rh(Vec3::new(0.0, 100.0, 0.0), Vec3::ZERO, Vec3::NEG_Z);
        [
            Mat4::orthographic_rh(-10.0, 10.0, -10.0, 10.0, 200.0, 0.1) * light,
            Mat4::orthographic_rh(-60.0, 60.0, -60.0, 60.0, 200.0, 0.1) * light,
        ]
    }

    fn caster(x: f32, z: f32) -> Aabb {
        Aabb::from_center_half_extent(Vec3::new(x, 1.0, z), Vec3::ONE)
    }

    #[test]
    fn each_cascade_keeps_only_its_casters() {
        let mut casters = AabbSoa::default();
        for (x, z) in [(0.0, 0.0), (30.0, 0.0), (0.0, -100.0), (10.5, 0.0)] {
            casters.push(&caster(x, z));
        }
        let spot = Mat4::perspective_rh(40f32.to_radians(), 1.0, 80.0, 0.5)
            * Mat4::look_at_rh(Vec3::new(0.0, 10.0, -100.0), Vec3::new(0.0, 0.0, -100.0), Vec3::Z);
        let mut shadows = ShadowCull::default();
        let [near, far] = cascades();
        shadows.set_views(&[near, far, spot]);
        let total = shadows.cull(casters.slices());
        let visible = |view: usize| shadows.bits(view).iter_visible().collect::<Vec<_>>();
        assert_eq!(visible(0), vec![0, 3], "near cascade: origin and the straddler");
        assert_eq!(visible(1), vec![0, 1, 3]);
        assert_eq!(visible(2), vec![2], "the spot light sees only the caster under it");
        assert_eq!(total.tested, 12);
        assert_eq!(shadows.stats(1).visible, 3);
    }

    #[test]
    fn bits_are_reused_across_frames() {
        let mut casters = AabbSoa::default();
        for index in 0..300 {
            casters.push(&caster(index as f32 * 0.1, 0.0));
        }
        let mut shadows = ShadowCull::default();
        shadows.set_views(&cascades());
        shadows.cull(casters.slices());
        let before = shadows.bits(1).words().as_ptr();
        shadows.set_views(&cascades());
        shadows.cull(casters.slices());
        assert_eq!(before, shadows.bits(1).words().as_ptr(), "no reallocation per frame");
    }

    #[test]
    fn parallel_ranges_match_the_whole_cull() {
        let mut casters = AabbSoa::default();
        for index in 0..200 {
            casters.push(&caster((index as f32 - 100.0) * 0.7, (index % 7) as f32 * 3.0));
        }
        let mut whole = ShadowCull::default();
        whole.set_views(&cascades());
        whole.cull(casters.slices());
        let mut ranged = ShadowCull::default();
        ranged.set_views(&cascades());
        let view = casters.slices();
        for (frustum, words) in ranged.prepare_parallel(view.len()) {
            for (block, chunk) in words.chunks_mut(2).enumerate() {
                let start = block * 128;
                let end = (start + 128).min(view.len());
                Kernel::Scalar.cull_aabbs(frustum, view.sub(start..end), chunk);
            }
        }
        for index in 0..2 {
            assert_eq!(whole.bits(index), ranged.bits(index), "cascade {index}");
        }
        let mut pooled = ShadowCull::default();
        pooled.set_views(&cascades());
        let stats = pooled.cull_parallel(&JobSystem::new(2), view, 64);
        for index in 0..2 {
            assert_eq!(whole.bits(index), pooled.bits(index), "cascade {index} on the pool");
            assert_eq!(whole.stats(index), pooled.stats(index));
        }
        assert_eq!(stats.tested, 400);
    }

    #[test]
    fn non_finite_light_view_keeps_every_caster() {
        let mut casters = AabbSoa::default();
        casters.push(&caster(500.0, 500.0));
        let mut shadows = ShadowCull::default();
        shadows.set_views(&[Mat4::from_cols_array(&[f32::NAN; 16])]);
        let stats = shadows.cull(casters.slices());
        assert_eq!(stats.non_finite, 1);
        assert!(shadows.bits(0).is_visible(0));
    }
}
