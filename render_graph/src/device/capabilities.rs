//! What a physical device offers beyond the required Vulkan 1.3 core, and the choice of the
//! best device (discrete GPU, then integrated, then virtual, then CPU) among those that have
//! the required features.

use ash::vk;

use crate::error::{GraphError, Result};

/// What the chosen device offers beyond the required Vulkan 1.3 core.
#[derive(Clone, Debug)]
pub struct DeviceCapabilities {
    /// The device name reported by the driver.
    pub name: String,
    /// Discrete, integrated, virtual or CPU.
    pub device_type: vk::PhysicalDeviceType,
    /// The device's Vulkan API version.
    pub api_version: u32,
    /// `vkCmdDrawIndexedIndirectCount` is available (enabled).
    pub draw_indirect_count: bool,
    /// Indirect draws may have `firstInstance != 0` (`drawIndirectFirstInstance`, enabled).
    pub draw_indirect_first_instance: bool,
    /// Indirect draws may have `drawCount > 1` (`multiDrawIndirect`, enabled).
    pub multi_draw_indirect: bool,
    /// Sampler min/max reduction (for single-pass depth pyramids) is available (enabled).
    pub sampler_filter_minmax: bool,
    /// The queue writes timestamps; GPU pass times are measured.
    pub timestamps: bool,
    /// Nanoseconds per timestamp tick.
    pub timestamp_period_ns: f32,
    /// `VK_EXT_calibrated_timestamps` with the device and `CLOCK_MONOTONIC_RAW` domains
    /// (enabled): a GPU timestamp and a CPU time read at once
    /// ([`GpuDevice::calibrated_timestamps`](crate::GpuDevice::calibrated_timestamps)), which
    /// keeps Tracy's GPU zones on the CPU's clock.
    pub calibrated_timestamps: bool,
    /// `VK_EXT_memory_budget` (enabled when offered): the heaps' budgets and usage
    /// ([`GpuDevice::memory_budget`](crate::GpuDevice::memory_budget)).
    pub memory_budget: bool,
    /// Alignment of mapped-memory flush and invalidate ranges.
    pub non_coherent_atom_size: u64,
    /// Optional features the device lacks, for the log.
    pub missing_optional: Vec<&'static str>,
}

/// One candidate physical device and why it is (not) usable.
pub(super) struct Candidate {
    pub(super) physical: vk::PhysicalDevice,
    pub(super) queue_family: u32,
    rank: u32,
    pub(super) capabilities: DeviceCapabilities,
}

/// Lower is better: discrete, integrated, virtual, CPU, other.
fn type_rank(device_type: vk::PhysicalDeviceType) -> u32 {
    match device_type {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        vk::PhysicalDeviceType::CPU => 3,
        _ => 4,
    }
}

/// The best usable physical device of `instance`, or why none is usable.
pub(super) fn pick_physical_device(
    entry: &ash::Entry,
    instance: &ash::Instance,
    withheld: &[&str],
) -> Result<Candidate> {
    // SAFETY: the instance is live.
    let physicals =
        unsafe { instance.enumerate_physical_devices() }.map_err(GraphError::vulkan("vkEnumeratePhysicalDevices"))?;
    let mut rejected = Vec::new();
    let mut best: Option<Candidate> = None;
    for physical in physicals {
        match inspect_physical_device(entry, instance, physical, withheld) {
            Ok(candidate) => {
                if best.as_ref().is_none_or(|best| candidate.rank < best.rank) {
                    best = Some(candidate);
                }
            }
            Err(reason) => rejected.push(reason),
        }
    }
    best.ok_or_else(|| {
        if rejected.is_empty() {
            GraphError::NoSuitableDevice(String::from("the loader reports no physical device"))
        } else {
            GraphError::NoSuitableDevice(rejected.join("; "))
        }
    })
}

