//! The min depth pyramid: level 0 is a row-major copy of the rasterized (tiled) buffer,
//! each further level halves the size (rounding up) and keeps in each texel the **smallest** value of the up-to-2x2 block
//! beneath it, which in reversed-Z is the **farthest** depth of that block.
//!
//! A texel of level `k` covers pixels `[x << k, (x + 1) << k)` of level 0 (clipped to the
//! buffer). For odd sizes the last texel of a row or column has a block of one pixel in that
//! direction: only existing texels enter the minimum, so no texel ever claims depth for a
//! pixel that was not rasterized, and every texel's value is at most every level-0 value it
//! covers (the one property the occlusion test relies on).
//!
//! Beside each level lies its **window** level: texel `(x, y)` holds the minimum of the level's
//! texels `(x, y)`, `(x + 1, y)`, `(x, y + 1)` and `(x + 1, y + 1)` (those that exist),
//! rounded down to 16 bits (the upper half of the `f32`'s bits: depths are never negative,
//! so dropping the lower half rounds towards zero, farther). A test whose footprint spans
//! at most 2x2 texels from `(x, y)` reads one window texel instead of four: at most every
//! depth of a superset of its texels, so a window that proves an object hidden proves what
//! the four reads would; at half the bytes, the windows stay in cache beside the object
//! stream.
//!
//! And beside each window its **ceiling**: the same 2x2 block's **largest** value, over the
//! *max* pyramid (each texel of a level above 0 the largest level-0 value it covers), rounded
//! up to 16 bits. A ceiling is at least every level-0 value under its block, so a box whose
//! raised nearest depth is at least its ceiling has, on every level, a texel over its
//! footprint that is not nearer than it: the test's verdict is visible without a texel read.
//! Most objects a high camera sees stand where no occluder is drawn (texels of 0), and the
//! ceiling settles them in one read where the reference would read two levels.

use super::raster::TiledDepth;

/// A reversed-Z min pyramid: a row-major copy of the tiled level 0, and the levels above,
/// one after another in one array (so a batch test can gather from any level by index).
#[derive(Clone, Debug, Default)]
pub(crate) struct MinPyramid {
    /// Width, height and first index in `texels` of each level, level 0 first.
    levels: Vec<(usize, usize, usize)>,
    /// Every level's texels, row-major.
    texels: Vec<f32>,
    /// Every level's window texels (16-bit), laid out as `texels`, and one more so a
    /// 32-bit read at the last texel stays inside.
    windows: Vec<u16>,
    /// The max pyramid's levels above level 0 (whose level 0 is `texels`'), laid out as
    /// `texels` from level 1 on.
    peaks: Vec<f32>,
    /// Every level's ceiling texels (16-bit), laid out as `windows`, with the same padding.
    ceilings: Vec<u16>,
}

impl MinPyramid {
    /// Allocates the levels for a `width` x `height` level 0.
    pub fn new(width: usize, height: usize) -> MinPyramid {
        let mut levels = vec![(width, height, 0)];
        let (mut level_width, mut level_height, mut end) = (width, height, width * height);
        while level_width > 1 || level_height > 1 {
            level_width = level_width.div_ceil(2);
            level_height = level_height.div_ceil(2);
            levels.push((level_width, level_height, end));
            end += level_width * level_height;
        }
        let above = end - width * height;
        MinPyramid {
            levels,
            texels: vec![0.0; end],
            windows: vec![0; end + 1],
            peaks: vec![0.0; above],
            ceilings: vec![0; end + 1],
        }
    }

    /// Number of levels, level 0 included.
    pub fn level_count(&self) -> usize {
        self.levels.len()
    }

