//! Meshlets: small clusters of a mesh's triangles with the bounds cluster culling tests.

/// One meshlet of a mesh level: a contiguous range of the level's indices (at most 124
/// triangles over at most 64 vertices) with a bounding sphere and a normal cone, as
/// meshopt's `compute_meshlet_bounds` gives them.
///
/// A cluster is back-facing for a camera at `eye` (perspective) when
/// `dot(normalize(cone_apex - eye), cone_axis) >= cone_cutoff`; a `cone_cutoff` of 1 or more
/// means the cone is degenerate and the meshlet must never be rejected by it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Meshlet {
    /// First index of the meshlet, relative to its level's first index.
    pub first_index: u32,
    /// Indices of the meshlet (three per triangle).
    pub index_count: u32,
    /// Distinct vertices the meshlet uses.
    pub vertex_count: u32,
    /// Centre of the bounding sphere, in mesh space.
    pub center: [f32; 3],
    /// Radius of the bounding sphere.
    pub radius: f32,
    /// Apex of the normal cone, in mesh space.
    pub cone_apex: [f32; 3],
    /// Axis of the normal cone (unit length).
    pub cone_axis: [f32; 3],
    /// Cosine of the cone's half angle, negated as meshopt stores it.
    pub cone_cutoff: f32,
}
