//! The demo: a procedural city culled frame by frame while the camera flies through it.
//!
//! It builds about 100k mesh entities by default (`--objects N`, 1k to 1M: buildings,
//! props, trees with three levels of detail, cars with parented wheels, skinned pedestrians
//! that raise their arms), runs the engine's stages on the job system, and prints what the
//! Visibility stage decided and how long each stage took. Every frame runs headless.
//!
//! Every object is a real low-poly mesh generated in code and processed by meshopt (LOD
//! chain, meshlets); every mesh entity gets its mesh's LOD chain. When a Vulkan device exists,
//! the frames `--render` asks for (the last by default, or every one) are drawn with the
//! render graph's standard passes (lit meshes at the level each object's LOD chose), and
//! drawn again with culling off: the two images must be identical, pixel for pixel. The
//! last frame goes to `city.png` in `--out DIR` (default: the current folder), with
//! `stats.json`; `--png-every N` adds every N-th frame.
//! Without a device the demo says why once and keeps to the CPU path and its statistics.
//!
//! Run: `cargo run --release -p samples --bin city [-- OPTIONS]`; `--help` explains every
//! option (`samples::city::CityOptions`). For example
//! `city --frames 120 --size 640x360 --render every --out images --png-every 30 --validate`.

/// Every heap allocation, in the Tracy capture's memory view (feature `profile-memory`).
#[cfg(feature = "profile-memory")]
#[global_allocator]
static ALLOCATOR: runtime::profiling::TrackedAllocator = runtime::profiling::tracked_allocator();

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};
use culling::occlusion::OccluderMeshes;
use culling::{CullingBackend, Visibility};
use ecs::{RenderSettings, Viewport};
use indicatif::{ProgressBar, ProgressStyle};
use render_graph::{vk, DeviceConfig, GpuDevice};
use renderer::{lock_capture, HeadlessTarget, RenderMeshes, SharedCapture};
use renderer::{BitsReadback, RenderReport};
use runtime::{App, Stage};
use samples::city::check::{check_frame, CheckRequest, Checked};
use samples::city::districts::DistrictFiles;
use samples::city::memory::MemoryReport;
use samples::city::rendering::SKY;
use samples::city::stream::DistrictStreamer;
use samples::city::summary::FrameRecord;
use samples::city::{
    self, CameraKeyframes, CameraPath, CheckChoice, CityLibrary, CityMeshes, CityOptions, CullChoice, PresentChoice,
    RenderChoice, Switch,
};
use samples::frame_passes::{add_frame_passes, BobClock, FramePassCheck, FramePassChoice, FramePassMismatches};
use samples::mesh_render::{MeshFrame, MeshRenderer};
use samples::window::run::{FrameHook, WindowOptions};

