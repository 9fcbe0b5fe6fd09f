//! One run of the stress scene (`src/bin/stress.rs`), step by step: the world built
//! ([`run`]), the rendering and its checker installed, the frame loop (each drawn frame
//! checked against culling off, the truth and the GPU scene), and the summary.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use culling::{CullingBackend, Visibility};
use ecs::{RenderSettings, Viewport};
use render_graph::{vk, DeviceConfig, GpuDevice};
use renderer::{install_render_to, BitsReadback, MeshLibrary, RenderReport, RenderSetup};
use renderer::{lock_capture, HeadlessTarget};
use runtime::App;

use super::options::{CheckChoice, CullChoice, StressOptions};
use super::{build_stress, StressCamera, StressConfig, StressMeshes, StressState};
use crate::city::check::{check_frame, CheckRequest, Checked};
use crate::city::memory::{self, MemoryReport};
use crate::city::summary::{self, FrameRecord};
use crate::city::{RenderChoice, Switch};
use crate::mesh_render::MeshRenderer;
use crate::scene_check::{compare_scene, expected_scene, lock_copy, SceneCheckTarget};
use crate::window::run::WindowOptions;

/// The background the frames are cleared to.
const CLEAR: [f32; 4] = [0.05, 0.06, 0.08, 1.0];

/// The renderer, its checker and what its target copies out.
struct Rendering {
    capture: renderer::SharedCapture,
    scene_copy: crate::scene_check::SharedSceneCopy,
    scene_reads: Arc<AtomicBool>,
    checker: MeshRenderer,
    on_device: bool,
}

/// What the frame loop measured.
struct Measured {
    records: Vec<FrameRecord>,
    memory: MemoryReport,
    status: ExitCode,
}

/// Runs the stress scene as `options` ask (`frames_given`: whether `--frames` was on the
/// command line, which the window needs to know): builds the world, then shows it in the
/// window or runs, checks and summarizes its frames headless.
pub fn run(options: &StressOptions, frames_given: bool) -> ExitCode {
    if options.validate {
        // Read by `DeviceConfig::default` when the renderer makes its device.
        std::env::set_var("ENGINE_VALIDATION", "1");
    }
    let Some((mut app, config, objects)) = build_world(options) else { return ExitCode::FAILURE };
    let render = options.render.unwrap_or(if options.truth { RenderChoice::Every } else { RenderChoice::Last });
    let library = StressMeshes::library();
    let backend = options.cull.backend();
    if options.window {
        return run_window(app, &library, options, frames_given, backend);
    }
    let mut rendering = None;
    if render != RenderChoice::None {
        match install_rendering(&mut app, &library, options, objects, config, backend) {
            Ok(installed) => rendering = installed,
            Err(code) => return code,
        }
    }
    print_header(&app, rendering.as_ref());
    match run_frames(&mut app, &mut rendering, &library, options, render) {
        Ok(measured) => summarize(&app, rendering.as_ref(), measured, options, objects),
        Err(code) => code,
    }
}

/// The app with the stress world built in it, its configuration and its object count;
/// `None` when the output folder cannot be made.
fn build_world(options: &StressOptions) -> Option<(App, StressConfig, usize)> {
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
        return None;
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
    Some((app, config, objects))
}

/// `--window`: the world in a window. The camera leaves its fly-over path (its
/// `StressCamera` marker is taken away) so the window's fly camera moves it.
fn run_window(
    mut app: App,
    library: &MeshLibrary,
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
    let outcome = crate::window::run::run(app, library, window_options);
    crate::window::run::WindowSummary::report(outcome, "stress", options.screenshot.as_deref())
}

