//! The light views of a frame: where each shadow map looks from, what it covers, and which
//! tile of the shadow atlas it is drawn into.
//!
//! Every matrix is world to light clip space, reversed-Z (the light's near plane at depth 1,
//! its far plane at 0), as the camera's are, so one depth test (GREATER) and one frustum
//! extraction serve both.
//!
//! - **Sun cascades** are orthographic. Each covers the bounding sphere of its slice of the
//!   camera's view (the slice's corners lie on it), so the map's footprint does not change
//!   as the camera turns, and its centre is snapped to whole texels in the light's frame, so
//!   a moving camera does not make shadow edges crawl. Its near plane is pulled back to the
//!   casters nearest the sun (a tall building far outside the view still throws its shadow
//!   in), and its culling volume has no near plane at all: the light decides which casters
//!   matter, not the camera.
//! - **Spot lights** are one perspective view, the cone's full angle wide and its range deep.
//! - **Point lights** are six perspective views, one per cube face, each a little wider than
//!   90 degrees so the filter taps at a face's edge stay inside its tile.

use ecs::{Projection, ResolvedView, ShadowBias};
use glam::{Mat4, Vec3};
use runtime::hecs::Entity;

use crate::frustum::Frustum;

/// Which shadow view of its light a view is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LightViewKind {
    /// Cascade `n` of the sun, nearest first.
    Cascade(u8),
    /// A spot light's one view.
    Spot,
    /// Face `n` of a point light's cube: +X, -X, +Y, -Y, +Z, -Z.
    CubeFace(u8),
}

/// A square region of the shadow atlas, in texels (top-left origin).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AtlasTile {
    /// Left column.
    pub x: u32,
    /// Top row.
    pub y: u32,
    /// Side, a power of two.
    pub size: u32,
}

/// One shadow map of the frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LightView {
    /// The light entity.
    pub light: Entity,
    /// Which of its views.
    pub kind: LightViewKind,
    /// World to light clip space (reversed-Z).
    pub view_projection: Mat4,
    /// The casters that may draw into the map are those intersecting this volume (for a
    /// cascade: the map's volume without its near plane).
    pub frustum: Frustum,
    /// Where the map is drawn in the atlas.
    pub tile: AtlasTile,
    /// The light's depth offsets, in texels.
    pub bias: ShadowBias,
    /// World size of one texel: everywhere for a cascade, at one unit of distance from the
    /// light for a perspective view.
    pub texel_world: f32,
    /// Whether the view is perspective (spot and cube faces).
    pub perspective: bool,
}

/// The part of the camera's view a cascade covers: the distances of its slice and the
/// bounding sphere of the slice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CascadeSlice {
    /// Camera distance (along its view axis) where the slice starts.
    pub near: f32,
    /// Camera distance where it ends.
    pub far: f32,
    /// Centre of the sphere holding the slice, world space.
    pub center: Vec3,
    /// Radius of that sphere.
    pub radius: f32,
}

/// The bounding sphere of the camera's view between distances `near` and `far` along its
/// view axis: the centre on the axis where the slice's near and far corners are equally far
/// (clamped into the slice), the radius reaching the farther corner. `None` when the view's
/// projection gives no usable extent.
pub fn cascade_slice(view: &ResolvedView, near: f32, far: f32) -> Option<CascadeSlice> {
    let (scale_x, scale_y) = (view.projection.x_axis.x, view.projection.y_axis.y);
    if !(scale_x.is_finite() && scale_y.is_finite() && scale_x != 0.0 && scale_y != 0.0) {
        return None;
    }
    // Squared half-diagonal of the slice's cross-section at distance d: d^2 * k for a
    // perspective view, a constant for an orthographic one.
    let k = 1.0 / (scale_x * scale_x) + 1.0 / (scale_y * scale_y);
    let orthographic = crate::lod::is_orthographic(&view.projection);
    let (near_sq, far_sq) = if orthographic { (k, k) } else { (near * near * k, far * far * k) };
    let depth = far - near;
    let along = if depth > 0.0 {
        ((far * far - near * near + far_sq - near_sq) / (2.0 * depth)).clamp(near, far)
    } else {
        near
    };
    let radius = ((along - near).powi(2) + near_sq).max((far - along).powi(2) + far_sq).sqrt();
    let forward = view.rotation * Vec3::NEG_Z;
    let center = view.position + forward * along;
    (radius.is_finite() && radius > 0.0 && center.is_finite()).then_some(CascadeSlice { near, far, center, radius })
}

/// A rotation-only view looking down `direction` (unit), with a stable up vector.
fn look_along(direction: Vec3) -> Mat4 {
    let up = if direction.y.abs() < 0.99 { Vec3::Y } else { Vec3::Z };
    Mat4::look_to_rh(Vec3::ZERO, direction, up)
}

