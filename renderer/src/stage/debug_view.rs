//! A debug view: any graph image (a depth, a pyramid mip, a mask of a user's pass) drawn over
//! the frame's `color` at its end, so the window shows it and screenshots read it. A game sets
//! the [`DebugView`] resource; the Render stage places a [`DebugViewPass`] at
//! [`points::BEFORE_OUTPUT`](crate::points::BEFORE_OUTPUT) when it changes (the graph
//! recompiles then) and removes it when it is cleared.

use std::sync::Arc;

use render_graph::{
    vk, AttachmentLoad, Binding, BindingKind, ExecuteContext, GpuDevice, GraphError, GraphicsPipeline,
    GraphicsPipelineDesc, ImageRead, MipRange, Registry, Result, ShaderStage, TypedPass,
};

use crate::names::{COLOR, COLOR_FORMAT};

/// What to show instead of the frame (a resource [`crate::install_render`] inserts; `image:
/// None` shows the frame). Depth and one-channel float images show as grey, colour images as
/// they are; an image that cannot be shown is logged once and the frame shown instead.
///
/// ```
/// let mut view = renderer::DebugView::default();
/// view.image = Some(String::from(renderer::HIZ_DEPTH));
/// view.mip = 2;
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DebugView {
    /// The graph image to show.
    pub image: Option<String>,
    /// Its mip.
    pub mip: u32,
    /// Grey images only: 0 shows the value as it is (0 black, 1 and above white); `n` above 0
    /// shows it on a logarithmic scale of `n` decades, `1 + log10(value) / n`, which is what
    /// makes a reversed-Z depth readable (depth is `near / distance`: with `n = 4`, white at
    /// the near plane, black at 10,000 times its distance). [`DebugView::depth`] sets 4.
    pub log_decades: f32,
}

impl DebugView {
    /// Decades of the logarithmic scale depth is shown on ([`DebugView::depth`]) and
    /// screenshots of depth images are developed on by default
    /// ([`Screenshots::set_depth_log_decades`](crate::Screenshots::set_depth_log_decades)).
    pub const DEPTH_LOG_DECADES: f32 = 4.0;

    /// Mip `mip` of the depth image `image` (the `depth_prepass`, a Hi-Z mip) on a
    /// logarithmic scale of [`DebugView::DEPTH_LOG_DECADES`] decades.
    pub fn depth(image: &str, mip: u32) -> DebugView {
        DebugView { image: Some(image.to_owned()), mip, log_decades: Self::DEPTH_LOG_DECADES }
    }
}

/// The grey (0 black, 1 white) the debug view shows for the value `value` of a grey image on
/// a logarithmic scale of `log_decades` decades (see [`DebugView::log_decades`]; 0: the value
/// as it is). The host twin of `debug_view.frag.glsl`'s mapping, step for step: screenshots
/// develop depth images with it, so a screenshot and the debug view show a depth alike.
///
/// ```
/// use renderer::{debug_view_grey, DebugView};
/// let decades = DebugView::DEPTH_LOG_DECADES;
/// assert_eq!(debug_view_grey(1.0, decades), 1.0);
/// assert!((debug_view_grey(0.01, decades) - 0.5).abs() < 1e-6);
/// assert_eq!(debug_view_grey(0.0, decades), 0.0);
/// assert_eq!(debug_view_grey(0.25, 0.0), 0.25);
/// ```
#[inline]
pub fn debug_view_grey(value: f32, log_decades: f32) -> f32 {
    let mut grey = value;
    if log_decades > 0.0 {
        // log10 as the shader computes it: log2 times log10(2) (the shader's 0.30103).
        grey = 1.0 + value.max(1e-30).log2() * (std::f32::consts::LOG10_2 / log_decades);
    }
    grey.clamp(0.0, 1.0)
}

/// Draws mip `mip` of `image` over the whole of `color` (see the module docs).
pub struct DebugViewPass {
    pipeline: GraphicsPipeline,
    image: String,
    mip: u32,
    log_decades: f32,
}

impl DebugViewPass {
    /// Name of the pass.
    pub const NAME: &'static str = "debug view";

    /// The pass showing mip `mip` of `image`, grey images on a logarithmic scale of
    /// `log_decades` decades (0: as they are; see [`DebugView::log_decades`]).
    pub fn new(device: &Arc<GpuDevice>, image: &str, mip: u32, log_decades: f32) -> Result<DebugViewPass> {
        let desc = GraphicsPipelineDesc {
            vertex: shaders::FULLSCREEN_VERT.words(),
            fragment: shaders::DEBUG_VIEW_FRAG.words(),
            bindings: &[BindingKind::SampledImage],
            push_constant_bytes: 16,
            color_formats: &[COLOR_FORMAT],
            depth: None,
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            cull_mode: vk::CullModeFlags::NONE,
            blend: render_graph::ColorBlend::Replace,
        };
        let pipeline = GraphicsPipeline::new(device, Self::NAME, &desc)?;
        Ok(DebugViewPass { pipeline, image: image.to_owned(), mip, log_decades: log_decades.max(0.0) })
    }
}

impl TypedPass for DebugViewPass {
    type Handles = ImageRead;

    fn name(&self) -> &str {
        Self::NAME
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> ImageRead {
        let source = registry.image(&self.image);
        let source = registry.read_sampled_image_mips(source, MipRange::level(self.mip), ShaderStage::Fragment);
        let color = registry.image(COLOR);
        registry.color_attachment(color, AttachmentLoad::DontCare);
        source
    }

    fn record_draw(&mut self, &source: &ImageRead, context: &mut ExecuteContext<'_>) {
        let format = match context.try_image(source) {
            Ok(image) => image.format,
            Err(error) => return context.fail(error),
        };
        if is_integer(format) {
            return context.fail(GraphError::InvalidAccess {
                pass: String::from(Self::NAME),
                resource: self.image.clone(),
                reason: "the debug view shows colour, depth and float images, not integer ones",
            });
        }
        let grey = matches!(format, vk::Format::D32_SFLOAT | vk::Format::R32_SFLOAT | vk::Format::R16_SFLOAT);
        let extent = context.output_extent();
        let words = [
            (1.0 / extent.width.max(1) as f32).to_bits(),
            (1.0 / extent.height.max(1) as f32).to_bits(),
            u32::from(grey),
            self.log_decades.to_bits(),
        ];
        context.bind_graphics(&self.pipeline, &[Binding::image_mip(source, self.mip)]);
        context.push_constants(&words);
        context.draw(3, 1);
    }
}

/// Whether a format holds integers (a float sampler cannot read them).
fn is_integer(format: vk::Format) -> bool {
    matches!(
        format,
        vk::Format::R8_UINT
            | vk::Format::R8_SINT
            | vk::Format::R16_UINT
            | vk::Format::R16_SINT
            | vk::Format::R32_UINT
            | vk::Format::R32_SINT
            | vk::Format::R32G32_UINT
            | vk::Format::R32G32_SINT
            | vk::Format::R8G8B8A8_UINT
            | vk::Format::R8G8B8A8_SINT
            | vk::Format::R16G16B16A16_UINT
            | vk::Format::R16G16B16A16_SINT
            | vk::Format::R32G32B32A32_UINT
            | vk::Format::R32G32B32A32_SINT
    )
}
