//! A skinned glTF of our own making, shared by the skinning tests: a bar of two joints, hip
//! and knee, bent 90 degrees at the knee by a one-second clip.

use glam::Vec3;

/// The bar's six vertices: two joints' lengths up the y axis, 0.2 wide.
pub const POSITIONS: [[f32; 3]; 6] =
    [[-0.1, 0.0, 0.0], [0.1, 0.0, 0.0], [-0.1, 1.0, 0.0], [0.1, 1.0, 0.0], [-0.1, 2.0, 0.0], [0.1, 2.0, 0.0]];
/// Its four triangles.
pub const INDICES: [u16; 12] = [0, 1, 3, 0, 3, 2, 2, 3, 5, 2, 5, 4];
/// The file numbers the skin's joints knee = 0, hip = 1 (child first).
pub const JOINTS: [[u8; 4]; 6] = [[1, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]];
/// Each vertex's weights of its joints: the middle pair half each.
pub const WEIGHTS: [[f32; 4]; 6] = [
    [1.0, 0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0, 0.0],
    [0.5, 0.5, 0.0, 0.0],
    [0.5, 0.5, 0.0, 0.0],
    [1.0, 0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0, 0.0],
];
/// Every vertex's normal: tilted out of the bar's plane, so the hip's depth scale turns it.
pub const NORMAL: [f32; 3] = [0.6, 0.0, 0.8];
/// The hip's scale along z: the bar lies in z = 0, so its positions do not move, but its
/// normals are turned by the inverse transpose (not by the matrix, which turns them elsewhere).
pub const HIP_DEPTH_SCALE: f32 = 3.0;

/// The file: the bar, its skin (knee under hip, the knee's inverse bind one unit down) and a
/// clip bending the knee 90° about z over one second.
pub fn gltf_text() -> String {
    let mut bytes = Vec::new();
    bytes.extend(POSITIONS.iter().flatten().flat_map(|value| value.to_le_bytes()));
    bytes.extend(INDICES.iter().flat_map(|value| value.to_le_bytes()));
    bytes.extend(JOINTS.iter().flatten());
    bytes.extend(WEIGHTS.iter().flatten().flat_map(|value| value.to_le_bytes()));
    let binds = [glam::Mat4::from_translation(-Vec3::Y), glam::Mat4::IDENTITY];
    bytes.extend(binds.iter().flat_map(|matrix| matrix.to_cols_array()).flat_map(|value| value.to_le_bytes()));
    bytes.extend([0.0_f32, 1.0].iter().flat_map(|value| value.to_le_bytes()));
    let bent = glam::Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    bytes.extend(
        [glam::Quat::IDENTITY, bent].iter().flat_map(|quat| quat.to_array()).flat_map(|value| value.to_le_bytes()),
    );
    bytes.extend(std::iter::repeat_n(NORMAL, POSITIONS.len()).flatten().flat_map(|value| value.to_le_bytes()));
    assert_eq!(bytes.len(), 456);
    let uri = format!("data:application/octet-stream;base64,{}", base64(&bytes));
    format!(
        r#"{{
  "asset": {{ "version": "2.0" }}, "scene": 0, "scenes": [{{ "nodes": [0] }}],
  "nodes": [
    {{ "name": "root", "children": [1, 2] }}, {{ "name": "leg", "mesh": 0, "skin": 0 }},
    {{ "name": "hip", "children": [3], "scale": [1.0, 1.0, {HIP_DEPTH_SCALE:.1}] }},
    {{ "name": "knee", "translation": [0.0, 1.0, 0.0] }}
  ],
  "skins": [{{ "name": "legs", "joints": [3, 2], "inverseBindMatrices": 4, "skeleton": 2 }}],
  "meshes": [{{ "primitives": [{{ "attributes": {{ "POSITION": 0, "NORMAL": 7, "JOINTS_0": 2, "WEIGHTS_0": 3 }}, "indices": 1 }}] }}],
  "animations": [{{ "name": "bend", "channels": [{{ "sampler": 0, "target": {{ "node": 3, "path": "rotation" }} }}],
    "samplers": [{{ "input": 5, "output": 6, "interpolation": "LINEAR" }}] }}],
  "buffers": [{{ "byteLength": 456, "uri": "{uri}" }}],
  "bufferViews": [
    {{ "buffer": 0, "byteOffset": 0, "byteLength": 72 }}, {{ "buffer": 0, "byteOffset": 72, "byteLength": 24 }},
    {{ "buffer": 0, "byteOffset": 96, "byteLength": 24 }}, {{ "buffer": 0, "byteOffset": 120, "byteLength": 96 }},
    {{ "buffer": 0, "byteOffset": 216, "byteLength": 128 }}, {{ "buffer": 0, "byteOffset": 344, "byteLength": 8 }},
    {{ "buffer": 0, "byteOffset": 352, "byteLength": 32 }}, {{ "buffer": 0, "byteOffset": 384, "byteLength": 72 }}
  ],
  "accessors": [
    {{ "bufferView": 0, "componentType": 5126, "count": 6, "type": "VEC3", "min": [-0.1, 0.0, 0.0], "max": [0.1, 2.0, 0.0] }},
    {{ "bufferView": 1, "componentType": 5123, "count": 12, "type": "SCALAR" }},
    {{ "bufferView": 2, "componentType": 5121, "count": 6, "type": "VEC4" }},
    {{ "bufferView": 3, "componentType": 5126, "count": 6, "type": "VEC4" }},
    {{ "bufferView": 4, "componentType": 5126, "count": 2, "type": "MAT4" }},
    {{ "bufferView": 5, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0.0], "max": [1.0] }},
    {{ "bufferView": 6, "componentType": 5126, "count": 2, "type": "VEC4" }},
    {{ "bufferView": 7, "componentType": 5126, "count": 6, "type": "VEC3" }}
  ]
}}"#
    )
}

/// `bytes` in standard base64 with padding, for the file's data URI.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let word = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for position in 0..4 {
            if position <= chunk.len() {
                out.push(ALPHABET[(word >> (18 - 6 * position)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
