//! Trimming a primitive to one tile before the kernel runs, without changing a bit it writes.
//!
//! A kernel value `(a * x + b * y) + c` is monotone in `x` and in `y` even in `f32` (each
//! rounding is monotone), so over the block of pixels a kernel evaluates its extremes lie
//! at the block's four corner pixels, computed by the very same operations. Hence:
//!
//! - an edge non-negative at the four corners is non-negative everywhere in the block: the
//!   kernel need not evaluate it (inside a large silhouette, no edge is left);
//! - an edge negative at the four corners covers nothing in the block: nothing is drawn;
//! - the primitive's candidate depth is at most `max(min over planes of the plane's largest
//!   corner value, floor)`; when that is no nearer than the tile's farthest stored depth,
//!   every `max(candidate, stored)` keeps the stored value: nothing changes (occluders come
//!   nearest first, so a near building fills a tile and the ones behind it are skipped).
//!
//! The kernels then run with the remaining edges and write exactly what the untrimmed
//! primitive would.

use super::setup::{Primitive, MAX_EDGES};
use super::tile::{LANES, TILE_HEIGHT, TILE_PIXELS, TILE_WIDTH};

/// What the kernel must do with one primitive in one tile.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TilePlan {
    /// The edges still to evaluate (those not non-negative over the whole block).
    pub edges: [[f32; 3]; MAX_EDGES],
    /// Number of live `edges`.
    pub edge_count: usize,
}

impl TilePlan {
    /// The live edges.
    #[inline]
    pub fn edges(&self) -> &[[f32; 3]] {
        &self.edges[..self.edge_count]
    }
}

/// The four corner pixels `(x, y)` of the block the kernels evaluate for `span` (`x0, y0,
/// x1, y1`, ends exclusive) of the tile at `origin`: whole steps of [`LANES`] pixels from
/// a multiple of eight inside the tile.
#[inline]
fn block_corners(origin: [i32; 2], span: [i32; 4]) -> [[f32; 2]; 4] {
    let lanes = LANES as i32;
    let first_x = origin[0] + ((span[0] - origin[0]) & !(lanes - 1));
    let last_x = first_x + (span[2] - first_x + lanes - 1) / lanes * lanes - 1;
    let (x0, x1, y0, y1) = (first_x as f32, last_x as f32, span[1] as f32, (span[3] - 1) as f32);
    [[x0, y0], [x1, y0], [x0, y1], [x1, y1]]
}

/// The kernel's value of `(a, b, c)` at pixel `(x, y)`: the same operations in the same
/// order as the kernels (separate multiplies and adds).
#[inline]
fn value([a, b, c]: [f32; 3], [x, y]: [f32; 2]) -> f32 {
    (a * x + b * y) + c
}

/// The plan for `primitive` over `span` (non-empty, inside the tile at `origin`), or `None`
/// when it cannot change the tile: it covers nothing there, or it is nowhere nearer than
/// `farthest`, a lower bound of every depth the tile stores.
#[inline]
pub(crate) fn plan(primitive: &Primitive, origin: [i32; 2], span: [i32; 4], farthest: f32) -> Option<TilePlan> {
    let corners = block_corners(origin, span);
    // The depth's upper bound first: it skips whole primitives behind a filled tile.
    let mut ceiling = f32::INFINITY;
    for &plane in &primitive.planes[..primitive.plane_count as usize] {
        let highest = corners.iter().fold(f32::NEG_INFINITY, |high, &corner| {
            let here = value(plane, corner);
            // A NaN leaves the bound unknown: +inf keeps the primitive.
            if here.is_nan() {
                f32::INFINITY
            } else if here > high {
                here
            } else {
                high
            }
        });
        ceiling = if highest < ceiling { highest } else { ceiling };
    }
    let ceiling = if ceiling > primitive.floor { ceiling } else { primitive.floor };
    if ceiling <= farthest {
        return None;
    }
    let mut plan = TilePlan { edges: [[0.0; 3]; MAX_EDGES], edge_count: 0 };
    for &edge in &primitive.edges[..primitive.edge_count as usize] {
        let values = corners.map(|corner| value(edge, corner));
        if values.iter().all(|&here| here >= 0.0) {
            continue;
        }
        if values.iter().all(|&here| here < 0.0) {
            return None;
        }
        plan.edges[plan.edge_count] = edge;
        plan.edge_count += 1;
    }
    Some(plan)
}

