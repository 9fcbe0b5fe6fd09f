//! The stress scene: a world that moves, spawns and despawns every frame (see
//! `samples::stress`), culled and drawn through the engine's one-call rendering, each drawn
//! frame checked.
//!
//! Run: `cargo run --release -p samples --bin stress -- --objects 100000 --moving 0.3 --churn
//! 500 --cull gpu --truth --validate`. The city's conventions hold: `--frames`, `--size`,
//! `--render every|last|none`, `--out DIR` (`stress.png` and `stats.json`), the per-frame lines
//! and the end-of-run summary. Every checked frame is drawn again with culling off (the images
//! must be identical); `--truth` also draws the object-id image (`false_hidden` must be 0) and
//! reads the GPU scene's buffers back, comparing every slot with a from-scratch upload of the
//! same world (`scene_mismatches` must be 0).
//!
//! `--window` shows the same world in a window (the city's keys: WASD and the mouse fly the
//! camera, which leaves its path for it; F1 culling, F2 freeze, V debug views, F3 the debug
//! overlay, Alt + click picks); `--hud` opens the overlay from the start. It runs until closed,
//! or for `--frames` when given (`--screenshot IMAGE.png` then writes the last frame).

/// Every heap allocation, in the Tracy capture's memory view (feature `profile-memory`).
#[cfg(feature = "profile-memory")]
#[global_allocator]
static ALLOCATOR: runtime::profiling::TrackedAllocator = runtime::profiling::tracked_allocator();

use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, ValueEnum};
use culling::{CullingBackend, Visibility};
use ecs::{RenderSettings, Viewport};
use render_graph::{vk, DeviceConfig, GpuDevice};
use renderer::{install_render_to, BitsReadback, RenderReport, RenderSetup};
use renderer::{lock_capture, HeadlessTarget};
use runtime::App;
use samples::city::check::{check_frame, CheckRequest, Checked};
use samples::city::memory::{self, MemoryReport};
use samples::city::summary::{self, FrameRecord};
use samples::city::{RenderChoice, Switch};
use samples::mesh_render::MeshRenderer;
use samples::scene_check::{compare_scene, expected_scene, lock_copy, SceneCheckTarget};
use samples::stress::{build_stress, StressCamera, StressConfig, StressMeshes};
use samples::window::run::WindowOptions;

/// The background the frames are cleared to.
const CLEAR: [f32; 4] = [0.05, 0.06, 0.08, 1.0];

/// Which backend culls.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum CullChoice {
    Cpu,
    Gpu,
    Auto,
}

/// Which drawn frames are checked.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum CheckChoice {
    Every,
    Last,
}

/// The stress scene's command line.
#[derive(Parser, Clone, Debug)]
#[command(name = "stress", version, about = "A world that moves, spawns and despawns every frame, culled and checked")]
struct StressOptions {
    /// Objects in the world at any time (bullets, ships and turrets included).
    #[arg(long, value_name = "N", default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    objects: u64,
    /// Share of the objects that move every frame, 0 to 1.
    #[arg(long, value_name = "F", default_value_t = 0.3, value_parser = parse_share)]
    moving: f32,
    /// Bullets spawned, and as many despawned, every frame.
    #[arg(long, value_name = "N", default_value_t = 500)]
    churn: u64,
    /// Objects given another mesh and colour each frame (one in eight also hidden or shown).
    #[arg(long, value_name = "N", default_value_t = StressConfig::default().restyle as u64)]
    restyle: u64,
    /// Turrets moved to another ship each frame.
    #[arg(long, value_name = "N", default_value_t = StressConfig::default().reparent as u64)]
    reparent: u64,
    /// Frames to run.
    #[arg(long, value_name = "N", default_value_t = 300)]
    frames: u64,
    /// Image size.
    #[arg(long, value_name = "WxH", default_value = "640x360", value_parser = samples::city::options::parse_size)]
    size: (u32, u32),
    /// Which backend culls (auto: the GPU where a device is usable).
    #[arg(long, value_enum, default_value_t = CullChoice::Auto)]
    cull: CullChoice,
    /// GPU occlusion culling (the GPU backend's Hi-Z test).
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    occlusion: Switch,
    /// Which frames are drawn and checked (default: every frame with --truth, else the last).
    #[arg(long, value_enum)]
    render: Option<RenderChoice>,
    /// Which drawn frames are checked against the same frame drawn with culling off (default:
    /// every drawn frame with --truth, else the last): `--render every --check last` draws
    /// every frame at the engine's own pace.
    #[arg(long, value_enum)]
    check: Option<CheckChoice>,
    /// Check each drawn frame against the object-id truth and the GPU scene against a
    /// from-scratch upload; prints `false_hidden` and `scene_mismatches` per frame.
    #[arg(long)]
    truth: bool,
    /// Validation layer with synchronization checks; any message fails the run.
    #[arg(long)]
    validate: bool,
    /// Where `stress.png` and `stats.json` go.
    #[arg(long, value_name = "DIR", default_value = ".")]
    out: std::path::PathBuf,
    /// The seed of everything random.
    #[arg(long, value_name = "S", default_value_t = StressConfig::default().seed)]
    seed: u64,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    /// Print a line every N frames.
    #[arg(long, value_name = "N", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    report_every: u64,
    /// Show the world in a window (until it closes, or for `--frames` when given).
    #[arg(long)]
    window: bool,
    /// With `--window`: open the debug overlay from the start (F3 shows or hides it).
    #[arg(long, requires = "window")]
    hud: bool,
    /// With `--window` and `--frames`: write the last frame's picture here.
    #[arg(long, value_name = "IMAGE.png", requires = "window")]
    screenshot: Option<std::path::PathBuf>,
    /// Object slots the renderer starts with (`RenderSetup::capacity`; it grows, doubling, in
    /// the frames that need more). Default: room for the world and a frame's churn.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    capacity: Option<u32>,
}

