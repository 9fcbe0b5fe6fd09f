//! `EXT_meshopt_compression` (and `KHR_meshopt_compression`): views of every mode and filter,
//! fallback buffers, and malformed or corrupted compressed data.

use super::sparse::sparse_quad_document;
use super::*;

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
