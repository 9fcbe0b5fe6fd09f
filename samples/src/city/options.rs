//! The demo's command line (`city --help`). The option names and their meaning are a
//! contract other tools rely on: `--frames N`, `--size WxH`, `--objects N`,
//! `--seed S`, `--threads N`, `--cull cpu|gpu|auto|off`, `--occlusion on|off`,
//! `--camera-path FILE`, `--truth`, `--classify`, `--clusters`, `--validate`, `--out DIR`, `--window`.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

use super::CityConfig;

/// The demo: a procedural city culled frame by frame while the camera flies through it.
///
/// Prints the city's bounds and blocks, one line of culling statistics every
/// `--report-every` frames and a summary. With a Vulkan device it draws frames with the
/// render graph (`--render`) and checks each drawn frame against the same frame drawn with
/// culling off: culling must never hide a pixel.
#[derive(Parser, Clone, Debug)]
#[command(name = "city", version)]
pub struct CityOptions {
    /// Frames to run (60 per simulated second; the built-in flight loops every 2400).
    #[arg(long, value_name = "N", default_value_t = 600)]
    pub frames: u64,
    /// Size of the view and of the images, in pixels.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = parse_size)]
    pub size: (u32, u32),
    /// About how many objects the city has (1000 to 1000000); the number of blocks follows.
    #[arg(long, value_name = "N", default_value_t = 100_000,
          value_parser = clap::value_parser!(u64).range(1_000..=1_000_000))]
    pub objects: u64,
    /// Seed of the city's layout (same seed, same city).
    #[arg(long, value_name = "S", default_value_t = CityConfig::default().seed)]
    pub seed: u64,
    /// Job-system threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// Culling backend: `cpu`, `gpu`, `auto` (GPU when the device can), or `off` (draw all).
    #[arg(long, value_enum, default_value_t = CullChoice::Auto)]
    pub cull: CullChoice,
    /// Occlusion culling (hidden objects behind buildings).
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    pub occlusion: Switch,
    /// Screen-size cull threshold in pixels (0: off; above 0 it is lossy by design).
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub min_pixels: f32,
    /// Distance cull in metres (0: off).
    #[arg(long, value_name = "D", default_value_t = 0.0)]
    pub max_distance: f32,
    /// A JSON camera path to fly instead of the built-in flight (see `city::keyframes`):
    /// `{"keyframes":[{"frame":0,"position":[x,y,z],"yaw":0,"pitch":0,"fov":60}, ...]}`,
    /// degrees, yaw 0 looks along -Z, positive yaw turns left, positive pitch looks up.
    #[arg(long, value_name = "FILE")]
    pub camera_path: Option<PathBuf>,
    /// Which frames are drawn on the GPU: `every`, the `last` one, or `none` (default:
    /// `every` with `--truth`, else `last`).
    #[arg(long, value_enum)]
    pub render: Option<RenderChoice>,
    /// Which drawn frames are checked against the same frame drawn with culling off:
    /// `every` one, or the `last` alone (timing runs: on lavapipe the reference of a million
    /// objects costs seconds a frame, and the check's copies are not the frame's work).
    #[arg(long, value_enum, value_name = "every|last", default_value_t = CheckChoice::Every)]
    pub checks: CheckChoice,
    /// Folder for the output, created when missing: `stats.json` (every frame's
    /// measurements), `city.png` (the last frame, when drawn) and `frame-NNNNNN.png`
    /// (`--png-every`).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,
    /// Write every N-th drawn frame as a PNG in `--out`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub png_every: Option<u64>,
    /// Turn on the Vulkan validation layer with synchronization checks; any message makes
    /// the run fail (non-zero exit).
    #[arg(long)]
    pub validate: bool,
    /// On every drawn frame, render an object-id image with culling off, count the objects
    /// owning at least one pixel and print `false_hidden N` (objects with pixels culling did
    /// not submit; must be 0, else the run fails) and `efficiency X` (objects with pixels /
    /// objects submitted).
    #[arg(long)]
    pub truth: bool,
    /// With every PNG written, also write `NAME-classify.png`: the normal image and, next to
    /// it, every object drawn with culling off coloured by its verdict (visible green,
    /// frustum red, occluded blue, too small or far grey, kept without owning a pixel amber).
    #[arg(long)]
    pub classify: bool,
    /// On drawn frames with GPU culling, also cull meshlet by meshlet (cluster culling) and
    /// print a `cluster cull:` line (meshlets after each test, triangles against object
    /// culling alone); with `--classify`, also write `NAME-meshlets.png` (every meshlet
    /// drawn with culling off in its verdict's colour: visible green, frustum red,
    /// back-facing purple, occluded blue, kept conservatively amber); with `--truth`, fail
    /// when a meshlet owning a pixel was culled.
    #[arg(long)]
    pub clusters: bool,
    /// Open a window and fly the city: WASD to move, Space/Ctrl up and down, Shift faster,
    /// the mouse with the left button held to look, F1 toggles culling, F2 pins the
    /// culling view (fly out to see what it kept), F3 shows the debug overlay, F4 freezes
    /// and explains (pins the culling view and keeps the overlay's figures of that frame), Alt + click
    /// selects the entity under the cursor in it, Esc quits.
    /// Every frame is drawn through the render graph into the window. With `--frames N` the
    /// window closes after N frames.
    #[arg(long)]
    pub window: bool,
    /// Show the debug overlay from the start (with `--window` F3 hides it): frame times,
    /// culling counters, GPU time per pass, memory and switches. Headless, it is drawn into
    /// every drawn frame and its PNGs, and the checks compare the colour before it (not
    /// with `--views 2`, `--post`, `--debug-boxes` or `--gpu-animate`, whose checks read the
    /// final image).
    #[arg(long)]
    pub hud: bool,
    /// With `--window`: pipelined frames (the default there): a render thread records and
    /// submits frame N while frame N + 1 simulates and culls; the picture shows a frame
    /// later. The headless run checks every frame against its own reference and stays serial.
    #[arg(long, conflicts_with = "serial")]
    pub pipelined: bool,
    /// With `--window`: serial frames (each submitted before the next one starts).
    #[arg(long)]
    pub serial: bool,
    /// With `--window`: how frames are presented (FIFO, with a log line, where the surface
    /// lacks the mode asked for).
    #[arg(long, value_enum, default_value_t = PresentChoice::Fifo)]
    pub present: PresentChoice,
    /// With `--window --frames N`: write the last frame's swapchain image as a PNG.
    #[arg(long, value_name = "FILE")]
    pub screenshot: Option<PathBuf>,
    /// With `--window --frames N`: ask the window for this size halfway through (tests
    /// resizing).
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    pub resize_to: Option<(u32, u32)>,
    /// With `--window`: show this graph image in place of the frame (`depth_prepass`,
    /// `hiz_depth:3` for a mip, any image of the frame's graph; the depths on a logarithmic
    /// scale); `V` in the window cycles through the frame, the depth and Hi-Z mips.
    #[arg(long, value_name = "IMAGE[:MIP]", value_parser = parse_debug_view)]
    pub debug_view: Option<renderer::DebugView>,
    /// Frames between report lines.
    #[arg(long, value_name = "N", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub report_every: u64,
    /// Which mesh entities get the `Culled` and `Occluded` tags: `marked` (only those carrying
    /// `VisibilityTagged`: the city marks only its pedestrians, whose animation is posed
    /// only while in view (`animation::PoseWhenSeen` reads the tags); its other systems and its
    /// colour classification read the Visibility resource, never tags, so few tag moves
    /// happen and memory stays flat) or `all` (the engine's default: every drawable
    /// entity, each transition an archetype move).
    #[arg(long, value_enum, value_name = "marked|all", default_value_t = TagChoice::Marked)]
    pub tags: TagChoice,
    /// Post-processes on every drawn frame, in order (`fog`, `outline`, comma-separated):
    /// users' passes at the engine's `after geometry` point (`samples/src/frame_passes/`).
    /// Every checked frame compares them with the CPU's fog and outline of the colour before
    /// them, and that colour with the unculled reference.
    #[arg(long, value_delimiter = ',', value_name = "fog,outline",
          value_parser = clap::builder::PossibleValuesParser::new(["fog", "outline"]))]
    pub post: Vec<String>,
    /// Every object's world box drawn as lines, green where the GPU's visibility bit is set and
    /// red where it is not (a user's pass reading the engine's buffers; GPU culling only).
    /// Every checked frame finds each line pixel inside the screen rectangle of a box whose bit
    /// has its colour.
    #[arg(long)]
    pub debug_boxes: bool,
    /// Shadows: a sun with four cascades and street lamps (spot lights) along the camera's
    /// street, the `--shadow-lights` that light most of the image casting; the Render stage culls every
    /// caster against every light view (on the GPU with GPU culling) and draws them into a
    /// shadow atlas. Every checked frame prints a `shadows:` line (casters per view before
    /// and after culling, draws, triangles, GPU ms of the cull and of the atlas) and is
    /// compared with a reference that draws every caster into every view; with `--truth` it
    /// also prints `dropped_casters N` (casters owning a texel of a light view that its
    /// culling left out; must be 0).
    #[arg(long)]
    pub shadows: bool,
    /// Split-screen: `2` adds a second camera flying another street the other way and draws
    /// the two side by side (left and right halves), each culled for itself; with `--truth`
    /// every view of every checked frame prints `frame N view V false_hidden X` (must be 0).
    /// On both backends (with GPU culling each view is judged against its own bits) and with
    /// `--shadows`. With `--stream` the districts around either camera load, every view's
    /// levels count as needed under `--budget`, and with `--truth` each streamed frame prints
    /// `frame N view V stand_in S` for the second view (whether an object it sees drew a
    /// stand-in; its reference draws the same ones). With `--post` the fog and outline run
    /// once per view over its half (checked against the CPU view by view), and with
    /// `--gpu-animate` both views see the bobbed objects; `--debug-boxes` draws each view's
    /// boxes through its camera, coloured by its own bits. No PNG is written; `--classify` and
    /// `--clusters` are refused (each refusal says why).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=2))]
    pub views: u32,
    /// `--views 2` with GPU culling: `on` (the city's default, the engine's is off) culls each
    /// window view by a dispatch of its own in each cull phase, each timed (the summary's
    /// `gpu ms pass gpu cull early view N`, and `cull early`/`cull late` on each view's
    /// frame line); `off` culls both by one dispatch per phase, timed together
    /// (`GpuCullSettings::per_view_dispatch`).
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    pub view_dispatch: Switch,
    /// A security camera on a rooftop renders into a 256x256 image shown on a billboard in the
    /// corner of the street camera's view (its material samples the image in the same frame);
    /// with `--truth` every view of every checked frame prints `frame N view V false_hidden X`
    /// (must be 0) and `differing_pixels`. With GPU culling the monitor's view is culled by
    /// its own two-phase GPU cull (judged against its own bits), the street view by the
    /// window's. With `--shadows` the
    /// monitor is lit with the street view's lights and atlas (the sun's cascades follow the
    /// street view) and judged by a reference shadowed the same way. With `--views 2` the
    /// billboard rides in the left half (the street camera's) and every view is judged. With
    /// `--stream` the districts around the rooftop camera load too and the monitor's reference
    /// takes the streamed meshes. It takes the users' passes (drawn over the window's views;
    /// with `--gpu-animate` the monitor's reference bobs the objects too) and, on the CPU
    /// backend, `--classify`; `--clusters` is refused with it (its check's frames have no
    /// image views).
    #[arg(long)]
    pub monitor: bool,
    /// With `--shadows`: how many lamps cast shadows at once (0 to 16).
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(0..=16))]
    pub shadow_lights: u32,
    /// With `--shadows`: cull the casters per light view (`on`) or draw every caster into
    /// every view (`off`, what culling saves).
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    pub shadow_culling: Switch,
    /// Every object bobs up and down, moved on the GPU by a user's pass before the cull (GPU
    /// culling only): the cull and the draw see the new places in the same frame. Every
    /// checked frame compares the GPU's heights with the CPU's and the image with the unculled
    /// reference bobbed alike.
    #[arg(long)]
    pub gpu_animate: bool,
    /// Instanced batching of the camera's draws (`ecs::RenderSettings::batch_draws`): one
    /// indirect command per (mesh, level of detail, material) (`on`), or one per object
    /// (`off`). Both draw the same image; the summary's `draw commands` row counts them.
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    pub batch: Switch,
    /// With `--cull gpu`: the GPU cull chooses the level of detail of chains of the error rule
    /// (`ecs::RenderSettings::gpu_lod_selection`, `on`) or draws the level the CPU chose
    /// (`off`). Both draw the same image; the summary's `gpu lod level` rows show the GPU's
    /// histogram beside the CPU's.
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    pub gpu_lod: Switch,
    /// How levels of detail are chosen: by each level's hand-over distance (`distance`, the
    /// city's default) or by each level's simplification error projected to pixels (`error`,
    /// `ecs::LodErrors` from the processed meshes: the rule the GPU cull can choose levels
    /// by, `--gpu-lod`).
    #[arg(long, value_enum, value_name = "distance|error", default_value_t = LodRule::Distance)]
    pub lod_rule: LodRule,
    /// Which per-object answers the Visibility stage keeps on the CPU
    /// (`ecs::RenderSettings::cpu_answers`): `every-frame` (the engine's default: the lists,
    /// and `state_of` read from them), `on-request` (no lists; `state_of` computed for the
    /// entity asked about) or `none`. The image is the same; the summary's Visibility-stage
    /// CPU time shows what the lists cost.
    #[arg(long, value_enum, value_name = "every-frame|on-request|none", default_value_t = AnswersChoice::EveryFrame)]
    pub cpu_answers: AnswersChoice,
    /// Cars drive and pedestrians walk (`on`) or the city holds still (`off`: the cars
    /// stand and the pedestrians are left out), for measuring what a frame costs when only
    /// the camera, or only the `--movers`, move.
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    pub world_motion: Switch,
    /// Percent of the mesh entities (root entities spread over the city: buildings, trees,
    /// props, cars) that bob up and down every frame, moved by a system writing their
    /// archetypes alone (0 to 100).
    #[arg(long, value_name = "PERCENT", default_value_t = 0.0, value_parser = parse_percent)]
    pub movers: f64,
    /// Stream the districts: their buildings and trees are written once to one `.glb` per
    /// district in `--stream-dir`, then loaded through the asset server while frames run as
    /// the camera nears them (`--stream-radius`, nearest first) and removed once it is far
    /// (needs a Vulkan device; the props, cars and pedestrians stay preloaded).
    #[arg(long)]
    pub stream: bool,
    /// Folder of the district files (default: `city-stream-SEED-OBJECTS` in the system's
    /// temporary folder); reused when the files are there.
    #[arg(long, value_name = "DIR", requires = "stream")]
    pub stream_dir: Option<PathBuf>,
    /// With `--stream`: districts whose ground square is within this many metres of a camera
    /// (any: the split-screen's second, the monitor's) are loaded; those farther than 1.25
    /// times it from every camera are removed.
    #[arg(long, value_name = "M", default_value_t = 250.0, requires = "stream")]
    pub stream_radius: f32,
    /// With `--stream`: load every district before the first frame (the loader waited for)
    /// and keep them all: the same meshes and objects as the streamed flight, preloaded, to
    /// measure streaming against.
    #[arg(long, requires = "stream", conflicts_with = "window")]
    pub preload: bool,
    /// With `--stream`: each frame first waits for the districts asked for before the frame
    /// before it (still loaded on the loader thread), so the flight loads the same districts
    /// on the same frames on any machine (tests, captures); not for timing.
    #[arg(long, requires = "stream")]
    pub stream_wait: bool,
    /// The GPU memory budget for meshes added while the game runs, in MiB
    /// (`ecs::RenderSettings::mesh_memory_budget`): levels no view needed lately are evicted
    /// (a mesh's coarsest level with its vertices too) and objects draw coarser levels, or
    /// their placeholder boxes, rather than go over it; districts added past it are admitted
    /// as placeholders.
    #[arg(long, value_name = "MiB")]
    pub budget: Option<f64>,
}

