//! What passes see during Prepare and Execute: resolved resources, uploads through the
//! staging ring, descriptor binding, push constants and dispatch/draw helpers.
//!
//! Vulkan failures inside these helpers do not interrupt the pass: the first one is kept and
//! returned by [`crate::RenderGraph::execute_frame`], and later helper calls do nothing.

use std::sync::Arc;

use ash::vk;

use crate::access::Access;
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::memory::StagingRing;
use crate::pipeline::{BindingKind, ComputePipeline, DescriptorArena, GraphicsPipeline, PipelineCore, MAX_BINDINGS};
use crate::registry::{AccessDecl, BufferHandle, GraphDecl, ImageHandle};

/// An image as a pass sees it this frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolvedImage {
    /// The image.
    pub image: vk::Image,
    /// A view of all its mips.
    pub view: vk::ImageView,
    /// Its format.
    pub format: vk::Format,
    /// Its size.
    pub extent: vk::Extent2D,
    /// Its mip count.
    pub mip_levels: u32,
}

/// A buffer as a pass sees it this frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolvedBuffer {
    /// The buffer.
    pub buffer: vk::Buffer,
    /// Its size in bytes.
    pub size: u64,
}

/// The physical resource behind a graph resource this frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resolved {
    None,
    Image(ResolvedImage),
    Buffer(ResolvedBuffer),
}

/// One descriptor of a bind call; the binding index is its position in the slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    /// A graph image (storage or sampled, as the pipeline binding says).
    Image(ImageHandle),
    /// A whole graph buffer.
    Buffer(BufferHandle),
    /// A range of a graph buffer.
    BufferRange {
        /// The buffer.
        buffer: BufferHandle,
        /// Start in bytes.
        offset: u64,
        /// Length in bytes.
        size: u64,
    },
    /// A range of a buffer outside the graph, such as data from
    /// [`PrepareContext::stage_data`]; the caller keeps it synchronized.
    External {
        /// The buffer.
        buffer: vk::Buffer,
        /// Start in bytes.
        offset: u64,
        /// Length in bytes.
        size: u64,
    },
}

/// A copy from the staging ring recorded at the start of a pass.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Upload {
    pub(crate) position: usize,
    pub(crate) source: vk::Buffer,
    pub(crate) region: vk::BufferCopy,
    pub(crate) target: vk::Buffer,
}

fn declared(pass: &str, accesses: &[AccessDecl], names: &GraphDecl, resource: u32) -> Access {
    match accesses.iter().find(|access| access.resource == resource) {
        Some(access) => access.access,
        None => panic!(
            "pass `{pass}` uses resource `{}` without declaring an access in register",
            names.resource_name(resource)
        ),
    }
}

/// Handed to [`crate::Pass::prepare`].
pub struct PrepareContext<'frame> {
    pub(crate) pass_name: &'frame str,
    pub(crate) position: usize,
    pub(crate) accesses: &'frame [AccessDecl],
    pub(crate) names: &'frame GraphDecl,
    pub(crate) resolved: &'frame [Resolved],
    pub(crate) staging: &'frame mut StagingRing,
    pub(crate) uploads: &'frame mut Vec<Upload>,
    pub(crate) frame_index: u64,
    pub(crate) output_extent: vk::Extent2D,
}

impl PrepareContext<'_> {
    /// The number of this frame (0 for the first).
    pub fn frame_index(&self) -> u64 {
        self.frame_index
    }

    /// The graph's output extent.
    pub fn output_extent(&self) -> vk::Extent2D {
        self.output_extent
    }

    /// Copies `data` to `buffer` at `offset` through the staging ring, at the start of this
    /// pass. The pass must declare [`Access::TransferWrite`] on the buffer.
    pub fn upload_buffer(&mut self, buffer: BufferHandle, offset: u64, data: &[u8]) -> Result<()> {
        let access = declared(self.pass_name, self.accesses, self.names, buffer.0);
        assert_eq!(
            access,
            Access::TransferWrite,
            "pass `{}` uploads to a buffer it declared as {access:?}",
            self.pass_name
        );
        let Resolved::Buffer(target) = self.resolved[buffer.0 as usize] else {
            panic!("pass `{}`: `{}` is not a buffer", self.pass_name, self.names.resource_name(buffer.0))
        };
        if offset + data.len() as u64 > target.size {
            return Err(GraphError::InvalidDescription {
                resource: self.names.resource_name(buffer.0).to_owned(),
                reason: "upload past the end of the buffer",
            });
        }
        if data.is_empty() {
            return Ok(());
        }
        let (source, source_offset) = self.staging.push(data, 16)?;
        self.uploads.push(Upload {
            position: self.position,
            source,
            region: vk::BufferCopy { src_offset: source_offset, dst_offset: offset, size: data.len() as u64 },
            target: target.buffer,
        });
        Ok(())
    }

    /// Puts `data` in host-visible memory for this frame and returns a binding for it (a
    /// uniform or storage buffer range); the submit makes host writes visible.
    pub fn stage_data(&mut self, data: &[u8]) -> Result<Binding> {
        let (buffer, offset) = self.staging.push(data, 256)?;
        Ok(Binding::External { buffer, offset, size: data.len().max(4) as u64 })
    }
}

