//! Meshes of the GPU scene: the [`MeshLibrary`]'s vertices and 32-bit indices in two shared
//! buffers (`mesh_vertices`, `mesh_indices`), uploaded at install (meshes added later go up in
//! slices, `renderer/src/scene/gpu_scene/streaming.rs`); the vertex shader pulls vertices
//! by `gl_VertexIndex`, so there is no vertex input state.
//!
//! A vertex is 16 bytes: the position in `xyz` and, in the bits of `w`, the normal packed by
//! [`meshes::pack_normal`] (0 for a mesh added without normals, which the geometry pass then
//! draws in its flat colour).

use std::sync::Arc;

use meshes::MeshLibrary;
use render_graph::vk;
use render_graph::MemoryLocation;
use render_graph::{GpuBuffer, GpuDevice, GraphError, Result};

use crate::scene::as_bytes;

/// The device copies of a [`MeshLibrary`]: `mesh_vertices` (vec4 vertices, storage buffer),
/// `mesh_indices` (u32 index buffer) and `mesh_skin` (the vertices' packed skinning
/// influences, storage buffer; one entry while no mesh is skinned).
pub(crate) struct MeshBuffers {
    pub(crate) vertices: Arc<GpuBuffer>,
    pub(crate) indices: Arc<GpuBuffer>,
    pub(crate) skin: Arc<GpuBuffer>,
}

impl MeshBuffers {
    /// Creates device-local buffers and fills them through a temporary staging buffer,
    /// waiting for the copy (setup work, outside the frame loop).
    /// `skin` is the library's packed influences (`skinning.rs`), empty while no mesh is
    /// skinned.
    pub(crate) fn upload(device: &Arc<GpuDevice>, library: &MeshLibrary, skin: &[[u32; 4]]) -> Result<MeshBuffers> {
        if library.is_empty() {
            return Err(GraphError::InvalidDescription {
                resource: String::from("mesh_vertices"),
                reason: "the mesh library is empty",
            });
        }
        let vertex_bytes = as_bytes(library.positions());
        let index_bytes = as_bytes(library.indices());
        // Copy source too: a mesh added while frames run may outgrow them (`streaming.rs`).
        let dst_usage = vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::TRANSFER_SRC;
        let vertices = GpuBuffer::new(
            device,
            "mesh_vertices",
            vertex_bytes.len() as u64,
            dst_usage | vk::BufferUsageFlags::STORAGE_BUFFER,
            MemoryLocation::GpuOnly,
        )?;
        let indices = GpuBuffer::new(
            device,
            "mesh_indices",
            index_bytes.len() as u64,
            dst_usage | vk::BufferUsageFlags::INDEX_BUFFER,
            MemoryLocation::GpuOnly,
        )?;
        let skin_bytes = as_bytes(skin);
        let skin_buffer = GpuBuffer::new(
            device,
            "mesh_skin",
            skin_bytes.len().max(16) as u64,
            dst_usage | vk::BufferUsageFlags::STORAGE_BUFFER,
            MemoryLocation::GpuOnly,
        )?;
        let total = (vertex_bytes.len() + index_bytes.len() + skin_bytes.len()) as u64;
        let mut staging = GpuBuffer::new(
            device,
            "mesh staging",
            total,
            vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::CpuToGpu,
        )?;
        {
            let mapped = staging
                .mapped_mut()
                .ok_or_else(|| GraphError::Allocation(String::from("mesh staging buffer is not mapped")))?;
            mapped[..vertex_bytes.len()].copy_from_slice(vertex_bytes);
            let skin_start = vertex_bytes.len() + index_bytes.len();
            mapped[vertex_bytes.len()..skin_start].copy_from_slice(index_bytes);
            mapped[skin_start..total as usize].copy_from_slice(skin_bytes);
        }
        staging.flush()?;
        let raw = device.raw();
        device.submit_and_wait(|command_buffer| {
            let vertex_copy = vk::BufferCopy { src_offset: 0, dst_offset: 0, size: vertex_bytes.len() as u64 };
            let index_copy =
                vk::BufferCopy { src_offset: vertex_bytes.len() as u64, dst_offset: 0, size: index_bytes.len() as u64 };
            // SAFETY: recording a one-time command buffer; the regions lie inside the buffers,
            // which live until the wait returns.
            unsafe { raw.cmd_copy_buffer(command_buffer, staging.raw(), vertices.raw(), &[vertex_copy]) };
            // SAFETY: as above.
            unsafe { raw.cmd_copy_buffer(command_buffer, staging.raw(), indices.raw(), &[index_copy]) };
            if !skin_bytes.is_empty() {
                let src_offset = (vertex_bytes.len() + index_bytes.len()) as u64;
                let skin_copy = vk::BufferCopy { src_offset, dst_offset: 0, size: skin_bytes.len() as u64 };
                // SAFETY: as above.
                unsafe { raw.cmd_copy_buffer(command_buffer, staging.raw(), skin_buffer.raw(), &[skin_copy]) };
            }
        })?;
        Ok(MeshBuffers { vertices: Arc::new(vertices), indices: Arc::new(indices), skin: Arc::new(skin_buffer) })
    }
}
