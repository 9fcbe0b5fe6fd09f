//! Split-screen drawing: a scene pass of a frame with several window views
//! ([`WindowViews`]) draws each view's run of the host list into the view's rectangle with
//! the view's view-projection, as the shadow atlas pass draws each shadow view into its tile.
//! The depth attachment is cleared once for the whole image: the rectangles do not overlap.

use render_graph::{vk, ExecuteContext};

use super::draw::{draw_direct, frame_push_words, DrawFilter, DrawMode, INSTANCED_BIT};
use crate::scene::{GpuScene, WindowViews, DRAW_COMMAND_BYTES};

/// How one scene draw issues its commands, for [`draw_window_views`].
#[derive(Clone, Copy)]
pub(crate) struct SplitDraw {
    /// `draw_commands`.
    pub(crate) commands: vk::Buffer,
    pub(crate) mode: DrawMode,
    pub(crate) filter: DrawFilter,
    /// Whether the device has `multiDrawIndirect`.
    pub(crate) multi_draw: bool,
}

/// The graph's [`WindowViews`] when it lists any (the Render stage lists them only for a frame
/// of several, a truth check one view at its place in the window) and the scene holds a host
/// list: then the scene passes draw view by view ([`draw_window_views`]).
pub(crate) fn split_views<'frame>(context: &ExecuteContext<'frame>, scene: &GpuScene) -> Option<&'frame WindowViews> {
    context.param::<WindowViews>().filter(|views| !views.views().is_empty() && scene.view_list(0).is_some())
}

/// Draws every window view's run of the host list into its rectangle, each with its own
/// view-projection pushed; the commands are drawn with the host's counts (the GPU's count
/// word is the main view's alone).
///
/// # Safety
/// The pass is recording inside its rendering scope with the scene pipeline bound, its
/// bindings set and `mesh_indices` bound as the index buffer; `draw.commands` holds the
/// scene's host commands.
pub(crate) unsafe fn draw_window_views(
    context: &mut ExecuteContext<'_>,
    scene: &GpuScene,
    views: &WindowViews,
    draw: SplitDraw,
) {
    let host_draws = scene.draw_commands();
    let stride = DRAW_COMMAND_BYTES as u32;
    for view in views.views() {
        let Some(list) = scene.view_list(view.list as usize) else { continue };
        let range = list.first as usize..(list.first + list.count) as usize;
        let Some(draws) = host_draws.get(range) else { continue };
        if draws.is_empty() || !set_view_rect(context, view.rect) {
            continue;
        }
        let mut push = frame_push_words(context, &view.view_projection, draw.filter);
        if list.instanced {
            push[16] |= INSTANCED_BIT;
        }
        context.push_constants(&push);
        if context.failed() {
            return;
        }
        let (raw, command_buffer) = (context.device(), context.command_buffer());
        let first = u64::from(list.first) * DRAW_COMMAND_BYTES;
        match draw.mode {
            DrawMode::Direct => {
                // SAFETY: the caller's contract: a scene pipeline and the index buffer are bound.
                unsafe { draw_direct(context, draws) };
            }
            DrawMode::IndirectCount | DrawMode::Indirect if draw.multi_draw => {
                // SAFETY: as above; the run's commands lie in `draw_commands` (the host
                // uploaded them there), and the mode's features were checked with the pass.
                unsafe { raw.cmd_draw_indexed_indirect(command_buffer, draw.commands, first, list.count, stride) };
            }
            DrawMode::IndirectCount | DrawMode::Indirect => {
                for index in 0..u64::from(list.count) {
                    // SAFETY: as above, one command at a time without multiDrawIndirect.
                    unsafe {
                        raw.cmd_draw_indexed_indirect(
                            command_buffer,
                            draw.commands,
                            first + index * DRAW_COMMAND_BYTES,
                            1,
                            stride,
                        )
                    };
                }
            }
        }
    }
}

/// Sets the viewport and the scissor to `rect` (left, top, width, height) clipped to the
/// output; false, setting nothing, when nothing of it is left.
pub(crate) fn set_view_rect(context: &ExecuteContext<'_>, [x, y, width, height]: [u32; 4]) -> bool {
    let extent = context.output_extent();
    let width = width.min(extent.width.saturating_sub(x));
    let height = height.min(extent.height.saturating_sub(y));
    if width == 0 || height == 0 {
        return false;
    }
    let viewport = vk::Viewport {
        x: x as f32,
        y: y as f32,
        width: width as f32,
        height: height as f32,
        min_depth: 0.0,
        max_depth: 1.0,
    };
    let scissor =
        vk::Rect2D { offset: vk::Offset2D { x: x as i32, y: y as i32 }, extent: vk::Extent2D { width, height } };
    let (raw, command_buffer) = (context.device(), context.command_buffer());
    // SAFETY: recording inside a rendering scope; the scene pipelines take viewport and
    // scissor as dynamic state, and the rectangle lies inside the output.
    unsafe {
        raw.cmd_set_viewport(command_buffer, 0, &[viewport]);
        raw.cmd_set_scissor(command_buffer, 0, &[scissor]);
    }
    true
}
