//! Compute and graphics pipelines with one descriptor set of plain bindings and optional push
//! constants, built from SPIR-V words. Graphics pipelines use dynamic rendering and pull
//! their vertices in the shader (no vertex input state).

use std::sync::Arc;

use ash::vk;

use crate::binding::BindingKind;
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::reflect::ShaderAccess;

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
    /// Per binding: what the shaders' qualifiers say they do with it (checked at bind).
    pub(crate) shader_accesses: Vec<ShaderAccess>,
}

impl PipelineCore {
    fn layouts(
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
            shader_accesses: vec![ShaderAccess::Unused; bindings.len()],
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

struct ShaderModule<'device> {
    device: &'device ash::Device,
    module: vk::ShaderModule,
}

impl<'device> ShaderModule<'device> {
    fn new(device: &'device ash::Device, words: &[u32]) -> Result<Self> {
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
        let mut accesses = vec![ShaderAccess::Unused; bindings.len()];
        crate::reflect::check_shader(name, "compute", spirv, bindings, push_constant_bytes, &mut accesses)?;
        let stage = vk::ShaderStageFlags::COMPUTE;
        let mut core =
            PipelineCore::layouts(device, bindings, push_constant_bytes, stage, vk::PipelineBindPoint::COMPUTE)?;
        core.shader_accesses = accesses;
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
        let (mut vertex_accesses, mut fragment_accesses) =
            (vec![ShaderAccess::Unused; desc.bindings.len()], vec![ShaderAccess::Unused; desc.bindings.len()]);
        let (bindings, push) = (desc.bindings, desc.push_constant_bytes);
        crate::reflect::check_shader(name, "vertex", desc.vertex, bindings, push, &mut vertex_accesses)?;
        crate::reflect::check_shader(name, "fragment", desc.fragment, bindings, push, &mut fragment_accesses)?;
        let accesses: Vec<ShaderAccess> =
            vertex_accesses.iter().zip(&fragment_accesses).map(|(vertex, fragment)| vertex.and(*fragment)).collect();
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
        core.shader_accesses = accesses;
        device.set_name(core.pipeline, name);
        Ok(GraphicsPipeline { core })
    }
}

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
