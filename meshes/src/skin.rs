//! Skinning influences: per vertex, four joints and their weights, a stream of the library
//! parallel to the vertices (like the texture coordinates), empty until a skinned mesh is added.

use std::ops::Range;

use crate::{LibraryError, MeshLibrary, MeshVertices, Meshlet, Result};

/// The influences of a skinned mesh's vertices, one entry per position: four joint indices
/// (into the mesh's skeleton) and their weights, non-negative and summing to 1.
#[derive(Clone, Copy, Debug)]
pub struct VertexSkin<'a> {
    /// Joints, four per vertex.
    pub joints: &'a [[u16; 4]],
    /// Their weights, four per vertex.
    pub weights: &'a [[f32; 4]],
}

/// The library's influence stream: empty while no mesh is skinned, else one entry per vertex
/// (zero joints and weights for rigid meshes).
#[derive(Clone, Debug, Default)]
pub(crate) struct SkinStream {
    joints: Vec<[u16; 4]>,
    weights: Vec<[f32; 4]>,
}

impl SkinStream {
    /// Keeps the stream parallel to `vertex_count` vertices once it exists.
    pub(crate) fn pad(&mut self, vertex_count: usize) {
        if !self.joints.is_empty() {
            self.joints.resize(vertex_count, [0; 4]);
            self.weights.resize(vertex_count, [0.0; 4]);
        }
    }
}

impl MeshLibrary {
    /// Adds a skinned mesh with its levels of detail, as [`MeshLibrary::add_mesh_levels`],
    /// with its vertices' joints and weights, and without meshlets: a meshlet's bounds and
    /// cone are of the bind pose, which the drawn pose leaves, so cluster culling would hide
    /// what shows; the levels' meshlets are dropped and the cluster frame draws the mesh's
    /// objects whole, culled by their posed box. Nothing is added on an error: what
    /// `add_mesh_levels` refuses, or influences without one entry per position, or weights
    /// that are negative, not finite or do not sum to 1 (within 1e-3).
    pub fn add_skinned_mesh_levels(
        &mut self,
        vertices: MeshVertices<'_>,
        skin: VertexSkin<'_>,
        levels: &[(&[u32], &[Meshlet])],
    ) -> Result<Range<u32>> {
        let count = vertices.positions.len();
        if skin.joints.len() != count || skin.weights.len() != count {
            return Err(LibraryError::InvalidMesh("joints and weights need one entry per position"));
        }
        let bad_weights = |weights: &[f32; 4]| {
            weights.iter().any(|weight| !weight.is_finite() || *weight < 0.0)
                || (weights.iter().sum::<f32>() - 1.0).abs() > 1e-3
        };
        if skin.weights.iter().any(bad_weights) {
            return Err(LibraryError::InvalidMesh("skin weights must be non-negative and sum to 1"));
        }
        let without_meshlets: Vec<(&[u32], &[Meshlet])> =
            levels.iter().map(|&(indices, _)| (indices, &[][..])).collect();
        let chain = self.add_mesh_levels(vertices, &without_meshlets)?;
        let total = self.positions().len();
        let stream = &mut self.skin;
        stream.joints.resize(total, [0; 4]);
        stream.weights.resize(total, [0.0; 4]);
        stream.joints[total - count..].copy_from_slice(skin.joints);
        stream.weights[total - count..].copy_from_slice(skin.weights);
        Ok(chain)
    }

    /// Joints of every vertex of the library, indexed like the vertices: empty while no
    /// skinned mesh was added, then one entry per vertex (zero for rigid meshes).
    pub fn vertex_joints(&self) -> &[[u16; 4]] {
        &self.skin.joints
    }

    /// Weights of every vertex of the library, as [`MeshLibrary::vertex_joints`] (zero for
    /// rigid meshes).
    pub fn vertex_weights(&self) -> &[[f32; 4]] {
        &self.skin.weights
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{UNIT_CUBE_INDICES, UNIT_CUBE_POSITIONS};

    #[test]
    fn influences_stay_parallel_to_the_vertices() {
        let mut library = MeshLibrary::with_unit_cube();
        assert!(library.vertex_joints().is_empty(), "no skinned mesh, no stream");
        let normals = [[0.0, 0.0, 1.0]; 8];
        let vertices = MeshVertices { positions: &UNIT_CUBE_POSITIONS, normals: &normals, uvs: &[] };
        let joints = [[1, 2, 0, 0]; 8];
        let weights = [[0.25, 0.75, 0.0, 0.0]; 8];
        let skin = VertexSkin { joints: &joints, weights: &weights };
        library.add_skinned_mesh_levels(vertices, skin, &[(&UNIT_CUBE_INDICES, &[])]).unwrap();
        library.add_unit_cube();
        assert_eq!(library.vertex_joints().len(), library.positions().len());
        assert_eq!(library.vertex_weights().len(), library.positions().len());
        assert_eq!(library.vertex_joints()[8], [1, 2, 0, 0], "the skinned mesh's first vertex");
        assert_eq!(library.vertex_weights()[0], [0.0; 4], "the rigid cube before it");
        assert_eq!(library.vertex_weights()[16], [0.0; 4], "the rigid cube after it");
        let bad = [[0.5, 0.0, 0.0, 0.0]; 8];
        let skin = VertexSkin { joints: &joints, weights: &bad };
        assert!(library.add_skinned_mesh_levels(vertices, skin, &[(&UNIT_CUBE_INDICES, &[])]).is_err());
        assert_eq!(library.len(), 3, "nothing added on an error");
    }
}
