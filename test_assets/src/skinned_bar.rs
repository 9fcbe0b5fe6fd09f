//! A skinned glTF of our own making: a bar of two joints, hip and knee, bent 90 degrees at
//! the knee by a one-second clip. The importer's tests (`assets`), the animation system's
//! (`animation`) and the GPU skinning tests (`tests`) all use this one bar.
//!
//! The buffer's layout (bytes): positions 0..72, indices 72..96, joints 96..120, weights
//! 120..216, inverse binds 216..344, key times 344..352, key rotations 352..384, and with
//! normals ([`SkinnedBar::lit`]) the normals 384..456.

use glam::{Mat4, Quat, Vec3};
use serde_json::{json, Value};

/// The bar's six vertices: two joints' lengths up the y axis, 0.2 wide.
pub const POSITIONS: [[f32; 3]; 6] =
    [[-0.1, 0.0, 0.0], [0.1, 0.0, 0.0], [-0.1, 1.0, 0.0], [0.1, 1.0, 0.0], [-0.1, 2.0, 0.0], [0.1, 2.0, 0.0]];
/// Its four triangles.
pub const INDICES: [u16; 12] = [0, 1, 3, 0, 3, 2, 2, 3, 5, 2, 5, 4];
/// The file numbers the skin's joints knee = 0, hip = 1 (child first).
pub const JOINTS: [[u8; 4]; 6] = [[1, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]];
/// The same influences numbered parents first (hip = 0, knee = 1), for a skeleton built in
/// code rather than imported.
pub const JOINTS_PARENTS_FIRST: [[u16; 4]; 6] =
    [[0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]];
/// Each vertex's weights of its joints: the middle pair half each.
pub const WEIGHTS: [[f32; 4]; 6] = [
    [1.0, 0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0, 0.0],
    [0.5, 0.5, 0.0, 0.0],
    [0.5, 0.5, 0.0, 0.0],
    [1.0, 0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0, 0.0],
];
/// Every vertex's normal in the lit bar: tilted out of the bar's plane, so the hip's depth
/// scale turns it.
pub const NORMAL: [f32; 3] = [0.6, 0.0, 0.8];
/// The lit bar's hip scale along z: the bar lies in z = 0, so its positions do not move, but
/// its normals are turned by the inverse transpose (not by the matrix, which turns them
/// elsewhere).
pub const HIP_DEPTH_SCALE: f32 = 3.0;

/// The knee's inverse bind matrix: the knee sits one unit up.
pub fn knee_inverse_bind() -> Mat4 {
    Mat4::from_translation(-Vec3::Y)
}

/// One bar file: its influences and the knee's inverse bind (which the importer's tests
/// change to make bad files), and whether it is lit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SkinnedBar {
    /// Each vertex's joints, as the file numbers them.
    pub joints: [[u8; 4]; 6],
    /// Each vertex's weights.
    pub weights: [[f32; 4]; 6],
    /// The knee's inverse bind matrix.
    pub knee_inverse_bind: Mat4,
    /// Whether the file has normals ([`NORMAL`]) and its hip a depth scale ([`HIP_DEPTH_SCALE`]).
    pub lit: bool,
}

impl SkinnedBar {
    /// The bar without normals, its hip unscaled.
    pub fn plain() -> SkinnedBar {
        SkinnedBar { joints: JOINTS, weights: WEIGHTS, knee_inverse_bind: knee_inverse_bind(), lit: false }
    }

    /// The bar with normals and the hip's depth scale, for the tests that shade or skin it.
    pub fn lit() -> SkinnedBar {
        SkinnedBar { lit: true, ..SkinnedBar::plain() }
    }

    /// The file's buffer (384 bytes, 456 when lit; layout in the module's description).
    pub fn buffer(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend(POSITIONS.iter().flatten().flat_map(|value| value.to_le_bytes()));
        bytes.extend(INDICES.iter().flat_map(|value| value.to_le_bytes()));
        bytes.extend(self.joints.iter().flatten());
        bytes.extend(self.weights.iter().flatten().flat_map(|value| value.to_le_bytes()));
        let binds = [self.knee_inverse_bind, Mat4::IDENTITY];
        bytes.extend(binds.iter().flat_map(|matrix| matrix.to_cols_array()).flat_map(|value| value.to_le_bytes()));
        bytes.extend([0.0_f32, 1.0].iter().flat_map(|value| value.to_le_bytes()));
        let bent = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
        bytes.extend(
            [Quat::IDENTITY, bent].iter().flat_map(|quat| quat.to_array()).flat_map(|value| value.to_le_bytes()),
        );
        if self.lit {
            bytes.extend(std::iter::repeat_n(NORMAL, POSITIONS.len()).flatten().flat_map(|value| value.to_le_bytes()));
        }
        bytes
    }

