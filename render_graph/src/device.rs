//! The Vulkan device: loader loaded at run time, instance with optional validation, physical
//! device selection, logical device with Vulkan 1.3 synchronization2 and dynamic rendering,
//! and the gpu-allocator that owns all memory. Headless unless [`DeviceConfig::surface_extensions`]
//! asks for presentation (then `VK_KHR_swapchain` is enabled too; see [`crate::swapchain`]).

use std::ffi::{c_void, CStr, CString};
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex, MutexGuard};

use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};

use crate::error::{GraphError, Result};
use crate::validation::{messenger_callback, ValidationCounts, ValidationLog};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// How to create the device.
#[derive(Clone, Debug)]
pub struct DeviceConfig {
    /// Application name given to the driver.
    pub app_name: String,
    /// Turn on the validation layer (with synchronization validation) and the messenger.
    /// [`DeviceConfig::default`] sets it when the environment has `ENGINE_VALIDATION=1`.
    pub validation: bool,
    /// Optional features to leave off even where the device has them, by the names of
    /// [`DeviceCapabilities::missing_optional`] (`"drawIndirectCount"`, `"multiDrawIndirect"`,
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
    /// ([`GpuDevice::calibrated_timestamps`]), which keeps Tracy's GPU zones on the CPU's
    /// clock.
    pub calibrated_timestamps: bool,
    /// Alignment of mapped-memory flush and invalidate ranges.
    pub non_coherent_atom_size: u64,
    /// Optional features the device lacks, for the log.
    pub missing_optional: Vec<&'static str>,
}

/// A headless Vulkan device with one graphics+compute queue and its memory allocator.
pub struct GpuDevice {
    // Field order does not matter: `Drop` destroys everything explicitly in reverse order.
    entry: ash::Entry,
    instance: ash::Instance,
    physical: vk::PhysicalDevice,
    device: ash::Device,
    queue: Mutex<vk::Queue>,
    queue_family: u32,
    capabilities: DeviceCapabilities,
    allocator: ManuallyDrop<Mutex<Allocator>>,
    debug_instance: Option<ash::ext::debug_utils::Instance>,
    debug_device: Option<ash::ext::debug_utils::Device>,
    /// The calibrated-timestamps functions, when the extension is enabled.
    calibrated: Option<ash::ext::calibrated_timestamps::Device>,
    messenger: vk::DebugUtilsMessengerEXT,
    validation: Option<Arc<ValidationLog>>,
    /// The validation layer is on (asked for by the config or forced by the environment).
    validation_active: bool,
    /// Surface and swapchain extensions are enabled.
    presentation: bool,
    nearest_sampler: vk::Sampler,
    texture_sampler: vk::Sampler,
    immediate_pool: Mutex<vk::CommandPool>,
}

/// One candidate physical device and why it is (not) usable.
struct Candidate {
    physical: vk::PhysicalDevice,
    queue_family: u32,
    rank: u32,
    capabilities: DeviceCapabilities,
}