/// The view-projection of a sun cascade covering `slice` with a square map of `resolution`
/// texels, the sun shining along `direction` (unit). `caster_reach` is the smallest
/// `dot(p, direction)` of any caster point (the caster nearest the sun), so the map's depth
/// range starts there. Returns the matrix and the world size of a texel.
pub fn cascade_view_projection(
    slice: &CascadeSlice,
    direction: Vec3,
    resolution: u32,
    caster_reach: f32,
) -> (Mat4, f32) {
    let resolution = resolution.max(16) as f32;
    // A margin of a few texels keeps the filter's taps of the sphere's rim inside the tile.
    let radius = slice.radius * resolution / (resolution - 6.0);
    let texel = 2.0 * radius / resolution;
    let rotation = look_along(direction);
    let center = rotation.transform_point3(slice.center);
    // Whole texels in the light's frame: the map moves in steps of one texel, so a caster's
    // edge lands on the same texels while the camera moves.
    let (x, y) = ((center.x / texel).floor() * texel, (center.y / texel).floor() * texel);
    // View-space z is -dot(p, direction) for this rotation.
    let center_reach = -center.z;
    let far = center_reach + radius;
    let near = caster_reach.min(center_reach - radius) - texel;
    // Reversed-Z: glam's orthographic maps its `near` argument to 0, so the far distance goes
    // first.
    let projection = Mat4::orthographic_rh(x - radius, x + radius, y - radius, y + radius, far, near);
    (projection * rotation, texel)
}

/// Smallest near plane of a perspective light view, as a share of its range: nearer casters
/// are clipped, and a smaller share spends the depth's precision on the first centimetres.
const NEAR_SHARE: f32 = 0.01;
/// Smallest near plane of a perspective light view, world units.
const MIN_NEAR: f32 = 0.05;

/// The near plane of a light with `range`.
pub fn light_near(range: f32) -> f32 {
    (range * NEAR_SHARE).max(MIN_NEAR)
}

/// The view-projection of a spot light at `position` shining along `direction` (unit) with
/// cone half angle `outer_angle` and `range`; and the world size of a texel at one unit of
/// distance for a map of `resolution` texels.
pub fn spot_view_projection(
    position: Vec3,
    direction: Vec3,
    outer_angle: f32,
    range: f32,
    resolution: u32,
) -> (Mat4, f32) {
    let half = outer_angle.clamp(0.01, 1.5);
    let projection =
        Projection::PerspectiveReverse { fov_y_radians: 2.0 * half, near: light_near(range), far: range }.matrix(1.0);
    let view = look_along(direction) * Mat4::from_translation(-position);
    (projection * view, 2.0 * half.tan() / resolution.max(1) as f32)
}

/// The view directions and up vectors of a cube's faces: +X, -X, +Y, -Y, +Z, -Z.
pub const CUBE_FACES: [(Vec3, Vec3); 6] = [
    (Vec3::X, Vec3::NEG_Y),
    (Vec3::NEG_X, Vec3::NEG_Y),
    (Vec3::Y, Vec3::Z),
    (Vec3::NEG_Y, Vec3::NEG_Z),
    (Vec3::Z, Vec3::NEG_Y),
    (Vec3::NEG_Z, Vec3::NEG_Y),
];

/// The view-projection of face `face` of a point light's cube at `position` with `range`,
/// for tiles of `resolution` texels; and the world size of a texel at one unit of distance.
/// The face is widened by three texels on each side beyond 90 degrees.
pub fn cube_face_view_projection(position: Vec3, range: f32, face: usize, resolution: u32) -> (Mat4, f32) {
    let resolution = resolution.max(16) as f32;
    let half_tan = resolution / (resolution - 6.0);
    let projection =
        Projection::PerspectiveReverse { fov_y_radians: 2.0 * half_tan.atan(), near: light_near(range), far: range }
            .matrix(1.0);
    let (direction, up) = CUBE_FACES[face];
    let view = Mat4::look_to_rh(position, direction, up);
    (projection * view, 2.0 * half_tan / resolution)
}

/// Hands out square, power-of-two tiles of a square atlas (a buddy allocator: a free square
/// is split into four until it fits), reused across frames without allocating.
#[derive(Clone, Debug, Default)]
pub struct AtlasAllocator {
    size: u32,
    free: Vec<AtlasTile>,
}

/// Smallest tile side handed out.
pub const MIN_TILE: u32 = 64;

