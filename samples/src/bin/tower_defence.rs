//! The example game, headless: `cargo run -p samples --bin tower_defence -- [frames] [threads]
//! [enemies spawned per frame]`. Prints the score, the scene, the engine's reports and the
//! world hash (equal on any thread count).

/// Every heap allocation, in the Tracy capture's memory view (feature `profile-memory`).
#[cfg(feature = "profile-memory")]
#[global_allocator]
static ALLOCATOR: runtime::profiling::TrackedAllocator = runtime::profiling::tracked_allocator();

use std::process::ExitCode;

use samples::tower_defence::{self, Game};

fn main() -> ExitCode {
    samples::init_logging();
    let numbers: Result<Vec<u64>, _> = std::env::args().skip(1).map(|arg| arg.parse::<u64>()).collect();
    let Ok(numbers) = numbers else {
        eprintln!("usage: tower_defence [frames=600] [threads=cores] [spawn per frame=40]");
        return ExitCode::FAILURE;
    };
    let frames = numbers.first().copied().unwrap_or(600);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = numbers.get(1).map_or(cores, |&threads| threads as usize);
    let spawn = numbers.get(2).map_or(40, |&spawn| spawn as u32);

    let mut app = tower_defence::build(threads, spawn);
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
