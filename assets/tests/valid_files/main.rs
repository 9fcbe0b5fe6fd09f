//! Valid files as real pipelines write them load, and give the geometry they encode: a
//! corpus written here in code (JSON plus binary) of quantized attributes of every type
//! `KHR_mesh_quantization` allows, `EXT_meshopt_compression` views of every mode and filter
//! (with fallback buffers), sparse accessors, accessors without a buffer view, textures
//! without a source, animation channels without a node, and optional extensions the
//! importer does not know; a required one it cannot honour stays an error.

#[path = "../common/mod.rs"]
mod common;
mod compression;
mod materials;
mod quantization;
mod sparse;
mod unknown;

use std::cell::RefCell;

use assets::{load_gltf_bytes, GltfScene, ImportError, ProcessOptions};
use common::{CUBE, CUBE_INDICES};
use glam::Vec3;
use meshopt::encoding::{
    decode_filter_exp, decode_filter_oct, decode_filter_quat, decode_index_buffer, encode_filter_exp,
    encode_filter_oct, encode_filter_quat, encode_index_buffer, encode_index_sequence, encode_vertex_buffer_level,
    EncodeExpMode,
};
use serde_json::{json, Value};

// The cube of `common` (`CUBE`, `CUBE_INDICES`), with a normal (its corner's direction) and
// texture coordinates per vertex.

fn cube_normals() -> Vec<[f32; 3]> {
    CUBE.iter().map(|&corner| Vec3::from(corner).normalize().to_array()).collect()
}

fn cube_uvs() -> Vec<[f32; 2]> {
    CUBE.iter().map(|corner| [corner[0] + 0.5, 0.25 + corner[1] * 0.5]).collect()
}

fn load(bytes: &[u8]) -> Result<GltfScene, ImportError> {
    load_gltf_bytes(bytes, None, &ProcessOptions::default())
}

// ---------------------------------------------------------------------------------------
// Writing files.

/// A glTF component type with how its integers map to floats.
#[derive(Clone, Copy, Debug)]
struct Component {
    code: u32,
    size: usize,
    signed: bool,
    normalized: bool,
}

const FLOAT: Component = Component { code: 5126, size: 4, signed: true, normalized: false };
const fn int(code: u32, normalized: bool) -> Component {
    let (size, signed) = match code {
        5120 => (1, true),
        5121 => (1, false),
        5122 => (2, true),
        _ => (2, false),
    };
    Component { code, size, signed, normalized }
}
const BYTE: u32 = 5120;
const UNSIGNED_BYTE: u32 = 5121;
const SHORT: u32 = 5122;
const UNSIGNED_SHORT: u32 = 5123;

impl Component {
    fn largest(self) -> f32 {
        match (self.size, self.signed) {
            (1, true) => 127.0,
            (1, false) => 255.0,
            (2, true) => 32767.0,
            _ => 65535.0,
        }
    }

    /// The integer that stores `value` (already in the type's range: [-1, 1] or [0, 1]
    /// normalized, integers otherwise), as the extension's float-to-int column says.
    fn quantize(self, value: f32) -> i64 {
        let scaled = if self.normalized { value * self.largest() } else { value };
        scaled.round() as i64
    }

    /// The float an importer must read for `stored`.
    fn dequantize(self, stored: i64) -> f32 {
        let value = stored as f32;
        match (self.normalized, self.signed) {
            (false, _) => value,
            (true, true) => (value / self.largest()).max(-1.0),
            (true, false) => value / self.largest(),
        }
    }

    fn write(self, value: f32, out: &mut Vec<u8>) {
        if self.code == FLOAT.code {
            out.extend_from_slice(&value.to_le_bytes());
            return;
        }
        let stored = self.quantize(value);
        match self.size {
            1 => out.push(stored as u8),
            _ => out.extend_from_slice(&(stored as u16).to_le_bytes()),
        }
    }
}

