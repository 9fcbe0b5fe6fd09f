//! The demo: a procedural city culled frame by frame while the camera flies through it.
//!
//! It builds about 45k mesh entities (buildings, props, trees with three levels of detail,
//! cars with parented wheels, skinned pedestrians that raise their arms), runs the engine's
//! stages on the job system, and prints what the Visibility stage decided and how long each
//! stage took. Every frame runs headless; the statistics are the output.
//!
//! Every object is a real low-poly mesh generated in code and processed by meshopt (LOD
//! chain, meshlets); every mesh entity gets its mesh's LOD chain. When a Vulkan device exists,
//! the last frame is also drawn with the render graph's standard passes (lit meshes at the
//! level each object's LOD chose) into a PNG, and drawn again with culling off: the two
//! images must be identical, pixel for pixel. Without a device the demo says why once and
//! keeps to the CPU path and its statistics.
//!
//! Run: `cargo run --release -p samples --bin city [-- OPTIONS]`
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `--frames N` | 600 | frames to run (the camera loop takes 40 s = 2400 frames at 60 Hz) |
//! | `--blocks N` | 32 | city blocks per side |
//! | `--threads N` | cores | job-system parallelism |
//! | `--min-pixels P` | 0 | screen-size cull threshold (0: off; above 0 it is lossy by design) |
//! | `--max-distance D` | 0 | distance cull (0 turns it off) |
//! | `--report-every N` | 60 | frames between report lines |
//! | `--no-occlusion` | | turn the CPU occlusion cull off |
//! | `--png PATH` | `city.png` | where the last frame's image goes (`--png none`: no PNG) |
//! | `--cull gpu\|cpu\|auto` | `auto` | culling backend: `cpu` culls in the Visibility stage; `gpu` leaves frustum and occlusion to the GPU (two-phase Hi-Z culling; the stage still picks LOD and writes the boxes) and fails without a device; `auto` is `gpu` where a device is usable, else `cpu` with the reason printed once |
//!
//! With the GPU backend the last frame is drawn three times with GPU culling (each time with
//! the previous one's visibility as history, as consecutive frames would), the GPU's
//! statistics of the last one are printed, and its image is compared with the unculled one.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use culling::occlusion::OccluderMeshes;
use culling::Visibility;
use ecs::{Mesh, RenderSettings, Viewport};
use runtime::App;
use samples::city::{self, CityConfig, CityLibrary, CityMeshes};
use samples::mesh_render::MeshRenderer;

/// Size of the view (and of the image, when one is drawn).
const IMAGE_WIDTH: u32 = 1280;
const IMAGE_HEIGHT: u32 = 720;

/// The sky the image is cleared to.
const SKY: [f32; 4] = [0.55, 0.70, 0.90, 1.0];

struct Options {
    frames: u64,
    blocks: u32,
    threads: Option<usize>,
    min_pixels: f32,
    max_distance: f32,
    report_every: u64,
    occlusion: bool,
    png: Option<PathBuf>,
    cull: CullChoice,
}

