//! Log records in the capture: [`TracyLogger`] passes each record on and, in Tracy builds,
//! adds it to the timeline as a message.

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
