//! Batch frustum kernels over structure-of-arrays inputs, and the one place that picks the
//! instruction set.
//!
//! Four kernels give the same bits for the same input: [`Kernel::Scalar`] (the reference,
//! one object at a time), [`Kernel::Portable`] (eight-lane arrays the compiler vectorises),
//! [`Kernel::Avx2`] and [`Kernel::Avx512`] (std::arch intrinsics, eight and sixteen objects
//! per register, one kernel written over both widths in `simd.rs`). Each writes one `u64`
//! per 64 objects, so a parallel caller culls disjoint 64-object-aligned ranges into
//! disjoint word ranges without allocating or synchronising.
//!
//! Selection: [`Kernel::detect`] picks AVX-512 when the CPU has AVX-512F, else AVX2 when it
//! has that, else the portable kernel; setting the environment variable `ENGINE_NO_SIMD=1`
//! selects the scalar reference, and `ENGINE_NO_AVX512=1` stops at AVX2.

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx2;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx512;
mod portable;
mod scalar;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod simd;

use std::ops::{Add, AddAssign};
use std::sync::OnceLock;

use crate::bits::{words_for, VisibilityBits};
use crate::frustum::{Frustum, PlaneLanes};
use crate::soa::{AabbSlices, AabbSoa, SphereSlices, SphereSoa};

/// Environment variable that, set to `1`, turns the SIMD kernels off.
pub const NO_SIMD_ENV: &str = "ENGINE_NO_SIMD";

/// Environment variable that, set to `1`, keeps [`Kernel::detect`] at AVX2 on a CPU with
/// AVX-512: for comparing the two in a whole program, and for CPUs that lower their clock
/// while they run 512-bit instructions (older Intel server parts).
pub const NO_AVX512_ENV: &str = "ENGINE_NO_AVX512";

/// What a cull saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CullStats {
    /// Objects tested.
    pub tested: usize,
    /// Objects kept (may be visible), non-finite ones included.
    pub visible: usize,
    /// Objects kept only because an input (their bounds, or the view matrix) was NaN or
    /// infinite.
    pub non_finite: usize,
}

impl Add for CullStats {
    type Output = CullStats;

    fn add(self, other: CullStats) -> CullStats {
        CullStats {
            tested: self.tested + other.tested,
            visible: self.visible + other.visible,
            non_finite: self.non_finite + other.non_finite,
        }
    }
}

impl AddAssign for CullStats {
    fn add_assign(&mut self, other: CullStats) {
        *self = *self + other;
    }
}

/// A frustum kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// The reference: one object at a time.
    Scalar,
    /// Eight-lane arrays that the compiler vectorises for any target.
    Portable,
    /// AVX2 intrinsics, eight objects per register. Falls back to [`Kernel::Portable`] when
    /// the CPU lacks AVX2.
    Avx2,
    /// AVX-512F intrinsics, sixteen objects per register, for the frustum kernels; the
    /// engine's other x86 paths (occlusion's projection, raster and tests) run their AVX2
    /// versions under it ([`Kernel::uses_avx2`]). Falls back to [`Kernel::Avx2`] when the CPU
    /// lacks AVX-512F. On a CPU that runs 512-bit operations as two 256-bit halves (AMD Zen 4)
    /// the arithmetic per object costs the same; what it saves is half the instructions and
    /// the AVX2 kernels' spills of the broadcast planes (one thread, AMD EPYC Zen 4, best of
    /// 20 alternating runs: 1M boxes 1.13 -> 0.96 ms, 16k boxes in cache 15.2 -> 11.1 µs).
    Avx512,
}

impl Kernel {
    /// Every kernel, for tests and benchmarks that compare them.
    pub const ALL: [Kernel; 4] = [Kernel::Scalar, Kernel::Portable, Kernel::Avx2, Kernel::Avx512];

