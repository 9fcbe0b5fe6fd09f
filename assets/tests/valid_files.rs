//! Valid files as real pipelines write them load, and give the geometry they encode: a
//! corpus written here in code (JSON plus binary) of quantized attributes of every type
//! `KHR_mesh_quantization` allows, `EXT_meshopt_compression` views of every mode and filter
//! (with fallback buffers), sparse accessors, accessors without a buffer view, textures
//! without a source, animation channels without a node, and optional extensions the
//! importer does not know; a required one it cannot honour stays an error.

mod common;

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

// ---------------------------------------------------------------------------------------
// KHR_mesh_quantization.

const POSITION_TYPES: [Component; 8] = [
    int(BYTE, false),
    int(BYTE, true),
    int(UNSIGNED_BYTE, false),
    int(UNSIGNED_BYTE, true),
    int(SHORT, false),
    int(SHORT, true),
    int(UNSIGNED_SHORT, false),
    int(UNSIGNED_SHORT, true),
];

/// The range of stored values (as the importer reads them) the cube is quantized onto.
fn stored_range(component: Component) -> (f32, f32) {
    match (component.normalized, component.signed, component.size) {
        (true, true, _) => (-1.0, 1.0),
        (true, false, _) => (0.0, 1.0),
        (false, true, 1) => (-100.0, 100.0),
        (false, false, 1) => (0.0, 250.0),
        (false, true, _) => (-30000.0, 30000.0),
        (false, false, _) => (0.0, 60000.0),
    }
}

/// A .glb of the cube with positions of `component`, dequantized by its node's scale and
/// translation as gltfpack writes them; with the quantization step in world units.
fn quantized_cube(component: Component, declare: bool) -> (Vec<u8>, f32) {
    let (low, high) = stored_range(component);
    let scale = 1.0 / (high - low);
    let translation = -0.5 - low * scale;
    let stored: Vec<[f32; 3]> =
        CUBE.iter().map(|corner| corner.map(|axis| low + (axis + 0.5) * (high - low))).collect();
    let read: Vec<[f32; 3]> =
        stored.iter().map(|position| position.map(|axis| component.dequantize(component.quantize(axis)))).collect();
    let mut builder = Builder::default();
    let (bytes, stride) = pack(&stored, component);
    let view = builder.view(&bytes, Some(stride));
    let positions = builder.positions(Some(view), component, &read);
    let indices = builder.view(&u16_bytes(&CUBE_INDICES), None);
    let indices = builder.attribute(indices, int(UNSIGNED_SHORT, false), "SCALAR", 36);
    let extensions = if declare {
        json!({ "extensionsUsed": ["KHR_mesh_quantization"], "extensionsRequired": ["KHR_mesh_quantization"] })
    } else {
        json!({})
    };
    let document = builder.document(
        json!([{ "attributes": { "POSITION": positions }, "indices": indices }]),
        json!({ "translation": [translation, translation, translation], "scale": [scale, scale, scale] }),
        extensions,
    );
    let step = scale / if component.normalized { component.largest() } else { 1.0 };
    (builder.glb(&document), step)
}

#[test]
fn quantized_positions_of_every_type_load_within_a_step_through_the_node_transform() {
    for component in POSITION_TYPES {
        let (file, step) = quantized_cube(component, true);
        let scene = load(&file).unwrap_or_else(|error| panic!("{component:?}: {error}"));
        assert_triangles(&scene, &CUBE, &CUBE_INDICES, step * 0.51 + 1.0e-6);
    }
}

#[test]
fn a_quantized_mesh_spawns_with_its_dequantizing_transform_and_a_matching_lod_bias() {
    let component = int(UNSIGNED_SHORT, false);
    let (file, _) = quantized_cube(component, true);
    let scene = load(&file).unwrap();
    let mut world = hecs::World::new();
    let spawned = scene
        .spawn(&mut world, &mut meshes::MeshLibrary::new(), &mut culling::occlusion::OccluderMeshes::new())
        .unwrap();
    let scale = 1.0 / 60000.0;
    let entity = spawned.drawables[0];
    let transform = *world.get::<&ecs::Transform>(entity).unwrap();
    assert!((transform.scale - Vec3::splat(scale)).abs().max_element() < 1.0e-9, "{transform:?}");
    assert_eq!(transform.translation, Vec3::splat(-0.5));
    let bias = world.get::<&ecs::Lod>(entity).unwrap().bias;
    assert!((bias - scale).abs() < 1.0e-9, "hand-over distances in stored units scale by the node: {bias}");
    let mesh = world.get::<&ecs::Mesh>(entity).unwrap();
    assert_eq!(mesh.bounds.max, Vec3::splat(60000.0), "bounds stay in stored units, placed by the transform");
}

#[test]
fn integer_positions_without_the_extension_are_a_named_error() {
    let (file, _) = quantized_cube(int(SHORT, false), false);
    let error = load(&file).unwrap_err();
    assert!(matches!(error, ImportError::Accessor { accessor: 0, .. }), "{error}");
    assert!(error.to_string().contains("needs KHR_mesh_quantization"), "{error}");
}

