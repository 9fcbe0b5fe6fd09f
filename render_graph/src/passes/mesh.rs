//! Meshes of the GPU scene: positions and 32-bit indices packed into two shared buffers
//! (`mesh_vertices`, `mesh_indices`), uploaded once; the vertex shader pulls positions by
//! `gl_VertexIndex`, so there is no vertex input state.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::memory::GpuBuffer;
use crate::passes::records::as_bytes;

/// Where one mesh lies in the shared buffers, and its local bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshRange {
    /// First index in `mesh_indices`.
    pub first_index: u32,
    /// Number of indices (three per triangle).
    pub index_count: u32,
    /// First vertex in `mesh_vertices` (added to every index).
    pub vertex_offset: i32,
    /// Minimum corner of the mesh's local bounding box.
    pub bounds_min: [f32; 3],
    /// Maximum corner of the mesh's local bounding box.
    pub bounds_max: [f32; 3],
}

/// Host-side mesh data: every mesh's positions and indices, appended into shared arrays.
#[derive(Clone, Debug, Default)]
pub struct MeshLibrary {
    positions: Vec<[f32; 4]>,
    indices: Vec<u32>,
    ranges: Vec<MeshRange>,
}

/// The unit cube centred on the origin (corners at ±0.5): 8 corners, 12 triangles wound
/// counter-clockwise seen from outside.
pub const UNIT_CUBE_POSITIONS: [[f32; 3]; 8] = [
    [-0.5, -0.5, -0.5],
    [0.5, -0.5, -0.5],
    [0.5, 0.5, -0.5],
    [-0.5, 0.5, -0.5],
    [-0.5, -0.5, 0.5],
    [0.5, -0.5, 0.5],
    [0.5, 0.5, 0.5],
    [-0.5, 0.5, 0.5],
];

/// Indices of [`UNIT_CUBE_POSITIONS`], two triangles per face.
pub const UNIT_CUBE_INDICES: [u32; 36] = [
    4, 5, 6, 4, 6, 7, // +z
    1, 0, 3, 1, 3, 2, // -z
    5, 1, 2, 5, 2, 6, // +x
    0, 4, 7, 0, 7, 3, // -x
    7, 6, 2, 7, 2, 3, // +y
    0, 1, 5, 0, 5, 4, // -y
];

impl MeshLibrary {
    /// An empty library.
    pub fn new() -> MeshLibrary {
        MeshLibrary::default()
    }

    /// A library holding only the unit cube, as mesh 0.
    pub fn with_unit_cube() -> MeshLibrary {
        let mut library = MeshLibrary::new();
        library.add_unit_cube();
        library
    }

    /// Adds a mesh and returns its id. Returns an error when it has no triangle, an index
    /// outside `positions`, or a non-finite position.
    pub fn add_mesh(&mut self, positions: &[[f32; 3]], indices: &[u32]) -> Result<u32> {
        let invalid = |reason| Err(GraphError::InvalidDescription { resource: String::from("mesh"), reason });
        if indices.is_empty() || indices.len() % 3 != 0 {
            return invalid("a mesh needs a whole, non-zero number of triangles");
        }
        if indices.iter().any(|&index| index as usize >= positions.len()) {
            return invalid("an index points past the mesh's vertices");
        }
        if positions.iter().flatten().any(|value| !value.is_finite()) {
            return invalid("a vertex position is not finite");
        }
        let mut bounds_min = [f32::INFINITY; 3];
        let mut bounds_max = [f32::NEG_INFINITY; 3];
        for position in positions {
            for axis in 0..3 {
                bounds_min[axis] = bounds_min[axis].min(position[axis]);
                bounds_max[axis] = bounds_max[axis].max(position[axis]);
            }
        }
        let range = MeshRange {
            first_index: self.indices.len() as u32,
            index_count: indices.len() as u32,
            vertex_offset: self.positions.len() as i32,
            bounds_min,
            bounds_max,
        };
        self.positions.extend(positions.iter().map(|&[x, y, z]| [x, y, z, 1.0]));
        self.indices.extend_from_slice(indices);
        self.ranges.push(range);
        Ok(self.ranges.len() as u32 - 1)
    }

