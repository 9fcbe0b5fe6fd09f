//! The view every pass can read: [`FrameView`], the frame's parameter of the render graph
//! ([`render_graph::RenderGraph::set_param`], set by the Render stage from the View stage's
//! resolved view), uploaded each frame into the uniform buffer [`VIEW`](crate::VIEW) by
//! [`ViewUploadPass`](crate::ViewUploadPass), with its GLSL twin in the engine's include
//! directory (`view.h`, [`shaders::ENGINE_INCLUDE_DIR`]).

use glam::{Mat4, Vec3};

/// The camera of a frame as passes see it, in one form from the View stage to the shaders:
/// the Render stage sets it as the render graph's parameter
/// ([`render_graph::RenderGraph::set_param`]); the culls make their
/// [`CullView`](crate::CullView)s of it ([`CullView::camera`](crate::CullView::camera),
/// [`CullView::cluster`](crate::CullView::cluster)), the draw passes push its
/// `view_projection`, and [`ViewUploadPass`](crate::ViewUploadPass) uploads it into the
/// [`VIEW`](crate::VIEW) uniform. A pass reads it with
/// `context.require_param::<FrameView>()`.
///
/// A std140 uniform block, GLSL twin `FrameView` in `shaders/glsl/engine/view.h` (the layout
/// is checked by `renderer/tests/shader_layouts.rs`). Matrices are column-major, glam's
/// conventions (right-handed, reversed-Z).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameView {
    /// World to view space.
    pub view: [[f32; 4]; 4],
    /// View to clip space.
    pub projection: [[f32; 4]; 4],
    /// World to clip space: what the scene is drawn with.
    pub view_projection: [[f32; 4]; 4],
    /// Clip to world space (a depth to a world position).
    pub inverse_view_projection: [[f32; 4]; 4],
    /// The eye in world space (w is 1).
    pub eye: [f32; 4],
    /// Width and height of the image in pixels, then their reciprocals: the graph's output
    /// extent, the size of the image drawn this frame (set by the Render stage before the
    /// frame runs and again at upload).
    pub viewport: [f32; 4],
    /// Distance to the near plane.
    pub near_plane: f32,
    /// Distance to the far plane (infinity for an infinite perspective).
    pub far_plane: f32,
    /// The render graph's frame number.
    pub frame_index: u32,
    /// Object slots in use (the scene's object count): slots past it are empty.
    pub object_count: u32,
    /// Last frame's `view` (this frame's in the first frame, after a cut, or for a host that
    /// never set it: see [`FrameView::set_previous`]).
    pub previous_view: [[f32; 4]; 4],
    /// Last frame's `view_projection` (as `previous_view`): motion vectors, reprojection of
    /// last frame's depth or colour.
    pub previous_view_projection: [[f32; 4]; 4],
    /// The planes of `view_projection`'s frustum in world space, `[nx, ny, nz, d]` with unit
    /// inward normals (a point `p` is inside a plane when `dot(n, p) + d >= 0`), in the CPU's
    /// order ([`culling::Frustum::from_view_projection`]: left, right, bottom, top, near, far);
    /// the places of planes a view does not have (an infinite far plane) hold `[0, 0, 0, 1]`,
    /// which every point passes.
    pub frustum_planes: [[f32; 4]; 6],
}

const _: () = assert!(size_of::<FrameView>() == 528, "six mat4, eight vec4 and four scalars, std140");

impl Default for FrameView {
    fn default() -> Self {
        FrameView::new(Mat4::IDENTITY, Mat4::IDENTITY, Vec3::ZERO, (1, 1), 0.1, f32::INFINITY)
    }
}

impl FrameView {
    /// The view of a camera: its matrices, eye, image size in pixels and planes. A
    /// projection that cannot be inverted (a NaN matrix) gives a zero inverse.
    pub fn new(view: Mat4, projection: Mat4, eye: Vec3, viewport: (u32, u32), near: f32, far: f32) -> FrameView {
        let (width, height) = (viewport.0.max(1) as f32, viewport.1.max(1) as f32);
        let mut frame_view = FrameView {
            view: view.to_cols_array_2d(),
            projection: projection.to_cols_array_2d(),
            view_projection: [[0.0; 4]; 4],
            inverse_view_projection: [[0.0; 4]; 4],
            eye: eye.extend(1.0).to_array(),
            viewport: [width, height, 1.0 / width, 1.0 / height],
            near_plane: near,
            far_plane: far,
            frame_index: 0,
            object_count: 0,
            previous_view: view.to_cols_array_2d(),
            previous_view_projection: [[0.0; 4]; 4],
            frustum_planes: [[0.0, 0.0, 0.0, 1.0]; 6],
        };
        frame_view.set_view_projection(projection * view);
        frame_view.previous_view_projection = frame_view.view_projection;
        frame_view
    }

    /// Takes `previous`'s `view` and `view_projection` as last frame's
    /// ([`FrameView::previous_view`], [`FrameView::previous_view_projection`]); the Render
    /// stage does so with the view of the last frame it drew.
    pub fn set_previous(&mut self, previous: &FrameView) {
        self.previous_view = previous.view;
        self.previous_view_projection = previous.view_projection;
    }

