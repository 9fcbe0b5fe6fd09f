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
//! The command line is `samples::skirmish::options`, the run's steps `samples::skirmish::run`.

/// Every heap allocation, in the Tracy capture's memory view (feature `profile-memory`).
#[cfg(feature = "profile-memory")]
#[global_allocator]
static ALLOCATOR: runtime::profiling::TrackedAllocator = runtime::profiling::tracked_allocator();

use std::process::ExitCode;

use clap::Parser;
use samples::skirmish::options::SkirmishOptions;

fn main() -> ExitCode {
    samples::init_logging();
    samples::skirmish::run::run(&SkirmishOptions::parse())
}
