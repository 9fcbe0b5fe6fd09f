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

/// Opens a Tracy zone that carries a number (the frame it works on, say), shown with the zone.
///
/// ```
/// let frame = 7_u64;
/// runtime::profile_zone_value!("render frame", frame);
/// ```
#[cfg(feature = "profile")]
#[macro_export]
macro_rules! profile_zone_value {
    ($name:literal, $value:expr) => {
        let _profile_zone_guard = $crate::profiling::tracy_client::Client::running().map(|client| {
            let span = client.span($crate::profiling::tracy_client::span_location!($name), 0);
            span.emit_value($value as u64);
            span
        });
    };
}

/// Opens a Tracy zone that carries a number (compiled out).
#[cfg(not(feature = "profile"))]
#[macro_export]
macro_rules! profile_zone_value {
    ($name:literal, $value:expr) => {
        let _ = &$value;
    };
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

/// Opens a Tracy zone named at run time whose "go to source" leads to `site` (a system's
/// definition, a pass's registration) instead of the line of this macro.
#[cfg(feature = "profile")]
#[macro_export]
macro_rules! profile_zone_site {
    ($name:expr, $site:expr) => {
        let _profile_zone_guard = $crate::profiling::site_zone($name, $site);
    };
}

/// Opens a Tracy zone named at run time at `site` (compiled out).
#[cfg(not(feature = "profile"))]
#[macro_export]
macro_rules! profile_zone_site {
    ($name:expr, $site:expr) => {
        let _ = (&$name, &$site);
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

/// Jobs taken from another thread's deque (or the injector by a thread that did not push
/// them) since the last frame mark.
#[cfg(feature = "profile")]
static STOLEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Jobs stolen over the process's life (what [`STOLEN`] counts, never reset).
#[cfg(feature = "profile")]
static STOLEN_TOTAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts a job one thread took from another's queue (plotted per frame as `jobs stolen`).
#[inline]
pub(crate) fn job_stolen() {
    #[cfg(feature = "profile")]
    {
        STOLEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        STOLEN_TOTAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
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

/// Marks the start of the app's first frame: what ran before it (setup) is a frame of its
/// own in the capture instead of the first frame's beginning.
pub fn setup_done() {
    #[cfg(feature = "profile")]
    if let Some(client) = tracy_client::Client::running() {
        client.message("setup done", 0);
        client.frame_mark();
    }
}

/// A frame of the app, from its start to its end: the discontinuous frame set `app frame`,
/// whose frames are exactly the app's (no setup before the first, no teardown after the
/// last); the main frame set's frames (between [`frame_mark`]s) tile the whole run instead.
#[must_use = "the frame lasts while the guard lives"]
pub struct AppFrame {
    #[cfg(feature = "profile")]
    _frame: Option<tracy_client::Frame>,
}

/// Opens an [`AppFrame`].
pub fn app_frame() -> AppFrame {
    AppFrame {
        #[cfg(feature = "profile")]
        _frame: tracy_client::Client::running()
            .map(|client| client.non_continuous_frame(tracy_client::frame_name!("app frame"))),
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

/// Workers open a zone around their sleep only while this is set ([`finish`] clears it).
#[cfg(feature = "profile")]
static SLEEP_ZONES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// `idle: sleeping` zones open now.
#[cfg(feature = "profile")]
static OPEN_SLEEP_ZONES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many workers sleep inside an `idle: sleeping` zone now: zero after [`finish`] (a
/// check of the clean exit without a Tracy server).
#[cfg(all(feature = "profile", feature = "test-support"))]
pub fn open_sleep_zones() -> usize {
    OPEN_SLEEP_ZONES.load(std::sync::atomic::Ordering::SeqCst)
}

/// Workers between deciding how to sleep and waking up (see [`SleepZone`]).
#[cfg(feature = "profile")]
static SLEEPERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A worker's sleep, seen in a capture as the zone `idle: sleeping` while zones are allowed
/// around sleeps: a zone that is still open when the process ends keeps Tracy waiting for
/// it (under `TRACY_NO_EXIT=1` the program never exits), so [`finish`] wakes every sleeper
/// once to close its zone and later sleeps carry none.
#[cfg(feature = "profile")]
pub(crate) struct SleepZone {
    zone: Option<tracy_client::Span>,
}

/// Opens the zone of a worker's sleep (none once [`finish`] ran).
#[cfg(feature = "profile")]
pub(crate) fn sleep_zone() -> SleepZone {
    use std::sync::atomic::Ordering;
    // Counted before the flag is read: `finish` then either sees this sleeper or this sleeper
    // sees the flag cleared (both are sequentially consistent).
    SLEEPERS.fetch_add(1, Ordering::SeqCst);
    let zone = if SLEEP_ZONES.load(Ordering::SeqCst) {
        tracy_client::Client::running().map(|client| client.span(tracy_client::span_location!("idle: sleeping"), 0))
    } else {
        None
    };
    if zone.is_some() {
        OPEN_SLEEP_ZONES.fetch_add(1, Ordering::SeqCst);
    }
    SleepZone { zone }
}

#[cfg(feature = "profile")]
impl Drop for SleepZone {
    fn drop(&mut self) {
        // The zone (a field) closes after this body: count the sleeper out only then.
        if let Some(zone) = self.zone.take() {
            drop(zone);
            OPEN_SLEEP_ZONES.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
        SLEEPERS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Ends profiling for the process: wakes every sleeping worker of the process-wide job
/// system once so that its `idle: sleeping` zone closes, and stops zones around later
/// sleeps, so that no zone is left open when the program exits (Tracy waits for open zones
/// under `TRACY_NO_EXIT=1`). Dropping the last [`App`](crate::App) calls it; call it before
/// `std::process::exit`. Pools made with `JobSystem::new` close their zones when dropped.
/// Returns after every sleeper closed its zone, or after half a second. Without the
/// `profile` feature it does nothing.
pub fn finish() {
    #[cfg(feature = "profile")]
    {
        use std::sync::atomic::Ordering;
        // The main frame set's last frame ended at the last frame mark; what the capture shows
        // after it is teardown (and, under `TRACY_NO_EXIT=1`, the wait for the capture).
        if let Some(client) = tracy_client::Client::running() {
            client.message("app finished: teardown follows", 0);
        }
        SLEEP_ZONES.store(false, Ordering::SeqCst);
        let started = std::time::Instant::now();
        while SLEEPERS.load(Ordering::SeqCst) > 0 && started.elapsed() < std::time::Duration::from_millis(500) {
            crate::jobs::wake_global_workers();
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}

/// Allows zones around sleeps again (an [`App`](crate::App) made after [`finish`]).
pub(crate) fn restart() {
    #[cfg(feature = "profile")]
    SLEEP_ZONES.store(true, std::sync::atomic::Ordering::SeqCst);
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

/// A logger that passes every record to `inner` and, in Tracy builds with a client
/// running, also to the capture as a message with the record's severity and a colour by
/// level (errors red, warnings orange, info white, debug and trace grey), so log lines stand
/// in the timeline beside the zones they happened in.
///
/// ```
/// struct Quiet;
/// impl log::Log for Quiet {
///     fn enabled(&self, _: &log::Metadata<'_>) -> bool { true }
///     fn log(&self, _: &log::Record<'_>) {}
///     fn flush(&self) {}
/// }
/// let logger = runtime::profiling::TracyLogger::new(Quiet);
/// log::Log::log(&logger, &log::Record::builder().args(format_args!("hello")).build());
/// ```
pub struct TracyLogger<L> {
    inner: L,
}

impl<L: log::Log> TracyLogger<L> {
    /// Wraps `inner` (an `env_logger::Logger`, say; install with `log::set_boxed_logger`).
    pub fn new(inner: L) -> TracyLogger<L> {
        TracyLogger { inner }
    }
}

impl<L: log::Log> log::Log for TracyLogger<L> {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        self.inner.enabled(metadata)
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.inner.enabled(record.metadata()) {
            return;
        }
        self.inner.log(record);
        #[cfg(feature = "profile")]
        if tracy_client::Client::running().is_some() {
            use tracy_client::sys;
            let (severity, color) = match record.level() {
                log::Level::Error => (sys::TracyMessageSeverity_TracyMessageSeverityError, 0xff_40_40),
                log::Level::Warn => (sys::TracyMessageSeverity_TracyMessageSeverityWarning, 0xff_a0_20),
                log::Level::Info => (sys::TracyMessageSeverity_TracyMessageSeverityInfo, 0xff_ff_ff),
                log::Level::Debug => (sys::TracyMessageSeverity_TracyMessageSeverityDebug, 0xa0_a0_a0),
                log::Level::Trace => (sys::TracyMessageSeverity_TracyMessageSeverityTrace, 0x80_80_80),
            };
            let text = format!("{} {}: {}", record.level(), record.target(), record.args());
            // SAFETY: Tracy copies the text; the length is the string's.
            unsafe { sys::___tracy_emit_logString(severity as i8, color, 0, text.len(), text.as_ptr().cast()) };
        }
    }

    fn flush(&self) {
        self.inner.flush();
    }
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

/// What a job's zone is named after and where its "go to source" leads: the label set by
/// [`job_label`] at the label's call, else the call that spawned the job.
#[cfg(feature = "profile")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct JobSite {
    label: Option<&'static str>,
    location: &'static std::panic::Location<'static>,
}

#[cfg(feature = "profile")]
thread_local! {
    /// The site given to jobs spawned from this thread (see [`job_label`]).
    static JOB_SITE: std::cell::Cell<Option<JobSite>> = const { std::cell::Cell::new(None) };
}

/// Restores the previous job label when dropped (see [`job_label`]).
#[must_use = "the label holds only while the guard lives"]
pub struct JobLabelGuard {
    #[cfg(feature = "profile")]
    previous: Option<JobSite>,
}

/// Names the jobs this thread spawns (through `parallel_for`, `join` or a scope) until the
/// guard drops: in a Tracy capture each such job is a zone of this name on the thread that
/// runs it (`worker-N` or a waiting thread), whose source is this call, so the capture shows
/// how the work spread over the cores. A job's own spawns inherit its name. Without a label,
/// a job is named after the call that spawned it (`job at file:line`). Give each label at
/// one place, and not the name of a zone: one name is then one source location. Without the
/// `profile` feature it does nothing.
///
/// ```
/// let _label = runtime::profiling::job_label("visibility cull job");
/// runtime::jobs::parallel_for(0..1000, 64, |_| {});
/// ```
#[track_caller]
pub fn job_label(name: &'static str) -> JobLabelGuard {
    #[cfg(feature = "profile")]
    {
        let site = JobSite { label: Some(name), location: std::panic::Location::caller() };
        JobLabelGuard { previous: JOB_SITE.with(|current| current.replace(Some(site))) }
    }
    #[cfg(not(feature = "profile"))]
    {
        let _ = name;
        JobLabelGuard {}
    }
}

/// Names the jobs this thread spawns `name`, with `location` as their source (a system's
/// definition), until the guard drops (see [`job_label`]).
#[cfg(feature = "profile")]
pub(crate) fn job_label_at(name: &'static str, location: &'static std::panic::Location<'static>) -> JobLabelGuard {
    let site = JobSite { label: Some(name), location };
    JobLabelGuard { previous: JOB_SITE.with(|current| current.replace(Some(site))) }
}

/// At a call that spawns jobs: without a label on this thread, names the jobs after the call
/// (the caller of the `#[track_caller]` entry point) until the guard drops.
#[cfg(feature = "profile")]
#[track_caller]
pub(crate) fn spawn_site() -> Option<JobLabelGuard> {
    // Read here: inside the closures below the caller would be the closure's line.
    let location = std::panic::Location::caller();
    JOB_SITE.with(|current| {
        current.get().is_none().then(|| {
            let site = JobSite { label: None, location };
            JobLabelGuard { previous: current.replace(Some(site)) }
        })
    })
}

impl Drop for JobLabelGuard {
    fn drop(&mut self) {
        #[cfg(feature = "profile")]
        JOB_SITE.with(|current| current.set(self.previous));
    }
}

/// The site jobs spawned from this thread get now.
#[cfg(feature = "profile")]
pub(crate) fn current_job_site() -> Option<JobSite> {
    JOB_SITE.with(std::cell::Cell::get)
}

/// The label jobs spawned from this thread get now (`None` without one).
#[cfg(all(test, feature = "profile"))]
pub(crate) fn current_job_label() -> Option<&'static str> {
    current_job_site().and_then(|site| site.label)
}

/// What runs while a job runs on this thread: a zone named after the job's site, and the
/// site itself, so the jobs it spawns carry it too.
#[cfg(feature = "profile")]
pub(crate) struct JobZone {
    _zone: Option<tracy_client::Span>,
    _label: JobLabelGuard,
}

/// Opens the zone of a job made at `site` on the thread that runs it.
#[cfg(feature = "profile")]
pub(crate) fn job_zone(site: Option<JobSite>) -> JobZone {
    let zone = tracy_client::Client::running().map(|client| match site {
        Some(JobSite { label: Some(label), location }) => {
            client.span_alloc(Some(label), label, location.file(), location.line(), 0)
        }
        Some(JobSite { label: None, location }) => {
            let name = format!("job at {}:{}", location.file(), location.line());
            client.span_alloc(Some(&name), "", location.file(), location.line(), 0)
        }
        None => client.span_alloc(Some("job outside any spawning call"), "", file!(), line!(), 0),
    });
    let previous = JOB_SITE.with(|current| current.replace(site));
    JobZone { _zone: zone, _label: JobLabelGuard { previous } }
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
            let _label = job_label("visibility cull job");
            pool.parallel_for(0..64, 1, |_| {
                std::thread::sleep(std::time::Duration::from_micros(200));
                seen.lock()
                    .expect("not poisoned")
                    .push((current_job_label(), std::thread::current().name().map(String::from)));
            });
        }
        assert_eq!(current_job_label(), None, "the guard restored the default");
        let seen = seen.into_inner().expect("not poisoned");
        let on_workers: Vec<_> = seen
            .iter()
            .filter(|(_, thread)| thread.as_deref().is_some_and(|name| name.starts_with("worker-")))
            .collect();
        assert!(!on_workers.is_empty(), "some chunks ran on workers: {seen:?}");
        assert!(seen.iter().all(|(label, _)| *label == Some("visibility cull job")), "{seen:?}");
    }

    /// A job without a label is named after the call that spawned it; a label's source is
    /// the call that set it.
    #[test]
    fn jobs_carry_the_site_of_their_label_or_of_their_spawning_call() {
        let pool = crate::jobs::JobSystem::new(2);
        let sites = std::sync::Mutex::new(Vec::new());
        let record = || sites.lock().expect("not poisoned").push(current_job_site().expect("a job has a site"));
        pool.parallel_for(0..4, 1, |_| record());
        let spawn_line = line!() - 1;
        let label = job_label("labelled test job");
        let label_line = line!() - 1;
        pool.parallel_for(0..4, 1, |_| record());
        drop(label);
        let sites = sites.into_inner().expect("not poisoned");
        let (unlabelled, labelled) = sites.split_at(4);
        for site in unlabelled {
            assert_eq!((site.label, site.location.line()), (None, spawn_line), "{site:?}");
            assert!(site.location.file().ends_with("profiling.rs"), "{site:?}");
        }
        for site in labelled {
            assert_eq!((site.label, site.location.line()), (Some("labelled test job"), label_line), "{site:?}");
        }
    }

    /// Chunks that ran on workers were taken from the caller's deque (or the injector): the
    /// `jobs stolen` plot counts them.
    #[test]
    fn stolen_jobs_are_counted_for_the_frame_plot() {
        let pool = crate::jobs::JobSystem::new(3);
        // The total, not this frame's count: other tests end frames meanwhile.
        let total = || STOLEN_TOTAL.load(std::sync::atomic::Ordering::Relaxed);
        let before = total();
        let on_workers = std::sync::atomic::AtomicUsize::new(0);
        pool.parallel_for(0..64, 1, |_| {
            std::thread::sleep(std::time::Duration::from_micros(200));
            if std::thread::current().name().is_some_and(|name| name.starts_with("worker-")) {
                on_workers.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
        assert!(on_workers.into_inner() > 0, "some chunks ran on workers");
        assert!(total() > before, "the workers' chunks were counted as stolen");
    }
}