fn parse_share(text: &str) -> Result<f32, String> {
    text.parse::<f32>()
        .ok()
        .filter(|share| (0.0..=1.0).contains(share))
        .ok_or_else(|| format!("'{text}' is not a share from 0 to 1"))
}

/// The renderer, its checker and what its target copies out.
struct Rendering {
    capture: renderer::SharedCapture,
    scene_copy: samples::scene_check::SharedSceneCopy,
    scene_reads: Arc<std::sync::atomic::AtomicBool>,
    checker: MeshRenderer,
    on_device: bool,
}

/// `--window`: the world in a window. The camera leaves its fly-over path (its
/// `StressCamera` marker is taken away) so the window's fly camera moves it.
fn run_window(
    mut app: App,
    library: &renderer::MeshLibrary,
    options: &StressOptions,
    frames_given: bool,
    backend: CullingBackend,
) -> ExitCode {
    if options.screenshot.is_some() && !frames_given {
        eprintln!("stress: --screenshot needs --frames N (the last frame is the screenshot)");
        return ExitCode::FAILURE;
    }
    let on_path: Vec<_> =
        app.world().query::<(runtime::hecs::Entity, &StressCamera)>().iter().map(|(entity, _)| entity).collect();
    for camera in on_path {
        let _ = app.world_mut().remove_one::<StressCamera>(camera);
    }
    let window_options = WindowOptions {
        frames: frames_given.then_some(options.frames),
        screenshot: options.screenshot.clone(),
        hud: options.hud,
        ..WindowOptions::new("stress", options.size, backend)
    };
    let outcome = samples::window::run::run(app, library, window_options);
    samples::window::run::WindowSummary::report(outcome, "stress", options.screenshot.as_deref())
}

