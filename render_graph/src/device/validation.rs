//! The debug-utils messenger: counts validation messages by severity and keeps the text of
//! warnings and errors so a test can print them.

use std::cell::Cell;
use std::ffi::{c_char, c_void, CStr};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use ash::vk;

/// Most warning and error texts kept; later ones are only counted.
const MAX_KEPT_MESSAGES: usize = 64;

/// Message counts by severity, at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValidationCounts {
    /// Verbose (diagnostic) messages.
    pub verbose: u32,
    /// Informational messages.
    pub info: u32,
    /// Warnings: possible misuse or bad performance.
    pub warning: u32,
    /// Errors: invalid use of the API, including synchronization hazards.
    pub error: u32,
    /// General messages of any severity (the loader's own, e.g. "layer added by
    /// environment"): reported, never counted as problems.
    pub general: u32,
}

impl ValidationCounts {
    /// Whether there is any warning or error.
    pub fn has_problems(&self) -> bool {
        self.warning > 0 || self.error > 0
    }
}

/// Shared by the messenger callback and the device: counters and kept texts.
#[derive(Debug, Default)]
pub struct ValidationLog {
    // Relaxed ordering everywhere: the counters are independent statistics; readers only
    // need eventual values, and the kept texts are protected by the mutex.
    verbose: AtomicU32,
    info: AtomicU32,
    warning: AtomicU32,
    error: AtomicU32,
    general: AtomicU32,
    messages: Mutex<Vec<String>>,
}

impl ValidationLog {
    /// Current counts.
    pub fn counts(&self) -> ValidationCounts {
        ValidationCounts {
            verbose: self.verbose.load(Ordering::Relaxed),
            info: self.info.load(Ordering::Relaxed),
            warning: self.warning.load(Ordering::Relaxed),
            error: self.error.load(Ordering::Relaxed),
            general: self.general.load(Ordering::Relaxed),
        }
    }

    /// The kept warning and error texts (at most 64).
    pub fn messages(&self) -> Vec<String> {
        self.messages.lock().map(|kept| kept.clone()).unwrap_or_default()
    }

    /// Records one validation message.
    pub fn record(&self, severity: vk::DebugUtilsMessageSeverityFlagsEXT, text: &str) {
        self.record_message(severity, vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION, text, None);
    }

    /// Records one message of the messenger: validation and performance messages are counted
    /// by severity (warnings and errors kept, with the pass label `pass` when a command buffer
    /// label was active); general-only messages (the loader's) are counted apart.
    pub fn record_message(
        &self,
        severity: vk::DebugUtilsMessageSeverityFlagsEXT,
        types: vk::DebugUtilsMessageTypeFlagsEXT,
        text: &str,
        pass: Option<&str>,
    ) {
        let layer = vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE;
        if !types.intersects(layer) {
            self.general.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let counter = if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
            &self.error
        } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING) {
            &self.warning
        } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::INFO) {
            &self.info
        } else {
            &self.verbose
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let serious = vk::DebugUtilsMessageSeverityFlagsEXT::ERROR | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING;
        if severity.intersects(serious) {
            if let Ok(mut kept) = self.messages.lock() {
                if kept.len() < MAX_KEPT_MESSAGES {
                    kept.push(match pass {
                        Some(pass) => format!("[{severity:?}] (recording pass `{pass}`) {text}"),
                        None => format!("[{severity:?}] {text}"),
                    });
                }
            }
        }
    }
}

thread_local! {
    /// The debug label of the pass this thread is recording, or null. Validation reports
    /// most problems synchronously, inside the `vkCmd*` call, on the recording thread.
    static RECORDING: Cell<*const c_char> = const { Cell::new(std::ptr::null()) };
}

/// While alive, messages reported on this thread name `label` as the recording pass.
pub(crate) struct RecordingScope<'label> {
    previous: *const c_char,
    _label: PhantomData<&'label CStr>,
}

impl<'label> RecordingScope<'label> {
    pub(crate) fn enter(label: &'label CStr) -> RecordingScope<'label> {
        let previous = RECORDING.with(|recording| recording.replace(label.as_ptr()));
        RecordingScope { previous, _label: PhantomData }
    }
}

impl Drop for RecordingScope<'_> {
    fn drop(&mut self) {
        RECORDING.with(|recording| recording.set(self.previous));
    }
}

