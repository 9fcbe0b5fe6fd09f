//! Users' passes that run once per view. A pass added at an insertion point runs once a frame
//! (a [`TypedPass`]); wrapped in [`PerView`], a [`ViewPass`] runs once for every window view
//! the frame draws (each split-screen rectangle; the whole image in a frame of one view), in
//! draw order, and binds that view's block of the `view` uniform ([`PassView::uniform`]).
//! Its draws are clipped to the view's rectangle: viewport and scissor are set to it before
//! [`ViewPass::record_draw_view`].

use render_graph::{AccessedBuffer, Binding, ExecuteContext, PrepareContext, Registry, TypedPass};

use super::view::{VIEW_BLOCKS, VIEW_BLOCK_STRIDE};
use super::view_draws::set_view_rect;
use crate::scene::{FrameView, WindowViews};

/// One view of the frame as a per-view pass sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassView {
    /// Its place in draw order among the frame's window views (0 in a frame of one view).
    pub index: u32,
    /// Whether it is the frame's main view (the one the `view` uniform's block 0 and the
    /// [`FrameView`] parameter describe).
    pub main: bool,
    /// Its index among the views the GPU culls ([`WindowView::list`](crate::WindowView::list);
    /// 0 the main view, and 0 in a frame of one view): with GPU culling its bits are that
    /// view's words of [`VISIBILITY_BITS`](crate::VISIBILITY_BITS), from byte `list` times
    /// [`visibility_bits_bytes`](crate::visibility_bits_bytes) of the scene's capacity.
    pub list: u32,
    /// Its rectangle of the image in pixels: left, top, width, height (the whole image in a
    /// frame of one view).
    pub rect: [u32; 4],
    /// The byte offset of its block in the `view` uniform ([`crate::VIEW`]).
    pub uniform_offset: u64,
}

impl PassView {
    /// The binding of this view's block of the `view` uniform (a [`FrameView`] whose viewport
    /// is the view's rectangle), for a shader declaring `ENGINE_VIEW_BLOCK` (`view.h`).
    pub fn uniform(&self, view: impl AccessedBuffer) -> Binding {
        Binding::buffer_range(view, self.uniform_offset, size_of::<FrameView>() as u64)
    }
}

/// A user's pass that runs once per view: [`TypedPass`]'s methods, with `execute` and
/// `record_draw` called once per view of the frame. Add it wrapped in [`PerView`].
pub trait ViewPass: Send + 'static {
    /// What `register` declared and the other methods use.
    type Handles: Send + 'static;

    /// A name unique in the graph.
    fn name(&self) -> &str;

    /// Declares resources and accesses once (as [`TypedPass::register`]): the accesses cover
    /// every view's work.
    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles;

    /// Per-frame CPU work before recording, once a frame. Does nothing by default.
    fn prepare(&mut self, _handles: &Self::Handles, _context: &mut PrepareContext<'_>) {}

    /// Records commands outside the rendering scope for `view`. Does nothing by default.
    fn execute_view(&mut self, _handles: &Self::Handles, _view: &PassView, _context: &mut ExecuteContext<'_>) {}

    /// Records draws inside the rendering scope for `view`, viewport and scissor set to its
    /// rectangle. Does nothing by default.
    fn record_draw_view(&mut self, _handles: &Self::Handles, _view: &PassView, _context: &mut ExecuteContext<'_>) {}
}

/// A [`ViewPass`] as a pass of the graph that runs once per window view the frame draws, in
/// draw order (the whole image in a frame of one view), its draws clipped to the view's
/// rectangle; each run binds its view's block of the `view` uniform ([`PassView::uniform`]).
///
/// ```no_run
/// # use render_graph::{BufferRead, ExecuteContext, Registry, ShaderStage};
/// # use renderer::{PassView, PerView, ViewPass};
/// struct Tint;
///
/// impl ViewPass for Tint {
///     type Handles = BufferRead;
///     fn name(&self) -> &str {
///         "tint"
///     }
///     fn register(&mut self, registry: &mut Registry<'_>) -> BufferRead {
///         let view = registry.buffer(renderer::VIEW);
///         registry.read_uniform_buffer(view, ShaderStage::Fragment)
///     }
///     fn record_draw_view(&mut self, view: &BufferRead, at: &PassView, context: &mut ExecuteContext<'_>) {
///         let _binding = at.uniform(*view); // bound with the pass's pipeline, then a draw
///     }
/// }
/// # fn add(graph: &mut render_graph::RenderGraph) -> render_graph::Result<()> {
/// graph.add_typed_pass_at(renderer::points::AFTER_GEOMETRY, PerView::new(Tint))?;
/// # Ok(())
/// # }
/// ```
pub struct PerView<P: ViewPass> {
    pass: P,
    /// This frame's views, kept so a steady frame allocates nothing.
    views: Vec<PassView>,
}

impl<P: ViewPass> PerView<P> {
    /// Wraps `pass`.
    pub fn new(pass: P) -> PerView<P> {
        PerView { pass, views: Vec::with_capacity(VIEW_BLOCKS) }
    }

    /// The pass.
    pub fn pass(&self) -> &P {
        &self.pass
    }

    /// Lists the frame's views: the [`WindowViews`] parameter's when it lists several, else
    /// the whole image as the one view.
    fn list_views(&mut self, context: &ExecuteContext<'_>) {
        self.views.clear();
        let views = context.param::<WindowViews>().filter(|views| views.is_split());
        if let Some(views) = views {
            for (index, view) in views.views().iter().enumerate().take(VIEW_BLOCKS - 1) {
                let main = index == views.main();
                let uniform_offset = VIEW_BLOCK_STRIDE * (1 + index as u64);
                let list = view.list;
                self.views.push(PassView { index: index as u32, main, list, rect: view.rect, uniform_offset });
            }
        } else {
            let extent = context.output_extent();
            let rect = [0, 0, extent.width, extent.height];
            self.views.push(PassView { index: 0, main: true, list: 0, rect, uniform_offset: VIEW_BLOCK_STRIDE });
        }
    }
}

impl<P: ViewPass> TypedPass for PerView<P> {
    type Handles = P::Handles;

    fn name(&self) -> &str {
        self.pass.name()
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> P::Handles {
        self.pass.register(registry)
    }

    fn prepare(&mut self, handles: &P::Handles, context: &mut PrepareContext<'_>) {
        self.pass.prepare(handles, context);
    }

    fn execute(&mut self, handles: &P::Handles, context: &mut ExecuteContext<'_>) {
        self.list_views(context);
        for view in &self.views {
            self.pass.execute_view(handles, view, context);
            if context.failed() {
                return;
            }
        }
    }

    fn record_draw(&mut self, handles: &P::Handles, context: &mut ExecuteContext<'_>) {
        self.list_views(context);
        for view in &self.views {
            if !set_view_rect(context, view.rect) {
                continue;
            }
            self.pass.record_draw_view(handles, view, context);
            if context.failed() {
                return;
            }
        }
    }
}
