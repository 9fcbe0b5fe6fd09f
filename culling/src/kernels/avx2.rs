//! The AVX2 kernels: eight objects per 256-bit register. They repeat the steps of the scalar
//! reference (`crate::frustum::sphere_lane` and `aabb_lane`) with separate multiplies and
//! adds (never a fused multiply-add, which rounds once instead of twice) in the same order,
//! so they give the same bits. Only `super` calls them, after checking for AVX2.

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use crate::bits::BITS_PER_WORD;
use crate::frustum::{aabb_lane, sphere_lane, PlaneLanes, MAX_PLANES};
use crate::soa::{AabbSlices, SphereSlices};
use glam::Vec3;

/// Objects per register.
const LANES: usize = 8;

/// Loads eight values of `array` from `start`.
///
/// # Safety
/// AVX must be available, and `start + 8 <= array.len()`.
#[inline(always)]
unsafe fn load(array: &[f32], start: usize) -> __m256 {
    debug_assert!(start + LANES <= array.len(), "eight values from {start}");
    // SAFETY: the caller guarantees eight readable floats from `start`; loadu has no
    // alignment requirement.
    unsafe { _mm256_loadu_ps(array.as_ptr().add(start)) }
}

/// The planes broadcast to all lanes.
struct Broadcast {
    normal_x: [__m256; MAX_PLANES],
    normal_y: [__m256; MAX_PLANES],
    normal_z: [__m256; MAX_PLANES],
    offset: [__m256; MAX_PLANES],
    abs_x: [__m256; MAX_PLANES],
    abs_y: [__m256; MAX_PLANES],
    abs_z: [__m256; MAX_PLANES],
}

/// # Safety
/// AVX must be available.
#[inline(always)]
unsafe fn broadcast(planes: &PlaneLanes) -> Broadcast {
    let splat = |values: &[f32; MAX_PLANES]| values.map(|value| _mm256_set1_ps(value));
    Broadcast {
        normal_x: splat(&planes.normal_x),
        normal_y: splat(&planes.normal_y),
        normal_z: splat(&planes.normal_z),
        offset: splat(&planes.offset),
        abs_x: splat(&planes.abs_x),
        abs_y: splat(&planes.abs_y),
        abs_z: splat(&planes.abs_z),
    }
}

/// Lanes of `value` that are finite (`|value| <= f32::MAX`; false for NaN), as a mask.
#[inline(always)]
unsafe fn finite_mask(value: __m256, sign: __m256, largest: __m256) -> __m256 {
    _mm256_cmp_ps::<_CMP_LE_OQ>(_mm256_andnot_ps(sign, value), largest)
}

/// Culls spheres; same contract as the scalar reference.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn spheres(
    planes: &PlaneLanes,
    input: SphereSlices<'_>,
    words: &mut [u64],
) -> usize {
    let lanes = broadcast(planes);
    let sign = _mm256_set1_ps(-0.0);
    let largest = _mm256_set1_ps(f32::MAX);
    let zero = _mm256_setzero_ps();
    let mut non_finite = 0;
    for (word_index, word) in words.iter_mut().enumerate() {
        let start = word_index * BITS_PER_WORD;
        let end = (start + BITS_PER_WORD).min(input.len());
        let mut bits = 0u64;
        let mut index = start;
        // Invariant: bits holds the objects [start, index), index - start a multiple of 8.
        while index + LANES <= end {
            // SAFETY: index + 8 <= end <= len of every array (SphereSlices checks lengths).
            let (x, y, z, radius) = unsafe {
                (
                    load(input.x, index),
                    load(input.y, index),
                    load(input.z, index),
                    load(input.radius, index),
                )
            };
            // Step 1: lanes with a non-finite input.
            let finite = _mm256_and_ps(
                _mm256_and_ps(finite_mask(x, sign, largest), finite_mask(y, sign, largest)),
                _mm256_and_ps(
                    finite_mask(z, sign, largest),
                    finite_mask(radius, sign, largest),
                ),
            );
            // Step 2: radius by absolute value.
            let reach = _mm256_andnot_ps(sign, radius);
            let mut outside = zero;
            for plane in 0..planes.count {
                // Step 3: signed distance ((nx*x + ny*y) + nz*z) + d.
                let distance = _mm256_add_ps(
                    _mm256_add_ps(
                        _mm256_add_ps(
                            _mm256_mul_ps(lanes.normal_x[plane], x),
                            _mm256_mul_ps(lanes.normal_y[plane], y),
                        ),
                        _mm256_mul_ps(lanes.normal_z[plane], z),
                    ),
                    lanes.offset[plane],
                );
                // Step 4: outside when even the nearest point is behind the plane.
                let behind = _mm256_cmp_ps::<_CMP_LT_OQ>(_mm256_add_ps(distance, reach), zero);
                outside = _mm256_or_ps(outside, behind);
            }
            let (group_bits, group_non_finite) = pack(outside, finite);
            bits |= group_bits << (index - start);
            non_finite += group_non_finite;
            index += LANES;
        }
        // The last partial group through the scalar reference.
        for rest in index..end {
            let center = Vec3::new(input.x[rest], input.y[rest], input.z[rest]);
            let verdict = sphere_lane(planes, center, input.radius[rest]);
            bits |= u64::from(verdict.visible) << (rest - start);
            non_finite += usize::from(verdict.non_finite);
        }
        *word = bits;
    }
    non_finite
}

