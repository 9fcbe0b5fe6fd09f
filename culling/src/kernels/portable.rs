//! The portable kernels: eight objects at a time in plain arrays, which the compiler turns
//! into whatever vector instructions the target has. They repeat the steps of the scalar
//! reference (`crate::frustum::sphere_lane` and `aabb_lane`) lane by lane, with the same
//! operations in the same order, so they give the same bits.

use crate::bits::BITS_PER_WORD;
use crate::frustum::{aabb_lane, sphere_lane, PlaneLanes};
use crate::soa::{AabbSlices, SphereSlices};
use glam::Vec3;

/// Objects per group.
const LANES: usize = 8;

/// Eight consecutive values of one array, starting at `start` (which has eight left).
#[inline(always)]
fn group(array: &[f32], start: usize) -> [f32; LANES] {
    array[start..start + LANES].try_into().expect("the caller leaves eight values from start")
}

/// `f32` bits without the sign.
const MAGNITUDE: u32 = 0x7fff_ffff;
/// Magnitude bits of `f32::INFINITY`; every infinity and NaN has at least these.
const INFINITE: u32 = 0x7f80_0000;

/// Per lane, all ones when any of `values` is infinite or NaN (the reference's
/// `|value| <= f32::MAX`, negated), in integer steps the compiler vectorises: the
/// magnitude bits of an infinity or NaN are at least those of infinity, and the magnitude
/// fits in 31 bits, so a signed compare suffices.
#[inline(always)]
fn non_finite<const N: usize>(values: [[f32; LANES]; N]) -> [u32; LANES] {
    let mut bad = [0u32; LANES];
    for array in values {
        for lane in 0..LANES {
            let magnitude = (array[lane].to_bits() & MAGNITUDE) as i32;
            bad[lane] |= if magnitude >= INFINITE as i32 { u32::MAX } else { 0 };
        }
    }
    bad
}

/// `FIXED`, or the frustum's plane count when `FIXED` is 0: a constant count lets the
/// compiler unroll the plane loop and keep the planes in registers (the SIMD kernels' too).
#[inline(always)]
pub(super) fn plane_count<const FIXED: usize>(planes: &PlaneLanes) -> usize {
    debug_assert!(FIXED == 0 || FIXED == planes.count, "{FIXED} planes expected");
    if FIXED == 0 {
        planes.count
    } else {
        FIXED
    }
}

/// Keep-bits of eight spheres and the number of non-finite ones.
#[inline(always)]
fn sphere_group<const FIXED: usize>(
    planes: &PlaneLanes,
    x: [f32; LANES],
    y: [f32; LANES],
    z: [f32; LANES],
    radius: [f32; LANES],
) -> (u64, usize) {
    // Step 1: lanes with a non-finite input.
    let bad_lanes = non_finite([x, y, z, radius]);
    // Step 2: radius by absolute value.
    let reach = radius.map(f32::abs);
    let mut outside = [0u32; LANES];
    for plane in 0..plane_count::<FIXED>(planes) {
        let (normal_x, normal_y, normal_z, offset) =
            (planes.normal_x[plane], planes.normal_y[plane], planes.normal_z[plane], planes.offset[plane]);
        for lane in 0..LANES {
            // Step 3: signed distance ((nx*x + ny*y) + nz*z) + d.
            let distance = normal_x * x[lane] + normal_y * y[lane] + normal_z * z[lane] + offset;
            // Step 4: outside when even the nearest point is behind the plane, that is when
            // distance + reach is negative: its sign bit (see `pack`).
            outside[lane] |= (distance + reach[lane]).to_bits();
        }
    }
    pack(outside, bad_lanes)
}

/// Keep-bits of eight boxes and the number of non-finite ones.
#[inline(always)]
fn aabb_group<const FIXED: usize>(
    planes: &PlaneLanes,
    center: [[f32; LANES]; 3],
    half: [[f32; LANES]; 3],
) -> (u64, usize) {
    let [center_x, center_y, center_z] = center;
    // Step 1: lanes with a non-finite input.
    let bad_lanes = non_finite([center_x, center_y, center_z, half[0], half[1], half[2]]);
    // Step 2: half extents by absolute value.
    let [half_x, half_y, half_z] = half.map(|axis| axis.map(f32::abs));
    let mut outside = [0u32; LANES];
    for plane in 0..plane_count::<FIXED>(planes) {
        let (normal_x, normal_y, normal_z, offset) =
            (planes.normal_x[plane], planes.normal_y[plane], planes.normal_z[plane], planes.offset[plane]);
        let (abs_x, abs_y, abs_z) = (planes.abs_x[plane], planes.abs_y[plane], planes.abs_z[plane]);
        for lane in 0..LANES {
            // Step 3: centre distance ((nx*cx + ny*cy) + nz*cz) + d.
            let distance = normal_x * center_x[lane] + normal_y * center_y[lane] + normal_z * center_z[lane] + offset;
            // Step 4: reach of the corner furthest along n, (|nx|hx + |ny|hy) + |nz|hz.
            let reach = abs_x * half_x[lane] + abs_y * half_y[lane] + abs_z * half_z[lane];
            // Step 5: outside when even that corner is behind the plane, that is when
            // distance + reach is negative: its sign bit (see `pack`).
            outside[lane] |= (distance + reach).to_bits();
        }
    }
    pack(outside, bad_lanes)
}