/// The label of the pass recording on this thread.
fn recording_label() -> Option<String> {
    let pointer = RECORDING.with(Cell::get);
    // SAFETY: a non-null pointer was set by a live `RecordingScope`, which borrows the
    // NUL-terminated label for as long as the pointer stays set.
    (!pointer.is_null()).then(|| unsafe { CStr::from_ptr(pointer) }.to_string_lossy().into_owned())
}

/// The messenger callback. `user_data` is a `*const ValidationLog` that the device keeps
/// alive until the messenger is destroyed.
///
/// # Safety
/// Called by the Vulkan loader with valid callback data, and `user_data` as registered.
pub(crate) unsafe extern "system" fn messenger_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user_data: *mut c_void,
) -> vk::Bool32 {
    if data.is_null() || user_data.is_null() {
        return vk::FALSE;
    }
    // SAFETY: the loader passes a valid callback-data struct for the duration of the call.
    let data = unsafe { &*data };
    let text = if data.p_message.is_null() {
        String::from("(no message)")
    } else {
        // SAFETY: `p_message` is a NUL-terminated string valid during the callback.
        unsafe { CStr::from_ptr(data.p_message) }.to_string_lossy().into_owned()
    };
    // The innermost command-buffer label is the graph pass that was recording; layers that
    // do not pass labels report on the recording thread, which knows its pass.
    let pass = if data.p_cmd_buf_labels.is_null() || data.cmd_buf_label_count == 0 {
        recording_label()
    } else {
        // SAFETY: the layer passes `cmd_buf_label_count` valid labels during the callback.
        let labels = unsafe { std::slice::from_raw_parts(data.p_cmd_buf_labels, data.cmd_buf_label_count as usize) };
        labels.last().filter(|label| !label.p_label_name.is_null()).map(|label| {
            // SAFETY: a non-null label name is a NUL-terminated string valid during the call.
            unsafe { CStr::from_ptr(label.p_label_name) }.to_string_lossy().into_owned()
        })
    };
    // SAFETY: `user_data` is the `ValidationLog` the device registered and keeps alive (in an
    // `Arc`) until after `vkDestroyDebugUtilsMessengerEXT`.
    let log = unsafe { &*user_data.cast::<ValidationLog>() };
    log.record_message(severity, types, &text, pass.as_deref());
    vk::FALSE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_severity_and_keeps_serious_texts() {
        let log = ValidationLog::default();
        log.record(vk::DebugUtilsMessageSeverityFlagsEXT::INFO, "loaded");
        log.record(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING, "slow");
        log.record(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR, "hazard");
        let counts = log.counts();
        assert_eq!((counts.info, counts.warning, counts.error), (1, 1, 1));
        assert!(counts.has_problems());
        assert_eq!(log.messages().len(), 2, "info texts are not kept");
    }

    #[test]
    fn recording_scopes_nest_and_end() {
        assert_eq!(recording_label(), None);
        {
            let _outer = RecordingScope::enter(c"outer");
            {
                let _inner = RecordingScope::enter(c"inner");
                assert_eq!(recording_label().as_deref(), Some("inner"));
            }
            assert_eq!(recording_label().as_deref(), Some("outer"));
        }
        assert_eq!(recording_label(), None);
    }

    #[test]
    fn loader_messages_are_not_problems_and_kept_texts_name_the_pass() {
        let log = ValidationLog::default();
        let warning = vk::DebugUtilsMessageSeverityFlagsEXT::WARNING;
        log.record_message(warning, vk::DebugUtilsMessageTypeFlagsEXT::GENERAL, "layer added by environment", None);
        assert!(!log.counts().has_problems(), "{:?}", log.counts());
        assert_eq!(log.counts().general, 1);
        log.record_message(warning, vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION, "hazard", Some("blur x"));
        assert!(log.counts().has_problems());
        assert!(log.messages()[0].contains("`blur x`"), "{:?}", log.messages());
    }
}