/// A .glb of the cube with float positions and the given normals and texture coordinates.
fn cube_with(normals: Option<(Component, &[[f32; 3]])>, uvs: Option<(Component, &[[f32; 2]])>) -> Vec<u8> {
    let mut builder = Builder::default();
    let view = builder.view(&f32_bytes(CUBE.as_flattened()), None);
    let mut attributes = json!({ "POSITION": builder.positions(Some(view), FLOAT, &CUBE) });
    if let Some((component, normals)) = normals {
        let (bytes, stride) = pack(normals, component);
        let view = builder.view(&bytes, Some(stride));
        attributes["NORMAL"] = json!(builder.attribute(view, component, "VEC3", 8));
    }
    if let Some((component, uvs)) = uvs {
        let (bytes, stride) = pack(uvs, component);
        let view = builder.view(&bytes, Some(stride));
        attributes["TEXCOORD_0"] = json!(builder.attribute(view, component, "VEC2", 8));
    }
    let indices = builder.view(&u16_bytes(&CUBE_INDICES), None);
    let indices = builder.attribute(indices, int(UNSIGNED_SHORT, false), "SCALAR", 36);
    let document = builder.document(
        json!([{ "attributes": attributes, "indices": indices }]),
        json!({}),
        json!({ "extensionsUsed": ["KHR_mesh_quantization"], "extensionsRequired": ["KHR_mesh_quantization"] }),
    );
    builder.glb(&document)
}

#[test]
fn quantized_normals_of_every_type_load_as_unit_vectors_near_the_originals() {
    let originals = cube_normals();
    for component in [FLOAT, int(BYTE, true), int(SHORT, true)] {
        let scene = load(&cube_with(Some((component, &originals)), None))
            .unwrap_or_else(|error| panic!("{component:?}: {error}"));
        let mesh = &scene.meshes[0];
        for (vertex, normal) in mesh.normals.iter().enumerate() {
            let normal = Vec3::from(*normal);
            let original = Vec3::from(originals[original_vertex(&scene, vertex)]);
            assert!((normal.length() - 1.0).abs() < 1.0e-5, "{component:?}: {normal} is not unit length");
            assert!(normal.distance(original) < 2.0 / 127.0, "{component:?}: {normal} is not near {original}");
        }
    }
}

#[test]
fn integer_normals_must_be_normalized_signed_ones() {
    let error = load(&cube_with(Some((int(UNSIGNED_BYTE, true), &cube_normals())), None)).unwrap_err();
    assert!(error.to_string().contains("NORMAL cannot be U8 normalized"), "{error}");
}

#[test]
fn texture_coordinates_of_every_type_read_as_the_specification_says() {
    let originals = cube_uvs();
    let types = [
        (FLOAT, 1.0),
        (int(UNSIGNED_BYTE, true), 1.0),
        (int(UNSIGNED_SHORT, true), 1.0),
        (int(BYTE, true), 1.0),
        (int(SHORT, true), 1.0),
        // Unnormalized integers keep their value (a texture transform scales them back).
        (int(BYTE, false), 100.0),
        (int(UNSIGNED_BYTE, false), 200.0),
        (int(SHORT, false), 30000.0),
        (int(UNSIGNED_SHORT, false), 60000.0),
    ];
    for (component, scale) in types {
        let stored: Vec<[f32; 2]> = originals.iter().map(|uv| uv.map(|axis| axis * scale)).collect();
        let scene =
            load(&cube_with(None, Some((component, &stored)))).unwrap_or_else(|error| panic!("{component:?}: {error}"));
        for (vertex, uv) in scene.meshes[0].uvs.iter().enumerate() {
            let original = stored[original_vertex(&scene, vertex)];
            let expected = original.map(|axis| {
                if component.code == FLOAT.code {
                    axis
                } else {
                    component.dequantize(component.quantize(axis))
                }
            });
            assert_eq!(*uv, expected, "{component:?}: vertex {vertex}");
            let step = if component.normalized { 1.0 / component.largest() } else { 0.5 };
            assert!((uv[0] - original[0]).abs() <= step && (uv[1] - original[1]).abs() <= step, "{component:?}");
        }
    }
}

/// The cube with unnormalized u16 texture coordinates (`uv * 60000`) and a base colour
/// texture whose `KHR_texture_transform` is `transform`.
fn cube_with_uv_transform(transform: Value) -> Vec<u8> {
    let stored: Vec<[f32; 2]> = cube_uvs().iter().map(|uv| uv.map(|axis| axis * 60000.0)).collect();
    let file = cube_with(None, Some((int(UNSIGNED_SHORT, false), &stored)));
    // Rewrite the JSON chunk with a material; the binary chunk stays.
    let json_length = u32::from_le_bytes(file[12..16].try_into().unwrap()) as usize;
    let mut document: Value = serde_json::from_slice(&file[20..20 + json_length]).unwrap();
    let bin = &file[20 + json_length + 8..];
    document["extensionsUsed"] = json!(["KHR_mesh_quantization", "KHR_texture_transform"]);
    document["images"] = json!([{ "uri": "colour.png" }]);
    document["textures"] = json!([{ "source": 0 }]);
    document["materials"] = json!([{ "pbrMetallicRoughness": { "baseColorTexture": {
        "index": 0, "extensions": { "KHR_texture_transform": transform } } } }]);
    document["meshes"][0]["primitives"][0]["material"] = json!(0);
    common::glb_from(&document, bin)
}

