//! The first read of the occlusion test for eight projected boxes at once: steps 3 and 4 of
//! `test.rs` up to the 2x2 read, with AVX2 gathers from the pyramid.
//!
//! [`super::test::TestTarget::judge`] is the reference. A lane this proves occluded is one
//! the reference proves occluded by the same operations in the same order (the footprint,
//! the raised nearest depth, the finest level where the footprint spans at most 2x2 texels,
//! and `texel > nearest` for those texels); every other lane goes through the reference,
//! so the batch gives the reference's verdicts exactly.

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use glam::Vec2;

use super::project::ProjectedLanes;
use super::pyramid::MinPyramid;
use super::test::{DEPTH_MARGIN, FOOTPRINT_MARGIN};

/// Most pyramid levels: a [`super::MAX_SIDE`] buffer has 13.
const MAX_LEVELS: usize = 16;

/// Where each pyramid level lies in [`MinPyramid::texels`], as gather tables.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LevelTable {
    /// First texel of each level.
    starts: [i32; MAX_LEVELS],
    /// Width of each level.
    widths: [i32; MAX_LEVELS],
    /// Levels in use.
    count: usize,
}

impl LevelTable {
    /// The table of `pyramid`.
    pub fn new(pyramid: &MinPyramid) -> LevelTable {
        let mut table = LevelTable { starts: [0; MAX_LEVELS], widths: [0; MAX_LEVELS], count: 0 };
        for (level, &(width, _, start)) in pyramid.layout().iter().enumerate().take(MAX_LEVELS) {
            table.starts[level] = start as i32;
            table.widths[level] = width as i32;
            table.count = level + 1;
        }
        debug_assert_eq!(table.count, pyramid.level_count(), "a MAX_SIDE buffer has fewer than 16 levels");
        table
    }
}