impl AtlasAllocator {
    /// Empties the atlas, `size` texels square (rounded down to a power of two).
    pub fn reset(&mut self, size: u32) {
        self.size = if size == 0 { 0 } else { 1 << (31 - size.leading_zeros()) };
        self.free.clear();
        if self.size > 0 {
            self.free.push(AtlasTile { x: 0, y: 0, size: self.size });
        }
    }

    /// A tile of `size` texels (rounded down to a power of two, at least [`MIN_TILE`]), or
    /// of half that, and so on down to [`MIN_TILE`], when the atlas has no room; `None` when
    /// even that does not fit.
    pub fn allocate(&mut self, size: u32) -> Option<AtlasTile> {
        let mut want = Self::side(size.min(self.size.max(MIN_TILE)));
        while want >= MIN_TILE {
            if let Some(tile) = self.allocate_exact(want) {
                return Some(tile);
            }
            want /= 2;
        }
        None
    }

    /// A tile of exactly `size` texels (rounded down to a power of two, at least
    /// [`MIN_TILE`]), or `None`. The smallest free square that fits is split (the lowest
    /// position first among equals), so the same requests give the same tiles.
    pub fn allocate_exact(&mut self, size: u32) -> Option<AtlasTile> {
        let want = Self::side(size);
        let index = self
            .free
            .iter()
            .enumerate()
            .filter(|(_, tile)| tile.size >= want)
            .min_by_key(|(_, tile)| (tile.size, tile.y, tile.x))
            .map(|(index, _)| index)?;
        let mut tile = self.free.swap_remove(index);
        while tile.size > want {
            let half = tile.size / 2;
            for (dx, dy) in [(1, 0), (0, 1), (1, 1)] {
                self.free.push(AtlasTile { x: tile.x + dx * half, y: tile.y + dy * half, size: half });
            }
            tile.size = half;
        }
        Some(tile)
    }

    /// Fills every entry of `tiles` with a tile of one size: `size` (rounded down to a power
    /// of two), or half that, and so on down to [`MIN_TILE`], the largest at which all of
    /// them fit. All or none: `false`, with the atlas as it was but for unmerged buddies,
    /// when even [`MIN_TILE`] does not fit them all (a cube with a missing face would light
    /// through it).
    pub fn allocate_all(&mut self, tiles: &mut [AtlasTile], size: u32) -> bool {
        let mut size = size;
        loop {
            let mut got = 0;
            while got < tiles.len() {
                match self.allocate_exact(size) {
                    Some(tile) => {
                        tiles[got] = tile;
                        got += 1;
                    }
                    None => break,
                }
            }
            if got == tiles.len() {
                return true;
            }
            for tile in &tiles[..got] {
                self.release(*tile);
            }
            if size <= MIN_TILE {
                return false;
            }
            size /= 2;
        }
    }

    /// Gives `tile` back (its space is free again; buddies are not merged until the next
    /// [`AtlasAllocator::reset`]).
    pub fn release(&mut self, tile: AtlasTile) {
        self.free.push(tile);
    }

