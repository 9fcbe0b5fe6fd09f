//! The window views of a frame: split-screen. Every view drawn into the window gets its own
//! pixel rectangle, its own view-projection and its own run of the host's draw commands; the
//! Render stage's extract lists them ([`WindowViews`], a graph parameter) beside the runs the
//! scene holds ([`GpuScene::push_view_list`](crate::GpuScene::push_view_list)), and the depth
//! prepass and the geometry pass draw each run into its rectangle, as the shadow atlas pass
//! draws each shadow view into its tile.
//!
//! A frame with one window view (or none listed) draws as a frame always has: the whole image
//! with the [`FrameView`](crate::FrameView) parameter's view-projection and the whole list.

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
    /// their previous matrices before the frame runs).
    #[inline]
    pub fn uniforms_mut(&mut self) -> &mut [FrameView] {
        &mut self.uniforms
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
