//! Descriptor binding: a pass binds a pipeline with one descriptor per binding, each checked
//! against the pipeline's binding kind, the pass's declared access and what the shader's
//! qualifiers say it does, before the set is written and bound.

use ash::vk;

use super::execute_context::ExecuteContext;
use crate::access::{Access, MipRange};
use crate::compile::{raw_handle, AccessedBuffer, AccessedImage};
use crate::error::{GraphError, Result};
use crate::pipeline::{BindingKind, ComputePipeline, GraphicsPipeline, PipelineCore, ShaderAccess, MAX_BINDINGS};
use crate::resources::Resolved;

/// One descriptor of a bind call; the binding index is its position in the slice. Made from
/// an accessed handle ([`Binding::image`], [`Binding::buffer`] and the ranges), which says
/// whether the descriptor may be written: one made from a read handle is refused at a slot
/// the shader writes (or may write: a storage binding without `readonly`), with
/// [`GraphError::BindingMismatch`] naming the pass, the slot and the resource.
///
/// ```no_run
/// # use render_graph::{Binding, BufferRead, ImageWrite};
/// # fn bindings(source: BufferRead, target: &ImageWrite) -> [Binding; 2] {
/// [Binding::buffer(source), Binding::image(target)]
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding(pub(crate) Bound);

/// What a [`Binding`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// Mips of a graph image, from a write handle when `written`.
    Image { resource: u32, written: bool, mips: MipRange },
    /// A range of a graph buffer (`None`: all of it), from a write handle when `written`.
    Buffer { resource: u32, written: bool, range: Option<(u64, u64)> },
    /// A range of a buffer outside the graph.
    External { buffer: vk::Buffer, offset: u64, size: u64 },
}

impl Binding {
    /// A whole graph image (storage or sampled, as the pipeline binding says).
    pub fn image(image: impl AccessedImage) -> Binding {
        Binding::image_mips(image, MipRange::ALL)
    }

    /// One mip of a graph image, through its own view (a pass that reduces a mip chain binds
    /// each level it reads and writes; see [`ExecuteContext::next_step`]).
    pub fn image_mip(image: impl AccessedImage, mip: u32) -> Binding {
        Binding::image_mips(image, MipRange::level(mip))
    }

    /// Some mips of a graph image through a view of just those mips (a pass that declared
    /// them with [`crate::Registry::read_image_mips`] and friends; the range must be one
    /// level, every level, or exactly a declared range).
    pub fn image_mips(image: impl AccessedImage, mips: MipRange) -> Binding {
        let (resource, written) = raw_handle(image);
        Binding(Bound::Image { resource, written, mips })
    }

    /// A whole graph buffer.
    pub fn buffer(buffer: impl AccessedBuffer) -> Binding {
        let (resource, written) = raw_handle(buffer);
        Binding(Bound::Buffer { resource, written, range: None })
    }

    /// `size` bytes of a graph buffer from byte `offset`.
    pub fn buffer_range(buffer: impl AccessedBuffer, offset: u64, size: u64) -> Binding {
        let (resource, written) = raw_handle(buffer);
        Binding(Bound::Buffer { resource, written, range: Some((offset, size)) })
    }

    /// A range of a buffer outside the graph, such as data from
    /// [`PrepareContext::stage_data`](crate::PrepareContext::stage_data); the caller keeps it
    /// synchronized.
    pub fn external(buffer: vk::Buffer, offset: u64, size: u64) -> Binding {
        Binding(Bound::External { buffer, offset, size })
    }

    /// The buffer, offset and size of a binding made by [`Binding::external`] (or by
    /// [`PrepareContext::stage_data`](crate::PrepareContext::stage_data)); `None` for a graph
    /// resource.
    pub fn external_range(&self) -> Option<(vk::Buffer, u64, u64)> {
        match self.0 {
            Bound::External { buffer, offset, size } => Some((buffer, offset, size)),
            _ => None,
        }
    }
}

