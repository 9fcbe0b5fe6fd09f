//! The skirmish: a game's world as a benchmark scene (see `samples::skirmish`), run beside the
//! city at the same object count so that every stage's cost reads as a ratio to the city's.
//!
//! Run: `cargo run --release -p samples --bin skirmish -- --render none --cull cpu --threads 2`.
//! The city's conventions hold: `--frames`, `--size`, `--render every|last|none`, `--cull
//! cpu|gpu|auto`, `--out DIR` (`skirmish.png`, `stats.json` and the city's `city-stats.json`),
//! a line every `--report-every` frames and the end-of-run summary. Then the comparison: the
//! city built with the same object count runs the same frames on as many threads, the two
//! taking turns `--turns N` frames at a time (both see the same load of a shared machine), and
//! a table gives each stage's and each costly system's median and p95 in both and the ratio of
//! the medians. Every checked frame is drawn again with culling off (the images must be
//! identical, shadows included); `--truth` draws the object-id image (`false_hidden 0`) and
//! each light view's (`dropped_casters 0`). `--still units,torches,camera` holds what moves.

/// Every heap allocation, in the Tracy capture's memory view (feature `profile-memory`).
#[cfg(feature = "profile-memory")]
#[global_allocator]
static ALLOCATOR: runtime::profiling::TrackedAllocator = runtime::profiling::tracked_allocator();

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use culling::{CullingBackend, ShadowViews, Visibility};
use ecs::Viewport;
use render_graph::{vk, DeviceConfig, GpuDevice};
use renderer::{install_render_to, BitsReadback, RenderReport, RenderSetup};
use renderer::{lock_capture, HeadlessTarget, SharedCapture};
use runtime::App;
use samples::city::check::{check_frame, CheckRequest, Checked};
use samples::city::memory::{self, MemoryReport};
use samples::city::rendering::SKY;
use samples::city::summary::{self, FrameRecord};
use samples::city::{RenderChoice, Switch};
use samples::mesh_render::MeshRenderer;
use samples::skirmish::compare::{city_app, run_measured, side_by_side};
use samples::skirmish::shadow_work::ShadowWorkTotals;
use samples::skirmish::{self, skirmish_app, SkirmishConfig, SkirmishLibrary, SkirmishState, Still};

/// Which backend culls.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum CullChoice {
    Cpu,
    Gpu,
    Auto,
}

/// What `--still` holds.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Hold {
    /// Every unit (the torch bearers too).
    Units,
    /// The torch bearers (and so their lights).
    Torches,
    /// The camera, high above the map.
    Camera,
}

