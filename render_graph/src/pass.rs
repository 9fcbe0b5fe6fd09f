//! The pass trait: Register, Prepare, Execute and the optional RecordDraw.

use crate::context::{ExecuteContext, PrepareContext};
use crate::registry::Registry;

/// One node of the render graph.
///
/// Passes are `Send`, so a whole [`RenderGraph`](crate::RenderGraph) can live in a
/// Render-stage system of the frame scheduler (which may run it on any worker).
///
/// - `register` declares every resource the pass creates or uses and each access; it runs
///   when the graph compiles (once, until the graph changes).
/// - `prepare` does per-frame CPU work: uploads through the staging ring, parameters.
/// - `execute` records commands against the resolved resources, after the graph placed the
///   barriers the declared accesses need.
/// - `record_draw` runs inside a dynamic-rendering scope the graph opens on the pass's
///   declared color and depth attachments (only for passes that declare attachments).
///
/// A compute pass in a handful of lines:
///
/// ```no_run
/// use render_graph::{Access, BindingKind, ComputePipeline, ExecuteContext, ImageDesc,
///     ImageHandle, ImageSize, Pass, Registry, ShaderStage, Binding};
/// use ash::vk;
///
/// struct Pattern { pipeline: ComputePipeline, target: Option<ImageHandle> }
///
/// impl Pass for Pattern {
///     fn name(&self) -> &str { "pattern" }
///     fn register(&mut self, registry: &mut Registry) {
///         let image = registry.create_image("pattern", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT));
///         self.target = Some(registry.write_storage_image(image, ShaderStage::Compute));
///     }
///     fn execute(&mut self, context: &mut ExecuteContext) {
///         let target = self.target.expect("registered");
///         let extent = context.image(target).extent;
///         context.bind_compute(&self.pipeline, &[Binding::Image(target)]);
///         context.push_constants(&[extent.width, extent.height]);
///         context.dispatch(extent.width.div_ceil(8), extent.height.div_ceil(8), 1);
///     }
/// }
/// ```
pub trait Pass: Send + 'static {
    /// A name unique in the graph, shown in errors, labels, statistics and the DOT dump.
    fn name(&self) -> &str;

    /// Declares resources and accesses.
    fn register(&mut self, registry: &mut Registry<'_>);

    /// Per-frame CPU work before recording. Does nothing by default.
    fn prepare(&mut self, _context: &mut PrepareContext<'_>) {}

    /// Records the pass's commands.
    fn execute(&mut self, context: &mut ExecuteContext<'_>);

    /// Records draws inside the rendering scope opened on the declared attachments. Does
    /// nothing by default.
    fn record_draw(&mut self, _context: &mut ExecuteContext<'_>) {}
}
