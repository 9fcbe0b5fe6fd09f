//! What passes see during Prepare: the frame's number and output extent, uploads to graph
//! buffers through the staging ring (recorded at the start of the pass), and data staged
//! for this frame to bind directly.

use ash::vk;

use super::bind::Binding;
use super::params::FrameParams;
use crate::access::Access;
use crate::compile::{AccessDecl, BufferWrite, GraphDecl};
use crate::error::{GraphError, Result};
use crate::memory::StagingRing;
use crate::resources::Resolved;

/// A copy from the staging ring recorded at the start of a pass.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Upload {
    pub(crate) position: usize,
    pub(crate) source: vk::Buffer,
    pub(crate) region: vk::BufferCopy,
    pub(crate) target: vk::Buffer,
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
    pub(crate) error: &'frame mut Option<GraphError>,
    /// The frame's parameters ([`crate::RenderGraph::set_param`]).
    pub(crate) params: &'frame FrameParams,
}

impl<'frame> PrepareContext<'frame> {
    /// Reports a problem the pass found while preparing (e.g. an upload error):
    /// [`crate::RenderGraph::execute_frame`] returns the first such error and does not
    /// submit the frame.
    pub fn fail(&mut self, error: GraphError) {
        if self.error.is_none() {
            *self.error = Some(error);
        }
    }

    /// Whether `resource` exists this frame (see [`crate::ExecuteContext::exists`]).
    pub fn exists(&self, resource: impl Into<super::ResourceRef>) -> bool {
        let resource = resource.into().0 as usize;
        !matches!(self.resolved.get(resource), None | Some(Resolved::None))
    }

    /// The number of this frame (0 for the first).
    pub fn frame_index(&self) -> u64 {
        self.frame_index
    }

    /// The graph's output extent.
    pub fn output_extent(&self) -> vk::Extent2D {
        self.output_extent
    }

    /// The frame's parameter of type `T` ([`crate::RenderGraph::set_param`]), if the host set
    /// one (it borrows the frame, not the context).
    ///
    /// ```no_run
    /// # use render_graph::{BufferWrite, PrepareContext};
    /// struct Exposure(f32);
    /// # fn prepare(target: &BufferWrite, context: &mut PrepareContext) {
    /// // The host: `graph.set_param(Exposure(1.5))` before `execute_frame`.
    /// let exposure = context.param::<Exposure>().map_or(1.0, |exposure| exposure.0);
    /// if let Err(error) = context.upload_buffer(target, 0, &exposure.to_le_bytes()) {
    ///     context.fail(error);
    /// }
    /// # }
    /// ```
    #[inline]
    pub fn param<T: 'static>(&self) -> Option<&'frame T> {
        self.params.get()
    }

    /// The frame's parameter of type `T`, or [`GraphError::MissingParam`] naming this pass
    /// and the type, for a pass that cannot run without it:
    ///
    /// ```no_run
    /// # use render_graph::PrepareContext;
    /// # #[derive(Clone, Copy)] struct Camera([f32; 16]);
    /// # fn prepare(context: &mut PrepareContext) {
    /// let camera = match context.require_param::<Camera>() {
    ///     Ok(camera) => *camera,
    ///     Err(error) => return context.fail(error),
    /// };
    /// # let _ = camera;
    /// # }
    /// ```
    pub fn require_param<T: 'static>(&self) -> Result<&'frame T> {
        self.params.require(self.pass_name)
    }

    /// Copies `data` to `buffer` at `offset` through the staging ring, at the start of this
    /// pass. The pass must declare [`Access::TransferWrite`] on the buffer; otherwise the
    /// error names the pass and the buffer.
    pub fn upload_buffer(&mut self, buffer: &BufferWrite, offset: u64, data: &[u8]) -> Result<()> {
        let resource = || self.names.resource_name(buffer.0).to_owned();
        let Some(access) = self.accesses.iter().find(|access| access.resource == buffer.0) else {
            return Err(GraphError::UndeclaredAccess { pass: self.pass_name.to_owned(), resource: resource() });
        };
        let Resolved::Buffer(target) = self.resolved[buffer.0 as usize] else {
            return Err(GraphError::InvalidAccess {
                pass: self.pass_name.to_owned(),
                resource: resource(),
                reason: "uploads go to buffers",
            });
        };
        if access.access != Access::TransferWrite {
            return Err(GraphError::InvalidAccess {
                pass: self.pass_name.to_owned(),
                resource: resource(),
                reason: "an upload target must be declared with Access::TransferWrite",
            });
        }
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
    /// uniform or storage buffer range, or indirect draw arguments: its buffer is made with
    /// `INDIRECT_BUFFER` usage); the submit makes host writes visible.
    pub fn stage_data(&mut self, data: &[u8]) -> Result<Binding> {
        let (buffer, offset) = self.staging.push(data, 256)?;
        Ok(Binding::external(buffer, offset, data.len().max(4) as u64))
    }

    /// Like [`PrepareContext::stage_data`] for `len` bytes that `fill` writes in place, so
    /// large per-frame data (a scene's changed records) is written once, straight into the
    /// memory the device reads. The bytes start zeroed only if `fill` zeroes them.
    pub fn stage_with(&mut self, len: u64, fill: impl FnOnce(&mut [u8])) -> Result<Binding> {
        let (buffer, offset) = self.staging.push_with(len, 256, fill)?;
        Ok(Binding::external(buffer, offset, len.max(4)))
    }
}
