//! A post-processing chain of your own passes — the second example to copy, after
//! `custom_pass`. It shows the three patterns that need care in a render graph, each checked
//! against a CPU computation every frame:
//!
//! 1. **Ping-pong** (compute): `noise` fills an r32ui image; four blur passes alternate
//!    between two images, `ping` and `pong` (x, y, x, y). Each image is written twice in one
//!    frame: a reader sees the version written *before it in declaration order*, so the chain
//!    is declared exactly as it runs.
//! 2. **History** (compute): `accumulate` adds this frame's blur to last frame's
//!    `accumulated` (a history image): after frame `n` it holds `(n + 1) * blur`. The first
//!    frame, or a recompile that had to recreate the image, starts from zero, and the pass is
//!    told ([`ExecuteContext::history_was_reset`]).
//! 3. **GPU-written indirect draw**: `bright bands` counts bright texels of `accumulated` and
//!    writes a `VkDrawIndirectCommand`; `bands` (graphics) draws one horizontal band per
//!    instance with [`ExecuteContext::draw_indirect`] — the CPU never sees the count. What
//!    "bright" means is a per-frame parameter the host hands the graph
//!    ([`RenderGraph::set_param`]), which the pass reads with
//!    [`ExecuteContext::require_param`].
//!
//! Every pass is a `TypedPass`: its `register` returns read handles (`ImageRead`,
//! `BufferRead`) for what it reads and write handles (`ImageWrite`, `BufferWrite`) for what it
//! writes, and `execute` binds them.
//!
//! Run: `cargo run -p samples --bin post_process [-- --out FILE.png]` (default
//! `post_process.png`). Set `ENGINE_VALIDATION=1` to run under the validation layer.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use clap::Parser;
use render_graph::device::{DeviceConfig, GpuDevice};
use render_graph::readback::ReadbackPass;
use render_graph::vk;
use render_graph::{
    AttachmentLoad, Binding, BindingKind, BufferDesc, BufferRead, BufferWrite, ComputePipeline, ExecuteContext,
    GraphicsPipeline, GraphicsPipelineDesc, ImageDesc, ImageRead, ImageSize, ImageWrite, ReadbackBuffer, Registry,
    RenderGraph, ShaderStage, TypedPass, DRAW_INDIRECT_COMMAND_BYTES,
};

const WIDTH: u32 = 64;
const HEIGHT: u32 = 48;
/// Horizontal bands the indirect draw may draw (one instance each).
const BANDS: u32 = 8;
/// A texel of `accumulated` is bright above this.
const THRESHOLD: u32 = 100_000;
/// One band per this many bright texels.
const PIXELS_PER_BAND: u32 = WIDTH * HEIGHT / BANDS;
/// Frames the program runs.
const FRAMES: u32 = 4;
/// Blur passes (alternating x and y).
const BLUR_PASSES: usize = 4;
const IMAGE_FORMAT: vk::Format = vk::Format::R32_UINT;
const COMPUTE: ShaderStage = ShaderStage::Compute;

fn groups(extent: vk::Extent2D) -> (u32, u32) {
    (extent.width.div_ceil(8), extent.height.div_ceil(8))
}

/// What `bright bands` counts as bright: a texel of `accumulated` above it. The frame's
/// parameter ([`RenderGraph::set_param`]).
struct Brightness {
    threshold: u32,
}

/// Fills `noise` (created here, the size of the output).
struct NoisePass {
    pipeline: Arc<ComputePipeline>,
}

impl TypedPass for NoisePass {
    type Handles = ImageWrite;

    fn name(&self) -> &str {
        "noise"
    }

    fn register(&mut self, registry: &mut Registry) -> ImageWrite {
        let image = registry.create_image("noise", ImageDesc::new(IMAGE_FORMAT, ImageSize::OUTPUT));
        registry.write_storage_image(image, COMPUTE)
    }

    fn execute(&mut self, target: &ImageWrite, context: &mut ExecuteContext) {
        let (x, y) = groups(context.image(target).extent);
        context.bind_compute(&self.pipeline, &[Binding::image(target)]);
        context.dispatch(x, y, 1);
    }
}

