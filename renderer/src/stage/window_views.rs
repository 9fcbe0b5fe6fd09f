//! The extract of a split-screen frame: every view of the frame's [`ResolvedViews`] drawn
//! into the window gets its rectangle, its view-projection and its run of the host list (its
//! own answer, [`Visibility::for_view`]), listed in the graph's [`WindowViews`] parameter.
//!
//! With GPU culling the GPU culls the main view alone (per-view GPU culling does not exist
//! yet): a frame of several window views then draws the main view as a frame of one view
//! does, and says once that the others are not drawn, rather than drawing them with lists
//! the GPU did not cull for them.

use culling::Visibility;
use ecs::{ResolvedViews, ViewTarget, Viewport};

use crate::scene::{FrameView, GpuScene, WindowView, WindowViews};

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
}

/// Fills `out` with the frame's window views in render order, appending each other view's
/// list to `scene` (whose host list is the main view's already). Returns the window's extent
/// when the frame draws several views (the image is the whole window); `None`, `out` empty,
/// for a frame drawn as one view.
pub(super) fn list_window_views(
    inputs: SplitInputs<'_>,
    scene: &mut GpuScene,
    out: &mut WindowViews,
    warned: &mut SplitWarnings,
) -> Option<(u32, u32)> {
    out.clear();
    let views = inputs.views?;
    let is_window = |view: &&ecs::FrameView| matches!(view.target, ViewTarget::Window(_));
    if views.views().iter().filter(is_window).count() < 2 {
        return None;
    }
    if inputs.on_device {
        if !warned.gpu_culled {
            warned.gpu_culled = true;
            log::warn!(
                "split-screen: GPU culling culls the main view alone; the frame's other window views are not drawn \
                 (CPU culling draws them all)"
            );
        }
        return None;
    }
    let window = inputs.window.filter(|window| window.width > 0 && window.height > 0)?;
    let mut has_main = false;
    for view in views.views().iter().filter(is_window) {
        let ViewTarget::Window(rect) = &view.target else { continue };
        let Some(answer) = inputs.visibility.for_view(view.id) else { continue };
        let (list, view_projection) = if answer.is_main() {
            (0, inputs.main.view_projection)
        } else {
            match scene.push_view_list(answer.visible(), |index| answer.draw(index).0) {
                Ok(list) => (list as u32, answer.view().view_projection.to_cols_array_2d()),
                Err(error) => {
                    if !warned.refused {
                        warned.refused = true;
                        log::warn!("split-screen: window view {} is not drawn: {error}", view.id.0);
                    }
                    continue;
                }
            }
        };
        has_main |= answer.is_main();
        let rect = [rect.x, rect.y, rect.width, rect.height];
        out.push(WindowView { view_projection, rect, list }, answer.is_main());
    }
    if !has_main || !out.is_split() || scene.view_lists().len() < 2 {
        out.clear();
        return None;
    }
    Some((window.width, window.height))
}
