//! The first read of the occlusion test for eight projected boxes at once: steps 3 and 4 of
//! `box_test.rs` up to the 2x2 read, with AVX2 gathers from the pyramid.
//!
//! [`super::box_test::TestTarget::judge`] is the reference. A lane this proves occluded is one
//! the reference proves occluded by the same operations in the same order (the footprint,
//! the raised nearest depth, the finest level where the footprint spans at most 2x2 texels,
//! and `texel > nearest` for those texels). A lane this proves visible has a ceiling at most
//! its raised nearest depth: every texel the reference reads, on either of its levels, covers
//! a pixel of the footprint and so is at most that ceiling, and none is nearer than the box.
//! Every other lane goes through the reference, so the batch gives the reference's verdicts
//! exactly.

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use glam::Vec2;

use super::project::ProjectedLanes;
use super::pyramid::MinPyramid;
use super::verdicts::{BatchVerdicts, DEPTH_MARGIN, FOOTPRINT_MARGIN};

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

/// What [`coarse_issue`] leaves for [`coarse_finish`]: the lanes' footprints on their
/// level and the window read in flight.
#[derive(Clone, Copy)]
pub(crate) struct Issued {
    clean: __m256i,
    nearest: __m256,
    window: __m256,
    starts: __m256i,
    widths: __m256i,
    columns: [__m256i; 2],
    rows: [__m256i; 2],
}

/// The lanes of `lanes` proven occluded by their 2x2 read (so the reference judges them
/// occluded too), of the lanes of `wanted` (the lanes the caller tests) left unproven, those
/// proven visible by their ceiling (so the reference judges them visible) and those whose
/// 2x2 read was the reference's first read and failed; the reference decides the rest. The
/// window read comes first; the ceiling read, then the four texel reads, only when a lane of
/// `wanted` is left unproven.
///
/// # Safety
/// The CPU must support AVX2, and `table` must describe `pyramid`.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn coarse_occluded(
    lanes: &ProjectedLanes,
    size: Vec2,
    pyramid: &MinPyramid,
    table: &LevelTable,
    wanted: u32,
) -> BatchVerdicts {
    // SAFETY: the caller's duties.
    unsafe { coarse_finish(&coarse_issue(lanes, size, pyramid, table), pyramid, wanted) }
}

/// The first half of [`coarse_occluded`]: footprints, levels and the window read. Split
/// so that a caller can start the reads of two batches before waiting for either.
///
/// # Safety
/// The CPU must support AVX2, and `table` must describe `pyramid`.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn coarse_issue(
    lanes: &ProjectedLanes,
    size: Vec2,
    pyramid: &MinPyramid,
    table: &LevelTable,
) -> Issued {
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
    // Step 4: the finest level where the footprint spans at most 2x2 texels, in closed
    // form rather than the reference's level-by-level search (same level): with `d` the
    // larger of x1 - x0 and y1 - y0, a level k < floor(log2 d) spans at least three texels
    // (d >= 2^(k+1)), and level floor(log2 d) + 1 spans at most two (d < 2^(k+1)), so
    // the level is k = floor(log2 d) (0 for d = 0) if it spans at most two, else k + 1.
    // floor(log2 d) is the exponent of d as f32 (exact: d < 2^24).
    let extent = _mm256_max_epi32(_mm256_sub_epi32(x1, x0), _mm256_sub_epi32(y1, y0));
    let exponent = _mm256_sub_epi32(
        _mm256_srli_epi32::<23>(_mm256_castps_si256(_mm256_cvtepi32_ps(extent))),
        _mm256_set1_epi32(127),
    );
    let guess = _mm256_max_epi32(exponent, _mm256_setzero_si256());
    let span_x = _mm256_sub_epi32(_mm256_srlv_epi32(x1, guess), _mm256_srlv_epi32(x0, guess));
    let span_y = _mm256_sub_epi32(_mm256_srlv_epi32(y1, guess), _mm256_srlv_epi32(y0, guess));
    let fits = _mm256_cmpgt_epi32(_mm256_set1_epi32(2), _mm256_max_epi32(span_x, span_y));
    // fits is -1 where the guess fits: level = guess + 1 + fits.
    let level = _mm256_add_epi32(_mm256_add_epi32(guess, _mm256_set1_epi32(1)), fits);
    // Table look-ups by level: a lane permute of each half of the table (levels 0-7 and
    // 8-15), the upper half where the level is 8 or more; cheaper than two gathers.
    let upper = _mm256_cmpgt_epi32(level, _mm256_set1_epi32(7));
    let look_up = |table: &[i32; MAX_LEVELS]| {
        // SAFETY: sixteen readable integers; loadu needs no alignment.
        let (low_half, high_half) =
            unsafe { (_mm256_loadu_si256(table.as_ptr().cast()), _mm256_loadu_si256(table.as_ptr().add(8).cast())) };
        // permutevar8x32 reads the low three bits of each index.
        _mm256_blendv_epi8(
            _mm256_permutevar8x32_epi32(low_half, level),
            _mm256_permutevar8x32_epi32(high_half, level),
            upper,
        )
    };
    let (starts, widths) = (look_up(&table.starts), look_up(&table.widths));
    let (column_low, column_high) = (_mm256_srlv_epi32(x0, level), _mm256_srlv_epi32(x1, level));
    let (row_low, row_high) = (_mm256_srlv_epi32(y0, level), _mm256_srlv_epi32(y1, level));
    let low_index = _mm256_add_epi32(starts, _mm256_add_epi32(_mm256_mullo_epi32(row_low, widths), column_low));
    // First one read per lane: the window texel at the footprint's first texel covers the
    // 2x2 block from there, a superset of the texels below, rounded down (see `pyramid.rs`).
    // A 32-bit read at byte 2 * index: its low half is the 16-bit window, shifted up to an
    // f32's upper half.
    // SAFETY: in a clean lane (column_low, row_low) lies inside its level (the footprint is
    // clipped to the buffer) and the windows have the texels' layout plus one padding
    // texel, so the four bytes read are inside `windows`; other lanes are masked off and
    // read nothing.
    let window = unsafe {
        _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_mask_i32gather_epi32::<2>(
            _mm256_setzero_si256(),
            pyramid.windows().as_ptr().cast::<i32>(),
            low_index,
            clean,
        )))
    };
    Issued { clean, nearest, window, starts, widths, columns: [column_low, column_high], rows: [row_low, row_high] }
}