/// The smallest (farthest) depth stored in the first `rows` rows and `columns` columns of
/// `tile` (its pixels inside the buffer); exact, so every kernel gets the same value.
#[inline]
pub(crate) fn farthest_depth(tile: &[f32; TILE_PIXELS], columns: usize, rows: usize) -> f32 {
    debug_assert!(columns.is_multiple_of(LANES) && columns <= TILE_WIDTH && rows <= TILE_HEIGHT);
    // Eight running minima, one per lane, so the loop vectorizes without reordering a sum.
    let mut lowest = [f32::INFINITY; LANES];
    for row in tile.chunks_exact(TILE_WIDTH).take(rows) {
        for step in row[..columns].chunks_exact(LANES) {
            for (low, &here) in lowest.iter_mut().zip(step) {
                *low = if here < *low { here } else { *low };
            }
        }
    }
    lowest.into_iter().fold(f32::INFINITY, |low, here| if here < low { here } else { low })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A square primitive `[x0, x1] x [y0, y1]` (pixel coordinates, edges not moved inwards)
    /// at constant depth `depth`.
    fn square(x0: f32, y0: f32, x1: f32, y1: f32, depth: f32) -> Primitive {
        let mut primitive = Primitive::EMPTY;
        primitive.edges[0] = [1.0, 0.0, -x0];
        primitive.edges[1] = [-1.0, 0.0, x1];
        primitive.edges[2] = [0.0, 1.0, -y0];
        primitive.edges[3] = [0.0, -1.0, y1];
        primitive.edge_count = 4;
        primitive.planes[0] = [0.0, 0.0, depth];
        primitive.plane_count = 1;
        primitive.floor = depth * 0.5;
        primitive.rect = [x0 as i32, y0 as i32, x1 as i32 + 1, y1 as i32 + 1];
        primitive
    }

    #[test]
    fn edges_covering_the_block_are_dropped_and_crossing_ones_kept() {
        let whole = [0, 0, TILE_WIDTH as i32, TILE_HEIGHT as i32];
        let covering = square(-10.0, -10.0, 100.0, 100.0, 0.5);
        let covered = plan(&covering, [0, 0], whole, 0.0).expect("a covering primitive is drawn");
        assert_eq!(covered.edge_count, 0, "every edge holds over the whole tile");
        // Its right edge at x = 20 crosses the tile; the others cover it.
        let crossing = square(-10.0, -10.0, 20.0, 100.0, 0.5);
        let crossed = plan(&crossing, [0, 0], whole, 0.0).expect("drawn");
        assert_eq!(crossed.edges(), &[[-1.0, 0.0, 20.0]], "only the crossing edge is left");
    }

    #[test]
    fn primitives_that_cannot_change_the_tile_are_skipped() {
        let whole = [0, 0, TILE_WIDTH as i32, TILE_HEIGHT as i32];
        // Wholly right of the block the kernel evaluates (pixels 0..32 of this span).
        let beside = square(40.0, 0.0, 50.0, 10.0, 0.5);
        assert!(plan(&beside, [0, 0], whole, 0.0).is_none(), "an edge negative at all four corners");
        // Behind a tile whose every depth is at least 0.6.
        let behind = square(-10.0, -10.0, 100.0, 100.0, 0.5);
        assert!(plan(&behind, [0, 0], whole, 0.6).is_none(), "nowhere nearer than the tile");
        assert!(plan(&behind, [0, 0], whole, 0.5).is_none(), "equal depth changes nothing either");
        assert!(plan(&behind, [0, 0], whole, 0.4).is_some(), "nearer than the tile: drawn");
    }

    #[test]
    fn the_farthest_depth_reads_only_pixels_inside_the_buffer() {
        let mut tile = [0.0f32; TILE_PIXELS];
        for row in 0..4 {
            tile[row * TILE_WIDTH..row * TILE_WIDTH + 16].fill(0.25 + row as f32);
        }
        assert_eq!(farthest_depth(&tile, 16, 4), 0.25);
        assert_eq!(farthest_depth(&tile, 24, 4), 0.0, "the ninth column onwards holds 0");
        assert_eq!(farthest_depth(&tile, TILE_WIDTH, TILE_HEIGHT), 0.0);
    }
}
