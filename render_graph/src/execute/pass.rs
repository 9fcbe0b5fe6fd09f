//! The pass trait: Register, Prepare, Execute and the optional RecordDraw.

use super::execute_context::ExecuteContext;
use super::prepare_context::PrepareContext;
use crate::compile::Registry;

/// One node of the render graph, as the graph runs it: the untyped form of [`TypedPass`],
/// which is how passes are written (a [`TypedPass`] runs as a `Pass` through [`Typed`]).
/// Implement `Pass` itself only for a pass that really needs the untyped form (one that
/// keeps no handles, say, or a test of the trait).
///
/// Passes are `Send`, so a whole [`RenderGraph`](crate::RenderGraph) can live in a
/// Render-stage system of the frame scheduler (which may run it on any worker).
///
/// - `register` declares every resource the pass creates or uses and each access; it runs
///   when the graph compiles (once, until the graph changes).
/// - `prepare` does per-frame CPU work: uploads through the staging ring, the frame's
///   parameters ([`PrepareContext::param`]).
/// - `execute` records commands against the resolved resources, after the graph placed the
///   barriers the declared accesses need.
/// - `record_draw` runs inside a dynamic-rendering scope the graph opens on the pass's
///   declared color and depth attachments (only for passes that declare attachments).
pub trait Pass: Send + 'static {
    /// A name unique in the graph, shown in errors, labels, statistics and the DOT dump.
    fn name(&self) -> &str;

    /// Declares resources and accesses.
    fn register(&mut self, registry: &mut Registry<'_>);

    /// Per-frame CPU work before recording. Does nothing by default.
    fn prepare(&mut self, _context: &mut PrepareContext<'_>) {}

    /// Records the pass's commands (outside any rendering scope). Does nothing by default: a
    /// pass that only draws needs only [`Pass::record_draw`].
    fn execute(&mut self, _context: &mut ExecuteContext<'_>) {}

    /// Records draws inside the rendering scope opened on the declared attachments. Does
    /// nothing by default.
    fn record_draw(&mut self, _context: &mut ExecuteContext<'_>) {}
}

/// A pass of the graph: `register` declares what the pass creates or uses and returns the
/// handles of its accesses, which `prepare`, `execute` and `record_draw` then receive (no
/// `Option` fields filled in `register` and unwrapped later). A read access gives a read
/// handle ([`ImageRead`](crate::ImageRead), [`BufferRead`](crate::BufferRead): `Copy`), a
/// write access a write handle ([`ImageWrite`](crate::ImageWrite),
/// [`BufferWrite`](crate::BufferWrite): neither `Copy` nor `Clone`), so a write cannot be
/// recorded through a read and a read handle cannot bind a slot the shader writes.
///
/// Add it with [`RenderGraph::add_typed_pass`](crate::RenderGraph::add_typed_pass) (or
/// [`add_typed_pass_at`](crate::RenderGraph::add_typed_pass_at) an insertion point); it runs
/// as a [`Pass`] through [`Typed`]. Every method but `name` and `register` has an empty
/// default, so a pass that only draws writes `record_draw` alone. A compute pass in a handful
/// of lines:
///
/// ```no_run
/// use render_graph::{Binding, ComputePipeline, ExecuteContext, ImageDesc, ImageSize, ImageWrite, Registry,
///     ShaderStage, TypedPass};
/// use ash::vk;
///
/// struct Pattern { pipeline: ComputePipeline }
///
/// impl TypedPass for Pattern {
///     type Handles = ImageWrite;
///     fn name(&self) -> &str { "pattern" }
///     fn register(&mut self, registry: &mut Registry) -> ImageWrite {
///         let image = registry.create_image("pattern", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT));
///         registry.write_storage_image(image, ShaderStage::Compute)
///     }
///     fn execute(&mut self, target: &ImageWrite, context: &mut ExecuteContext) {
///         let extent = context.output_extent();
///         context.bind_compute(&self.pipeline, &[Binding::image(target)]);
///         context.push_constants(&[extent.width, extent.height]);
///         context.dispatch(extent.width.div_ceil(8), extent.height.div_ceil(8), 1);
///     }
/// }
/// ```
///
/// Reads and writes are told apart where they can be: the graph checks every bound
/// descriptor against the pass's declaration, the handle's kind and the shader's
/// `readonly`/`writeonly` qualifiers, and a write declared as a read (or the reverse), or a
/// read handle at a slot the shader may write, is a
/// [`GraphError::BindingMismatch`](crate::GraphError::BindingMismatch) naming the pass, the
/// binding and the resource.
pub trait TypedPass: Send + 'static {
    /// What `register` declared and the other methods use (a handle, a tuple, a struct).
    type Handles: Send + 'static;

    /// A name unique in the graph (see [`Pass::name`]).
    fn name(&self) -> &str;

    /// Declares resources and accesses, and returns the handles the other methods receive.
    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles;

    /// Per-frame CPU work before recording. Does nothing by default.
    fn prepare(&mut self, _handles: &Self::Handles, _context: &mut PrepareContext<'_>) {}

    /// Records commands outside the rendering scope. Does nothing by default.
    fn execute(&mut self, _handles: &Self::Handles, _context: &mut ExecuteContext<'_>) {}

    /// Records draws inside the rendering scope. Does nothing by default.
    fn record_draw(&mut self, _handles: &Self::Handles, _context: &mut ExecuteContext<'_>) {}
}

/// A [`TypedPass`] as a [`Pass`]: keeps the handles of its last `register`.
pub struct Typed<P: TypedPass> {
    pass: P,
    handles: Option<P::Handles>,
}

impl<P: TypedPass> Typed<P> {
    /// Wraps `pass`.
    pub fn new(pass: P) -> Typed<P> {
        Typed { pass, handles: None }
    }

    /// The pass.
    pub fn pass(&self) -> &P {
        &self.pass
    }
}

impl<P: TypedPass> Pass for Typed<P> {
    fn name(&self) -> &str {
        self.pass.name()
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        self.handles = Some(self.pass.register(registry));
    }

    // The graph registers every pass before it prepares or executes one, so the handles are
    // there; a pass never registered records nothing.
    fn prepare(&mut self, context: &mut PrepareContext<'_>) {
        if let Some(handles) = &self.handles {
            self.pass.prepare(handles, context);
        }
    }

    fn execute(&mut self, context: &mut ExecuteContext<'_>) {
        if let Some(handles) = &self.handles {
            self.pass.execute(handles, context);
        }
    }

    fn record_draw(&mut self, context: &mut ExecuteContext<'_>) {
        if let Some(handles) = &self.handles {
            self.pass.record_draw(handles, context);
        }
    }
}

/// Where a pass of the graph comes from: where it was added (its type and `add_*` call, the
/// source of its Tracy zones and of its errors), who added it and the group it was added
/// with (a user pass that fails is dropped with its group).
#[derive(Clone, Debug)]
pub(crate) struct PassOrigin {
    pub(crate) site: runtime::profiling::ZoneSite,
    pub(crate) owner: crate::compile::Owner,
    pub(crate) group: u64,
    /// The insertion point it was placed at, if any.
    pub(crate) point: Option<String>,
}

impl PassOrigin {
    /// Where it was added, as `file:line`.
    pub(crate) fn location(&self) -> String {
        format!("{}:{}", self.site.location.file(), self.site.location.line())
    }
}
