//! Descriptor sets for the pipelines' set-0 layouts, allocated per frame from pools that are
//! reset when the frame slot is reused.

use std::sync::Arc;

use ash::vk;

use crate::device::GpuDevice;
use crate::error::{GraphError, Result};

/// Per-frame descriptor pools, reset when the frame slot is reused; grows by whole pools.
pub(crate) struct DescriptorArena {
    device: Arc<GpuDevice>,
    pools: Vec<vk::DescriptorPool>,
    current: usize,
}

const SETS_PER_POOL: u32 = 512;

impl DescriptorArena {
    pub(crate) fn new(device: &Arc<GpuDevice>) -> DescriptorArena {
        DescriptorArena { device: Arc::clone(device), pools: Vec::new(), current: 0 }
    }

    fn create_pool(&self) -> Result<vk::DescriptorPool> {
        let kinds = [
            vk::DescriptorType::STORAGE_BUFFER,
            vk::DescriptorType::UNIFORM_BUFFER,
            vk::DescriptorType::STORAGE_IMAGE,
            vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        ];
        let sizes = kinds.map(|ty| vk::DescriptorPoolSize { ty, descriptor_count: SETS_PER_POOL * 4 });
        let info = vk::DescriptorPoolCreateInfo::default().max_sets(SETS_PER_POOL).pool_sizes(&sizes);
        // SAFETY: valid create info on a live device.
        unsafe { self.device.raw().create_descriptor_pool(&info, None) }
            .map_err(GraphError::vulkan("vkCreateDescriptorPool"))
    }

    /// Makes every set allocated since the last reset invalid; the frame using them is done.
    pub(crate) fn reset(&mut self) -> Result<()> {
        for &pool in &self.pools {
            // SAFETY: the frame slot's fence was waited for, so no set of this pool is in use.
            unsafe { self.device.raw().reset_descriptor_pool(pool, vk::DescriptorPoolResetFlags::empty()) }
                .map_err(GraphError::vulkan("vkResetDescriptorPool"))?;
        }
        self.current = 0;
        Ok(())
    }

    pub(crate) fn allocate(&mut self, layout: vk::DescriptorSetLayout) -> Result<vk::DescriptorSet> {
        let layouts = [layout];
        loop {
            if self.current == self.pools.len() {
                let pool = self.create_pool()?;
                self.pools.push(pool);
            }
            let info = vk::DescriptorSetAllocateInfo::default()
                .descriptor_pool(self.pools[self.current])
                .set_layouts(&layouts);
            let mut set = vk::DescriptorSet::null();
            let raw = self.device.raw();
            // SAFETY: the pool belongs to this device and is used by this frame slot only; the
            // info asks for one set and `set` has room for one (the raw call avoids the Vec
            // that the wrapper allocates on every call).
            let result = unsafe { (raw.fp_v1_0().allocate_descriptor_sets)(raw.handle(), &info, &mut set) };
            match result {
                vk::Result::SUCCESS => return Ok(set),
                vk::Result::ERROR_OUT_OF_POOL_MEMORY | vk::Result::ERROR_FRAGMENTED_POOL => self.current += 1,
                result => return Err(GraphError::vulkan("vkAllocateDescriptorSets")(result)),
            }
        }
    }
}

impl Drop for DescriptorArena {
    fn drop(&mut self) {
        for &pool in &self.pools {
            // SAFETY: the owner waits for the device before dropping frame slots.
            unsafe { self.device.raw().destroy_descriptor_pool(pool, None) };
        }
    }
}