/// Elements of `N` components of `component`, each padded to 4 bytes as glTF aligns
/// vertex attributes; with the stride.
fn pack<const N: usize>(values: &[[f32; N]], component: Component) -> (Vec<u8>, usize) {
    let stride = (N * component.size).next_multiple_of(4);
    let mut out = Vec::with_capacity(values.len() * stride);
    for value in values {
        let start = out.len();
        for &axis in value {
            component.write(axis, &mut out);
        }
        out.resize(start + stride, 0);
    }
    (out, stride)
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|value| value.to_le_bytes()).collect()
}

fn u16_bytes(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|&value| (value as u16).to_le_bytes()).collect()
}

fn bytes_of<T, const N: usize>(values: &[T], to_bytes: impl Fn(&T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(to_bytes).collect()
}

/// How a compressed view is stored: its mode, filter and extension.
#[derive(Clone, Copy)]
struct Compression {
    extension: &'static str,
    mode: &'static str,
    filter: &'static str,
}

const EXT: &str = "EXT_meshopt_compression";
const KHR: &str = "KHR_meshopt_compression";

/// A file under construction: buffer 0 holds plain and compressed bytes, buffer 1 is the
/// fallback buffer compressed views stand for.
#[derive(Default)]
struct Builder {
    bin: Vec<u8>,
    fallback_length: usize,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Builder {
    /// Appends `bytes` to buffer 0 on a 4-byte boundary; their offset.
    fn append(&mut self, bytes: &[u8]) -> usize {
        let offset = self.bin.len();
        self.bin.extend_from_slice(bytes);
        self.bin.resize(self.bin.len().next_multiple_of(4), 0);
        offset
    }

    /// A plain view over `bytes` in buffer 0.
    fn view(&mut self, bytes: &[u8], stride: Option<usize>) -> usize {
        let offset = self.append(bytes);
        let mut view = json!({ "buffer": 0, "byteOffset": offset, "byteLength": bytes.len() });
        if let Some(stride) = stride {
            view["byteStride"] = json!(stride);
        }
        self.views.push(view);
        self.views.len() - 1
    }

    /// A view of `count` elements of `stride` bytes in the fallback buffer, whose data is
    /// `encoded` in buffer 0.
    fn compressed(
        &mut self,
        encoded: &[u8],
        stride: usize,
        count: usize,
        compression: Compression,
        vertex_data: bool,
    ) -> usize {
        let offset = self.append(encoded);
        let length = stride * count;
        let mut view = json!({
            "buffer": 1, "byteOffset": self.fallback_length, "byteLength": length,
            "extensions": { compression.extension: {
                "buffer": 0, "byteOffset": offset, "byteLength": encoded.len(), "byteStride": stride,
                "count": count, "mode": compression.mode, "filter": compression.filter,
            } }
        });
        if vertex_data {
            view["byteStride"] = json!(stride);
        }
        self.fallback_length = (self.fallback_length + length).next_multiple_of(4);
        self.views.push(view);
        self.views.len() - 1
    }

    fn accessor(&mut self, accessor: Value) -> usize {
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }

    /// An accessor of `component` `kind` elements over `view`.
    fn attribute(&mut self, view: usize, component: Component, kind: &str, count: usize) -> usize {
        self.accessor(json!({
            "bufferView": view, "componentType": component.code, "normalized": component.normalized,
            "count": count, "type": kind
        }))
    }

    /// A POSITION accessor (with the `min` and `max` glTF requires, in stored units).
    fn positions(&mut self, view: Option<usize>, component: Component, stored: &[[f32; 3]]) -> usize {
        let min = (0..3).map(|axis| stored.iter().map(|p| p[axis]).fold(f32::MAX, f32::min)).collect::<Vec<_>>();
        let max = (0..3).map(|axis| stored.iter().map(|p| p[axis]).fold(f32::MIN, f32::max)).collect::<Vec<_>>();
        let mut accessor = json!({
            "componentType": component.code, "normalized": component.normalized,
            "count": stored.len(), "type": "VEC3", "min": min, "max": max
        });
        if let Some(view) = view {
            accessor["bufferView"] = json!(view);
        }
        self.accessor(accessor)
    }

    /// The document: `primitives` in one mesh on one node placed by `node` (its
    /// translation and scale), `extra` merged in at the top level.
    fn document(&self, primitives: Value, node: Value, extra: Value) -> Value {
        let mut node = node;
        node["mesh"] = json!(0);
        let mut buffers = vec![json!({ "byteLength": self.bin.len().max(4) })];
        if self.fallback_length > 0 {
            buffers.push(json!({
                "byteLength": self.fallback_length,
                "extensions": { EXT: { "fallback": true } }
            }));
        }
        let mut document = json!({
            "asset": { "version": "2.0" },
            "scene": 0,
            "scenes": [{ "nodes": [0] }],
            "nodes": [node],
            "meshes": [{ "primitives": primitives }],
            "buffers": buffers,
            "bufferViews": self.views,
            "accessors": self.accessors,
        });
        for (key, value) in extra.as_object().into_iter().flatten() {
            document[key] = value.clone();
        }
        document
    }

    fn glb(&self, document: &Value) -> Vec<u8> {
        let mut bin = self.bin.clone();
        bin.resize(bin.len().max(4), 0);
        common::glb_from(document, &bin)
    }
}

/// The finest level's triangles of every mesh, in world space (node transforms applied).
fn world_triangles(scene: &GltfScene) -> Vec<[Vec3; 3]> {
    let mut out = Vec::new();
    for (node, world) in scene.nodes.iter().zip(scene.node_worlds()) {
        for &mesh in &node.meshes {
            let mesh = &scene.meshes[mesh];
            for triangle in mesh.levels[0].indices.chunks(3) {
                out.push(std::array::from_fn(|corner| {
                    world.transform_point3(Vec3::from(mesh.positions[triangle[corner] as usize]))
                }));
            }
        }
    }
    out
}

/// Every triangle of `expected` is in `scene` (as a rotation of its corners, each within
/// `tolerance`), and there are no others.
fn assert_triangles(scene: &GltfScene, expected: &[[f32; 3]], indices: &[u32], tolerance: f32) {
    let got = world_triangles(scene);
    assert_eq!(got.len() * 3, indices.len(), "triangle count");
    for triangle in indices.chunks(3) {
        let want: [Vec3; 3] = std::array::from_fn(|corner| Vec3::from(expected[triangle[corner] as usize]));
        let found = got.iter().any(|candidate| {
            (0..3).any(|turn| (0..3).all(|corner| candidate[(corner + turn) % 3].distance(want[corner]) <= tolerance))
        });
        assert!(found, "triangle {want:?} is missing from {got:?}");
    }
}

/// For each vertex of the first mesh, the original vertex at the same place (float
/// positions, so exact), to compare per-vertex attributes despite the processing's order.
fn original_vertex(scene: &GltfScene, vertex: usize) -> usize {
    let position = scene.meshes[0].positions[vertex];
    CUBE.iter().position(|&corner| corner == position).expect("a vertex of the cube")
}

// ---------------------------------------------------------------------------------------
// Captured warnings.

thread_local! {
    static WARNINGS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Keeps each thread's warnings, so a test sees only those of the loads it ran.
struct Capture;

impl log::Log for Capture {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Warn
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            WARNINGS.with(|warnings| warnings.borrow_mut().push(record.args().to_string()));
        }
    }

    fn flush(&self) {}
}

/// The warnings logged on this thread while `run` ran.
fn warnings_of<T>(run: impl FnOnce() -> T) -> (T, Vec<String>) {
    static LOGGER: Capture = Capture;
    // Another test may have installed it already; either way it is this one.
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(log::LevelFilter::Warn);
    WARNINGS.with(|warnings| warnings.borrow_mut().clear());
    let result = run();
    (result, WARNINGS.with(|warnings| warnings.take()))
}

/// The warnings about extensions (the common scene's point primitive warns too).
fn extension_warnings(warnings: Vec<String>) -> Vec<String> {
    warnings.into_iter().filter(|warning| warning.contains("extensions")).collect()
}