#[test]
fn the_base_colour_texture_transform_dequantizes_texture_coordinates() {
    let scale = 1.0 / 60000.0;
    let scene = load(&cube_with_uv_transform(json!({ "scale": [scale, scale] }))).unwrap();
    for (vertex, uv) in scene.meshes[0].uvs.iter().enumerate() {
        let original = cube_uvs()[original_vertex(&scene, vertex)];
        assert!((uv[0] - original[0]).abs() < 1.0e-6 && (uv[1] - original[1]).abs() < 1.0e-6, "{uv:?} {original:?}");
    }
    // Offset, rotation (counter-clockwise, after the scale) and scale, as the extension's
    // matrix has them.
    let angle = std::f32::consts::FRAC_PI_2;
    let transform = json!({ "offset": [0.5, 0.25], "rotation": angle, "scale": [scale, scale * 2.0] });
    let scene = load(&cube_with_uv_transform(transform)).unwrap();
    for (vertex, uv) in scene.meshes[0].uvs.iter().enumerate() {
        let [u, v] = cube_uvs()[original_vertex(&scene, vertex)];
        let (x, y) = (u, v * 2.0);
        let expected = [0.5 + angle.cos() * x - angle.sin() * y, 0.25 + angle.sin() * x + angle.cos() * y];
        assert!((uv[0] - expected[0]).abs() < 1.0e-5 && (uv[1] - expected[1]).abs() < 1.0e-5, "{uv:?} {expected:?}");
    }
    // A transform for another coordinate set leaves TEXCOORD_0 as stored.
    let scene = load(&cube_with_uv_transform(json!({ "scale": [scale, scale], "texCoord": 1 }))).unwrap();
    assert!(scene.meshes[0].uvs.iter().any(|uv| uv[0] == 60000.0));
}

// ---------------------------------------------------------------------------------------
// EXT_meshopt_compression.

/// The grid quantized positions of [`packed_cube`] lie on.
const GRID: f32 = 16383.0;

/// The layout of one stream: `count` elements of `stride` bytes, stored in `mode` with
/// `filter` when compressed; vertex data carries its stride on the parent view too.
#[derive(Clone, Copy)]
struct Stream {
    stride: usize,
    count: usize,
    mode: &'static str,
    filter: &'static str,
    vertex_data: bool,
}

impl Stream {
    /// Vertex attributes (`ATTRIBUTES` with `filter`).
    fn vertices(stride: usize, count: usize, filter: &'static str) -> Self {
        Stream { stride, count, mode: "ATTRIBUTES", filter, vertex_data: true }
    }

    /// Animation data (`ATTRIBUTES` with `filter`, no stride on the parent view).
    fn keyframes(stride: usize, count: usize, filter: &'static str) -> Self {
        Stream { stride, count, mode: "ATTRIBUTES", filter, vertex_data: false }
    }

    /// Indices in `mode` (`TRIANGLES` or `INDICES`).
    fn indices(stride: usize, count: usize, mode: &'static str) -> Self {
        Stream { stride, count, mode, filter: "NONE", vertex_data: false }
    }
}

/// Writes each stream of [`packed_cube`] into a plain view, or compressed into a view of
/// the fallback buffer.
struct Packer {
    builder: Builder,
    /// The compression extension, `None` for plain views.
    compress: Option<&'static str>,
}

impl Packer {
    /// The vertex codec version: `EXT_meshopt_compression` streams are version 0; its
    /// successor takes version 1 too.
    fn version(&self) -> i32 {
        if self.compress == Some(KHR) {
            1
        } else {
            0
        }
    }

    fn encode<T>(&self, elements: &[T]) -> Vec<u8> {
        encode_vertex_buffer_level(elements, 2, Some(self.version())).unwrap()
    }

    /// A view of `stream`'s elements: `plain`, or `encoded` in the stream's mode and filter.
    fn add(&mut self, plain: &[u8], encoded: Vec<u8>, stream: Stream) -> usize {
        let Stream { stride, count, mode, filter, vertex_data } = stream;
        match self.compress {
            Some(extension) => {
                self.builder.compressed(&encoded, stride, count, Compression { extension, mode, filter }, vertex_data)
            }
            None => self.builder.view(plain, vertex_data.then_some(stride)),
        }
    }

    /// Unnormalized u16 positions on [`GRID`], padded to 8 bytes.
    fn positions(&mut self) -> usize {
        let stored: Vec<[u16; 4]> = CUBE
            .iter()
            .map(|corner| [0, 1, 2, 3].map(|axis| if axis < 3 { ((corner[axis] + 0.5) * GRID) as u16 } else { 0 }))
            .collect();
        let view = self.add(&bytes_of(&stored, u16x4_bytes), self.encode(&stored), Stream::vertices(8, 8, "NONE"));
        let read: Vec<[f32; 3]> = stored.iter().map(|vertex| [0, 1, 2].map(|axis| f32::from(vertex[axis]))).collect();
        self.builder.positions(Some(view), int(UNSIGNED_SHORT, false), &read)
    }

    /// Octahedral normals in normalized bytes.
    fn normals(&mut self) -> usize {
        let normals: Vec<[f32; 4]> = cube_normals().iter().map(|n| [n[0], n[1], n[2], 0.0]).collect();
        let octahedral = encode_filter_oct::<i8>(&normals, 8);
        let mut decoded = octahedral.clone();
        decode_filter_oct(&mut decoded);
        let plain = bytes_of(&decoded, |normal| normal.map(|c| c as u8));
        let view = self.add(&plain, self.encode(&octahedral), Stream::vertices(4, 8, "OCTAHEDRAL"));
        self.builder.attribute(view, int(BYTE, true), "VEC3", 8)
    }