/// One blur pass of the ping-pong chain: reads `source`, writes `target` (creating it when
/// `creates` is set: the first pass that writes an image creates it).
struct BlurPass {
    name: String,
    pipeline: Arc<ComputePipeline>,
    axis: u32,
    source_name: &'static str,
    target_name: &'static str,
    creates: bool,
}

impl TypedPass for BlurPass {
    type Handles = (ImageRead, ImageWrite);

    fn name(&self) -> &str {
        &self.name
    }

    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let source = registry.image(self.source_name);
        let target = if self.creates {
            registry.create_image(self.target_name, ImageDesc::new(IMAGE_FORMAT, ImageSize::OUTPUT))
        } else {
            registry.image(self.target_name)
        };
        (registry.read_storage_image(source, COMPUTE), registry.write_storage_image(target, COMPUTE))
    }

    fn execute(&mut self, (source, target): &Self::Handles, context: &mut ExecuteContext) {
        let (x, y) = groups(context.image(target).extent);
        context.bind_compute(&self.pipeline, &[Binding::image(*source), Binding::image(target)]);
        context.push_constants(&[self.axis]);
        context.dispatch(x, y, 1);
    }
}

/// `accumulated` = last frame's `accumulated` + the blurred image.
struct AccumulatePass {
    pipeline: ComputePipeline,
    /// Frames in which the history restarted from zero (shared with the program).
    resets: Arc<Mutex<Vec<u64>>>,
}

impl TypedPass for AccumulatePass {
    /// Last frame's `accumulated` and the blurred image, read; this frame's, written.
    type Handles = (ImageRead, ImageRead, ImageWrite);

    fn name(&self) -> &str {
        "accumulate"
    }

    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let previous = registry.history_image("accumulated");
        let current = registry.image(blurred_name());
        let target = registry.create_image("accumulated", ImageDesc::new(IMAGE_FORMAT, ImageSize::OUTPUT));
        (
            registry.read_storage_image(previous, COMPUTE),
            registry.read_storage_image(current, COMPUTE),
            registry.write_storage_image(target, COMPUTE),
        )
    }

    fn execute(&mut self, (previous, current, target): &Self::Handles, context: &mut ExecuteContext) {
        if context.history_was_reset(previous) {
            // A temporal effect would restart here (e.g. weight this frame fully); summing
            // onto the zeros the graph provides is already right for this one.
            self.resets.lock().unwrap_or_else(|poison| poison.into_inner()).push(context.frame_index());
        }
        let (x, y) = groups(context.image(target).extent);
        let bindings = [Binding::image(*previous), Binding::image(*current), Binding::image(target)];
        context.bind_compute(&self.pipeline, &bindings);
        context.dispatch(x, y, 1);
    }
}

/// Writes the indirect draw command of the bands from `accumulated`.
struct BrightBandsPass {
    pipeline: ComputePipeline,
}

impl TypedPass for BrightBandsPass {
    /// `accumulated`, read; the draw command, written.
    type Handles = (ImageRead, BufferWrite);

    fn name(&self) -> &str {
        "bright bands"
    }

    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let source = registry.image("accumulated");
        let command = registry.create_buffer("band draw", BufferDesc { size: u64::from(DRAW_INDIRECT_COMMAND_BYTES) });
        (registry.read_storage_image(source, COMPUTE), registry.write_storage_buffer(command, COMPUTE))
    }

    fn execute(&mut self, (source, command): &Self::Handles, context: &mut ExecuteContext) {
        let threshold = match context.require_param::<Brightness>() {
            Ok(brightness) => brightness.threshold,
            Err(error) => return context.fail(error),
        };
        context.bind_compute(&self.pipeline, &[Binding::image(*source), Binding::buffer(command)]);
        context.push_constants(&[threshold, PIXELS_PER_BAND, BANDS]);
        context.dispatch(1, 1, 1);
    }
}

