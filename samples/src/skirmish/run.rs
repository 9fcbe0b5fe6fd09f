//! One run of the skirmish (`src/bin/skirmish.rs`), step by step: the world built ([`run`]),
//! its rendering and checker, the city of the comparison, the frame loop (the two scenes
//! taking turns, each drawn frame of the skirmish checked), and the summary.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use culling::{CullingBackend, ShadowViews, Visibility};
use ecs::Viewport;
use render_graph::{vk, DeviceConfig, GpuDevice};
use renderer::{install_render_to, BitsReadback, RenderReport, RenderSetup};
use renderer::{lock_capture, HeadlessTarget, SharedCapture};
use runtime::App;

use super::compare::{city_app, run_measured, side_by_side};
use super::options::{CullChoice, Hold, SkirmishOptions};
use super::shadow_work::ShadowWorkTotals;
use super::{skirmish_app, Skirmish, SkirmishConfig, SkirmishLibrary, SkirmishState, Still};
use crate::city::check::{check_frame, CheckRequest, Checked};
use crate::city::memory::{self, MemoryReport};
use crate::city::rendering::SKY;
use crate::city::summary::{self, FrameRecord};
use crate::city::{RenderChoice, Switch};
use crate::mesh_render::MeshRenderer;

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

/// The skirmish's world and what draws it, as set up before the first frame.
struct Setup {
    app: App,
    library: SkirmishLibrary,
    config: SkirmishConfig,
    skirmish: Skirmish,
    rendering: Option<Rendering>,
    city: Option<CityRun>,
    render: RenderChoice,
}

/// What the frame loop measured and checked.
struct Measured {
    records: Vec<FrameRecord>,
    memory: MemoryReport,
    status: ExitCode,
    invariant_frames: u64,
    child_error: f32,
    dropped_total: Option<usize>,
    shadow_work: ShadowWorkTotals,
}

/// Runs the skirmish as `options` ask: sets up its world, rendering and the city of the
/// comparison, runs the frames in turns with the city, and prints the summary and the
/// side-by-side table.
pub fn run(options: &SkirmishOptions) -> ExitCode {
    if options.validate {
        // Read by `DeviceConfig::default` when the renderer makes its device.
        std::env::set_var("ENGINE_VALIDATION", "1");
    }
    let mut setup = match set_up(options) {
        Ok(setup) => setup,
        Err(code) => return code,
    };
    print_header(options, &setup);
    match run_frames(options, &mut setup) {
        Ok(measured) => summarize(options, &setup, measured),
        Err(code) => code,
    }
}

/// The skirmish's configuration from the command line.
fn skirmish_config(options: &SkirmishOptions) -> SkirmishConfig {
    SkirmishConfig {
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
    }
}

/// Builds the skirmish's world, its rendering where a device is usable, and the city of the
/// comparison; `Err` holds the exit code of a setup that failed.
fn set_up(options: &SkirmishOptions) -> Result<Setup, ExitCode> {
    let config = skirmish_config(options);
    if config.props() == 0 {
        eprintln!(
            "skirmish: --objects {} leaves no room for props beside {} units, their items and {} arrows",
            config.objects,
            config.units,
            config.arrows()
        );
        return Err(ExitCode::FAILURE);
    }
    if let Err(error) = std::fs::create_dir_all(&options.out) {
        eprintln!("skirmish: cannot create {}: {error}", options.out.display());
        return Err(ExitCode::FAILURE);
    }
    let (width, height) = options.size;
    let threads = threads(options);
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
    let backend = options.cull.backend();
    let extent = vk::Extent2D { width, height };
    let mut device = None;
    if render != RenderChoice::None {
        match GpuDevice::new(&DeviceConfig { app_name: "skirmish".into(), ..DeviceConfig::default() }) {
            Ok(made) => device = Some(Arc::new(made)),
            Err(reason) if options.cull == CullChoice::Gpu => {
                eprintln!("skirmish: --cull gpu needs a usable Vulkan device: {reason}");
                return Err(ExitCode::FAILURE);
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
                return Err(ExitCode::FAILURE);
            }
        }
    }
    let city = match options.city {
        Switch::On => Some(set_up_city(options, &skirmish, device.as_ref(), backend)?),
        Switch::Off => None,
    };
    Ok(Setup { app, library, config, skirmish, rendering, city, render })
}