    /// Float texture coordinates through the exponential filter.
    fn uvs(&mut self) -> usize {
        let exponential = encode_filter_exp::<2>(&cube_uvs(), 15, EncodeExpMode::Separate);
        let mut decoded = exponential.clone();
        decode_filter_exp(&mut decoded);
        let plain = bytes_of(decoded.as_flattened(), |word| word.to_le_bytes());
        let view = self.add(&plain, self.encode(&exponential), Stream::vertices(8, 8, "EXPONENTIAL"));
        self.builder.attribute(view, FLOAT, "VEC2", 8)
    }

    /// u16 indices in the triangle codec.
    fn triangles(&mut self) -> usize {
        let encoded = encode_index_buffer(&CUBE_INDICES, 8).unwrap();
        // The triangle codec may start a triangle at another corner; the plain file holds
        // what it gives back.
        let rotated = decode_index_buffer::<u16>(&encoded, 36).unwrap();
        let plain = bytes_of(&rotated, |index| index.to_le_bytes());
        let view = self.add(&plain, encoded, Stream::indices(2, 36, "TRIANGLES"));
        self.builder.attribute(view, int(UNSIGNED_SHORT, false), "SCALAR", 36)
    }

    /// u32 indices in the index-sequence codec.
    fn index_sequence(&mut self) -> usize {
        let encoded = encode_index_sequence(&CUBE_INDICES, 8).unwrap();
        let plain = bytes_of(&CUBE_INDICES, |index| index.to_le_bytes());
        let view = self.add(&plain, encoded, Stream::indices(4, 36, "INDICES"));
        self.builder.accessor(json!({ "bufferView": view, "componentType": 5125, "count": 36, "type": "SCALAR" }))
    }

    /// An animation of node 0's rotation: float times, quaternion-filtered rotations.
    fn animation(&mut self) -> Value {
        let times = [0.0_f32, 0.5, 1.0, 1.5];
        let view = self.add(&f32_bytes(&times), self.encode(&times), Stream::keyframes(4, 4, "NONE"));
        let input = self.builder.accessor(json!({
            "bufferView": view, "componentType": 5126, "count": 4, "type": "SCALAR", "min": [0.0], "max": [1.5]
        }));
        let rotations: Vec<[f32; 4]> =
            (0..4).map(|step| glam::Quat::from_rotation_y(step as f32 * 0.5).to_array()).collect();
        let quaternions = encode_filter_quat(&rotations, 12);
        let mut decoded = quaternions.clone();
        decode_filter_quat(&mut decoded);
        let plain = bytes_of(&decoded, |rotation| u16x4_bytes(&rotation.map(|c| c as u16)));
        let view = self.add(&plain, self.encode(&quaternions), Stream::keyframes(8, 4, "QUATERNION"));
        let output = self.builder.attribute(view, int(SHORT, true), "VEC4", 4);
        json!([{
            "samplers": [{ "input": input, "output": output }],
            "channels": [{ "sampler": 0, "target": { "node": 0, "path": "rotation" } }]
        }])
    }
}

/// The cube as gltfpack stores it: unnormalized u16 positions (dequantized by the node),
/// octahedral i8 normals, exponential float texture coordinates, triangle-coded u16
/// indices, and a second primitive with index-sequence u32 indices; an animation whose
/// rotations use the quaternion filter. `compress`: in compressed views of that extension
/// over a fallback buffer; `None`: the same decoded bytes in plain views. With the
/// positions' quantization step.
fn packed_cube(compress: Option<&'static str>) -> (Value, Builder, f32) {
    let mut packer = Packer { builder: Builder::default(), compress };
    let attributes = json!({ "POSITION": packer.positions(), "NORMAL": packer.normals(), "TEXCOORD_0": packer.uvs() });
    let (triangles, sequence, animations) = (packer.triangles(), packer.index_sequence(), packer.animation());
    let used: Vec<&str> = ["KHR_mesh_quantization"].into_iter().chain(compress).collect();
    let step = 1.0 / GRID;
    let document = packer.builder.document(
        json!([
            { "attributes": attributes, "indices": triangles },
            { "attributes": attributes, "indices": sequence }
        ]),
        json!({ "translation": [-0.5, -0.5, -0.5], "scale": [step, step, step] }),
        json!({ "extensionsUsed": used, "extensionsRequired": used, "animations": animations }),
    );
    (document, packer.builder, step)
}

fn u16x4_bytes(vertex: &[u16; 4]) -> [u8; 8] {
    let mut out = [0; 8];
    for (axis, value) in vertex.iter().enumerate() {
        out[axis * 2..axis * 2 + 2].copy_from_slice(&value.to_le_bytes());
    }
    out
}

