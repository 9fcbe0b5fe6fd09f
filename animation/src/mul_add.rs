//! How the group posing computes `a * b + c`: as a product and a sum, each rounded
//! ([`Separate`], every CPU), or as one fused multiply-add rounded once ([`Fused`], CPUs with
//! FMA, detected at run time: fewer instructions and a shorter dependency chain per matrix
//! product). A kernel uses one of them for every product-sum it fuses, in the same order at
//! every lane width, so all widths of one kind give the same bits; the two kinds differ in
//! the last bits (both are exact IEEE operations, the same on every CPU that runs them).

use crate::lanes::Lanes;

/// `a * b + c` lane by lane, one way for a whole kernel.
pub(crate) trait MulAdd: Copy {
    /// `a * b + c` in every lane.
    fn mul_add<L: Lanes<N>, const N: usize>(self, a: L, b: L, c: L) -> L;
}

/// A product, then a sum: two roundings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Separate;

impl MulAdd for Separate {
    #[inline(always)]
    fn mul_add<L: Lanes<N>, const N: usize>(self, a: L, b: L, c: L) -> L {
        a * b + c
    }
}

/// One fused multiply-add: one rounding. Only [`Fused::detect`] makes one, so holding one
/// proves the CPU has FMA.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fused(());

impl Fused {
    /// `Some` where the CPU has FMA.
    #[inline]
    pub(crate) fn detect() -> Option<Fused> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("fma") {
            return Some(Fused(()));
        }
        None
    }
}

impl MulAdd for Fused {
    #[inline(always)]
    fn mul_add<L: Lanes<N>, const N: usize>(self, a: L, b: L, c: L) -> L {
        // SAFETY: a `Fused` exists only where FMA was detected (`Fused::detect`).
        unsafe { a.fused_mul_add(b, c) }
    }
}
