//! The SIMD frustum kernels, written once over a register of lanes ([`Lanes`]): AVX2 (eight
//! objects per register, `avx2.rs`) and AVX-512 (sixteen, `avx512.rs`) supply the register
//! operations. They repeat the steps of the scalar reference (`crate::frustum::sphere_lane`
//! and `aabb_lane`) with separate multiplies and adds (never a fused multiply-add, which
//! rounds once instead of twice) in the same order, so every width gives the same bits.
//!
//! An input's last partial group (its length past a multiple of the register's lanes) goes
//! through the same steps with a masked load instead of the scalar reference, one object at a
//! time: the Visibility stage culls blocks of the few objects of a word it must decide, where
//! that tail was most of the work (a block of 40 boxes: 80 -> 64 ns with AVX2, 118 -> 69 ns
//! with AVX-512).
//!
//! The functions here are `#[inline(always)]` and are compiled only into the entry points of
//! `avx2.rs` and `avx512.rs`, which carry the target features their registers need.

use super::portable::plane_count;
use crate::bits::BITS_PER_WORD;
use crate::frustum::{PlaneLanes, MAX_PLANES};
use crate::soa::{AabbSlices, SphereSlices};

/// A register of `COUNT` `f32` lanes and the operations the kernels take, each per lane with
/// IEEE rounding (round to nearest), exactly as the scalar reference's.
///
/// # Safety
/// Every method requires the CPU features of the implementing register; callers run them
/// only inside functions compiled with those features.
pub(super) trait Lanes: Copy {
    /// Objects per register; divides 64, so a word holds whole registers.
    const COUNT: usize;

    /// `count` values of `array` from `start` (`1..=COUNT` of them), zeros in the lanes past
    /// them: a whole register in the word loop, where `count` is the constant `COUNT`, and the
    /// last partial group of an input through a masked load, which reads nothing past the
    /// values it keeps.
    ///
    /// # Safety
    /// `start + count <= array.len()`, and the register's features.
    unsafe fn load(array: &[f32], start: usize, count: usize) -> Self;

    /// `value` in every lane.
    unsafe fn splat(value: f32) -> Self;

    unsafe fn add(self, other: Self) -> Self;

    unsafe fn mul(self, other: Self) -> Self;

    /// Bitwise OR.
    unsafe fn or(self, other: Self) -> Self;

    /// `|value|`: the sign bit cleared.
    unsafe fn abs(self) -> Self;

    /// A bit per lane (lane `i` at bit `i`): its sign bit is set.
    unsafe fn sign_bits(self) -> u64;

    /// A bit per lane where some of `values` is infinite or NaN (the reference's
    /// `|value| <= f32::MAX`, negated).
    unsafe fn non_finite_bits<const N: usize>(values: [Self; N]) -> u64;

    /// Whether some lane of `sum` is infinite or NaN.
    unsafe fn any_non_finite(sum: Self) -> bool;
}

/// Exponent bits of an `f32`: all ones exactly for infinities and NaNs. The registers' checks
/// are integer operations on these, which leave the floating-point pipes to the plane tests.
pub(super) const EXPONENT: i32 = 0x7f80_0000;

/// The planes broadcast to all lanes.
struct Broadcast<L> {
    normal_x: [L; MAX_PLANES],
    normal_y: [L; MAX_PLANES],
    normal_z: [L; MAX_PLANES],
    offset: [L; MAX_PLANES],
    abs_x: [L; MAX_PLANES],
    abs_y: [L; MAX_PLANES],
    abs_z: [L; MAX_PLANES],
}