/// Worker threads: `--threads`, or one per core.
fn threads(options: &SkirmishOptions) -> usize {
    options
        .threads
        .map_or_else(|| std::thread::available_parallelism().map_or(1, usize::from), |threads| threads as usize)
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

/// The city at the skirmish's object count, on as many threads, drawn where the skirmish is.
fn set_up_city(
    options: &SkirmishOptions,
    skirmish: &Skirmish,
    device: Option<&Arc<GpuDevice>>,
    backend: CullingBackend,
) -> Result<CityRun, ExitCode> {
    let (width, height) = options.size;
    let started = Instant::now();
    let (mut city_app, meshes, city_built) =
        city_app(skirmish.objects, threads(options), Viewport { width, height }, options.city_shadows);
    city_app.resource_mut::<ecs::RenderSettings>().batch_draws = options.batch == Switch::On;
    let mut capture = None;
    if let Some(device) = device {
        let (target, shared) = HeadlessTarget::drawing();
        let frames = crate::city::rendering::CityFrames {
            backend,
            extent: vk::Extent2D { width, height },
            bits: BitsReadback::Lagged,
            passes: Vec::new(),
            shadows: options.city_shadows > 0,
        };
        if let Err(error) =
            crate::city::rendering::install(&mut city_app, device, &meshes.library, Box::new(target), frames)
        {
            eprintln!("skirmish: the city's rendering: {error}");
            return Err(ExitCode::FAILURE);
        }
        capture = Some(shared);
    }
    println!(
        "city: {} mesh entities on {} blocks{}, built in {:.1} ms, run in turns of {} frames with the skirmish",
        city_built.mesh_entities,
        super::compare::city_config(skirmish.objects).blocks.pow(2),
        if options.city_shadows > 0 {
            format!(", a sun and street lamps ({} casting)", options.city_shadows)
        } else {
            String::new()
        },
        started.elapsed().as_secs_f64() * 1e3,
        options.turns
    );
    Ok(CityRun { app: city_app, capture, records: Vec::with_capacity(options.frames as usize) })
}

/// The lines before the frames: threads, culling and drawing, and the table's header.
fn print_header(options: &SkirmishOptions, setup: &Setup) {
    let on_device = setup.rendering.as_ref().is_some_and(|rendering| rendering.on_device);
    println!(
        "jobs: {} threads; culling: {}; drawing: {}",
        threads(options),
        if on_device { "GPU (two-phase Hi-Z)" } else { "CPU path" },
        match (setup.render, &setup.rendering) {
            (RenderChoice::None, _) | (_, None) => "none",
            (RenderChoice::Every, _) => "every frame",
            (RenderChoice::Last, _) => "the last frames",
        }
    );
    println!(
        "{:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9}",
        "frame", "height", "objects", "visible", "frustum", "occluded", "frame ms", "xform ms", "visib ms", "shadow ms"
    );
}

/// The frame loop: the skirmish runs `--turns` frames, then the city as many, until both ran
/// `--frames`. `Err`: a frame failed and the run stops.
fn run_frames(options: &SkirmishOptions, setup: &mut Setup) -> Result<Measured, ExitCode> {
    let render = setup.render;
    let drawn = |frame: u64| match render {
        RenderChoice::Every => true,
        RenderChoice::Last => frame + 2 >= options.frames,
        RenderChoice::None => false,
    };
    let mut measured = Measured {
        records: Vec::with_capacity(options.frames as usize),
        memory: MemoryReport::default(),
        status: ExitCode::SUCCESS,
        invariant_frames: 0,
        child_error: 0.0,
        dropped_total: None,
        shadow_work: ShadowWorkTotals::default(),
    };
    measured.memory.after_setup(memory::sample());
    while setup.app.frames_run() < options.frames {
        let turn_end = (setup.app.frames_run() + options.turns).min(options.frames);
        while setup.app.frames_run() < turn_end {
            // Frames run once this one has (the frame's index is one less).
            let next = setup.app.frames_run() + 1;
            if let Some(rendering) = &setup.rendering {
                let mut capture = lock_capture(&rendering.capture);
                capture.draw = drawn(next);
                capture.capture = checked(render, next == options.frames);
            }
            skirmish_frame(options, setup, &mut measured)?;
        }
        if let Some(city) = &mut setup.city {
            while city.app.frames_run() < turn_end {
                let next = city.app.frames_run() + 1;
                if let Some(capture) = &city.capture {
                    lock_capture(capture).draw = drawn(next);
                }
                city.records.push(run_measured(&mut city.app));
                if let Some(error) = city.app.resources().get::<RenderReport>().and_then(|report| report.error.clone())
                {
                    eprintln!("render: the city's frame {}: {error}", next - 1);
                    return Err(ExitCode::FAILURE);
                }
            }
        }
    }
    Ok(measured)
}

/// Whether a frame is checked: every frame with `--render every`, the last with `last`.
fn checked(render: RenderChoice, last: bool) -> bool {
    render == RenderChoice::Every || (render == RenderChoice::Last && last)
}

/// One frame of the skirmish: run and measured, its invariants checked, checked against
/// culling off when drawn, a table line every `--report-every` frames.
fn skirmish_frame(options: &SkirmishOptions, setup: &mut Setup, measured: &mut Measured) -> Result<(), ExitCode> {
    let next = setup.app.frames_run() + 1;
    let last = next == options.frames;
    let mut record = run_measured(&mut setup.app);
    let frame = setup.app.last_frame_index().expect("a frame was run");
    measured.shadow_work.add(&setup.app.resource::<ShadowViews>());
    match super::invariants::check(setup.app.world(), &setup.app.resource::<SkirmishState>()) {
        Ok(found) => {
            measured.invariant_frames += 1;
            measured.child_error = measured.child_error.max(found.child_error);
        }
        Err(error) => {
            eprintln!("skirmish: frame {frame}: {error}");
            return Err(ExitCode::FAILURE);
        }
    }
    let report = setup.app.resources().get::<RenderReport>().map(|report| report.clone()).unwrap_or_default();
    if let Some(error) = &report.error {
        eprintln!("render: frame {frame}: {error}");
        return Err(ExitCode::FAILURE);
    }
    if checked(setup.render, last) && setup.rendering.is_some() {
        let mut request = CheckRequest { truth: options.truth, ..CheckRequest::default() };
        if last {
            request.pngs.push(options.out.join("skirmish.png"));
        }
        check_drawn(setup, &report, &request, &mut record, measured)?;
    }
    if next.is_multiple_of(options.report_every) || last {
        print_row(&setup.app, &record);
    }
    if next == 100 || last {
        measured.memory.after_frame(next, memory::sample());
    }
    measured.records.push(record);
    Ok(())
}

/// Checks a drawn frame of the skirmish against the same frame drawn with culling off
/// (shadows included), and with `--truth` against the object-id truth (`false_hidden`) and
/// each light view's (`dropped_casters`); a failed check fails the run's status, `Err`: the
/// check could not run.
fn check_drawn(
    setup: &mut Setup,
    report: &RenderReport,
    request: &CheckRequest,
    record: &mut FrameRecord,
    measured: &mut Measured,
) -> Result<(), ExitCode> {
    let Setup { app, library, config, rendering: Some(rendering), .. } = setup else { return Ok(()) };
    let frame = record.frame;
    let visibility = app.resource::<Visibility>();
    let shadows = config.shadows.then(|| app.resource::<ShadowViews>());
    let checked = {
        let capture = lock_capture(&rendering.capture);
        check_frame(
            &mut rendering.checker,
            &capture,
            &visibility,
            report,
            app.world(),
            &library.library,
            shadows.as_deref(),
            app.resources().get::<animation::SkinPalette>().as_deref(),
            request,
        )
    };
    let Checked { frame: check, truth, .. } = match checked {
        Ok(checked) => checked,
        Err(error) => {
            eprintln!("render: frame {frame}: {error}");
            return Err(ExitCode::FAILURE);
        }
    };
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
        measured.status = ExitCode::FAILURE;
    }
    if let Some(truth) = &truth {
        println!("frame {frame} false_hidden {}", truth.false_hidden);
        if truth.false_hidden != 0 {
            measured.status = ExitCode::FAILURE;
        }
        if let Some(dropped) = truth.dropped_casters {
            println!("frame {frame} dropped_casters {dropped}");
            *measured.dropped_total.get_or_insert(0) += dropped;
            if dropped != 0 {
                measured.status = ExitCode::FAILURE;
            }
        }
    }
    record.record_check(&check, truth.as_ref());
    record.record_commands(report);
    Ok(())
}

