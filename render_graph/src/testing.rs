//! Helpers for GPU tests: a validated device that skips cleanly where there is no Vulkan,
//! and an assertion that validation stayed silent.

use std::sync::Arc;

use crate::device::{DeviceConfig, GpuDevice};

/// Whether the environment requires a Vulkan device (`ENGINE_REQUIRE_VULKAN=1`, set by CI).
pub fn vulkan_required() -> bool {
    std::env::var("ENGINE_REQUIRE_VULKAN").is_ok_and(|value| value == "1")
}

/// Creates a device with validation (and synchronization validation) on.
///
/// Returns `None` after printing `skipping: no Vulkan device (reason)` when the machine has
/// no usable Vulkan device or validation layer, unless `ENGINE_REQUIRE_VULKAN=1`, where it
/// panics with the reason.
pub fn gpu_test_context() -> Option<Arc<GpuDevice>> {
    gpu_test_context_without(&[])
}

/// Like [`gpu_test_context`], with the optional features `withheld` left off (see
/// [`DeviceConfig::withheld_features`]), to test the fallbacks of less capable devices.
pub fn gpu_test_context_without(withheld: &[&'static str]) -> Option<Arc<GpuDevice>> {
    let config = DeviceConfig {
        app_name: String::from("render_graph tests"),
        validation: true,
        withheld_features: withheld.to_vec(),
        surface_extensions: Vec::new(),
    };
    match GpuDevice::new(&config) {
        Ok(device) => Some(Arc::new(device)),
        Err(error) if vulkan_required() => {
            panic!("ENGINE_REQUIRE_VULKAN=1 but no validated Vulkan device: {error}")
        }
        Err(error) => {
            println!("skipping: no Vulkan device ({error})");
            None
        }
    }
}

/// Panics, printing every kept message, when validation reported any warning or error.
pub fn assert_no_validation_messages(device: &GpuDevice) {
    let counts = device.validation_counts();
    if counts.has_problems() {
        let messages = device.validation_messages();
        for message in &messages {
            eprintln!("{message}");
        }
        panic!(
            "validation reported {} error(s) and {} warning(s); first: {}",
            counts.error,
            counts.warning,
            messages.first().map_or("(none kept)", String::as_str)
        );
    }
}