/// Culls boxes; same contract as the scalar reference.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn aabbs(planes: &PlaneLanes, input: AabbSlices<'_>, words: &mut [u64]) -> usize {
    let lanes = broadcast(planes);
    let sign = _mm256_set1_ps(-0.0);
    let largest = _mm256_set1_ps(f32::MAX);
    let zero = _mm256_setzero_ps();
    let [center_x, center_y, center_z] = input.center;
    let [half_x, half_y, half_z] = input.half;
    let mut non_finite = 0;
    for (word_index, word) in words.iter_mut().enumerate() {
        let start = word_index * BITS_PER_WORD;
        let end = (start + BITS_PER_WORD).min(input.len());
        let mut bits = 0u64;
        let mut index = start;
        // Invariant: bits holds the objects [start, index), index - start a multiple of 8.
        while index + LANES <= end {
            // SAFETY: index + 8 <= end <= len of every array (AabbSlices checks lengths).
            let (cx, cy, cz, hx, hy, hz) = unsafe {
                (
                    load(center_x, index),
                    load(center_y, index),
                    load(center_z, index),
                    load(half_x, index),
                    load(half_y, index),
                    load(half_z, index),
                )
            };
            // Step 1: lanes with a non-finite input.
            let finite = _mm256_and_ps(
                _mm256_and_ps(
                    _mm256_and_ps(
                        finite_mask(cx, sign, largest),
                        finite_mask(cy, sign, largest),
                    ),
                    _mm256_and_ps(
                        finite_mask(cz, sign, largest),
                        finite_mask(hx, sign, largest),
                    ),
                ),
                _mm256_and_ps(
                    finite_mask(hy, sign, largest),
                    finite_mask(hz, sign, largest),
                ),
            );
            // Step 2: half extents by absolute value.
            let (hx, hy, hz) = (
                _mm256_andnot_ps(sign, hx),
                _mm256_andnot_ps(sign, hy),
                _mm256_andnot_ps(sign, hz),
            );
            let mut outside = zero;
            for plane in 0..planes.count {
                // Step 3: centre distance ((nx*cx + ny*cy) + nz*cz) + d.
                let distance = _mm256_add_ps(
                    _mm256_add_ps(
                        _mm256_add_ps(
                            _mm256_mul_ps(lanes.normal_x[plane], cx),
                            _mm256_mul_ps(lanes.normal_y[plane], cy),
                        ),
                        _mm256_mul_ps(lanes.normal_z[plane], cz),
                    ),
                    lanes.offset[plane],
                );
                // Step 4: reach of the corner furthest along n, (|nx|hx + |ny|hy) + |nz|hz.
                let reach = _mm256_add_ps(
                    _mm256_add_ps(
                        _mm256_mul_ps(lanes.abs_x[plane], hx),
                        _mm256_mul_ps(lanes.abs_y[plane], hy),
                    ),
                    _mm256_mul_ps(lanes.abs_z[plane], hz),
                );
                // Step 5: outside when even that corner is behind the plane.
                let behind = _mm256_cmp_ps::<_CMP_LT_OQ>(_mm256_add_ps(distance, reach), zero);
                outside = _mm256_or_ps(outside, behind);
            }
            let (group_bits, group_non_finite) = pack(outside, finite);
            bits |= group_bits << (index - start);
            non_finite += group_non_finite;
            index += LANES;
        }
        // The last partial group through the scalar reference.
        for rest in index..end {
            let center = Vec3::new(center_x[rest], center_y[rest], center_z[rest]);
            let half = Vec3::new(half_x[rest], half_y[rest], half_z[rest]);
            let verdict = aabb_lane(planes, center, half);
            bits |= u64::from(verdict.visible) << (rest - start);
            non_finite += usize::from(verdict.non_finite);
        }
        *word = bits;
    }
    non_finite
}

/// Keep-bits of eight lanes (kept unless outside, always kept when non-finite) and the
/// number of non-finite lanes.
#[inline(always)]
unsafe fn pack(outside: __m256, finite: __m256) -> (u64, usize) {
    let outside_bits = _mm256_movemask_ps(outside) as u32;
    let finite_bits = _mm256_movemask_ps(finite) as u32;
    let keep = !(outside_bits & finite_bits) & 0xff;
    let non_finite = (!finite_bits & 0xff).count_ones() as usize;
    (u64::from(keep), non_finite)
}
