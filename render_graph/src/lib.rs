//! Vulkan device, memory and a Register/Prepare/Execute render graph with automatic barriers.
#![warn(missing_docs)]

pub mod device;
mod error;
pub mod memory;
mod validation;

pub use error::{GraphError, Result};
pub use validation::{ValidationCounts, ValidationLog};
