//! The view frustum as inward half-spaces, taken from a view-projection matrix.
//!
//! Reference: G. Gribb and K. Hartmann, "Fast Extraction of Viewing Frustum Planes from the
//! World-View-Projection Matrix", 2001.
//!
//! With column vectors, clip = M · p, and row i of M (written `r_i`) gives the clip
//! coordinate `c_i = r_i · p`. A point is inside the clip volume of a depth range [0, 1]
//! when `-w <= x <= w`, `-w <= y <= w` and `0 <= z <= w`, so each inequality is a plane:
//! left `r3 + r0`, right `r3 - r0`, bottom `r3 + r1`, top `r3 - r1`, and for depth `r2`
//! (`z >= 0`) and `r3 - r2` (`z <= w`). Under reversed-Z the near plane maps to depth 1,
//! so near is `r3 - r2` and far is `r2`: the textbook near and far rows swap. With an
//! infinite far plane `r2` has a zero normal (depth tends to 0 but never reaches it) and the
//! plane is dropped, which leaves five planes.

use ecs::{Aabb, Sphere};
use glam::{DVec4, Mat4, Vec3, Vec4};

/// Most planes a frustum has: left, right, bottom, top, near, far.
pub const MAX_PLANES: usize = 6;

/// A plane whose normal is shorter than this fraction of the longest side-plane normal is
/// degenerate (the far plane of an infinite projection) and is dropped.
const DEGENERATE_NORMAL_RATIO: f64 = f32::EPSILON as f64;

/// The planes of a frustum in structure-of-arrays form, as the batch kernels read them.
///
/// Lanes `[0, count)` hold planes; the rest are zero and never read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlaneLanes {
    /// Number of planes in use.
    pub count: usize,
    /// Normal x of each plane.
    pub normal_x: [f32; MAX_PLANES],
    /// Normal y of each plane.
    pub normal_y: [f32; MAX_PLANES],
    /// Normal z of each plane.
    pub normal_z: [f32; MAX_PLANES],
    /// Plane offset `d` of `dot(n, p) + d`.
    pub offset: [f32; MAX_PLANES],
    /// `|normal x|`, for projecting box half extents.
    pub abs_x: [f32; MAX_PLANES],
    /// `|normal y|`.
    pub abs_y: [f32; MAX_PLANES],
    /// `|normal z|`.
    pub abs_z: [f32; MAX_PLANES],
}

/// A view frustum: up to six unit, inward-facing planes.
///
/// A point `p` is inside when `dot(n, p) + d >= 0` for every plane `(n, d)`. A frustum built
/// from a non-finite matrix has no planes, so it culls nothing, and says so through
/// [`Frustum::is_finite`].
///
/// ```
/// use culling::{Aabb, Frustum};
/// use glam::{Mat4, Vec3};
/// let projection = Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 16.0 / 9.0, 0.1);
/// let view = Mat4::look_at_rh(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y);
/// let frustum = Frustum::from_view_projection(projection * view);
/// assert_eq!(frustum.planes().len(), 5);
/// let ahead = Aabb::new(Vec3::new(-1.0, -1.0, -12.0), Vec3::new(1.0, 1.0, -10.0));
/// let behind = Aabb::new(Vec3::new(-1.0, -1.0, 10.0), Vec3::new(1.0, 1.0, 12.0));
/// assert!(frustum.may_intersect_aabb(&ahead));
/// assert!(!frustum.may_intersect_aabb(&behind));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frustum {
    planes: [Vec4; MAX_PLANES],
    lanes: PlaneLanes,
    finite: bool,
}

impl Frustum {
    /// A frustum with no planes: it keeps everything.
    pub const EVERYTHING: Frustum = Frustum {
        planes: [Vec4::ZERO; MAX_PLANES],
        lanes: PlaneLanes {
            count: 0,
            normal_x: [0.0; MAX_PLANES],
            normal_y: [0.0; MAX_PLANES],
            normal_z: [0.0; MAX_PLANES],
            offset: [0.0; MAX_PLANES],
            abs_x: [0.0; MAX_PLANES],
            abs_y: [0.0; MAX_PLANES],
            abs_z: [0.0; MAX_PLANES],
        },
        finite: true,
    };

    /// Extracts the planes of a reversed-Z view-projection matrix (Gribb–Hartmann).
    ///
    /// Gives five planes (left, right, bottom, top, near) for an infinite far plane and six
    /// for a finite one, perspective or orthographic. A plane whose normal is (nearly) zero
    /// is dropped; a non-finite matrix, or one whose planes overflow, gives a frustum
    /// without planes that reports `is_finite() == false`.
    pub fn from_view_projection(view_projection: Mat4) -> Frustum {
        Frustum::extract(view_projection, true)
    }

