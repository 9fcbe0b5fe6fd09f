//! The capture's frames (the main frame set's marks, the app's own frames, the setup before
//! them) and the start and end of profiling: zones around workers' sleeps, which [`finish`]
//! closes so that Tracy never waits on an open zone at exit.

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
        let stolen = super::jobs::take_stolen_this_frame();
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
