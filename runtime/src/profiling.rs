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

/// Marks the end of a frame in the capture.
#[inline]
pub fn frame_mark() {
    #[cfg(feature = "profile")]
    if let Some(client) = tracy_client::Client::running() {
        client.frame_mark();
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
