//! Running a compiled graph: the executor records each frame in named steps into one of its
//! frames in flight, and passes see the frame through their contexts.

// The pass trait (`pass.rs`) and what a pass sees: the frame's parameters (`params.rs`),
// `prepare_context.rs`,
// `execute_context.rs` with descriptor binding (`bind.rs`), draws and dispatches
// (`commands.rs`), fills, clears and copies (`transfers.rs`) and GPU zones (`gpu_zones.rs`). The executor (`executor.rs`) runs a frame
// in steps, `record_pass.rs` records one pass, `recording.rs` holds the recording helpers
// (barrier batches, clears, poison fills, the rendering scope); the frame slots
// (`frame_slots.rs`) give back the statistics (`stats.rs`; warnings of work that does
// nothing: `warnings.rs`) and, under the feature
// `profile`, Tracy GPU zones (`gpu_profiler.rs`).
mod bind;
mod commands;
mod execute_context;
mod executor;
mod frame_slots;
#[cfg(feature = "profile")]
mod gpu_profiler;
mod gpu_zones;
mod params;
mod pass;
mod prepare_context;
mod record_pass;
mod recording;
mod stats;
mod transfers;
mod warnings;

pub use bind::Binding;
pub use commands::{DISPATCH_INDIRECT_COMMAND_BYTES, DRAW_INDEXED_INDIRECT_COMMAND_BYTES, DRAW_INDIRECT_COMMAND_BYTES};
pub use execute_context::{ExecuteContext, ResourceRef};
pub use executor::FRAMES_IN_FLIGHT;
pub(crate) use executor::{Executor, Frame};
pub use gpu_zones::MAX_GPU_ZONES;
pub(crate) use params::FrameParams;
pub(crate) use pass::PassOrigin;
pub use pass::{Pass, Typed, TypedPass};
pub use prepare_context::PrepareContext;
pub use recording::{POISON_COLOR, POISON_DEPTH, POISON_WORD};
pub use stats::{GraphStats, PassStats, ZoneStats};
pub use warnings::PassWarning;