    /// The fastest kernel this CPU runs, decided once per process: AVX-512 when available
    /// (unless `ENGINE_NO_AVX512=1`), else AVX2, else portable; the scalar reference when
    /// `ENGINE_NO_SIMD=1`.
    pub fn detect() -> Kernel {
        static CHOSEN: OnceLock<Kernel> = OnceLock::new();
        *CHOSEN.get_or_init(|| {
            let set = |name: &str| std::env::var(name).is_ok_and(|value| value.trim() == "1");
            if set(NO_SIMD_ENV) {
                Kernel::Scalar
            } else if Kernel::Avx512.is_supported() && !set(NO_AVX512_ENV) {
                Kernel::Avx512
            } else if Kernel::Avx2.is_supported() {
                Kernel::Avx2
            } else {
                Kernel::Portable
            }
        })
    }

    /// Whether this CPU runs the kernel natively (an unsupported one falls back to the next
    /// narrower one, down to portable).
    pub fn is_supported(self) -> bool {
        match self {
            Kernel::Scalar | Kernel::Portable => true,
            Kernel::Avx2 => avx2_available(),
            Kernel::Avx512 => avx2_available() && avx512_available(),
        }
    }

    /// The kernel that runs when this one is asked for on this CPU: itself where the CPU runs
    /// it, else the next narrower one that it does (AVX-512 falls back to AVX2, AVX2 to
    /// portable), as [`Kernel::cull_spheres`] and [`Kernel::cull_aabbs`] fall back.
    pub fn runs_as(self) -> Kernel {
        match self {
            Kernel::Avx512 if !self.is_supported() => Kernel::Avx2.runs_as(),
            Kernel::Avx2 if !self.is_supported() => Kernel::Portable,
            kernel => kernel,
        }
    }

    /// What this CPU lacks to run the kernel natively, or `None` when it runs it.
    pub fn missing_feature(self) -> Option<&'static str> {
        match self {
            Kernel::Scalar | Kernel::Portable => None,
            Kernel::Avx2 if !avx2_available() => Some("AVX2 and POPCNT"),
            Kernel::Avx512 if !avx2_available() => Some("AVX2, AVX-512F and POPCNT"),
            Kernel::Avx512 if !avx512_available() => Some("AVX-512F"),
            Kernel::Avx2 | Kernel::Avx512 => None,
        }
    }

    /// Whether code with an AVX2 path of its own (occlusion's projection, raster and tests)
    /// takes it under this kernel: under [`Kernel::Avx2`] and [`Kernel::Avx512`] when the CPU
    /// has AVX2.
    pub fn uses_avx2(self) -> bool {
        matches!(self, Kernel::Avx2 | Kernel::Avx512) && avx2_available()
    }

    /// Culls spheres against `frustum`: bit `i` of `words` (LSB first) is set when sphere
    /// `i` may be visible. Bits past `spheres.len()` in the last word are cleared.
    ///
    /// A sphere with a non-finite input is kept and counted; a non-finite frustum keeps and
    /// counts every sphere.
    ///
    /// # Panics
    /// When `words.len() != spheres.len().div_ceil(64)`.
    pub fn cull_spheres(self, frustum: &Frustum, spheres: SphereSlices<'_>, words: &mut [u64]) -> CullStats {
        let count = spheres.len();
        check_words(count, words);
        if !frustum.is_finite() {
            return keep_all(count, words);
        }
        let planes = frustum.lanes();
        let non_finite = match self {
            Kernel::Scalar => scalar::spheres(planes, spheres, words),
            Kernel::Portable => portable::spheres(planes, spheres, words),
            Kernel::Avx2 => avx2_spheres(planes, spheres, words),
            Kernel::Avx512 => avx512_spheres(planes, spheres, words),
        };
        stats(count, non_finite, words)
    }

    /// Culls boxes (centre and half extents) against `frustum`; otherwise as
    /// [`Kernel::cull_spheres`].
    ///
    /// # Panics
    /// When `words.len() != boxes.len().div_ceil(64)`.
    pub fn cull_aabbs(self, frustum: &Frustum, boxes: AabbSlices<'_>, words: &mut [u64]) -> CullStats {
        let count = boxes.len();
        check_words(count, words);
        if !frustum.is_finite() {
            return keep_all(count, words);
        }
        let planes = frustum.lanes();
        let non_finite = match self {
            Kernel::Scalar => scalar::aabbs(planes, boxes, words),
            Kernel::Portable => portable::aabbs(planes, boxes, words),
            Kernel::Avx2 => avx2_aabbs(planes, boxes, words),
            Kernel::Avx512 => avx512_aabbs(planes, boxes, words),
        };
        stats(count, non_finite, words)
    }
}