/// Handed to [`crate::Pass::execute`] and [`crate::Pass::record_draw`].
pub struct ExecuteContext<'frame> {
    pub(crate) device: &'frame Arc<GpuDevice>,
    pub(crate) command_buffer: vk::CommandBuffer,
    pub(crate) pass_name: &'frame str,
    pub(crate) accesses: &'frame [AccessDecl],
    pub(crate) names: &'frame GraphDecl,
    pub(crate) resolved: &'frame [Resolved],
    pub(crate) descriptors: &'frame mut DescriptorArena,
    pub(crate) error: &'frame mut Option<GraphError>,
    pub(crate) frame_index: u64,
    pub(crate) output_extent: vk::Extent2D,
    pub(crate) bound: Option<(vk::PipelineLayout, vk::ShaderStageFlags, u32)>,
}

impl ExecuteContext<'_> {
    /// The logical device, for commands the helpers do not cover.
    pub fn device(&self) -> &ash::Device {
        self.device.raw()
    }

    /// The whole device wrapper.
    pub fn gpu(&self) -> &Arc<GpuDevice> {
        self.device
    }

    /// The command buffer being recorded.
    pub fn command_buffer(&self) -> vk::CommandBuffer {
        self.command_buffer
    }

    /// The number of this frame (0 for the first).
    pub fn frame_index(&self) -> u64 {
        self.frame_index
    }

    /// The graph's output extent.
    pub fn output_extent(&self) -> vk::Extent2D {
        self.output_extent
    }

    /// Whether an earlier helper call failed (the frame will return that error).
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Reports a problem the pass found while recording (e.g. an unusable extent):
    /// [`crate::RenderGraph::execute_frame`] returns the first such error and does not
    /// submit the frame; later helper calls of this frame do nothing.
    pub fn fail(&mut self, error: GraphError) {
        if self.error.is_none() {
            *self.error = Some(error);
        }
    }

    /// The image behind `handle`. Panics when the pass did not declare an access to it.
    pub fn image(&self, handle: ImageHandle) -> ResolvedImage {
        declared(self.pass_name, self.accesses, self.names, handle.0);
        match self.resolved[handle.0 as usize] {
            Resolved::Image(image) => image,
            _ => panic!("pass `{}`: `{}` is not an image", self.pass_name, self.names.resource_name(handle.0)),
        }
    }

    /// The buffer behind `handle`. Panics when the pass did not declare an access to it.
    pub fn buffer(&self, handle: BufferHandle) -> ResolvedBuffer {
        declared(self.pass_name, self.accesses, self.names, handle.0);
        match self.resolved[handle.0 as usize] {
            Resolved::Buffer(buffer) => buffer,
            _ => panic!("pass `{}`: `{}` is not a buffer", self.pass_name, self.names.resource_name(handle.0)),
        }
    }

    /// The layout an image is in during this pass.
    pub fn image_layout(&self, handle: ImageHandle) -> vk::ImageLayout {
        declared(self.pass_name, self.accesses, self.names, handle.0).image_layout()
    }

    /// Binds a compute pipeline and a descriptor set built from `bindings`.
    pub fn bind_compute(&mut self, pipeline: &ComputePipeline, bindings: &[Binding]) {
        self.bind(&pipeline.core, bindings);
    }

    /// Binds a graphics pipeline and a descriptor set built from `bindings`.
    pub fn bind_graphics(&mut self, pipeline: &GraphicsPipeline, bindings: &[Binding]) {
        self.bind(&pipeline.core, bindings);
    }

    fn bind(&mut self, core: &PipelineCore, bindings: &[Binding]) {
        if self.error.is_some() {
            return;
        }
        assert_eq!(
            bindings.len(),
            core.bindings.len(),
            "pass `{}` binds {} descriptors to a pipeline with {}",
            self.pass_name,
            bindings.len(),
            core.bindings.len()
        );
        let set = match self.descriptors.allocate(core.set_layout) {
            Ok(set) => set,
            Err(error) => {
                *self.error = Some(error);
                return;
            }
        };
        let mut buffer_infos = [vk::DescriptorBufferInfo::default(); MAX_BINDINGS];
        let mut image_infos = [vk::DescriptorImageInfo::default(); MAX_BINDINGS];
        for (index, (binding, kind)) in bindings.iter().zip(&core.bindings).enumerate() {
            let is_image = matches!(kind, BindingKind::StorageImage | BindingKind::SampledImage);
            match *binding {
                Binding::Image(handle) => {
                    assert!(is_image, "pass `{}`: binding {index} is a buffer slot, got an image", self.pass_name);
                    let image = self.image(handle);
                    let layout = self.image_layout(handle);
                    image_infos[index] = vk::DescriptorImageInfo {
                        sampler: if *kind == BindingKind::SampledImage {
                            self.device.nearest_sampler()
                        } else {
                            vk::Sampler::null()
                        },
                        image_view: image.view,
                        image_layout: layout,
                    };
                }
                Binding::Buffer(handle) => {
                    assert!(!is_image, "pass `{}`: binding {index} is an image slot, got a buffer", self.pass_name);
                    let buffer = self.buffer(handle);
                    buffer_infos[index] =
                        vk::DescriptorBufferInfo { buffer: buffer.buffer, offset: 0, range: vk::WHOLE_SIZE };
                }
                Binding::BufferRange { buffer, offset, size } => {
                    assert!(!is_image, "pass `{}`: binding {index} is an image slot, got a buffer", self.pass_name);
                    let resolved = self.buffer(buffer);
                    buffer_infos[index] = vk::DescriptorBufferInfo { buffer: resolved.buffer, offset, range: size };
                }
                Binding::External { buffer, offset, size } => {
                    assert!(!is_image, "pass `{}`: binding {index} is an image slot, got a buffer", self.pass_name);
                    buffer_infos[index] = vk::DescriptorBufferInfo { buffer, offset, range: size };
                }
            }
        }
        let mut writes = [vk::WriteDescriptorSet::default(); MAX_BINDINGS];
        for (index, kind) in core.bindings.iter().enumerate() {
            let write = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(index as u32)
                .descriptor_type(kind.descriptor_type());
            writes[index] = match kind {
                BindingKind::StorageImage | BindingKind::SampledImage => {
                    write.image_info(std::slice::from_ref(&image_infos[index]))
                }
                _ => write.buffer_info(std::slice::from_ref(&buffer_infos[index])),
            };
        }
        let raw = self.device.raw();
        // SAFETY: the set was just allocated for this frame and is not in use; every info
        // refers to a live resource of this frame.
        unsafe { raw.update_descriptor_sets(&writes[..core.bindings.len()], &[]) };
        // SAFETY: the command buffer is recording; pipeline and layout are live.
        unsafe { raw.cmd_bind_pipeline(self.command_buffer, core.bind_point, core.pipeline) };
        // SAFETY: as above; the set matches the layout's set 0.
        unsafe { raw.cmd_bind_descriptor_sets(self.command_buffer, core.bind_point, core.layout, 0, &[set], &[]) };
        self.bound = Some((core.layout, core.stages, core.push_constant_bytes));
    }

    /// Sets the push constants of the last bound pipeline from 32-bit words.
    pub fn push_constants(&mut self, words: &[u32]) {
        if self.error.is_some() {
            return;
        }
        let Some((layout, stages, capacity)) = self.bound else {
            panic!("pass `{}` pushes constants before binding a pipeline", self.pass_name)
        };
        let mut bytes = [0_u8; 256];
        let length = words.len() * 4;
        assert!(
            length as u32 <= capacity,
            "pass `{}` pushes {length} bytes, the pipeline takes {capacity}",
            self.pass_name
        );
        for (chunk, word) in bytes.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        // SAFETY: the command buffer is recording; the range lies inside the layout's range.
        unsafe { self.device.raw().cmd_push_constants(self.command_buffer, layout, stages, 0, &bytes[..length]) };
    }

    /// Dispatches compute workgroups.
    pub fn dispatch(&mut self, groups_x: u32, groups_y: u32, groups_z: u32) {
        if self.error.is_some() {
            return;
        }
        // SAFETY: the command buffer is recording with a compute pipeline bound.
        unsafe { self.device.raw().cmd_dispatch(self.command_buffer, groups_x, groups_y, groups_z) };
    }

    /// Draws non-indexed vertices (inside `record_draw`).
    pub fn draw(&mut self, vertex_count: u32, instance_count: u32) {
        if self.error.is_some() {
            return;
        }
        // SAFETY: the command buffer is recording inside a rendering scope with a graphics
        // pipeline bound.
        unsafe { self.device.raw().cmd_draw(self.command_buffer, vertex_count, instance_count, 0, 0) };
    }
}