/// `--lod-rule`: how levels of detail are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LodRule {
    /// Each level's hand-over distance (`ecs::LodLevel::max_distance`).
    Distance,
    /// Each level's simplification error projected to pixels (`ecs::LodErrors`).
    Error,
}

/// `--cpu-answers`: the CPU's answer policy (`ecs::CpuAnswers`).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswersChoice {
    /// Every frame (`CpuAnswers::EveryFrame`).
    EveryFrame,
    /// On request (`CpuAnswers::OnRequest`).
    OnRequest,
    /// None (`CpuAnswers::None`).
    None,
}

impl AnswersChoice {
    /// The engine's policy for this choice.
    pub fn policy(self) -> ecs::CpuAnswers {
        match self {
            AnswersChoice::EveryFrame => ecs::CpuAnswers::EveryFrame,
            AnswersChoice::OnRequest => ecs::CpuAnswers::OnRequest,
            AnswersChoice::None => ecs::CpuAnswers::None,
        }
    }
}

/// `--tags`: the tag policy (`ecs::VisibilityTags`).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagChoice {
    /// Only entities carrying `VisibilityTagged` (`VisibilityTags::Marked`).
    Marked,
    /// Every drawable mesh entity (`VisibilityTags::All`).
    All,
}

impl TagChoice {
    /// The engine's policy for this choice.
    pub fn policy(self) -> ecs::VisibilityTags {
        match self {
            TagChoice::Marked => ecs::VisibilityTags::Marked,
            TagChoice::All => ecs::VisibilityTags::All,
        }
    }
}

