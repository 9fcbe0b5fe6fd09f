//! A small glTF 2.0 writer: indexed triangle meshes (positions, optional normals and texture
//! coordinates), nodes with translation, rotation and scale, and materials with a base colour,
//! written as one binary `.glb`. It is what a tool or a sample needs to hand the importer
//! ([`crate::load_gltf_bytes`]) a scene it made, not a general exporter: no textures,
//! animations, skins or cameras.
//!
//! ```
//! use assets::gltf_export::{GlbWriter, ExportMesh};
//! let mut writer = GlbWriter::new();
//! let red = writer.add_material([1.0, 0.0, 0.0, 1.0]);
//! let quad = writer.add_mesh(ExportMesh {
//!     positions: &[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]],
//!     normals: &[],
//!     uvs: &[],
//!     indices: &[0, 1, 2, 0, 2, 3],
//!     material: Some(red),
//! });
//! writer.add_node(quad, ecs::Transform::from_translation(glam::Vec3::X));
//! let scene = assets::load_gltf_bytes(&writer.to_glb(), None, &assets::ProcessOptions::default())?;
//! assert_eq!(scene.nodes.len(), 1);
//! # Ok::<(), assets::ImportError>(())
//! ```

use std::fmt::Write;

use ecs::Transform;

/// glTF's component type of 32-bit floats.
const FLOAT: u32 = 5126;
/// glTF's component type of 32-bit unsigned integers.
const UNSIGNED_INT: u32 = 5125;
/// glTF's buffer view target of vertex attributes.
const ARRAY_BUFFER: u32 = 34962;
/// glTF's buffer view target of indices.
const ELEMENT_ARRAY_BUFFER: u32 = 34963;

/// One mesh to write: a triangle list over its vertices.
#[derive(Clone, Copy, Debug)]
pub struct ExportMesh<'a> {
    /// Vertex positions.
    pub positions: &'a [[f32; 3]],
    /// One normal per vertex, or empty for none (the importer then computes them).
    pub normals: &'a [[f32; 3]],
    /// One texture coordinate per vertex, or empty for none.
    pub uvs: &'a [[f32; 2]],
    /// Three indices per triangle, counter-clockwise seen from the front.
    pub indices: &'a [u32],
    /// The material (from [`GlbWriter::add_material`]); `None`: glTF's default material.
    pub material: Option<u32>,
}

/// A `.glb` under construction: add materials, meshes and nodes, then [`GlbWriter::to_glb`].
/// Every node is a root of the one scene.
#[derive(Clone, Debug, Default)]
pub struct GlbWriter {
    /// The binary chunk: every accessor's data, each 4-byte aligned.
    bin: Vec<u8>,
    /// JSON objects of the buffer views, accessors, meshes, materials and nodes.
    views: Vec<String>,
    accessors: Vec<String>,
    meshes: Vec<String>,
    materials: Vec<String>,
    nodes: Vec<String>,
}

impl GlbWriter {
    /// An empty scene.
    pub fn new() -> GlbWriter {
        GlbWriter::default()
    }

    /// Adds a material of base colour `rgba` (linear, metallic 0, roughness 1) and returns its
    /// index for [`ExportMesh::material`].
    pub fn add_material(&mut self, rgba: [f32; 4]) -> u32 {
        let [red, green, blue, alpha] = rgba;
        self.materials.push(format!(
            r#"{{"pbrMetallicRoughness":{{"baseColorFactor":[{red},{green},{blue},{alpha}],"metallicFactor":0,"roughnessFactor":1}}}}"#
        ));
        self.materials.len() as u32 - 1
    }