/// The Render stage drawing into a headless target that also copies the GPU scene out, and
/// the checker on the same device. `Ok(None)`: no usable device, the CPU path culls and
/// nothing is drawn; `Err`: the run fails.
fn install_rendering(
    app: &mut App,
    library: &MeshLibrary,
    options: &StressOptions,
    objects: usize,
    config: StressConfig,
    backend: CullingBackend,
) -> Result<Option<Rendering>, ExitCode> {
    let device = match GpuDevice::new(&DeviceConfig { app_name: "stress".into(), ..DeviceConfig::default() }) {
        Ok(device) => Arc::new(device),
        Err(reason) if options.cull == CullChoice::Gpu => {
            eprintln!("stress: --cull gpu needs a usable Vulkan device: {reason}");
            return Err(ExitCode::FAILURE);
        }
        Err(reason) => {
            println!("render: no usable Vulkan device ({reason}); culling on the CPU path, no image drawn");
            return Ok(None);
        }
    };
    let (width, height) = options.size;
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
    let installed = install_render_to(app, setup, Some(Box::new(target)))
        .map_err(|error| error.to_string())
        .and_then(|choice| match &app.resource::<RenderReport>().error {
            Some(error) => Err(format!("rendering could not be set up: {error}")),
            None => Ok(choice),
        })
        .and_then(|choice| {
            renderer::truth::ReferenceRenderer::with_device(device, width, height, capacity, library.clone(), CLEAR)
                .map(|checker| (choice, MeshRenderer::from(checker)))
                .map_err(|error| error.to_string())
        });
    if let Some(control) = app.resources().get::<renderer::GpuCullControl>() {
        let mut settings = control.settings.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        settings.occlusion = options.occlusion == Switch::On;
    }
    match installed {
        Ok((choice, checker)) => {
            Ok(Some(Rendering { capture, scene_copy, scene_reads, checker, on_device: choice.on_device }))
        }
        Err(error) => {
            eprintln!("stress: {error}");
            Err(ExitCode::FAILURE)
        }
    }
}

/// The lines before the frames: threads, where culling runs, and the table's header.
fn print_header(app: &App, rendering: Option<&Rendering>) {
    let on_device = rendering.is_some_and(|rendering| rendering.on_device);
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
}