impl ExecuteContext<'_> {
    /// Binds a compute pipeline and a descriptor set built from `bindings`.
    pub fn bind_compute(&mut self, pipeline: &ComputePipeline, bindings: &[Binding]) {
        self.bind(&pipeline.core, bindings);
    }

    /// Binds a graphics pipeline and a descriptor set built from `bindings`.
    pub fn bind_graphics(&mut self, pipeline: &GraphicsPipeline, bindings: &[Binding]) {
        self.bind(&pipeline.core, bindings);
    }

    /// Checks one descriptor against the pipeline's binding kind and the declared access, and
    /// against what the shader's qualifiers say it does: a descriptor made from a read handle
    /// at a storage slot the shader may write (`writeonly`, or no qualifier), a `writeonly`
    /// binding declared as a read (the pass would be dropped as unused, its write lost) or a
    /// `readonly` one declared as a write (the declared output would never be written).
    fn check_binding(&self, slot: usize, binding: Binding, kind: BindingKind, shader: ShaderAccess) -> Result<()> {
        let mismatch = |reason: String| GraphError::BindingMismatch { pass: self.pass_name.to_owned(), slot, reason };
        let (resource, is_image, written, mips) = match binding.0 {
            Bound::Image { resource, written, mips } => (resource, true, written, mips),
            Bound::Buffer { resource, written, .. } => (resource, false, written, MipRange::ALL),
            Bound::External { .. } => {
                return match kind {
                    BindingKind::StorageBuffer | BindingKind::UniformBuffer => Ok(()),
                    _ => Err(mismatch(format!("the pipeline expects {kind:?}, got an external buffer"))),
                };
            }
        };
        if let (Resolved::Image(resolved), false) = (self.resolved[resource as usize], mips.is_all()) {
            if !mips.fits(resolved.mip_levels) {
                let name = self.names.resource_name(resource);
                return Err(mismatch(format!("`{name}` has {} mips, {mips} asked", resolved.mip_levels)));
            }
        }
        let access = self.declaration_of(resource, mips)?.access;
        let name = self.names.resource_name(resource);
        let resolved_is_image = matches!(self.resolved[resource as usize], Resolved::Image(_));
        if resolved_is_image != is_image {
            let what = if resolved_is_image { "an image" } else { "a buffer" };
            return Err(mismatch(format!("`{name}` is {what}")));
        }
        let storage = matches!(kind, BindingKind::StorageBuffer | BindingKind::StorageImage);
        if storage && !written && matches!(shader, ShaderAccess::WriteOnly | ShaderAccess::Either) {
            let writes = if shader == ShaderAccess::WriteOnly {
                "writes (writeonly)"
            } else {
                "writes (it stores to it or updates it atomically)"
            };
            return Err(mismatch(format!(
                "the shader {writes} this binding, but `{name}` is bound through a read handle (declared as \
                 {access:?}); declare a write and bind its write handle, or qualify the binding readonly"
            )));
        }
        match (shader, access) {
            (ShaderAccess::WriteOnly, Access::StorageRead(_)) => {
                return Err(mismatch(format!(
                    "the shader writes this binding (writeonly), but `{name}` is declared as {access:?}; declare a write"
                )));
            }
            (ShaderAccess::ReadOnly, Access::StorageWrite(_)) => {
                return Err(mismatch(format!(
                    "the shader only reads this binding (readonly), but `{name}` is declared as {access:?}, which it never writes"
                )));
            }
            _ => {}
        }
        match BindingKind::for_access(access, is_image) {
            Some(expected) if kind.serves(expected) => Ok(()),
            Some(expected) => Err(mismatch(format!(
                "the pipeline expects {kind:?}, but `{name}` is declared as {access:?}, which binds as {expected:?}"
            ))),
            None => Err(mismatch(format!("`{name}` is declared as {access:?}, which is not a descriptor access"))),
        }
    }

    /// Checks that a buffer bound at `slot` holds the `min_bytes` its shader block needs (a
    /// block's fixed size, or what comes before its runtime array).
    fn check_size(&self, slot: usize, binding: Binding, min_bytes: u64) -> Result<()> {
        let (bytes, resource) = match binding.0 {
            Bound::Buffer { resource, range, .. } => {
                let Resolved::Buffer(resolved) = self.resolved[resource as usize] else { return Ok(()) };
                let bytes = match range {
                    Some((_, size)) if size != vk::WHOLE_SIZE => size,
                    Some((offset, _)) => resolved.size.saturating_sub(offset),
                    None => resolved.size,
                };
                (bytes, Some(resource))
            }
            Bound::External { size, .. } if size != vk::WHOLE_SIZE => (size, None),
            _ => return Ok(()),
        };
        if bytes >= min_bytes {
            return Ok(());
        }
        let name = match resource {
            Some(resource) => format!("`{}`", self.names.resource_name(resource)),
            None => String::from("the external buffer"),
        };
        Err(GraphError::BindingMismatch {
            pass: self.pass_name.to_owned(),
            slot,
            reason: format!(
                "the shader's block needs {min_bytes} bytes (its declared size: fixed arrays and members), but \
                 {name} gives {bytes}; the shader would read or write past the buffer"
            ),
        })
    }

    fn bind(&mut self, core: &PipelineCore, bindings: &[Binding]) {
        if self.error.is_some() {
            return;
        }
        if bindings.len() != core.bindings.len() {
            self.fail(GraphError::BindingMismatch {
                pass: self.pass_name.to_owned(),
                slot: bindings.len().min(core.bindings.len()),
                reason: format!(
                    "{} descriptors given to a pipeline with {} bindings",
                    bindings.len(),
                    core.bindings.len()
                ),
            });
            return;
        }
        for (slot, (&binding, &kind)) in bindings.iter().zip(&core.bindings).enumerate() {
            let shader = core.shader_uses.get(slot).copied().unwrap_or_default();
            let checked = self.check_binding(slot, binding, kind, shader.access);
            if let Err(error) = checked.and_then(|()| self.check_size(slot, binding, shader.min_bytes)) {
                self.fail(error);
                return;
            }
        }
        let set = match self.descriptors.allocate(core.set_layout) {
            Ok(set) => set,
            Err(error) => {
                *self.error = Some(error);
                return;
            }
        };
        let mut buffer_infos = [vk::DescriptorBufferInfo::default(); MAX_BINDINGS];
        let mut image_infos = [vk::DescriptorImageInfo::default(); MAX_BINDINGS];
        // Every binding was checked above: kinds, declarations and resource types agree.
        for (index, (binding, kind)) in bindings.iter().zip(&core.bindings).enumerate() {
            match binding.0 {
                Bound::Image { resource, mips, .. } => {
                    let (image_view, layout) = match (self.view_of(resource, mips), self.layout_of(resource, mips)) {
                        (Ok(view), Ok(layout)) => (view, layout),
                        (Err(error), _) | (_, Err(error)) => {
                            self.fail(error);
                            return;
                        }
                    };
                    image_infos[index] = vk::DescriptorImageInfo {
                        sampler: match kind {
                            BindingKind::SampledImage => self.device.nearest_sampler(),
                            BindingKind::TextureImage => self.device.texture_sampler(),
                            _ => vk::Sampler::null(),
                        },
                        image_view,
                        image_layout: layout,
                    };
                }
                Bound::Buffer { resource, range, .. } => {
                    let Resolved::Buffer(resolved) = self.resolved[resource as usize] else {
                        unreachable!("checked above: `{}` is a buffer", self.names.resource_name(resource))
                    };
                    let (offset, range) = range.unwrap_or((0, vk::WHOLE_SIZE));
                    buffer_infos[index] = vk::DescriptorBufferInfo { buffer: resolved.buffer, offset, range };
                }
                Bound::External { buffer, offset, size } => {
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
                BindingKind::StorageImage | BindingKind::SampledImage | BindingKind::TextureImage => {
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
}
