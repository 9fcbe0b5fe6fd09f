//! The logical device: one graphics+compute queue, Vulkan 1.3 synchronization2 and dynamic
//! rendering, the gpu-allocator that owns all memory, the samplers every pass shares and
//! one-time submissions for setup work.

use std::ffi::CString;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex, MutexGuard};

use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};

use super::capabilities::{pick_physical_device, Candidate, DeviceCapabilities};
use super::config::DeviceConfig;
use super::instance::InstanceParts;
use super::validation::{ValidationCounts, ValidationLog};
use crate::error::{GraphError, Result};

/// What the driver reports of a memory heap ([`GpuDevice::memory_budget`]), in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapBudget {
    /// The heap's size.
    pub size: u64,
    /// What the process may use of it.
    pub budget: u64,
    /// What the process uses of it now.
    pub usage: u64,
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

impl GpuDevice {
    /// Loads the Vulkan loader, creates an instance and picks the best device (discrete GPU,
    /// then integrated, then virtual, then CPU).
    ///
    /// Returns [`GraphError::LoaderMissing`] when the machine has no Vulkan loader and
    /// [`GraphError::NoSuitableDevice`] when no device supports Vulkan 1.3 with
    /// synchronization2 and dynamic rendering.
    pub fn new(config: &DeviceConfig) -> Result<GpuDevice> {
        let parts = InstanceParts::create(config)?;
        let (candidate, device, allocator) = match open_device(&parts, &config.withheld_features) {
            Ok(opened) => opened,
            Err(error) => {
                parts.destroy();
                return Err(error);
            }
        };
        let InstanceParts { entry, instance, debug_instance, messenger, validation, validate, presentation } = parts;
        // SAFETY: the queue family and index 0 were requested at device creation.
        let queue = unsafe { device.get_device_queue(candidate.queue_family, 0) };
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
        let (nearest, clamp) = (vk::Filter::NEAREST, vk::SamplerAddressMode::CLAMP_TO_EDGE);
        gpu.nearest_sampler = gpu.create_sampler(nearest, vk::SamplerMipmapMode::NEAREST, clamp)?;
        let (linear, repeat) = (vk::Filter::LINEAR, vk::SamplerAddressMode::REPEAT);
        gpu.texture_sampler = gpu.create_sampler(linear, vk::SamplerMipmapMode::LINEAR, repeat)?;
        let pool = gpu.create_immediate_pool()?;
        *gpu.immediate_pool.get_mut().unwrap_or_else(|poison| poison.into_inner()) = pool;
        Ok(gpu)
    }

    /// A sampler with `filter` for magnification and minification, `mipmap` between mips and
    /// `wrap` across U and V (W clamps), over every mip.
    fn create_sampler(
        &self,
        filter: vk::Filter,
        mipmap: vk::SamplerMipmapMode,
        wrap: vk::SamplerAddressMode,
    ) -> Result<vk::Sampler> {
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(filter)
            .min_filter(filter)
            .mipmap_mode(mipmap)
            .address_mode_u(wrap)
            .address_mode_v(wrap)
            .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .max_lod(vk::LOD_CLAMP_NONE);
        // SAFETY: valid create info on a live device.
        unsafe { self.device.create_sampler(&info, None) }.map_err(GraphError::vulkan("vkCreateSampler"))
    }

    /// The command pool of [`GpuDevice::submit_and_wait`].
    fn create_immediate_pool(&self) -> Result<vk::CommandPool> {
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(self.queue_family)
            .flags(vk::CommandPoolCreateFlags::TRANSIENT | vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: valid create info on a live device.
        unsafe { self.device.create_command_pool(&pool_info, None) }.map_err(GraphError::vulkan("vkCreateCommandPool"))
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

    /// The budget and usage of the largest device-local heap as the driver reports them
    /// (`VK_EXT_memory_budget`), when the device has the extension; `None` otherwise. The
    /// budget is what the process may use before the driver or the system starts to page;
    /// the usage counts every allocation of the process in the heap. Cheap enough to ask
    /// every frame.
    pub fn memory_budget(&self) -> Option<HeapBudget> {
        if !self.capabilities.memory_budget {
            return None;
        }
        let mut budgets = vk::PhysicalDeviceMemoryBudgetPropertiesEXT::default();
        let mut properties = vk::PhysicalDeviceMemoryProperties2::default().push_next(&mut budgets);
        // SAFETY: the extension is enabled on this device; `properties` chains only `budgets`,
        // both locals that outlive the call.
        unsafe { self.instance.get_physical_device_memory_properties2(self.physical, &mut properties) };
        let memory = properties.memory_properties;
        let heaps = &memory.memory_heaps[..memory.memory_heap_count as usize];
        let (index, heap) = heaps
            .iter()
            .enumerate()
            .filter(|(_, heap)| heap.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
            .max_by_key(|(_, heap)| heap.size)?;
        Some(HeapBudget { size: heap.size, budget: budgets.heap_budget[index], usage: budgets.heap_usage[index] })
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
    /// environment ([`validation_forced_by_env`](super::validation_forced_by_env)).
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

/// Picks the best physical device of the instance, creates the logical device on it and the
/// allocator over it. On failure nothing of them is left (the device is destroyed when the
/// allocator fails); the instance is the caller's to destroy.
fn open_device(parts: &InstanceParts, withheld: &[&str]) -> Result<(Candidate, ash::Device, Allocator)> {
    let candidate = pick_physical_device(&parts.entry, &parts.instance, withheld)?;
    let device = create_logical_device(&parts.instance, &candidate, parts.presentation)?;
    let allocator = Allocator::new(&AllocatorCreateDesc {
        instance: parts.instance.clone(),
        device: device.clone(),
        physical_device: candidate.physical,
        debug_settings: Default::default(),
        buffer_device_address: false,
        allocation_sizes: Default::default(),
    });
    match allocator {
        Ok(allocator) => Ok((candidate, device, allocator)),
        Err(error) => {
            // SAFETY: the device has no children yet.
            unsafe { device.destroy_device(None) };
            Err(error.into())
        }
    }
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
    if capabilities.memory_budget {
        extensions.push(ash::ext::memory_budget::NAME.as_ptr());
    }
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queue_infos)
        .enabled_extension_names(&extensions)
        .push_next(&mut features);
    // SAFETY: every pointer in `info` refers to locals that outlive the call; the features
    // enabled were reported as supported.
    unsafe { instance.create_device(candidate.physical, &info, None) }.map_err(GraphError::vulkan("vkCreateDevice"))
}
