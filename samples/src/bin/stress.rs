//! The stress scene: a world that moves, spawns and despawns every frame (see
//! `samples::stress`), culled and drawn through the engine's one-call rendering, each drawn
//! frame checked. The command line is `samples::stress::options`, the run's steps
//! `samples::stress::run`.
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
//! camera, which leaves its path for it; F1 culling, F2 pinned culling view, V debug views, F3 the
//! debug overlay, F4 freeze and explain, Alt + click picks); `--hud` opens the overlay from the start. It runs until closed,
//! or for `--frames` when given (`--screenshot IMAGE.png` then writes the last frame).

/// Every heap allocation, in the Tracy capture's memory view (feature `profile-memory`).
#[cfg(feature = "profile-memory")]
#[global_allocator]
static ALLOCATOR: runtime::profiling::TrackedAllocator = runtime::profiling::tracked_allocator();

use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};
use samples::stress::options::StressOptions;

fn main() -> ExitCode {
    samples::init_logging();
    let matches = StressOptions::command().get_matches();
    let options = StressOptions::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
    let frames_given = matches.value_source("frames") == Some(ValueSource::CommandLine);
    samples::stress::run::run(&options, frames_given)
}