    /// A view of `view_projection` (world to clip) alone: identity view and projection, the
    /// eye at the origin (a test's camera, or a host that has only the matrix).
    pub fn from_view_projection(view_projection: Mat4) -> FrameView {
        let mut frame_view = FrameView::default();
        frame_view.set_view_projection(view_projection);
        frame_view
    }

    /// Sets the image's size in pixels (and their reciprocals): the Render stage sets the
    /// graph's output extent, the size of the image drawn this frame, right before the
    /// frame runs, so a pass reading the host's value never sees a stale window size.
    pub fn set_viewport(&mut self, (width, height): (u32, u32)) {
        let (width, height) = (width.max(1) as f32, height.max(1) as f32);
        self.viewport = [width, height, 1.0 / width, 1.0 / height];
    }

    /// What the scene is drawn and culled with: world to clip.
    pub fn view_projection(&self) -> Mat4 {
        Mat4::from_cols_array_2d(&self.view_projection)
    }

    /// Replaces what the scene is drawn with (a free camera's view of what another camera
    /// culled), its inverse and its frustum planes; the other fields stay the culling
    /// camera's.
    pub fn set_view_projection(&mut self, view_projection: Mat4) {
        let inverse = view_projection.inverse();
        self.view_projection = view_projection.to_cols_array_2d();
        self.inverse_view_projection =
            if inverse.is_finite() { inverse.to_cols_array_2d() } else { Mat4::ZERO.to_cols_array_2d() };
        let frustum = culling::Frustum::from_view_projection(view_projection);
        self.frustum_planes = [[0.0, 0.0, 0.0, 1.0]; 6];
        for (plane, found) in self.frustum_planes.iter_mut().zip(frustum.planes()) {
            *plane = found.to_array();
        }
    }

    /// The block's bytes, as the uniform buffer holds them.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: `FrameView` is `repr(C)` of f32 and u32 only, with no padding (528 bytes
        // of 4-byte fields), so every byte is initialised.
        unsafe { std::slice::from_raw_parts((self as *const FrameView).cast::<u8>(), size_of::<FrameView>()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inverse_takes_clip_space_back_to_the_world() {
        let view = Mat4::look_at_rh(Vec3::new(3.0, 4.0, 5.0), Vec3::ZERO, Vec3::Y);
        let projection = Mat4::perspective_infinite_reverse_rh(1.0, 1.5, 0.25);
        let frame_view = FrameView::new(view, projection, Vec3::new(3.0, 4.0, 5.0), (640, 360), 0.25, f32::INFINITY);
        let point = Vec3::new(0.5, -1.0, 0.25);
        let clip = Mat4::from_cols_array_2d(&frame_view.view_projection) * point.extend(1.0);
        let back = Mat4::from_cols_array_2d(&frame_view.inverse_view_projection) * clip;
        assert!((back.truncate() / back.w - point).length() < 1e-4);
        assert_eq!(frame_view.viewport, [640.0, 360.0, 1.0 / 640.0, 1.0 / 360.0]);
        assert_eq!(frame_view.as_bytes().len(), 528);
    }

    #[test]
    fn the_planes_are_the_cpu_frustums_and_the_previous_view_starts_as_this_one() {
        let eye = Vec3::new(3.0, 4.0, 5.0);
        let view = Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y);
        let projection = Mat4::perspective_infinite_reverse_rh(1.0, 1.5, 0.25);
        let mut frame_view = FrameView::new(view, projection, eye, (64, 32), 0.25, f32::INFINITY);
        let frustum = culling::Frustum::from_view_projection(projection * view);
        assert_eq!(frustum.planes().len(), 5, "an infinite far plane");
        for (plane, cpu) in frame_view.frustum_planes.iter().zip(frustum.planes()) {
            assert_eq!(*plane, cpu.to_array());
        }
        assert_eq!(frame_view.frustum_planes[5], [0.0, 0.0, 0.0, 1.0], "the far plane every point passes");
        let inside = |point: Vec3| {
            frame_view.frustum_planes.iter().all(|plane| Vec3::from_slice(&plane[..3]).dot(point) + plane[3] >= 0.0)
        };
        assert!(inside(Vec3::ZERO) && !inside(eye + (eye - Vec3::ZERO)), "the target in, behind the eye out");
        assert_eq!(frame_view.previous_view_projection, frame_view.view_projection);
        let moved = FrameView::new(
            Mat4::look_at_rh(Vec3::X, Vec3::ZERO, Vec3::Y),
            projection,
            Vec3::X,
            (64, 32),
            0.25,
            f32::INFINITY,
        );
        frame_view.set_previous(&moved);
        assert_eq!(
            (frame_view.previous_view, frame_view.previous_view_projection),
            (moved.view, moved.view_projection)
        );
    }

    #[test]
    fn a_nan_matrix_gives_a_zero_inverse_not_nan() {
        let mut frame_view = FrameView::default();
        frame_view.set_view_projection(Mat4::from_cols_array(&[f32::NAN; 16]));
        assert!(frame_view.inverse_view_projection.as_flattened().iter().all(|&value| value == 0.0));
    }
}
