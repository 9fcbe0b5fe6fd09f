//! The debug-utils messenger: counts validation messages by severity and keeps the text of
//! warnings and errors so a test can print them.

use std::ffi::{c_void, CStr};
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
        }
    }

    /// The kept warning and error texts (at most 64).
    pub fn messages(&self) -> Vec<String> {
        self.messages.lock().map(|kept| kept.clone()).unwrap_or_default()
    }

    /// Records one message; called by the messenger callback.
    pub fn record(&self, severity: vk::DebugUtilsMessageSeverityFlagsEXT, text: &str) {
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
                    kept.push(format!("[{severity:?}] {text}"));
                }
            }
        }
    }
}

/// The messenger callback. `user_data` is a `*const ValidationLog` that the device keeps
/// alive until the messenger is destroyed.
///
/// # Safety
/// Called by the Vulkan loader with valid callback data, and `user_data` as registered.
pub(crate) unsafe extern "system" fn messenger_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user_data: *mut c_void,
) -> vk::Bool32 {
    if data.is_null() || user_data.is_null() {
        return vk::FALSE;
    }
    // SAFETY: the loader passes a valid callback-data struct for the duration of the call.
    let message_ptr = unsafe { (*data).p_message };
    let text = if message_ptr.is_null() {
        String::from("(no message)")
    } else {
        // SAFETY: `p_message` is a NUL-terminated string valid during the callback.
        unsafe { CStr::from_ptr(message_ptr) }.to_string_lossy().into_owned()
    };
    // SAFETY: `user_data` is the `ValidationLog` the device registered and keeps alive (in an
    // `Arc`) until after `vkDestroyDebugUtilsMessengerEXT`.
    let log = unsafe { &*user_data.cast::<ValidationLog>() };
    log.record(severity, &text);
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
}
