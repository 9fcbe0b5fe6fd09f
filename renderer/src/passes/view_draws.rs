//! Split-screen drawing: a scene pass of a frame with several window views
//! ([`WindowViews`]) draws each view's run of the host list into the view's rectangle with
//! the view's view-projection, as the shadow atlas pass draws each shadow view into its tile.
//! The depth attachment is cleared once for the whole image: the rectangles do not overlap.
//! With GPU culling each view draws the early and late lists the object cull wrote for it
//! ([`draw_gpu_window_views`]).

use render_graph::{vk, ExecuteContext};

use super::draw::{draw_direct, frame_push_words, DrawFilter, DrawMode, INSTANCED_BIT};
use crate::scene::{DrawCommand, GpuScene, ViewList, WindowViews, DRAW_COMMAND_BYTES};

/// How one scene draw issues its commands, for [`draw_window_views`].
#[derive(Clone, Copy)]
pub(crate) struct SplitDraw {
    /// `draw_commands`.
    pub(crate) commands: vk::Buffer,
    pub(crate) mode: DrawMode,
    pub(crate) filter: DrawFilter,
    /// Whether the device has `multiDrawIndirect`.
    pub(crate) multi_draw: bool,
    /// Where each run's count lies as a u32, in run order ([`GpuScene::staged_run_counts`]).
    pub(crate) run_counts: Option<(vk::Buffer, u64)>,
}

/// The graph's [`WindowViews`] when it lists any (the Render stage lists them only for a frame
/// of several, a truth check one view at its place in the window) and the scene holds a host
/// list, or a GPU cull writes one list per view: then the scene passes draw view by view
/// ([`draw_window_views`], [`draw_gpu_window_views`]).
pub(crate) fn split_views<'frame>(context: &ExecuteContext<'frame>, scene: &GpuScene) -> Option<&'frame WindowViews> {
    let lists = scene.view_list(0).is_some() || scene.draws_gpu_list();
    context.param::<WindowViews>().filter(|views| !views.views().is_empty() && lists)
}

/// How a GPU-culled split frame's scene draw issues its commands, for
/// [`draw_gpu_window_views`].
#[derive(Clone, Copy)]
pub(crate) struct GpuSplitDraw {
    /// `draw_commands` and `draw_count` with their sizes in bytes.
    pub(crate) commands: (vk::Buffer, u64),
    pub(crate) counts: (vk::Buffer, u64),
    pub(crate) mode: DrawMode,
    pub(crate) filter: DrawFilter,
    pub(crate) multi_draw: bool,
    /// Commands the host's count draws of each list without a GPU count
    /// ([`DrawMode::Indirect`]: every command, unused ones zeroed).
    pub(crate) host_count: u32,
}

/// Draws every window view's lists the GPU's object cull wrote (view `list`'s early list
/// `2 list`, late list `2 list + 1`, each `room` commands from `list * room`, its count word
/// at `list` of `draw_count`) into its rectangle, each with its own view-projection pushed;
/// `phases` the lists drawn (0 early, 1 late). False, drawing nothing, when the lists have no
/// room for every view (the cull then culled the main view alone).
///
/// # Safety
/// The pass is recording inside its rendering scope with the scene pipeline bound, its
/// bindings set and `mesh_indices` bound as the index buffer; the mode's features were checked
/// when the pass was built.
pub(crate) unsafe fn draw_gpu_window_views(
    context: &mut ExecuteContext<'_>,
    views: &WindowViews,
    draw: GpuSplitDraw,
    phases: std::ops::Range<u32>,
) -> bool {
    let lists = (draw.counts.1 / 4) as u32;
    if lists < 2 * views.views().len() as u32 {
        return false;
    }
    let room = (draw.commands.1 / DRAW_COMMAND_BYTES) as u32 / lists;
    let stride = DRAW_COMMAND_BYTES as u32;
    for view in views.views() {
        if view.list as usize >= views.views().len() || !set_view_rect(context, view.rect) {
            continue;
        }
        let push = frame_push_words(context, &view.view_projection, draw.filter);
        context.push_constants(&push);
        if context.failed() {
            return true;
        }
        let (raw, command_buffer) = (context.device(), context.command_buffer());
        for phase in phases.clone() {
            let list = 2 * view.list + phase;
            let first = u64::from(list) * u64::from(room) * DRAW_COMMAND_BYTES;
            match draw.mode {
                DrawMode::IndirectCount => {
                    // SAFETY: the caller's contract; `room` commands from `first` lie in
                    // `draw_commands`, the list's count word in `draw_count` (both declared as
                    // indirect arguments).
                    unsafe {
                        raw.cmd_draw_indexed_indirect_count(
                            command_buffer,
                            draw.commands.0,
                            first,
                            draw.counts.0,
                            u64::from(list) * 4,
                            room,
                            stride,
                        )
                    };
                }
                DrawMode::Indirect => {
                    let count = draw.host_count.min(room);
                    if draw.multi_draw && count > 0 {
                        // SAFETY: as above; `count` commands from `first` fit in the list.
                        unsafe { raw.cmd_draw_indexed_indirect(command_buffer, draw.commands.0, first, count, stride) };
                    } else {
                        for index in 0..u64::from(count) {
                            // SAFETY: as above, one command at a time.
                            unsafe {
                                raw.cmd_draw_indexed_indirect(
                                    command_buffer,
                                    draw.commands.0,
                                    first + index * DRAW_COMMAND_BYTES,
                                    1,
                                    stride,
                                )
                            };
                        }
                    }
                }
                // A GPU cull's lists are never drawn directly.
                DrawMode::Direct => {}
            }
        }
    }
    true
}

