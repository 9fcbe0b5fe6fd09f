//! The window views of a frame: split-screen. Every view drawn into the window gets its own
//! pixel rectangle, its own view-projection and its own run of the host's draw commands; the
//! Render stage's extract lists them ([`WindowViews`], a graph parameter) beside the runs the
//! scene holds ([`GpuScene::push_view_list`](crate::GpuScene::push_view_list)), and the depth
//! prepass and the geometry pass draw each run into its rectangle, as the shadow atlas pass
//! draws each shadow view into its tile.
//!
//! A frame with one window view (or none listed) draws as a frame always has: the whole image
//! with the [`FrameView`](crate::FrameView) parameter's view-projection and the whole list.

use runtime::hecs::Entity;

use crate::scene::FrameView;

/// Most window views one frame draws: the host lists of the draw commands and instances have
/// room for this many views' lists (the buffers are sized for it). Views past it are not drawn
/// (the Render stage says so once).
pub const MAX_WINDOW_VIEWS: usize = 4;

/// One view drawn into the window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowView {
    /// World to clip space of this view's camera (column-major, reversed-Z).
    pub view_projection: [[f32; 4]; 4],
    /// Its rectangle of the image in pixels: left, top, width, height.
    pub rect: [u32; 4],
    /// The run of the host list it draws: its index in
    /// [`GpuScene::view_lists`](crate::GpuScene::view_lists). With GPU culling, its index among
    /// the views the object cull culls (0 the main view), whose lists are `2 list` (early) and
    /// `2 list + 1` (late) of `draw_commands`.
    pub list: u32,
    /// With GPU culling, the view's side of the level-of-detail rule and its eye (its answer's
    /// [`ViewVisibility::lod_error_view`](culling::ViewVisibility::lod_error_view)); `None`:
    /// the records' levels are drawn.
    pub lod: Option<(culling::LodErrorView, glam::Vec3)>,
    /// With GPU culling, another view's side of the distance rule (its answer's
    /// [`ViewVisibility::lod_distance_view`](culling::ViewVisibility::lod_distance_view) and
    /// the global bias): the cull picks that view's levels of distance chains; `None` (the
    /// main view) draws the records' levels.
    pub lod_distance: Option<crate::DistanceLod>,
    /// The camera it is seen through (`None`: the host's free view): the view's identity
    /// from frame to frame, which last frame's matrices follow ([`WindowViews::follow`]).
    pub camera: Option<Entity>,
}

/// A graph parameter: the frame's window views in draw order (split-screen), each drawing
/// its run of the scene's host list ([`WindowView::list`]; run 0 is the whole list while the
/// scene holds one) into its rectangle with its own view-projection. Empty, the passes draw
/// as a frame of one view does: the whole image with the [`FrameView`](crate::FrameView)'s
/// view-projection and the whole list. The Render stage lists views only for a frame of
/// several; the truth checks list one, to draw a view's reference where the frame drew it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WindowViews {
    views: Vec<WindowView>,
    /// Each view's block of the `view` uniform (its camera, its rectangle's size as the
    /// viewport), in the order of `views`.
    uniforms: Vec<FrameView>,
    /// The index of the main view (the one [`FrameView`](crate::FrameView) describes).
    main: usize,
}

impl WindowViews {
    /// The views, in draw order.
    #[inline]
    pub fn views(&self) -> &[WindowView] {
        &self.views
    }

    /// The main view's index among [`WindowViews::views`].
    #[inline]
    pub fn main(&self) -> usize {
        self.main
    }

    /// Whether the frame draws several views (the passes then draw view by view).
    #[inline]
    pub fn is_split(&self) -> bool {
        self.views.len() > 1
    }

    /// Each view's block of the `view` uniform, in the order of [`WindowViews::views`]: its
    /// camera as a [`FrameView`] whose viewport is the view's rectangle (what a per-view pass,
    /// [`PerView`](crate::PerView), reads).
    #[inline]
    pub fn uniforms(&self) -> &[FrameView] {
        &self.uniforms
    }

    /// The blocks of [`WindowViews::uniforms`] to change in place (the Render stage sets
    /// their previous matrices with [`WindowViews::follow`] before the frame runs).
    #[inline]
    pub fn uniforms_mut(&mut self) -> &mut [FrameView] {
        &mut self.uniforms
    }

