//! The portable kernels: eight objects at a time in plain arrays, which the compiler turns
//! into whatever vector instructions the target has. They repeat the steps of the scalar
//! reference (`crate::frustum::sphere_lane` and `aabb_lane`) lane by lane, with the same
//! operations in the same order, so they give the same bits.

use crate::bits::BITS_PER_WORD;
use crate::frustum::{aabb_lane, lane_is_finite, sphere_lane, PlaneLanes};
use crate::soa::{AabbSlices, SphereSlices};
use glam::Vec3;

/// Objects per group.
const LANES: usize = 8;

/// Eight consecutive values of one array, starting at `start` (which has eight left).
#[inline(always)]
fn group(array: &[f32], start: usize) -> [f32; LANES] {
    array[start..start + LANES].try_into().expect("the caller leaves eight values from start")
}

/// Keep-bits of eight spheres and the number of non-finite ones.
#[inline(always)]
fn sphere_group(
    planes: &PlaneLanes,
    x: [f32; LANES],
    y: [f32; LANES],
    z: [f32; LANES],
    radius: [f32; LANES],
) -> (u64, usize) {
    // Step 1: lanes with a non-finite input.
    let mut finite = [true; LANES];
    for lane in 0..LANES {
        finite[lane] =
            lane_is_finite(x[lane]) & lane_is_finite(y[lane]) & lane_is_finite(z[lane]) & lane_is_finite(radius[lane]);
    }
    // Step 2: radius by absolute value.
    let reach = radius.map(f32::abs);
    let mut outside = [false; LANES];
    for plane in 0..planes.count {
        let (normal_x, normal_y, normal_z, offset) =
            (planes.normal_x[plane], planes.normal_y[plane], planes.normal_z[plane], planes.offset[plane]);
        for lane in 0..LANES {
            // Step 3: signed distance ((nx*x + ny*y) + nz*z) + d.
            let distance = normal_x * x[lane] + normal_y * y[lane] + normal_z * z[lane] + offset;
            // Step 4: outside when even the nearest point is behind the plane.
            outside[lane] |= distance + reach[lane] < 0.0;
        }
    }
    pack(outside, finite)
}

/// Keep-bits of eight boxes and the number of non-finite ones.
#[inline(always)]
fn aabb_group(planes: &PlaneLanes, center: [[f32; LANES]; 3], half: [[f32; LANES]; 3]) -> (u64, usize) {
    let [center_x, center_y, center_z] = center;
    // Step 1: lanes with a non-finite input.
    let mut finite = [true; LANES];
    for lane in 0..LANES {
        finite[lane] = lane_is_finite(center_x[lane])
            & lane_is_finite(center_y[lane])
            & lane_is_finite(center_z[lane])
            & lane_is_finite(half[0][lane])
            & lane_is_finite(half[1][lane])
            & lane_is_finite(half[2][lane]);
    }
    // Step 2: half extents by absolute value.
    let [half_x, half_y, half_z] = half.map(|axis| axis.map(f32::abs));
    let mut outside = [false; LANES];
    for plane in 0..planes.count {
        let (normal_x, normal_y, normal_z, offset) =
            (planes.normal_x[plane], planes.normal_y[plane], planes.normal_z[plane], planes.offset[plane]);
        let (abs_x, abs_y, abs_z) = (planes.abs_x[plane], planes.abs_y[plane], planes.abs_z[plane]);
        for lane in 0..LANES {
            // Step 3: centre distance ((nx*cx + ny*cy) + nz*cz) + d.
            let distance = normal_x * center_x[lane] + normal_y * center_y[lane] + normal_z * center_z[lane] + offset;
            // Step 4: reach of the corner furthest along n.
            let reach = abs_x * half_x[lane] + abs_y * half_y[lane] + abs_z * half_z[lane];
            // Step 5: outside when even that corner is behind the plane.
            outside[lane] |= distance + reach < 0.0;
        }
    }
    pack(outside, finite)
}

/// Keep-bits (kept unless outside, always kept when non-finite) and non-finite count.
#[inline(always)]
fn pack(outside: [bool; LANES], finite: [bool; LANES]) -> (u64, usize) {
    let mut bits = 0u64;
    let mut non_finite = 0;
    for lane in 0..LANES {
        bits |= u64::from(!outside[lane] | !finite[lane]) << lane;
        non_finite += usize::from(!finite[lane]);
    }
    (bits, non_finite)
}

/// Culls spheres; same contract as the scalar reference.
pub(crate) fn spheres(planes: &PlaneLanes, input: SphereSlices<'_>, words: &mut [u64]) -> usize {
    let mut non_finite = 0;
    for (word_index, word) in words.iter_mut().enumerate() {
        let start = word_index * BITS_PER_WORD;
        let end = (start + BITS_PER_WORD).min(input.len());
        let mut bits = 0u64;
        let mut index = start;
        // Invariant: bits holds the objects [start, index), index - start a multiple of 8.
        while index + LANES <= end {
            let (group_bits, group_non_finite) = sphere_group(
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
    let mut non_finite = 0;
    for (word_index, word) in words.iter_mut().enumerate() {
        let start = word_index * BITS_PER_WORD;
        let end = (start + BITS_PER_WORD).min(input.len());
        let mut bits = 0u64;
        let mut index = start;
        // Invariant: bits holds the objects [start, index), index - start a multiple of 8.
        while index + LANES <= end {
            let (group_bits, group_non_finite) = aabb_group(
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
