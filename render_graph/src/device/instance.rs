//! The Vulkan loader, loaded at run time, and the instance made from it: Vulkan 1.3, the
//! validation layer (with synchronization validation) when asked for, the surface extensions
//! a window needs, and the debug messenger that counts validation messages.

use std::ffi::{c_void, CStr, CString};
use std::sync::Arc;

use ash::vk;

use super::config::{validation_forced_by_env, DeviceConfig, VALIDATION_LAYER};
use super::validation::{messenger_callback, ValidationLog};
use crate::error::{GraphError, Result};

/// What exists before a physical device is chosen: the loader, the instance and its debug
/// messenger. [`GpuDevice`](super::GpuDevice) takes the parts over and destroys them in its
/// `Drop`; until then [`InstanceParts::destroy`] undoes them on an error path.
pub(super) struct InstanceParts {
    pub(super) entry: ash::Entry,
    pub(super) instance: ash::Instance,
    pub(super) debug_instance: Option<ash::ext::debug_utils::Instance>,
    pub(super) messenger: vk::DebugUtilsMessengerEXT,
    /// The messages the messenger counted (`None` without `VK_EXT_debug_utils`).
    pub(super) validation: Option<Arc<ValidationLog>>,
    /// The validation layer is on (asked for by the config or forced by the environment).
    pub(super) validate: bool,
    /// Surface extensions are enabled (the device then enables `VK_KHR_swapchain`).
    pub(super) presentation: bool,
}

impl InstanceParts {
    /// Loads the loader, checks that it offers Vulkan 1.3 (and the validation layer, when
    /// validation is asked for) and creates the instance with its messenger.
    pub(super) fn create(config: &DeviceConfig) -> Result<InstanceParts> {
        let entry = load_loader()?;
        let debug_utils_available = instance_has_extension(&entry, None, ash::ext::debug_utils::NAME)?;
        let validate = config.validation || validation_forced_by_env();
        if validate {
            check_validation_layer(&entry, debug_utils_available)?;
        }
        let validation_features =
            validate && instance_has_extension(&entry, Some(VALIDATION_LAYER), ash::ext::validation_features::NAME)?;
        // The messenger listens whenever it can, so a layer turned on in any way (config,
        // environment, a capture tool) has its messages counted; loader messages are kept
        // apart and do not count as problems.
        let validation = debug_utils_available.then(|| Arc::new(ValidationLog::default()));
        let presentation = !config.surface_extensions.is_empty();
        let enabled = Enabled {
            validation_layer: validate,
            validation_features,
            debug_utils: debug_utils_available,
            presentation,
        };
        let instance = create_instance(&entry, config, enabled, validation.as_ref())?;
        let (debug_instance, messenger) = if debug_utils_available {
            let debug_instance = ash::ext::debug_utils::Instance::new(&entry, &instance);
            let messenger = match &validation {
                Some(log) => create_messenger(&instance, &debug_instance, log)?,
                None => vk::DebugUtilsMessengerEXT::null(),
            };
            (Some(debug_instance), messenger)
        } else {
            (None, vk::DebugUtilsMessengerEXT::null())
        };
        Ok(InstanceParts { entry, instance, debug_instance, messenger, validation, validate, presentation })
    }

    /// Destroys the messenger and the instance, on an error path of
    /// [`GpuDevice::new`](super::GpuDevice::new) where nothing else was made from them.
    pub(super) fn destroy(&self) {
        if let Some(debug_instance) = &self.debug_instance {
            if self.messenger != vk::DebugUtilsMessengerEXT::null() {
                // SAFETY: the messenger was created from this instance and is unused.
                unsafe { debug_instance.destroy_debug_utils_messenger(self.messenger, None) };
            }
        }
        // SAFETY: all children of the instance were destroyed above.
        unsafe { self.instance.destroy_instance(None) };
    }
}

/// The layer and the extensions the instance enables.
#[derive(Clone, Copy)]
struct Enabled {
    /// The validation layer.
    validation_layer: bool,
    /// `VK_EXT_validation_features`, for synchronization validation.
    validation_features: bool,
    /// `VK_EXT_debug_utils`, for the messenger, labels and object names.
    debug_utils: bool,
    /// `VK_KHR_surface` and the window's surface extensions.
    presentation: bool,
}

