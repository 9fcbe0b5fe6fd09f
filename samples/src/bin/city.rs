//! The demo: a procedural city culled frame by frame while the camera flies through it.
//!
//! It builds about 45k mesh entities (buildings, props, trees with three levels of detail,
//! cars with parented wheels, skinned pedestrians that raise their arms), runs the engine's
//! stages on the job system, and prints what the Visibility stage decided and how long each
//! stage took. Every frame runs headless; the statistics are the output.
//!
//! Run: `cargo run --release -p samples --bin city [-- OPTIONS]`
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `--frames N` | 600 | frames to run (the camera loop takes 40 s = 2400 frames at 60 Hz) |
//! | `--blocks N` | 32 | city blocks per side |
//! | `--threads N` | cores | job-system parallelism |
//! | `--min-pixels P` | 2 | screen-size cull threshold (0 turns it off) |
//! | `--max-distance D` | 0 | distance cull (0 turns it off) |
//! | `--report-every N` | 60 | frames between report lines |
//! | `--no-occlusion` | | turn the CPU occlusion cull off |

use std::process::ExitCode;
use std::time::Instant;

use culling::occlusion::{OccluderMesh, OccluderMeshes};
use culling::{Aabb, Visibility};
use ecs::{RenderSettings, Viewport};
use glam::Vec3;
use runtime::App;
use samples::city::{self, CityConfig, CityMeshes};

struct Options {
    frames: u64,
    blocks: u32,
    threads: Option<usize>,
    min_pixels: f32,
    max_distance: f32,
    report_every: u64,
    occlusion: bool,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        frames: 600,
        blocks: 32,
        threads: None,
        min_pixels: 2.0,
        max_distance: 0.0,
        report_every: 60,
        occlusion: true,
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
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("city: {message}");
            }
            eprintln!("usage: city [--frames N] [--blocks N] [--threads N] [--min-pixels P] [--max-distance D] [--report-every N] [--no-occlusion]");
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
    app.insert_resource(Viewport { width: 1920, height: 1080 });
    {
        let mut settings = app.resource_mut::<RenderSettings>();
        settings.cull_min_pixels = options.min_pixels;
        settings.cull_max_distance = options.max_distance;
        settings.occlusion_culling = options.occlusion;
    }
    // Buildings occlude: their occluder is their own box (authored, so exact).
    let mut occluders = OccluderMeshes::new();
    let building_box = OccluderMesh::from_box(&Aabb::new(Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.0, 0.5)))
        .expect("a unit box is a valid occluder");
    occluders.insert(CityMeshes::BUILDING, building_box);
    app.insert_resource(occluders);

    let config = CityConfig { blocks: options.blocks, ..CityConfig::default() };
    let build_started = Instant::now();
    let city = city::build_city(app.world_mut(), &config);
    println!(
        "city: {} mesh entities ({} buildings, {} cars with 4 wheels each, {} pedestrians) on {} blocks, built in {:.1} ms",
        city.mesh_entities,
        city.buildings.len(),
        city.cars.len(),
        city.pedestrians.len(),
        config.blocks * config.blocks,
        build_started.elapsed().as_secs_f64() * 1e3
    );
    println!(
        "jobs: {} threads; culling: CPU path ({:?} kernel); profiling: {}",
        app.job_system().threads(),
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

    println!(
        "summary: {} frames, median frame {:.3} ms, Transform {:.3} ms, Visibility {:.3} ms, median visible {:.0} of {}",
        options.frames,
        median(&mut frame_ms),
        median(&mut transform_ms),
        median(&mut visibility_ms),
        median(&mut visible_counts),
        city.mesh_entities
    );
    ExitCode::SUCCESS
}
