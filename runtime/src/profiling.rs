//! Profiling facade over Tracy, compiled in only with the cargo feature `profile`.
//!
//! With the feature off, `tracy-client` is not a dependency and every macro here expands to
//! nothing, so instrumented code costs nothing. Captures are opened with the Tracy profiler
//! 0.14 (the protocol tracy-client 0.19 speaks).

/// Opens a Tracy zone that lasts until the end of the enclosing block.
///
/// ```
/// fn update() {
///     runtime::profile_zone!("update");
///     // ... work measured by the zone ...
/// }
/// update();
/// ```
#[cfg(feature = "profile")]
#[macro_export]
macro_rules! profile_zone {
    ($name:literal) => {
        let _profile_zone_guard = $crate::profiling::tracy_client::Client::running()
            .map(|client| client.span($crate::profiling::tracy_client::span_location!($name), 0));
    };
}

/// Opens a Tracy zone that lasts until the end of the enclosing block (compiled out).
#[cfg(not(feature = "profile"))]
#[macro_export]
macro_rules! profile_zone {
    ($name:literal) => {};
}

/// Opens a Tracy zone with a name known only at run time (a system's name, say).
#[cfg(feature = "profile")]
#[macro_export]
macro_rules! profile_zone_dynamic {
    ($name:expr) => {
        let _profile_zone_guard = $crate::profiling::dynamic_zone($name, file!(), line!());
    };
}

/// Opens a Tracy zone with a name known only at run time (compiled out).
#[cfg(not(feature = "profile"))]
#[macro_export]
macro_rules! profile_zone_dynamic {
    ($name:expr) => {
        let _ = &$name;
    };
}

/// Adds a value to a Tracy plot (objects visible, draws, …).
#[cfg(feature = "profile")]
#[macro_export]
macro_rules! profile_plot {
    ($name:literal, $value:expr) => {
        $crate::profiling::plot($crate::profiling::tracy_client::plot_name!($name), $value as f64);
    };
}

/// Adds a value to a Tracy plot (compiled out).
#[cfg(not(feature = "profile"))]
#[macro_export]
macro_rules! profile_plot {
    ($name:literal, $value:expr) => {
        let _ = &$value;
    };
}

#[cfg(feature = "profile")]
pub use tracy_client;