#[test]
fn meshopt_compressed_views_of_every_mode_and_filter_decode_to_the_plain_data() {
    let (document, builder, step) = packed_cube(None);
    let plain = load(&builder.glb(&document)).expect("the plain file loads");
    for extension in [EXT, KHR] {
        let (document, builder, _) = packed_cube(Some(extension));
        assert!(builder.fallback_length > 0);
        let scene = load(&builder.glb(&document)).unwrap_or_else(|error| panic!("{extension}: {error}"));
        assert_eq!(scene.meshes, plain.meshes, "{extension}: decoding gives the plain bytes");
        assert_eq!(scene.meshes.len(), 2);
        assert_triangles(&scene, &CUBE, &[CUBE_INDICES, CUBE_INDICES].concat(), step * 0.51);
        for (vertex, normal) in scene.meshes[0].normals.iter().enumerate() {
            let original = Vec3::from(cube_normals()[original_vertex_packed(&scene, vertex, step)]);
            assert!(Vec3::from(*normal).distance(original) < 0.03, "{normal:?} is not near {original}");
        }
    }
}

/// As [`original_vertex`] for the quantized cube: the corner within a step.
fn original_vertex_packed(scene: &GltfScene, vertex: usize, step: f32) -> usize {
    let stored = Vec3::from(scene.meshes[0].positions[vertex]);
    let world = stored * step - Vec3::splat(0.5);
    CUBE.iter().position(|&corner| Vec3::from(corner).distance(world) < step).expect("a vertex of the cube")
}

#[test]
fn a_fallback_buffer_in_a_gltf_with_a_data_uri_loads() {
    let (mut document, builder, _) = packed_cube(Some(EXT));
    document["buffers"][0]["uri"] =
        json!(format!("data:application/octet-stream;base64,{}", common::base64(&builder.bin)));
    let scene = load(&serde_json::to_vec(&document).unwrap()).expect("the .gltf loads");
    assert_eq!(scene.meshes.len(), 2);
    // Without the fallback tag, a buffer without a URI past the first is a placeholder too.
    document["buffers"][1] = json!({ "byteLength": builder.fallback_length });
    assert!(load(&serde_json::to_vec(&document).unwrap()).is_ok());
}

/// Buffers without data that nothing reads: glTF allows a buffer without `uri` that no
/// accessor or image uses, in a .gltf and in a .glb without BIN chunk (the Khronos validator
/// accepts both); only a buffer something reads must have data.
#[test]
fn buffers_without_data_that_nothing_reads_load() {
    let document = common::document_with_unused_first_buffer();
    let gltf = load(&serde_json::to_vec(&document).unwrap()).expect("the .gltf with an unused uri-less buffer loads");
    assert_eq!((gltf.meshes.len(), gltf.triangle_count()), (2, 14));
    let glb = load(&common::glb_without_bin(&document)).expect("the .glb without BIN chunk loads");
    assert_eq!((glb.meshes.len(), glb.triangle_count()), (2, 14));
    // The unused buffer past the first, and a .glb without BIN chunk whose one buffer no
    // view uses.
    let mut document = document.clone();
    document["buffers"][0]["uri"] = document["buffers"][1]["uri"].clone();
    document["buffers"][0]["byteLength"] = document["buffers"][1]["byteLength"].clone();
    document["buffers"][1] = json!({ "byteLength": 16 });
    for view in document["bufferViews"].as_array_mut().unwrap() {
        view["buffer"] = json!(0);
    }
    let scene = load(&serde_json::to_vec(&document).unwrap()).expect("an unused uri-less second buffer loads");
    assert_eq!(scene.meshes.len(), 2);
    let empty = json!({
        "asset": { "version": "2.0" },
        "scenes": [{ "nodes": [0] }],
        "nodes": [{ "name": "lonely" }],
        "buffers": [{ "byteLength": 12 }],
        "bufferViews": [{ "buffer": 0, "byteLength": 12 }]
    });
    let scene = load(&common::glb_without_bin(&empty)).expect("a .glb without BIN chunk and no used buffer loads");
    assert_eq!((scene.meshes.len(), scene.nodes.len()), (0, 1));
}

/// An edit of a compressed view's extension object.
type Change = fn(&mut Value);

#[test]
fn malformed_compressed_data_is_a_named_error() {
    let (document, builder, _) = packed_cube(Some(EXT));
    let cases: [(&str, Change); 5] = [
        ("cut short", |view| view["byteLength"] = json!(view["byteLength"].as_u64().unwrap() - 8)),
        ("a wrong count", |view| view["count"] = json!(9)),
        ("a stride not a multiple of 4", |view| view["byteStride"] = json!(6)),
        ("an unknown mode", |view| view["mode"] = json!("DELTA")),
        ("past its buffer", |view| view["byteOffset"] = json!(1 << 20)),
    ];
    for (what, change) in cases {
        let mut document = document.clone();
        change(&mut document["bufferViews"][0]["extensions"][EXT]);
        let error = load(&builder.glb(&document)).unwrap_err();
        assert!(matches!(error, ImportError::Compression { view: 0, .. } | ImportError::Json(_)), "{what}: {error}");
    }
    let mut corrupt = builder.bin.clone();
    corrupt[0] = 0x55;
    let error = load(&common::glb_from(&document, &corrupt)).unwrap_err();
    assert!(matches!(error, ImportError::Compression { view: 0, .. }), "a bad header byte: {error}");
    // A plain view may not lie in the placeholder.
    let mut document = document.clone();
    document["bufferViews"][0]["extensions"] = json!({});
    let error = load(&builder.glb(&document)).unwrap_err();
    assert!(error.to_string().contains("placeholder"), "{error}");
}

