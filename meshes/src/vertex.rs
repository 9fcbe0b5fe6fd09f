//! Vertices as a mesh is given ([`MeshVertices`]) and as the library stores them: 16 bytes,
//! the position in `xyz` and, in the bits of `w`, the normal packed by [`pack_normal`] (0 for
//! a mesh added without normals, which the renderer's geometry pass draws in its flat colour).
//! Also the unit cube, the mesh tests and procedural scenes start from.

/// The vertices of a mesh with levels of detail: positions and unit normals, one per vertex,
/// and optional texture coordinates (kept on the host; the standard passes do not sample).
#[derive(Clone, Copy, Debug)]
pub struct MeshVertices<'a> {
    /// Positions in mesh space.
    pub positions: &'a [[f32; 3]],
    /// Unit normals, one per position.
    pub normals: &'a [[f32; 3]],
    /// Texture coordinates, one per position, or empty.
    pub uvs: &'a [[f32; 2]],
}

/// Packs a unit normal into 30 bits: three signed 10-bit fixed-point values (`x` in bits
/// 0–9, `y` in 10–19, `z` in 20–29, each `round(c * 511)`), the top two bits zero. A unit
/// normal never packs to 0, which marks a vertex without a normal.
///
/// GLSL twin: `unpack_normal` in `shaders/glsl/engine/vertex_normal.h`.
pub fn pack_normal(normal: [f32; 3]) -> u32 {
    let mut packed = 0_u32;
    for (axis, value) in normal.iter().enumerate() {
        let value = if value.is_finite() { value.clamp(-1.0, 1.0) } else { 0.0 };
        let fixed = (value * 511.0).round() as i32;
        packed |= ((fixed as u32) & 0x3FF) << (10 * axis);
    }
    packed
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normals_pack_into_thirty_bits_and_never_to_zero() {
        assert_eq!(pack_normal([1.0, 0.0, 0.0]), 511);
        assert_eq!(pack_normal([0.0, -1.0, 0.0]), (0x3FF & (-511_i32 as u32)) << 10);
        for normal in [[0.577, 0.577, -0.577], [0.0, 0.0, -1.0], [-1.0, 0.0, 0.0]] {
            let packed = pack_normal(normal);
            assert!(packed != 0 && packed >> 30 == 0, "{normal:?} packs to {packed:#x}");
        }
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
