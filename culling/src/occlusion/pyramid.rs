//! The min depth pyramid: level 0 is a row-major copy of the rasterized (tiled) buffer,
//! each further level halves the size (rounding up) and keeps in each texel the **smallest** value of the up-to-2x2 block
//! beneath it, which in reversed-Z is the **farthest** depth of that block.
//!
//! A texel of level `k` covers pixels `[x << k, (x + 1) << k)` of level 0 (clipped to the
//! buffer). For odd sizes the last texel of a row or column has a block of one pixel in that
//! direction: only existing texels enter the minimum, so no texel ever claims depth for a
//! pixel that was not rasterized, and every texel's value is at most every level-0 value it
//! covers (the one property the occlusion test relies on).

use super::raster::TiledDepth;

/// A reversed-Z min pyramid: a row-major copy of the tiled level 0, and the levels above,
/// one after another in one array (so a batch test can gather from any level by index).
#[derive(Clone, Debug, Default)]
pub(crate) struct MinPyramid {
    /// Width, height and first index in `texels` of each level, level 0 first.
    levels: Vec<(usize, usize, usize)>,
    /// Every level's texels, row-major.
    texels: Vec<f32>,
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
        MinPyramid { levels, texels: vec![0.0; end] }
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
        for (y, row) in self.texels[..base_width * base_height].chunks_exact_mut(base_width).enumerate() {
            base.copy_row(y, row);
        }
        for pair in self.levels.windows(2) {
            let [(below_width, below_height, below_start), (width, height, start)] = [pair[0], pair[1]];
            // Levels lie in order, so the one below ends where this one starts.
            let (done, rest) = self.texels.split_at_mut(start);
            let below_texels = &done[below_start..];
            let texels = &mut rest[..width * height];
            for y in 0..height {
                let (top, bottom) = (2 * y, (2 * y + 1).min(below_height - 1));
                for x in 0..width {
                    let (left, right) = (2 * x, (2 * x + 1).min(below_width - 1));
                    texels[y * width + x] = below_texels[top * below_width + left]
                        .min(below_texels[top * below_width + right])
                        .min(below_texels[bottom * below_width + left])
                        .min(below_texels[bottom * below_width + right]);
                }
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::occlusion::setup::Primitive;

    #[test]
    fn every_texel_is_at_most_every_pixel_it_covers() {
        // Odd-sized content: one primitive covering an irregular region of a 40 x 24 buffer.
        let mut base = TiledDepth::new(40, 23);
        let mut primitive = Primitive::EMPTY;
        primitive.edge_count = 3;
        primitive.plane_count = 1;
        primitive.edges[0] = [1.0, 0.0, -3.0];
        primitive.edges[1] = [0.0, 1.0, -1.0];
        primitive.edges[2] = [-0.5, -0.5, 25.0];
        primitive.planes[0] = [0.001, 0.002, 0.3];
        primitive.floor = 0.1;
        primitive.rect = [0, 0, 40, 23];
        base.bin(&[primitive]);
        base.rasterize(&[primitive], crate::Kernel::Scalar);
        let mut pyramid = MinPyramid::new(40, 23);
        pyramid.build(&base);
        assert_eq!(pyramid.level_count(), 7, "40 -> 20 -> 10 -> 5 -> 3 -> 2 -> 1");
        for level in 0..pyramid.level_count() {
            let (width, height, _) = pyramid.levels[level];
            for y in 0..height {
                for x in 0..width {
                    let texel = pyramid.level(level).1[y * width + x];
                    let mut lowest = f32::INFINITY;
                    for pixel_y in (y << level)..((y + 1) << level).min(23) {
                        for pixel_x in (x << level)..((x + 1) << level).min(40) {
                            lowest = lowest.min(base.at(pixel_x, pixel_y));
                        }
                    }
                    assert_eq!(texel, lowest, "level {level} texel ({x}, {y}) is the minimum of its block");
                }
            }
        }
        assert!(base.at(10, 5) > 0.0, "the primitive covers pixel (10, 5)");
    }
}