    fn side(size: u32) -> u32 {
        let size = size.max(MIN_TILE);
        1 << (31 - size.leading_zeros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecs::{Camera, Viewport};
    use glam::{Quat, Vec4Swizzles};

    fn camera_view(rotation: Quat) -> ResolvedView {
        ResolvedView::new(
            &Camera::default(),
            Vec3::new(3.0, 2.0, 1.0),
            rotation,
            Viewport { width: 160, height: 90 },
            None,
        )
    }

    /// Corners of the camera's view between two distances, world space.
    fn slice_corners(view: &ResolvedView, near: f32, far: f32) -> Vec<Vec3> {
        let (tx, ty) = (1.0 / view.projection.x_axis.x, 1.0 / view.projection.y_axis.y);
        let mut corners = Vec::new();
        for d in [near, far] {
            for (sx, sy) in [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)] {
                let local = Vec3::new(sx * tx * d, sy * ty * d, -d);
                corners.push(view.position + view.rotation * local);
            }
        }
        corners
    }

    #[test]
    fn a_cascade_holds_its_slice_whichever_way_the_camera_turns() {
        let sun = Vec3::new(0.3, -1.0, 0.2).normalize();
        for turn in [0.0f32, 1.0, std::f32::consts::PI, -2.0] {
            let view = camera_view(Quat::from_rotation_y(turn) * Quat::from_rotation_x(-0.3));
            let slice = cascade_slice(&view, 5.0, 30.0).unwrap();
            let (matrix, texel) = cascade_view_projection(&slice, sun, 1024, -100.0);
            assert!(texel > 0.0);
            for corner in slice_corners(&view, 5.0, 30.0) {
                assert!(corner.distance(slice.center) <= slice.radius * 1.0001);
                let clip = matrix * corner.extend(1.0);
                let ndc = clip.xyz() / clip.w;
                assert!(ndc.x.abs() < 1.0 && ndc.y.abs() < 1.0, "{turn}: {ndc}");
                assert!((0.0..=1.0).contains(&ndc.z), "{turn}: {ndc}");
            }
            // The same slice radius for every turn: the footprint does not breathe.
            let again = cascade_slice(&camera_view(Quat::IDENTITY), 5.0, 30.0).unwrap();
            assert!((again.radius - slice.radius).abs() < 1e-3);
        }
    }

    #[test]
    fn the_cascades_depth_reaches_back_to_the_casters_nearest_the_sun() {
        let view = camera_view(Quat::IDENTITY);
        let slice = cascade_slice(&view, 0.1, 10.0).unwrap();
        let sun = Vec3::NEG_Y;
        // A caster 500 units up (dot with the sun's direction is -500).
        let (matrix, _) = cascade_view_projection(&slice, sun, 512, -500.0);
        let top = matrix * Vec3::new(slice.center.x, 499.0, slice.center.z).extend(1.0);
        assert!((0.0..=1.0).contains(&(top.z / top.w)), "{top}");
        let frustum = Frustum::from_view_projection_without_near(matrix);
        assert_eq!(frustum.planes().len(), 5);
    }

    #[test]
    fn snapping_moves_the_map_in_whole_texels() {
        let sun = Vec3::new(0.2, -1.0, 0.1).normalize();
        let a = camera_view(Quat::IDENTITY);
        let mut b = a;
        b.position += Vec3::new(0.0123, 0.0, 0.0);
        let (ma, texel) = cascade_view_projection(&cascade_slice(&a, 1.0, 20.0).unwrap(), sun, 1024, -50.0);
        let (mb, _) = cascade_view_projection(&cascade_slice(&b, 1.0, 20.0).unwrap(), sun, 1024, -50.0);
        let point = Vec3::new(1.0, 0.0, -5.0).extend(1.0);
        let shift = ((ma * point).x - (mb * point).x) * 512.0; // in texels of a 1024 map
        assert!((shift - shift.round()).abs() < 1e-2, "{shift} (texel {texel})");
    }

    #[test]
    fn cube_faces_cover_every_direction_and_spots_their_cone() {
        let position = Vec3::new(1.0, 2.0, 3.0);
        for direction in [Vec3::X, Vec3::new(-1.0, 1.0, 0.5), Vec3::NEG_Z, Vec3::new(0.1, -0.99, 0.1)] {
            let point = position + direction.normalize() * 5.0;
            let inside = (0..6).any(|face| {
                let (matrix, _) = cube_face_view_projection(position, 10.0, face, 256);
                let clip = matrix * point.extend(1.0);
                let ndc = clip.xyz() / clip.w;
                clip.w > 0.0 && ndc.x.abs() <= 1.0 && ndc.y.abs() <= 1.0 && (0.0..=1.0).contains(&ndc.z)
            });
            assert!(inside, "{direction}");
        }
        let (spot, _) = spot_view_projection(position, Vec3::NEG_Y, 0.5, 10.0, 512);
        let below = spot * (position + Vec3::new(0.0, -5.0, 0.0)).extend(1.0);
        assert!(below.w > 0.0 && (below.xyz() / below.w).abs().max_element() <= 1.0);
        let beside = spot * (position + Vec3::new(5.0, -1.0, 0.0)).extend(1.0);
        assert!((beside.xy() / beside.w).abs().max_element() > 1.0);
    }

    #[test]
    fn the_atlas_packs_power_of_two_tiles_without_overlap() {
        let mut atlas = AtlasAllocator::default();
        atlas.reset(4096);
        let mut tiles = Vec::new();
        for size in [1024, 1024, 1024, 1024, 512, 256, 256, 256, 256, 256, 256, 2048, 3000] {
            tiles.push(atlas.allocate(size).expect("room"));
        }
        // The 3000 request got what was left at the largest size that fits.
        assert!(tiles.last().unwrap().size <= 2048);
        for (i, a) in tiles.iter().enumerate() {
            assert!(a.x + a.size <= 4096 && a.y + a.size <= 4096);
            for b in &tiles[i + 1..] {
                let apart = a.x + a.size <= b.x || b.x + b.size <= a.x || a.y + a.size <= b.y || b.y + b.size <= a.y;
                assert!(apart, "{a:?} overlaps {b:?}");
            }
        }
        let mut full = AtlasAllocator::default();
        full.reset(128);
        assert_eq!(full.allocate(128).map(|tile| tile.size), Some(128));
        assert_eq!(full.allocate(64), None);
        full.reset(0);
        assert_eq!(full.allocate(64), None);
    }
}
