//! Post-processes that read neighbouring colour texels (a blur, an FXAA, an invert drawn
//! over a full-screen triangle) cannot read and write `color` in place: a pass cannot sample
//! and attach one image, and a storage read of a neighbour another invocation rewrites is a
//! race. [`add_post_process`] gives such a pass a copy: before it, a copy pass puts this
//! frame's `color` into an image of its own (`input`), which the pass samples (or reads as
//! storage) while it writes the next version of `color`. Everything after it (later
//! post-processes, readbacks, screenshots, the window) sees that version. Per-pixel effects
//! need no copy: they read and write `color` in place as a storage image.

use render_graph::{
    Access, ExecuteContext, ImageDesc, ImageRead, ImageSize, ImageWrite, Registry, RenderGraph, Result, TypedPass,
};

use crate::frame::points;
use crate::names::{COLOR, COLOR_FORMAT};

/// Adds `pass` at [`points::AFTER_GEOMETRY`] (after the post-processes placed there before
/// it), preceded by a copy of `color` into a new image named `input` ([`COLOR_FORMAT`], the
/// output's size), which `pass` reads with `registry.image(input)` while it writes `color`.
///
/// ```no_run
/// # use render_graph::{AttachmentLoad, Binding, ExecuteContext, GraphicsPipeline, ImageRead, Registry, ShaderStage, TypedPass};
/// struct Blur { pipeline: GraphicsPipeline }
/// impl TypedPass for Blur {
///     type Handles = ImageRead;
///     fn name(&self) -> &str { "blur" }
///     fn register(&mut self, registry: &mut Registry) -> ImageRead {
///         let input = registry.image("blur input");
///         let color = registry.image(renderer::COLOR);
///         registry.color_attachment(color, AttachmentLoad::DontCare);
///         registry.sample(input, ShaderStage::Fragment)
///     }
///     fn record_draw(&mut self, &input: &ImageRead, context: &mut ExecuteContext) {
///         context.bind_graphics(&self.pipeline, &[Binding::image(input)]);
///         context.draw(3, 1); // a full-screen triangle
///     }
/// }
/// # fn add(graph: &mut render_graph::RenderGraph, pipeline: GraphicsPipeline) -> render_graph::Result<()> {
/// renderer::add_post_process(graph, "blur input", Blur { pipeline })?;
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn add_post_process<P: TypedPass>(graph: &mut RenderGraph, input: &str, pass: P) -> Result<()> {
    graph.add_typed_pass_at(
        points::AFTER_GEOMETRY,
        CopyColor { input: input.to_owned(), name: format!("copy color to {input}") },
    )?;
    graph.add_typed_pass_at(points::AFTER_GEOMETRY, pass)
}

/// Copies `color` into the image `input` it creates.
struct CopyColor {
    input: String,
    name: String,
}

impl TypedPass for CopyColor {
    /// `color`, and the copy.
    type Handles = (ImageRead, ImageWrite);

    fn name(&self) -> &str {
        &self.name
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let color = registry.image(COLOR);
        let input = registry.create_image(&self.input, ImageDesc::new(COLOR_FORMAT, ImageSize::OUTPUT));
        (registry.read_image(color, Access::TransferRead), registry.write_image(input, Access::TransferWrite))
    }

    fn execute(&mut self, (color, input): &Self::Handles, context: &mut ExecuteContext<'_>) {
        context.copy_image(*color, input);
    }
}