    /// Adds a mesh of one triangle primitive and returns its index for [`GlbWriter::add_node`].
    /// Normals and texture coordinates are written when there is one per vertex.
    pub fn add_mesh(&mut self, mesh: ExportMesh<'_>) -> u32 {
        let (min, max) = bounds(mesh.positions);
        let count = mesh.positions.len();
        let position = self.add_accessor(
            bytemuck::cast_slice(mesh.positions),
            ARRAY_BUFFER,
            FLOAT,
            count,
            "VEC3",
            Some((&min, &max)),
        );
        let mut attributes = format!(r#""POSITION":{position}"#);
        if !mesh.normals.is_empty() && mesh.normals.len() == count {
            let normal =
                self.add_accessor(bytemuck::cast_slice(mesh.normals), ARRAY_BUFFER, FLOAT, count, "VEC3", None);
            let _ = write!(attributes, r#","NORMAL":{normal}"#);
        }
        if !mesh.uvs.is_empty() && mesh.uvs.len() == count {
            let uv = self.add_accessor(bytemuck::cast_slice(mesh.uvs), ARRAY_BUFFER, FLOAT, count, "VEC2", None);
            let _ = write!(attributes, r#","TEXCOORD_0":{uv}"#);
        }
        let indices = self.add_accessor(
            bytemuck::cast_slice(mesh.indices),
            ELEMENT_ARRAY_BUFFER,
            UNSIGNED_INT,
            mesh.indices.len(),
            "SCALAR",
            None,
        );
        let material = mesh.material.map_or_else(String::new, |material| format!(r#","material":{material}"#));
        self.meshes
            .push(format!(r#"{{"primitives":[{{"attributes":{{{attributes}}},"indices":{indices}{material}}}]}}"#));
        self.meshes.len() as u32 - 1
    }

    /// Adds a root node drawing mesh `mesh` at `transform` and returns its index.
    pub fn add_node(&mut self, mesh: u32, transform: Transform) -> u32 {
        let Transform { translation: move_by, rotation, scale } = transform;
        let [rx, ry, rz, rw] = rotation.normalize().to_array();
        self.nodes.push(format!(
            r#"{{"mesh":{mesh},"translation":[{},{},{}],"rotation":[{rx},{ry},{rz},{rw}],"scale":[{},{},{}]}}"#,
            move_by.x, move_by.y, move_by.z, scale.x, scale.y, scale.z
        ));
        self.nodes.len() as u32 - 1
    }

    /// The scene as `.glb` bytes: the JSON chunk, then the binary chunk (left out when no
    /// mesh was added).
    pub fn to_glb(&self) -> Vec<u8> {
        let roots = (0..self.nodes.len()).map(|node| node.to_string()).collect::<Vec<_>>().join(",");
        let mut json = String::from(r#"{"asset":{"version":"2.0","generator":"engine assets::gltf_export"},"#);
        let _ = write!(json, r#""scene":0,"scenes":[{{"nodes":[{roots}]}}]"#);
        for (name, items) in [
            ("nodes", &self.nodes),
            ("meshes", &self.meshes),
            ("materials", &self.materials),
            ("accessors", &self.accessors),
            ("bufferViews", &self.views),
        ] {
            if !items.is_empty() {
                let _ = write!(json, r#","{name}":[{}]"#, items.join(","));
            }
        }
        if !self.bin.is_empty() {
            let _ = write!(json, r#","buffers":[{{"byteLength":{}}}]"#, self.bin.len());
        }
        json.push('}');
        glb_container(&json, &self.bin)
    }

    /// Appends `bytes` to the binary chunk as a buffer view of `target` and an accessor of
    /// `count` items over it; returns the accessor's index.
    fn add_accessor(
        &mut self,
        bytes: &[u8],
        target: u32,
        component: u32,
        count: usize,
        kind: &str,
        min_max: Option<(&[f32; 3], &[f32; 3])>,
    ) -> u32 {
        let offset = self.bin.len();
        self.bin.extend_from_slice(bytes);
        self.bin.resize(self.bin.len().next_multiple_of(4), 0);
        self.views
            .push(format!(r#"{{"buffer":0,"byteOffset":{offset},"byteLength":{},"target":{target}}}"#, bytes.len()));
        let view = self.views.len() - 1;
        let range = min_max.map_or_else(String::new, |(min, max)| {
            format!(r#","min":[{},{},{}],"max":[{},{},{}]"#, min[0], min[1], min[2], max[0], max[1], max[2])
        });
        self.accessors.push(format!(
            r#"{{"bufferView":{view},"componentType":{component},"count":{count},"type":"{kind}"{range}}}"#
        ));
        self.accessors.len() as u32 - 1
    }
}

/// The box around `positions` (glTF requires it on the position accessor).
fn bounds(positions: &[[f32; 3]]) -> ([f32; 3], [f32; 3]) {
    let mut min = [f32::INFINITY; 3];
    let mut max = [f32::NEG_INFINITY; 3];
    for position in positions {
        for axis in 0..3 {
            min[axis] = min[axis].min(position[axis]);
            max[axis] = max[axis].max(position[axis]);
        }
    }
    if positions.is_empty() {
        ([0.0; 3], [0.0; 3])
    } else {
        (min, max)
    }
}

/// Writes a scene of `meshes` (with materials of the given base colours) and `nodes` (a mesh
/// index and its transform each) as `.glb` bytes: [`GlbWriter`] in one call.
pub fn write_glb(materials: &[[f32; 4]], meshes: &[ExportMesh<'_>], nodes: &[(u32, Transform)]) -> Vec<u8> {
    let mut writer = GlbWriter::new();
    for &rgba in materials {
        writer.add_material(rgba);
    }
    for &mesh in meshes {
        writer.add_mesh(mesh);
    }
    for &(mesh, transform) in nodes {
        writer.add_node(mesh, transform);
    }
    writer.to_glb()
}

/// A `.glb` file of a glTF document's JSON and its binary chunk: the 12-byte header, the JSON
/// chunk padded with spaces to 4 bytes, then the binary chunk padded with zeros (left out when
/// `bin` is empty), as the glTF 2.0 container format lays them out.
pub fn glb_container(json: &str, bin: &[u8]) -> Vec<u8> {
    let json_length = json.len().next_multiple_of(4);
    let bin_length = bin.len().next_multiple_of(4);
    let bin_chunk = if bin.is_empty() { 0 } else { 8 + bin_length };
    let total = 12 + 8 + json_length + bin_chunk;
    let mut glb = Vec::with_capacity(total);
    glb.extend(b"glTF");
    glb.extend(2_u32.to_le_bytes());
    glb.extend((total as u32).to_le_bytes());
    glb.extend((json_length as u32).to_le_bytes());
    glb.extend(b"JSON");
    glb.extend(json.as_bytes());
    glb.resize(12 + 8 + json_length, b' ');
    if !bin.is_empty() {
        glb.extend((bin_length as u32).to_le_bytes());
        glb.extend(b"BIN\0");
        glb.extend(bin);
        glb.resize(total, 0);
    }
    glb
}