impl GpuDevice {
    /// Loads the Vulkan loader, creates an instance and picks the best device (discrete GPU,
    /// then integrated, then virtual, then CPU).
    ///
    /// Returns [`GraphError::LoaderMissing`] when the machine has no Vulkan loader and
    /// [`GraphError::NoSuitableDevice`] when no device supports Vulkan 1.3 with
    /// synchronization2 and dynamic rendering.
    pub fn new(config: &DeviceConfig) -> Result<GpuDevice> {
        // SAFETY: loading the system Vulkan loader runs its initialisation; we trust the
        // installed loader, which is the documented precondition of `Entry::load`.
        let entry = unsafe { ash::Entry::load() }.map_err(|error| GraphError::LoaderMissing(error.to_string()))?;
        // SAFETY: `entry` holds a loaded loader.
        let instance_version = unsafe { entry.try_enumerate_instance_version() }
            .map_err(GraphError::vulkan("vkEnumerateInstanceVersion"))?
            .unwrap_or(vk::API_VERSION_1_0);
        if instance_version < vk::API_VERSION_1_3 {
            return Err(GraphError::NoSuitableDevice(format!(
                "the loader supports Vulkan {}.{} only, 1.3 is required",
                vk::api_version_major(instance_version),
                vk::api_version_minor(instance_version)
            )));
        }
        let debug_utils_available = instance_has_extension(&entry, None, ash::ext::debug_utils::NAME)?;
        let validate = config.validation || validation_forced_by_env();
        if validate {
            // SAFETY: `entry` holds a loaded loader.
            let layers = unsafe { entry.enumerate_instance_layer_properties() }
                .map_err(GraphError::vulkan("vkEnumerateInstanceLayerProperties"))?;
            let has_layer =
                layers.iter().any(|layer| layer.layer_name_as_c_str().is_ok_and(|name| name == VALIDATION_LAYER));
            if !has_layer || !debug_utils_available {
                return Err(GraphError::NoSuitableDevice(String::from(
                    "validation was requested but VK_LAYER_KHRONOS_validation or \
                     VK_EXT_debug_utils is not installed",
                )));
            }
        }
        let validation_features =
            validate && instance_has_extension(&entry, Some(VALIDATION_LAYER), ash::ext::validation_features::NAME)?;

        let app_name = CString::new(config.app_name.replace('\0', " ")).unwrap_or_else(|_| CString::from(c"engine"));
        let app_info = vk::ApplicationInfo::default()
            .application_name(&app_name)
            .engine_name(c"engine")
            .api_version(vk::API_VERSION_1_3);
        let mut extensions = Vec::new();
        if debug_utils_available {
            extensions.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        if validation_features {
            extensions.push(ash::ext::validation_features::NAME.as_ptr());
        }
        let presentation = !config.surface_extensions.is_empty();
        if presentation {
            extensions.push(ash::khr::surface::NAME.as_ptr());
            for name in &config.surface_extensions {
                if *name != ash::khr::surface::NAME {
                    extensions.push(name.as_ptr());
                }
            }
        }
        let layers = if validate { vec![VALIDATION_LAYER.as_ptr()] } else { Vec::new() };
        let enabled_validation = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
        let mut validation_info = vk::ValidationFeaturesEXT::default().enabled_validation_features(&enabled_validation);
        // The messenger listens whenever it can, so a layer turned on in any way (config,
        // environment, a capture tool) has its messages counted; loader messages are kept
        // apart and do not count as problems.
        let validation = debug_utils_available.then(|| Arc::new(ValidationLog::default()));
        let mut messenger_info = messenger_create_info(validation.as_ref());
        let mut instance_info = vk::InstanceCreateInfo::default()
            .application_info(&app_info)
            .enabled_layer_names(&layers)
            .enabled_extension_names(&extensions);
        if validation_features {
            instance_info = instance_info.push_next(&mut validation_info);
        }
        if validation.is_some() {
            instance_info = instance_info.push_next(&mut messenger_info);
        }
        // SAFETY: every pointer in `instance_info` refers to locals that outlive the call.
        let instance =
            unsafe { entry.create_instance(&instance_info, None) }.map_err(GraphError::vulkan("vkCreateInstance"))?;

        let (debug_instance, messenger) = if debug_utils_available {
            let debug_instance = ash::ext::debug_utils::Instance::new(&entry, &instance);
            let messenger = match &validation {
                Some(_) => {
                    let standalone_info = messenger_create_info(validation.as_ref());
                    // SAFETY: the create info is valid; its user data (the log) is kept
                    // alive by `self.validation` until the messenger is destroyed in Drop.
                    match unsafe { debug_instance.create_debug_utils_messenger(&standalone_info, None) } {
                        Ok(messenger) => messenger,
                        Err(result) => {
                            // SAFETY: nothing else was created from the instance yet.
                            unsafe { instance.destroy_instance(None) };
                            return Err(GraphError::vulkan("vkCreateDebugUtilsMessengerEXT")(result));
                        }
                    }
                }
                None => vk::DebugUtilsMessengerEXT::null(),
            };
            (Some(debug_instance), messenger)
        } else {
            (None, vk::DebugUtilsMessengerEXT::null())
        };

        let destroy_instance = |debug_instance: &Option<ash::ext::debug_utils::Instance>| {
            if let Some(debug_instance) = debug_instance {
                if messenger != vk::DebugUtilsMessengerEXT::null() {
                    // SAFETY: the messenger was created from this instance and is unused.
                    unsafe { debug_instance.destroy_debug_utils_messenger(messenger, None) };
                }
            }
            // SAFETY: all children of the instance were destroyed above.
            unsafe { instance.destroy_instance(None) };
        };

        let candidate = match pick_physical_device(&entry, &instance, &config.withheld_features) {
            Ok(candidate) => candidate,
            Err(error) => {
                destroy_instance(&debug_instance);
                return Err(error);
            }
        };
        let device = match create_logical_device(&instance, &candidate, presentation) {
            Ok(device) => device,
            Err(error) => {
                destroy_instance(&debug_instance);
                return Err(error);
            }
        };
        // SAFETY: the queue family and index 0 were requested at device creation.
        let queue = unsafe { device.get_device_queue(candidate.queue_family, 0) };
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: instance.clone(),
            device: device.clone(),
            physical_device: candidate.physical,
            debug_settings: Default::default(),
            buffer_device_address: false,
            allocation_sizes: Default::default(),
        });
        let allocator = match allocator {
            Ok(allocator) => allocator,
            Err(error) => {
                // SAFETY: the device has no children yet.
                unsafe { device.destroy_device(None) };
                destroy_instance(&debug_instance);
                return Err(error.into());
            }
        };
        let debug_device = debug_instance.as_ref().map(|_| ash::ext::debug_utils::Device::new(&instance, &device));
        let calibrated = candidate
            .capabilities
            .calibrated_timestamps
            .then(|| ash::ext::calibrated_timestamps::Device::new(&instance, &device));
        let mut gpu = GpuDevice {
            entry,
            instance,
            physical: candidate.physical,
            device,
            queue: Mutex::new(queue),
            queue_family: candidate.queue_family,
            capabilities: candidate.capabilities,
            allocator: ManuallyDrop::new(Mutex::new(allocator)),
            debug_instance,
            debug_device,
            calibrated,
            messenger,
            validation,
            validation_active: validate,
            presentation,
            nearest_sampler: vk::Sampler::null(),
            texture_sampler: vk::Sampler::null(),
            immediate_pool: Mutex::new(vk::CommandPool::null()),
        };
        // From here on `Drop` cleans up whatever was created.
        let sampler = |filter: vk::Filter, mipmap: vk::SamplerMipmapMode, wrap: vk::SamplerAddressMode| {
            let info = vk::SamplerCreateInfo::default()
                .mag_filter(filter)
                .min_filter(filter)
                .mipmap_mode(mipmap)
                .address_mode_u(wrap)
                .address_mode_v(wrap)
                .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE)
                .max_lod(vk::LOD_CLAMP_NONE);
            // SAFETY: valid create info on a live device.
            unsafe { gpu.device.create_sampler(&info, None) }.map_err(GraphError::vulkan("vkCreateSampler"))
        };
        let nearest =
            sampler(vk::Filter::NEAREST, vk::SamplerMipmapMode::NEAREST, vk::SamplerAddressMode::CLAMP_TO_EDGE);
        gpu.nearest_sampler = nearest?;
        let texture = sampler(vk::Filter::LINEAR, vk::SamplerMipmapMode::LINEAR, vk::SamplerAddressMode::REPEAT);
        gpu.texture_sampler = texture?;
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(gpu.queue_family)
            .flags(vk::CommandPoolCreateFlags::TRANSIENT | vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: valid create info on a live device.
        let pool = unsafe { gpu.device.create_command_pool(&pool_info, None) }
            .map_err(GraphError::vulkan("vkCreateCommandPool"))?;
        *gpu.immediate_pool.get_mut().unwrap_or_else(|poison| poison.into_inner()) = pool;
        Ok(gpu)
    }

    /// The loader entry points.
    pub fn entry(&self) -> &ash::Entry {
        &self.entry
    }

    /// The instance.
    pub fn instance(&self) -> &ash::Instance {
        &self.instance
    }

    /// Whether the device can present to a surface (made with
    /// [`DeviceConfig::surface_extensions`]).
    pub fn presentation(&self) -> bool {
        self.presentation
    }

    /// The logical device.
    pub fn raw(&self) -> &ash::Device {
        &self.device
    }

    /// The chosen physical device.
    pub fn physical(&self) -> vk::PhysicalDevice {
        self.physical
    }

    /// The family of the one queue used for everything.
    pub fn queue_family(&self) -> u32 {
        self.queue_family
    }

    /// Locks the queue for a submission (external synchronization of `vkQueueSubmit`).
    pub fn queue(&self) -> MutexGuard<'_, vk::Queue> {
        self.queue.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// What the device offers beyond the required core.
    pub fn capabilities(&self) -> &DeviceCapabilities {
        &self.capabilities
    }

    /// Locks the memory allocator.
    pub fn allocator(&self) -> MutexGuard<'_, Allocator> {
        self.allocator.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// A GPU timestamp (device ticks) and the CPU's `CLOCK_MONOTONIC_RAW` in nanoseconds, read
    /// at once, when the device has calibrated timestamps
    /// ([`DeviceCapabilities::calibrated_timestamps`]); `None` otherwise or on failure.
    pub fn calibrated_timestamps(&self) -> Option<(u64, u64)> {
        let calibrated = self.calibrated.as_ref()?;
        let infos = [
            vk::CalibratedTimestampInfoEXT::default().time_domain(vk::TimeDomainEXT::DEVICE),
            vk::CalibratedTimestampInfoEXT::default().time_domain(vk::TimeDomainEXT::CLOCK_MONOTONIC_RAW),
        ];
        // SAFETY: the extension is enabled on this device and both domains were reported.
        let (timestamps, _deviation) = unsafe { calibrated.get_calibrated_timestamps(&infos) }.ok()?;
        Some((timestamps[0], timestamps[1]))
    }

    /// Debug-utils device functions (labels, object names), when the extension is present.
    pub fn debug_utils(&self) -> Option<&ash::ext::debug_utils::Device> {
        self.debug_device.as_ref()
    }

    /// A nearest-filter, clamp-to-edge sampler for texel fetches.
    pub fn nearest_sampler(&self) -> vk::Sampler {
        self.nearest_sampler
    }

    /// A trilinear, repeating sampler for textures ([`crate::BindingKind::TextureImage`]).
    pub fn texture_sampler(&self) -> vk::Sampler {
        self.texture_sampler
    }

    /// Whether the validation layer is on, by [`DeviceConfig::validation`] or forced by the
    /// environment ([`validation_forced_by_env`]).
    pub fn validation_enabled(&self) -> bool {
        self.validation_active
    }

    /// Validation-layer message counts so far (all zero without validation). Messages of
    /// the loader itself (general messages such as "layer added by environment") are not
    /// counted as warnings or errors.
    pub fn validation_counts(&self) -> ValidationCounts {
        self.validation.as_ref().map(|log| log.counts()).unwrap_or_default()
    }

    /// The kept warning and error texts, each naming the graph pass that was recording when
    /// the layer reported it.
    pub fn validation_messages(&self) -> Vec<String> {
        self.validation.as_ref().map(|log| log.messages()).unwrap_or_default()
    }

    /// Waits until the device is idle.
    pub fn wait_idle(&self) -> Result<()> {
        let _queue = self.queue();
        // SAFETY: the queue lock is held, so no submission races with the wait.
        unsafe { self.device.device_wait_idle() }.map_err(GraphError::vulkan("vkDeviceWaitIdle"))
    }

    /// Records commands with `record` into a one-time command buffer, submits it and waits.
    /// For setup work (initial uploads, clears) outside the frame loop.
    pub fn submit_and_wait(&self, record: impl FnOnce(vk::CommandBuffer)) -> Result<()> {
        let pool = self.immediate_pool.lock().unwrap_or_else(|poison| poison.into_inner());
        let allocate_info = vk::CommandBufferAllocateInfo::default()
            .command_pool(*pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool is externally synchronized by its mutex.
        let command_buffers = unsafe { self.device.allocate_command_buffers(&allocate_info) }
            .map_err(GraphError::vulkan("vkAllocateCommandBuffers"))?;
        let command_buffer = command_buffers[0];
        let result = self.record_submit_wait(command_buffer, record);
        // SAFETY: the buffer finished executing (or never started) and its pool is locked.
        unsafe { self.device.free_command_buffers(*pool, &command_buffers) };
        result
    }

    fn record_submit_wait(
        &self,
        command_buffer: vk::CommandBuffer,
        record: impl FnOnce(vk::CommandBuffer),
    ) -> Result<()> {
        let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: a freshly allocated command buffer in the initial state.
        unsafe { self.device.begin_command_buffer(command_buffer, &begin) }
            .map_err(GraphError::vulkan("vkBeginCommandBuffer"))?;
        record(command_buffer);
        // SAFETY: the buffer is in the recording state.
        unsafe { self.device.end_command_buffer(command_buffer) }.map_err(GraphError::vulkan("vkEndCommandBuffer"))?;
        // SAFETY: valid create info on a live device.
        let fence = unsafe { self.device.create_fence(&vk::FenceCreateInfo::default(), None) }
            .map_err(GraphError::vulkan("vkCreateFence"))?;
        let buffers = [command_buffer];
        let submit = vk::SubmitInfo::default().command_buffers(&buffers);
        let submitted = {
            let queue = self.queue();
            // SAFETY: the queue lock is held; the command buffer is executable.
            unsafe { self.device.queue_submit(*queue, &[submit], fence) }
        };
        let waited = submitted.map_err(GraphError::vulkan("vkQueueSubmit")).and_then(|()| {
            // SAFETY: the fence belongs to this device.
            unsafe { self.device.wait_for_fences(&[fence], true, u64::MAX) }
                .map_err(GraphError::vulkan("vkWaitForFences"))
        });
        // SAFETY: the fence is signalled or was never submitted.
        unsafe { self.device.destroy_fence(fence, None) };
        waited
    }

    /// Gives an object a debug name (shown by validation messages and capture tools).
    pub fn set_name<Handle: vk::Handle>(&self, handle: Handle, name: &str) {
        let Some(debug) = &self.debug_device else { return };
        let Ok(name) = CString::new(name) else { return };
        let info = vk::DebugUtilsObjectNameInfoEXT::default().object_handle(handle).object_name(&name);
        // SAFETY: the handle belongs to this device; naming is purely diagnostic, so a
        // failure is ignored on purpose.
        let _ = unsafe { debug.set_debug_utils_object_name(&info) };
    }
}

