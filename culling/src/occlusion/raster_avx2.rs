//! The AVX2 tile kernel: eight pixels of a row per register. It repeats the steps of
//! [`super::raster::raster_scalar`] with separate multiplies and adds (never a fused
//! multiply-add) in the same order, and `min`/`max`/`and` whose choices match the scalar
//! comparisons on finite values, so it writes the same bits.

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::tile::{Shape, LANES, TILE_PIXELS, TILE_WIDTH};

/// Rasterizes `shape` over `span` of the tile at `origin`; same contract as the scalar
/// reference.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn raster(shape: &Shape<'_>, origin: [i32; 2], span: [i32; 4], tile: &mut [f32; TILE_PIXELS]) {
    let (edges, planes) = (shape.edges, shape.planes);
    let lane_offsets = _mm256_setr_ps(0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0);
    let floor = _mm256_set1_ps(shape.floor);
    let zero = _mm256_setzero_ps();
    // Steps start on a multiple of eight inside the tile, so a step never leaves its row.
    let first_x = origin[0] + ((span[0] - origin[0]) & !(LANES as i32 - 1));
    for y in span[1]..span[3] {
        let y_value = _mm256_set1_ps(y as f32);
        let row = ((y - origin[1]) as usize) * TILE_WIDTH;
        let mut x = first_x;
        while x < span[2] {
            // Integers below 2^24 convert exactly, so base + lane equals (x + lane) as f32.
            let x_value = _mm256_add_ps(_mm256_set1_ps(x as f32), lane_offsets);
            // Step 1: coverage, every edge non-negative at the pixel.
            let mut covered = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
            for &[a, b, c] in edges {
                let value = _mm256_add_ps(
                    _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(a), x_value), _mm256_mul_ps(_mm256_set1_ps(b), y_value)),
                    _mm256_set1_ps(c),
                );
                covered = _mm256_and_ps(covered, _mm256_cmp_ps::<_CMP_GE_OQ>(value, zero));
            }
            if _mm256_movemask_ps(covered) != 0 {
                // Step 2: depth, the smallest plane bound, clamped below by the floor.
                let mut depth = _mm256_set1_ps(f32::INFINITY);
                for &[a, b, c] in planes {
                    let value = _mm256_add_ps(
                        _mm256_add_ps(
                            _mm256_mul_ps(_mm256_set1_ps(a), x_value),
                            _mm256_mul_ps(_mm256_set1_ps(b), y_value),
                        ),
                        _mm256_set1_ps(c),
                    );
                    // min_ps(value, depth) is `value < depth ? value : depth`.
                    depth = _mm256_min_ps(value, depth);
                }
                // max_ps(depth, floor) is `depth > floor ? depth : floor`.
                depth = _mm256_max_ps(depth, floor);
                // Step 3: the candidate is the depth where covered, +0 elsewhere; keep the
                // larger (nearer) of candidate and stored.
                let candidate = _mm256_and_ps(covered, depth);
                let offset = row + (x - origin[0]) as usize;
                debug_assert!(offset + LANES <= TILE_PIXELS, "a step stays inside its tile row");
                // SAFETY: offset + 8 <= TILE_PIXELS (the step starts on a multiple of eight
                // of a row of TILE_WIDTH, itself a multiple of eight), so the eight floats
                // are inside `tile`; loadu/storeu need no alignment.
                unsafe {
                    let pointer = tile.as_mut_ptr().add(offset);
                    let stored = _mm256_loadu_ps(pointer);
                    _mm256_storeu_ps(pointer, _mm256_max_ps(candidate, stored));
                }
            }
            x += LANES as i32;
        }
    }
}