/// Draws the bands the GPU counted into `color`.
struct BandsPass {
    pipeline: GraphicsPipeline,
}

impl TypedPass for BandsPass {
    /// The draw command it reads (`color` is its attachment: the graph records that write).
    type Handles = BufferRead;

    fn name(&self) -> &str {
        "bands"
    }

    fn register(&mut self, registry: &mut Registry) -> BufferRead {
        let command = registry.buffer("band draw");
        let color = registry.create_image("color", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT));
        registry.color_attachment(color, AttachmentLoad::ClearColor([0.0, 0.0, 0.0, 1.0]));
        registry.indirect_buffer(command)
    }

    fn record_draw(&mut self, &command: &BufferRead, context: &mut ExecuteContext) {
        context.bind_graphics(&self.pipeline, &[]);
        // `band.vert`'s push constants: band count, column count (one column: full width).
        context.push_constants(&[BANDS, 1]);
        context.draw_indirect(command, 0, 1, DRAW_INDIRECT_COMMAND_BYTES);
    }
}

/// The image the last blur pass writes.
fn blurred_name() -> &'static str {
    blur_target(BLUR_PASSES - 1)
}

fn blur_target(pass: usize) -> &'static str {
    if pass.is_multiple_of(2) {
        "ping"
    } else {
        "pong"
    }
}

/// The program's graph and what it reads back.
struct PostProcess {
    graph: RenderGraph,
    accumulated: ReadbackBuffer,
    color: ReadbackBuffer,
    /// Frames in which `accumulate` was told its history restarted.
    resets: Arc<Mutex<Vec<u64>>>,
}

impl PostProcess {
    fn new(device: &Arc<GpuDevice>) -> render_graph::Result<PostProcess> {
        let extent = vk::Extent2D { width: WIDTH, height: HEIGHT };
        let storage = |name: &str, shader: &shaders::Shader, bindings: &[BindingKind], push: u32| {
            ComputePipeline::new(device, name, shader.words(), bindings, push)
        };
        use BindingKind::{StorageBuffer, StorageImage};
        let noise = Arc::new(storage("noise", &shaders::NOISE_COMP, &[StorageImage], 0)?);
        let blur = Arc::new(storage("blur", &shaders::BLUR_COMP, &[StorageImage, StorageImage], 4)?);
        let accumulate = storage("accumulate", &shaders::ACCUMULATE_COMP, &[StorageImage; 3], 0)?;
        let bright = storage("bright bands", &shaders::BRIGHT_BANDS_COMP, &[StorageImage, StorageBuffer], 12)?;
        let bands = GraphicsPipeline::new(
            device,
            "bands",
            &GraphicsPipelineDesc {
                vertex: shaders::BAND_VERT.words(),
                fragment: shaders::BAND_FRAG.words(),
                bindings: &[],
                push_constant_bytes: 8,
                color_formats: &[vk::Format::R8G8B8A8_UNORM],
                depth: None,
                topology: vk::PrimitiveTopology::TRIANGLE_LIST,
                cull_mode: vk::CullModeFlags::NONE,
                blend: render_graph::ColorBlend::Replace,
            },
        )?;

        let accumulated = render_graph::readback::image_readback_buffer(device, "accumulated readback", extent)?;
        let color = render_graph::readback::image_readback_buffer(device, "color readback", extent)?;
        let resets = Arc::default();
        let mut graph = RenderGraph::new(Arc::clone(device), extent)?;
        graph.import_buffer("accumulated readback", accumulated.shared());
        graph.import_buffer("color readback", color.shared());
        graph.add_typed_pass(NoisePass { pipeline: noise });
        for pass in 0..BLUR_PASSES {
            let axis = (pass % 2) as u32;
            graph.add_typed_pass(BlurPass {
                name: format!("blur {} {}", if axis == 0 { "x" } else { "y" }, pass / 2),
                pipeline: Arc::clone(&blur),
                axis,
                source_name: if pass == 0 { "noise" } else { blur_target(pass - 1) },
                target_name: blur_target(pass),
                creates: pass < 2,
            });
        }
        graph.add_typed_pass(AccumulatePass { pipeline: accumulate, resets: Arc::clone(&resets) });
        graph.add_typed_pass(BrightBandsPass { pipeline: bright });
        graph.add_typed_pass(BandsPass { pipeline: bands });
        graph.add_typed_pass(ReadbackPass::with_names("accumulated", "accumulated readback"));
        graph.add_typed_pass(ReadbackPass::with_names("color", "color readback"));
        // The frame's parameter: set once here, it holds for every frame until set again.
        graph.set_param(Brightness { threshold: THRESHOLD });
        Ok(PostProcess { graph, accumulated, color, resets })
    }

