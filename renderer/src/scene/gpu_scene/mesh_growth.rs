//! Growth of the mesh buffers (`mesh_vertices`, `mesh_indices`, `mesh_uvs`, `mesh_skin`) for meshes added
//! while frames run: when the ranges given out pass a buffer's size, it is replaced by one of
//! twice the size (or more) between frames, the next frame's upload copies the outgrown one
//! into it on the GPU before that frame's slice, and the outgrown one is kept until the frame
//! that copied it has finished (`growth.rs`'s rule for the object buffers).

use std::sync::Arc;

use render_graph::{vk, GpuBuffer, MemoryLocation};

use super::growth::Retired;
use super::skinning::SKIN_BYTES;
use super::streaming::{INDEX_BYTES, TARGET_INDICES, TARGET_SKIN, TARGET_UVS, TARGET_VERTICES, UV_BYTES, VERTEX_BYTES};
use super::GpuScene;
use crate::names::{MESH_INDICES, MESH_SKIN, MESH_UVS, MESH_VERTICES};

/// An outgrown mesh buffer the next upload copies, whole, into its replacement: what it holds
/// of meshes not sent yet is overwritten when they are sent (after the copy).
pub(super) struct MeshGrowth {
    outgrown: Arc<GpuBuffer>,
    /// The graph frame that recorded the copy (a failed frame keeps its number).
    recorded_in: Option<u64>,
}

/// One copy of an outgrown mesh buffer into the one that replaced it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MeshCopy {
    /// The outgrown buffer.
    pub(crate) source: vk::Buffer,
    /// Its replacement.
    pub(crate) target: vk::Buffer,
    /// Bytes from the start of both.
    pub(crate) bytes: u64,
}

impl GpuScene {
    /// Replaces each mesh buffer the library outgrew by one of twice the size (or more),
    /// keeping the outgrown one for the next upload's copy.
    pub(super) fn grow_mesh_buffers(&mut self) -> render_graph::Result<()> {
        let (vertex_slots, index_slots) = self.stream.placement.extents();
        // `mesh_skin` follows the vertex slots once a mesh is skinned.
        let skin_slots = if self.has_skinned_meshes() { u64::from(vertex_slots) } else { 0 };
        let needed = [
            u64::from(vertex_slots) * VERTEX_BYTES,
            u64::from(index_slots) * INDEX_BYTES,
            u64::from(vertex_slots) * UV_BYTES,
            skin_slots * SKIN_BYTES,
        ];
        let mut grew = false;
        for target in [TARGET_VERTICES, TARGET_INDICES, TARGET_UVS, TARGET_SKIN] {
            let current = match target {
                TARGET_VERTICES => &self.mesh_buffers.vertices,
                TARGET_INDICES => &self.mesh_buffers.indices,
                TARGET_SKIN => &self.mesh_buffers.skin,
                _ => &self.material_buffers.uvs,
            };
            let size = current.size();
            if needed[target as usize] <= size {
                continue;
            }
            let (name, usage) = match target {
                TARGET_VERTICES => (MESH_VERTICES, vk::BufferUsageFlags::STORAGE_BUFFER),
                TARGET_INDICES => (MESH_INDICES, vk::BufferUsageFlags::INDEX_BUFFER),
                TARGET_SKIN => (MESH_SKIN, vk::BufferUsageFlags::STORAGE_BUFFER),
                _ => (MESH_UVS, vk::BufferUsageFlags::STORAGE_BUFFER),
            };
            let usage = usage | vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::TRANSFER_SRC;
            let bytes = needed[target as usize].max(size.saturating_mul(2));
            let allocated = if bytes > super::growth::memory_limit() {
                let result = vk::Result::ERROR_OUT_OF_DEVICE_MEMORY;
                Err(render_graph::GraphError::Vulkan { call: "vkAllocateMemory", result })
            } else {
                GpuBuffer::new(&self.device, name, bytes, usage, MemoryLocation::GpuOnly)
            };
            let buffer = match allocated {
                Ok(buffer) => Arc::new(buffer),
                Err(error) => {
                    // The buffers replaced before this one stay replaced: a graph must follow
                    // them.
                    if grew {
                        self.generation += 1;
                    }
                    return Err(error);
                }
            };
            let outgrown = match target {
                TARGET_VERTICES => std::mem::replace(&mut self.mesh_buffers.vertices, buffer),
                TARGET_INDICES => std::mem::replace(&mut self.mesh_buffers.indices, buffer),
                TARGET_SKIN => std::mem::replace(&mut self.mesh_buffers.skin, buffer),
                _ => std::mem::replace(&mut self.material_buffers.uvs, buffer),
            };
            let slot = &mut self.stream.growth[target as usize];
            match slot {
                // Not copied yet: no frame wrote the buffer between, so the oldest one is
                // still the source, and the one between is dropped once no frame can hold it.
                Some(waiting) if waiting.recorded_in.is_none() => {
                    self.retired.push(Retired::new(self.frames_prepared, outgrown));
                }
                _ => {
                    if let Some(done) = slot.take() {
                        let frame = done.recorded_in.unwrap_or(self.frames_prepared);
                        self.retired.push(Retired::new(frame, done.outgrown));
                    }
                    *slot = Some(MeshGrowth { outgrown, recorded_in: None });
                }
            }
            grew = true;
        }
        if grew {
            self.generation += 1;
        }
        Ok(())
    }

    /// The last graph frame that may read a mesh range freed now: the next one, whose
    /// upload may have been prepared with the records of before the change when frames are
    /// pipelined (one frame more than needed otherwise, never one too few).
    pub(super) fn last_reader(&self) -> u64 {
        self.frames_prepared + 1
    }

    /// Lists into `out` the copies of outgrown mesh buffers graph frame `frame` records, and
    /// retires the sources of copies an earlier frame recorded.
    pub(crate) fn mesh_growth_copies_for(&mut self, frame: u64, out: &mut Vec<MeshCopy>) {
        out.clear();
        self.frames_prepared = frame;
        self.stream.placement.release(frame.checked_sub(render_graph::FRAMES_IN_FLIGHT as u64));
        for target in [TARGET_VERTICES, TARGET_INDICES, TARGET_UVS, TARGET_SKIN] {
            let slot = &mut self.stream.growth[target as usize];
            let Some(growth) = slot else { continue };
            if let Some(recorded) = growth.recorded_in.filter(|&recorded| recorded < frame) {
                let done = slot.take().expect("matched above");
                self.retired.push(Retired::new(recorded, done.outgrown));
                continue;
            }
            growth.recorded_in = Some(frame);
            let replacement = match target {
                TARGET_VERTICES => &self.mesh_buffers.vertices,
                TARGET_INDICES => &self.mesh_buffers.indices,
                TARGET_SKIN => &self.mesh_buffers.skin,
                _ => &self.material_buffers.uvs,
            };
            out.push(MeshCopy {
                source: growth.outgrown.raw(),
                target: replacement.raw(),
                bytes: growth.outgrown.size(),
            });
        }
    }
}