fn inspect_physical_device(
    entry: &ash::Entry,
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
    withheld: &[&str],
) -> Result<Candidate, String> {
    // SAFETY: `physical` was enumerated from this live instance.
    let properties = unsafe { instance.get_physical_device_properties(physical) };
    let name = properties
        .device_name_as_c_str()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from("(unnamed)"));
    if properties.api_version < vk::API_VERSION_1_3 {
        return Err(format!("{name}: Vulkan 1.3 is required"));
    }
    let mut features12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut features13 = vk::PhysicalDeviceVulkan13Features::default();
    let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut features12).push_next(&mut features13);
    // SAFETY: the chain consists of valid structs that outlive the call.
    unsafe { instance.get_physical_device_features2(physical, &mut features) };
    let offered = |name: &str, feature: vk::Bool32| if withheld.contains(&name) { vk::FALSE } else { feature };
    let first_instance = offered("drawIndirectFirstInstance", features.features.draw_indirect_first_instance);
    let multi_draw = offered("multiDrawIndirect", features.features.multi_draw_indirect);
    // maintenance4 is mandatory in Vulkan 1.3; glslc's vulkan1.3 target needs it (LocalSizeId).
    let (sync2, dynamic_rendering) = (features13.synchronization2, features13.dynamic_rendering);
    let indirect_count = offered("drawIndirectCount", features12.draw_indirect_count);
    let minmax = offered("samplerFilterMinmax", features12.sampler_filter_minmax);
    if sync2 == vk::FALSE || dynamic_rendering == vk::FALSE || features13.maintenance4 == vk::FALSE {
        return Err(format!("{name}: synchronization2, dynamic rendering and maintenance4 are required"));
    }
    // SAFETY: as above.
    let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
    let wanted = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE;
    let Some((family_index, family)) =
        families.iter().enumerate().find(|(_, family)| family.queue_flags.contains(wanted) && family.queue_count > 0)
    else {
        return Err(format!("{name}: no graphics+compute queue"));
    };
    let timestamps = family.timestamp_valid_bits > 0 && properties.limits.timestamp_period > 0.0;
    let mut missing_optional = Vec::new();
    if indirect_count == vk::FALSE {
        missing_optional.push("drawIndirectCount");
    }
    if minmax == vk::FALSE {
        missing_optional.push("samplerFilterMinmax");
    }
    if first_instance == vk::FALSE {
        missing_optional.push("drawIndirectFirstInstance");
    }
    if multi_draw == vk::FALSE {
        missing_optional.push("multiDrawIndirect");
    }
    if !timestamps {
        missing_optional.push("timestamps");
    }
    let calibrated_timestamps = timestamps
        && !withheld.contains(&"calibratedTimestamps")
        && has_calibrated_timestamps(entry, instance, physical);
    if !calibrated_timestamps {
        missing_optional.push("calibratedTimestamps");
    }
    // SAFETY: `physical` is a device of this instance.
    let extensions = unsafe { instance.enumerate_device_extension_properties(physical) }.unwrap_or_default();
    let memory_budget = extensions
        .iter()
        .any(|extension| extension.extension_name_as_c_str().is_ok_and(|name| name == ash::ext::memory_budget::NAME));
    Ok(Candidate {
        physical,
        queue_family: family_index as u32,
        rank: type_rank(properties.device_type),
        capabilities: DeviceCapabilities {
            name,
            device_type: properties.device_type,
            api_version: properties.api_version,
            draw_indirect_count: indirect_count == vk::TRUE,
            draw_indirect_first_instance: first_instance == vk::TRUE,
            multi_draw_indirect: multi_draw == vk::TRUE,
            sampler_filter_minmax: minmax == vk::TRUE,
            timestamps,
            timestamp_period_ns: properties.limits.timestamp_period,
            calibrated_timestamps,
            memory_budget,
            non_coherent_atom_size: properties.limits.non_coherent_atom_size.max(1),
            missing_optional,
        },
    })
}

/// Whether `physical` offers `VK_EXT_calibrated_timestamps` with the device's and the CPU's
/// `CLOCK_MONOTONIC_RAW` time domains (the clock Tracy's calibration is read against).
fn has_calibrated_timestamps(entry: &ash::Entry, instance: &ash::Instance, physical: vk::PhysicalDevice) -> bool {
    // SAFETY: `physical` was enumerated from this live instance.
    let Ok(extensions) = (unsafe { instance.enumerate_device_extension_properties(physical) }) else { return false };
    let wanted = ash::ext::calibrated_timestamps::NAME;
    if !extensions.iter().any(|extension| extension.extension_name_as_c_str().is_ok_and(|name| name == wanted)) {
        return false;
    }
    let functions = ash::ext::calibrated_timestamps::Instance::new(entry, instance);
    // SAFETY: the extension is offered by `physical`, a device of this instance.
    let Ok(domains) = (unsafe { functions.get_physical_device_calibrateable_time_domains(physical) }) else {
        return false;
    };
    domains.contains(&vk::TimeDomainEXT::DEVICE) && domains.contains(&vk::TimeDomainEXT::CLOCK_MONOTONIC_RAW)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discrete_beats_integrated_beats_cpu() {
        assert!(type_rank(vk::PhysicalDeviceType::DISCRETE_GPU) < type_rank(vk::PhysicalDeviceType::INTEGRATED_GPU));
        assert!(type_rank(vk::PhysicalDeviceType::INTEGRATED_GPU) < type_rank(vk::PhysicalDeviceType::CPU));
        assert!(type_rank(vk::PhysicalDeviceType::CPU) < type_rank(vk::PhysicalDeviceType::OTHER));
    }
}
