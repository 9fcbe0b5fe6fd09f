//! The AVX2 kernels: eight objects per 256-bit register. They repeat the steps of the scalar
//! reference (`crate::frustum::sphere_lane` and `aabb_lane`) with separate multiplies and
//! adds (never a fused multiply-add, which rounds once instead of twice) in the same order,
//! so they give the same bits. Only `super` calls them, after checking for AVX2 and POPCNT.

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

/// Exponent bits of an `f32`; all ones exactly for infinities and NaNs.
const EXPONENT: i32 = 0x7f80_0000;

/// Lanes where any of `values` is not finite, as a mask (all ones per such lane).
///
/// Same answer as the reference's `|value| <= f32::MAX` per input, in integer operations
/// that leave the floating-point pipes to the plane tests: a value is infinite or NaN
/// exactly when its exponent field is all ones, the largest value the masked field can take,
/// so the unsigned maximum of the masked fields equals `EXPONENT` exactly when some input is.
///
/// # Safety
/// AVX2 must be available.
#[inline(always)]
unsafe fn non_finite_mask<const N: usize>(values: [__m256; N]) -> __m256 {
    let exponent = _mm256_set1_epi32(EXPONENT);
    let mut largest = _mm256_setzero_si256();
    for value in values {
        largest = _mm256_max_epu32(largest, _mm256_and_si256(_mm256_castps_si256(value), exponent));
    }
    _mm256_castsi256_ps(_mm256_cmpeq_epi32(largest, exponent))
}

/// Lanes where any of `inputs` is not finite, as a mask, given `first_sum`, the first plane's
/// `distance + reach` of the same lanes (unused when there are no planes).
///
/// A non-finite input makes every plane's sum non-finite: it enters the sum through a
/// product with a finite factor (a normal component, `|n|`, or 1 for a radius), which is
/// infinite or NaN (`0 * inf`), and adding finite or non-finite terms to an infinity or a
/// NaN never gives a finite value. So when the first sum is finite in every lane, no input
/// is non-finite, and the exact check over the inputs (which also tells a finite input whose
/// sum overflowed from a non-finite one) runs only for the rare groups where it is not.
///
/// # Safety
/// AVX2 must be available.
#[inline(always)]
unsafe fn non_finite_lanes<const N: usize>(plane_count: usize, first_sum: __m256, inputs: [__m256; N]) -> __m256 {
    let exponent = _mm256_set1_epi32(EXPONENT);
    let suspects = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(first_sum), exponent), exponent);
    if plane_count > 0 && _mm256_testz_si256(suspects, suspects) == 1 {
        _mm256_setzero_ps()
    } else {
        non_finite_mask(inputs)
    }
}

/// Culls spheres; same contract as the scalar reference.
///
/// # Safety
/// The CPU must support AVX2 and POPCNT.
#[target_feature(enable = "avx2,popcnt")]
pub(crate) unsafe fn spheres(planes: &PlaneLanes, input: SphereSlices<'_>, words: &mut [u64]) -> usize {
    // The usual plane counts get a fully unrolled plane loop.
    match planes.count {
        5 => spheres_with::<5>(planes, input, words),
        6 => spheres_with::<6>(planes, input, words),
        _ => spheres_with::<0>(planes, input, words),
    }
}

/// The kernel for `FIXED` planes, or `planes.count` planes when `FIXED` is 0.
///
/// # Safety
/// The CPU must support AVX2 and POPCNT.
#[target_feature(enable = "avx2,popcnt")]
unsafe fn spheres_with<const FIXED: usize>(planes: &PlaneLanes, input: SphereSlices<'_>, words: &mut [u64]) -> usize {
    debug_assert!(FIXED == 0 || FIXED == planes.count, "{FIXED} planes expected");
    let plane_count = if FIXED == 0 { planes.count } else { FIXED };
    let lanes = broadcast(planes);
    let sign = _mm256_set1_ps(-0.0);
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
                (load(input.x, index), load(input.y, index), load(input.z, index), load(input.radius, index))
            };
            // Step 2: radius by absolute value.
            let reach = _mm256_andnot_ps(sign, radius);
            let (mut outside, mut first_sum) = (zero, zero);
            for plane in 0..plane_count {
                // Step 3: signed distance ((nx*x + ny*y) + nz*z) + d.
                let distance = _mm256_add_ps(
                    _mm256_add_ps(
                        _mm256_add_ps(_mm256_mul_ps(lanes.normal_x[plane], x), _mm256_mul_ps(lanes.normal_y[plane], y)),
                        _mm256_mul_ps(lanes.normal_z[plane], z),
                    ),
                    lanes.offset[plane],
                );
                // Step 4: outside when even the nearest point is behind the plane, that is
                // when distance + reach is negative: its sign bit (see `pack`).
                let sum = _mm256_add_ps(distance, reach);
                first_sum = if plane == 0 { sum } else { first_sum };
                outside = _mm256_or_ps(outside, sum);
            }
            // Step 1, answered last: lanes with a non-finite input (see `non_finite_lanes`).
            let bad_lanes = non_finite_lanes(plane_count, first_sum, [x, y, z, radius]);
            let (group_bits, group_non_finite) = pack(outside, bad_lanes);
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

