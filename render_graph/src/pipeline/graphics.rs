//! Graphics pipelines for dynamic rendering: vertex and fragment entry points `main` that
//! pull their vertices in the shader (no vertex input state), fixed-function choices, and
//! colour blending.

use std::sync::Arc;

use ash::vk;

use super::binding::BindingKind;
use super::layout::{PipelineCore, ShaderModule};
use super::reflect::{check_shader, BindingUse};
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};

/// Fixed-function choices of a graphics pipeline.
#[derive(Clone, Debug)]
pub struct GraphicsPipelineDesc<'a> {
    /// Vertex shader SPIR-V.
    pub vertex: &'a [u32],
    /// Fragment shader SPIR-V.
    pub fragment: &'a [u32],
    /// Set-0 bindings in order, visible to both stages.
    pub bindings: &'a [BindingKind],
    /// Push-constant bytes, visible to both stages.
    pub push_constant_bytes: u32,
    /// Formats of the color attachments, in attachment order.
    pub color_formats: &'a [vk::Format],
    /// Depth attachment format, compare op and whether depth is written.
    pub depth: Option<(vk::Format, vk::CompareOp, bool)>,
    /// Primitive topology.
    pub topology: vk::PrimitiveTopology,
    /// Face culling.
    pub cull_mode: vk::CullModeFlags,
    /// How fragments combine with the colour attachments.
    pub blend: ColorBlend,
}

/// How a graphics pipeline's fragments combine with what its colour attachments hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorBlend {
    /// The fragment replaces the colour.
    #[default]
    Replace,
    /// "Over" blending by the fragment's alpha (`src.rgb * a + dst.rgb * (1 - a)`); the
    /// attachment's alpha is kept as it was, so what earlier passes stored there survives
    /// (translucent surfaces drawn after opaque ones).
    Alpha,
}

impl ColorBlend {
    fn attachment(self) -> vk::PipelineColorBlendAttachmentState {
        let state = vk::PipelineColorBlendAttachmentState::default().color_write_mask(vk::ColorComponentFlags::RGBA);
        match self {
            ColorBlend::Replace => state,
            ColorBlend::Alpha => state
                .blend_enable(true)
                .src_color_blend_factor(vk::BlendFactor::SRC_ALPHA)
                .dst_color_blend_factor(vk::BlendFactor::ONE_MINUS_SRC_ALPHA)
                .color_blend_op(vk::BlendOp::ADD)
                .src_alpha_blend_factor(vk::BlendFactor::ZERO)
                .dst_alpha_blend_factor(vk::BlendFactor::ONE)
                .alpha_blend_op(vk::BlendOp::ADD),
        }
    }
}

/// A graphics pipeline for dynamic rendering (entry points `main`); viewport and scissor
/// are dynamic and set by the graph to the attachments' extent.
pub struct GraphicsPipeline {
    pub(crate) core: PipelineCore,
}

impl GraphicsPipeline {
    /// Builds a graphics pipeline.
    pub fn new(device: &Arc<GpuDevice>, name: &str, desc: &GraphicsPipelineDesc<'_>) -> Result<Self> {
        let (mut vertex_uses, mut fragment_uses) =
            (vec![BindingUse::default(); desc.bindings.len()], vec![BindingUse::default(); desc.bindings.len()]);
        let (bindings, push) = (desc.bindings, desc.push_constant_bytes);
        check_shader(name, "vertex", desc.vertex, bindings, push, &mut vertex_uses)?;
        check_shader(name, "fragment", desc.fragment, bindings, push, &mut fragment_uses)?;
        let uses: Vec<BindingUse> = vertex_uses
            .iter()
            .zip(&fragment_uses)
            .map(|(vertex, fragment)| BindingUse {
                access: vertex.access.and(fragment.access),
                min_bytes: vertex.min_bytes.max(fragment.min_bytes),
            })
            .collect();
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
        let mut core = PipelineCore::layouts(
            device,
            desc.bindings,
            desc.push_constant_bytes,
            stages,
            vk::PipelineBindPoint::GRAPHICS,
        )?;
        let vertex = ShaderModule::new(device.raw(), desc.vertex)?;
        let fragment = ShaderModule::new(device.raw(), desc.fragment)?;
        let stage_infos = [
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::VERTEX)
                .module(vertex.module)
                .name(c"main"),
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::FRAGMENT)
                .module(fragment.module)
                .name(c"main"),
        ];
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
        let assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(desc.topology);
        let viewport = vk::PipelineViewportStateCreateInfo::default().viewport_count(1).scissor_count(1);
        let raster = vk::PipelineRasterizationStateCreateInfo::default()
            .polygon_mode(vk::PolygonMode::FILL)
            .cull_mode(desc.cull_mode)
            .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
            .line_width(1.0);
        let multisample =
            vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(vk::SampleCountFlags::TYPE_1);
        let (depth_format, depth_state) = match desc.depth {
            Some((format, compare, write)) => (
                format,
                vk::PipelineDepthStencilStateCreateInfo::default()
                    .depth_test_enable(true)
                    .depth_write_enable(write)
                    .depth_compare_op(compare),
            ),
            None => (vk::Format::UNDEFINED, vk::PipelineDepthStencilStateCreateInfo::default()),
        };
        let blend_attachments: Vec<vk::PipelineColorBlendAttachmentState> =
            desc.color_formats.iter().map(|_| desc.blend.attachment()).collect();
        let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
        let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
        let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
        let mut rendering = vk::PipelineRenderingCreateInfo::default()
            .color_attachment_formats(desc.color_formats)
            .depth_attachment_format(depth_format);
        let info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stage_infos)
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&assembly)
            .viewport_state(&viewport)
            .rasterization_state(&raster)
            .multisample_state(&multisample)
            .depth_stencil_state(&depth_state)
            .color_blend_state(&blend)
            .dynamic_state(&dynamic)
            .layout(core.layout)
            .push_next(&mut rendering);
        // SAFETY: every pointer in `info` refers to locals alive during the call.
        let pipelines = unsafe { device.raw().create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) }
            .map_err(|(_, result)| GraphError::vulkan("vkCreateGraphicsPipelines")(result))?;
        core.pipeline = pipelines[0];
        core.shader_uses = uses;
        device.set_name(core.pipeline, name);
        Ok(GraphicsPipeline { core })
    }
}
