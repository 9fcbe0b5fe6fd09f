//! Which compiled kernel poses a group of rigs ([`crate::wide`]): the lane width (four rigs in
//! `Vec4`, eight in AVX registers, eight compiled for AVX-512 VL's 32 registers) and how it
//! computes its products' sums ([`crate::mul_add`]: fused where the CPU has FMA). Each is the
//! same generic body compiled for its CPU features; [`LaneWidth::detect`] picks the fastest the
//! CPU runs.
//!
//! All fused kernels give a rig the same palette bit for bit, and so do all unfused ones
//! (tested); a fused and an unfused kernel differ in the last bits. Every CPU with FMA (every
//! one with AVX2 or AVX-512) runs a fused kernel, so two such machines pose the same bits.

use ecs::Aabb;
use glam::Vec4;

use crate::mul_add::{Fused, MulAdd, Separate};
use crate::wide::{pose_wide_lanes, WideRig, WideScratch, MAX_LANES};
use crate::{AnimationClip, JointBoxes, Skeleton};

/// A group posing kernel: how many rigs pose together, and whether its products' sums are
/// fused multiply-adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LaneWidth {
    /// Four rigs in `Vec4` lanes, a product and a sum apart (SSE: every x86-64 CPU).
    Four,
    /// Four rigs in `Vec4` lanes, fused (FMA). No CPU picks it (FMA comes with AVX): it
    /// proves the fused kernels' widths agree.
    FourFused,
    /// Eight rigs in AVX registers, a product and a sum apart (AVX without FMA).
    Eight,
    /// Eight rigs in AVX registers, fused (AVX and FMA).
    EightFused,
    /// Eight rigs, fused, the same 256-bit operations compiled for AVX-512 VL: its 32 vector
    /// registers hold a joint's matrices that the 16 of AVX spill to the stack.
    EightWithAvx512,
}

impl LaneWidth {
    /// The fastest kernel this CPU runs.
    #[inline]
    pub(crate) fn detect() -> LaneWidth {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected;
            let fma = Fused::detect().is_some();
            if fma && is_x86_feature_detected!("avx512vl") {
                return LaneWidth::EightWithAvx512;
            }
            if is_x86_feature_detected!("avx") {
                return if fma { LaneWidth::EightFused } else { LaneWidth::Eight };
            }
        }
        LaneWidth::Four
    }

    /// Every kernel this CPU runs.
    #[cfg(test)]
    pub(crate) fn available() -> Vec<LaneWidth> {
        let all = [
            LaneWidth::Four,
            LaneWidth::FourFused,
            LaneWidth::Eight,
            LaneWidth::EightFused,
            LaneWidth::EightWithAvx512,
        ];
        all.into_iter().filter(|width| width.runs_here()).collect()
    }

    /// Whether this CPU has the features the kernel is compiled for.
    pub(crate) fn runs_here(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected;
            let fma = Fused::detect().is_some();
            match self {
                LaneWidth::Four => true,
                LaneWidth::FourFused => fma,
                LaneWidth::Eight => is_x86_feature_detected!("avx"),
                LaneWidth::EightFused => fma && is_x86_feature_detected!("avx"),
                LaneWidth::EightWithAvx512 => fma && is_x86_feature_detected!("avx512vl"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == LaneWidth::Four
        }
    }

    /// Rigs per group.
    #[inline]
    pub(crate) fn lanes(self) -> usize {
        match self {
            LaneWidth::Four | LaneWidth::FourFused => 4,
            LaneWidth::Eight | LaneWidth::EightFused | LaneWidth::EightWithAvx512 => 8,
        }
    }

    /// Whether its products' sums are fused multiply-adds.
    #[cfg(test)]
    pub(crate) fn fused(self) -> bool {
        matches!(self, LaneWidth::FourFused | LaneWidth::EightFused | LaneWidth::EightWithAvx512)
    }
}

