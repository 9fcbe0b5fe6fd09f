//! Binning primitives into screen tiles and rasterizing the tiles in parallel.
//!
//! The depth buffer is stored tile by tile (each tile [`TILE_WIDTH`] x [`TILE_HEIGHT`]
//! pixels, row-major inside, tiles row-major), so each tile is one contiguous chunk that a
//! job owns outright: [`runtime::jobs::parallel_for_chunks`] hands every job whole tiles,
//! with no locking and no shared cache line between jobs. Partial tiles at the right and
//! bottom edges keep the full stride; their padding pixels are never read.
//!
//! The kernels walk a primitive's pixel rectangle inside one tile in groups of eight pixels
//! of a row (one AVX2 register). [`raster_scalar`] is the reference; `raster_avx2` repeats
//! its steps with the same operations in the same order and gives the same bits.

use glam::Vec2;

use super::setup::Primitive;
use super::tile::{Shape, LANES, TILE_HEIGHT, TILE_PIXELS, TILE_WIDTH};
use super::tile_plan;
use crate::Kernel;

/// A tiled reversed-Z depth buffer and the per-tile lists of primitives touching each tile.
#[derive(Clone, Debug)]
pub(crate) struct TiledDepth {
    width: usize,
    height: usize,
    tiles_x: usize,
    depth: Vec<f32>,
    bins: Vec<Vec<u32>>,
}

impl TiledDepth {
    /// A buffer of `width` (a multiple of [`LANES`]) by `height` pixels.
    pub fn new(width: usize, height: usize) -> TiledDepth {
        debug_assert!(width.is_multiple_of(LANES) && width > 0 && height > 0, "checked by OcclusionConfig");
        let tiles_x = width.div_ceil(TILE_WIDTH);
        let tiles_y = height.div_ceil(TILE_HEIGHT);
        TiledDepth {
            width,
            height,
            tiles_x,
            depth: vec![0.0; tiles_x * tiles_y * TILE_PIXELS],
            bins: vec![Vec::new(); tiles_x * tiles_y],
        }
    }

