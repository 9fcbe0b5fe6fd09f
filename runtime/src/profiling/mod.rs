//! Profiling facade over Tracy, compiled in only with the cargo feature `profile`.
//!
//! With the feature off, `tracy-client` is not a dependency and every macro here expands to
//! nothing, so instrumented code costs nothing. Captures are opened with the Tracy profiler
//! 0.14 (the protocol tracy-client 0.19 speaks).
//!
//! The parts: the zone macros (`macros.rs`), the capture's frames and the process's start and
//! end (`session.rs`: frame marks, the app's frames, the zones around workers' sleeps that
//! [`finish`] closes), the jobs' zones and labels (`jobs.rs`) and the logger that copies log
//! records into the capture (`logger.rs`).

mod jobs;
mod logger;
mod macros;
mod session;

#[cfg(feature = "profile")]
pub use tracy_client;

// Jobs: their labels, zones and the count of steals.
pub(crate) use jobs::job_stolen;
#[cfg(feature = "profile")]
pub(crate) use jobs::{current_job_site, job_label_at, job_zone, spawn_site, JobSite};
pub use jobs::{job_label, jobs_stolen_this_frame, JobLabelGuard};
// The capture's frames, and the start and end of profiling.
#[cfg(all(feature = "profile", feature = "test-support"))]
pub use session::open_sleep_zones;
pub(crate) use session::restart;
#[cfg(feature = "profile")]
pub(crate) use session::sleep_zone;
pub use session::{app_frame, finish, frame_mark, setup_done, start, AppFrame};
// Log records in the capture.
pub use logger::TracyLogger;

/// Where a zone's "go to source" leads: a function (a system's body type, a pass's type) and
/// the source location that made it (a system's definition, a pass's `add_pass`).
///
/// ```
/// #[track_caller]
/// fn make() -> runtime::profiling::ZoneSite {
///     runtime::profiling::ZoneSite::caller("my_game::ai")
/// }
/// let site = make();
/// assert_eq!(site.function, "my_game::ai");
/// assert!(site.location.file().ends_with(".rs"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneSite {
    /// The function shown beside the zone.
    pub function: &'static str,
    /// The file and line "go to source" opens.
    pub location: &'static std::panic::Location<'static>,
}

impl ZoneSite {
    /// A site at the caller's location (the call through `#[track_caller]` functions).
    #[track_caller]
    pub fn caller(function: &'static str) -> ZoneSite {
        ZoneSite { function, location: std::panic::Location::caller() }
    }

    /// The function of a closure or function value: its type's name, the path of the
    /// function that wrote it (`game::ai::steer::{{closure}}`).
    pub fn function_of<T: ?Sized>(_: &T) -> &'static str {
        std::any::type_name::<T>()
    }
}

/// A zone named `name` whose source is `site`.
#[cfg(feature = "profile")]
#[doc(hidden)]
pub fn site_zone(name: &str, site: &ZoneSite) -> Option<tracy_client::Span> {
    tracy_client::Client::running()
        .map(|client| client.span_alloc(Some(name), site.function, site.location.file(), site.location.line(), 0))
}

/// A global allocator that reports every allocation to Tracy (tracy-client's own
/// `ProfiledAllocator` over the system allocator): opt in from a binary built with
/// `profile`, and the capture's memory view shows the heap over the frame.
///
/// ```ignore
/// #[cfg(feature = "profile")]
/// #[global_allocator]
/// static ALLOCATOR: runtime::profiling::TrackedAllocator = runtime::profiling::tracked_allocator();
/// ```
#[cfg(feature = "profile")]
pub type TrackedAllocator = tracy_client::ProfiledAllocator<std::alloc::System>;

/// The [`TrackedAllocator`], without call stacks (each would cost a stack walk).
#[cfg(feature = "profile")]
pub const fn tracked_allocator() -> TrackedAllocator {
    tracy_client::ProfiledAllocator::new(std::alloc::System, 0)
}

/// Whether this build records Tracy zones.
pub const fn enabled() -> bool {
    cfg!(feature = "profile")
}

/// Names the current thread in the capture after its OS name (workers are `worker-N`); a
/// thread of the engine's own outside the job system (the render thread) calls it first.
pub fn name_this_thread() {
    name_current_thread();
}

/// Names the current thread in the capture after its OS name (workers are `worker-N`).
pub(crate) fn name_current_thread() {
    #[cfg(feature = "profile")]
    if let (Some(client), Some(name)) = (tracy_client::Client::running(), std::thread::current().name()) {
        client.set_thread_name(name);
    }
}

/// A zone whose name is a run-time string.
#[cfg(feature = "profile")]
#[doc(hidden)]
pub fn dynamic_zone(name: &str, file: &str, line: u32) -> Option<tracy_client::Span> {
    tracy_client::Client::running().map(|client| client.span_alloc(Some(name), "", file, line, 0))
}

/// Records one plot value.
#[cfg(feature = "profile")]
#[doc(hidden)]
pub fn plot(name: tracy_client::PlotName, value: f64) {
    if let Some(client) = tracy_client::Client::running() {
        client.plot(name, value);
    }
}
