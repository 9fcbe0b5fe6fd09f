//! The lane types the group posing ([`crate::wide`]) is written over: glam's `Vec4` (four
//! rigs, SSE) and `F32x8` (eight rigs, AVX, x86-64 only). Both do each lane's arithmetic with
//! the same IEEE operations (no fused multiply-add), so a rig's palette is the same bit for
//! bit whichever width posed it.

use std::ops::{Add, BitAnd, BitOr, Div, Mul, Sub};

use glam::{BVec4A, Mat4, Vec4};

/// `N` lanes of `f32`, one rig per lane.
pub(crate) trait Lanes<const N: usize>:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    /// A mask with one flag per lane.
    type Mask: Copy + BitAnd<Output = Self::Mask> + BitOr<Output = Self::Mask>;

    /// `value` in every lane.
    fn splat(value: f32) -> Self;
    /// The lanes from an array.
    fn from_array(values: [f32; N]) -> Self;
    /// Lane `lane`.
    fn lane(self, lane: usize) -> f32;
    /// Four lanes holding one value each (a splat `Vec4`), widened to every lane.
    fn widen(splat: Vec4) -> Self;
    /// The square root of each lane.
    fn sqrt(self) -> Self;
    /// The absolute value of each lane.
    fn abs(self) -> Self;
    /// The smaller of each lane (the SSE rule: `rhs` where either is NaN).
    fn min(self, rhs: Self) -> Self;
    /// The larger of each lane (the SSE rule: `rhs` where either is NaN).
    fn max(self, rhs: Self) -> Self;
    /// Lanes below `rhs`.
    fn cmplt(self, rhs: Self) -> Self::Mask;
    /// Lanes equal to `rhs`.
    fn cmpeq(self, rhs: Self) -> Self::Mask;
    /// `if_true` where `mask` is set, else `if_false`.
    fn select(mask: Self::Mask, if_true: Self, if_false: Self) -> Self;
    /// `value` in every flag.
    fn mask_splat(value: bool) -> Self::Mask;
    /// One bit per lane, lane 0 lowest.
    fn bitmask(mask: Self::Mask) -> u32;
    /// One `Vec4` per lane, transposed: component `c` of every lane in `[c]`.
    fn from_rows(rows: [Vec4; N]) -> [Self; 4];
    /// [`Lanes::from_rows`] undone: each lane's four components as one `Vec4`.
    fn to_rows(components: [Self; 4]) -> [Vec4; N];
}

impl Lanes<4> for Vec4 {
    type Mask = BVec4A;

    #[inline(always)]
    fn splat(value: f32) -> Self {
        Vec4::splat(value)
    }

    #[inline(always)]
    fn from_array(values: [f32; 4]) -> Self {
        Vec4::from_array(values)
    }

    #[inline(always)]
    fn lane(self, lane: usize) -> f32 {
        self[lane]
    }

    #[inline(always)]
    fn widen(splat: Vec4) -> Self {
        splat
    }

    #[inline(always)]
    fn sqrt(self) -> Self {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            // SAFETY: SSE2 is enabled for this target (checked by the cfg).
            unsafe { Vec4::from(std::arch::x86_64::_mm_sqrt_ps(self.into())) }
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        {
            Vec4::new(self.x.sqrt(), self.y.sqrt(), self.z.sqrt(), self.w.sqrt())
        }
    }

    #[inline(always)]
    fn abs(self) -> Self {
        Vec4::abs(self)
    }

    #[inline(always)]
    fn min(self, rhs: Self) -> Self {
        Vec4::min(self, rhs)
    }

    #[inline(always)]
    fn max(self, rhs: Self) -> Self {
        Vec4::max(self, rhs)
    }

    #[inline(always)]
    fn cmplt(self, rhs: Self) -> BVec4A {
        Vec4::cmplt(self, rhs)
    }

    #[inline(always)]
    fn cmpeq(self, rhs: Self) -> BVec4A {
        Vec4::cmpeq(self, rhs)
    }