/// Poses up to `width.lanes()` rigs of `skeleton` playing `clip` (packed: checked by the
/// caller), each at its own time, writing each rig's palette; the lanes from the first `None`
/// on repeat the first rig into spare palettes (lanes with a rig must come first). Returns,
/// per lane, the box of its mesh (`boxes`, shared by the rigs) moved by its palette
/// ([`JointBoxes::posed`], bit for bit), or `None` when a skin matrix is not finite (the
/// caller falls back to the rig's bind pose then, and for a box that is not finite); lanes
/// past the width are `None`.
///
/// # Panics
/// Without a first rig, with a rig past the width, with a clip that is not packed, or a
/// palette slice shorter than the skeleton; with a kernel this CPU does not run
/// ([`LaneWidth::runs_here`]).
pub(crate) fn pose_wide(
    width: LaneWidth,
    skeleton: &Skeleton,
    clip: &AnimationClip,
    boxes: &JointBoxes,
    rigs: &mut [Option<WideRig<'_>>; MAX_LANES],
    scratch: &mut WideScratch,
) -> [Option<Aabb>; MAX_LANES] {
    assert!(width.runs_here(), "{width:?} needs CPU features this CPU lacks");
    let mut posed = [None; MAX_LANES];
    let group = Group { skeleton, clip, boxes };
    match width {
        LaneWidth::Four | LaneWidth::FourFused => {
            let (four, rest) = rigs.split_at_mut(4);
            assert!(rest.iter().all(Option::is_none), "four rigs at most");
            let four: &mut [Option<WideRig<'_>>; 4] = four.try_into().expect("four lanes");
            let bounds = match Fused::detect().filter(|_| width == LaneWidth::FourFused) {
                // SAFETY: the CPU has FMA (a `Fused` exists).
                Some(fused) => unsafe { pose_four_fma(&group, four, scratch, fused) },
                None => group.pose::<Vec4, 4, _>(four, scratch, Separate),
            };
            posed[..4].copy_from_slice(&bounds);
        }
        #[cfg(target_arch = "x86_64")]
        LaneWidth::Eight => {
            // SAFETY: the CPU has AVX (`runs_here`, asserted above).
            posed = unsafe { pose_eight_avx(&group, rigs, scratch) };
        }
        #[cfg(target_arch = "x86_64")]
        LaneWidth::EightFused | LaneWidth::EightWithAvx512 => {
            let fused = Fused::detect().expect("the kernel runs here (asserted above): the CPU has FMA");
            posed = if width == LaneWidth::EightFused {
                // SAFETY: the CPU has AVX and FMA (`runs_here`, asserted above).
                unsafe { pose_eight_avx_fma(&group, rigs, scratch, fused) }
            } else {
                // SAFETY: the CPU has AVX-512 VL and FMA (`runs_here`, asserted above).
                unsafe { pose_eight_avx512(&group, rigs, scratch, fused) }
            };
        }
        #[cfg(not(target_arch = "x86_64"))]
        _ => unreachable!("only four lanes run here (asserted above)"),
    }
    posed
}

/// What every rig of a group shares.
struct Group<'a> {
    skeleton: &'a Skeleton,
    clip: &'a AnimationClip,
    boxes: &'a JointBoxes,
}

impl Group<'_> {
    /// The kernel body for lane type `L` and products' sums `m`, inlined into each entry point.
    #[inline(always)]
    fn pose<L: WideLanes<N>, const N: usize, M: MulAdd>(
        &self,
        rigs: &mut [Option<WideRig<'_>>; N],
        scratch: &mut WideScratch,
        m: M,
    ) -> [Option<Aabb>; N] {
        let (lanes, spare) = L::scratch(scratch);
        pose_wide_lanes::<L, N, M>(self.skeleton, self.clip, self.boxes, rigs, lanes, spare, m)
    }
}

/// A lane type with its own scratch in [`WideScratch`].
pub(crate) trait WideLanes<const N: usize>: crate::lanes::Lanes<N> {
    /// Its scratch, and the spare palettes.
    fn scratch(
        scratch: &mut WideScratch,
    ) -> (&mut crate::wide::LaneScratch<Self>, &mut [Vec<crate::SkinMatrix>; MAX_LANES]);
}

/// Four fused lanes.
///
/// # Safety
/// The CPU must have FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn pose_four_fma(
    group: &Group<'_>,
    rigs: &mut [Option<WideRig<'_>>; 4],
    scratch: &mut WideScratch,
    fused: Fused,
) -> [Option<Aabb>; 4] {
    group.pose::<Vec4, 4, _>(rigs, scratch, fused)
}

/// Four fused lanes (elsewhere `Fused` never exists).
///
/// # Safety
/// None beyond holding a `Fused`.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn pose_four_fma(
    group: &Group<'_>,
    rigs: &mut [Option<WideRig<'_>>; 4],
    scratch: &mut WideScratch,
    fused: Fused,
) -> [Option<Aabb>; 4] {
    group.pose::<Vec4, 4, _>(rigs, scratch, fused)
}

/// Eight rigs in AVX registers, a product and a sum apart: the same operations as
/// [`LaneWidth::Four`], so the same bits, twice as many rigs an instruction.
///
/// # Safety
/// The CPU must have AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn pose_eight_avx(
    group: &Group<'_>,
    rigs: &mut [Option<WideRig<'_>>; MAX_LANES],
    scratch: &mut WideScratch,
) -> [Option<Aabb>; MAX_LANES] {
    group.pose::<crate::lanes::F32x8, 8, _>(rigs, scratch, Separate)
}

/// Eight rigs in AVX registers, fused: the same operations as [`LaneWidth::FourFused`].
///
/// # Safety
/// The CPU must have AVX and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,fma")]
unsafe fn pose_eight_avx_fma(
    group: &Group<'_>,
    rigs: &mut [Option<WideRig<'_>>; MAX_LANES],
    scratch: &mut WideScratch,
    fused: Fused,
) -> [Option<Aabb>; MAX_LANES] {
    group.pose::<crate::lanes::F32x8, 8, _>(rigs, scratch, fused)
}

/// [`pose_eight_avx_fma`] compiled for AVX-512 VL ([`LaneWidth::EightWithAvx512`]): the same
/// operations, so the same bits, with twice the vector registers.
///
/// # Safety
/// The CPU must have AVX-512 VL and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,fma,avx512f,avx512vl")]
unsafe fn pose_eight_avx512(
    group: &Group<'_>,
    rigs: &mut [Option<WideRig<'_>>; MAX_LANES],
    scratch: &mut WideScratch,
    fused: Fused,
) -> [Option<Aabb>; MAX_LANES] {
    group.pose::<crate::lanes::F32x8, 8, _>(rigs, scratch, fused)
}
