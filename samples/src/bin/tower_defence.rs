//! The example game: `cargo run -p samples --bin tower_defence -- [frames] [threads]
//! [enemies spawned per frame]` runs it headless and prints the score, the scene, the
//! engine's reports and the world hash (equal on any thread count).
//!
//! `--window` draws it (the city's keys: WASD and the mouse fly the camera, which then stops
//! following the lead enemy; F1 culling, F2 pinned culling view, V debug views, F3 the debug
//! overlay, F4 freeze and explain, Alt + click picks); `--hud` opens the overlay from the start. It runs until closed, or for
//! `--frames N` when given (`--screenshot IMAGE.png` then writes the last frame).

/// Every heap allocation, in the Tracy capture's memory view (feature `profile-memory`).
#[cfg(feature = "profile-memory")]
#[global_allocator]
static ALLOCATOR: runtime::profiling::TrackedAllocator = runtime::profiling::tracked_allocator();

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use culling::CullingBackend;
use runtime::App;
use samples::city::options::CullChoice;
use samples::tower_defence::{self, Game, TowerMeshes};
use samples::window::run::{WindowOptions, WindowSummary};

/// The game's command line.
#[derive(Parser, Clone, Debug)]
#[command(name = "tower_defence", version, about = "The example game: headless, or in a window")]
struct Options {
    /// Frames to run headless (600 unless `--frames` says).
    #[arg(value_name = "FRAMES")]
    frame_count: Option<u64>,
    /// Worker threads (default: one per core).
    #[arg(value_name = "THREADS", value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    /// Enemies spawned every frame.
    #[arg(value_name = "SPAWN", default_value_t = 40)]
    spawn: u32,
    /// Frames to run (with `--window`: close after them; without, the same as FRAMES).
    #[arg(long, value_name = "N")]
    frames: Option<u64>,
    /// Draw the game in a window (until it closes, or for `--frames` when given).
    #[arg(long)]
    window: bool,
    /// With `--window`: open the debug overlay from the start (F3 shows or hides it).
    #[arg(long, requires = "window")]
    hud: bool,
    /// With `--window` and `--frames`: write the last frame's picture here.
    #[arg(long, value_name = "IMAGE.png", requires = "window")]
    screenshot: Option<PathBuf>,
    /// With `--window`: the window's size.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = samples::city::options::parse_size)]
    size: (u32, u32),
    /// With `--window`: which backend culls.
    #[arg(long, value_enum, default_value_t = CullChoice::Auto)]
    cull: CullChoice,
    /// With `--window`: the validation layer; any message fails the run.
    #[arg(long)]
    validate: bool,
}

fn main() -> ExitCode {
    samples::init_logging();
    let options = Options::parse();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = options.threads.map_or(cores, |threads| threads as usize);
    let app = tower_defence::build(threads, options.spawn);
    if options.window {
        return run_window(app, &options);
    }
    run_headless(app, options.frames.or(options.frame_count).unwrap_or(600), threads)
}

/// `--window`: the game drawn with the engine's rendering, the overlay and picking. The fly
/// camera takes the view from the follow camera once the user moves it.
fn run_window(mut app: App, options: &Options) -> ExitCode {
    if options.screenshot.is_some() && options.frames.is_none() {
        eprintln!("tower_defence: --screenshot needs --frames N (the last frame is the screenshot)");
        return ExitCode::FAILURE;
    }
    if options.validate {
        // Read by `DeviceConfig::default` when the window makes its device.
        std::env::set_var("ENGINE_VALIDATION", "1");
    }
    let backend = match options.cull {
        CullChoice::Cpu | CullChoice::Off => CullingBackend::Cpu,
        CullChoice::Gpu => CullingBackend::Gpu,
        CullChoice::Auto => CullingBackend::Auto,
    };
    if options.cull == CullChoice::Off {
        // Every object submitted, as the city's `--cull off`.
        let mut settings = app.resource_mut::<ecs::RenderSettings>();
        settings.frustum_culling = false;
        settings.occlusion_culling = false;
        settings.cull_min_pixels = 0.0;
        settings.cull_max_distance = 0.0;
    }
    tower_defence::dress_for_window(&mut app);
    let window_options = WindowOptions {
        frames: options.frames,
        screenshot: options.screenshot.clone(),
        hud: options.hud,
        ..WindowOptions::new("tower_defence", options.size, backend)
    };
    let hook: samples::window::run::FrameHook<'_> = Box::new(|app: &mut App| {
        if app.resource::<samples::window::fly::FlyCamera>().engaged {
            tower_defence::stop_following(app);
        }
        Ok(())
    });
    let outcome = samples::window::run::run_with(app, &TowerMeshes::library(), window_options, Some(hook));
    WindowSummary::report(outcome, "tower_defence", options.screenshot.as_deref())
}

/// The headless game: `frames` frames, then the score and the reports.
fn run_headless(mut app: App, frames: u64, threads: usize) -> ExitCode {
    // Frames whose Visibility stage redid only what the change log named (spawns and
    // despawns included): a game's frames should all be tracked once the first has run.
    let mut tracked = 0;
    for _ in 0..frames {
        app.run_frame();
        tracked += usize::from(app.resource::<culling::Visibility>().stats().tracked);
    }

    let game = *app.resource::<Game>();
    let (enemies, culled, meshes) = tower_defence::census(&app);
    let stats = app.frame_stats();
    let commands = app.command_report();
    let hierarchy = *app.resource::<ecs::HierarchyReport>();
    println!("{frames} frames on {threads} threads: {} kills, {} leaks", game.kills, game.leaks);
    println!("scene: {enemies} enemies ({culled} culled), {meshes} meshes");
    println!("frame time: mean {:.3} ms, max {:.3} ms", stats.mean_seconds() * 1e3, stats.max_seconds * 1e3);
    println!("visibility: {tracked} of {frames} frames tracked");
    println!(
        "reports: {} orphans placed where they stood, {} dead despawns, {} dead inserts",
        hierarchy.orphans_detached, commands.dead_despawns, commands.dead_inserts
    );
    println!("world hash {:016x}", tower_defence::world_hash(&app));
    ExitCode::SUCCESS
}
