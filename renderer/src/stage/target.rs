//! Where [`crate::stage::install_render`]'s frames go besides the graph's own `color` image: a
//! window's swapchain, a host copy for checks and PNGs. The Render-stage system calls the
//! target around every frame, so a game still installs rendering in one call.

use render_graph::RenderGraph;

/// Which frame a [`FrameTarget`] is called for, in both numberings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetFrame {
    /// The game frame drawn: its [`FrameTime::frame_index`](runtime::FrameTime::frame_index),
    /// the number [`crate::RenderReport::game_frame`], screenshots and captures give, which a
    /// game matches its answers with. Frames not drawn leave gaps in it.
    pub game: u64,
    /// Frames drawn before this one: a count without gaps, for what a target rotates per
    /// drawn frame (semaphores, staging slots).
    pub drawn: u64,
}

/// Hooks the Render-stage system calls on the graph it owns.
pub trait FrameTarget: Send {
    /// Adds passes once, when rendering is installed, after the engine's frame and the
    /// setup's own passes ([`crate::RenderSetup::passes`]): appended passes see the finished
    /// `color`; passes placed at an insertion point ([`crate::points`]) run inside the frame.
    fn add_passes(&mut self, graph: &mut RenderGraph) -> render_graph::Result<()>;

    /// Before a frame executes: imports what the frame writes (a swapchain image) and answers
    /// whether to draw it at all (`false` skips the frame: a minimised window, a frame nobody
    /// looks at).
    fn begin_frame(&mut self, graph: &mut RenderGraph, frame: TargetFrame) -> render_graph::Result<bool>;

    /// After the frame was submitted (and, with [`crate::stage::BitsReadback::Wait`], finished):
    /// presents, copies results out.
    fn end_frame(&mut self, graph: &mut RenderGraph, frame: TargetFrame) -> render_graph::Result<()>;

    /// The view-projection to draw with instead of the Visibility stage's view (column-major):
    /// a free camera looking at what a frozen culling camera kept. `None` draws the culled
    /// view.
    fn draw_view(&self) -> Option<[[f32; 4]; 4]> {
        None
    }

    /// Whether the image follows the [`ecs::Viewport`] the frame is culled for (a headless
    /// target) rather than an extent the target sets in [`FrameTarget::begin_frame`] (a
    /// swapchain's, which may differ from the window's size for a frame; following both would
    /// recompile the graph back and forth).
    fn follows_view(&self) -> bool {
        false
    }
}
