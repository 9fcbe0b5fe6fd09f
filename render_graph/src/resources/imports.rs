//! Resources owned outside the graph: imported images and buffers with the state the last
//! frame left them in, and the swapchain image the next frame presents.

use std::sync::Arc;

use ash::vk;

use crate::compile::SyncState;
use crate::memory::{GpuBuffer, GpuImage};

/// A resource owned outside the graph.
#[derive(Clone)]
pub(crate) enum ImportedResource {
    Image(Arc<GpuImage>),
    Buffer(Arc<GpuBuffer>),
}

/// The swapchain image the next frame renders to and presents, with its semaphores.
#[derive(Clone)]
pub(crate) struct PresentSync {
    pub(crate) name: String,
    pub(crate) acquired: vk::Semaphore,
    pub(crate) rendered: vk::Semaphore,
}

pub(crate) struct Import {
    pub(crate) resource: ImportedResource,
    /// State left by the last frame that used it.
    pub(crate) state: SyncState,
}
