//! The zone and plot macros (exported at the crate's root): each expands to nothing without
//! the feature `profile`, so instrumented code costs nothing.

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