    #[inline(always)]
    fn select(mask: BVec4A, if_true: Self, if_false: Self) -> Self {
        Vec4::select(mask, if_true, if_false)
    }

    #[inline(always)]
    fn mask_splat(value: bool) -> BVec4A {
        BVec4A::splat(value)
    }

    #[inline(always)]
    fn bitmask(mask: BVec4A) -> u32 {
        mask.bitmask()
    }

    #[inline(always)]
    fn from_rows(rows: [Vec4; 4]) -> [Self; 4] {
        let [a, b, c, d] = rows;
        let transposed = Mat4::from_cols(a, b, c, d).transpose();
        [transposed.x_axis, transposed.y_axis, transposed.z_axis, transposed.w_axis]
    }

    #[inline(always)]
    fn to_rows(components: [Self; 4]) -> [Vec4; 4] {
        Self::from_rows(components)
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use avx::F32x8;

#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;
    use std::ops::{Add, BitAnd, BitOr, Div, Mul, Sub};

    use glam::Vec4;

    use super::Lanes;

    /// Eight lanes in one AVX register.
    ///
    /// Only code that runs after AVX was detected may make or use one (the group posing's
    /// AVX entry point, and what it inlines): its operations are AVX instructions.
    #[derive(Clone, Copy)]
    pub(crate) struct F32x8(__m256);

    impl Default for F32x8 {
        fn default() -> Self {
            // SAFETY: all-zero bits are a valid `__m256`; no instruction runs.
            F32x8(unsafe { std::mem::zeroed() })
        }
    }

    impl std::fmt::Debug for F32x8 {
        fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            // SAFETY: `__m256` and `[f32; 8]` have the same size and any bits are valid.
            let lanes: [f32; 8] = unsafe { std::mem::transmute(self.0) };
            lanes.fmt(formatter)
        }
    }

    /// Implements a binary operator with one AVX instruction.
    macro_rules! binary {
        ($trait:ident, $method:ident, $intrinsic:ident) => {
            impl $trait for F32x8 {
                type Output = F32x8;
                #[inline(always)]
                fn $method(self, rhs: F32x8) -> F32x8 {
                    // SAFETY: an `F32x8` exists only where AVX was detected (type docs).
                    F32x8(unsafe { $intrinsic(self.0, rhs.0) })
                }
            }
        };
    }

    binary!(Add, add, _mm256_add_ps);
    binary!(Sub, sub, _mm256_sub_ps);
    binary!(Mul, mul, _mm256_mul_ps);
    binary!(Div, div, _mm256_div_ps);

    /// Eight lane flags (all bits set or clear per lane).
    #[derive(Clone, Copy)]
    pub(crate) struct Mask8(__m256);

    impl BitAnd for Mask8 {
        type Output = Mask8;
        #[inline(always)]
        fn bitand(self, rhs: Mask8) -> Mask8 {
            // SAFETY: as for `F32x8`.
            Mask8(unsafe { _mm256_and_ps(self.0, rhs.0) })
        }
    }

    impl BitOr for Mask8 {
        type Output = Mask8;
        #[inline(always)]
        fn bitor(self, rhs: Mask8) -> Mask8 {
            // SAFETY: as for `F32x8`.
            Mask8(unsafe { _mm256_or_ps(self.0, rhs.0) })
        }
    }

    // `halves`, `join` and `lane` reinterpret bits instead of calling AVX intrinsics, so they
    // inline anywhere (an AVX intrinsic stays a call in code compiled without AVX, such as a
    // closure that was not inlined).

    /// The low and high four lanes.
    #[inline(always)]
    fn halves(value: F32x8) -> (Vec4, Vec4) {
        // SAFETY: `__m256` is two `__m128`s, low lanes first; any bits are valid floats.
        let [low, high]: [__m128; 2] = unsafe { std::mem::transmute(value.0) };
        (Vec4::from(low), Vec4::from(high))
    }

    /// Lanes 0-3 from `low`, 4-7 from `high`.
    #[inline(always)]
    fn join(low: Vec4, high: Vec4) -> F32x8 {
        let halves: [__m128; 2] = [low.into(), high.into()];
        // SAFETY: as in `halves`.
        F32x8(unsafe { std::mem::transmute::<[__m128; 2], __m256>(halves) })
    }

