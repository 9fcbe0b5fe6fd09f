//! How to add your own passes to the render graph — the example to copy.
//!
//! The program builds a three-pass graph on a headless Vulkan device and writes the result
//! to a PNG:
//!
//! 1. `PatternPass` (compute): writes a gradient-and-checkerboard pattern to a storage image
//!    it creates, named `pattern`.
//! 2. `InvertPass` (graphics): samples `pattern` in a full-screen triangle and draws its
//!    complement into the color attachment `color`.
//! 3. The engine's `render_graph::readback::ReadbackPass` (transfer): copies `color` into a host-visible
//!    buffer the program imported as `readback`.
//!
//! Each pass is a `TypedPass`: `register` declares what it creates and how it accesses each
//! resource, and returns the handles of those accesses, which `execute` and `record_draw`
//! receive. A read gives a read handle (`ImageRead`, `Copy`), a write a write handle
//! (`ImageWrite`, neither `Copy` nor `Clone`, lent by reference): what a shader may write is
//! bound from a write handle only. The graph orders the passes, inserts every barrier and
//! layout transition, and allocates the images. `execute` only records the pass's own
//! commands.
//!
//! Run: `cargo run -p samples --bin custom_pass [-- --out FILE.png]` (default `custom_pass.png`
//! in the current folder). Set `ENGINE_VALIDATION=1` (or force the layer through the loader,
//! `VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation`) to run under the validation layer.
//! `post_process.rs` continues with ping-pong chains, history and GPU-written draws.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use render_graph::device::{DeviceConfig, GpuDevice};
use render_graph::readback::ReadbackPass;
use render_graph::vk;
use render_graph::{
    AttachmentLoad, Binding, BindingKind, ComputePipeline, ExecuteContext, GraphicsPipeline, GraphicsPipelineDesc,
    ImageDesc, ImageRead, ImageSize, ImageWrite, Registry, RenderGraph, ShaderStage, TypedPass,
};

const WIDTH: u32 = 256;
const HEIGHT: u32 = 192;

/// A compute pass: the whole user code is `register` and `execute`.
struct PatternPass {
    pipeline: ComputePipeline,
}

impl TypedPass for PatternPass {
    /// The image it writes.
    type Handles = ImageWrite;

    fn name(&self) -> &str {
        "pattern"
    }

    fn register(&mut self, registry: &mut Registry) -> ImageWrite {
        // Created by the graph, the size of the output; transient, so its memory may be shared.
        let image = registry.create_image("pattern", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT));
        registry.write_storage_image(image, ShaderStage::Compute)
    }

    fn execute(&mut self, target: &ImageWrite, context: &mut ExecuteContext) {
        let extent = context.image(target).extent;
        context.bind_compute(&self.pipeline, &[Binding::image(target)]);
        context.push_constants(&[extent.width, extent.height]);
        context.dispatch(extent.width.div_ceil(8), extent.height.div_ceil(8), 1);
    }
}

/// A graphics pass: declares a sampled input (a read handle) and a color attachment (a write
/// handle, which the graph records through: it opens the rendering scope, with the clear,
/// viewport and scissor, and calls `record_draw` inside it).
struct InvertPass {
    pipeline: GraphicsPipeline,
}

impl TypedPass for InvertPass {
    /// The pattern it samples, the colour it draws.
    type Handles = (ImageRead, ImageWrite);

    fn name(&self) -> &str {
        "invert"
    }

    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let source = registry.image("pattern");
        let color = registry.create_image("color", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT));
        let color = registry.color_attachment(color, AttachmentLoad::ClearColor([0.0, 0.0, 0.0, 1.0]));
        (registry.sample(source, ShaderStage::Fragment), color)
    }

    fn record_draw(&mut self, (source, _color): &Self::Handles, context: &mut ExecuteContext) {
        context.bind_graphics(&self.pipeline, &[Binding::image(*source)]);
        context.draw(3, 1);
    }
}

fn run(output: &PathBuf) -> Result<(), Box<dyn std::error::Error>> {
    let device = Arc::new(GpuDevice::new(&DeviceConfig { app_name: "custom_pass".into(), ..DeviceConfig::default() })?);
    let capabilities = device.capabilities();
    println!("device: {} ({:?})", capabilities.name, capabilities.device_type);
    if !capabilities.missing_optional.is_empty() {
        println!("missing optional features: {:?}", capabilities.missing_optional);
    }

    let pattern =
        ComputePipeline::new(&device, "pattern", shaders::PATTERN_COMP.words(), &[BindingKind::StorageImage], 8)?;
    let invert = GraphicsPipeline::new(
        &device,
        "invert",
        &GraphicsPipelineDesc {
            vertex: shaders::FULLSCREEN_VERT.words(),
            fragment: shaders::INVERT_FRAG.words(),
            bindings: &[BindingKind::SampledImage],
            push_constant_bytes: 0,
            color_formats: &[vk::Format::R8G8B8A8_UNORM],
            depth: None,
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            cull_mode: vk::CullModeFlags::NONE,
            blend: render_graph::ColorBlend::Replace,
        },
    )?;
    let extent = vk::Extent2D { width: WIDTH, height: HEIGHT };
    let readback = render_graph::readback::image_readback_buffer(&device, "readback", extent)?;

    let mut graph = RenderGraph::new(Arc::clone(&device), extent)?;
    graph.import_buffer("readback", readback.shared());
    graph.add_typed_pass(PatternPass { pipeline: pattern });
    graph.add_typed_pass(InvertPass { pipeline: invert });
    // The third pass is the engine's own: writing an imported buffer makes it run.
    graph.add_typed_pass(ReadbackPass::with_names("color", "readback"));
    graph.execute_frame()?;
    graph.wait_idle()?;

    for pass in &graph.stats().passes {
        let gpu = pass.gpu_ms.map_or(String::from("n/a"), |ms| format!("{ms:.3} ms"));
        println!(
            "pass {:<10} gpu {gpu:>10}  record {:.3} ms  barriers {}",
            pass.name, pass.cpu_record_ms, pass.barriers
        );
    }
    let pixels = readback.read()?;
    let file = std::io::BufWriter::new(std::fs::File::create(output)?);
    let mut encoder = png::Encoder::new(file, WIDTH, HEIGHT);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header()?.write_image_data(pixels)?;
    drop(graph);
    let counts = device.validation_counts();
    if counts.has_problems() {
        return Err(format!("validation reported problems: {:?}", device.validation_messages()).into());
    }
    Ok(())
}

/// Builds a three-pass render graph (compute pattern, graphics invert, readback) on a
/// headless Vulkan device and writes the result as a PNG.
///
/// Set `ENGINE_VALIDATION=1` to run under the Vulkan validation layer.
#[derive(Parser, Debug)]
#[command(name = "custom_pass", version)]
struct Options {
    /// Where the PNG goes.
    #[arg(long, value_name = "FILE", default_value = "custom_pass.png")]
    out: PathBuf,
}

fn main() -> ExitCode {
    samples::init_logging();
    let options = Options::parse();
    let output = options.out;
    match run(&output) {
        Ok(()) => {
            println!("wrote {}", output.display());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("custom_pass: {error}");
            ExitCode::FAILURE
        }
    }
}