/// Culls every sphere of `spheres` with the detected kernel into `bits`, which is resized
/// to the sphere count (no allocation within its capacity).
pub fn cull_spheres(frustum: &Frustum, spheres: &SphereSoa, bits: &mut VisibilityBits) -> CullStats {
    let view = spheres.slices();
    bits.reset(view.len());
    Kernel::detect().cull_spheres(frustum, view, bits.words_mut())
}

/// Culls every box of `boxes` with the detected kernel into `bits`, which is resized to the
/// box count (no allocation within its capacity).
pub fn cull_aabbs(frustum: &Frustum, boxes: &AabbSoa, bits: &mut VisibilityBits) -> CullStats {
    let view = boxes.slices();
    bits.reset(view.len());
    Kernel::detect().cull_aabbs(frustum, view, bits.words_mut())
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn avx2_available() -> bool {
    // Every AVX2 CPU has POPCNT; the kernels count lanes with it.
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("popcnt")
}

/// Whether the CPU runs the AVX-512 kernels (AVX-512F and POPCNT).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn avx512_available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("popcnt")
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
fn avx2_available() -> bool {
    false
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
fn avx512_available() -> bool {
    false
}

/// The AVX2 sphere kernel where the CPU has AVX2, else the portable one.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn avx2_spheres(planes: &PlaneLanes, spheres: SphereSlices<'_>, words: &mut [u64]) -> usize {
    if avx2_available() {
        // SAFETY: the CPU supports AVX2 and POPCNT, checked just above.
        unsafe { avx2::spheres(planes, spheres, words) }
    } else {
        portable::spheres(planes, spheres, words)
    }
}

/// The AVX2 box kernel where the CPU has AVX2, else the portable one.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn avx2_aabbs(planes: &PlaneLanes, boxes: AabbSlices<'_>, words: &mut [u64]) -> usize {
    if avx2_available() {
        // SAFETY: the CPU supports AVX2 and POPCNT, checked just above.
        unsafe { avx2::aabbs(planes, boxes, words) }
    } else {
        portable::aabbs(planes, boxes, words)
    }
}

/// The AVX-512 sphere kernel where the CPU has AVX-512F, else the AVX2 one.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn avx512_spheres(planes: &PlaneLanes, spheres: SphereSlices<'_>, words: &mut [u64]) -> usize {
    if avx512_available() {
        // SAFETY: the CPU supports AVX-512F and POPCNT, checked just above.
        unsafe { avx512::spheres(planes, spheres, words) }
    } else {
        avx2_spheres(planes, spheres, words)
    }
}

/// The AVX-512 box kernel where the CPU has AVX-512F, else the AVX2 one.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn avx512_aabbs(planes: &PlaneLanes, boxes: AabbSlices<'_>, words: &mut [u64]) -> usize {
    if avx512_available() {
        // SAFETY: the CPU supports AVX-512F and POPCNT, checked just above.
        unsafe { avx512::aabbs(planes, boxes, words) }
    } else {
        avx2_aabbs(planes, boxes, words)
    }
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
use portable::{aabbs as avx2_aabbs, aabbs as avx512_aabbs, spheres as avx2_spheres, spheres as avx512_spheres};

fn check_words(count: usize, words: &[u64]) {
    assert_eq!(words.len(), words_for(count), "{count} objects need {} visibility words", words_for(count));
}

/// Keeps and counts every object (the frustum is not finite).
fn keep_all(count: usize, words: &mut [u64]) -> CullStats {
    for (word_index, word) in words.iter_mut().enumerate() {
        let in_word = (count - word_index * 64).min(64);
        *word = if in_word == 64 { u64::MAX } else { (1u64 << in_word) - 1 };
    }
    CullStats { tested: count, visible: count, non_finite: count }
}

fn stats(count: usize, non_finite: usize, words: &[u64]) -> CullStats {
    CullStats { tested: count, visible: words.iter().map(|word| word.count_ones() as usize).sum(), non_finite }
}

#[cfg(test)]
pub(crate) mod coverage;
#[cfg(test)]
mod tests;