    /// Rebuilds every level from `base`.
    pub fn build(&mut self, base: &TiledDepth) {
        let Some(&(base_width, base_height, _)) = self.levels.first() else {
            return;
        };
        // Level 0 and its windows, the bulk of the work, in bands of rows on the job system;
        // the small levels above one after another.
        let band = base_width * TEXELS_PER_JOB.div_ceil(base_width);
        let _job_label = runtime::profiling::job_label("occlusion pyramid job");
        runtime::jobs::parallel_for_chunks(&mut self.texels[..base_width * base_height], band, |first, rows| {
            for (offset, row) in rows.chunks_exact_mut(base_width).enumerate() {
                base.copy_row(first / base_width + offset, row);
            }
        });
        let base_len = base_width * base_height;
        for pair in self.levels.windows(2) {
            let [(below_width, below_height, below_start), (width, _, start)] = [pair[0], pair[1]];
            // Levels lie in order, so the one below ends where this one starts.
            let (done, rest) = self.texels.split_at_mut(start);
            reduce_level(&done[below_start..], below_width, below_height, &mut rest[..], width, lesser);
            // The max pyramid's level 1 reduces level 0, which it shares with the min pyramid.
            let (done, rest) = self.peaks.split_at_mut(start - base_len);
            let below = if below_start == 0 { &self.texels[..base_len] } else { &done[below_start - base_len..] };
            reduce_level(below, below_width, below_height, rest, width, greater);
        }
        let texels = &self.texels;
        runtime::jobs::parallel_for_chunks(&mut self.windows[..base_width * base_height], band, |first, rows| {
            window_rows(&texels[..base_width * base_height], base_width, base_height, first / base_width, rows);
        });
        for &(width, height, start) in &self.levels[1..] {
            let level = &self.texels[start..start + width * height];
            window_rows(level, width, height, 0, &mut self.windows[start..start + width * height]);
        }
        ceiling_rows(&self.texels[..base_len], base_width, base_height, &mut self.ceilings[..base_len]);
        for &(width, height, start) in &self.levels[1..] {
            let level = &self.peaks[start - base_len..start - base_len + width * height];
            ceiling_rows(level, width, height, &mut self.ceilings[start..start + width * height]);
        }
    }

    /// Every level's ceiling texels (see the module docs), laid out as
    /// [`MinPyramid::windows`], and one padding texel.
    #[inline]
    pub fn ceilings(&self) -> &[u16] {
        &self.ceilings
    }

    /// Every level's window texels (see the module docs), laid out as [`MinPyramid::texels`],
    /// and one padding texel.
    #[inline]
    pub fn windows(&self) -> &[u16] {
        &self.windows
    }

    /// Level `level`: its width and its texels, row-major.
    #[inline]
    pub fn level(&self, level: usize) -> (usize, &[f32]) {
        let (width, height, start) = self.levels[level];
        (width, &self.texels[start..start + width * height])
    }

    /// Width, height and first index in [`MinPyramid::texels`] of each level.
    #[inline]
    pub fn layout(&self) -> &[(usize, usize, usize)] {
        &self.levels
    }

    /// Every level's texels, one level after another.
    #[inline]
    pub fn texels(&self) -> &[f32] {
        &self.texels
    }
}

/// Texels of level 0 per job of the build (whole rows, rounded up). The default 256 x 128 buffer
/// (or 240 x 135) is built by one job: splitting it cost more than it saved (the 1M bench
/// city's two builds a frame: 63-65 µs in bands of 32 rows on 2 threads, 42-43 µs in one).
const TEXELS_PER_JOB: usize = 64 * 1024;

/// Writes the window texels of rows `first_row ..` of a `width` x `height` level (`texels`,
/// row-major) into `out` (whole rows).
fn window_rows(texels: &[f32], width: usize, height: usize, first_row: usize, out: &mut [u16]) {
    for (offset, row) in out.chunks_exact_mut(width).enumerate() {
        let y = first_row + offset;
        let below = (y + 1).min(height - 1);
        let (top, bottom) = (&texels[y * width..(y + 1) * width], &texels[below * width..(below + 1) * width]);
        // Column pairs (x, x + 1) as shifted slices, so the loop vectorizes.
        let pairs = top.iter().zip(&top[1..]).zip(bottom.iter().zip(&bottom[1..]));
        for (window, ((&a, &b), (&c, &d))) in row.iter_mut().zip(pairs) {
            *window = round_down(lesser(lesser(a, b), lesser(c, d)));
        }
        row[width - 1] = round_down(lesser(top[width - 1], bottom[width - 1]));
    }
}

