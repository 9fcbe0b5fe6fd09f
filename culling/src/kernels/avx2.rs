//! The AVX2 kernels: eight objects per 256-bit register, through the shared SIMD kernels
//! (`simd.rs`). Only `super` calls them, after checking for AVX2 and POPCNT.

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::simd::{self, Lanes, EXPONENT};
use crate::frustum::PlaneLanes;
use crate::soa::{AabbSlices, SphereSlices};

/// Eight lanes in an AVX register.
#[derive(Clone, Copy)]
struct Avx2(__m256);

impl Lanes for Avx2 {
    const COUNT: usize = 8;

    #[inline(always)]
    unsafe fn load(array: &[f32], start: usize, count: usize) -> Self {
        debug_assert!(
            (1..=Self::COUNT).contains(&count) && start + count <= array.len(),
            "{count} values from {start}"
        );
        // SAFETY: the caller guarantees `count` readable floats from `start`; neither load has
        // an alignment requirement, and the masked one touches only the lanes it keeps.
        unsafe {
            let first = array.as_ptr().add(start);
            if count == Self::COUNT {
                Avx2(_mm256_loadu_ps(first))
            } else {
                let kept =
                    _mm256_cmpgt_epi32(_mm256_set1_epi32(count as i32), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
                Avx2(_mm256_maskload_ps(first, kept))
            }
        }
    }

    #[inline(always)]
    unsafe fn splat(value: f32) -> Self {
        Avx2(_mm256_set1_ps(value))
    }

    #[inline(always)]
    unsafe fn add(self, other: Self) -> Self {
        Avx2(_mm256_add_ps(self.0, other.0))
    }

    #[inline(always)]
    unsafe fn mul(self, other: Self) -> Self {
        Avx2(_mm256_mul_ps(self.0, other.0))
    }

    #[inline(always)]
    unsafe fn or(self, other: Self) -> Self {
        Avx2(_mm256_or_ps(self.0, other.0))
    }

    #[inline(always)]
    unsafe fn abs(self) -> Self {
        Avx2(_mm256_andnot_ps(_mm256_set1_ps(-0.0), self.0))
    }

    #[inline(always)]
    unsafe fn sign_bits(self) -> u64 {
        u64::from(_mm256_movemask_ps(self.0) as u32)
    }

    /// A value is infinite or NaN exactly when its exponent field is all ones, the largest
    /// value the masked field can take, so the unsigned maximum of the masked fields equals
    /// `EXPONENT` exactly when some input is.
    #[inline(always)]
    unsafe fn non_finite_bits<const N: usize>(values: [Self; N]) -> u64 {
        let exponent = _mm256_set1_epi32(EXPONENT);
        let mut largest = _mm256_setzero_si256();
        for value in values {
            largest = _mm256_max_epu32(largest, _mm256_and_si256(_mm256_castps_si256(value.0), exponent));
        }
        Avx2(_mm256_castsi256_ps(_mm256_cmpeq_epi32(largest, exponent))).sign_bits()
    }

    #[inline(always)]
    unsafe fn any_non_finite(sum: Self) -> bool {
        let exponent = _mm256_set1_epi32(EXPONENT);
        let suspects = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(sum.0), exponent), exponent);
        _mm256_testz_si256(suspects, suspects) == 0
    }
}

/// Culls spheres; same contract as the scalar reference.
///
/// # Safety
/// The CPU must support AVX2 and POPCNT.
#[target_feature(enable = "avx2,popcnt")]
pub(crate) unsafe fn spheres(planes: &PlaneLanes, input: SphereSlices<'_>, words: &mut [u64]) -> usize {
    simd::spheres::<Avx2>(planes, input, words)
}

/// Culls boxes; same contract as the scalar reference.
///
/// # Safety
/// The CPU must support AVX2 and POPCNT.
#[target_feature(enable = "avx2,popcnt")]
pub(crate) unsafe fn aabbs(planes: &PlaneLanes, input: AabbSlices<'_>, words: &mut [u64]) -> usize {
    simd::aabbs::<Avx2>(planes, input, words)
}
