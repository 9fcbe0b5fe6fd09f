//! The tiles of the software depth buffer: their size, the kernel's lane count, and what a
//! raster kernel draws into one tile.

/// Tile width in pixels (a multiple of eight, the lane count).
pub const TILE_WIDTH: usize = 32;
/// Tile height in pixels.
pub const TILE_HEIGHT: usize = 16;
/// Pixels per tile.
pub const TILE_PIXELS: usize = TILE_WIDTH * TILE_HEIGHT;
/// Pixels per kernel step.
pub(crate) const LANES: usize = 8;

/// What a kernel draws: a primitive's edges left for this tile, its planes and its floor.
pub(crate) struct Shape<'a> {
    /// Edges `(a, b, c)`: covered where every `a * x + b * y + c >= 0` (none: everywhere).
    pub edges: &'a [[f32; 3]],
    /// Depth planes; the depth is their minimum.
    pub planes: &'a [[f32; 3]],
    /// Lower clamp of the depth.
    pub floor: f32,
}