/// Draws every window view's run of the host list into its rectangle, each with its own
/// view-projection pushed. In [`DrawMode::IndirectCount`] each run is a count draw whose count
/// is the run's staged word (`draw.run_counts`), like every other indirect draw of such a
/// frame: lavapipe (Mesa 22.3) keeps the count buffer of an earlier count draw of the command
/// buffer (the shadow atlas's lists) for a later plain indirect draw, which then drew a prefix
/// of the run. Without staged counts, or in [`DrawMode::Indirect`], the host's counts.
///
/// # Safety
/// The pass is recording inside its rendering scope with the scene pipeline bound, its
/// bindings set and `mesh_indices` bound as the index buffer; `draw.commands` holds the
/// scene's host commands and `draw.run_counts`, if any, this frame's run counts.
pub(crate) unsafe fn draw_window_views(
    context: &mut ExecuteContext<'_>,
    scene: &GpuScene,
    views: &WindowViews,
    draw: SplitDraw,
) {
    for view in views.views() {
        let Some(list) = scene.view_list(view.list as usize) else { continue };
        let range = list.first as usize..(list.first + list.count) as usize;
        let Some(draws) = scene.draw_commands().get(range) else { continue };
        if draws.is_empty() || !set_view_rect(context, view.rect) {
            continue;
        }
        let run = (draws, list.first, list.instanced);
        let count = draw.run_counts.map(|(counts, at)| (counts, at + 4 * u64::from(view.list)));
        // SAFETY: the caller's contract; the run's commands are the host's, uploaded into
        // `draw_commands` at their place, and its count word, if staged, at `count`.
        if !unsafe { draw_view_run(context, run, &view.view_projection, draw, count) } {
            return;
        }
    }
}

/// Draws one run of the host's commands with `view_projection` pushed, into the viewport and
/// scissor set now (a window view's rectangle, or an image view's whole image): `draws`, the
/// run's commands as the host holds them, lie in `draw.commands` from command `first`;
/// `instanced` when their instances are slots read from the bound instance buffer. False when
/// the frame failed (nothing more should be recorded).
///
/// In [`DrawMode::IndirectCount`] with `count` (the buffer and offset of a u32 holding the
/// run's length, staged by the caller) the run is a count draw, like every other indirect
/// draw of such a frame: lavapipe (Mesa 22.3) keeps the count buffer of the command buffer's
/// last count draw (the GPU cull's or the shadow atlas's lists) for a later plain indirect
/// draw, which then draws no more commands than that stale count (none at all after an empty
/// late shadow list). Without `count`, or in [`DrawMode::Indirect`], a plain indirect draw.
///
/// # Safety
/// As [`draw_window_views`]; `draws` were uploaded into `draw.commands` from command `first`;
/// `count`, if any, lies in a buffer with `INDIRECT_BUFFER` usage holding this frame's data.
pub(crate) unsafe fn draw_view_run(
    context: &mut ExecuteContext<'_>,
    (draws, first, instanced): (&[DrawCommand], u32, bool),
    view_projection: &[[f32; 4]; 4],
    draw: SplitDraw,
    count: Option<(vk::Buffer, u64)>,
) -> bool {
    let stride = DRAW_COMMAND_BYTES as u32;
    if draws.is_empty() {
        return true;
    }
    let list = ViewList { first, count: draws.len() as u32, instanced };
    let mut push = frame_push_words(context, view_projection, draw.filter);
    if list.instanced {
        push[16] |= INSTANCED_BIT;
    }
    context.push_constants(&push);
    if context.failed() {
        return false;
    }
    let (raw, command_buffer) = (context.device(), context.command_buffer());
    let first = u64::from(list.first) * DRAW_COMMAND_BYTES;
    match (draw.mode, count) {
        (DrawMode::Direct, _) => {
            // SAFETY: the caller's contract: a scene pipeline and the index buffer are bound.
            unsafe { draw_direct(context, draws) };
        }
        (DrawMode::IndirectCount, Some((counts, at))) => {
            // SAFETY: as below; the count word lies at `at` of `counts` (the caller's
            // contract), and the mode's features were checked with the pass.
            unsafe {
                raw.cmd_draw_indexed_indirect_count(
                    command_buffer,
                    draw.commands,
                    first,
                    counts,
                    at,
                    list.count,
                    stride,
                )
            };
        }
        (DrawMode::IndirectCount | DrawMode::Indirect, _) if draw.multi_draw => {
            // SAFETY: as above; the run's commands lie in `draw_commands` (the host
            // uploaded them there), and the mode's features were checked with the pass.
            unsafe { raw.cmd_draw_indexed_indirect(command_buffer, draw.commands, first, list.count, stride) };
        }
        (DrawMode::IndirectCount | DrawMode::Indirect, _) => {
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
    true
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