    /// Runs one frame and checks it against the CPU; returns the band count drawn.
    fn frame(&mut self, expected: &Expected) -> Result<u32, Box<dyn std::error::Error>> {
        let frame = self.graph.frame_index();
        self.graph.execute_frame()?;
        self.graph.wait_idle()?;
        let accumulated = self.accumulated.read_u32()?;
        let wanted = expected.accumulated(frame);
        if let Some(texel) = (0..wanted.len()).find(|&texel| accumulated[texel] != wanted[texel]) {
            return Err(format!(
                "frame {frame}: accumulated texel {texel} is {}, the CPU computes {}",
                accumulated[texel], wanted[texel]
            )
            .into());
        }
        let bands = bright_bands(&wanted);
        let pixels = self.color.read()?;
        if pixels != band_image(bands).as_slice() {
            return Err(format!("frame {frame}: the drawn bands differ from the {bands} the CPU counts").into());
        }
        Ok(bands)
    }
}

/// CPU twin of `noise.comp`.
fn noise_value(x: u32, y: u32) -> u32 {
    shaders::probe_hash(x + y * WIDTH) & 0xffff
}

/// CPU twin of `blur.comp`: one axis of the 3-tap box blur, edges clamped.
fn blur_axis(source: &[u32], axis: u32) -> Vec<u32> {
    let at = |x: i64, y: i64| {
        let (x, y) = (x.clamp(0, i64::from(WIDTH) - 1), y.clamp(0, i64::from(HEIGHT) - 1));
        source[(y * i64::from(WIDTH) + x) as usize]
    };
    let (step_x, step_y) = if axis == 0 { (1, 0) } else { (0, 1) };
    (0..WIDTH * HEIGHT)
        .map(|texel| {
            let (x, y) = (i64::from(texel % WIDTH), i64::from(texel / WIDTH));
            (at(x - step_x, y - step_y) + at(x, y) + at(x + step_x, y + step_y)) / 3
        })
        .collect()
}

/// CPU twin of `bright_bands.comp`: bands the indirect draw draws.
fn bright_bands(accumulated: &[u32]) -> u32 {
    let bright = accumulated.iter().filter(|&&value| value > THRESHOLD).count() as u32;
    (bright / PIXELS_PER_BAND).min(BANDS)
}

/// The RGBA8 image of `band.vert`/`band.frag` with bands `0..bands` drawn.
fn band_image(bands: u32) -> Vec<u8> {
    let band_height = HEIGHT / BANDS;
    (0..WIDTH * HEIGHT)
        .flat_map(|texel| {
            let band = texel / WIDTH / band_height;
            if band < bands {
                [band as u8 + 1, 1, 0, 255]
            } else {
                [0, 0, 0, 255]
            }
        })
        .collect()
}

/// What the CPU computes for the chain.
struct Expected {
    blurred: Vec<u32>,
}

impl Expected {
    fn new() -> Expected {
        let mut image: Vec<u32> = (0..WIDTH * HEIGHT).map(|texel| noise_value(texel % WIDTH, texel / WIDTH)).collect();
        for pass in 0..BLUR_PASSES {
            image = blur_axis(&image, (pass % 2) as u32);
        }
        Expected { blurred: image }
    }

    /// `accumulated` after frame `frame`: the sum of `frame + 1` blurs.
    fn accumulated(&self, frame: u64) -> Vec<u32> {
        self.blurred.iter().map(|&value| value * (frame as u32 + 1)).collect()
    }
}

