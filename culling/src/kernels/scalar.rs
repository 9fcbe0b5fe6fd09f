//! The scalar reference kernels: one object at a time through the per-object tests of
//! [`crate::frustum`]. Every other kernel must give exactly these bits.

use crate::bits::BITS_PER_WORD;
use crate::frustum::{aabb_lane, sphere_lane, PlaneLanes};
use crate::soa::{AabbSlices, SphereSlices};
use glam::Vec3;

/// Culls `input` against the planes, writing bit `i` of `words` for sphere `i`; returns the
/// number of spheres with a non-finite input.
///
/// `words.len()` must be `input.len().div_ceil(64)` (checked by the caller).
pub(crate) fn spheres(planes: &PlaneLanes, input: SphereSlices<'_>, words: &mut [u64]) -> usize {
    let mut non_finite = 0;
    for (word_index, word) in words.iter_mut().enumerate() {
        let start = word_index * BITS_PER_WORD;
        let end = (start + BITS_PER_WORD).min(input.len());
        let mut bits = 0u64;
        for index in start..end {
            let center = Vec3::new(input.x[index], input.y[index], input.z[index]);
            let verdict = sphere_lane(planes, center, input.radius[index]);
            bits |= u64::from(verdict.visible) << (index - start);
            non_finite += usize::from(verdict.non_finite);
        }
        *word = bits;
    }
    non_finite
}

/// Culls boxes given by centre and half extents; otherwise as [`spheres`].
pub(crate) fn aabbs(planes: &PlaneLanes, input: AabbSlices<'_>, words: &mut [u64]) -> usize {
    let [center_x, center_y, center_z] = input.center;
    let [half_x, half_y, half_z] = input.half;
    let mut non_finite = 0;
    for (word_index, word) in words.iter_mut().enumerate() {
        let start = word_index * BITS_PER_WORD;
        let end = (start + BITS_PER_WORD).min(input.len());
        let mut bits = 0u64;
        for index in start..end {
            let center = Vec3::new(center_x[index], center_y[index], center_z[index]);
            let half = Vec3::new(half_x[index], half_y[index], half_z[index]);
            let verdict = aabb_lane(planes, center, half);
            bits |= u64::from(verdict.visible) << (index - start);
            non_finite += usize::from(verdict.non_finite);
        }
        *word = bits;
    }
    non_finite
}