/// The `--cull` option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CullChoice {
    Cpu,
    Gpu,
    Auto,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        frames: 600,
        blocks: 32,
        threads: None,
        min_pixels: 0.0,
        max_distance: 0.0,
        report_every: 60,
        occlusion: true,
        png: Some(PathBuf::from("city.png")),
        cull: CullChoice::Auto,
    };
    let mut arguments = std::env::args().skip(1);
    while let Some(flag) = arguments.next() {
        let mut value = || arguments.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |text: String| text.parse::<f64>().map_err(|_| format!("{flag}: '{text}' is not a number"));
        match flag.as_str() {
            "--frames" => options.frames = number(value()?)? as u64,
            "--blocks" => options.blocks = (number(value()?)? as u32).clamp(1, 256),
            "--threads" => options.threads = Some((number(value()?)? as usize).max(1)),
            "--min-pixels" => options.min_pixels = number(value()?)? as f32,
            "--max-distance" => options.max_distance = number(value()?)? as f32,
            "--report-every" => options.report_every = (number(value()?)? as u64).max(1),
            "--no-occlusion" => options.occlusion = false,
            "--png" => options.png = Some(PathBuf::from(value()?)).filter(|path| path.as_os_str() != "none"),
            "--cull" => {
                options.cull = match value()?.as_str() {
                    "cpu" => CullChoice::Cpu,
                    "gpu" => CullChoice::Gpu,
                    "auto" => CullChoice::Auto,
                    other => return Err(format!("--cull: '{other}' is not gpu, cpu or auto")),
                }
            }
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown option '{other}'")),
        }
    }
    Ok(options)
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
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("city: {message}");
            }
            eprintln!("usage: city [--frames N] [--blocks N] [--threads N] [--min-pixels P] [--max-distance D] [--report-every N] [--no-occlusion] [--png PATH|none] [--cull gpu|cpu|auto]");
            return if message.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE };
        }
    };

    let mut app = match options.threads {
        Some(threads) => App::with_threads(threads),
        None => App::new(),
    };
    culling::install(&mut app);
    city::install_motion(&mut app);
    app.set_fixed_delta(Some(1.0 / 60.0));
    app.insert_resource(Viewport { width: IMAGE_WIDTH, height: IMAGE_HEIGHT });
    {
        let mut settings = app.resource_mut::<RenderSettings>();
        settings.cull_min_pixels = options.min_pixels;
        settings.cull_max_distance = options.max_distance;
        settings.occlusion_culling = options.occlusion;
    }
    // Buildings occlude: their occluder is their full-footprint base block (authored, so
    // exact; the setbacks above it are narrower).
    let mut occluders = OccluderMeshes::new();
    occluders.insert(CityMeshes::BUILDING, city::building_occluder());
    app.insert_resource(occluders);

    let config = CityConfig { blocks: options.blocks, ..CityConfig::default() };
    let build_started = Instant::now();
    let city = city::build_city(app.world_mut(), &config);
    let meshes_started = Instant::now();
    let meshes = CityLibrary::build(&config);
    let with_lods = city::attach_lods(app.world_mut(), &meshes);
    println!(
        "meshes: {} generated and processed by meshopt in {:.1} ms; {with_lods} entities got their LOD chain",
        meshes.summaries.len(),
        meshes_started.elapsed().as_secs_f64() * 1e3
    );
    for (_, name, summary) in &meshes.summaries {
        println!("  {name}: {summary}");
    }
    println!(
        "city: {} mesh entities ({} buildings, {} cars with 4 wheels each, {} pedestrians) on {} blocks, built in {:.1} ms",
        city.mesh_entities,
        city.buildings.len(),
        city.cars.len(),
        city.pedestrians.len(),
        config.blocks * config.blocks,
        build_started.elapsed().as_secs_f64() * 1e3
    );
    // The backend: a device is looked for unless the CPU was asked for (or nothing is drawn).
    let wants_device = options.cull != CullChoice::Cpu || options.png.is_some();
    let renderer = if wants_device {
        match MeshRenderer::new(IMAGE_WIDTH, IMAGE_HEIGHT, city.mesh_entities as u32 + 64, meshes.library.clone(), SKY)
        {
            Ok(renderer) => Some(renderer),
            Err(reason) if options.cull == CullChoice::Gpu => {
                eprintln!("city: --cull gpu needs a usable Vulkan device: {reason}");
                return ExitCode::FAILURE;
            }
            Err(reason) => {
                println!("render: no usable Vulkan device ({reason}); culling on the CPU path, no image drawn");
                None
            }
        }
    } else {
        None
    };
    let gpu_culling = options.cull != CullChoice::Cpu && renderer.is_some();
    if gpu_culling {
        // The GPU culls frustum and occlusion; the stage keeps LOD, boxes and lists.
        let mut settings = app.resource_mut::<RenderSettings>();
        settings.frustum_culling = false;
        settings.occlusion_culling = false;
    }
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

    let mut frame_ms = Vec::with_capacity(options.frames as usize);
    let mut transform_ms = Vec::with_capacity(options.frames as usize);
    let mut visibility_ms = Vec::with_capacity(options.frames as usize);
    let mut visible_counts = Vec::with_capacity(options.frames as usize);
    for _ in 0..options.frames {
        let started = Instant::now();
        app.run_frame();
        frame_ms.push(started.elapsed().as_secs_f64() * 1e3);
        for (stage, seconds) in app.schedule().stage_seconds() {
            match stage {
                "Transform" => transform_ms.push(seconds * 1e3),
                "Visibility" => visibility_ms.push(seconds * 1e3),
                _ => {}
            }
        }
        let visibility = app.resource::<Visibility>();
        let stats = *visibility.stats();
        visible_counts.push(stats.visible as f64);
        if app.frame_index() % options.report_every == 0 {
            let height = visibility.view().map_or(f32::NAN, |view| view.position.y);
            let recent = options.report_every as usize;
            let window = |values: &[f64]| median(&mut values[values.len().saturating_sub(recent)..].to_vec());
            println!(
                "{:>6} {:>8.1} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9.3} {:>9.3} {:>9.3}",
                app.frame_index(),
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
        }
    }

    {
        let visibility = app.resource::<Visibility>();
        let (with_lod, full) = meshes.triangles_in_view(&visibility, app.world());
        println!(
            "lod: the last frame's visible objects have {with_lod} triangles at their LOD levels, {full} at full detail ({:.1}x fewer)",
            full as f64 / with_lod.max(1) as f64
        );
    }
    let mut status = ExitCode::SUCCESS;
    let lossless = options.min_pixels <= 0.0 && options.max_distance <= 0.0;
    if let Some(renderer) = renderer {
        status = if gpu_culling {
            draw_last_frame_gpu(&app, renderer, options.png.as_deref(), lossless)
        } else if let Some(path) = &options.png {
            draw_last_frame(&app, renderer, path, lossless)
        } else {
            ExitCode::SUCCESS
        };
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

/// Draws the last frame with GPU culling (three times: each culls with the previous one's
/// visibility as history), prints the GPU's statistics, checks the image equals the unculled one and
/// writes the PNG when asked.
fn draw_last_frame_gpu(
    app: &App,
    mut renderer: MeshRenderer,
    path: Option<&std::path::Path>,
    lossless: bool,
) -> ExitCode {
    let visibility = app.resource::<Visibility>();
    let colors = object_colors(app, &visibility);
    let started = Instant::now();
    let outcome =
        renderer.render_gpu_culled(&visibility, |object| colors[object], 3).and_then(|(pixels, stats, check)| {
            if let Some(path) = path {
                renderer.write_png(path, &pixels)?;
            }
            Ok((stats, check))
        });
    let (stats, check) = match outcome {
        Ok(result) => result,
        Err(error) => {
            eprintln!("render: {error}");
            return ExitCode::FAILURE;
        }
    };
    let ms = |value: Option<f64>| value.map_or_else(|| String::from("n/a"), |ms| format!("{ms:.3}"));
    println!(
        "gpu cull: {} objects, {} frustum rejects, {} drawn early, {} occlusion rejects, {} drawn late, {} triangles; GPU ms: early {}, hi-z {}, late {}; culled_on_device {}",
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
    );
    println!(
        "render: {} on {}: GPU culling drew {} of {} drawable objects in {:.0} ms{}; culling on vs off: {}",
        format_args!("{IMAGE_WIDTH}x{IMAGE_HEIGHT}"),
        renderer.device_name(),
        stats.early_drawn + stats.late_drawn,
        check.drawn_without_culling,
        started.elapsed().as_secs_f64() * 1e3,
        path.map_or_else(String::new, |path| format!(", wrote {}", path.display())),
        match (check.differing_pixels, lossless) {
            (0, _) => String::from("identical images"),
            (pixels, true) => format!("{pixels} pixels differ: an object was wrongly hidden"),
            (pixels, false) => format!("{pixels} pixels differ (size/distance culls are lossy by design)"),
        }
    );
    let problems = renderer.validation_problems();
    if !problems.is_empty() {
        eprintln!("render: validation reported problems: {problems:?}");
        return ExitCode::FAILURE;
    }
    if check.differing_pixels == 0 || !lossless {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Draws the last frame with culling on and off, checks the images are equal, writes the PNG.
/// No Vulkan device is not a failure: the demo says why and the statistics stand alone. With
/// the screen-size or distance cull on (`lossless` false) the images may differ by design,
/// and a difference is reported, not failed.
fn draw_last_frame(app: &App, mut renderer: MeshRenderer, path: &std::path::Path, lossless: bool) -> ExitCode {
    let visibility = app.resource::<Visibility>();
    let colors = object_colors(app, &visibility);
    let started = Instant::now();
    let outcome = renderer.render_and_check(&visibility, |object| colors[object]).and_then(|(pixels, check)| {
        renderer.write_png(path, &pixels)?;
        Ok(check)
    });
    match outcome {
        Ok(check) => {
            println!(
                "render: {} on {}: drew {} of {} drawable objects ({} triangles) in {:.0} ms, wrote {}; culling on vs off: {}",
                format_args!("{IMAGE_WIDTH}x{IMAGE_HEIGHT}"),
                renderer.device_name(),
                check.drawn,
                check.drawn_without_culling,
                check.triangles,
                started.elapsed().as_secs_f64() * 1e3,
                path.display(),
                match (check.differing_pixels, lossless) {
                    (0, _) => String::from("identical images"),
                    (pixels, true) => format!("{pixels} pixels differ: an object was wrongly hidden"),
                    (pixels, false) => format!("{pixels} pixels differ (size/distance culls are lossy by design)"),
                }
            );
            let problems = renderer.validation_problems();
            if !problems.is_empty() {
                eprintln!("render: validation reported problems: {problems:?}");
                return ExitCode::FAILURE;
            }
            if check.differing_pixels == 0 || !lossless {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(error) => {
            eprintln!("render: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Each object's colour: by what it is (its mesh handle), varied a little per object.
fn object_colors(app: &App, visibility: &Visibility) -> Vec<u32> {
    visibility
        .objects()
        .entities
        .iter()
        .enumerate()
        .map(|(object, &entity)| {
            let handle = app.world().get::<&Mesh>(entity).map_or(ecs::MeshHandle::NONE, |mesh| mesh.mesh);
            city::city_color(handle, object)
        })
        .collect()
}