    /// Adds the unit cube and returns its id.
    pub fn add_unit_cube(&mut self) -> u32 {
        self.add_mesh(&UNIT_CUBE_POSITIONS, &UNIT_CUBE_INDICES).expect("the unit cube is a valid mesh")
    }

    /// Where mesh `mesh` lies, or `None` for an unknown id.
    pub fn range(&self, mesh: u32) -> Option<&MeshRange> {
        self.ranges.get(mesh as usize)
    }

    /// Number of meshes.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Whether the library holds no mesh.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

/// The device copies of a [`MeshLibrary`]: `mesh_vertices` (vec4 positions, storage buffer)
/// and `mesh_indices` (u32 index buffer).
pub(crate) struct MeshBuffers {
    pub(crate) vertices: Arc<GpuBuffer>,
    pub(crate) indices: Arc<GpuBuffer>,
}

impl MeshBuffers {
    /// Creates device-local buffers and fills them through a temporary staging buffer,
    /// waiting for the copy (setup work, outside the frame loop).
    pub(crate) fn upload(device: &Arc<GpuDevice>, library: &MeshLibrary) -> Result<MeshBuffers> {
        if library.is_empty() {
            return Err(GraphError::InvalidDescription {
                resource: String::from("mesh_vertices"),
                reason: "the mesh library is empty",
            });
        }
        let vertex_bytes = as_bytes(&library.positions);
        let index_bytes = as_bytes(&library.indices);
        let dst_usage = vk::BufferUsageFlags::TRANSFER_DST;
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
        let total = (vertex_bytes.len() + index_bytes.len()) as u64;
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
            mapped[vertex_bytes.len()..total as usize].copy_from_slice(index_bytes);
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
        })?;
        Ok(MeshBuffers { vertices: Arc::new(vertices), indices: Arc::new(indices) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meshes_append_with_offsets_and_bounds() {
        let mut library = MeshLibrary::with_unit_cube();
        let triangle = library.add_mesh(&[[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 3.0, -1.0]], &[0, 1, 2]).unwrap();
        assert_eq!(triangle, 1);
        let range = library.range(triangle).unwrap();
        assert_eq!((range.first_index, range.index_count, range.vertex_offset), (36, 3, 8));
        assert_eq!(range.bounds_min, [0.0, 0.0, -1.0]);
        assert_eq!(range.bounds_max, [2.0, 3.0, 0.0]);
        assert_eq!(library.range(0).unwrap().bounds_max, [0.5; 3]);
    }

    #[test]
    fn bad_meshes_are_errors() {
        let mut library = MeshLibrary::new();
        assert!(library.add_mesh(&[[0.0; 3]], &[]).is_err(), "no triangle");
        assert!(library.add_mesh(&[[0.0; 3]], &[0, 0, 1]).is_err(), "index past the vertices");
        assert!(library.add_mesh(&[[f32::NAN, 0.0, 0.0]], &[0, 0, 0]).is_err(), "NaN position");
        assert!(library.is_empty());
    }

    #[test]
    fn cube_triangles_face_outward() {
        // The cross product of each counter-clockwise triangle points away from the centre.
        for triangle in UNIT_CUBE_INDICES.chunks_exact(3) {
            let [a, b, c] = [0, 1, 2].map(|corner| UNIT_CUBE_POSITIONS[triangle[corner] as usize]);
            let edge1 = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
            let edge2 = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
            let normal = [
                edge1[1] * edge2[2] - edge1[2] * edge2[1],
                edge1[2] * edge2[0] - edge1[0] * edge2[2],
                edge1[0] * edge2[1] - edge1[1] * edge2[0],
            ];
            let centre = [(a[0] + b[0] + c[0]) / 3.0, (a[1] + b[1] + c[1]) / 3.0, (a[2] + b[2] + c[2]) / 3.0];
            let outward = normal[0] * centre[0] + normal[1] * centre[1] + normal[2] * centre[2];
            assert!(outward > 0.0, "triangle {triangle:?} faces inward");
        }
    }
}
