//! The batch kernels on the job system: disjoint 64-object-aligned ranges per job, each
//! writing its own words, so no job allocates, locks or shares a cache line of output with
//! another except at range ends (which a grain of whole words avoids).

use std::sync::atomic::{AtomicUsize, Ordering};

use runtime::JobSystem;

use crate::bits::BITS_PER_WORD;
use crate::frustum::Frustum;
use crate::kernels::{CullStats, Kernel};
use crate::soa::{AabbSlices, SphereSlices};

/// Objects per job when the caller has no better idea: 16 Ki objects, large enough that a
/// job's kernel time dwarfs the cost of handing it out.
pub const DEFAULT_GRAIN: usize = 16 * 1024;

/// A column the jobs of one parallel loop write at once, each only at entries no other job
/// touches (its own words, slots or run of a list).
pub(crate) struct SharedMut<T>(pub(crate) *mut T);

// SAFETY: jobs write through the pointer only at entries no other job touches, and the
// column outlives the parallel call.
unsafe impl<T> Sync for SharedMut<T> {}

impl<T> SharedMut<T> {
    /// The entry at `index` (a method, so closures capture the whole wrapper, not its field).
    #[inline(always)]
    pub(crate) fn at(&self, index: usize) -> *mut T {
        self.0.wrapping_add(index)
    }
}

/// Totals of the statistics the jobs report; relaxed atomics, since only the sum is read,
/// after the parallel call has joined every job.
#[derive(Default)]
struct SharedStats {
    tested: AtomicUsize,
    visible: AtomicUsize,
    non_finite: AtomicUsize,
}

impl SharedStats {
    fn add(&self, stats: CullStats) {
        self.tested.fetch_add(stats.tested, Ordering::Relaxed);
        self.visible.fetch_add(stats.visible, Ordering::Relaxed);
        self.non_finite.fetch_add(stats.non_finite, Ordering::Relaxed);
    }

    fn total(&self) -> CullStats {
        CullStats {
            tested: self.tested.load(Ordering::Relaxed),
            visible: self.visible.load(Ordering::Relaxed),
            non_finite: self.non_finite.load(Ordering::Relaxed),
        }
    }
}

/// The object range of the words starting at `first_word`, `word_count` long.
fn objects_of(first_word: usize, word_count: usize, total: usize) -> std::ops::Range<usize> {
    let start = first_word * BITS_PER_WORD;
    start..(start + word_count * BITS_PER_WORD).min(total)
}

impl Kernel {
    /// [`Kernel::cull_spheres`] split over `pool` in ranges of about `grain` objects
    /// (rounded up to whole words). Gives the same words and statistics as one call.
    ///
    /// # Panics
    /// When `words.len() != spheres.len().div_ceil(64)`.
    pub fn cull_spheres_parallel(
        self,
        pool: &JobSystem,
        frustum: &Frustum,
        spheres: SphereSlices<'_>,
        words: &mut [u64],
        grain: usize,
    ) -> CullStats {
        split_words(pool, spheres.len(), words, grain, |range, chunk| {
            self.cull_spheres(frustum, spheres.sub(range), chunk)
        })
    }

    /// [`Kernel::cull_aabbs`] split over `pool`; as [`Kernel::cull_spheres_parallel`].
    ///
    /// # Panics
    /// When `words.len() != boxes.len().div_ceil(64)`.
    pub fn cull_aabbs_parallel(
        self,
        pool: &JobSystem,
        frustum: &Frustum,
        boxes: AabbSlices<'_>,
        words: &mut [u64],
        grain: usize,
    ) -> CullStats {
        split_words(pool, boxes.len(), words, grain, |range, chunk| self.cull_aabbs(frustum, boxes.sub(range), chunk))
    }
}

/// Runs `cull(objects, words)` over `pool` on disjoint whole-word chunks of about `grain`
/// objects covering `count` objects, and sums the statistics.
///
/// # Panics
/// When `words.len() != count.div_ceil(64)`.
fn split_words(
    pool: &JobSystem,
    count: usize,
    words: &mut [u64],
    grain: usize,
    cull: impl Fn(std::ops::Range<usize>, &mut [u64]) -> CullStats + Sync + Send,
) -> CullStats {
    assert_eq!(
        words.len(),
        count.div_ceil(BITS_PER_WORD),
        "{count} objects need {} visibility words",
        count.div_ceil(BITS_PER_WORD)
    );
    let totals = SharedStats::default();
    let grain_words = grain.div_ceil(BITS_PER_WORD).max(1);
    let _job_label = runtime::profiling::job_label("frustum cull job");
    pool.parallel_for_chunks(words, grain_words, |first_word, chunk| {
        totals.add(cull(objects_of(first_word, chunk.len(), count), chunk));
    });
    totals.total()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::soa::AabbSoa;
    use ecs::Aabb;
    use glam::{Mat4, Vec3};

    #[test]
    fn parallel_cull_matches_one_call_with_any_thread_count() {
        let mut boxes = AabbSoa::default();
        for index in 0..5000u32 {
            let spread = (index.wrapping_mul(2_654_435_761) % 2000) as f32 / 10.0 - 100.0;
            let center = Vec3::new(spread, (index % 17) as f32 - 8.0, -((index % 97) as f32) + 20.0);
            boxes.push(&Aabb::from_center_half_extent(center, Vec3::splat(0.5)));
        }
        let view = Mat4::look_at_rh(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y);
        let frustum = Frustum::from_view_projection(Mat4::perspective_infinite_reverse_rh(1.0, 1.5, 0.1) * view);
        let mut expected = vec![0; boxes.len().div_ceil(64)];
        let expected_stats = Kernel::Scalar.cull_aabbs(&frustum, boxes.slices(), &mut expected);
        assert!(expected_stats.visible > 0 && expected_stats.visible < 5000);
        for threads in [1, 4] {
            let pool = JobSystem::new(threads);
            for grain in [1, 100, 4096] {
                let mut words = vec![0; expected.len()];
                let stats = Kernel::detect().cull_aabbs_parallel(&pool, &frustum, boxes.slices(), &mut words, grain);
                assert_eq!(words, expected, "{threads} threads, grain {grain}");
                assert_eq!(stats, expected_stats, "{threads} threads, grain {grain}");
            }
        }
    }
}
