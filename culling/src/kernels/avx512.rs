//! The AVX-512 kernels: sixteen objects per 512-bit register, four per 64-object word,
//! through the shared SIMD kernels (`simd.rs`). Where AVX-512 runs 512-bit operations as two
//! 256-bit halves (AMD Zen 4) the arithmetic costs the same per object; what is saved is half
//! the instructions, and the 32 registers hold more of the broadcast planes, which the AVX2
//! kernels spill to the stack at five or six planes. Bitwise operations are integer ones, so
//! AVX-512F alone suffices (the float ones need AVX-512DQ). Only `super` calls them, after
//! checking for AVX-512F and POPCNT.

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::simd::{self, Lanes, EXPONENT};
use crate::frustum::PlaneLanes;
use crate::soa::{AabbSlices, SphereSlices};

/// Sixteen lanes in an AVX-512 register.
#[derive(Clone, Copy)]
struct Avx512(__m512);

impl Avx512 {
    /// The lanes' bits as integers.
    #[inline(always)]
    unsafe fn bits(self) -> __m512i {
        _mm512_castps_si512(self.0)
    }
}

impl Lanes for Avx512 {
    const COUNT: usize = 16;

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
                Avx512(_mm512_loadu_ps(first))
            } else {
                Avx512(_mm512_maskz_loadu_ps((1u16 << count) - 1, first))
            }
        }
    }

    #[inline(always)]
    unsafe fn splat(value: f32) -> Self {
        Avx512(_mm512_set1_ps(value))
    }

    #[inline(always)]
    unsafe fn add(self, other: Self) -> Self {
        Avx512(_mm512_add_ps(self.0, other.0))
    }

    #[inline(always)]
    unsafe fn mul(self, other: Self) -> Self {
        Avx512(_mm512_mul_ps(self.0, other.0))
    }

    #[inline(always)]
    unsafe fn or(self, other: Self) -> Self {
        Avx512(_mm512_castsi512_ps(_mm512_or_si512(self.bits(), other.bits())))
    }

    #[inline(always)]
    unsafe fn abs(self) -> Self {
        Avx512(_mm512_castsi512_ps(_mm512_and_si512(self.bits(), _mm512_set1_epi32(i32::MAX))))
    }

    #[inline(always)]
    unsafe fn sign_bits(self) -> u64 {
        u64::from(_mm512_cmplt_epi32_mask(self.bits(), _mm512_setzero_si512()))
    }

    /// As the AVX2 kernels': the unsigned maximum of the masked exponent fields equals
    /// `EXPONENT` exactly when some input is infinite or NaN.
    #[inline(always)]
    unsafe fn non_finite_bits<const N: usize>(values: [Self; N]) -> u64 {
        let exponent = _mm512_set1_epi32(EXPONENT);
        let mut largest = _mm512_setzero_si512();
        for value in values {
            largest = _mm512_max_epu32(largest, _mm512_and_si512(value.bits(), exponent));
        }
        u64::from(_mm512_cmpeq_epi32_mask(largest, exponent))
    }

    #[inline(always)]
    unsafe fn any_non_finite(sum: Self) -> bool {
        let exponent = _mm512_set1_epi32(EXPONENT);
        _mm512_cmpeq_epi32_mask(_mm512_and_si512(sum.bits(), exponent), exponent) != 0
    }
}

/// Culls spheres; same contract as the scalar reference.
///
/// # Safety
/// The CPU must support AVX-512F and POPCNT.
#[target_feature(enable = "avx512f,popcnt")]
pub(crate) unsafe fn spheres(planes: &PlaneLanes, input: SphereSlices<'_>, words: &mut [u64]) -> usize {
    simd::spheres::<Avx512>(planes, input, words)
}

/// Culls boxes; same contract as the scalar reference.
///
/// # Safety
/// The CPU must support AVX-512F and POPCNT.
#[target_feature(enable = "avx512f,popcnt")]
pub(crate) unsafe fn aabbs(planes: &PlaneLanes, input: AabbSlices<'_>, words: &mut [u64]) -> usize {
    simd::aabbs::<Avx512>(planes, input, words)
}