/// Culls aabbs; same contract as the scalar reference.
///
/// # Safety
/// The CPU must support AVX2 and POPCNT.
#[target_feature(enable = "avx2,popcnt")]
pub(crate) unsafe fn aabbs(planes: &PlaneLanes, input: AabbSlices<'_>, words: &mut [u64]) -> usize {
    // The usual plane counts get a fully unrolled plane loop.
    match planes.count {
        5 => aabbs_with::<5>(planes, input, words),
        6 => aabbs_with::<6>(planes, input, words),
        _ => aabbs_with::<0>(planes, input, words),
    }
}

/// The kernel for `FIXED` planes, or `planes.count` planes when `FIXED` is 0.
///
/// # Safety
/// The CPU must support AVX2 and POPCNT.
#[target_feature(enable = "avx2,popcnt")]
unsafe fn aabbs_with<const FIXED: usize>(planes: &PlaneLanes, input: AabbSlices<'_>, words: &mut [u64]) -> usize {
    debug_assert!(FIXED == 0 || FIXED == planes.count, "{FIXED} planes expected");
    let plane_count = if FIXED == 0 { planes.count } else { FIXED };
    let lanes = broadcast(planes);
    let sign = _mm256_set1_ps(-0.0);
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
            let inputs = [cx, cy, cz, hx, hy, hz];
            // Step 2: half extents by absolute value.
            let (hx, hy, hz) = (_mm256_andnot_ps(sign, hx), _mm256_andnot_ps(sign, hy), _mm256_andnot_ps(sign, hz));
            let (mut outside, mut first_sum) = (zero, zero);
            for plane in 0..plane_count {
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
                    _mm256_add_ps(_mm256_mul_ps(lanes.abs_x[plane], hx), _mm256_mul_ps(lanes.abs_y[plane], hy)),
                    _mm256_mul_ps(lanes.abs_z[plane], hz),
                );
                // Step 5: outside when even that corner is behind the plane, that is when
                // distance + reach is negative: its sign bit (see `pack`).
                let sum = _mm256_add_ps(distance, reach);
                first_sum = if plane == 0 { sum } else { first_sum };
                outside = _mm256_or_ps(outside, sum);
            }
            // Step 1, answered last: lanes with a non-finite input (see `non_finite_lanes`).
            let bad_lanes = non_finite_lanes(plane_count, first_sum, inputs);
            let (group_bits, group_non_finite) = pack(outside, bad_lanes);
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

/// Keep-bits of eight lanes and the number of non-finite lanes.
///
/// `outside` is the bitwise OR over the planes of `distance + reach`, so a lane's sign bit is
/// set exactly when some plane's sum is negative, the reference's `< 0`: for finite inputs
/// the sum is never NaN (products of unit normals and finite values are finite, and a sum
/// that overflows stays infinite with its sign), and never -0 (reach is +0 or more, and
/// round-to-nearest gives +0 for an exact zero sum). Lanes with a non-finite input are kept
/// whatever their sign bits say.
///
/// # Safety
/// AVX must be available.
#[inline(always)]
unsafe fn pack(outside: __m256, non_finite: __m256) -> (u64, usize) {
    let outside_bits = _mm256_movemask_ps(outside) as u32;
    let non_finite_bits = _mm256_movemask_ps(non_finite) as u32;
    let keep = !(outside_bits & !non_finite_bits) & 0xff;
    (u64::from(keep), non_finite_bits.count_ones() as usize)
}