/// Loads the system's Vulkan loader and checks that it supports Vulkan 1.3.
fn load_loader() -> Result<ash::Entry> {
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
    Ok(entry)
}

/// Validation was asked for: the layer and `VK_EXT_debug_utils` must be installed.
fn check_validation_layer(entry: &ash::Entry, debug_utils_available: bool) -> Result<()> {
    // SAFETY: `entry` holds a loaded loader.
    let layers = unsafe { entry.enumerate_instance_layer_properties() }
        .map_err(GraphError::vulkan("vkEnumerateInstanceLayerProperties"))?;
    let has_layer = layers.iter().any(|layer| layer.layer_name_as_c_str().is_ok_and(|name| name == VALIDATION_LAYER));
    if !has_layer || !debug_utils_available {
        return Err(GraphError::NoSuitableDevice(String::from(
            "validation was requested but VK_LAYER_KHRONOS_validation or \
             VK_EXT_debug_utils is not installed",
        )));
    }
    Ok(())
}

/// Creates the instance with `enabled`'s layers and extensions; the messenger chained to
/// its create info (when there is a log) hears the messages of instance creation itself.
fn create_instance(
    entry: &ash::Entry,
    config: &DeviceConfig,
    enabled: Enabled,
    validation: Option<&Arc<ValidationLog>>,
) -> Result<ash::Instance> {
    let app_name = CString::new(config.app_name.replace('\0', " ")).unwrap_or_else(|_| CString::from(c"engine"));
    let app_info = vk::ApplicationInfo::default()
        .application_name(&app_name)
        .engine_name(c"engine")
        .api_version(vk::API_VERSION_1_3);
    let mut extensions = Vec::new();
    if enabled.debug_utils {
        extensions.push(ash::ext::debug_utils::NAME.as_ptr());
    }
    if enabled.validation_features {
        extensions.push(ash::ext::validation_features::NAME.as_ptr());
    }
    if enabled.presentation {
        extensions.push(ash::khr::surface::NAME.as_ptr());
        for name in &config.surface_extensions {
            if *name != ash::khr::surface::NAME {
                extensions.push(name.as_ptr());
            }
        }
    }
    let layers = if enabled.validation_layer { vec![VALIDATION_LAYER.as_ptr()] } else { Vec::new() };
    let enabled_validation = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
    let mut validation_info = vk::ValidationFeaturesEXT::default().enabled_validation_features(&enabled_validation);
    let mut messenger_info = messenger_create_info(validation);
    let mut instance_info = vk::InstanceCreateInfo::default()
        .application_info(&app_info)
        .enabled_layer_names(&layers)
        .enabled_extension_names(&extensions);
    if enabled.validation_features {
        instance_info = instance_info.push_next(&mut validation_info);
    }
    if validation.is_some() {
        instance_info = instance_info.push_next(&mut messenger_info);
    }
    // SAFETY: every pointer in `instance_info` refers to locals that outlive the call.
    unsafe { entry.create_instance(&instance_info, None) }.map_err(GraphError::vulkan("vkCreateInstance"))
}

/// The messenger that counts messages into `log` for the instance's whole life; on failure
/// the instance, which has no other child yet, is destroyed.
fn create_messenger(
    instance: &ash::Instance,
    debug_instance: &ash::ext::debug_utils::Instance,
    log: &Arc<ValidationLog>,
) -> Result<vk::DebugUtilsMessengerEXT> {
    let standalone_info = messenger_create_info(Some(log));
    // SAFETY: the create info is valid; its user data (the log) is kept alive by
    // `GpuDevice::validation` until the messenger is destroyed in Drop.
    match unsafe { debug_instance.create_debug_utils_messenger(&standalone_info, None) } {
        Ok(messenger) => Ok(messenger),
        Err(result) => {
            // SAFETY: nothing else was created from the instance yet.
            unsafe { instance.destroy_instance(None) };
            Err(GraphError::vulkan("vkCreateDebugUtilsMessengerEXT")(result))
        }
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