/// `--cull`: which culling backend runs.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CullChoice {
    /// The CPU culler (SIMD frustum tests and a software occlusion buffer).
    Cpu,
    /// The GPU culler.
    Gpu,
    /// The GPU culler where the device supports it, else the CPU culler.
    Auto,
    /// No culling: every object is submitted.
    Off,
}

/// `--present`: the swapchain's present mode.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PresentChoice {
    /// Wait for vertical blank, never tear (always supported).
    Fifo,
    /// Replace the queued image, no tearing, lowest latency without a frame cap.
    Mailbox,
    /// Present at once (may tear).
    Immediate,
}

/// `on` or `off`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// Turned on.
    On,
    /// Turned off.
    Off,
}

/// `--checks`: which drawn frames are checked against the unculled reference.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckChoice {
    /// Every drawn frame.
    Every,
    /// Only the last frame.
    Last,
}

/// `--render`: which frames are drawn.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderChoice {
    /// Every frame.
    Every,
    /// Only the last frame.
    Last,
    /// No frame (statistics only).
    None,
}

/// Objects one block holds on average with the default layout (measured: about 31k objects
/// on 32 x 32 blocks, 806 on 5 x 5).
const OBJECTS_PER_BLOCK: f64 = 31.0;

impl CityOptions {
    /// `--render`, or its default: every frame with `--truth`, else the last.
    pub fn render_choice(&self) -> RenderChoice {
        self.render.unwrap_or(if self.truth { RenderChoice::Every } else { RenderChoice::Last })
    }