impl Drop for GpuDevice {
    fn drop(&mut self) {
        // SAFETY: waiting for idle is always allowed; a failure (device lost) still lets us
        // destroy the objects below.
        let _ = unsafe { self.device.device_wait_idle() };
        let pool = *self.immediate_pool.get_mut().unwrap_or_else(|poison| poison.into_inner());
        // SAFETY: the device is idle, so nothing uses the pool or the sampler.
        unsafe {
            self.device.destroy_command_pool(pool, None);
        }
        // SAFETY: as above.
        unsafe { self.device.destroy_sampler(self.nearest_sampler, None) };
        // SAFETY: as above.
        unsafe { self.device.destroy_sampler(self.texture_sampler, None) };
        // SAFETY: the allocator is dropped once, here, before the device it allocates from.
        unsafe { ManuallyDrop::drop(&mut self.allocator) };
        // SAFETY: every child of the device was destroyed by its owner or above.
        unsafe { self.device.destroy_device(None) };
        if let Some(debug_instance) = &self.debug_instance {
            if self.messenger != vk::DebugUtilsMessengerEXT::null() {
                // SAFETY: the messenger belongs to this instance; the log it points to is still
                // alive in `self.validation`.
                unsafe { debug_instance.destroy_debug_utils_messenger(self.messenger, None) };
            }
        }
        // SAFETY: all children of the instance are destroyed.
        unsafe { self.instance.destroy_instance(None) };
    }
}

