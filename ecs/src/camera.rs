//! Cameras: projections (reversed-Z throughout) and the viewport they project onto.

use glam::Mat4;

/// Near plane used when a camera's own is not a positive finite number.
const FALLBACK_NEAR: f32 = 0.1;
/// Vertical field of view used when a camera's own is unusable (60 degrees).
const FALLBACK_FOV_Y: f32 = std::f32::consts::FRAC_PI_3;

/// How a camera projects. Every variant is reversed-Z: the near plane maps to depth 1 and the
/// far plane (or infinity) to depth 0, for a depth test of GREATER on a D32 buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Projection {
    /// Perspective with no far plane (the default): `Mat4::perspective_infinite_reverse_rh`.
    /// Frustum extraction yields five planes.
    PerspectiveInfiniteReverse {
        /// Vertical field of view, radians, in `(0, pi)`.
        fov_y_radians: f32,
        /// Distance to the near plane, positive.
        near: f32,
    },
    /// Perspective with a far plane, reversed-Z.
    PerspectiveReverse {
        /// Vertical field of view, radians, in `(0, pi)`.
        fov_y_radians: f32,
        /// Distance to the near plane, positive.
        near: f32,
        /// Distance to the far plane, greater than `near`.
        far: f32,
    },
    /// Orthographic, reversed-Z, centred on the view axis.
    Orthographic {
        /// Height of the view volume in world units; its width is `height * aspect`.
        height: f32,
        /// Distance to the near plane (may be zero or negative).
        near: f32,
        /// Distance to the far plane, greater than `near`.
        far: f32,
    },
}

impl Default for Projection {
    fn default() -> Self {
        Projection::PerspectiveInfiniteReverse { fov_y_radians: FALLBACK_FOV_Y, near: FALLBACK_NEAR }
    }
}

/// Which family a projection belongs to, for readers that only need to know that (the frustum
/// has 5 planes for `PerspectiveInfinite`, 6 otherwise; LOD keeps the reference scale for an
/// orthographic view).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProjectionKind {
    /// Reversed-Z perspective with no far plane.
    PerspectiveInfinite,
    /// Reversed-Z perspective with a far plane.
    PerspectiveFinite,
    /// Reversed-Z orthographic.
    Orthographic,
}

impl Projection {
    /// The family of this projection.
    pub const fn kind(&self) -> ProjectionKind {
        match self {
            Projection::PerspectiveInfiniteReverse { .. } => ProjectionKind::PerspectiveInfinite,
            Projection::PerspectiveReverse { .. } => ProjectionKind::PerspectiveFinite,
            Projection::Orthographic { .. } => ProjectionKind::Orthographic,
        }
    }

    /// The projection matrix for a viewport of `aspect` (width / height).
    ///
    /// Bad input never gives NaN: an aspect that is not a positive finite number becomes 1, a
    /// field of view outside `(0, pi)` becomes 60 degrees, a near plane that is not positive
    /// becomes 0.1, and a far plane not beyond the near one moves just beyond it.
    ///
    /// ```
    /// use ecs::Projection;
    /// use glam::Vec4;
    /// let projection = Projection::default().matrix(16.0 / 9.0);
    /// // Reversed-Z: a point on the near plane lands at depth 1.
    /// let clip = projection * Vec4::new(0.0, 0.0, -0.1, 1.0);
    /// assert!((clip.z / clip.w - 1.0).abs() < 1e-6);
    /// assert!(Projection::default().matrix(f32::NAN).is_finite());
    /// ```
    pub fn matrix(&self, aspect: f32) -> Mat4 {
        let (near, far) = self.planes();
        let aspect = if aspect.is_finite() && aspect > 0.0 { aspect } else { 1.0 };
        match *self {
            Projection::PerspectiveInfiniteReverse { fov_y_radians, .. } => {
                Mat4::perspective_infinite_reverse_rh(sane_fov(fov_y_radians), aspect, near)
            }
            Projection::PerspectiveReverse { fov_y_radians, .. } => {
                // Swapping near and far in the forward-Z matrix gives reversed-Z.
                Mat4::perspective_rh(sane_fov(fov_y_radians), aspect, far, near)
            }
            Projection::Orthographic { height, .. } => {
                let half_height = if height.is_finite() && height != 0.0 { height.abs() * 0.5 } else { 1.0 };
                let half_width = half_height * aspect;
                // Swapping near and far gives reversed-Z: near -> 1, far -> 0.
                Mat4::orthographic_rh(-half_width, half_width, -half_height, half_height, far, near)
            }
        }
    }
}