    /// As [`Frustum::from_view_projection`] without the near plane: the volume of a shadow
    /// map whose casters may lie anywhere towards the light (a caster between the light and
    /// the map's near plane still darkens what the map covers).
    pub fn from_view_projection_without_near(view_projection: Mat4) -> Frustum {
        Frustum::extract(view_projection, false)
    }

    fn extract(view_projection: Mat4, with_near: bool) -> Frustum {
        if !view_projection.is_finite() {
            return Frustum { finite: false, ..Frustum::EVERYTHING };
        }
        let row = |index: usize| view_projection.row(index).as_dvec4();
        let (r0, r1, r2, r3) = (row(0), row(1), row(2), row(3));
        // Order: left, right, bottom, top, near (r3 - r2 under reversed-Z), far (r2).
        let candidates: [DVec4; MAX_PLANES] = [r3 + r0, r3 - r0, r3 + r1, r3 - r1, r3 - r2, r2];
        let normal_length = |plane: &DVec4| plane.truncate().length();
        let reference = candidates[..4].iter().map(normal_length).fold(0.0f64, f64::max);

        let mut frustum = Frustum::EVERYTHING;
        for (index, candidate) in candidates.into_iter().enumerate() {
            if index == 4 && !with_near {
                continue;
            }
            let length = normal_length(&candidate);
            let has_normal = length > reference * DEGENERATE_NORMAL_RATIO && length > 0.0;
            if !has_normal {
                continue;
            }
            let plane = (candidate / length).as_vec4();
            if !plane.is_finite() {
                return Frustum { finite: false, ..Frustum::EVERYTHING };
            }
            frustum.push(plane);
        }
        frustum
    }

    fn push(&mut self, plane: Vec4) {
        let lanes = &mut self.lanes;
        let index = lanes.count;
        debug_assert!(index < MAX_PLANES, "a frustum has at most six planes");
        self.planes[index] = plane;
        lanes.normal_x[index] = plane.x;
        lanes.normal_y[index] = plane.y;
        lanes.normal_z[index] = plane.z;
        lanes.offset[index] = plane.w;
        lanes.abs_x[index] = plane.x.abs();
        lanes.abs_y[index] = plane.y.abs();
        lanes.abs_z[index] = plane.z.abs();
        lanes.count += 1;
    }

    /// The planes, `xyz` the unit inward normal and `w` the offset.
    #[inline]
    pub fn planes(&self) -> &[Vec4] {
        &self.planes[..self.lanes.count]
    }

    /// The planes as `[nx, ny, nz, d]` arrays in a fixed-size block, the unused ones zero:
    /// the layout the GPU's cull parameters take, with [`Frustum::planes`]`().len()` in use.
    pub fn plane_array(&self) -> [[f32; 4]; MAX_PLANES] {
        let mut planes = [[0.0; 4]; MAX_PLANES];
        for (target, plane) in planes.iter_mut().zip(self.planes()) {
            *target = plane.to_array();
        }
        planes
    }

    /// The planes laid out for the batch kernels.
    #[inline]
    pub fn lanes(&self) -> &PlaneLanes {
        &self.lanes
    }

    /// Whether the matrix it came from was finite; when not, the frustum culls nothing.
    #[inline]
    pub fn is_finite(&self) -> bool {
        self.finite
    }

    /// Whether any part of the box may be inside; `false` only when it is entirely outside
    /// one plane.
    ///
    /// Conservative: for each plane the box's centre distance plus its half extents
    /// projected on `|n|` (the reach of the corner furthest along the normal) must be
    /// negative to reject, so a box straddling a plane is kept. A non-finite box is kept.
    #[inline]
    pub fn may_intersect_aabb(&self, aabb: &Aabb) -> bool {
        let center = aabb.center();
        let half = aabb.half_extent();
        aabb_lane(&self.lanes, center, half).visible
    }

    /// Whether any part of the sphere may be inside; `false` only when the sphere is
    /// entirely outside one plane (`dot(n, c) + d + |r| < 0`). A non-finite sphere is kept.
    #[inline]
    pub fn may_intersect_sphere(&self, sphere: &Sphere) -> bool {
        sphere_lane(&self.lanes, sphere.center, sphere.radius).visible
    }
}

/// The verdict on one object: kept or not, and whether its input was non-finite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LaneVerdict {
    /// The object may be visible (always true when `non_finite`).
    pub visible: bool,
    /// Some input of the object was NaN or infinite.
    pub non_finite: bool,
}