/// Bit `lane` set when box `lane` of `lanes` is proven occluded by its 2x2 read (so the
/// reference judges it occluded too); clear when the reference must decide.
///
/// # Safety
/// The CPU must support AVX2, and `table` must describe `pyramid`.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn coarse_occluded(
    lanes: &ProjectedLanes,
    size: Vec2,
    pyramid: &MinPyramid,
    table: &LevelTable,
) -> u32 {
    let zero = _mm256_setzero_ps();
    // Steps 1 and 2 (in the projection), and finite bounds: other lanes go to the reference.
    let exponent = _mm256_set1_epi32(0x7f80_0000);
    let mut clean = _mm256_castps_si256(lanes.judgeable);
    for value in [lanes.low[0], lanes.low[1], lanes.high[0], lanes.high[1], lanes.nearest] {
        let infinite_or_nan = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(value), exponent), exponent);
        clean = _mm256_andnot_si256(infinite_or_nan, clean);
    }
    // Step 3: the footprint in pixels, ((ndc * 0.5) + 0.5) * size -+ margin.
    let (half, margin) = (_mm256_set1_ps(0.5), _mm256_set1_ps(FOOTPRINT_MARGIN));
    let sizes = [_mm256_set1_ps(size.x), _mm256_set1_ps(size.y)];
    let pixel = |ndc: __m256, axis: usize| _mm256_mul_ps(_mm256_add_ps(_mm256_mul_ps(ndc, half), half), sizes[axis]);
    let low = [_mm256_sub_ps(pixel(lanes.low[0], 0), margin), _mm256_sub_ps(pixel(lanes.low[1], 1), margin)];
    let high = [_mm256_add_ps(pixel(lanes.high[0], 0), margin), _mm256_add_ps(pixel(lanes.high[1], 1), margin)];
    // Off the buffer entirely: the reference says visible.
    let off = _mm256_or_ps(
        _mm256_or_ps(_mm256_cmp_ps::<_CMP_LT_OQ>(high[0], zero), _mm256_cmp_ps::<_CMP_LT_OQ>(high[1], zero)),
        _mm256_or_ps(_mm256_cmp_ps::<_CMP_GE_OQ>(low[0], sizes[0]), _mm256_cmp_ps::<_CMP_GE_OQ>(low[1], sizes[1])),
    );
    clean = _mm256_andnot_si256(_mm256_castps_si256(off), clean);
    if _mm256_testz_si256(clean, clean) == 1 {
        return 0;
    }
    // Clipped to the buffer, truncated as `as usize` truncates these non-negative values.
    let last = [_mm256_set1_ps(size.x - 1.0), _mm256_set1_ps(size.y - 1.0)];
    let x0 = _mm256_cvttps_epi32(_mm256_max_ps(low[0], zero));
    let y0 = _mm256_cvttps_epi32(_mm256_max_ps(low[1], zero));
    let x1 = _mm256_cvttps_epi32(_mm256_min_ps(high[0], last[0]));
    let y1 = _mm256_cvttps_epi32(_mm256_min_ps(high[1], last[1]));
    // The nearest depth raised by the rounding margin: (n + |n| * margin) + MIN_POSITIVE.
    let magnitude = _mm256_andnot_ps(_mm256_set1_ps(-0.0), lanes.nearest);
    let nearest = _mm256_add_ps(
        _mm256_add_ps(lanes.nearest, _mm256_mul_ps(magnitude, _mm256_set1_ps(DEPTH_MARGIN))),
        _mm256_set1_ps(f32::MIN_POSITIVE),
    );
    // Step 4: the finest level where the footprint spans at most 2x2 texels (the top level
    // spans one, so every clean lane finds one).
    let two = _mm256_set1_epi32(2);
    let (mut level, mut found) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for index in 0..table.count {
        let shift = _mm256_set1_epi32(index as i32);
        let span_x = _mm256_sub_epi32(_mm256_srlv_epi32(x1, shift), _mm256_srlv_epi32(x0, shift));
        let span_y = _mm256_sub_epi32(_mm256_srlv_epi32(y1, shift), _mm256_srlv_epi32(y0, shift));
        let fits = _mm256_cmpgt_epi32(two, _mm256_max_epi32(span_x, span_y));
        level = _mm256_or_si256(level, _mm256_and_si256(_mm256_andnot_si256(found, fits), shift));
        found = _mm256_or_si256(found, fits);
        if _mm256_testc_si256(found, clean) == 1 {
            break;
        }
    }
    // SAFETY: levels are below `table.count <= MAX_LEVELS`, so every index is in the tables.
    let (starts, widths) = unsafe {
        (
            _mm256_i32gather_epi32::<4>(table.starts.as_ptr(), level),
            _mm256_i32gather_epi32::<4>(table.widths.as_ptr(), level),
        )
    };
    let (column_low, column_high) = (_mm256_srlv_epi32(x0, level), _mm256_srlv_epi32(x1, level));
    let (row_low, row_high) = (_mm256_srlv_epi32(y0, level), _mm256_srlv_epi32(y1, level));
    let texels = pyramid.texels().as_ptr();
    let mask = _mm256_castsi256_ps(clean);
    let read = |row: __m256i, column: __m256i| {
        let index = _mm256_add_epi32(starts, _mm256_add_epi32(_mm256_mullo_epi32(row, widths), column));
        // SAFETY: in a clean lane the texel (column, row) lies inside its level (the
        // footprint is clipped to the buffer), so the index is inside `texels`; other lanes
        // are masked off and read nothing.
        let texel = unsafe { _mm256_mask_i32gather_ps::<4>(zero, texels, index, mask) };
        _mm256_cmp_ps::<_CMP_GT_OQ>(texel, nearest)
    };
    let farther = _mm256_and_ps(
        _mm256_and_ps(read(row_low, column_low), read(row_low, column_high)),
        _mm256_and_ps(read(row_high, column_low), read(row_high, column_high)),
    );
    (_mm256_movemask_ps(_mm256_and_ps(farther, mask)) as u32) & 0xff
}