/// The frame loop: runs `--frames` frames, drawing and checking those asked for, printing a
/// line every `--report-every` frames. `Err`: a frame failed and the run stops.
fn run_frames(
    app: &mut App,
    rendering: &mut Option<Rendering>,
    library: &MeshLibrary,
    options: &StressOptions,
    render: RenderChoice,
) -> Result<Measured, ExitCode> {
    let drawn = |frame: u64| match render {
        RenderChoice::Every => true,
        RenderChoice::Last => frame + 2 >= options.frames,
        RenderChoice::None => false,
    };
    let mut measured = Measured {
        records: Vec::with_capacity(options.frames as usize),
        memory: MemoryReport::default(),
        status: ExitCode::SUCCESS,
    };
    measured.memory.after_setup(memory::sample());
    for _ in 0..options.frames {
        // Frames run once this one has (the frame's index is one less).
        let next = app.frames_run() + 1;
        let last = next == options.frames;
        let check = options.check.unwrap_or(if options.truth { CheckChoice::Every } else { CheckChoice::Last });
        let checked = render != RenderChoice::None && (last || (check == CheckChoice::Every && drawn(next)));
        if let Some(rendering) = rendering.as_ref() {
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
        record_timings(app, &mut record);
        // No renderer (`--render none`, or no Vulkan device): an empty report.
        let report = app.resources().get::<RenderReport>().map(|report| report.clone()).unwrap_or_default();
        if rendering.is_some() {
            record.uploaded_bytes = Some(report.upload.bytes + report.upload.draw_bytes);
        }
        if let (true, Some(rendering)) = (checked, rendering.as_mut()) {
            let request = CheckRequest {
                truth: options.truth,
                pngs: if last { vec![options.out.join("stress.png")] } else { Vec::new() },
                ..CheckRequest::default()
            };
            if !check_drawn(app, rendering, library, &report, &request, &mut record)? {
                measured.status = ExitCode::FAILURE;
            }
        }
        if let Some(error) = &report.error {
            eprintln!("render: frame {frame}: {error}");
            return Err(ExitCode::FAILURE);
        }
        if next.is_multiple_of(options.report_every) || last {
            print_row(&record, &report);
        }
        if next == 100 || last {
            measured.memory.after_frame(next, memory::sample());
        }
        measured.records.push(record);
    }
    Ok(measured)
}

/// The frame's system and stage times and its visibility statistics, into `record`.
fn record_timings(app: &App, record: &mut FrameRecord) {
    for (stage, system, seconds) in app.schedule().system_seconds() {
        record.system_ms.insert(format!("{stage}/{system}"), seconds * 1e3);
    }
    for (stage, seconds) in app.schedule().stage_seconds() {
        record.stage_ms.insert(stage.to_string(), seconds * 1e3);
    }
    let stats = *app.resource::<Visibility>().stats();
    record.objects = stats.objects;
    record.frustum_rejected = stats.frustum_rejected;
    record.occluded = stats.occluded;
    record.small_or_far = stats.size_rejected + stats.distance_rejected;
    record.visible = stats.visible;
    record.tracked = stats.tracked;
}

/// Checks a drawn frame: drawn again with culling off (the images must be identical), and
/// with `--truth` the object-id truth (`false_hidden`) and the GPU scene against a
/// from-scratch upload (`scene_mismatches`). `Ok(false)`: a check failed; `Err`: the check
/// could not run.
fn check_drawn(
    app: &App,
    rendering: &mut Rendering,
    library: &MeshLibrary,
    report: &RenderReport,
    request: &CheckRequest,
    record: &mut FrameRecord,
) -> Result<bool, ExitCode> {
    let frame = record.frame;
    let visibility = app.resource::<Visibility>();
    let checked = {
        let capture = lock_capture(&rendering.capture);
        check_frame(
            &mut rendering.checker,
            &capture,
            &visibility,
            report,
            app.world(),
            library,
            None,
            app.resources().get::<animation::SkinPalette>().as_deref(),
            request,
        )
    };
    let mut passed = true;
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
            passed &= check.differing_pixels == 0;
            if let Some(truth) = truth {
                println!("frame {frame} false_hidden {}", truth.false_hidden);
                if truth.false_hidden != 0 {
                    passed = false;
                    for &slot in &truth.false_hidden_slots {
                        let entity = visibility.objects().entities[slot as usize];
                        println!(
                            "  slot {slot} ({entity:?}): {:?}, {}, box {:?}",
                            visibility.state_of(entity),
                            super::describe(app.world(), entity),
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
            return Err(ExitCode::FAILURE);
        }
    }
    if request.truth {
        let copy = lock_copy(&rendering.scene_copy);
        if !copy.fresh {
            eprintln!("render: frame {frame}: the GPU scene was not read back");
            return Err(ExitCode::FAILURE);
        }
        let expected = expected_scene(app.world(), &visibility, library);
        let (mismatches, described) = compare_scene(&expected, &copy, 3);
        println!("frame {frame} scene_mismatches {mismatches}");
        for line in described {
            println!("  {line}");
        }
        passed &= mismatches == 0;
        record.scene_mismatches = Some(mismatches);
    }
    Ok(passed)
}

/// One line of the frame table.
fn print_row(record: &FrameRecord, report: &RenderReport) {
    let stage = |name: &str| record.stage_ms.get(name).copied().unwrap_or(0.0);
    println!(
        "{:>6} {:>8} {:>8} {:>8} {:>9} {:>10} {:>10} {:>9.3} {:>9.3} {:>9.3}",
        record.frame,
        record.objects,
        record.visible,
        record.frustum_rejected,
        report.synced_slots,
        report.upload.transforms,
        report.upload.records,
        record.frame_ms,
        stage("Visibility"),
        stage("Render"),
    );
}

/// The end of the run: the validation layer's verdict, the summary table, memory, the
/// statistics file and the summary line.
fn summarize(
    app: &App,
    rendering: Option<&Rendering>,
    measured: Measured,
    options: &StressOptions,
    objects: usize,
) -> ExitCode {
    let Measured { records, memory, mut status } = measured;
    if let Some(rendering) = rendering {
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
        app.resource::<StressState>().churned
    );
    status
}
