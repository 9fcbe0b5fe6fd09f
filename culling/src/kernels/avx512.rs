//! The AVX-512 kernels: sixteen objects per 512-bit register, four groups per 64-object word.
//! They take the steps of the AVX2 kernels (and of the scalar reference, `sphere_lane` and
//! `aabb_lane`) with the same separate multiplies and adds in the same order, so they give
//! the same bits. Where AVX-512 runs 512-bit operations as two 256-bit halves (AMD Zen 4)
//! the arithmetic costs the same per object; what is saved is half the instructions, and the
//! 32 registers that hold more of the broadcast planes, which the AVX2 kernels spill to the
//! stack at five or six planes. Only `super` calls them, after checking for AVX-512F.

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use crate::bits::BITS_PER_WORD;
use crate::frustum::{aabb_lane, sphere_lane, PlaneLanes, MAX_PLANES};
use crate::soa::{AabbSlices, SphereSlices};
use glam::Vec3;

/// Objects per register.
const LANES: usize = 16;

/// Exponent bits of an `f32`; all ones exactly for infinities and NaNs.
const EXPONENT: i32 = 0x7f80_0000;

/// Loads sixteen values of `array` from `start`.
///
/// # Safety
/// AVX-512F must be available, and `start + 16 <= array.len()`.
#[inline(always)]
unsafe fn load(array: &[f32], start: usize) -> __m512 {
    debug_assert!(start + LANES <= array.len(), "sixteen values from {start}");
    // SAFETY: the caller guarantees sixteen readable floats from `start`; loadu has no
    // alignment requirement.
    unsafe { _mm512_loadu_ps(array.as_ptr().add(start)) }
}

/// The planes broadcast to all lanes.
struct Broadcast {
    normal_x: [__m512; MAX_PLANES],
    normal_y: [__m512; MAX_PLANES],
    normal_z: [__m512; MAX_PLANES],
    offset: [__m512; MAX_PLANES],
    abs_x: [__m512; MAX_PLANES],
    abs_y: [__m512; MAX_PLANES],
    abs_z: [__m512; MAX_PLANES],
}

/// # Safety
/// AVX-512F must be available.
#[inline(always)]
unsafe fn broadcast(planes: &PlaneLanes) -> Broadcast {
    let splat = |values: &[f32; MAX_PLANES]| values.map(|value| _mm512_set1_ps(value));
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

/// The bitwise OR of two registers (in integer operations: the float ones need AVX-512DQ).
///
/// # Safety
/// AVX-512F must be available.
#[inline(always)]
unsafe fn or(a: __m512, b: __m512) -> __m512 {
    _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)))
}

/// `|value|` per lane: the sign bit cleared.
///
/// # Safety
/// AVX-512F must be available.
#[inline(always)]
unsafe fn abs(value: __m512) -> __m512 {
    _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(value), _mm512_set1_epi32(i32::MAX)))
}

/// Lanes where any of `inputs` is not finite, as a bit mask, given `first_sum`, the first
/// plane's `distance + reach` of the same lanes (unused when there are no planes).
///
/// As in the AVX2 kernels: a non-finite input makes every plane's sum non-finite, so only
/// groups whose first sum is not finite in some lane check the inputs, and a value is
/// infinite or NaN exactly when its exponent field is all ones.
///
/// # Safety
/// AVX-512F must be available.
#[inline(always)]
unsafe fn non_finite_lanes<const N: usize>(plane_count: usize, first_sum: __m512, inputs: [__m512; N]) -> u16 {
    let exponent = _mm512_set1_epi32(EXPONENT);
    let exponent_of = |value: __m512| _mm512_and_si512(_mm512_castps_si512(value), exponent);
    if plane_count > 0 && _mm512_cmpeq_epi32_mask(exponent_of(first_sum), exponent) == 0 {
        return 0;
    }
    let mut largest = _mm512_setzero_si512();
    for value in inputs {
        largest = _mm512_max_epu32(largest, exponent_of(value));
    }
    _mm512_cmpeq_epi32_mask(largest, exponent)
}

/// Keep-bits of sixteen lanes and the number of non-finite lanes: a lane is outside when the
/// sign bit of `outside` (the OR over the planes of `distance + reach`) is set, and kept when
/// it is not or when its input is not finite (see the AVX2 kernels' `pack` for why the sign
/// bit is exactly the reference's `< 0`).
///
/// # Safety
/// AVX-512F must be available.
#[inline(always)]
unsafe fn pack(outside: __m512, non_finite: u16) -> (u64, usize) {
    let outside_bits = _mm512_cmplt_epi32_mask(_mm512_castps_si512(outside), _mm512_setzero_si512());
    let keep = !(outside_bits & !non_finite);
    (u64::from(keep), non_finite.count_ones() as usize)
}