impl Projection {
    /// The distances to the near and far planes the matrix is built with, after the
    /// corrections [`Projection::matrix`] makes to bad values; the far plane of an infinite
    /// perspective is `f32::INFINITY`.
    ///
    /// ```
    /// use ecs::Projection;
    /// let (near, far) = Projection::PerspectiveInfiniteReverse { fov_y_radians: 1.0, near: 0.5 }.planes();
    /// assert_eq!((near, far), (0.5, f32::INFINITY));
    /// assert_eq!(Projection::PerspectiveReverse { fov_y_radians: 1.0, near: -1.0, far: 50.0 }.planes(), (0.1, 50.0));
    /// ```
    pub fn planes(&self) -> (f32, f32) {
        match *self {
            Projection::PerspectiveInfiniteReverse { near, .. } => (sane_near(near), f32::INFINITY),
            Projection::PerspectiveReverse { near, far, .. } => {
                let near = sane_near(near);
                (near, sane_far(near, far))
            }
            Projection::Orthographic { near, far, .. } => {
                let near = if near.is_finite() { near } else { 0.0 };
                (near, sane_far(near, far))
            }
        }
    }
}

fn sane_fov(fov_y_radians: f32) -> f32 {
    if fov_y_radians.is_finite() && fov_y_radians > 0.0 && fov_y_radians < std::f32::consts::PI {
        fov_y_radians
    } else {
        FALLBACK_FOV_Y
    }
}

fn sane_near(near: f32) -> f32 {
    if near.is_finite() && near > 0.0 {
        near
    } else {
        FALLBACK_NEAR
    }
}

fn sane_far(near: f32, far: f32) -> f32 {
    let least = near + near.abs().max(1.0) * 1.0e-3;
    if far.is_finite() && far > least {
        far
    } else {
        least.max(near + 1.0)
    }
}

/// A scene camera.
///
/// The camera's pose is its entity's [`WorldTransform`](crate::WorldTransform) (so a camera
/// parented to a rig sees from where the rig puts it), or its [`Transform`](crate::Transform)
/// when it has no world transform yet. It looks down its local -Z axis with +Y up. Scale in
/// the pose is ignored.
///
/// **Slot**: among active cameras the one with the lowest `(order, entity id)` is chosen when
/// the view resolver has to pick one; a chosen camera is then held (see
/// [`CameraSelection`](crate::CameraSelection)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// How it projects.
    pub projection: Projection,
    /// Whether it may be picked as the scene's camera. An inactive camera can still be
    /// looked through by a host's [`HostView::Through`](crate::HostView::Through).
    pub active: bool,
    /// Priority among active cameras: lower is preferred; ties go to the lower entity id.
    pub order: i32,
}

impl Default for Camera {
    fn default() -> Self {
        Camera { projection: Projection::default(), active: true, order: 0 }
    }
}

impl Camera {
    /// An active camera with `projection`, order 0.
    pub const fn new(projection: Projection) -> Camera {
        Camera { projection, active: true, order: 0 }
    }

    /// The projection matrix for a viewport of `aspect`; see [`Projection::matrix`].
    pub fn projection_matrix(&self, aspect: f32) -> Mat4 {
        self.projection.matrix(aspect)
    }
}