/// Writes the `width`-wide level above a `below_width` x `below_height` level (`below`,
/// row-major) into `out`: each texel `combine`s the up-to-2x2 block beneath it.
fn reduce_level(
    below: &[f32],
    below_width: usize,
    below_height: usize,
    out: &mut [f32],
    width: usize,
    combine: fn(f32, f32) -> f32,
) {
    let height = below_height.div_ceil(2);
    for (y, row) in out[..width * height].chunks_exact_mut(width).enumerate() {
        let (top, bottom) = (2 * y, (2 * y + 1).min(below_height - 1));
        let top = &below[top * below_width..(top + 1) * below_width];
        let bottom = &below[bottom * below_width..(bottom + 1) * below_width];
        // Whole 2x2 blocks as pairs of pairs (a loop that vectorizes), then the odd last
        // column's block of one column.
        let pairs = top.chunks_exact(2).zip(bottom.chunks_exact(2));
        for (texel, (upper, lower)) in row.iter_mut().zip(pairs) {
            *texel = combine(combine(upper[0], upper[1]), combine(lower[0], lower[1]));
        }
        if below_width % 2 == 1 {
            row[width - 1] = combine(top[below_width - 1], bottom[below_width - 1]);
        }
    }
}

/// Writes the ceiling texels of a `width` x `height` level of the max pyramid (`texels`,
/// row-major) into `out`: each the largest of its 2x2 block, rounded up.
fn ceiling_rows(texels: &[f32], width: usize, height: usize, out: &mut [u16]) {
    for (y, row) in out.chunks_exact_mut(width).enumerate() {
        let below = (y + 1).min(height - 1);
        let (top, bottom) = (&texels[y * width..(y + 1) * width], &texels[below * width..(below + 1) * width]);
        let pairs = top.iter().zip(&top[1..]).zip(bottom.iter().zip(&bottom[1..]));
        for (ceiling, ((&a, &b), (&c, &d))) in row.iter_mut().zip(pairs) {
            *ceiling = round_up(greater(greater(a, b), greater(c, d)));
        }
        row[width - 1] = round_up(greater(top[width - 1], bottom[width - 1]));
    }
}

/// The upper 16 bits of a depth's bits, rounded away from zero (nearer for the non-negative
/// depths stored): the smallest 16-bit value whose `f32` is at least the depth.
#[inline]
fn round_up(depth: f32) -> u16 {
    let bits = depth.to_bits();
    // A finite depth below the largest `f32` rounds to at most infinity's upper half.
    ((bits >> 16) + u32::from(bits & 0xffff != 0)) as u16
}