fn main() -> ExitCode {
    samples::init_logging();
    let matches = StressOptions::command().get_matches();
    let options = StressOptions::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
    let frames_given = matches.value_source("frames") == Some(ValueSource::CommandLine);
    if options.validate {
        // Read by `DeviceConfig::default` when the renderer makes its device.
        std::env::set_var("ENGINE_VALIDATION", "1");
    }
    let (width, height) = options.size;
    let mut app = match options.threads {
        Some(threads) => App::with_threads(threads as usize),
        None => App::new(),
    };
    culling::install(&mut app);
    app.set_fixed_delta(Some(1.0 / 60.0));
    app.insert_resource(Viewport { width, height });
    app.resource_mut::<RenderSettings>().visibility_tags = ecs::VisibilityTags::Marked;
    if let Err(error) = std::fs::create_dir_all(&options.out) {
        eprintln!("stress: cannot create {}: {error}", options.out.display());
        return ExitCode::FAILURE;
    }
    let config = StressConfig {
        objects: options.objects as usize,
        moving: options.moving,
        churn: options.churn as usize,
        restyle: options.restyle as usize,
        reparent: options.reparent as usize,
        seed: options.seed,
        ..StressConfig::default()
    };
    let built = Instant::now();
    let objects = build_stress(&mut app, config);
    println!(
        "stress: {objects} mesh entities on a {:.0} m field ({:.0}% moving, {} bullets fired and {} despawned a frame), built in {:.1} ms",
        config.field(),
        config.moving * 100.0,
        config.churn,
        config.churn,
        built.elapsed().as_secs_f64() * 1e3
    );
    let render = options.render.unwrap_or(if options.truth { RenderChoice::Every } else { RenderChoice::Last });
    let library = StressMeshes::library();
    let backend = match options.cull {
        CullChoice::Cpu => CullingBackend::Cpu,
        CullChoice::Gpu => CullingBackend::Gpu,
        CullChoice::Auto => CullingBackend::Auto,
    };
    if options.window {
        return run_window(app, &library, &options, frames_given, backend);
    }
    let mut rendering = None;
    if render != RenderChoice::None {
        let device = match GpuDevice::new(&DeviceConfig { app_name: "stress".into(), ..DeviceConfig::default() }) {
            Ok(device) => Some(Arc::new(device)),
            Err(reason) if options.cull == CullChoice::Gpu => {
                eprintln!("stress: --cull gpu needs a usable Vulkan device: {reason}");
                return ExitCode::FAILURE;
            }
            Err(reason) => {
                println!("render: no usable Vulkan device ({reason}); culling on the CPU path, no image drawn");
                None
            }
        };
        if let Some(device) = device {
            // Room for the world and the slots a frame's spawns take before its despawns free
            // theirs, unless asked to start smaller (the renderer grows).
            let room = objects as u32 + config.churn as u32 * 2 + 64;
            let capacity = options.capacity.unwrap_or(room);
            let extent = vk::Extent2D { width, height };
            let (headless, capture) = HeadlessTarget::drawing();
            // The check reads back every slot of the world, however small the renderer starts.
            let (target, scene_copy) = SceneCheckTarget::new(&device, room.max(capacity), Some(Box::new(headless)));
            let scene_reads = target.reads();
            scene_reads.store(options.truth, Ordering::Relaxed);
            let setup = RenderSetup {
                shadows: false,
                backend,
                device: Some(Arc::clone(&device)),
                extent,
                capacity,
                meshes: library.clone(),
                clear_color: CLEAR,
                // The truth needs each frame's own GPU answer (a wait per frame); otherwise the
                // answer comes a frame late and the frames overlap, as in a game.
                bits: if options.truth { BitsReadback::Wait } else { BitsReadback::Lagged },
                passes: Vec::new(),
            };
            let installed = install_render_to(&mut app, setup, Some(Box::new(target)))
                .map_err(|error| error.to_string())
                .and_then(|choice| match &app.resource::<RenderReport>().error {
                    Some(error) => Err(format!("rendering could not be set up: {error}")),
                    None => Ok(choice),
                })
                .and_then(|choice| {
                    renderer::truth::ReferenceRenderer::with_device(
                        device,
                        width,
                        height,
                        capacity,
                        library.clone(),
                        CLEAR,
                    )
                    .map(|checker| (choice, MeshRenderer::from(checker)))
                    .map_err(|error| error.to_string())
                });
            if let Some(control) = app.resources().get::<renderer::GpuCullControl>() {
                let mut settings = control.settings.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                settings.occlusion = options.occlusion == Switch::On;
            }
            match installed {
                Ok((choice, checker)) => {
                    rendering =
                        Some(Rendering { capture, scene_copy, scene_reads, checker, on_device: choice.on_device })
                }
                Err(error) => {
                    eprintln!("stress: {error}");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    let on_device = rendering.as_ref().is_some_and(|rendering| rendering.on_device);
    println!(
        "jobs: {} threads; culling: {}",
        app.job_system().threads(),
        if on_device { "GPU (two-phase Hi-Z)" } else { "CPU path" }
    );
    println!(
        "{:>6} {:>8} {:>8} {:>8} {:>9} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "frame",
        "objects",
        "visible",
        "frustum",
        "synced",
        "transforms",
        "records",
        "frame ms",
        "visib ms",
        "render ms"
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
    for _ in 0..options.frames {
        // Frames run once this one has (the frame's index is one less).
        let next = app.frames_run() + 1;
        let last = next == options.frames;
        let check = options.check.unwrap_or(if options.truth { CheckChoice::Every } else { CheckChoice::Last });
        let checked = render != RenderChoice::None && (last || (check == CheckChoice::Every && drawn(next)));
        if let Some(rendering) = &rendering {
            let mut capture = lock_capture(&rendering.capture);
            capture.draw = drawn(next);
            capture.capture = checked;
            rendering.scene_reads.store(checked && options.truth, Ordering::Relaxed);
        }
        let started = Instant::now();
        app.run_frame();
        let frame = app.last_frame_index().expect("a frame was run");
        let mut record =
            FrameRecord { frame, frame_ms: started.elapsed().as_secs_f64() * 1e3, ..FrameRecord::default() };
        for (stage, system, seconds) in app.schedule().system_seconds() {
            record.system_ms.insert(format!("{stage}/{system}"), seconds * 1e3);
        }
        for (stage, seconds) in app.schedule().stage_seconds() {
            record.stage_ms.insert(stage.to_string(), seconds * 1e3);
        }
        let visibility = app.resource::<Visibility>();
        let stats = *visibility.stats();
        record.objects = stats.objects;
        record.frustum_rejected = stats.frustum_rejected;
        record.occluded = stats.occluded;
        record.small_or_far = stats.size_rejected + stats.distance_rejected;
        record.visible = stats.visible;
        record.tracked = stats.tracked;
        // No renderer (`--render none`, or no Vulkan device): an empty report.
        let report = app.resources().get::<RenderReport>().map(|report| report.clone()).unwrap_or_default();
        if rendering.is_some() {
            record.uploaded_bytes = Some(report.upload.bytes + report.upload.draw_bytes);
        }
        if let (true, Some(rendering)) = (checked, &mut rendering) {
            let mut request = CheckRequest { truth: options.truth, ..CheckRequest::default() };
            if last {
                request.pngs.push(options.out.join("stress.png"));
            }
            let checked = {
                let capture = lock_capture(&rendering.capture);
                check_frame(
                    &mut rendering.checker,
                    &capture,
                    &visibility,
                    &report,
                    app.world(),
                    &library,
                    None,
                    app.resources().get::<animation::SkinPalette>().as_deref(),
                    &request,
                )
            };
            match checked {
                Ok(Checked { frame: check, truth, .. }) => {
                    record.drawn = Some(check.drawn);
                    record.triangles = Some(check.triangles);
                    record.differing_pixels = Some(check.differing_pixels);
                    record.gpu_ms = check.gpu_ms.into_iter().filter_map(|(pass, ms)| Some((pass, ms?))).collect();
                    println!(
                        "render: frame {} drew {} of {} drawable objects; culling on vs off: {}",
                        frame,
                        check.drawn,
                        check.drawn_without_culling,
                        match check.differing_pixels {
                            0 => String::from("identical images"),
                            pixels => format!("{pixels} pixels differ: an object was wrongly hidden or stale"),
                        }
                    );
                    if check.differing_pixels != 0 {
                        status = ExitCode::FAILURE;
                    }
                    if let Some(truth) = truth {
                        println!("frame {frame} false_hidden {}", truth.false_hidden);
                        if truth.false_hidden != 0 {
                            status = ExitCode::FAILURE;
                            for &slot in &truth.false_hidden_slots {
                                let entity = visibility.objects().entities[slot as usize];
                                println!(
                                    "  slot {slot} ({entity:?}): {:?}, {}, box {:?}",
                                    visibility.state_of(entity),
                                    samples::stress::describe(app.world(), entity),
                                    visibility.objects().bounds[slot as usize]
                                );
                            }
                        }
                        record.objects_with_pixels = Some(truth.objects_with_pixels);
                        record.false_hidden = Some(truth.false_hidden);
                        record.efficiency = Some(truth.efficiency);
                    }
                }
                Err(error) => {
                    eprintln!("render: frame {frame}: {error}");
                    return ExitCode::FAILURE;
                }
            }
            if options.truth {
                let copy = lock_copy(&rendering.scene_copy);
                if !copy.fresh {
                    eprintln!("render: frame {frame}: the GPU scene was not read back");
                    return ExitCode::FAILURE;
                }
                let expected = expected_scene(app.world(), &visibility, &library);
                let (mismatches, described) = compare_scene(&expected, &copy, 3);
                println!("frame {frame} scene_mismatches {mismatches}");
                for line in described {
                    println!("  {line}");
                }
                if mismatches != 0 {
                    status = ExitCode::FAILURE;
                }
                record.scene_mismatches = Some(mismatches);
            }
        }
        if let Some(error) = &report.error {
            eprintln!("render: frame {frame}: {error}");
            return ExitCode::FAILURE;
        }
        if next % options.report_every == 0 || last {
            let stage = |name: &str| record.stage_ms.get(name).copied().unwrap_or(0.0);
            println!(
                "{:>6} {:>8} {:>8} {:>8} {:>9} {:>10} {:>10} {:>9.3} {:>9.3} {:>9.3}",
                frame,
                stats.objects,
                stats.visible,
                stats.frustum_rejected,
                report.synced_slots,
                report.upload.transforms,
                report.upload.records,
                record.frame_ms,
                stage("Visibility"),
                stage("Render"),
            );
        }
        if next == 100 || last {
            memory.after_frame(next, memory::sample());
        }
        records.push(record);
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
    let path = options.out.join("stats.json");
    match summary::write_stats_json(&path, &records, &memory) {
        Ok(()) => println!("stats: wrote {} ({} frames)", path.display(), records.len()),
        Err(error) => {
            eprintln!("stats: cannot write {}: {error}", path.display());
            status = ExitCode::FAILURE;
        }
    }
    let (frame_ms, _, _) = summary::spread(&records.iter().map(|record| record.frame_ms).collect::<Vec<_>>());
    println!(
        "summary: {} frames, median frame {frame_ms:.3} ms, {} objects, {} spawned and despawned",
        records.len(),
        objects,
        app.resource::<samples::stress::StressState>().churned
    );
    status
}