    /// Size in pixels.
    pub fn size(&self) -> Vec2 {
        Vec2::new(self.width as f32, self.height as f32)
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Depth stored at pixel `(x, y)`.
    #[inline]
    pub fn at(&self, x: usize, y: usize) -> f32 {
        debug_assert!(x < self.width && y < self.height, "pixel ({x}, {y}) outside the buffer");
        let tile = (y / TILE_HEIGHT) * self.tiles_x + x / TILE_WIDTH;
        self.depth[tile * TILE_PIXELS + (y % TILE_HEIGHT) * TILE_WIDTH + x % TILE_WIDTH]
    }

    /// Copies row `y` of the buffer into `out` (`width` values).
    pub fn copy_row(&self, y: usize, out: &mut [f32]) {
        debug_assert!(y < self.height && out.len() == self.width, "row {y} into {} values", out.len());
        let tile_row = (y / TILE_HEIGHT) * self.tiles_x;
        let inside = (y % TILE_HEIGHT) * TILE_WIDTH;
        for (tile_x, chunk) in out.chunks_mut(TILE_WIDTH).enumerate() {
            let start = (tile_row + tile_x) * TILE_PIXELS + inside;
            chunk.copy_from_slice(&self.depth[start..start + chunk.len()]);
        }
    }

    /// Sorts the live primitives into the tiles their rectangles touch. Bins keep their
    /// capacity between frames.
    pub fn bin(&mut self, primitives: &[Primitive]) {
        self.bins.iter_mut().for_each(Vec::clear);
        for (index, primitive) in primitives.iter().enumerate() {
            let [x0, y0, x1, y1] = primitive.rect;
            if primitive.edge_count == 0 || x0 >= x1 || y0 >= y1 {
                continue;
            }
            let (tile_x0, tile_x1) = (x0 as usize / TILE_WIDTH, (x1 as usize - 1) / TILE_WIDTH);
            let (tile_y0, tile_y1) = (y0 as usize / TILE_HEIGHT, (y1 as usize - 1) / TILE_HEIGHT);
            for tile_y in tile_y0..=tile_y1 {
                for tile_x in tile_x0..=tile_x1 {
                    self.bins[tile_y * self.tiles_x + tile_x].push(index as u32);
                }
            }
        }
    }

    /// Clears every tile to 0 (infinitely far) and rasterizes its binned primitives, tiles
    /// in parallel on the current job system. Each primitive is first trimmed to the tile
    /// (`tile_plan.rs`): skipped when it cannot change it, drawn with only the edges that
    /// cross it; the bits written are those of the untrimmed primitive.
    ///
    /// With `clear` false the tiles keep what an earlier pass drew and the primitives are
    /// drawn on top (the result is the same as drawing both passes' primitives at once).
    pub fn rasterize(&mut self, primitives: &[Primitive], kernel: Kernel, clear: bool) {
        let bins = &self.bins;
        let (width, height, tiles_x) = (self.width, self.height, self.tiles_x);
        let _job_label = runtime::profiling::job_label("occlusion raster job");
        runtime::jobs::parallel_for_chunks(&mut self.depth, TILE_PIXELS, |first, tile| {
            let index = first / TILE_PIXELS;
            let origin = [((index % tiles_x) * TILE_WIDTH) as i32, ((index / tiles_x) * TILE_HEIGHT) as i32];
            // Pixels of this tile inside the buffer; the padding of edge tiles stays 0.
            let columns = (width - origin[0] as usize).min(TILE_WIDTH);
            let rows = (height - origin[1] as usize).min(TILE_HEIGHT);
            if clear {
                tile.fill(0.0);
            } else if bins[index].is_empty() {
                return;
            }
            let tile: &mut [f32; TILE_PIXELS] = tile.try_into().expect("chunks are whole tiles (grain = tile size)");
            let mut farthest = if clear { 0.0f32 } else { tile_plan::farthest_depth(tile, columns, rows) };
            for &primitive in &bins[index] {
                if rasterize_into(kernel, &primitives[primitive as usize], origin, tile, farthest) {
                    farthest = tile_plan::farthest_depth(tile, columns, rows);
                }
            }
        });
    }
}

/// Rasterizes `primitive` into the tile at pixel `origin` with `kernel`, unless the tile's
/// stored depths are all at least `farthest` and the primitive is nowhere nearer; returns
/// whether it ran a kernel.
pub(crate) fn rasterize_into(
    kernel: Kernel,
    primitive: &Primitive,
    origin: [i32; 2],
    tile: &mut [f32; TILE_PIXELS],
    farthest: f32,
) -> bool {
    let span = [
        primitive.rect[0].max(origin[0]),
        primitive.rect[1].max(origin[1]),
        primitive.rect[2].min(origin[0] + TILE_WIDTH as i32),
        primitive.rect[3].min(origin[1] + TILE_HEIGHT as i32),
    ];
    if span[0] >= span[2] || span[1] >= span[3] {
        return false;
    }
    let Some(plan) = tile_plan::plan(primitive, origin, span, farthest) else {
        return false;
    };
    let shape = Shape {
        edges: plan.edges(),
        planes: &primitive.planes[..primitive.plane_count as usize],
        floor: primitive.floor,
    };
    match kernel {
        Kernel::Scalar | Kernel::Portable => raster_scalar(&shape, origin, span, tile),
        Kernel::Avx2 | Kernel::Avx512 => raster_avx2(&shape, origin, span, tile),
    }
    true
}

/// The AVX2 kernel where the CPU has it, else the scalar one.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn raster_avx2(shape: &Shape<'_>, origin: [i32; 2], span: [i32; 4], tile: &mut [f32; TILE_PIXELS]) {
    if Kernel::Avx2.is_supported() {
        // SAFETY: the CPU supports AVX2, checked just above.
        unsafe { super::raster_avx2::raster(shape, origin, span, tile) }
    } else {
        raster_scalar(shape, origin, span, tile);
    }
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
use raster_scalar as raster_avx2;

/// The reference kernel: rasterizes `shape` over the pixels of `span` (`x0, y0, x1, y1`,
/// ends exclusive, inside the tile at `origin`), eight pixels of a row per step.
///
/// Each stored depth becomes the larger (nearer) of itself and the primitive's bound where
/// the primitive fully covers the pixel.
pub(crate) fn raster_scalar(shape: &Shape<'_>, origin: [i32; 2], span: [i32; 4], tile: &mut [f32; TILE_PIXELS]) {
    let (edges, planes) = (shape.edges, shape.planes);
    // Steps start on a multiple of eight inside the tile, so a step never leaves its row.
    let first_x = origin[0] + ((span[0] - origin[0]) & !(LANES as i32 - 1));
    for y in span[1]..span[3] {
        let y_value = y as f32;
        let row = ((y - origin[1]) as usize) * TILE_WIDTH;
        let mut x = first_x;
        while x < span[2] {
            for lane in 0..LANES {
                let x_value = (x + lane as i32) as f32;
                // Step 1: coverage, every edge non-negative at the pixel.
                let mut covered = true;
                for &[a, b, c] in edges {
                    let value = (a * x_value + b * y_value) + c;
                    covered &= value >= 0.0;
                }
                // Step 2: depth, the smallest plane bound, clamped below by the floor.
                let mut depth = f32::INFINITY;
                for &[a, b, c] in planes {
                    let value = (a * x_value + b * y_value) + c;
                    depth = if value < depth { value } else { depth };
                }
                depth = if depth > shape.floor { depth } else { shape.floor };
                // Step 3: the candidate is the depth where covered, +0 elsewhere; keep the
                // larger (nearer) of candidate and stored.
                let candidate = if covered { depth } else { 0.0 };
                let slot = &mut tile[row + (x - origin[0]) as usize + lane];
                *slot = if candidate > *slot { candidate } else { *slot };
            }
            x += LANES as i32;
        }
    }
}