fn messenger_create_info(log: Option<&Arc<ValidationLog>>) -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
    let user_data = log.map_or(std::ptr::null_mut(), |log| Arc::as_ptr(log).cast_mut().cast::<c_void>());
    vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(
            vk::DebugUtilsMessageSeverityFlagsEXT::VERBOSE
                | vk::DebugUtilsMessageSeverityFlagsEXT::INFO
                | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
        )
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(messenger_callback))
        .user_data(user_data)
}

fn instance_has_extension(entry: &ash::Entry, layer: Option<&CStr>, name: &CStr) -> Result<bool> {
    // SAFETY: `entry` holds a loaded loader; the layer name is NUL-terminated.
    let extensions = unsafe { entry.enumerate_instance_extension_properties(layer) }
        .map_err(GraphError::vulkan("vkEnumerateInstanceExtensionProperties"))?;
    Ok(extensions.iter().any(|extension| extension.extension_name_as_c_str().is_ok_and(|found| found == name)))
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

fn pick_physical_device(entry: &ash::Entry, instance: &ash::Instance, withheld: &[&str]) -> Result<Candidate> {
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

fn create_logical_device(instance: &ash::Instance, candidate: &Candidate, swapchain: bool) -> Result<ash::Device> {
    let capabilities = &candidate.capabilities;
    let priorities = [1.0_f32];
    let queue_infos =
        [vk::DeviceQueueCreateInfo::default().queue_family_index(candidate.queue_family).queue_priorities(&priorities)];
    let mut features12 = vk::PhysicalDeviceVulkan12Features::default()
        .draw_indirect_count(capabilities.draw_indirect_count)
        .sampler_filter_minmax(capabilities.sampler_filter_minmax);
    let mut features13 = vk::PhysicalDeviceVulkan13Features::default().synchronization2(true).dynamic_rendering(true);
    let core_features = vk::PhysicalDeviceFeatures::default()
        .draw_indirect_first_instance(capabilities.draw_indirect_first_instance)
        .multi_draw_indirect(capabilities.multi_draw_indirect);
    let mut features = vk::PhysicalDeviceFeatures2::default()
        .features(core_features)
        .push_next(&mut features12)
        .push_next(&mut features13);
    let mut extensions = if swapchain { vec![ash::khr::swapchain::NAME.as_ptr()] } else { Vec::new() };
    if capabilities.calibrated_timestamps {
        extensions.push(ash::ext::calibrated_timestamps::NAME.as_ptr());
    }
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queue_infos)
        .enabled_extension_names(&extensions)
        .push_next(&mut features);
    // SAFETY: every pointer in `info` refers to locals that outlive the call; the features
    // enabled were reported as supported.
    unsafe { instance.create_device(candidate.physical, &info, None) }.map_err(GraphError::vulkan("vkCreateDevice"))
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

    #[test]
    fn discrete_beats_integrated_beats_cpu() {
        assert!(type_rank(vk::PhysicalDeviceType::DISCRETE_GPU) < type_rank(vk::PhysicalDeviceType::INTEGRATED_GPU));
        assert!(type_rank(vk::PhysicalDeviceType::INTEGRATED_GPU) < type_rank(vk::PhysicalDeviceType::CPU));
        assert!(type_rank(vk::PhysicalDeviceType::CPU) < type_rank(vk::PhysicalDeviceType::OTHER));
    }
}