#[test]
fn every_corruption_of_the_compressed_bytes_fails_or_loads_without_panic() {
    let (document, builder, _) = packed_cube(Some(EXT));
    let compressed_end = builder.bin.len();
    let mut loaded = 0;
    for at in 0..compressed_end {
        for flip in [0x01_u8, 0x80, 0xff] {
            let mut bin = builder.bin.clone();
            bin[at] ^= flip;
            if load(&common::glb_from(&document, &bin)).is_ok() {
                loaded += 1;
            }
        }
    }
    assert!(loaded < compressed_end * 3, "corruption is noticed somewhere");
}

#[test]
fn every_field_of_a_compressed_or_sparse_file_removed_or_wrong_loads_or_fails_without_panic() {
    let (document, builder, _) = packed_cube(Some(EXT));
    let mut outcomes = [0, 0];
    let variants = common::for_each_variant(&document, |variant| {
        outcomes[usize::from(load(&builder.glb(variant)).is_ok())] += 1;
    });
    assert!(variants > 1000, "the corpus walks the whole document ({variants} variants)");
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{} refused, {} loaded", outcomes[0], outcomes[1]);
    let (document, builder) = sparse_quad_document(&[1, 2, 3]);
    let variants = common::for_each_variant(&document, |variant| {
        let _ = load(&builder.glb(variant));
    });
    assert!(variants > 200, "the sparse quad's corpus ({variants} variants)");
}

// ---------------------------------------------------------------------------------------
// Sparse accessors, accessors without views.

/// A quad whose positions have no buffer view: zeros, with vertices 1 to 3 given sparsely.
fn sparse_quad(sparse_indices: &[u32]) -> Vec<u8> {
    let (document, builder) = sparse_quad_document(sparse_indices);
    builder.glb(&document)
}

/// The document of [`sparse_quad`] and its builder (holding the binary data).
fn sparse_quad_document(sparse_indices: &[u32]) -> (Value, Builder) {
    let mut builder = Builder::default();
    let values = f32_bytes(&[1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0]);
    let indices_view = builder.view(&u16_bytes(sparse_indices), None);
    let values_view = builder.view(&values, None);
    let positions = builder.accessor(json!({
        "componentType": 5126, "count": 4, "type": "VEC3", "min": [0.0, 0.0, 0.0], "max": [1.0, 1.0, 0.0],
        "sparse": {
            "count": 3,
            "indices": { "bufferView": indices_view, "componentType": 5123 },
            "values": { "bufferView": values_view }
        }
    }));
    let triangles = builder.view(&u16_bytes(&[0, 1, 2, 0, 2, 3]), None);
    let triangles = builder.attribute(triangles, int(UNSIGNED_SHORT, false), "SCALAR", 6);
    let document = builder.document(
        json!([{ "attributes": { "POSITION": positions }, "indices": triangles }]),
        json!({}),
        json!({}),
    );
    (document, builder)
}

#[test]
fn a_sparse_accessor_without_a_view_carries_its_values_over_zeros() {
    let scene = load(&sparse_quad(&[1, 2, 3])).unwrap();
    let quad = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]];
    assert_triangles(&scene, &quad, &[0, 1, 2, 0, 2, 3], 0.0);
}

#[test]
fn sparse_indices_out_of_order_or_range_are_named() {
    for bad in [[2, 1, 3], [1, 2, 4], [1, 1, 2]] {
        let error = load(&sparse_quad(&bad)).unwrap_err();
        assert!(matches!(error, ImportError::Accessor { accessor: 0, .. }), "{bad:?}: {error}");
        assert!(error.to_string().contains("sparse index"), "{error}");
    }
}

#[test]
fn sparse_values_replace_dense_ones_and_a_viewless_attribute_reads_as_zeros() {
    let mut builder = Builder::default();
    let mut moved = CUBE;
    moved[6] = [0.75, 0.75, 0.75];
    let view = builder.view(&f32_bytes(CUBE.as_flattened()), None);
    let indices_view = builder.view(&[6, 0, 0, 0], None);
    let values_view = builder.view(&f32_bytes(&moved[6]), None);
    let positions = builder.accessor(json!({
        "bufferView": view, "componentType": 5126, "count": 8, "type": "VEC3",
        "min": [-0.5, -0.5, -0.5], "max": [0.75, 0.75, 0.75],
        "sparse": {
            "count": 1,
            "indices": { "bufferView": indices_view, "componentType": 5121 },
            "values": { "bufferView": values_view }
        }
    }));
    let uvs = builder.accessor(json!({ "componentType": 5126, "count": 8, "type": "VEC2" }));
    let indices = builder.view(&u16_bytes(&CUBE_INDICES), None);
    let indices = builder.attribute(indices, int(UNSIGNED_SHORT, false), "SCALAR", 36);
    let document = builder.document(
        json!([{ "attributes": { "POSITION": positions, "TEXCOORD_0": uvs }, "indices": indices }]),
        json!({}),
        json!({}),
    );
    let scene = load(&builder.glb(&document)).unwrap();
    assert_triangles(&scene, &moved, &CUBE_INDICES, 0.0);
    assert_eq!(scene.meshes[0].uvs, vec![[0.0, 0.0]; 8]);
}

// ---------------------------------------------------------------------------------------
// What the importer does not read must not stop a load.