/// Culls spheres; same contract as the scalar reference.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f,popcnt")]
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
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn spheres_with<const FIXED: usize>(planes: &PlaneLanes, input: SphereSlices<'_>, words: &mut [u64]) -> usize {
    debug_assert!(FIXED == 0 || FIXED == planes.count, "{FIXED} planes expected");
    let plane_count = if FIXED == 0 { planes.count } else { FIXED };
    let lanes = broadcast(planes);
    let zero = _mm512_setzero_ps();
    let mut non_finite = 0;
    for (word_index, word) in words.iter_mut().enumerate() {
        let start = word_index * BITS_PER_WORD;
        let end = (start + BITS_PER_WORD).min(input.len());
        let mut bits = 0u64;
        let mut index = start;
        // Invariant: bits holds the objects [start, index), index - start a multiple of 16.
        while index + LANES <= end {
            // SAFETY: index + 16 <= end <= len of every array (SphereSlices checks lengths).
            let (x, y, z, radius) = unsafe {
                (load(input.x, index), load(input.y, index), load(input.z, index), load(input.radius, index))
            };
            // Step 2: radius by absolute value.
            let reach = abs(radius);
            let (mut outside, mut first_sum) = (zero, zero);
            for plane in 0..plane_count {
                // Step 3: signed distance ((nx*x + ny*y) + nz*z) + d.
                let distance = _mm512_add_ps(
                    _mm512_add_ps(
                        _mm512_add_ps(_mm512_mul_ps(lanes.normal_x[plane], x), _mm512_mul_ps(lanes.normal_y[plane], y)),
                        _mm512_mul_ps(lanes.normal_z[plane], z),
                    ),
                    lanes.offset[plane],
                );
                // Step 4: outside when even the nearest point is behind the plane.
                let sum = _mm512_add_ps(distance, reach);
                first_sum = if plane == 0 { sum } else { first_sum };
                outside = or(outside, sum);
            }
            // Step 1, answered last: lanes with a non-finite input.
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

/// Culls boxes; same contract as the scalar reference.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f,popcnt")]
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
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn aabbs_with<const FIXED: usize>(planes: &PlaneLanes, input: AabbSlices<'_>, words: &mut [u64]) -> usize {
    debug_assert!(FIXED == 0 || FIXED == planes.count, "{FIXED} planes expected");
    let plane_count = if FIXED == 0 { planes.count } else { FIXED };
    let lanes = broadcast(planes);
    let zero = _mm512_setzero_ps();
    let [center_x, center_y, center_z] = input.center;
    let [half_x, half_y, half_z] = input.half;
    let mut non_finite = 0;
    for (word_index, word) in words.iter_mut().enumerate() {
        let start = word_index * BITS_PER_WORD;
        let end = (start + BITS_PER_WORD).min(input.len());
        let mut bits = 0u64;
        let mut index = start;
        // Invariant: bits holds the objects [start, index), index - start a multiple of 16.
        while index + LANES <= end {
            // SAFETY: index + 16 <= end <= len of every array (AabbSlices checks lengths).
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
            let (hx, hy, hz) = (abs(hx), abs(hy), abs(hz));
            let (mut outside, mut first_sum) = (zero, zero);
            for plane in 0..plane_count {
                // Step 3: centre distance ((nx*cx + ny*cy) + nz*cz) + d.
                let distance = _mm512_add_ps(
                    _mm512_add_ps(
                        _mm512_add_ps(
                            _mm512_mul_ps(lanes.normal_x[plane], cx),
                            _mm512_mul_ps(lanes.normal_y[plane], cy),
                        ),
                        _mm512_mul_ps(lanes.normal_z[plane], cz),
                    ),
                    lanes.offset[plane],
                );
                // Step 4: reach of the corner furthest along n, (|nx|hx + |ny|hy) + |nz|hz.
                let reach = _mm512_add_ps(
                    _mm512_add_ps(_mm512_mul_ps(lanes.abs_x[plane], hx), _mm512_mul_ps(lanes.abs_y[plane], hy)),
                    _mm512_mul_ps(lanes.abs_z[plane], hz),
                );
                // Step 5: outside when even that corner is behind the plane.
                let sum = _mm512_add_ps(distance, reach);
                first_sum = if plane == 0 { sum } else { first_sum };
                outside = or(outside, sum);
            }
            // Step 1, answered last: lanes with a non-finite input.
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