/// One line of the frame table.
fn print_row(app: &App, record: &FrameRecord) {
    let visibility = app.resource::<Visibility>();
    let height = visibility.view().map_or(f32::NAN, |view| view.position.y);
    let stage = |name: &str| record.stage_ms.get(name).copied().unwrap_or(0.0);
    let shadow_ms = record.system_ms.get(&format!("Visibility/{}", culling::SHADOW_VIEWS_SYSTEM)).copied();
    println!(
        "{:>6} {:>8.1} {:>8} {:>8} {:>8} {:>8} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
        record.frame,
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

/// The end of the run: the validation layer's verdict, the summary table, memory, the
/// invariants, the shadow work, the statistics files, and the table beside the city's.
fn summarize(options: &SkirmishOptions, setup: &Setup, measured: Measured) -> ExitCode {
    let Measured { records, memory, mut status, invariant_frames, child_error, dropped_total, shadow_work } = measured;
    if let Some(rendering) = &setup.rendering {
        let problems = rendering.checker.validation_problems();
        if !problems.is_empty() {
            eprintln!("render: validation reported problems: {problems:?}");
            status = ExitCode::FAILURE;
        }
    }

    print!("{}", summary::table(&records));
    println!("{}", memory.line());
    let state = setup.app.resource::<SkirmishState>();
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
    println!("summary: {} frames, median frame {frame_ms:.3} ms, {} objects", records.len(), setup.skirmish.objects);
    if let Some(city) = &setup.city {
        let path = options.out.join("city-stats.json");
        if let Err(error) = summary::write_stats_json(&path, &city.records, &MemoryReport::default()) {
            eprintln!("stats: cannot write {}: {error}", path.display());
            status = ExitCode::FAILURE;
        }
        print!("{}", side_by_side(&records, &city.records));
    }
    status
}
