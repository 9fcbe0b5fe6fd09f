//! The Vulkan device: loader loaded at run time, instance with optional validation, physical
//! device selection, logical device with Vulkan 1.3 synchronization2 and dynamic rendering,
//! and the gpu-allocator that owns all memory. Headless unless [`DeviceConfig::surface_extensions`]
//! asks for presentation (then `VK_KHR_swapchain` is enabled too; see [`crate::swapchain`]).

// How to create it (`config.rs`), the loader and instance (`instance.rs`), the choice of a
// physical device (`capabilities.rs`), the device itself (`gpu_device.rs`) and the messenger
// that counts validation messages (`validation.rs`).
mod capabilities;
mod config;
mod gpu_device;
mod instance;
pub(crate) mod validation;

pub use capabilities::DeviceCapabilities;
pub use config::{validation_forced_by_env, validation_requested_by_env, DeviceConfig};
pub use gpu_device::{GpuDevice, HeapBudget};
