//! Everything a cull needs to know about one view, computed once per frame.

use ecs::Aabb;
use glam::{Mat4, Vec3, Vec4};

use crate::frustum::{aabb_lane, Frustum};
use crate::lod::{is_orthographic, lod_scale, select_lod};
use crate::size::{is_near_enough, max_distance_sq, ScreenSizeCull};

/// The user's culling settings (render settings, edited live).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CullParams {
    /// Objects whose box centre is further than this from the camera are culled; `<= 0`
    /// turns the distance cull off.
    pub max_distance: f32,
    /// Objects that look smaller than this many pixels are culled; `<= 0` turns the
    /// screen-size cull off.
    pub min_pixels: f32,
    /// Global level-of-detail quality knob: multiplies every level's range.
    pub lod_bias: f32,
}

impl Default for CullParams {
    /// Distance and size culls off, LOD bias 1.
    fn default() -> Self {
        Self { max_distance: 0.0, min_pixels: 0.0, lod_bias: 1.0 }
    }
}

/// Why an object was kept or culled, cheapest rejection first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CullVerdict {
    /// Passed every test.
    Visible,
    /// Kept without testing: its bounds, or the view, are not finite.
    NonFinite,
    /// Entirely outside a frustum plane.
    OutsideFrustum,
    /// Further than the maximum distance.
    TooFar,
    /// Smaller on screen than the minimum size.
    TooSmall,
}

impl CullVerdict {
    /// Whether the object is drawn (visible, or kept because of bad numbers).
    #[inline]
    pub fn is_kept(self) -> bool {
        matches!(self, CullVerdict::Visible | CullVerdict::NonFinite)
    }
}

/// One view's culling context: frustum, camera, pre-squared thresholds and LOD scale.
///
/// Build it once per view and frame with [`ViewCullContext::new`], then test objects with
/// [`ViewCullContext::classify`] or the batch kernels on [`ViewCullContext::frustum`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewCullContext {
    frustum: Frustum,
    camera_position: Vec3,
    /// Row giving the view depth (distance in front of the eye) of a world point `(p, 1)`.
    depth_row: Vec4,
    max_distance_sq: f32,
    size: ScreenSizeCull,
    lod_scale: f32,
    lod_bias: f32,
    finite: bool,
}

impl ViewCullContext {
    /// The context of a view (world to view) and projection (view to clip, reversed-Z),
    /// drawn into a viewport `viewport_height` pixels tall.
    pub fn new(view: Mat4, projection: Mat4, viewport_height: f32, params: &CullParams) -> Self {
        let frustum = Frustum::from_view_projection(projection * view);
        let finite = frustum.is_finite() && view.is_finite() && projection.is_finite();
        // Right-handed: the camera looks down its -z, so depth is minus view-space z.
        let depth_row = -view.row(2);
        let camera_position = view.inverse().w_axis.truncate();
        let size =
            ScreenSizeCull::new(projection.y_axis.y, viewport_height, params.min_pixels, is_orthographic(&projection));
        Self {
            frustum,
            camera_position,
            depth_row,
            max_distance_sq: max_distance_sq(params.max_distance),
            size,
            lod_scale: lod_scale(&projection),
            lod_bias: params.lod_bias,
            finite,
        }
    }

    /// The view frustum, for the batch kernels.
    #[inline]
    pub fn frustum(&self) -> &Frustum {
        &self.frustum
    }

    /// The camera's world position.
    #[inline]
    pub fn camera_position(&self) -> Vec3 {
        self.camera_position
    }

    /// The squared distance threshold (infinity when the distance cull is off).
    #[inline]
    pub fn max_distance_sq(&self) -> f32 {
        self.max_distance_sq
    }

    /// The screen-size cull of this view.
    #[inline]
    pub fn screen_size(&self) -> &ScreenSizeCull {
        &self.size
    }

    /// Whether a cull besides the frustum is on (distance or screen size): then a verdict is
    /// not the frustum's alone.
    #[inline]
    pub fn has_secondary_culls(&self) -> bool {
        self.max_distance_sq.is_finite() || self.size.is_enabled()
    }

    /// Whether the view's matrices were finite; when not, nothing is culled.
    #[inline]
    pub fn is_finite(&self) -> bool {
        self.finite
    }

    /// Squared distance from the camera to `point`.
    #[inline]
    pub fn distance_sq(&self, point: Vec3) -> f32 {
        point.distance_squared(self.camera_position)
    }

