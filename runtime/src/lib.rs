//! The engine runtime: a work-stealing job system, a frame scheduler of ordered stages, and
//! the [`App`] that owns the ECS world and runs frames.
//!
//! - [`jobs`]: `scope`, `join`, `parallel_for` on a work-stealing pool where waiting threads
//!   help, so nested parallelism cannot deadlock.
//! - [`schedule`]: stages `Input`, `Transform`, `Visibility`, `Render` (and user stages), whose
//!   systems declare their reads and writes and run in conflict-free parallel batches.
//! - [`App`]: the hecs `World`, typed [`Resources`], the per-frame [`FrameContext`], and the
//!   frame loop.
//! - [`profiling`]: Tracy zones, plots and frame marks behind the `profile` feature.
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

#[cfg(feature = "test-support")]
pub mod alloc_counter;
mod app;
pub mod changes;
mod frame;
pub mod jobs;
pub mod profiling;
mod resources;
pub mod schedule;

pub use app::{App, FrameStats, FrameTime};
pub use frame::FrameContext;
pub use jobs::JobSystem;
pub use resources::{Res, ResMut, Resources};
pub use schedule::{
    ArchetypeColumns, Columns, CommandReport, Commands, EntityColumns, ExclusiveContext, ExclusiveParam, Frame,
    Publish, QueryAccess, QuerySet, Schedule, ScheduleError, Stage, StageName, System, SystemContext, SystemParam,
    SystemQuery,
};

/// The math library of the engine (`Vec3`, `Quat`, `Mat4`, …), re-exported so a game uses the
/// same version as the engine without pinning it.
pub use glam;
pub use hecs;