/// The skirmish's command line.
#[derive(Parser, Clone, Debug)]
#[command(
    name = "skirmish",
    version,
    about = "A game's world (props with levels of detail, walking units carrying parented items, volleys of arrows, torches casting shadows, a zooming camera) measured against the city"
)]
struct SkirmishOptions {
    /// Mesh entities at any time (the ground, the units and their items, the arrows in
    /// flight; static props for the rest). The city of the comparison has as many.
    #[arg(long, value_name = "N", default_value_t = 160_000, value_parser = clap::value_parser!(u64).range(1_000..=1_000_000))]
    objects: u64,
    /// Units walking the map, each carrying a parented pack or torch.
    #[arg(long, value_name = "N", default_value_t = 4_000)]
    units: u64,
    /// Units carrying a torch (a point light casting shadows, parented to the torch).
    #[arg(long, value_name = "N", default_value_t = 12, value_parser = clap::value_parser!(u64).range(0..=16))]
    torches: u64,
    /// Arrows fired, and as many despawned, every frame.
    #[arg(long, value_name = "N", default_value_t = 200)]
    volley: u64,
    /// Frames an arrow flies.
    #[arg(long, value_name = "N", default_value_t = 12, value_parser = clap::value_parser!(u64).range(1..))]
    arrow_frames: u64,
    /// What stands still: any of units, torches, camera (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "WHAT")]
    still: Vec<Hold>,
    /// Whether the sun and the torches cast shadows.
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    shadows: Switch,
    /// The shadow budget: most torch shadow views a frame (six a torch), the torches ranked
    /// by their share of the image (`ecs::ShadowSettings::max_light_views`; 96: no budget).
    #[arg(long, value_name = "N", default_value_t = ecs::DEFAULT_MAX_LIGHT_VIEWS, value_parser = clap::value_parser!(u32).range(0..=96))]
    shadow_views: u32,
    /// Frames to run (the camera zooms down and back up every 600).
    #[arg(long, value_name = "N", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    frames: u64,
    /// Size of the view and of the images.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = samples::city::options::parse_size)]
    size: (u32, u32),
    /// Which backend culls (auto: the GPU where a device is usable).
    #[arg(long, value_enum, default_value_t = CullChoice::Auto)]
    cull: CullChoice,
    /// Which frames are drawn (default: every frame with --truth, else the last).
    #[arg(long, value_enum)]
    render: Option<RenderChoice>,
    /// Check each drawn frame against the object-id truth (`false_hidden`) and each light
    /// view against its own (`dropped_casters`).
    #[arg(long)]
    truth: bool,
    /// Validation layer with synchronization checks; any message fails the run.
    #[arg(long)]
    validate: bool,
    /// The city at the same object count, in the same run (`off`: the skirmish alone).
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    city: Switch,
    /// The city's street lamps casting shadows, with its sun (0: the plain city, no lights).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=16))]
    city_shadows: u32,
    /// Frames each scene runs before the other takes its turn.
    #[arg(long, value_name = "N", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    turns: u64,
    /// Where `skirmish.png`, `stats.json` and `city-stats.json` go.
    #[arg(long, value_name = "DIR", default_value = ".")]
    out: std::path::PathBuf,
    /// The seed of everything random.
    #[arg(long, value_name = "S", default_value_t = SkirmishConfig::default().seed)]
    seed: u64,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    /// Print a line every N frames.
    #[arg(long, value_name = "N", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    report_every: u64,
    /// Instanced batching of the camera's draws (`ecs::RenderSettings::batch_draws`), in the
    /// skirmish and the city alike: one command per (mesh, level of detail, material) (`on`)
    /// or per object (`off`); the summary's `draw commands` row counts them.
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    batch: Switch,
}

/// The skirmish's renderer and the checker that draws its frames again with culling off.
struct Rendering {
    capture: SharedCapture,
    checker: MeshRenderer,
    on_device: bool,
}

/// The city of the comparison: its app, and the capture its drawn frames go to.
struct CityRun {
    app: App,
    capture: Option<SharedCapture>,
    records: Vec<FrameRecord>,
}