#[test]
fn textures_without_source_texture_transforms_and_nodeless_channels_load() {
    let mut document = common::document(json!({ "byteLength": 228 }));
    document["extensionsUsed"] = json!(["KHR_texture_basisu", "KHR_texture_transform", "KHR_animation_pointer"]);
    document["images"] = json!([{ "uri": "colour.ktx2" }]);
    document["textures"] = json!([{ "extensions": { "KHR_texture_basisu": { "source": 0 } } }]);
    document["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"] = json!({
        "index": 0,
        "extensions": { "KHR_texture_transform": { "offset": [0.5, 0.0], "scale": [0.5, 0.5], "texCoord": 0 } }
    });
    document["accessors"].as_array_mut().unwrap().extend([
        json!({ "bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [-0.5], "max": [-0.5] }),
        json!({ "bufferView": 0, "componentType": 5126, "count": 2, "type": "VEC3" }),
    ]);
    document["animations"] = json!([{
        "samplers": [{ "input": 4, "output": 5 }],
        "channels": [{ "sampler": 0, "target": { "path": "pointer",
            "extensions": { "KHR_animation_pointer": { "pointer": "/nodes/0/scale" } } } }]
    }]);
    document["meshes"][0]["primitives"][0]["attributes"]["_BATCHID"] = json!(0);
    let (scene, warnings) = warnings_of(|| load(&common::glb_from(&document, &common::buffer())));
    let scene = scene.unwrap();
    assert_eq!(scene.meshes.len(), 2);
    let warnings = extension_warnings(warnings);
    assert_eq!(warnings.len(), 1, "one warning names the ignored extensions: {warnings:?}");
    assert!(warnings[0].contains("KHR_texture_basisu") && warnings[0].contains("KHR_animation_pointer"));
}

#[test]
fn an_unknown_optional_extension_loads_with_one_warning() {
    let mut document = common::document(json!({ "byteLength": 228 }));
    document["extensionsUsed"] = json!(["EXT_made_up", "KHR_mesh_quantization"]);
    document["nodes"][1]["extensions"] = json!({ "EXT_made_up": { "anything": [1, 2, 3] } });
    let (scene, warnings) = warnings_of(|| load(&common::glb_from(&document, &common::buffer())));
    assert_eq!(scene.unwrap().triangle_count(), 14);
    let warnings = extension_warnings(warnings);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("EXT_made_up") && !warnings[0].contains("KHR_mesh_quantization"));
}

#[test]
fn a_required_extension_the_importer_cannot_honour_is_unsupported() {
    let mut document = common::document(json!({ "byteLength": 228 }));
    document["extensionsUsed"] = json!(["KHR_draco_mesh_compression", "KHR_mesh_quantization"]);
    document["extensionsRequired"] = json!(["KHR_mesh_quantization", "KHR_draco_mesh_compression"]);
    let error = load(&common::glb_from(&document, &common::buffer())).unwrap_err();
    assert_eq!(error, ImportError::Unsupported(String::from("the file requires extension KHR_draco_mesh_compression")));
    document["extensionsRequired"] = json!(["KHR_mesh_quantization"]);
    assert!(load(&common::glb_from(&document, &common::buffer())).is_ok(), "the honoured one alone loads");
}

// ---------------------------------------------------------------------------------------
// Materials and base-colour textures.

/// A PNG (or JPEG) of `width` x `height` texels from `texel(x, y)`.
fn encoded_image(width: u32, height: u32, format: image::ImageFormat, texel: impl Fn(u32, u32) -> [u8; 4]) -> Vec<u8> {
    let picture = image::RgbaImage::from_fn(width, height, |x, y| image::Rgba(texel(x, y)));
    let mut bytes = std::io::Cursor::new(Vec::new());
    match format {
        image::ImageFormat::Jpeg => image::DynamicImage::ImageRgba8(picture).to_rgb8().write_to(&mut bytes, format),
        _ => picture.write_to(&mut bytes, format),
    }
    .expect("encodes");
    bytes.into_inner()
}

/// The textured cube with `materials`, `textures` and `samplers` as given and `images` stored
/// in buffer views of the binary chunk (their mime types given).
fn textured_cube(materials: Value, textures: Value, samplers: Value, images: &[(&[u8], &str)]) -> Vec<u8> {
    let file = cube_with(None, Some((FLOAT, &cube_uvs())));
    let json_length = u32::from_le_bytes(file[12..16].try_into().unwrap()) as usize;
    let mut document: Value = serde_json::from_slice(&file[20..20 + json_length]).unwrap();
    let mut bin = file[20 + json_length + 8..].to_vec();
    let mut image_list = Vec::new();
    for (bytes, mime) in images {
        let view = document["bufferViews"].as_array().unwrap().len();
        document["bufferViews"]
            .as_array_mut()
            .unwrap()
            .push(json!({ "buffer": 0, "byteOffset": bin.len(), "byteLength": bytes.len() }));
        bin.extend_from_slice(bytes);
        bin.resize(bin.len().next_multiple_of(4), 0);
        image_list.push(json!({ "bufferView": view, "mimeType": mime }));
    }
    document["buffers"][0]["byteLength"] = json!(bin.len());
    document["images"] = json!(image_list);
    document["textures"] = textures;
    document["samplers"] = samplers;
    document["materials"] = materials;
    document["meshes"][0]["primitives"][0]["material"] = json!(0);
    common::glb_from(&document, &bin)
}

#[test]
fn materials_read_factor_texture_sampler_alpha_mode_and_sidedness() {
    let checker = encoded_image(8, 4, image::ImageFormat::Png, |x, y| {
        if (x + y) % 2 == 0 {
            [255, 255, 255, 255]
        } else {
            [0, 0, 0, 0]
        }
    });
    let materials = json!([{
        "name": "leaves",
        "pbrMetallicRoughness": { "baseColorFactor": [0.5, 1.0, 0.25, 1.0], "baseColorTexture": { "index": 0 } },
        "alphaMode": "MASK", "alphaCutoff": 0.3, "doubleSided": true
    }]);
    let samplers = json!([{ "wrapS": 33071, "wrapT": 33648, "magFilter": 9728, "minFilter": 9729 }]);
    let file = textured_cube(materials, json!([{ "source": 0, "sampler": 0 }]), samplers, &[(&checker, "image/png")]);
    let scene = load(&file).unwrap();
    let material = scene.material_of(0);
    assert_eq!(material.name.as_deref(), Some("leaves"));
    assert_eq!(material.base_color, [0.5, 1.0, 0.25, 1.0]);
    assert_eq!(material.alpha, assets::AlphaMode::Mask { cutoff: 0.3 });
    assert!(material.double_sided && material.alpha.lets_light_through());
    let texture = material.base_color_texture.expect("decoded");
    let sampler = assets::TextureSampler {
        wrap_u: assets::Wrap::ClampToEdge,
        wrap_v: assets::Wrap::MirroredRepeat,
        linear_mag: false,
        linear_min: true,
        mipmaps: false,
    };
    assert_eq!(texture.sampler, sampler);
    let image = &scene.images[texture.image];
    assert_eq!((image.width, image.height, image.mips.len()), (8, 4, 4), "8x4, 4x2, 2x1, 1x1");
    assert_eq!(&image.mips[0][..8], &[255, 255, 255, 255, 0, 0, 0, 0], "texels as stored, RGBA");
    assert_eq!(image.mips[3][3], 128, "half the texels are opaque");
    assert_eq!(scene.image_bytes(), (32 + 8 + 2 + 1) * 4);
    // The last material is glTF's default, for primitives that name none.
    assert_eq!(scene.material_list.last(), Some(&assets::GltfMaterial::default()));
}

#[test]
fn jpeg_and_shared_images_decode_once_and_blend_is_read() {
    let jpeg = encoded_image(16, 16, image::ImageFormat::Jpeg, |_, _| [200, 100, 50, 255]);
    let materials = json!([
        { "pbrMetallicRoughness": { "baseColorTexture": { "index": 0 } }, "alphaMode": "BLEND" },
        { "pbrMetallicRoughness": { "baseColorTexture": { "index": 1 } } }
    ]);
    let textures = json!([{ "source": 0 }, { "source": 0, "sampler": 0 }]);
    let file = textured_cube(materials, textures, json!([{}]), &[(&jpeg, "image/jpeg")]);
    let scene = load(&file).unwrap();
    assert_eq!(scene.images.len(), 1, "one image decoded for two textures");
    let texel = &scene.images[0].mips[0][..4];
    assert!(texel[0].abs_diff(200) <= 4 && texel[1].abs_diff(100) <= 4 && texel[2].abs_diff(50) <= 4, "{texel:?}");
    assert_eq!(scene.material_of(0).alpha, assets::AlphaMode::Blend);
    assert_eq!(scene.material_list[1].base_color_texture.map(|texture| texture.image), Some(0));
}

#[test]
fn undecodable_images_fall_back_to_the_factor_with_a_warning() {
    let materials = json!([{ "pbrMetallicRoughness": { "baseColorFactor": [0.2, 0.4, 0.6, 1.0], "baseColorTexture": { "index": 0 } } }]);
    // A broken PNG, then a texture whose image an extension would supply (no source).
    let file =
        textured_cube(materials.clone(), json!([{ "source": 0 }]), json!([]), &[(b"\x89PNG broken", "image/png")]);
    let (scene, warnings) = warnings_of(|| load(&file));
    let scene = scene.expect("a broken image is not a broken file");
    assert!(scene.images.is_empty() && scene.material_of(0).base_color_texture.is_none());
    assert_eq!(scene.material_of(0).base_color, [0.2, 0.4, 0.6, 1.0]);
    assert!(warnings.iter().any(|warning| warning.contains("images[0]") && warning.contains("decode")), "{warnings:?}");
    let file = textured_cube(materials, json!([{}]), json!([]), &[]);
    let (scene, warnings) = warnings_of(|| load(&file));
    assert!(scene.expect("loads").material_of(0).base_color_texture.is_none());
    assert!(warnings.iter().any(|warning| warning.contains("no image the engine can decode")), "{warnings:?}");
}

#[test]
fn masked_and_blended_meshes_are_never_occluders() {
    let occluders_with = |mode: &str| {
        let materials = json!([{ "alphaMode": mode }]);
        let scene = load(&textured_cube(materials, json!([]), json!([]), &[])).unwrap();
        let mut world = hecs::World::new();
        let mut library = meshes::MeshLibrary::new();
        let mut occluders = culling::occlusion::OccluderMeshes::new();
        scene.spawn(&mut world, &mut library, &mut occluders).unwrap().occluders
    };
    assert_eq!(occluders_with("OPAQUE"), 1, "the closed cube occludes");
    assert_eq!(occluders_with("MASK"), 0, "its holes let what is behind show");
    assert_eq!(occluders_with("BLEND"), 0);
}