/// The second half of [`coarse_occluded`]: the window's verdict, then the texel reads for
/// lanes of `wanted` it leaves unproven.
///
/// # Safety
/// The CPU must support AVX2, and `issued` must come from [`coarse_issue`] on `pyramid`.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn coarse_finish(issued: &Issued, pyramid: &MinPyramid, wanted: u32) -> BatchVerdicts {
    let Issued {
        clean,
        nearest,
        window,
        starts,
        widths,
        columns: [column_low, column_high],
        rows: [row_low, row_high],
    } = *issued;
    let zero = _mm256_setzero_ps();
    let proven = _mm256_and_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(window, nearest), _mm256_castsi256_ps(clean));
    let proven_bits = (_mm256_movemask_ps(proven) as u32) & 0xff;
    // Done when every lane the caller asks about is proven; a lane the window does not prove
    // may still be proven by its own texels, read next.
    let clean_bits = (_mm256_movemask_ps(_mm256_castsi256_ps(clean)) as u32) & 0xff;
    let wanted = wanted & clean_bits;
    if proven_bits & wanted == wanted {
        return BatchVerdicts::new(proven_bits, 0);
    }
    let mask = _mm256_andnot_ps(proven, _mm256_castsi256_ps(clean));
    // The ceiling: at least every level-0 depth under the 2x2 block, so where it is not
    // above the raised nearest depth, every texel the reference reads over the footprint is
    // not nearer than the box (each covers a pixel of the footprint): visible.
    let low_index = _mm256_add_epi32(starts, _mm256_add_epi32(_mm256_mullo_epi32(row_low, widths), column_low));
    // SAFETY: as the window read of `coarse_issue`: the ceilings have the windows' layout and
    // padding, and only lanes of `mask` (clean lanes) read.
    let ceiling = unsafe {
        _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_mask_i32gather_epi32::<2>(
            _mm256_setzero_si256(),
            pyramid.ceilings().as_ptr().cast::<i32>(),
            low_index,
            _mm256_castps_si256(mask),
        )))
    };
    let seen = _mm256_and_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(ceiling, nearest), mask);
    let visible_bits = (_mm256_movemask_ps(seen) as u32) & 0xff;
    if (proven_bits | visible_bits) & wanted == wanted {
        // No texel was read: no lane's 2x2 read is known to fail.
        return BatchVerdicts::with_visible(proven_bits, 0, visible_bits);
    }
    let texels = pyramid.texels().as_ptr();
    let mask = _mm256_andnot_ps(seen, mask);
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
    let proven_bits = proven_bits | (_mm256_movemask_ps(_mm256_and_ps(farther, mask)) as u32) & 0xff;
    // A clean lane's footprint, level and texels are the reference's (module docs), so an
    // unproven one failed the reference's 2x2 read too.
    BatchVerdicts::with_visible(proven_bits, clean_bits & !proven_bits & !visible_bits, visible_bits)
}
