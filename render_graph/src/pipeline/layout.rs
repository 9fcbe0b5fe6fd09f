//! What compute and graphics pipelines share: the set-0 descriptor layout built from their
//! binding kinds, the pipeline layout with its push-constant range, and the shader modules
//! that live only while a pipeline is created.

use std::sync::Arc;

use ash::vk;

use super::binding::BindingKind;
use super::reflect::BindingUse;
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};

/// Most bindings one pipeline may have.
pub const MAX_BINDINGS: usize = 16;

/// Parts shared by compute and graphics pipelines.
pub(crate) struct PipelineCore {
    device: Arc<GpuDevice>,
    pub(crate) set_layout: vk::DescriptorSetLayout,
    pub(crate) layout: vk::PipelineLayout,
    pub(crate) pipeline: vk::Pipeline,
    pub(crate) bindings: Vec<BindingKind>,
    pub(crate) push_constant_bytes: u32,
    pub(crate) stages: vk::ShaderStageFlags,
    pub(crate) bind_point: vk::PipelineBindPoint,
    /// Per binding: what the shaders do with it and the bytes its block needs (checked at
    /// bind).
    pub(crate) shader_uses: Vec<BindingUse>,
}

impl PipelineCore {
    /// The set-0 and pipeline layouts for `bindings` and a push-constant block of
    /// `push_constant_bytes` seen by `stages`; the pipeline itself is made by the caller.
    pub(super) fn layouts(
        device: &Arc<GpuDevice>,
        bindings: &[BindingKind],
        push_constant_bytes: u32,
        stages: vk::ShaderStageFlags,
        bind_point: vk::PipelineBindPoint,
    ) -> Result<PipelineCore> {
        const { assert!(MAX_BINDINGS == 16, "the error below names the limit") };
        if bindings.len() > MAX_BINDINGS {
            return Err(GraphError::InvalidDescription {
                resource: String::from("pipeline bindings"),
                reason: "a pipeline has at most MAX_BINDINGS (16) bindings",
            });
        }
        let layout_bindings: Vec<vk::DescriptorSetLayoutBinding<'_>> = bindings
            .iter()
            .enumerate()
            .map(|(index, kind)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(index as u32)
                    .descriptor_type(kind.descriptor_type())
                    .descriptor_count(1)
                    .stage_flags(stages)
            })
            .collect();
        let set_info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings);
        // SAFETY: valid create info on a live device.
        let set_layout = unsafe { device.raw().create_descriptor_set_layout(&set_info, None) }
            .map_err(GraphError::vulkan("vkCreateDescriptorSetLayout"))?;
        let mut core = PipelineCore {
            device: Arc::clone(device),
            set_layout,
            layout: vk::PipelineLayout::null(),
            pipeline: vk::Pipeline::null(),
            bindings: bindings.to_vec(),
            push_constant_bytes,
            stages,
            bind_point,
            shader_uses: vec![BindingUse::default(); bindings.len()],
        };
        let set_layouts = [set_layout];
        let ranges = [vk::PushConstantRange { stage_flags: stages, offset: 0, size: push_constant_bytes }];
        let ranges: &[vk::PushConstantRange] = if push_constant_bytes > 0 { &ranges } else { &[] };
        let layout_info =
            vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts).push_constant_ranges(ranges);
        // SAFETY: valid create info on a live device.
        core.layout = unsafe { device.raw().create_pipeline_layout(&layout_info, None) }
            .map_err(GraphError::vulkan("vkCreatePipelineLayout"))?;
        Ok(core)
    }
}

impl Drop for PipelineCore {
    fn drop(&mut self) {
        let raw = self.device.raw();
        // SAFETY: the owner drops pipelines only when no frame using them is in flight (the
        // graph waits for idle before dropping passes); destroying null handles is allowed.
        unsafe { raw.destroy_pipeline(self.pipeline, None) };
        // SAFETY: as above.
        unsafe { raw.destroy_pipeline_layout(self.layout, None) };
        // SAFETY: as above.
        unsafe { raw.destroy_descriptor_set_layout(self.set_layout, None) };
    }
}

/// A shader module, destroyed once the pipeline made from it exists.
pub(super) struct ShaderModule<'device> {
    device: &'device ash::Device,
    pub(super) module: vk::ShaderModule,
}

impl<'device> ShaderModule<'device> {
    pub(super) fn new(device: &'device ash::Device, words: &[u32]) -> Result<Self> {
        let info = vk::ShaderModuleCreateInfo::default().code(words);
        // SAFETY: `words` is SPIR-V (validated by the driver and the validation layer).
        let module =
            unsafe { device.create_shader_module(&info, None) }.map_err(GraphError::vulkan("vkCreateShaderModule"))?;
        Ok(ShaderModule { device, module })
    }
}

impl Drop for ShaderModule<'_> {
    fn drop(&mut self) {
        // SAFETY: modules are only needed during pipeline creation, which has returned.
        unsafe { self.device.destroy_shader_module(self.module, None) };
    }
}