/// Jobs taken from another thread's deque (or the injector by a thread that did not push
/// them) since the last frame mark.
#[cfg(feature = "profile")]
static STOLEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts a job one thread took from another's queue (plotted per frame as `jobs stolen`).
#[inline]
pub(crate) fn job_stolen() {
    #[cfg(feature = "profile")]
    STOLEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// Jobs stolen since the last [`frame_mark`] (always 0 without the `profile` feature).
pub fn jobs_stolen_this_frame() -> u64 {
    #[cfg(feature = "profile")]
    {
        STOLEN.load(std::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(feature = "profile"))]
    {
        0
    }
}

/// Marks the end of a frame in the capture, with the plot `jobs stolen` (jobs that ran on a
/// thread other than the one that queued them, this frame).
#[inline]
pub fn frame_mark() {
    #[cfg(feature = "profile")]
    {
        let stolen = STOLEN.swap(0, std::sync::atomic::Ordering::Relaxed);
        if let Some(client) = tracy_client::Client::running() {
            client.plot(tracy_client::plot_name!("jobs stolen"), stolen as f64);
            client.frame_mark();
        }
    }
}

/// Starts the Tracy client if profiling is compiled in; a no-op otherwise.
pub fn start() {
    #[cfg(feature = "profile")]
    {
        let _client = tracy_client::Client::start();
    }
}

/// Whether this build records Tracy zones.
pub const fn enabled() -> bool {
    cfg!(feature = "profile")
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

#[cfg(feature = "profile")]
thread_local! {
    /// The name given to jobs spawned from this thread (see [`job_label`]).
    static JOB_LABEL: std::cell::Cell<&'static str> = const { std::cell::Cell::new("job") };
}

/// Restores the previous job label when dropped (see [`job_label`]).
#[must_use = "the label holds only while the guard lives"]
pub struct JobLabelGuard {
    #[cfg(feature = "profile")]
    previous: &'static str,
}

/// Names the jobs this thread spawns (through `parallel_for`, `join` or a scope) until the
/// guard drops: in a Tracy capture each such job is a zone of this name on the thread that
/// runs it (`worker-N` or a waiting thread), so the capture shows how the work spread over
/// the cores. A job's own spawns inherit its name. Without the `profile` feature it does
/// nothing.
///
/// ```
/// let _label = runtime::profiling::job_label("visibility cull");
/// runtime::jobs::parallel_for(0..1000, 64, |_| {});
/// ```
pub fn job_label(name: &'static str) -> JobLabelGuard {
    #[cfg(feature = "profile")]
    {
        JobLabelGuard { previous: JOB_LABEL.with(|label| label.replace(name)) }
    }
    #[cfg(not(feature = "profile"))]
    {
        let _ = name;
        JobLabelGuard {}
    }
}

impl Drop for JobLabelGuard {
    fn drop(&mut self) {
        #[cfg(feature = "profile")]
        JOB_LABEL.with(|label| label.set(self.previous));
    }
}

/// The label jobs spawned from this thread get now.
#[cfg(feature = "profile")]
pub(crate) fn current_job_label() -> &'static str {
    JOB_LABEL.with(std::cell::Cell::get)
}

/// What runs while a job runs on this thread: a zone named after the job's label, and the
/// label itself, so the jobs it spawns carry it too.
#[cfg(feature = "profile")]
pub(crate) struct JobZone {
    _zone: Option<tracy_client::Span>,
    _label: JobLabelGuard,
}

/// Opens the zone of a job named `label` on the thread that runs it.
#[cfg(feature = "profile")]
pub(crate) fn job_zone(label: &'static str) -> JobZone {
    JobZone { _zone: dynamic_zone(label, file!(), line!()), _label: job_label(label) }
}

#[cfg(all(test, feature = "profile", not(loom)))]
mod tests {
    use super::*;

    /// A job carries the label of the thread that spawned it and runs under it wherever it
    /// runs, so its zone (and the jobs it spawns) get that name.
    #[test]
    fn jobs_run_under_the_label_they_were_spawned_with() {
        let pool = crate::jobs::JobSystem::new(3);
        let seen = std::sync::Mutex::new(Vec::new());
        {
            let _label = job_label("visibility cull");
            pool.parallel_for(0..64, 1, |_| {
                std::thread::sleep(std::time::Duration::from_micros(200));
                seen.lock()
                    .expect("not poisoned")
                    .push((current_job_label(), std::thread::current().name().map(String::from)));
            });
        }
        assert_eq!(current_job_label(), "job", "the guard restored the default");
        let seen = seen.into_inner().expect("not poisoned");
        let on_workers: Vec<_> = seen
            .iter()
            .filter(|(_, thread)| thread.as_deref().is_some_and(|name| name.starts_with("worker-")))
            .collect();
        assert!(!on_workers.is_empty(), "some chunks ran on workers: {seen:?}");
        assert!(seen.iter().all(|(label, _)| *label == "visibility cull"), "{seen:?}");
    }

    /// Chunks that ran on workers were taken from the caller's deque (or the injector): the
    /// `jobs stolen` plot counts them.
    #[test]
    fn stolen_jobs_are_counted_for_the_frame_plot() {
        let pool = crate::jobs::JobSystem::new(3);
        let before = jobs_stolen_this_frame();
        let on_workers = std::sync::atomic::AtomicUsize::new(0);
        pool.parallel_for(0..64, 1, |_| {
            std::thread::sleep(std::time::Duration::from_micros(200));
            if std::thread::current().name().is_some_and(|name| name.starts_with("worker-")) {
                on_workers.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
        assert!(on_workers.into_inner() > 0, "some chunks ran on workers");
        assert!(jobs_stolen_this_frame() > before, "the workers' chunks were counted as stolen");
    }
}