/// A progress bar on standard error for long runs (hidden when it is not a terminal).
fn progress_bar(frames: u64) -> ProgressBar {
    if frames < 300 {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(frames);
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} frames, {per_sec}, eta {eta}") {
        bar.set_style(style);
    }
    bar
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() -> ExitCode {
    samples::init_logging();
    let matches = CityOptions::command().get_matches();
    let options = CityOptions::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
    // `--window` runs until closed unless `--frames` was given.
    let frames_given = matches.value_source("frames") == Some(ValueSource::CommandLine);
    if options.validate {
        // Read by `DeviceConfig::default` when the renderer makes its device; set before any
        // thread that could read the environment starts.
        std::env::set_var("ENGINE_VALIDATION", "1");
    }
    let (width, height) = options.size;

    let mut app = match options.threads {
        Some(threads) => App::with_threads(threads as usize),
        None => App::new(),
    };
    culling::install(&mut app);
    if options.world_motion == Switch::On {
        city::install_motion(&mut app);
    } else {
        city::install_still(&mut app);
    }
    app.add_system(runtime::Stage::Input, city::Bobbing::system());
    app.set_fixed_delta(Some(1.0 / 60.0));
    app.insert_resource(Viewport { width, height });
    {
        let mut settings = app.resource_mut::<RenderSettings>();
        settings.cull_min_pixels = options.min_pixels;
        settings.cull_max_distance = options.max_distance;
        settings.occlusion_culling = options.occlusion == Switch::On;
        settings.visibility_tags = options.tags.policy();
        settings.cpu_answers = options.cpu_answers.policy();
        settings.batch_draws = options.batch == Switch::On;
        settings.gpu_lod_selection = options.gpu_lod == Switch::On;
        settings.mesh_memory_budget = options.budget.map(|mib| (mib * f64::from(1 << 20)) as u64);
        // `--cull gpu|auto` are decided below, once the city's size is known (the renderer
        // that culls on the GPU is made then).
        if options.cull == CullChoice::Off {
            settings.frustum_culling = false;
            settings.occlusion_culling = false;
            settings.cull_min_pixels = 0.0;
            settings.cull_max_distance = 0.0;
        }
    }
    // Buildings occlude: their occluder is their full-footprint base block (authored, so
    // exact; the setbacks above it are narrower).
    let mut occluders = OccluderMeshes::new();
    occluders.insert(CityMeshes::BUILDING, city::building_occluder());
    app.insert_resource(occluders);
    if let Err(error) = std::fs::create_dir_all(&options.out) {
        eprintln!("city: cannot create {}: {error}", options.out.display());
        return ExitCode::FAILURE;
    }
    let render = options.render_choice();

    let config = options.city_config();
    // The meshes first, so the city's entities are spawned with their LOD chains.
    let meshes_started = Instant::now();
    let mut meshes = CityLibrary::build(&config);
    let monitor_meshes = match options.monitor.then(|| city::monitor::add_to_library(&mut meshes.library)) {
        Some(Ok(added)) => Some(added),
        Some(Err(error)) => {
            eprintln!("city: --monitor: {error}");
            return ExitCode::FAILURE;
        }
        None => None,
    };
    if options.lod_rule == city::options::LodRule::Error {
        app.insert_resource(meshes.lod_errors());
    }
    let meshes_ms = meshes_started.elapsed().as_secs_f64() * 1e3;
    let build_started = Instant::now();
    let city = city::build_city(app.world_mut(), &config, Some(&meshes));
    let with_lods = city::attach_lods(app.world_mut(), &meshes);
    // A still world: its pedestrians, who always walk, are left out.
    let walkers = if options.world_motion == Switch::On { city.pedestrians.len() } else { 0 };
    if walkers == 0 {
        city.pedestrians.iter().for_each(|&walker| drop(app.world_mut().despawn(walker)));
    }
    let movers = city::Bobbing::choose(app.world_mut(), options.movers);
    println!(
        "meshes: {} generated and processed by meshopt in {:.1} ms; {with_lods} entities got their LOD chain",
        meshes.summaries.len(),
        meshes_ms
    );
    for (_, name, summary) in &meshes.summaries {
        println!("  {name}: {summary}");
    }
    println!(
        "city: {} mesh entities ({} buildings, {} cars with 4 wheels each, {} pedestrians, {movers} bobbing) on {} blocks, built in {:.1} ms",
        city.mesh_entities - (city.pedestrians.len() - walkers),
        city.buildings.len(),
        city.cars.len(),
        walkers,
        config.blocks * config.blocks,
        build_started.elapsed().as_secs_f64() * 1e3
    );
    for line in city::bounds::describe(app.world(), &config) {
        println!("{line}");
    }
    let districts = if options.stream {
        if !options.window && render == RenderChoice::None {
            eprintln!("city: --stream draws its frames (no --render none)");
            return ExitCode::FAILURE;
        }
        let folder =
            options.stream_dir.clone().unwrap_or_else(|| DistrictFiles::default_folder(options.seed, options.objects));
        let started = Instant::now();
        match DistrictFiles::take_from(app.world_mut(), &config, &folder) {
            Ok(files) => {
                println!(
                    "stream: {} buildings and trees in {} districts of {}x{} blocks, {} files in {} ({:.1} MiB, {} in {:.1} ms); radius {} m",
                    files.objects,
                    files.grid.count(),
                    files.grid.blocks,
                    files.grid.blocks,
                    files.paths.len(),
                    folder.display(),
                    files.file_bytes as f64 / f64::from(1 << 20),
                    if files.written { "written" } else { "reused" },
                    started.elapsed().as_secs_f64() * 1e3,
                    options.stream_radius
                );
                Some(files)
            }
            Err(error) => {
                eprintln!("city: cannot write the district files in {}: {error}", folder.display());
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };
    if let Some(path) = &options.camera_path {
        let keyframes = match CameraKeyframes::load(path) {
            Ok(keyframes) => keyframes,
            Err(error) => {
                eprintln!("city: camera path {error}");
                return ExitCode::FAILURE;
            }
        };
        let camera = city.camera.expect("the city has a camera");
        let world = app.world_mut();
        let _ = world.remove_one::<CameraPath>(camera);
        world.insert_one(camera, keyframes).expect("the camera exists");
        app.add_system(Stage::Input, CameraKeyframes::system());
        println!("camera: following {}", path.display());
    }
    if options.shadows {
        let lamps = city::lights::spawn_lights(app.world_mut(), &config);
        let mut settings = app.resource_mut::<ecs::ShadowSettings>();
        settings.max_shadowed_lights = options.shadow_lights;
        settings.caster_culling = options.shadow_culling == Switch::On;
        println!(
            "shadows: a sun with {} cascades and {lamps} street lamps, at most {} casting (budget {} views); atlas {}x{}, caster culling {}",
            settings.cascade_count,
            options.shadow_lights,
            settings.max_light_views,
            settings.atlas_resolution,
            settings.atlas_resolution,
            if settings.caster_culling { "on" } else { "off" }
        );
    }
    let split = options.views > 1;
    if split {
        if let Err(error) = city::views::add_second_view(app.world_mut(), &config, &city) {
            eprintln!("city: --views 2: {error}");
            return ExitCode::FAILURE;
        }
        println!("views: 2, split-screen (left: the street's camera, right: another street, the other way)");
    }
    if let Some(added) = monitor_meshes {
        if let Err(error) = city::monitor::spawn(app.world_mut(), &config, &city, added) {
            eprintln!("city: --monitor: {error}");
            return ExitCode::FAILURE;
        }
        println!("monitor: a rooftop camera renders into a 256x256 image shown on a billboard in the street view");
    }
    if options.monitor && (split || passes_chosen(&options) || options.stream || options.classify || options.clusters) {
        eprintln!(
            "city: --monitor does not yet take --views 2, --post, --debug-boxes, --gpu-animate, --stream, --classify \
             or --clusters"
        );
        return ExitCode::FAILURE;
    }
    let backend = match options.cull {
        CullChoice::Cpu | CullChoice::Off => CullingBackend::Cpu,
        CullChoice::Gpu => CullingBackend::Gpu,
        CullChoice::Auto => CullingBackend::Auto,
    };
    // The users' frame passes (`--post`, `--debug-boxes`, `--gpu-animate`), headless or in the window.
    let passes = match FramePassChoice::parse(&options.post, options.debug_boxes, options.gpu_animate) {
        Ok(passes) => passes,
        Err(error) => {
            eprintln!("city: {error}");
            return ExitCode::FAILURE;
        }
    };
    if split && (passes.any() || options.stream || options.classify || options.clusters) {
        eprintln!(
            "city: --views 2 does not yet take --post, --debug-boxes, --gpu-animate, --stream, --classify or --clusters"
        );
        return ExitCode::FAILURE;
    }
    if options.window {
        return run_window(app, &meshes, &options, frames_given, backend, passes, districts.as_ref());
    }
    if options.debug_view.is_some() {
        eprintln!("city: --debug-view shows an image in the window: add --window");
        return ExitCode::FAILURE;
    }
    if options.pipelined || options.serial {
        eprintln!(
            "city: --pipelined and --serial choose the window's frames (add --window); the headless run checks every \
             frame against its own reference and is serial"
        );
        return ExitCode::FAILURE;
    }
    // Rendering is installed in one call: the Render stage draws every frame the target
    // asks for through the render graph, culling on the GPU (two-phase Hi-Z, frustum and
    // occlusion leave the Visibility stage) or with the CPU's lists, as `--cull` decides.
    let mut rendering: Option<Rendering> = None;
    let mut gpu_culling = false;
    if render != RenderChoice::None {
        let extent = vk::Extent2D { width, height };
        let device = match GpuDevice::new(&DeviceConfig { app_name: "city".into(), ..DeviceConfig::default() }) {
            Ok(device) => Some(Arc::new(device)),
            Err(reason) if options.cull == CullChoice::Gpu => {
                eprintln!("city: --cull gpu needs a usable Vulkan device: {reason}");
                return ExitCode::FAILURE;
            }
            Err(reason) => {
                println!("render: no usable Vulkan device ({reason}); culling on the CPU path, no image drawn");
                None
            }
        };
        if let Some(device) = device {
            let capacity = city::rendering::capacity(app.world());
            let clock = BobClock::default();
            let (target, capture) = HeadlessTarget::drawing();
            let monitor_readback = monitor_meshes.map(|_| city::monitor::readback());
            let installed = FramePassCheck::new(&device, passes, capacity, clock.clone())
                .map_err(city::RenderError::from)
                .and_then(|(frame_check, add_passes)| {
                    let mut frame_passes: Vec<renderer::AddPasses> = vec![Box::new(add_passes)];
                    let mut monitor = None;
                    let atlas =
                        if options.shadows { app.resource::<ecs::ShadowSettings>().atlas_resolution } else { 0 };
                    if let (Some((add, copy)), Some(added)) = (monitor_readback, monitor_meshes) {
                        frame_passes.push(add);
                        let library = meshes.library.clone();
                        let side = (city::monitor::MONITOR_SIDE, city::monitor::MONITOR_SIDE);
                        let checker = MeshRenderer::with_shadows(device.clone(), side, capacity, library, SKY, atlas)?;
                        monitor =
                            Some((city::monitor::MonitorCheck { checker, copy, pixels: Default::default() }, added));
                    }
                    let frames = city::rendering::CityFrames {
                        backend,
                        extent,
                        bits: BitsReadback::Wait,
                        passes: frame_passes,
                        shadows: options.shadows,
                    };
                    let choice =
                        city::rendering::install(&mut app, &device, &meshes.library, Box::new(target), frames)?;
                    if (passes.bob || passes.boxes) && !choice.on_device {
                        return Err("--gpu-animate and --debug-boxes need GPU culling (--cull gpu)".into());
                    }
                    let library = meshes.library.clone();
                    let mut checker =
                        MeshRenderer::with_shadows(device, (width, height), capacity, library, SKY, atlas)?;
                    // The reference moves the objects as the frame does; the post-processes and
                    // lines are checked against the CPU instead.
                    let geometry = FramePassChoice { bob: passes.bob, ..FramePassChoice::default() };
                    checker.add_passes(|graph| add_frame_passes(graph, &geometry, capacity, &clock))?;
                    if let Some((monitor, added)) = &monitor {
                        city::monitor::show_on_reference(&mut checker, &monitor.pixels, added.layer)?;
                    }
                    Ok((choice, checker, frame_check, monitor.map(|(monitor, _)| monitor)))
                });
            match installed {
                Ok((choice, checker, frame_check, monitor)) => {
                    gpu_culling = choice.on_device;
                    let frame_check = passes.any().then_some(frame_check);
                    rendering = Some(Rendering { capture, checker, frame_check, clock, monitor });
                }
                Err(error) => {
                    eprintln!("city: {error}");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    let mut streaming = match (&districts, &mut rendering) {
        (Some(files), Some(rendering)) => {
            let mut streamer =
                DistrictStreamer::new(files, options.stream_radius).waiting_for_loads(options.stream_wait);
            let render_meshes = app.resource::<RenderMeshes>().clone();
            if options.preload {
                let started = Instant::now();
                if let Err(error) = streamer.preload(app.world_mut(), &render_meshes, Some(&mut rendering.checker)) {
                    eprintln!("stream: {error}");
                    return ExitCode::FAILURE;
                }
                println!(
                    "stream: preloaded {} districts in {:.1} ms",
                    streamer.spawned(),
                    started.elapsed().as_secs_f64() * 1e3
                );
            }
            Some((streamer, render_meshes))
        }
        (Some(_), None) => {
            eprintln!("city: --stream needs a usable Vulkan device");
            return ExitCode::FAILURE;
        }
        _ => None,
    };
    println!(
        "jobs: {} threads; culling: {} ({:?} kernel for the CPU's part); profiling: {}",
        app.job_system().threads(),
        if gpu_culling { "GPU (two-phase Hi-Z)" } else { "CPU path" },
        culling::Kernel::detect(),
        if runtime::profiling::enabled() { "Tracy on" } else { "off (build with --features profile)" }
    );
    println!(
        "{:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9}",
        "frame",
        "height",
        "objects",
        "visible",
        "frustum",
        "occluded",
        "small",
        "far",
        "tags±",
        "frame ms",
        "xform ms",
        "visib ms"
    );

    let lossless = options.min_pixels <= 0.0 && options.max_distance <= 0.0;
    let mut status = ExitCode::SUCCESS;
    let mut frame_ms = Vec::with_capacity(options.frames as usize);
    let mut transform_ms = Vec::with_capacity(options.frames as usize);
    let mut visibility_ms = Vec::with_capacity(options.frames as usize);
    let mut visible_counts = Vec::with_capacity(options.frames as usize);
    let mut records = Vec::with_capacity(options.frames as usize);
    let mut memory = MemoryReport::default();
    memory.after_setup(city::memory::sample());
    let progress = progress_bar(options.frames);
    // Which frames the GPU draws (given a device): `--render last` also draws the two frames
    // before the last, so GPU culling has the history its early phase draws from.
    let drawn = |frame: u64| match render {
        RenderChoice::Every => true,
        RenderChoice::Last => frame + 2 >= options.frames,
        RenderChoice::None => false,
    };
    for _ in 0..options.frames {
        // Frames run once this one has (the frame's index is one less).
        let next = app.frames_run() + 1;
        let last = next == options.frames;
        let checked = (render == RenderChoice::Every && (options.checks == CheckChoice::Every || last))
            || (render == RenderChoice::Last && last);
        if let Some(rendering) = &rendering {
            rendering.clock.set(next);
            let mut capture = lock_capture(&rendering.capture);
            capture.draw = drawn(next);
            capture.capture = checked;
        }
        // The streaming work between frames (adding ready districts, removing far ones) is
        // the game's, so it counts in the frame's time; the check's copy of the meshes does not.
        let mut started = Instant::now();
        let mut stream_ms = None;
        if let Some((streamer, render_meshes)) = &mut streaming {
            let checker = rendering.as_mut().map(|rendering| &mut rendering.checker);
            if let Err(error) = streamer.update(app.world_mut(), render_meshes, checker) {
                eprintln!("stream: {error}");
                return ExitCode::FAILURE;
            }
            started += std::time::Duration::from_secs_f64(streamer.checker_seconds());
            stream_ms = Some(started.elapsed().as_secs_f64() * 1e3);
            streamer.report.update_ms.push(started.elapsed().as_secs_f64() * 1e3);
        }
        app.run_frame();
        frame_ms.push(started.elapsed().as_secs_f64() * 1e3);
        let frame = app.last_frame_index().expect("a frame was run");
        let mut record =
            FrameRecord { frame, frame_ms: started.elapsed().as_secs_f64() * 1e3, stream_ms, ..FrameRecord::default() };
        for (stage, system, seconds) in app.schedule().system_seconds() {
            record.system_ms.insert(format!("{stage}/{system}"), seconds * 1e3);
        }
        for (stage, seconds) in app.schedule().stage_seconds() {
            record.stage_ms.insert(stage.to_string(), seconds * 1e3);
            match stage {
                "Transform" => transform_ms.push(seconds * 1e3),
                "Visibility" => visibility_ms.push(seconds * 1e3),
                _ => {}
            }
        }
        let visibility = app.resource::<Visibility>();
        let stats = *visibility.stats();
        visible_counts.push(stats.visible as f64);
        record.objects = stats.objects;
        record.frustum_rejected = stats.frustum_rejected;
        record.occluded = stats.occluded;
        record.small_or_far = stats.size_rejected + stats.distance_rejected;
        record.visible = stats.visible;
        record.tracked = stats.tracked;
        record.objects_culled = stats.objects_culled;
        if let (false, true, Some(_)) = (checked, drawn(next), &rendering) {
            record.record_unchecked(&app.resource::<RenderReport>());
        }
        if let (true, Some(rendering)) = (checked, &mut rendering) {
            // The last frame is `city.png`; `--png-every N` adds every N-th drawn frame.
            let mut request = CheckRequest {
                truth: options.truth,
                classify: options.classify,
                clusters: options.clusters,
                geometry: rendering.frame_check.as_ref().and_then(FramePassCheck::color_before),
                ..CheckRequest::default()
            };
            if last {
                request.pngs.push(options.out.join("city.png"));
            }
            if options.png_every.is_some_and(|every| frame % every == 0) {
                request.pngs.push(options.out.join(format!("frame-{frame:06}.png")));
            }
            if let Some(frame_check) = &rendering.frame_check {
                // The user's passes against the CPU: fog and outline of the colour before them,
                // each line inside a box whose bit has its colour, the GPU's heights.
                let capture = lock_capture(&rendering.capture);
                let report = app.resource::<RenderReport>();
                let line = match frame_check.check(&visibility, &report.bits, &capture.pixels, width) {
                    Ok(mismatches) => {
                        if !mismatches.is_clean() {
                            status = ExitCode::FAILURE;
                        }
                        let FramePassMismatches { post, lines, heights } = mismatches;
                        format!("frame {} passes vs cpu: post {post} lines {lines} heights {heights}", frame)
                    }
                    Err(error) => {
                        status = ExitCode::FAILURE;
                        format!("frame {frame} passes vs cpu: cannot check: {error}")
                    }
                };
                progress.suspend(|| println!("{line}"));
            }
            if split {
                // The GPU's count per view and the cull's pass times (one dispatch serves both views).
                let report = app.resource::<RenderReport>();
                if let Some(gpu) = report.gpu {
                    let ms = gpu.gpu_ms.map(|ms| ms.unwrap_or(f64::NAN));
                    let line = format!(
                        "frame {frame} gpu ms cull early {:.3} hi-z {:.3} cull late {:.3}",
                        ms[0], ms[1], ms[2]
                    );
                    progress.suspend(|| println!("{line}"));
                }
                for (index, stats) in report.view_gpu.iter().enumerate() {
                    let (triangles, occluded) = (stats.triangles, stats.occlusion_rejected);
                    let line = format!("frame {frame} view {index} gpu triangles {triangles} occluded {occluded}");
                    progress.suspend(|| println!("{line}"));
                }
                drop(report);
                let checked = {
                    let capture = lock_capture(&rendering.capture);
                    let views = app.resource::<ecs::ResolvedViews>();
                    let report = app.resource::<RenderReport>();
                    let palette = app.resources().get::<animation::SkinPalette>();
                    let world = (app.world(), palette.as_deref());
                    let shadows = options.shadows.then(|| app.resource::<culling::ShadowViews>());
                    let answers = (&*views, &*visibility, shadows.as_deref());
                    city::views::check_views(&mut rendering.checker, &capture, answers, world, &report)
                };
                match checked {
                    Ok(checks) => {
                        for (view, check) in checks {
                            progress.suspend(|| {
                                println!("frame {frame} view {view} differing_pixels {}", check.differing_pixels);
                                if options.truth {
                                    println!("frame {frame} view {view} false_hidden {}", check.truth.false_hidden);
                                }
                            });
                            let hidden = options.truth && check.truth.false_hidden != 0;
                            if (check.differing_pixels != 0 || hidden) && lossless {
                                status = ExitCode::FAILURE;
                            }
                        }
                    }
                    Err(error) => {
                        progress.abandon();
                        eprintln!("render: frame {frame}: {error}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            if let Some(monitor) = &mut rendering.monitor {
                let views = app.resource::<ecs::ResolvedViews>();
                let report = app.resource::<RenderReport>();
                let palette = app.resources().get::<animation::SkinPalette>();
                let shadows = options.shadows.then(|| app.resource::<culling::ShadowViews>());
                let answers = (&*views, &*visibility, shadows.as_deref());
                match monitor.check(answers, app.world(), (&report, palette.as_deref())) {
                    Ok((view, check)) => {
                        let hidden = check.truth.false_hidden;
                        progress.suspend(|| {
                            println!("frame {frame} view {view} differing_pixels {}", check.differing_pixels);
                            if options.truth {
                                println!("frame {frame} view {view} false_hidden {hidden}");
                            }
                        });
                        if (check.differing_pixels != 0 || (options.truth && hidden != 0)) && lossless {
                            status = ExitCode::FAILURE;
                        }
                    }
                    Err(error) => {
                        progress.abandon();
                        eprintln!("render: frame {frame}: the monitor: {error}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            let checked = if split {
                None
            } else {
                let capture = lock_capture(&rendering.capture);
                let report = app.resource::<RenderReport>();
                let shadows = options.shadows.then(|| app.resource::<culling::ShadowViews>());
                Some(check_frame(
                    &mut rendering.checker,
                    &capture,
                    &visibility,
                    &report,
                    app.world(),
                    &meshes.library,
                    shadows.as_deref(),
                    app.resources().get::<animation::SkinPalette>().as_deref(),
                    &request,
                ))
            };
            match checked {
                None => {}
                Some(Ok(Checked { frame: check, truth, clusters })) => {
                    let report = app.resource::<RenderReport>();
                    let line = report_line(
                        &report,
                        &check,
                        &request,
                        frame,
                        options.size,
                        lossless,
                        gpu_culling,
                        rendering.checker.device_name(),
                    );
                    progress.suspend(|| println!("{line}"));
                    if options.shadows {
                        let budget = city::lights::budget_line(&app.resource::<culling::ShadowViews>(), frame);
                        let line = shadow_line(&report, frame);
                        progress.suspend(|| println!("{line}\n{budget}"));
                    }
                    if let Some(clusters) = clusters {
                        progress.suspend(|| println!("{clusters}"));
                    }
                    if check.differing_pixels != 0 && lossless {
                        status = ExitCode::FAILURE;
                    }
                    // With a monitor the street view is one view of several: named like the others.
                    let main_view =
                        rendering.monitor.as_ref().and_then(|_| app.resource::<ecs::ResolvedViews>().main());
                    if let Some(view) = main_view {
                        let pixels = check.differing_pixels;
                        progress.suspend(|| println!("frame {frame} view {} differing_pixels {pixels}", view.0));
                        if let Some(truth) = &truth {
                            let hidden = truth.false_hidden;
                            progress.suspend(|| println!("frame {frame} view {} false_hidden {hidden}", view.0));
                        }
                    }
                    if let Some(truth) = &truth {
                        progress.suspend(|| {
                            println!("frame {frame} false_hidden {}", truth.false_hidden);
                            println!("frame {frame} efficiency {:.3}", truth.efficiency);
                        });
                        if truth.false_hidden != 0 && lossless {
                            status = ExitCode::FAILURE;
                        }
                        if let Some(dropped) = truth.dropped_casters {
                            progress.suspend(|| println!("frame {frame} dropped_casters {dropped}"));
                            if dropped != 0 {
                                status = ExitCode::FAILURE;
                            }
                        }
                    }
                    record.record_check(&check, truth.as_ref());
                    record.record_commands(&app.resource::<RenderReport>());
                    record.cpu_lod_levels = Some(meshes.lod_histogram(&app.resource::<Visibility>(), app.world()));
                }
                Some(Err(error)) => {
                    progress.abandon();
                    eprintln!("render: frame {frame}: {error}");
                    return ExitCode::FAILURE;
                }
            }
        }
        if let Some((streamer, _)) = &mut streaming {
            let line = stream_frame(streamer, &app, &meshes, frame, options.truth);
            if let Some(line) = line {
                progress.suspend(|| println!("{line}"));
            }
        }
        if next % options.report_every == 0 {
            let height = visibility.view().map_or(f32::NAN, |view| view.position.y);
            let recent = options.report_every as usize;
            let window = |values: &[f64]| median(&mut values[values.len().saturating_sub(recent)..].to_vec());
            let line = format!(
                "{:>6} {:>8.1} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9.3} {:>9.3} {:>9.3}",
                frame,
                height,
                stats.objects,
                stats.visible,
                stats.frustum_rejected,
                stats.occluded,
                stats.size_rejected,
                stats.distance_rejected,
                stats.tags_inserted + stats.tags_removed,
                window(&frame_ms),
                window(&transform_ms),
                window(&visibility_ms),
            );
            progress.suspend(|| println!("{line}"));
        }
        records.push(record);
        if next == 100 || last {
            // A few reads of /proc in the run: the peak is a high-water mark, so the last read has it.
            memory.after_frame(next, city::memory::sample());
        }
        if rendering.is_some() && !drawn(next) && drawn(next + 1) {
            // The next frame is the first the GPU draws.
            memory.before_drawing(next, city::memory::sample());
        }
        progress.inc(1);
    }
    progress.finish_and_clear();

    {
        let visibility = app.resource::<Visibility>();
        let (with_lod, full) = meshes.triangles_in_view(&visibility, app.world());
        println!(
            "lod: the last frame's visible objects have {with_lod} triangles at their LOD levels, {full} at full detail ({:.1}x fewer)",
            full as f64 / with_lod.max(1) as f64
        );
    }
    if let Some(rendering) = &rendering {
        let problems = rendering.checker.validation_problems();
        if !problems.is_empty() {
            eprintln!("render: validation reported problems: {problems:?}");
            status = ExitCode::FAILURE;
        }
    }

    print!("{}", city::summary::table(&records));
    if let Some((streamer, _)) = &streaming {
        print!("{}", streamer.report.lines());
    }
    let path = options.out.join("stats.json");
    println!("{}", memory.line());
    match city::summary::write_stats_json(&path, &records, &memory) {
        Ok(()) => println!("stats: wrote {} ({} frames)", path.display(), records.len()),
        Err(error) => {
            eprintln!("stats: cannot write {}: {error}", path.display());
            status = ExitCode::FAILURE;
        }
    }
    println!(
        "summary: {} frames, median frame {:.3} ms, Transform {:.3} ms, Visibility {:.3} ms, median visible {:.0} of {}",
        options.frames,
        median(&mut frame_ms),
        median(&mut transform_ms),
        median(&mut visibility_ms),
        median(&mut visible_counts),
        city.mesh_entities
    );
    status
}

/// Adds the frame to the streaming report; with `truth`, returns the frame's `stream:` line
/// (resident mesh bytes against the budget, districts in the world).
fn stream_frame(
    streamer: &mut DistrictStreamer,
    app: &App,
    meshes: &CityLibrary,
    frame: u64,
    truth: bool,
) -> Option<String> {
    let report = app.resource::<RenderReport>();
    let visibility = app.resource::<Visibility>();
    let submitted = renderer::truth::submitted(&report, &visibility, &meshes.library);
    let stand_in = city::stream::visible_stand_in(&report, &visibility, &submitted.objects);
    streamer.report.record_frame(&report, stand_in);
    let residency = &report.residency;
    truth.then(|| {
        format!(
            "frame {frame} resident_bytes {} budget {} districts {} stand_in {}",
            residency.resident_bytes,
            residency.budget.map_or_else(|| String::from("none"), |budget| budget.to_string()),
            streamer.spawned(),
            u8::from(stand_in)
        )
    })
}

/// `--window`: the city in a window until it closes or `--frames` have run.
fn run_window(
    app: App,
    meshes: &CityLibrary,
    options: &CityOptions,
    frames_given: bool,
    backend: CullingBackend,
    frame_passes: FramePassChoice,
    districts: Option<&DistrictFiles>,
) -> ExitCode {
    if options.screenshot.is_some() && !frames_given {
        eprintln!("city: --screenshot needs --frames N (the last frame is the screenshot)");
        return ExitCode::FAILURE;
    }
    let window_options = WindowOptions {
        title: "city",
        size: options.size,
        frames: frames_given.then_some(options.frames),
        present: match options.present {
            PresentChoice::Fifo => vk::PresentModeKHR::FIFO,
            PresentChoice::Mailbox => vk::PresentModeKHR::MAILBOX,
            PresentChoice::Immediate => vk::PresentModeKHR::IMMEDIATE,
        },
        screenshot: options.screenshot.clone(),
        resize_to: options.resize_to,
        backend,
        frame_passes,
        debug_view: options.debug_view.clone().unwrap_or_default(),
        pipelined: !options.serial,
        shadows: options.shadows,
        hud: options.hud,
    };
    // `--stream`: the districts load and leave between the window's frames, as headless.
    let mut streamer = districts
        .map(|files| DistrictStreamer::new(files, options.stream_radius).waiting_for_loads(options.stream_wait));
    let hook = streamer.as_mut().map(|streamer| -> FrameHook<'_> {
        Box::new(move |app: &mut App| {
            if app.frames_run() > 0 {
                // The frame just run: its residency, and whether a visible object drew a
                // stand-in (the Visibility stage's list: objects that may be visible).
                let report = app.resource::<RenderReport>();
                let visibility = app.resource::<Visibility>();
                let stand_in = city::stream::visible_stand_in(&report, &visibility, visibility.visible());
                streamer.report.record_frame(&report, stand_in);
            }
            let started = Instant::now();
            let meshes = app.resource::<RenderMeshes>().clone();
            streamer.update(app.world_mut(), &meshes, None)?;
            streamer.report.update_ms.push(started.elapsed().as_secs_f64() * 1e3);
            Ok(())
        })
    });
    let outcome = samples::window::run::run_with(app, &meshes.library, window_options, hook);
    if let Some(streamer) = &streamer {
        print!("{}", streamer.report.lines());
    }
    samples::window::run::WindowSummary::report(outcome, "city", options.screenshot.as_deref())
}

/// The city's rendering: the Render stage's capture and the checker that draws the same
/// frames with culling off (same device).
struct Rendering {
    capture: SharedCapture,
    checker: MeshRenderer,
    /// `--monitor`: the monitor view's readback and reference.
    monitor: Option<city::monitor::MonitorCheck>,
    /// The user's frame passes and their CPU check, when any is chosen.
    frame_check: Option<FramePassCheck>,
    /// The game frame whose wave `--gpu-animate` applies.
    clock: BobClock,
}

/// The `shadows:` line of a checked frame: casters per view before and after culling (the
/// GPU's counts when it culled them), draws, triangles and the GPU time of the cull and of the
/// atlas.
fn shadow_line(report: &RenderReport, frame: u64) -> String {
    let shadows = &report.shadows;
    let ms = |value: Option<f64>| value.map_or_else(|| String::from("n/a"), |ms| format!("{ms:.3}"));
    let views: Vec<String> = shadows
        .views
        .iter()
        .map(|view| {
            let kind = match view.kind {
                culling::shadow::LightViewKind::Cascade(index) => format!("c{index}"),
                culling::shadow::LightViewKind::Spot => String::from("spot"),
                culling::shadow::LightViewKind::CubeFace(face) => format!("f{face}"),
            };
            let ms = view.gpu_ms.map_or_else(String::new, |ms| format!(" {ms:.2}ms"));
            format!("{kind} {}/{}{ms}", view.count, view.casters)
        })
        .collect();
    format!(
        "shadows: frame {frame} {} views culled on the {}: {} caster draws of {} tested ({} late), {} triangles; GPU ms: cull {}, atlas {}, pyramid {}; kept/tested (GPU ms) per view: {}",
        shadows.views.len(),
        if shadows.on_device { "GPU" } else { "CPU" },
        shadows.draws(),
        shadows.casters_tested(),
        shadows.views.iter().map(|view| u64::from(view.late)).sum::<u64>(),
        shadows.triangles(),
        ms(shadows.gpu_ms[0]),
        ms(shadows.gpu_ms[1]),
        ms(shadows.gpu_ms[2]),
        views.join(", ")
    )
}

/// The report lines of a checked frame: the GPU culling's statistics (GPU backend) and
/// what was drawn, written and compared.
#[allow(clippy::too_many_arguments)]
fn report_line(
    report: &RenderReport,
    check: &MeshFrame,
    request: &CheckRequest,
    frame: u64,
    (width, height): (u32, u32),
    lossless: bool,
    gpu_culling: bool,
    device: &str,
) -> String {
    let ms = |value: Option<f64>| value.map_or_else(|| String::from("n/a"), |ms| format!("{ms:.3}"));
    let gpu_line = report.gpu.as_ref().map_or_else(String::new, |stats| {
        format!(
            "gpu cull: {} objects, {} frustum rejects, {} drawn early, {} occlusion rejects, {} drawn late, {} triangles; GPU ms: early {}, hi-z {}, late {}; culled_on_device {}\n",
            stats.objects,
            stats.frustum_rejected,
            stats.early_drawn,
            stats.occlusion_rejected,
            stats.late_drawn,
            stats.triangles,
            ms(stats.gpu_ms[0]),
            ms(stats.gpu_ms[1]),
            ms(stats.gpu_ms[2]),
            stats.culled_on_device
        )
    });
    let gpu_total: f64 = check.gpu_ms.iter().filter_map(|(_, ms)| *ms).sum();
    format!(
        "{gpu_line}render: frame {frame} {width}x{height} on {device}: {} drew {} of {} drawable objects ({} triangles), GPU {gpu_total:.1} ms{}; culling on vs off: {}",
        if gpu_culling { "GPU culling" } else { "CPU culling" },
        check.drawn,
        check.drawn_without_culling,
        check.triangles,
        request.pngs.iter().map(|path| format!(", wrote {}", path.display())).collect::<String>(),
        match (check.differing_pixels, lossless) {
            (0, _) => String::from("identical images"),
            (pixels, true) => format!("{pixels} pixels differ: an object was wrongly hidden"),
            (pixels, false) => format!("{pixels} pixels differ (size/distance culls are lossy by design)"),
        }
    )
}

/// Whether a users' frame pass (`--post`, `--debug-boxes`, `--gpu-animate`) was asked for.
fn passes_chosen(options: &CityOptions) -> bool {
    !options.post.is_empty() || options.debug_boxes || options.gpu_animate
}