/// The larger of two depths (stored depths are never NaN).
#[inline]
fn greater(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// The upper 16 bits of a depth's bits: the depth rounded towards zero (farther for the
/// non-negative depths stored).
#[inline]
fn round_down(depth: f32) -> u16 {
    (depth.to_bits() >> 16) as u16
}

/// The smaller of two depths (stored depths are never NaN).
#[inline]
fn lesser(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::occlusion::setup::Primitive;

    #[test]
    fn every_texel_is_at_most_every_pixel_it_covers_and_windows_are_2x2_minima() {
        // Odd-sized content: one primitive covering an irregular region; a buffer built by one
        // job, and one of more than two bands of `TEXELS_PER_JOB`.
        for (buffer_width, buffer_height, levels) in [(40, 23, 7), (400, 331, 10)] {
            let base = one_triangle(buffer_width, buffer_height);
            let mut pyramid = MinPyramid::new(buffer_width, buffer_height);
            pyramid.build(&base);
            assert_eq!(pyramid.level_count(), levels, "40 -> 20 -> 10 -> 5 -> 3 -> 2 -> 1, and 400 x 331");
            check_levels_and_windows(&pyramid, &base, buffer_width, buffer_height);
        }
        assert!(one_triangle(40, 23).at(10, 5) > 0.0, "the primitive covers pixel (10, 5)");
    }

    /// A `width` x `height` buffer with one triangle rasterized over part of it.
    fn one_triangle(width: usize, height: usize) -> TiledDepth {
        let mut base = TiledDepth::new(width, height);
        let mut primitive = Primitive::EMPTY;
        primitive.edge_count = 3;
        primitive.plane_count = 1;
        primitive.edges[0] = [1.0, 0.0, -3.0];
        primitive.edges[1] = [0.0, 1.0, -1.0];
        primitive.edges[2] = [-0.5, -0.5, 25.0];
        primitive.planes[0] = [0.001, 0.002, 0.3];
        primitive.floor = 0.1;
        primitive.rect = [0, 0, width as i32, height as i32];
        base.bin(&[primitive]);
        base.rasterize(&[primitive], crate::Kernel::Scalar, true);
        base
    }

    /// Every texel of every level is the minimum of the level-0 pixels it covers, and every
    /// window texel the rounded-down minimum of its 2x2 texels.
    fn check_levels_and_windows(pyramid: &MinPyramid, base: &TiledDepth, buffer_width: usize, buffer_height: usize) {
        for level in 0..pyramid.level_count() {
            let (width, height, _) = pyramid.levels[level];
            for y in 0..height {
                for x in 0..width {
                    let texel = pyramid.level(level).1[y * width + x];
                    let mut lowest = f32::INFINITY;
                    for pixel_y in (y << level)..((y + 1) << level).min(buffer_height) {
                        for pixel_x in (x << level)..((x + 1) << level).min(buffer_width) {
                            lowest = lowest.min(base.at(pixel_x, pixel_y));
                        }
                    }
                    assert_eq!(texel, lowest, "level {level} texel ({x}, {y}) is the minimum of its block");
                }
            }
        }
        for &(width, height, start) in &pyramid.levels {
            let texel = |x: usize, y: usize| pyramid.texels[start + y.min(height - 1) * width + x.min(width - 1)];
            for y in 0..height {
                for x in 0..width {
                    let lowest = texel(x, y).min(texel(x + 1, y)).min(texel(x, y + 1)).min(texel(x + 1, y + 1));
                    let window = f32::from_bits(u32::from(pyramid.windows()[start + y * width + x]) << 16);
                    assert!(window <= lowest && window >= lowest * (1.0 - 1.0 / 128.0), "window ({x}, {y}) at {start}");
                    assert_eq!(window.to_bits() >> 16, lowest.to_bits() >> 16, "the upper half of the minimum's bits");
                }
            }
        }
        check_ceilings(pyramid, base, buffer_width, buffer_height);
    }

    /// Every ceiling texel is the largest level-0 pixel under its 2x2 block, rounded up to
    /// the nearest 16-bit value at or above it.
    fn check_ceilings(pyramid: &MinPyramid, base: &TiledDepth, buffer_width: usize, buffer_height: usize) {
        for (level, &(width, height, start)) in pyramid.levels.iter().enumerate() {
            for y in 0..height {
                for x in 0..width {
                    let mut largest = 0.0f32;
                    for pixel_y in (y << level)..((y + 2) << level).min(buffer_height) {
                        for pixel_x in (x << level)..((x + 2) << level).min(buffer_width) {
                            largest = largest.max(base.at(pixel_x, pixel_y));
                        }
                    }
                    let bits = u32::from(pyramid.ceilings()[start + y * width + x]) << 16;
                    assert!(f32::from_bits(bits) >= largest, "ceiling ({x}, {y}) of level {level} is above its block");
                    if bits != 0 {
                        assert!(f32::from_bits(bits - (1 << 16)) < largest, "ceiling ({x}, {y}) rounds up by one step");
                    }
                }
            }
        }
    }
}
