//! Source meshes as they arrive from a file or a generator, and what can be wrong with them.

use std::fmt;

/// An indexed triangle mesh before processing: one position per vertex, optional normals and
/// texture coordinates of the same count, and three `u32` indices per triangle.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshData {
    /// Vertex positions in the mesh's own space.
    pub positions: Vec<[f32; 3]>,
    /// Unit normals, one per vertex; empty to have them computed from the triangles.
    pub normals: Vec<[f32; 3]>,
    /// Texture coordinates, one per vertex, or empty.
    pub uvs: Vec<[f32; 2]>,
    /// Triangle list, counter-clockwise seen from the front.
    pub indices: Vec<u32>,
}

/// Why a mesh cannot be processed. Each names the first offending element.
#[derive(Clone, Debug, PartialEq)]
pub enum MeshError {
    /// No triangle at all.
    NoTriangles,
    /// The index count is not a multiple of three.
    PartialTriangle {
        /// Indices given.
        index_count: usize,
    },
    /// An index names a vertex past the end of the vertex arrays.
    IndexOutOfRange {
        /// Position of the index in the index list.
        position: usize,
        /// Its value.
        index: u32,
        /// Vertices the mesh has.
        vertex_count: usize,
    },
    /// A vertex position has a NaN or infinite coordinate.
    NonFinitePosition {
        /// The vertex.
        vertex: usize,
    },
    /// A vertex normal has a NaN or infinite coordinate.
    NonFiniteNormal {
        /// The vertex.
        vertex: usize,
    },
    /// A per-vertex array has a different length from `positions`.
    AttributeCount {
        /// Which attribute (`"normals"` or `"uvs"`).
        attribute: &'static str,
        /// Its length.
        count: usize,
        /// The number of positions.
        vertex_count: usize,
    },
    /// More vertices than 32-bit indices can address.
    TooManyVertices {
        /// Vertices given.
        vertex_count: usize,
    },
}

impl fmt::Display for MeshError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MeshError::NoTriangles => write!(formatter, "the mesh has no triangle"),
            MeshError::PartialTriangle { index_count } => {
                write!(formatter, "{index_count} indices are not a whole number of triangles")
            }
            MeshError::IndexOutOfRange { position, index, vertex_count } => {
                write!(formatter, "index {position} is {index}, past the mesh's {vertex_count} vertices")
            }
            MeshError::NonFinitePosition { vertex } => write!(formatter, "vertex {vertex} has a non-finite position"),
            MeshError::NonFiniteNormal { vertex } => write!(formatter, "vertex {vertex} has a non-finite normal"),
            MeshError::AttributeCount { attribute, count, vertex_count } => {
                write!(formatter, "{count} {attribute} for {vertex_count} vertices")
            }
            MeshError::TooManyVertices { vertex_count } => {
                write!(formatter, "{vertex_count} vertices are more than 32-bit indices can address")
            }
        }
    }
}

impl std::error::Error for MeshError {}

impl MeshData {
    /// A mesh of positions and indices; normals are computed when it is processed.
    pub fn new(positions: Vec<[f32; 3]>, indices: Vec<u32>) -> MeshData {
        MeshData { positions, normals: Vec::new(), uvs: Vec::new(), indices }
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// Checks everything processing relies on: whole triangles, indices inside the vertex
    /// arrays, finite positions and normals, per-vertex arrays of one length.
    pub fn validate(&self) -> Result<(), MeshError> {
        let vertex_count = self.positions.len();
        if vertex_count > u32::MAX as usize {
            return Err(MeshError::TooManyVertices { vertex_count });
        }
        if self.indices.is_empty() {
            return Err(MeshError::NoTriangles);
        }
        if !self.indices.len().is_multiple_of(3) {
            return Err(MeshError::PartialTriangle { index_count: self.indices.len() });
        }
        for (attribute, count) in [("normals", self.normals.len()), ("uvs", self.uvs.len())] {
            if count != 0 && count != vertex_count {
                return Err(MeshError::AttributeCount { attribute, count, vertex_count });
            }
        }
        if let Some((position, &index)) =
            self.indices.iter().enumerate().find(|(_, &index)| index as usize >= vertex_count)
        {
            return Err(MeshError::IndexOutOfRange { position, index, vertex_count });
        }
        if let Some(vertex) = self.positions.iter().position(|position| position.iter().any(|value| !value.is_finite()))
        {
            return Err(MeshError::NonFinitePosition { vertex });
        }
        if let Some(vertex) = self.normals.iter().position(|normal| normal.iter().any(|value| !value.is_finite())) {
            return Err(MeshError::NonFiniteNormal { vertex });
        }
        Ok(())
    }

    /// Area-weighted vertex normals of the triangles (unit length; +y for a vertex no
    /// triangle with area touches).
    pub fn computed_normals(&self) -> Vec<[f32; 3]> {
        let mut sums = vec![glam::Vec3::ZERO; self.positions.len()];
        for triangle in self.indices.chunks_exact(3) {
            let [a, b, c] = [0, 1, 2].map(|corner| glam::Vec3::from(self.positions[triangle[corner] as usize]));
            // The cross product's length is twice the area: larger triangles weigh more.
            let face = (b - a).cross(c - a);
            for &vertex in triangle {
                sums[vertex as usize] += face;
            }
        }
        sums.iter().map(|sum| sum.try_normalize().unwrap_or(glam::Vec3::Y).to_array()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn triangle() -> MeshData {
        MeshData::new(vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], vec![0, 1, 2])
    }

    #[test]
    fn a_good_triangle_validates_and_faces_plus_z() {
        let mesh = triangle();
        assert_eq!(mesh.validate(), Ok(()));
        assert_eq!(mesh.computed_normals(), vec![[0.0, 0.0, 1.0]; 3], "counter-clockwise in xy faces +z");
    }

    #[test]
    fn each_defect_is_named() {
        let mut mesh = triangle();
        mesh.indices.clear();
        assert_eq!(mesh.validate(), Err(MeshError::NoTriangles));
        mesh.indices = vec![0, 1];
        assert_eq!(mesh.validate(), Err(MeshError::PartialTriangle { index_count: 2 }));
        mesh.indices = vec![0, 1, 3];
        assert_eq!(mesh.validate(), Err(MeshError::IndexOutOfRange { position: 2, index: 3, vertex_count: 3 }));
        mesh.indices = vec![0, 1, 2];
        mesh.positions[1][2] = f32::NAN;
        assert_eq!(mesh.validate(), Err(MeshError::NonFinitePosition { vertex: 1 }));
        mesh.positions[1][2] = 0.0;
        mesh.normals = vec![[0.0, 0.0, 1.0]; 2];
        assert_eq!(mesh.validate(), Err(MeshError::AttributeCount { attribute: "normals", count: 2, vertex_count: 3 }));
        mesh.normals = vec![[0.0, f32::INFINITY, 1.0]; 3];
        assert_eq!(mesh.validate(), Err(MeshError::NonFiniteNormal { vertex: 0 }));
        assert!(MeshError::NoTriangles.to_string().contains("no triangle"));
    }
}