fn run(output: &PathBuf) -> Result<(), Box<dyn std::error::Error>> {
    let device =
        Arc::new(GpuDevice::new(&DeviceConfig { app_name: "post_process".into(), ..DeviceConfig::default() })?);
    println!("device: {}", device.capabilities().name);
    let expected = Expected::new();
    let mut post = PostProcess::new(&device)?;
    println!("passes: {}", post.graph.execution_order()?.join(" -> "));
    for frame in 0..FRAMES {
        let bands = post.frame(&expected)?;
        println!("frame {frame}: accumulation and {bands} GPU-counted band(s) match the CPU");
    }
    println!("history reset in frame(s) {:?}", post.resets.lock().unwrap_or_else(|poison| poison.into_inner()));
    let pixels = post.color.read()?.to_vec();
    drop(post);
    let file = std::io::BufWriter::new(std::fs::File::create(output)?);
    let mut encoder = png::Encoder::new(file, WIDTH, HEIGHT);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header()?.write_image_data(&pixels)?;
    if device.validation_counts().has_problems() {
        return Err(format!("validation reported problems: {:?}", device.validation_messages()).into());
    }
    Ok(())
}

/// A post-processing chain of your own passes (ping-pong chains, history, GPU-written
/// draws), checked against the CPU every frame; writes the last frame as a PNG.
///
/// Set `ENGINE_VALIDATION=1` to run under the Vulkan validation layer.
#[derive(Parser, Debug)]
#[command(name = "post_process", version)]
struct Options {
    /// Where the PNG goes.
    #[arg(long, value_name = "FILE", default_value = "post_process.png")]
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
            eprintln!("post_process: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use render_graph::testing::{assert_no_validation_messages, gpu_test_context};

    #[test]
    fn the_cpu_blur_keeps_constants_and_averages_neighbours() {
        let constant = vec![30; (WIDTH * HEIGHT) as usize];
        assert_eq!(blur_axis(&constant, 0), constant);
        let mut spike = vec![0; (WIDTH * HEIGHT) as usize];
        spike[(WIDTH + 1) as usize] = 9;
        let blurred = blur_axis(&spike, 1);
        assert_eq!((blurred[1], blurred[(WIDTH + 1) as usize], blurred[(2 * WIDTH + 1) as usize]), (3, 3, 3));
        assert_eq!(blurred[(WIDTH + 2) as usize], 0, "the y blur leaves x neighbours alone");
    }

    #[test]
    fn the_threshold_makes_the_band_count_grow_over_the_frames() {
        let expected = Expected::new();
        let bands: Vec<u32> = (0..u64::from(FRAMES)).map(|frame| bright_bands(&expected.accumulated(frame))).collect();
        assert_eq!(bands[0], 0, "one blur never passes the threshold");
        assert!(bands.windows(2).all(|pair| pair[0] <= pair[1]) && bands[3] > bands[1], "{bands:?}");
    }

    #[test]
    fn ping_pong_history_and_indirect_draw_match_the_cpu_every_frame() {
        let Some(device) = gpu_test_context() else { return };
        let expected = Expected::new();
        let mut post = PostProcess::new(&device).expect("the graph builds");
        assert_eq!(
            post.graph.execution_order().expect("compiles"),
            [
                "noise",
                "blur x 0",
                "blur y 0",
                "blur x 1",
                "blur y 1",
                "accumulate",
                "bright bands",
                "bands",
                "readback accumulated",
                "readback color"
            ]
        );
        let bands: Vec<u32> =
            (0..FRAMES).map(|_| post.frame(&expected).unwrap_or_else(|error| panic!("{error}"))).collect();
        assert!(bands.iter().any(|&count| count > 0), "some frame draws bands: {bands:?}");
        assert_eq!(*post.resets.lock().expect("not poisoned"), [0], "the history starts from zero once");
        drop(post);
        assert_no_validation_messages(&device);
    }
}
