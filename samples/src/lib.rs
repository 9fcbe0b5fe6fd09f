//! Runnable programs of the engine: the demo, the render-graph pass examples, a headless
//! example game (`tower_defence`) and a game's world as a benchmark scene (`skirmish`).
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod city;
pub mod cluster_render;
pub mod frame_passes;
pub mod mesh_render;
pub mod random;
pub mod scene_check;
pub mod skirmish;
pub mod stress;
pub mod tower_defence;
pub mod viewer;
pub mod walker;
pub mod window;

/// Installs a logger that prints the engine's warnings and errors on standard error
/// (`env_logger`); `RUST_LOG` chooses more (`RUST_LOG=info`, `RUST_LOG=ecs=debug`) or less
/// (`RUST_LOG=off`). In a `profile` build every record also goes to the Tracy capture as a
/// message (`runtime::profiling::TracyLogger`). Every sample calls it first; a second call
/// does nothing.
pub fn init_logging() {
    let logger = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).build();
    let level = logger.filter();
    if log::set_boxed_logger(Box::new(runtime::profiling::TracyLogger::new(logger))).is_ok() {
        log::set_max_level(level);
    }
}