/// # Safety
/// The register's features.
#[inline(always)]
unsafe fn broadcast<L: Lanes>(planes: &PlaneLanes) -> Broadcast<L> {
    // SAFETY: the caller runs with the register's features.
    let splat = |values: &[f32; MAX_PLANES]| values.map(|value| unsafe { L::splat(value) });
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

/// Lanes where any of `inputs` is not finite, given `first_sum`, the first plane's
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
/// The register's features.
#[inline(always)]
unsafe fn non_finite_lanes<L: Lanes, const N: usize>(plane_count: usize, first_sum: L, inputs: [L; N]) -> u64 {
    if plane_count > 0 && !L::any_non_finite(first_sum) {
        0
    } else {
        L::non_finite_bits(inputs)
    }
}

/// Keep-bits of one register's lanes and the number of non-finite lanes.
///
/// `outside` is the bitwise OR over the planes of `distance + reach`, so a lane's sign bit is
/// set exactly when some plane's sum is negative, the reference's `< 0`: for finite inputs
/// the sum is never NaN (products of unit normals and finite values are finite, and a sum
/// that overflows stays infinite with its sign), and never -0 (reach is +0 or more, and
/// round-to-nearest gives +0 for an exact zero sum). Lanes with a non-finite input are kept
/// whatever their sign bits say.
///
/// # Safety
/// The register's features.
#[inline(always)]
unsafe fn pack<L: Lanes>(outside: L, non_finite: u64) -> (u64, usize) {
    let all = u64::MAX >> (64 - L::COUNT);
    let keep = !(outside.sign_bits() & !non_finite) & all;
    (keep, non_finite.count_ones() as usize)
}

/// The word loop both kernels share: `$group` decides the `$count` objects from `$index`
/// (keep-bits and non-finite count), `$count` being `COUNT` but for the last group of the
/// input, which may be partial (then the lanes past it, loaded as zeros, are dropped).
/// Evaluates to the number of non-finite objects. A macro rather than a function taking a
/// closure: a closure is a function of its own, compiled without the kernel's target
/// features, and the register operations in it would not inline (measured: 40% slower).
macro_rules! cull_words {
    ($lanes:ty, $len:expr, $words:expr, |$index:ident, $count:ident| $group:block) => {{
        let len: usize = $len;
        let mut non_finite = 0;
        for (word_index, word) in $words.iter_mut().enumerate() {
            let start = word_index * BITS_PER_WORD;
            let end = (start + BITS_PER_WORD).min(len);
            let mut bits = 0u64;
            let mut $index = start;
            // Invariant: bits holds the objects [start, index), index - start a multiple of
            // COUNT.
            while $index + <$lanes>::COUNT <= end {
                let $count = <$lanes>::COUNT;
                let (group_bits, group_non_finite): (u64, usize) = $group;
                bits |= group_bits << ($index - start);
                non_finite += group_non_finite;
                $index += <$lanes>::COUNT;
            }
            if $index < end {
                let $count = end - $index;
                let (group_bits, group_non_finite): (u64, usize) = $group;
                bits |= (group_bits & (u64::MAX >> (64 - $count))) << ($index - start);
                non_finite += group_non_finite;
            }
            *word = bits;
        }
        non_finite
    }};
}

/// Culls spheres; same contract as the scalar reference.
///
/// # Safety
/// The register's features (and POPCNT).
#[inline(always)]
pub(super) unsafe fn spheres<L: Lanes>(planes: &PlaneLanes, input: SphereSlices<'_>, words: &mut [u64]) -> usize {
    // The usual plane counts get a fully unrolled plane loop.
    match planes.count {
        5 => spheres_with::<L, 5>(planes, input, words),
        6 => spheres_with::<L, 6>(planes, input, words),
        _ => spheres_with::<L, 0>(planes, input, words),
    }
}

/// The sphere kernel for `FIXED` planes, or `planes.count` planes when `FIXED` is 0.
///
/// # Safety
/// The register's features (and POPCNT).
#[inline(always)]
unsafe fn spheres_with<L: Lanes, const FIXED: usize>(
    planes: &PlaneLanes,
    input: SphereSlices<'_>,
    words: &mut [u64],
) -> usize {
    let plane_count = plane_count::<FIXED>(planes);
    let lanes = broadcast::<L>(planes);
    let zero = L::splat(0.0);
    cull_words!(L, input.len(), words, |index, count| {
        // SAFETY: `cull_words` leaves `count` objects from `index`, and every array has
        // the same length (SphereSlices checks).
        let (x, y, z, radius) = unsafe {
            (
                L::load(input.x, index, count),
                L::load(input.y, index, count),
                L::load(input.z, index, count),
                L::load(input.radius, index, count),
            )
        };
        // Step 2: radius by absolute value.
        let reach = radius.abs();
        let (mut outside, mut first_sum) = (zero, zero);
        for plane in 0..plane_count {
            // Step 3: signed distance ((nx*x + ny*y) + nz*z) + d.
            let distance = lanes.normal_x[plane]
                .mul(x)
                .add(lanes.normal_y[plane].mul(y))
                .add(lanes.normal_z[plane].mul(z))
                .add(lanes.offset[plane]);
            // Step 4: outside when even the nearest point is behind the plane, that is when
            // distance + reach is negative: its sign bit (see `pack`).
            let sum = distance.add(reach);
            first_sum = if plane == 0 { sum } else { first_sum };
            outside = outside.or(sum);
        }
        // Step 1, answered last: lanes with a non-finite input (see `non_finite_lanes`).
        pack(outside, non_finite_lanes(plane_count, first_sum, [x, y, z, radius]))
    })
}

/// Culls boxes; same contract as the scalar reference.
///
/// # Safety
/// The register's features (and POPCNT).
#[inline(always)]
pub(super) unsafe fn aabbs<L: Lanes>(planes: &PlaneLanes, input: AabbSlices<'_>, words: &mut [u64]) -> usize {
    // The usual plane counts get a fully unrolled plane loop.
    match planes.count {
        5 => aabbs_with::<L, 5>(planes, input, words),
        6 => aabbs_with::<L, 6>(planes, input, words),
        _ => aabbs_with::<L, 0>(planes, input, words),
    }
}

/// The box kernel for `FIXED` planes, or `planes.count` planes when `FIXED` is 0.
///
/// # Safety
/// The register's features (and POPCNT).
#[inline(always)]
unsafe fn aabbs_with<L: Lanes, const FIXED: usize>(
    planes: &PlaneLanes,
    input: AabbSlices<'_>,
    words: &mut [u64],
) -> usize {
    let plane_count = plane_count::<FIXED>(planes);
    let lanes = broadcast::<L>(planes);
    let zero = L::splat(0.0);
    let [center_x, center_y, center_z] = input.center;
    let [half_x, half_y, half_z] = input.half;
    cull_words!(L, input.len(), words, |index, count| {
        // SAFETY: `cull_words` leaves `count` objects from `index`, and every array has
        // the same length (AabbSlices checks).
        let (cx, cy, cz, hx, hy, hz) = unsafe {
            (
                L::load(center_x, index, count),
                L::load(center_y, index, count),
                L::load(center_z, index, count),
                L::load(half_x, index, count),
                L::load(half_y, index, count),
                L::load(half_z, index, count),
            )
        };
        let inputs = [cx, cy, cz, hx, hy, hz];
        // Step 2: half extents by absolute value.
        let (hx, hy, hz) = (hx.abs(), hy.abs(), hz.abs());
        let (mut outside, mut first_sum) = (zero, zero);
        for plane in 0..plane_count {
            // Step 3: centre distance ((nx*cx + ny*cy) + nz*cz) + d.
            let distance = lanes.normal_x[plane]
                .mul(cx)
                .add(lanes.normal_y[plane].mul(cy))
                .add(lanes.normal_z[plane].mul(cz))
                .add(lanes.offset[plane]);
            // Step 4: reach of the corner furthest along n, (|nx|hx + |ny|hy) + |nz|hz.
            let reach = lanes.abs_x[plane].mul(hx).add(lanes.abs_y[plane].mul(hy)).add(lanes.abs_z[plane].mul(hz));
            // Step 5: outside when even that corner is behind the plane, that is when
            // distance + reach is negative: its sign bit (see `pack`).
            let sum = distance.add(reach);
            first_sum = if plane == 0 { sum } else { first_sum };
            outside = outside.or(sum);
        }
        // Step 1, answered last: lanes with a non-finite input (see `non_finite_lanes`).
        pack(outside, non_finite_lanes(plane_count, first_sum, inputs))
    })
}