/// Whether `value` is finite, written as the kernels write it: `|value| <= f32::MAX`.
#[inline(always)]
pub(crate) fn lane_is_finite(value: f32) -> bool {
    value.abs() <= f32::MAX
}

/// The reference sphere test, one object; every batch kernel repeats these steps.
#[inline(always)]
pub(crate) fn sphere_lane(lanes: &PlaneLanes, center: Vec3, radius: f32) -> LaneVerdict {
    // Step 1: a lane with a non-finite input is kept and reported.
    let finite =
        lane_is_finite(center.x) & lane_is_finite(center.y) & lane_is_finite(center.z) & lane_is_finite(radius);
    // Step 2: the radius is taken by its absolute value, so a negative one cannot cull.
    let reach = radius.abs();
    let mut outside = false;
    for plane in 0..lanes.count {
        // Step 3: signed distance ((nx*x + ny*y) + nz*z) + d, no fused multiply-add.
        let distance = lanes.normal_x[plane] * center.x
            + lanes.normal_y[plane] * center.y
            + lanes.normal_z[plane] * center.z
            + lanes.offset[plane];
        // Step 4: outside this plane when even the point nearest to it is behind it.
        outside |= distance + reach < 0.0;
    }
    LaneVerdict { visible: !outside || !finite, non_finite: !finite }
}