    /// View depth of `point`: its distance in front of the eye along the view direction.
    #[inline]
    pub fn depth(&self, point: Vec3) -> f32 {
        self.depth_row.dot(point.extend(1.0))
    }

    /// Tests a world box: frustum, then distance, then screen size (cheapest rejection
    /// first within what the frustum leaves). Non-finite bounds or a non-finite view give
    /// [`CullVerdict::NonFinite`], which is kept.
    pub fn classify(&self, world: &Aabb) -> CullVerdict {
        let center = world.center();
        let half = world.half_extent();
        if !self.finite {
            return CullVerdict::NonFinite;
        }
        let verdict = aabb_lane(self.frustum.lanes(), center, half);
        if verdict.non_finite {
            return CullVerdict::NonFinite;
        }
        if !verdict.visible {
            return CullVerdict::OutsideFrustum;
        }
        self.classify_in_frustum(center, half)
    }

    /// The distance and screen-size culls of a box of `center` and `half` extent the frustum
    /// kept: [`CullVerdict::Visible`], [`CullVerdict::TooFar`] or [`CullVerdict::TooSmall`]
    /// (bad numbers are kept).
    #[inline]
    pub fn classify_in_frustum(&self, center: Vec3, half: Vec3) -> CullVerdict {
        if !is_near_enough(self.distance_sq(center), self.max_distance_sq) {
            return CullVerdict::TooFar;
        }
        if !self.size.keeps(half.length_squared(), self.depth(center)) {
            return CullVerdict::TooSmall;
        }
        CullVerdict::Visible
    }

    /// The level of detail for an object whose box centre is at squared distance
    /// `distance_sq` from the camera (see [`select_lod`]).
    #[inline]
    pub fn lod_level(&self, distance_sq: f32, max_distances: impl IntoIterator<Item = f32>) -> usize {
        select_lod(distance_sq.sqrt(), self.lod_scale, self.lod_bias, max_distances)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(params: &CullParams) -> ViewCullContext {
        let view = Mat4::look_at_rh(Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO, Vec3::Y);
        let projection = Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 16.0 / 9.0, 0.1);
        ViewCullContext::new(view, projection, 1080.0, params)
    }

    fn cube(center: Vec3, half: f32) -> Aabb {
        Aabb::from_center_half_extent(center, Vec3::splat(half))
    }

    #[test]
    fn tests_run_in_order_and_each_can_reject() {
        let params = CullParams { max_distance: 100.0, min_pixels: 4.0, lod_bias: 1.0 };
        let view = context(&params);
        assert!((view.camera_position() - Vec3::new(0.0, 0.0, 10.0)).length() < 1e-5);
        assert!((view.depth(Vec3::ZERO) - 10.0).abs() < 1e-5);
        assert_eq!(view.classify(&cube(Vec3::ZERO, 1.0)), CullVerdict::Visible);
        assert_eq!(view.classify(&cube(Vec3::new(0.0, 0.0, 20.0), 1.0)), CullVerdict::OutsideFrustum);
        assert_eq!(view.classify(&cube(Vec3::new(0.0, 0.0, -200.0), 5.0)), CullVerdict::TooFar);
        assert_eq!(view.classify(&cube(Vec3::new(0.0, 0.0, -50.0), 0.01)), CullVerdict::TooSmall);
        assert!(context(&CullParams::default()).classify(&cube(Vec3::new(0.0, 0.0, -50_000.0), 0.001)).is_kept());
    }

    #[test]
    fn non_finite_input_is_kept() {
        let view = context(&CullParams::default());
        let bad = Aabb::new(Vec3::new(0.0, 0.0, 20.0), Vec3::new(1.0, f32::INFINITY, 21.0));
        assert_eq!(view.classify(&bad), CullVerdict::NonFinite);
        let broken = ViewCullContext::new(
            Mat4::from_cols_array(&[f32::NAN; 16]),
            Mat4::IDENTITY,
            1080.0,
            &CullParams::default(),
        );
        assert!(!broken.is_finite());
        assert_eq!(broken.classify(&cube(Vec3::ZERO, 1.0)), CullVerdict::NonFinite);
    }

    #[test]
    fn lod_level_uses_the_view_scale_and_bias() {
        let params = CullParams { lod_bias: 2.0, ..CullParams::default() };
        let view = context(&params);
        assert_eq!(view.lod_level(15.0 * 15.0, [10.0, 40.0]), 0, "bias 2 doubles 10 m");
        assert_eq!(view.lod_level(25.0 * 25.0, [10.0, 40.0]), 1);
    }
}