    impl Lanes<8> for F32x8 {
        type Mask = Mask8;

        #[inline(always)]
        fn splat(value: f32) -> Self {
            // SAFETY: as for `F32x8`.
            F32x8(unsafe { _mm256_set1_ps(value) })
        }

        #[inline(always)]
        fn from_array(values: [f32; 8]) -> Self {
            // SAFETY: as in `halves`.
            F32x8(unsafe { std::mem::transmute::<[f32; 8], __m256>(values) })
        }

        #[inline(always)]
        fn lane(self, lane: usize) -> f32 {
            // SAFETY: as in `halves`.
            let lanes: [f32; 8] = unsafe { std::mem::transmute(self.0) };
            lanes[lane]
        }

        #[inline(always)]
        fn widen(splat: Vec4) -> Self {
            join(splat, splat)
        }

        #[inline(always)]
        fn sqrt(self) -> Self {
            // SAFETY: as for `F32x8`.
            F32x8(unsafe { _mm256_sqrt_ps(self.0) })
        }

        #[inline(always)]
        fn abs(self) -> Self {
            // SAFETY: as for `F32x8`.
            F32x8(unsafe { _mm256_andnot_ps(_mm256_set1_ps(-0.0), self.0) })
        }

        #[inline(always)]
        fn min(self, rhs: Self) -> Self {
            // SAFETY: as for `F32x8`.
            F32x8(unsafe { _mm256_min_ps(self.0, rhs.0) })
        }

        #[inline(always)]
        fn max(self, rhs: Self) -> Self {
            // SAFETY: as for `F32x8`.
            F32x8(unsafe { _mm256_max_ps(self.0, rhs.0) })
        }

        #[inline(always)]
        fn cmplt(self, rhs: Self) -> Mask8 {
            // SAFETY: as for `F32x8`.
            Mask8(unsafe { _mm256_cmp_ps::<_CMP_LT_OQ>(self.0, rhs.0) })
        }

        #[inline(always)]
        fn cmpeq(self, rhs: Self) -> Mask8 {
            // SAFETY: as for `F32x8`.
            Mask8(unsafe { _mm256_cmp_ps::<_CMP_EQ_OQ>(self.0, rhs.0) })
        }

        #[inline(always)]
        fn select(mask: Mask8, if_true: Self, if_false: Self) -> Self {
            // SAFETY: as for `F32x8`.
            F32x8(unsafe { _mm256_blendv_ps(if_false.0, if_true.0, mask.0) })
        }

        #[inline(always)]
        fn mask_splat(value: bool) -> Mask8 {
            let bits = [if value { u32::MAX } else { 0 }; 8];
            // SAFETY: as in `halves`.
            Mask8(unsafe { std::mem::transmute::<[u32; 8], __m256>(bits) })
        }

        #[inline(always)]
        fn bitmask(mask: Mask8) -> u32 {
            // SAFETY: as for `F32x8`.
            unsafe { _mm256_movemask_ps(mask.0) as u32 }
        }

        #[inline(always)]
        fn from_rows(rows: [Vec4; 8]) -> [Self; 4] {
            let [a, b, c, d, e, f, g, h] = rows;
            let low = Vec4::from_rows([a, b, c, d]);
            let high = Vec4::from_rows([e, f, g, h]);
            [join(low[0], high[0]), join(low[1], high[1]), join(low[2], high[2]), join(low[3], high[3])]
        }

        #[inline(always)]
        fn to_rows(components: [Self; 4]) -> [Vec4; 8] {
            let [(x0, x1), (y0, y1), (z0, z1), (w0, w1)] =
                [halves(components[0]), halves(components[1]), halves(components[2]), halves(components[3])];
            let [a, b, c, d] = Vec4::to_rows([x0, y0, z0, w0]);
            let [e, f, g, h] = Vec4::to_rows([x1, y1, z1, w1]);
            [a, b, c, d, e, f, g, h]
        }
    }
}