/// The reference box test (centre and half extents), one object; every batch kernel
/// repeats these steps.
#[inline(always)]
pub(crate) fn aabb_lane(lanes: &PlaneLanes, center: Vec3, half: Vec3) -> LaneVerdict {
    // Step 1: a lane with a non-finite input is kept and reported.
    let finite = lane_is_finite(center.x)
        & lane_is_finite(center.y)
        & lane_is_finite(center.z)
        & lane_is_finite(half.x)
        & lane_is_finite(half.y)
        & lane_is_finite(half.z);
    // Step 2: half extents by absolute value, so an inverted box cannot cull.
    let half = half.abs();
    let mut outside = false;
    for plane in 0..lanes.count {
        // Step 3: centre distance ((nx*cx + ny*cy) + nz*cz) + d.
        let distance = lanes.normal_x[plane] * center.x
            + lanes.normal_y[plane] * center.y
            + lanes.normal_z[plane] * center.z
            + lanes.offset[plane];
        // Step 4: reach of the corner furthest along n, (|nx|*hx + |ny|*hy) + |nz|*hz.
        let reach = lanes.abs_x[plane] * half.x + lanes.abs_y[plane] * half.y + lanes.abs_z[plane] * half.z;
        // Step 5: outside this plane when even that corner is behind it.
        outside |= distance + reach < 0.0;
    }
    LaneVerdict { visible: !outside || !finite, non_finite: !finite }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn camera() -> Mat4 {
        Mat4::look_at_rh(Vec3::new(0.0, 2.0, 0.0), Vec3::new(0.0, 2.0, -1.0), Vec3::Y)
    }

    fn infinite_frustum() -> Frustum {
        let projection = Mat4::perspective_infinite_reverse_rh(70f32.to_radians(), 16.0 / 9.0, 0.1);
        Frustum::from_view_projection(projection * camera())
    }

    fn assert_unit_planes(frustum: &Frustum) {
        for plane in frustum.planes() {
            let length = plane.truncate().length();
            assert!((length - 1.0).abs() < 1e-5, "plane {plane} should have a unit normal, length {length}");
        }
    }

    #[test]
    fn infinite_projection_has_five_unit_planes() {
        let frustum = infinite_frustum();
        assert_eq!(frustum.planes().len(), 5, "no far plane for an infinite projection");
        assert!(frustum.is_finite());
        assert_unit_planes(&frustum);
    }

    #[test]
    fn finite_reversed_projection_has_six_unit_planes() {
        // Reversed-Z through the standard builder: near and far swapped.
        let projection = Mat4::perspective_rh(60f32.to_radians(), 1.5, 500.0, 0.1);
        let frustum = Frustum::from_view_projection(projection * camera());
        assert_eq!(frustum.planes().len(), 6);
        assert_unit_planes(&frustum);
        let beyond = Aabb::new(Vec3::new(-1.0, 1.0, -620.0), Vec3::new(1.0, 3.0, -600.0));
        let inside = Aabb::new(Vec3::new(-1.0, 1.0, -420.0), Vec3::new(1.0, 3.0, -400.0));
        assert!(!frustum.may_intersect_aabb(&beyond), "past the far plane is culled");
        assert!(frustum.may_intersect_aabb(&inside));
    }

    #[test]
    fn orthographic_reversed_projection_has_six_planes() {
        let projection = Mat4::orthographic_rh(-10.0, 10.0, -5.0, 5.0, 100.0, 0.5);
        let frustum = Frustum::from_view_projection(projection * camera());
        assert_eq!(frustum.planes().len(), 6);
        assert_unit_planes(&frustum);
        let side = Aabb::new(Vec3::new(11.0, 1.0, -20.0), Vec3::new(12.0, 3.0, -10.0));
        let ahead = Aabb::new(Vec3::new(9.0, 1.0, -20.0), Vec3::new(12.0, 3.0, -10.0));
        let behind = Aabb::new(Vec3::new(-1.0, 1.0, 1.0), Vec3::new(1.0, 3.0, 2.0));
        assert!(!frustum.may_intersect_aabb(&side));
        assert!(frustum.may_intersect_aabb(&ahead), "straddles the right plane");
        assert!(!frustum.may_intersect_aabb(&behind), "behind the near plane");
    }

    #[test]
    fn box_100_km_down_the_view_is_visible() {
        let far = Aabb::new(Vec3::new(-5.0, -3.0, -100_010.0), Vec3::new(5.0, 7.0, -100_000.0));
        assert!(infinite_frustum().may_intersect_aabb(&far));
        let sphere = Sphere::new(Vec3::new(0.0, 2.0, -100_000.0), 1.0);
        assert!(infinite_frustum().may_intersect_sphere(&sphere));
    }

    #[test]
    fn box_straddling_a_side_plane_is_kept() {
        let frustum = infinite_frustum();
        // 70° vertical, 16:9: at 10 m depth the half width is about 12.5 m.
        let half_width = 10.0 * (35f32.to_radians().tan() * 16.0 / 9.0);
        let straddle = Aabb::new(Vec3::new(half_width - 0.5, 1.0, -11.0), Vec3::new(half_width + 40.0, 3.0, -9.0));
        let outside = Aabb::new(Vec3::new(half_width + 5.0, 1.0, -10.5), Vec3::new(half_width + 40.0, 3.0, -9.5));
        assert!(frustum.may_intersect_aabb(&straddle));
        assert!(!frustum.may_intersect_aabb(&outside));
    }

    #[test]
    fn near_plane_keeps_what_is_just_in_front_of_the_camera() {
        let frustum = infinite_frustum();
        // Just past the 0.1 m near plane, and a box crossing it.
        let close = Aabb::new(Vec3::new(-0.01, 1.99, -0.12), Vec3::new(0.01, 2.01, -0.11));
        let crossing = Aabb::new(Vec3::new(-0.5, 1.5, -0.5), Vec3::new(0.5, 2.5, 0.5));
        let behind = Aabb::new(Vec3::new(-0.5, 1.5, 0.5), Vec3::new(0.5, 2.5, 1.0));
        assert!(frustum.may_intersect_aabb(&close));
        assert!(frustum.may_intersect_aabb(&crossing));
        assert!(!frustum.may_intersect_aabb(&behind));
        assert!(frustum.may_intersect_sphere(&Sphere::new(Vec3::new(0.0, 2.0, -0.11), 0.001)));
    }

    #[test]
    fn non_finite_matrix_culls_nothing_and_says_so() {
        let mut matrix = infinite_frustum_matrix();
        matrix.x_axis.y = f32::NAN;
        let frustum = Frustum::from_view_projection(matrix);
        assert!(!frustum.is_finite());
        assert!(frustum.planes().is_empty());
        let behind = Aabb::new(Vec3::new(-0.5, 1.5, 0.5), Vec3::new(0.5, 2.5, 1.0));
        assert!(frustum.may_intersect_aabb(&behind));
        let overflow = Frustum::from_view_projection(Mat4::from_cols_array(&[f32::MAX; 16]));
        assert!(overflow.planes().iter().all(|plane| plane.is_finite()));
    }

    fn infinite_frustum_matrix() -> Mat4 {
        Mat4::perspective_infinite_reverse_rh(70f32.to_radians(), 16.0 / 9.0, 0.1) * camera()
    }

    #[test]
    fn non_finite_objects_are_kept() {
        let frustum = infinite_frustum();
        let nan_box = Aabb::new(Vec3::new(0.0, 0.0, 50.0), Vec3::new(f32::NAN, 1.0, 51.0));
        assert!(frustum.may_intersect_aabb(&nan_box));
        let inf_sphere = Sphere::new(Vec3::new(f32::NEG_INFINITY, 0.0, 10.0), 1.0);
        assert!(frustum.may_intersect_sphere(&inf_sphere));
    }
}