/// Keep-bits of eight lanes and the number of non-finite lanes.
///
/// `outside` is the bitwise OR over the planes of `distance + reach`, so a lane's sign bit
/// is set exactly when some plane's sum is negative, the reference's `< 0`: for finite
/// inputs the sum is never NaN (products of unit normals and finite values are finite, and
/// a sum that overflows stays infinite with its sign) and never -0 (reach is +0 or more, and
/// round-to-nearest gives +0 for an exact zero sum). Lanes with a non-finite input are kept
/// whatever their sign bits say.
#[inline(always)]
fn pack(outside: [u32; LANES], bad_lanes: [u32; LANES]) -> (u64, usize) {
    let mut bits = 0u64;
    let mut non_finite = 0;
    for lane in 0..LANES {
        let culled = (outside[lane] & !bad_lanes[lane]) >> 31;
        bits |= u64::from(culled ^ 1) << lane;
        non_finite += (bad_lanes[lane] & 1) as usize;
    }
    (bits, non_finite)
}

/// Culls spheres; same contract as the scalar reference.
pub(crate) fn spheres(planes: &PlaneLanes, input: SphereSlices<'_>, words: &mut [u64]) -> usize {
    // The usual plane counts get a fully unrolled plane loop.
    match planes.count {
        5 => spheres_with::<5>(planes, input, words),
        6 => spheres_with::<6>(planes, input, words),
        _ => spheres_with::<0>(planes, input, words),
    }
}

/// The kernel for `FIXED` planes, or `planes.count` planes when `FIXED` is 0.
fn spheres_with<const FIXED: usize>(planes: &PlaneLanes, input: SphereSlices<'_>, words: &mut [u64]) -> usize {
    let mut non_finite = 0;
    for (word_index, word) in words.iter_mut().enumerate() {
        let start = word_index * BITS_PER_WORD;
        let end = (start + BITS_PER_WORD).min(input.len());
        let mut bits = 0u64;
        let mut index = start;
        // Invariant: bits holds the objects [start, index), index - start a multiple of 8.
        while index + LANES <= end {
            let (group_bits, group_non_finite) = sphere_group::<FIXED>(
                planes,
                group(input.x, index),
                group(input.y, index),
                group(input.z, index),
                group(input.radius, index),
            );
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
pub(crate) fn aabbs(planes: &PlaneLanes, input: AabbSlices<'_>, words: &mut [u64]) -> usize {
    // The usual plane counts get a fully unrolled plane loop.
    match planes.count {
        5 => aabbs_with::<5>(planes, input, words),
        6 => aabbs_with::<6>(planes, input, words),
        _ => aabbs_with::<0>(planes, input, words),
    }
}

/// The kernel for `FIXED` planes, or `planes.count` planes when `FIXED` is 0.
fn aabbs_with<const FIXED: usize>(planes: &PlaneLanes, input: AabbSlices<'_>, words: &mut [u64]) -> usize {
    let mut non_finite = 0;
    for (word_index, word) in words.iter_mut().enumerate() {
        let start = word_index * BITS_PER_WORD;
        let end = (start + BITS_PER_WORD).min(input.len());
        let mut bits = 0u64;
        let mut index = start;
        // Invariant: bits holds the objects [start, index), index - start a multiple of 8.
        while index + LANES <= end {
            let (group_bits, group_non_finite) = aabb_group::<FIXED>(
                planes,
                input.center.map(|array| group(array, index)),
                input.half.map(|array| group(array, index)),
            );
            bits |= group_bits << (index - start);
            non_finite += group_non_finite;
            index += LANES;
        }
        // The last partial group through the scalar reference.
        for rest in index..end {
            let center = Vec3::from_array(input.center.map(|array| array[rest]));
            let half = Vec3::from_array(input.half.map(|array| array[rest]));
            let verdict = aabb_lane(planes, center, half);
            bits |= u64::from(verdict.visible) << (rest - start);
            non_finite += usize::from(verdict.non_finite);
        }
        *word = bits;
    }
    non_finite
}