    /// The city for these options: as many blocks per side as make about `--objects`
    /// objects, with `--seed`.
    pub fn city_config(&self) -> CityConfig {
        let blocks = (self.objects as f64 / OBJECTS_PER_BLOCK).sqrt().round().max(1.0) as u32;
        CityConfig { blocks, seed: self.seed, ..CityConfig::default() }
    }
}

/// `--movers PERCENT`: a number from 0 to 100.
fn parse_percent(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|percent| (0.0..=100.0).contains(percent))
        .ok_or_else(|| format!("'{text}' is not a percent from 0 to 100"))
}

/// `--size WIDTHxHEIGHT`: each side from 1 to 16384 (the samples' one parser of sizes).
pub fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let (width, height) = text.split_once(['x', 'X']).ok_or_else(|| format!("'{text}' is not WIDTHxHEIGHT"))?;
    let number = |part: &str| {
        part.trim()
            .parse::<u32>()
            .ok()
            .filter(|&value| (1..=16384).contains(&value))
            .ok_or_else(|| format!("'{part}' in '{text}' is not a size from 1 to 16384"))
    };
    Ok((number(width)?, number(height)?))
}

/// `--debug-view IMAGE[:MIP]`.
fn parse_debug_view(text: &str) -> Result<renderer::DebugView, String> {
    let (image, mip) = match text.split_once(':') {
        Some((image, mip)) => (image, mip.parse().map_err(|_| format!("`{mip}` is not a mip level"))?),
        None => (text, 0),
    };
    if image.is_empty() {
        return Err(String::from("name an image of the frame's graph (depth_prepass, hiz_depth, ...)"));
    }
    // The engine's depths are reversed-Z: readable on a logarithmic scale.
    if [renderer::DEPTH_PREPASS, renderer::HIZ_DEPTH].contains(&image) {
        return Ok(renderer::DebugView::depth(image, mip));
    }
    Ok(renderer::DebugView { image: Some(image.to_owned()), mip, ..renderer::DebugView::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(arguments: &[&str]) -> Result<CityOptions, clap::Error> {
        CityOptions::try_parse_from(std::iter::once("city").chain(arguments.iter().copied()))
    }

    #[test]
    fn the_contract_parses() {
        let options = parse(&[
            "--frames",
            "120",
            "--size",
            "640x360",
            "--objects",
            "1000",
            "--seed",
            "7",
            "--threads",
            "2",
            "--cull",
            "off",
            "--occlusion",
            "off",
            "--camera-path",
            "path.json",
            "--truth",
            "--classify",
            "--validate",
            "--out",
            "images",
            "--window",
        ])
        .expect("the contract's options");
        assert_eq!((options.frames, options.size, options.objects, options.seed), (120, (640, 360), 1000, 7));
        assert_eq!((options.threads, options.cull, options.occlusion), (Some(2), CullChoice::Off, Switch::Off));
        assert!(options.truth && options.classify && options.validate && options.window);
        assert_eq!(options.out, PathBuf::from("images"));
        assert_eq!(options.tags, TagChoice::Marked, "the city's default: no tag moves");
        assert_eq!(parse(&["--tags", "all"]).expect("a policy").tags.policy(), ecs::VisibilityTags::All);
        assert_eq!(options.render_choice(), RenderChoice::Every, "--truth draws every frame");
        assert_eq!(options.camera_path, Some(PathBuf::from("path.json")));
        assert_eq!(options.checks, CheckChoice::Every, "every drawn frame is checked by default");
        assert_eq!(parse(&["--checks", "last"]).expect("a choice").checks, CheckChoice::Last);
        assert!(parse(&["--checks", "some"]).is_err());
    }

    #[test]
    fn cpu_answers_default_to_every_frame_and_name_each_policy() {
        assert_eq!(parse(&[]).expect("no options").cpu_answers.policy(), ecs::CpuAnswers::EveryFrame);
        for (name, policy) in [
            ("every-frame", ecs::CpuAnswers::EveryFrame),
            ("on-request", ecs::CpuAnswers::OnRequest),
            ("none", ecs::CpuAnswers::None),
        ] {
            assert_eq!(parse(&["--cpu-answers", name]).expect("a policy").cpu_answers.policy(), policy);
        }
        assert!(parse(&["--cpu-answers", "sometimes"]).is_err());
    }

    #[test]
    fn defaults_give_about_100k_objects_and_bad_values_are_errors() {
        let options = parse(&[]).expect("no options");
        assert_eq!((options.objects, options.size), (100_000, (1280, 720)));
        assert_eq!((options.render_choice(), &options.out), (RenderChoice::Last, &PathBuf::from(".")));
        assert_eq!(options.city_config().blocks, 57);
        assert_eq!(parse(&["--objects", "1000"]).unwrap().city_config().blocks, 6);
        assert_eq!(parse(&["--objects", "1000000"]).unwrap().city_config().blocks, 180);
        for bad in [&["--size", "640"][..], &["--size", "0x10"], &["--objects", "10"], &["--cull", "fast"]] {
            assert!(parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn debug_views_name_an_image_and_a_mip_and_show_depths_on_a_log_scale() {
        let depth = parse_debug_view("hiz_depth:3").expect("parses");
        assert_eq!(depth, renderer::DebugView::depth(renderer::HIZ_DEPTH, 3));
        let mask = parse_debug_view("my_mask").expect("parses");
        assert_eq!((mask.image.as_deref(), mask.mip, mask.log_decades), (Some("my_mask"), 0, 0.0));
        assert!(parse_debug_view("hiz_depth:x").is_err());
        assert!(parse_debug_view(":2").is_err());
    }
}