    /// Gives each view's block last frame's matrices of the view of the same camera in
    /// `last` (what [`WindowViews::remember`] kept of the last frame drawn), whatever its
    /// place then: a camera added, removed or reordered never hands its history to another.
    /// A view whose camera was not drawn last frame keeps its own (no motion, as after a cut).
    pub fn follow(&mut self, last: &[(Option<Entity>, FrameView)]) {
        for (view, uniform) in self.views.iter().zip(&mut self.uniforms) {
            if let Some((_, previous)) = last.iter().find(|(camera, _)| *camera == view.camera) {
                uniform.set_previous(previous);
            }
        }
    }

    /// Writes each view's camera and block into `out` (cleared first), for the next frame's
    /// [`WindowViews::follow`].
    pub fn remember(&self, out: &mut Vec<(Option<Entity>, FrameView)>) {
        out.clear();
        out.extend(self.views.iter().map(|view| view.camera).zip(self.uniforms.iter().copied()));
    }

    /// Forgets the views (a frame of one view), keeping the room.
    pub fn clear(&mut self) {
        self.views.clear();
        self.uniforms.clear();
        self.main = 0;
    }

    /// Appends a view with its camera's block of the `view` uniform (`uniform`, whose
    /// viewport is set here to the view's rectangle); `main` marks the main view.
    pub fn push(&mut self, view: WindowView, mut uniform: FrameView, main: bool) {
        if main {
            self.main = self.views.len();
        }
        uniform.set_viewport((view.rect[2], view.rect[3]));
        self.views.push(view);
        self.uniforms.push(uniform);
    }
}

/// One view's run of the host's draw commands (see
/// [`GpuScene::view_lists`](crate::GpuScene::view_lists)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewList {
    /// First command of the run in `draw_commands`.
    pub first: u32,
    /// Commands in the run.
    pub count: u32,
    /// Whether the run's commands are instanced (slots read from `draw_instances`).
    pub instanced: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Mat4, Vec3};

    /// A view through `camera` whose block looks from `eye`.
    fn view_from(views: &mut WindowViews, camera: Option<Entity>, eye: Vec3, main: bool) {
        let view = Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y);
        let projection = Mat4::perspective_infinite_reverse_rh(1.0, 1.0, 0.1);
        let uniform = FrameView::new(view, projection, eye, (64, 64), 0.1, f32::INFINITY);
        let place = WindowView {
            view_projection: uniform.view_projection,
            rect: [0, 0, 64, 64],
            list: 0,
            lod: None,
            lod_distance: None,
            camera,
        };
        views.push(place, uniform, main);
    }

    #[test]
    fn last_frames_matrices_follow_the_camera_not_the_place() {
        let mut world = runtime::hecs::World::new();
        let [first, second, added] = [(), (), ()].map(|()| world.spawn(()));
        let mut last = WindowViews::default();
        view_from(&mut last, Some(first), Vec3::new(0.0, 0.0, 5.0), true);
        view_from(&mut last, Some(second), Vec3::new(0.0, 0.0, -5.0), false);
        let mut kept = Vec::new();
        last.remember(&mut kept);
        // Reordered, the second camera gone and another added before the first.
        let mut now = WindowViews::default();
        view_from(&mut now, Some(added), Vec3::new(5.0, 0.0, 0.0), false);
        view_from(&mut now, Some(first), Vec3::new(0.0, 1.0, 5.0), true);
        now.follow(&kept);
        let [added_block, first_block] = [now.uniforms()[0], now.uniforms()[1]];
        assert_eq!(first_block.previous_view_projection, last.uniforms()[0].view_projection, "its own history");
        assert_eq!(first_block.previous_view, last.uniforms()[0].view);
        assert_ne!(first_block.previous_view_projection, first_block.view_projection, "it moved");
        // The added camera has no history: last frame's matrices are its own, never the
        // second camera's that stood at its place.
        assert_eq!(added_block.previous_view_projection, added_block.view_projection);
        assert_eq!(added_block.previous_view, added_block.view);
    }
}
