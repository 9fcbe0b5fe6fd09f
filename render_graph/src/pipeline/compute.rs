//! Compute pipelines: one SPIR-V entry point `main`, checked against the layout.

use std::sync::Arc;

use ash::vk;

use super::binding::BindingKind;
use super::layout::{PipelineCore, ShaderModule};
use super::reflect::{check_shader, BindingUse};
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};

/// A compute pipeline (entry point `main`).
pub struct ComputePipeline {
    pub(crate) core: PipelineCore,
}

impl ComputePipeline {
    /// Builds a compute pipeline from SPIR-V, set-0 bindings in order, and the size of its
    /// push-constant block (0 for none).
    pub fn new(
        device: &Arc<GpuDevice>,
        name: &str,
        spirv: &[u32],
        bindings: &[BindingKind],
        push_constant_bytes: u32,
    ) -> Result<Self> {
        let mut uses = vec![BindingUse::default(); bindings.len()];
        check_shader(name, "compute", spirv, bindings, push_constant_bytes, &mut uses)?;
        let stage = vk::ShaderStageFlags::COMPUTE;
        let mut core =
            PipelineCore::layouts(device, bindings, push_constant_bytes, stage, vk::PipelineBindPoint::COMPUTE)?;
        core.shader_uses = uses;
        let module = ShaderModule::new(device.raw(), spirv)?;
        let stage_info = vk::PipelineShaderStageCreateInfo::default().stage(stage).module(module.module).name(c"main");
        let info = vk::ComputePipelineCreateInfo::default().stage(stage_info).layout(core.layout);
        // SAFETY: the layout and module are live; the create info is valid.
        let pipelines = unsafe { device.raw().create_compute_pipelines(vk::PipelineCache::null(), &[info], None) }
            .map_err(|(_, result)| GraphError::vulkan("vkCreateComputePipelines")(result))?;
        core.pipeline = pipelines[0];
        device.set_name(core.pipeline, name);
        Ok(ComputePipeline { core })
    }
}
