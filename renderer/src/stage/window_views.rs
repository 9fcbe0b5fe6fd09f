//! The extract of a split-screen frame: every view of the frame's [`ResolvedViews`] drawn
//! into the window gets its rectangle, its view-projection and its run of the host list (its
//! own answer, [`Visibility::for_view`]), listed in the graph's [`WindowViews`] parameter.
//!
//! With GPU culling the object cull culls every window view in one dispatch (each its own
//! two-phase occlusion against its rectangle of the depth pyramid, its own bits, lists and
//! levels of detail): the views are numbered for it (the main view 0) and carry their
//! level-of-detail views; the scene's lists, counts and bits grow to hold them once.

use culling::Visibility;
use ecs::{ResolvedViews, ViewTarget, Viewport};

use crate::scene::{FrameView, GpuScene, WindowView, WindowViews, MAX_WINDOW_VIEWS};
use crate::DistanceLod;

/// What the extract has said once about window views it does not draw.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SplitWarnings {
    gpu_culled: bool,
    refused: bool,
}

/// The frame's views and the window they share, as the extract reads them.
#[derive(Clone, Copy)]
pub(super) struct SplitInputs<'a> {
    pub(super) views: Option<&'a ResolvedViews>,
    pub(super) window: Option<Viewport>,
    pub(super) visibility: &'a Visibility,
    /// The main view as the frame draws it (a target may have replaced its matrix).
    pub(super) main: &'a FrameView,
    pub(super) on_device: bool,
    /// The global level-of-detail bias the Visibility stage picked with.
    pub(super) lod_bias: f32,
}

/// Fills `out` with the frame's window views in render order, appending each other view's
/// list to `scene` (whose host list is the main view's already), or, with GPU culling,
/// numbering them for the object cull (the main view 0, the others from 1 in render order,
/// with their levels-of-detail views) and making room for them in the scene
/// (`room_grew` set when it grew: the graph must compile again). Returns the window's extent
/// when the frame draws several views (the image is the whole window); `None`, `out` empty,
/// for a frame drawn as one view.
pub(super) fn list_window_views(
    inputs: SplitInputs<'_>,
    scene: &mut GpuScene,
    out: &mut WindowViews,
    warned: &mut SplitWarnings,
    room_grew: &mut bool,
) -> Option<(u32, u32)> {
    out.clear();
    let views = inputs.views?;
    let is_window = |view: &&ecs::FrameView| matches!(view.target, ViewTarget::Window(_));
    if views.views().iter().filter(is_window).count() < 2 {
        return None;
    }
    if inputs.on_device && !scene.draws_gpu_list() {
        if !warned.gpu_culled {
            warned.gpu_culled = true;
            log::warn!(
                "split-screen: this GPU-culled graph draws the main view alone; the other window views are not drawn"
            );
        }
        return None;
    }
    let window = inputs.window.filter(|window| window.width > 0 && window.height > 0)?;
    let mut has_main = false;
    // With GPU culling the views are the cull's, numbered in render order after the main one.
    let mut culled = 1;
    for view in views.views().iter().filter(is_window) {
        let ViewTarget::Window(rect) = &view.target else { continue };
        let Some(answer) = inputs.visibility.for_view(view.id) else { continue };
        let resolved = answer.view();
        let uniform = if answer.is_main() {
            *inputs.main
        } else {
            let size = (rect.width, rect.height);
            FrameView::new(resolved.view, resolved.projection, resolved.position, size, resolved.near, resolved.far)
        };
        let (list, view_projection) = if answer.is_main() {
            (0, inputs.main.view_projection)
        } else if inputs.on_device {
            if culled >= MAX_WINDOW_VIEWS as u32 {
                warn_refused(warned, view.id, "more window views than GPU culling has room for");
                continue;
            }
            culled += 1;
            (culled - 1, answer.view().view_projection.to_cols_array_2d())
        } else {
            match scene.push_view_list(answer.visible(), |index| answer.draw(index).0) {
                Ok(list) => (list as u32, answer.view().view_projection.to_cols_array_2d()),
                Err(error) => {
                    warn_refused(warned, view.id, &error.to_string());
                    continue;
                }
            }
        };
        has_main |= answer.is_main();
        let rect = [rect.x, rect.y, rect.width, rect.height];
        let lod = if inputs.on_device { answer.lod_error_view() } else { None };
        let lod_distance = answer.lod_distance_view().filter(|_| inputs.on_device);
        let lod_distance = lod_distance.map(|(eye, scale)| DistanceLod { eye, scale, bias: inputs.lod_bias });
        let camera = view.camera();
        let window_view = WindowView { view_projection, rect, list, lod, lod_distance, camera };
        out.push(window_view, uniform, answer.is_main());
    }
    let lists = if inputs.on_device { culled as usize } else { scene.view_lists().len() };
    if !has_main || !out.is_split() || lists < 2 {
        out.clear();
        return None;
    }
    if inputs.on_device && scene.reserve_gpu_views(culled) {
        *room_grew = true;
    }
    Some((window.width, window.height))
}

/// Says once that window view `id` is not drawn, and why.
fn warn_refused(warned: &mut SplitWarnings, id: ecs::ViewId, reason: &str) {
    if !warned.refused {
        warned.refused = true;
        log::warn!("split-screen: window view {} is not drawn: {reason}", id.0);
    }
}