fn main() -> ExitCode {
    samples::init_logging();
    let options = SkirmishOptions::parse();
    if options.validate {
        // Read by `DeviceConfig::default` when the renderer makes its device.
        std::env::set_var("ENGINE_VALIDATION", "1");
    }
    let config = SkirmishConfig {
        objects: options.objects as usize,
        units: options.units as usize,
        torches: options.torches as usize,
        volley: options.volley as usize,
        arrow_frames: options.arrow_frames as usize,
        still: Still {
            units: options.still.contains(&Hold::Units),
            torches: options.still.contains(&Hold::Torches),
            camera: options.still.contains(&Hold::Camera),
        },
        shadows: options.shadows == Switch::On,
        seed: options.seed,
        ..SkirmishConfig::default()
    };
    if config.props() == 0 {
        eprintln!(
            "skirmish: --objects {} leaves no room for props beside {} units, their items and {} arrows",
            config.objects,
            config.units,
            config.arrows()
        );
        return ExitCode::FAILURE;
    }
    if let Err(error) = std::fs::create_dir_all(&options.out) {
        eprintln!("skirmish: cannot create {}: {error}", options.out.display());
        return ExitCode::FAILURE;
    }
    let (width, height) = options.size;
    let threads = options
        .threads
        .map_or_else(|| std::thread::available_parallelism().map_or(1, usize::from), |threads| threads as usize);
    let built = Instant::now();
    let (mut app, library, skirmish) = skirmish_app(config, threads, Viewport { width, height });
    app.resource_mut::<ecs::ShadowSettings>().max_light_views = options.shadow_views;
    app.resource_mut::<ecs::RenderSettings>().batch_draws = options.batch == Switch::On;
    println!(
        "skirmish: {} mesh entities on a {:.0} m map: {} props, {} units carrying a pack or torch, {} torches casting {}, {} arrows fired and despawned a frame ({} in flight); built in {:.1} ms",
        skirmish.objects,
        skirmish.field,
        skirmish.props,
        config.units,
        config.torch_bearers(),
        if config.shadows { "shadows" } else { "no shadows" },
        config.volley,
        config.arrows(),
        built.elapsed().as_secs_f64() * 1e3
    );

    let render = options.render.unwrap_or(if options.truth { RenderChoice::Every } else { RenderChoice::Last });
    let backend = match options.cull {
        CullChoice::Cpu => CullingBackend::Cpu,
        CullChoice::Gpu => CullingBackend::Gpu,
        CullChoice::Auto => CullingBackend::Auto,
    };
    let extent = vk::Extent2D { width, height };
    let mut device = None;
    if render != RenderChoice::None {
        match GpuDevice::new(&DeviceConfig { app_name: "skirmish".into(), ..DeviceConfig::default() }) {
            Ok(made) => device = Some(Arc::new(made)),
            Err(reason) if options.cull == CullChoice::Gpu => {
                eprintln!("skirmish: --cull gpu needs a usable Vulkan device: {reason}");
                return ExitCode::FAILURE;
            }
            Err(reason) => {
                println!("render: no usable Vulkan device ({reason}); culling on the CPU path, no image drawn")
            }
        }
    }
    let mut rendering = None;
    if let Some(device) = &device {
        match install_rendering(&mut app, device, &library, &config, extent, backend, options.truth) {
            Ok(installed) => rendering = Some(installed),
            Err(error) => {
                eprintln!("skirmish: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    let mut city = None;
    if options.city == Switch::On {
        let started = Instant::now();
        let (mut city_app, meshes, city_built) =
            city_app(skirmish.objects, threads, Viewport { width, height }, options.city_shadows);
        city_app.resource_mut::<ecs::RenderSettings>().batch_draws = options.batch == Switch::On;
        let mut capture = None;
        if let Some(device) = &device {
            let (target, shared) = HeadlessTarget::drawing();
            let frames = samples::city::rendering::CityFrames {
                backend,
                extent,
                bits: BitsReadback::Lagged,
                passes: Vec::new(),
                shadows: options.city_shadows > 0,
            };
            if let Err(error) =
                samples::city::rendering::install(&mut city_app, device, &meshes.library, Box::new(target), frames)
            {
                eprintln!("skirmish: the city's rendering: {error}");
                return ExitCode::FAILURE;
            }
            capture = Some(shared);
        }
        println!(
            "city: {} mesh entities on {} blocks{}, built in {:.1} ms, run in turns of {} frames with the skirmish",
            city_built.mesh_entities,
            samples::skirmish::compare::city_config(skirmish.objects).blocks.pow(2),
            if options.city_shadows > 0 {
                format!(", a sun and street lamps ({} casting)", options.city_shadows)
            } else {
                String::new()
            },
            started.elapsed().as_secs_f64() * 1e3,
            options.turns
        );
        city = Some(CityRun { app: city_app, capture, records: Vec::with_capacity(options.frames as usize) });
    }
    let on_device = rendering.as_ref().is_some_and(|rendering| rendering.on_device);
    println!(
        "jobs: {threads} threads; culling: {}; drawing: {}",
        if on_device { "GPU (two-phase Hi-Z)" } else { "CPU path" },
        match (render, &rendering) {
            (RenderChoice::None, _) | (_, None) => "none",
            (RenderChoice::Every, _) => "every frame",
            (RenderChoice::Last, _) => "the last frames",
        }
    );
    println!(
        "{:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9}",
        "frame", "height", "objects", "visible", "frustum", "occluded", "frame ms", "xform ms", "visib ms", "shadow ms"
    );

    let drawn = |frame: u64| match render {
        RenderChoice::Every => true,
        RenderChoice::Last => frame + 2 >= options.frames,
        RenderChoice::None => false,
    };
    let mut status = ExitCode::SUCCESS;
    let mut records = Vec::with_capacity(options.frames as usize);
    let mut memory = MemoryReport::default();
    memory.after_setup(memory::sample());
    let mut invariant_frames = 0;
    let mut child_error = 0.0f32;
    let mut dropped_total = None;
    let mut shadow_work = ShadowWorkTotals::default();
    while app.frames_run() < options.frames {
        let turn_end = (app.frames_run() + options.turns).min(options.frames);
        while app.frames_run() < turn_end {
            // Frames run once this one has (the frame's index is one less).
            let next = app.frames_run() + 1;
            let last = next == options.frames;
            let checked = render == RenderChoice::Every || (render == RenderChoice::Last && last);
            if let Some(rendering) = &rendering {
                let mut capture = lock_capture(&rendering.capture);
                capture.draw = drawn(next);
                capture.capture = checked;
            }
            let mut record = run_measured(&mut app);
            let frame = app.last_frame_index().expect("a frame was run");
            shadow_work.add(&app.resource::<ShadowViews>());
            match skirmish::invariants::check(app.world(), &app.resource::<SkirmishState>()) {
                Ok(found) => {
                    invariant_frames += 1;
                    child_error = child_error.max(found.child_error);
                }
                Err(error) => {
                    eprintln!("skirmish: frame {frame}: {error}");
                    return ExitCode::FAILURE;
                }
            }
            let report = app.resources().get::<RenderReport>().map(|report| report.clone()).unwrap_or_default();
            if let Some(error) = &report.error {
                eprintln!("render: frame {frame}: {error}");
                return ExitCode::FAILURE;
            }
            if let (true, Some(rendering)) = (checked, &mut rendering) {
                let mut request = CheckRequest { truth: options.truth, ..CheckRequest::default() };
                if last {
                    request.pngs.push(options.out.join("skirmish.png"));
                }
                let visibility = app.resource::<Visibility>();
                let shadows = config.shadows.then(|| app.resource::<ShadowViews>());
                let checked = {
                    let capture = lock_capture(&rendering.capture);
                    check_frame(
                        &mut rendering.checker,
                        &capture,
                        &visibility,
                        &report,
                        app.world(),
                        &library.library,
                        shadows.as_deref(),
                        app.resources().get::<animation::SkinPalette>().as_deref(),
                        &request,
                    )
                };
                match checked {
                    Ok(Checked { frame: check, truth, .. }) => {
                        println!(
                            "render: frame {frame} drew {} of {} drawable objects, {} shadow views ({} caster draws); culling on vs off: {}",
                            check.drawn,
                            check.drawn_without_culling,
                            report.shadows.views.len(),
                            report.shadows.draws(),
                            match check.differing_pixels {
                                0 => String::from("identical images"),
                                pixels => format!("{pixels} pixels differ: an object or a shadow was wrongly left out"),
                            }
                        );
                        if check.differing_pixels != 0 {
                            status = ExitCode::FAILURE;
                        }
                        if let Some(truth) = &truth {
                            println!("frame {frame} false_hidden {}", truth.false_hidden);
                            if truth.false_hidden != 0 {
                                status = ExitCode::FAILURE;
                            }
                            if let Some(dropped) = truth.dropped_casters {
                                println!("frame {frame} dropped_casters {dropped}");
                                *dropped_total.get_or_insert(0) += dropped;
                                if dropped != 0 {
                                    status = ExitCode::FAILURE;
                                }
                            }
                        }
                        record.record_check(&check, truth.as_ref());
                        record.record_commands(&report);
                    }
                    Err(error) => {
                        eprintln!("render: frame {frame}: {error}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            if next % options.report_every == 0 || last {
                let visibility = app.resource::<Visibility>();
                let height = visibility.view().map_or(f32::NAN, |view| view.position.y);
                let stage = |name: &str| record.stage_ms.get(name).copied().unwrap_or(0.0);
                let shadow_ms = record.system_ms.get(&format!("Visibility/{}", culling::SHADOW_VIEWS_SYSTEM)).copied();
                println!(
                    "{:>6} {:>8.1} {:>8} {:>8} {:>8} {:>8} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
                    frame,
                    height,
                    record.objects,
                    record.visible,
                    record.frustum_rejected,
                    record.occluded,
                    record.frame_ms,
                    stage("Transform"),
                    stage("Visibility"),
                    shadow_ms.unwrap_or(0.0)
                );
            }
            if next == 100 || last {
                memory.after_frame(next, memory::sample());
            }
            records.push(record);
        }
        if let Some(city) = &mut city {
            while city.app.frames_run() < turn_end {
                let next = city.app.frames_run() + 1;
                if let Some(capture) = &city.capture {
                    lock_capture(capture).draw = drawn(next);
                }
                city.records.push(run_measured(&mut city.app));
                if let Some(error) = city.app.resources().get::<RenderReport>().and_then(|report| report.error.clone())
                {
                    eprintln!("render: the city's frame {}: {error}", next - 1);
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    if let Some(rendering) = &rendering {
        let problems = rendering.checker.validation_problems();
        if !problems.is_empty() {
            eprintln!("render: validation reported problems: {problems:?}");
            status = ExitCode::FAILURE;
        }
    }

    print!("{}", summary::table(&records));
    println!("{}", memory.line());
    let state = app.resource::<SkirmishState>();
    println!(
        "invariants: {invariant_frames} frames: {} arrows fired and {} despawned, {} in flight; {} units on their rounds, every child on its parent (largest error {child_error:.1e})",
        state.fired,
        state.despawned,
        state.arrows.len(),
        state.units.len()
    );
    drop(state);
    for line in [shadow_work.line(), shadow_work.budget_line()].into_iter().flatten() {
        println!("{line}");
    }
    if let Some(dropped) = dropped_total {
        println!("shadows: {dropped} dropped casters over the checked frames");
    }
    let path = options.out.join("stats.json");
    if let Err(error) = summary::write_stats_json(&path, &records, &memory) {
        eprintln!("stats: cannot write {}: {error}", path.display());
        status = ExitCode::FAILURE;
    }
    let (frame_ms, _, _) = summary::spread(&records.iter().map(|record| record.frame_ms).collect::<Vec<_>>());
    println!("summary: {} frames, median frame {frame_ms:.3} ms, {} objects", records.len(), skirmish.objects);
    if let Some(city) = &city {
        let path = options.out.join("city-stats.json");
        if let Err(error) = summary::write_stats_json(&path, &city.records, &MemoryReport::default()) {
            eprintln!("stats: cannot write {}: {error}", path.display());
            status = ExitCode::FAILURE;
        }
        print!("{}", side_by_side(&records, &city.records));
    }
    status
}

/// The skirmish's rendering: the Render stage draws into a headless target (with the sun's and
/// torches' shadows), and a checker on the same device draws the checked frames again with
/// culling off.
fn install_rendering(
    app: &mut App,
    device: &Arc<GpuDevice>,
    library: &SkirmishLibrary,
    config: &SkirmishConfig,
    extent: vk::Extent2D,
    backend: CullingBackend,
    truth: bool,
) -> Result<Rendering, String> {
    // Room for the world and the slots a frame's spawns take before its despawns free theirs.
    let capacity = (config.objects + config.volley * 2 + 64) as u32;
    let (target, capture) = HeadlessTarget::drawing();
    let setup = RenderSetup {
        shadows: config.shadows,
        backend,
        device: Some(Arc::clone(device)),
        extent,
        capacity,
        meshes: library.library.clone(),
        clear_color: SKY,
        // The truth needs each frame's own GPU answer (a wait per frame); otherwise the answer
        // comes a frame late and the frames overlap, as in a game.
        bits: if truth { BitsReadback::Wait } else { BitsReadback::Lagged },
        passes: Vec::new(),
    };
    let choice = install_render_to(app, setup, Some(Box::new(target))).map_err(|error| error.to_string())?;
    if let Some(error) = &app.resource::<RenderReport>().error {
        return Err(format!("rendering could not be set up: {error}"));
    }
    let atlas = if config.shadows { app.resource::<ecs::ShadowSettings>().atlas_resolution } else { 0 };
    let checker = MeshRenderer::with_shadows(
        Arc::clone(device),
        (extent.width, extent.height),
        capacity,
        library.library.clone(),
        SKY,
        atlas,
    )
    .map_err(|error| error.to_string())?;
    Ok(Rendering { capture, checker, on_device: choice.on_device })
}