/// A camera's own image size: the view through this camera is projected, culled (screen-size
/// threshold, the 0x0 rule of [`Viewport`]) and published in
/// [`ResolvedView::viewport`](crate::ResolvedView) with it instead of the global [`Viewport`]
/// resource, which stays the default for cameras without one (and for a host's free view).
///
/// ```
/// use ecs::{scene, Camera, CameraViewport, FrameContextExt, Transform, Viewport};
/// let mut app = runtime::App::new();
/// ecs::install(&mut app);
/// let camera = scene::spawn_camera(app.world_mut(), Camera::default(), Transform::IDENTITY);
/// app.world_mut().insert_one(camera, CameraViewport(Viewport { width: 256, height: 128 })).unwrap();
/// let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
/// let record = seen.clone();
/// app.add_system(
///     runtime::Stage::Visibility,
///     runtime::System::new("look", move |ctx| {
///         *record.lock().unwrap() = ctx.frame_value::<ecs::ResolvedView>().map(|view| view.viewport);
///     })
///     .reads_frame::<ecs::ResolvedView>(),
/// );
/// app.run_frame();
/// assert_eq!(*seen.lock().unwrap(), Some(Viewport { width: 256, height: 128 }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CameraViewport(pub Viewport);

/// Size of the image the view renders into, in pixels. A resource: the default for every
/// camera without a [`CameraViewport`].
///
/// A zero width or height (a minimised window) means "nothing is rendered, culling unchanged":
/// the Visibility stage keeps its last answer and the `Culled`/`Occluded` tags as they were
/// until the viewport has an area again. [`Viewport::aspect`] still falls back to 1, so a view
/// resolved meanwhile has a finite projection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Viewport {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl Default for Viewport {
    fn default() -> Self {
        Viewport { width: 1280, height: 720 }
    }
}

impl Viewport {
    /// A viewport of `width` x `height` pixels.
    pub const fn new(width: u32, height: u32) -> Viewport {
        Viewport { width, height }
    }

    /// Width over height, or 1 when either is zero.
    pub fn aspect(&self) -> f32 {
        if self.width == 0 || self.height == 0 {
            1.0
        } else {
            self.width as f32 / self.height as f32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec4;

    fn depth(projection: Mat4, distance: f32) -> f32 {
        let clip = projection * Vec4::new(0.0, 0.0, -distance, 1.0);
        clip.z / clip.w
    }

    #[test]
    fn every_projection_is_reversed_z() {
        let finite = Projection::PerspectiveReverse { fov_y_radians: 1.0, near: 0.5, far: 100.0 }.matrix(1.5);
        assert!((depth(finite, 0.5) - 1.0).abs() < 1e-5, "near must map to 1");
        assert!(depth(finite, 100.0).abs() < 1e-5, "far must map to 0");
        let ortho = Projection::Orthographic { height: 10.0, near: 0.0, far: 50.0 }.matrix(2.0);
        assert!((depth(ortho, 0.0) - 1.0).abs() < 1e-5, "ortho near must map to 1");
        assert!(depth(ortho, 50.0).abs() < 1e-5, "ortho far must map to 0");
        let infinite = Projection::default().matrix(1.0);
        assert!(depth(infinite, 1.0e9) < 1e-6, "infinity tends to 0");
    }

    #[test]
    fn bad_parameters_give_finite_matrices() {
        let bad = [
            Projection::PerspectiveInfiniteReverse { fov_y_radians: f32::NAN, near: -1.0 },
            Projection::PerspectiveReverse { fov_y_radians: 4.0, near: 0.0, far: 0.0 },
            Projection::Orthographic { height: 0.0, near: f32::INFINITY, far: f32::NAN },
        ];
        for projection in bad {
            for aspect in [0.0, -1.0, f32::NAN, f32::INFINITY, 1.0] {
                assert!(projection.matrix(aspect).is_finite(), "{projection:?} at aspect {aspect} must stay finite");
            }
        }
    }

    #[test]
    fn zero_viewport_has_a_safe_aspect() {
        assert_eq!(Viewport::new(0, 720).aspect(), 1.0);
        assert_eq!(Viewport::new(1280, 0).aspect(), 1.0);
        assert_eq!(Viewport::new(200, 100).aspect(), 2.0);
    }
}
