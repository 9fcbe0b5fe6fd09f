//! How to create the device, and the environment switches that turn validation on.

use std::ffi::CStr;

/// The Khronos validation layer, as the loader names it.
pub(super) const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// How to create the device.
#[derive(Clone, Debug)]
pub struct DeviceConfig {
    /// Application name given to the driver.
    pub app_name: String,
    /// Turn on the validation layer (with synchronization validation) and the messenger.
    /// [`DeviceConfig::default`] sets it when the environment has `ENGINE_VALIDATION=1`.
    pub validation: bool,
    /// Optional features to leave off even where the device has them, by the names of
    /// [`DeviceCapabilities::missing_optional`](crate::DeviceCapabilities::missing_optional) (`"drawIndirectCount"`, `"multiDrawIndirect"`,
    /// `"drawIndirectFirstInstance"`, `"samplerFilterMinmax"`): tests run the fallbacks of
    /// less capable devices this way.
    pub withheld_features: Vec<&'static str>,
    /// Instance extensions a window's surface needs (from
    /// [`crate::swapchain::surface_extensions`]); non-empty also enables `VK_KHR_surface`
    /// and the device's `VK_KHR_swapchain`. Empty (the default): a headless device.
    pub surface_extensions: Vec<&'static CStr>,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            app_name: String::from("engine"),
            validation: validation_requested_by_env(),
            withheld_features: Vec::new(),
            surface_extensions: Vec::new(),
        }
    }
}

/// Whether the environment asks for validation (`ENGINE_VALIDATION=1`).
pub fn validation_requested_by_env() -> bool {
    std::env::var("ENGINE_VALIDATION").is_ok_and(|value| value == "1")
}

/// Whether the Vulkan loader is told by the environment to force the validation layer on
/// (`VK_INSTANCE_LAYERS` naming it, or a `VK_LOADER_LAYERS_ENABLE` pattern matching it), the
/// way RenderDoc users and CI systems turn it on. The device then validates as if
/// [`DeviceConfig::validation`] were set: synchronization validation on, messages counted.
pub fn validation_forced_by_env() -> bool {
    let listed = std::env::var("VK_INSTANCE_LAYERS").is_ok_and(|layers| {
        layers.split([':', ';']).any(|layer| layer.trim().as_bytes() == VALIDATION_LAYER.to_bytes())
    });
    let enabled = std::env::var("VK_LOADER_LAYERS_ENABLE").is_ok_and(|patterns| {
        patterns.split(',').any(|pattern| layer_pattern_matches(pattern.trim(), "VK_LAYER_KHRONOS_validation"))
    });
    listed || enabled
}

/// The loader's layer filter syntax: `*` alone, or a name with an optional `*` at its start
/// and/or end; matching ignores case.
fn layer_pattern_matches(pattern: &str, layer: &str) -> bool {
    let (pattern, layer) = (pattern.to_ascii_lowercase(), layer.to_ascii_lowercase());
    match (pattern.strip_prefix('*'), pattern.strip_suffix('*')) {
        _ if pattern == "*" || pattern == "~all~" => true,
        (Some(rest), _) if rest.ends_with('*') => layer.contains(&rest[..rest.len() - 1]),
        (Some(rest), _) => layer.ends_with(rest),
        (None, Some(rest)) => layer.starts_with(rest),
        (None, None) => layer == pattern,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_layer_patterns_match_the_validation_layer() {
        let layer = "VK_LAYER_KHRONOS_validation";
        for pattern in
            ["*", "~all~", "*validation", "VK_LAYER_KHRONOS_*", "*KHRONOS*", layer, "vk_layer_khronos_validation"]
        {
            assert!(layer_pattern_matches(pattern, layer), "{pattern} matches");
        }
        for pattern in ["*profiles", "VK_LAYER_LUNARG_*", "VK_LAYER_KHRONOS_synchronization2"] {
            assert!(!layer_pattern_matches(pattern, layer), "{pattern} does not match");
        }
    }
}