    /// The glTF document with `data` (this bar's [`buffer`](Self::buffer), or one changed
    /// from it) embedded: the bar, its skin (knee under hip, listed child first, the skeleton
    /// rooted at the hip) and a clip bending the knee 90° about z over one second.
    pub fn document(&self, data: &[u8]) -> Value {
        let uri = format!("data:application/octet-stream;base64,{}", crate::base64(data));
        let mut document = json!({
            "asset": { "version": "2.0" },
            "scene": 0,
            "scenes": [{ "nodes": [0] }],
            "nodes": [
                { "name": "root", "children": [1, 2] },
                { "name": "leg", "mesh": 0, "skin": 0 },
                { "name": "hip", "children": [3] },
                { "name": "knee", "translation": [0.0, 1.0, 0.0] }
            ],
            "skins": [{ "name": "legs", "joints": [3, 2], "inverseBindMatrices": 4, "skeleton": 2 }],
            "meshes": [{ "primitives": [{ "attributes": { "POSITION": 0, "JOINTS_0": 2, "WEIGHTS_0": 3 }, "indices": 1 }] }],
            "animations": [{
                "name": "bend",
                "channels": [{ "sampler": 0, "target": { "node": 3, "path": "rotation" } }],
                "samplers": [{ "input": 5, "output": 6, "interpolation": "LINEAR" }]
            }],
            "buffers": [{ "byteLength": data.len(), "uri": uri }],
            "bufferViews": [
                { "buffer": 0, "byteOffset": 0, "byteLength": 72 },
                { "buffer": 0, "byteOffset": 72, "byteLength": 24 },
                { "buffer": 0, "byteOffset": 96, "byteLength": 24 },
                { "buffer": 0, "byteOffset": 120, "byteLength": 96 },
                { "buffer": 0, "byteOffset": 216, "byteLength": 128 },
                { "buffer": 0, "byteOffset": 344, "byteLength": 8 },
                { "buffer": 0, "byteOffset": 352, "byteLength": 32 }
            ],
            "accessors": [
                { "bufferView": 0, "componentType": 5126, "count": 6, "type": "VEC3", "min": [-0.1, 0.0, 0.0], "max": [0.1, 2.0, 0.0] },
                { "bufferView": 1, "componentType": 5123, "count": 12, "type": "SCALAR" },
                { "bufferView": 2, "componentType": 5121, "count": 6, "type": "VEC4" },
                { "bufferView": 3, "componentType": 5126, "count": 6, "type": "VEC4" },
                { "bufferView": 4, "componentType": 5126, "count": 2, "type": "MAT4" },
                { "bufferView": 5, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0.0], "max": [1.0] },
                { "bufferView": 6, "componentType": 5126, "count": 2, "type": "VEC4" }
            ]
        });
        if self.lit {
            document["nodes"][2]["scale"] = json!([1.0, 1.0, HIP_DEPTH_SCALE]);
            document["meshes"][0]["primitives"][0]["attributes"]["NORMAL"] = json!(7);
            let views = document["bufferViews"].as_array_mut().expect("the views are a list");
            views.push(json!({ "buffer": 0, "byteOffset": 384, "byteLength": 72 }));
            let accessors = document["accessors"].as_array_mut().expect("the accessors are a list");
            accessors.push(json!({ "bufferView": 7, "componentType": 5126, "count": 6, "type": "VEC3" }));
        }
        document
    }

    /// The whole file as .gltf text, its buffer embedded.
    pub fn gltf_text(&self) -> String {
        self.document(&self.buffer()).to_string()
    }
}

/// The lit bar's file as .gltf text: what the GPU skinning tests load.
pub fn gltf_text() -> String {
    SkinnedBar::lit().gltf_text()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_fills_the_views_the_document_names() {
        for (bar, length) in [(SkinnedBar::plain(), 384), (SkinnedBar::lit(), 456)] {
            let data = bar.buffer();
            assert_eq!(data.len(), length);
            let document = bar.document(&data);
            let end = document["bufferViews"]
                .as_array()
                .unwrap()
                .iter()
                .map(|view| view["byteOffset"].as_u64().unwrap() + view["byteLength"].as_u64().unwrap())
                .max();
            assert_eq!(end, Some(length as u64), "the last view ends where the buffer does");
            assert_eq!(document["buffers"][0]["byteLength"], json!(length));
        }
    }

    #[test]
    fn the_parents_first_numbering_names_the_same_joints() {
        // File order: knee = 0, hip = 1; parents first: hip = 0, knee = 1.
        let remap = |joint: u8| 1 - u16::from(joint);
        for ((file, parents_first), weights) in JOINTS.iter().zip(&JOINTS_PARENTS_FIRST).zip(&WEIGHTS) {
            for slot in 0..4 {
                if weights[slot] > 0.0 {
                    assert_eq!(remap(file[slot]), parents_first[slot]);
                }
            }
        }
    }
}
