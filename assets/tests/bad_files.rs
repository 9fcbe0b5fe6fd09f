//! Bad glTF files get a clear error, never a panic, a hang or a wrong scene: each defect of
//! the issue in a file the test writes, then a validator-style corpus (every field of a good
//! file removed or made wrong in turn, every truncation of a .glb).

mod common;

use assets::{load_gltf, load_gltf_bytes, ImportError, MeshError, ProcessOptions};
use serde_json::{json, Value};

fn load(document: &Value) -> Result<assets::GltfScene, ImportError> {
    let data = common::buffer();
    load_gltf_bytes(&common::glb_from(document, &data), None, &ProcessOptions::default())
}

fn good() -> Value {
    common::document(json!({ "byteLength": 228 }))
}

#[test]
fn a_truncated_glb_is_named() {
    let bytes = common::glb();
    let error = load_gltf_bytes(&bytes[..bytes.len() - 10], None, &ProcessOptions::default()).unwrap_err();
    assert!(matches!(error, ImportError::Glb(_)), "{error}");
    assert!(error.to_string().contains("truncated"), "{error}");
}

#[test]
fn a_missing_external_buffer_is_named() {
    let folder = common::scratch("missing");
    let document = common::document(json!({ "byteLength": 228, "uri": "gone.bin" }));
    let path = folder.join("scene.gltf");
    std::fs::write(&path, serde_json::to_vec(&document).unwrap()).unwrap();
    let error = load_gltf(&path, &ProcessOptions::default()).unwrap_err();
    assert!(matches!(error, ImportError::Buffer { buffer: 0, .. }), "{error}");
    assert!(error.to_string().contains("gone.bin") && error.to_string().contains("missing"), "{error}");
    std::fs::remove_dir_all(&folder).unwrap();
}

/// A buffer something reads must have data: one without a URI in a .gltf, in a .glb without
/// BIN chunk, or past the first (never the BIN chunk) is an error naming the buffer and its
/// reader.
#[test]
fn a_used_buffer_without_data_is_named() {
    let document = good();
    let cases = [
        ("a .gltf", serde_json::to_vec(&document).unwrap(), 0, "no BIN chunk"),
        ("a .glb without BIN chunk", common::glb_without_bin(&document), 0, "no BIN chunk"),
    ];
    let mut second = common::document_with_unused_first_buffer();
    second["buffers"] = json!([second["buffers"][1].clone(), { "byteLength": 228 }]);
    for view in second["bufferViews"].as_array_mut().unwrap() {
        view["buffer"] = json!(0);
    }
    second["bufferViews"][2]["buffer"] = json!(1);
    let cases =
        cases.into_iter().chain([("a second buffer", serde_json::to_vec(&second).unwrap(), 1, "not the first buffer")]);
    for (what, bytes, buffer, lacks) in cases {
        let error = load_gltf_bytes(&bytes, None, &ProcessOptions::default()).unwrap_err();
        assert!(matches!(error, ImportError::Buffer { buffer: index, .. } if index == buffer), "{what}: {error}");
        let message = error.to_string();
        assert!(message.starts_with(&format!("buffer {buffer}: has no data")), "{what}: {message}");
        assert!(message.contains(lacks) && message.contains("accessor"), "{what}: {message}");
    }
    // An image reads its buffer too.
    let mut document = common::document_with_unused_first_buffer();
    document["bufferViews"].as_array_mut().unwrap().push(json!({ "buffer": 0, "byteLength": 8 }));
    document["images"] = json!([{ "bufferView": 4, "mimeType": "image/png" }]);
    let error = load_gltf_bytes(&serde_json::to_vec(&document).unwrap(), None, &ProcessOptions::default()).unwrap_err();
    assert!(error.to_string().contains("buffer 0: has no data") && error.to_string().contains("image 0"), "{error}");
}

#[test]
fn an_accessor_out_of_range_is_named() {
    let mut document = good();
    document["accessors"][0]["count"] = json!(9);
    let error = load(&document).unwrap_err();
    assert!(matches!(error, ImportError::Accessor { accessor: 0, .. }), "{error}");
    assert!(error.to_string().contains("do not fit"), "{error}");
    let mut document = good();
    document["bufferViews"][3]["byteLength"] = json!(100);
    assert!(matches!(load(&document).unwrap_err(), ImportError::Accessor { accessor: 3, .. }), "view past the buffer");
}

#[test]
fn an_index_past_the_vertices_is_named() {
    let data = {
        let mut data = common::buffer();
        // The quad's last index (u16 at byte 226) points at vertex 7 of 4.
        data[226] = 7;
        data
    };
    let error = load_gltf_bytes(&common::glb_from(&good(), &data), None, &ProcessOptions::default()).unwrap_err();
    assert_eq!(
        error,
        ImportError::Mesh {
            mesh: 1,
            primitive: 0,
            error: MeshError::IndexOutOfRange { position: 5, index: 7, vertex_count: 4 }
        }
    );
    assert_eq!(error.to_string(), "mesh 1 primitive 0: index 5 is 7, past the mesh's 4 vertices");
}

#[test]
fn a_nan_position_is_named() {
    let mut data = common::buffer();
    data[4..8].copy_from_slice(&f32::NAN.to_le_bytes());
    let error = load_gltf_bytes(&common::glb_from(&good(), &data), None, &ProcessOptions::default()).unwrap_err();
    assert_eq!(error, ImportError::Mesh { mesh: 0, primitive: 0, error: MeshError::NonFinitePosition { vertex: 0 } });
}

#[test]
fn a_node_cycle_is_named() {
    let mut document = good();
    document["nodes"][1]["children"] = json!([0]);
    let error = load(&document).unwrap_err();
    assert!(matches!(error, ImportError::NodeGraph { .. }), "{error}");
    assert!(error.to_string().contains("cycle"), "{error}");
    let mut document = good();
    document["nodes"][2]["children"] = json!([2]);
    assert!(load(&document).unwrap_err().to_string().contains("cycle"), "a node that is its own child");
    let mut document = good();
    document["nodes"][2]["children"] = json!([1]);
    assert!(load(&document).unwrap_err().to_string().contains("two parents"));
}

#[test]
fn a_mesh_with_zero_triangles_is_named() {
    let mut document = good();
    document["accessors"][3]["count"] = json!(0);
    assert_eq!(
        load(&document).unwrap_err(),
        ImportError::Mesh { mesh: 1, primitive: 0, error: MeshError::NoTriangles }
    );
}

#[test]
fn a_two_gibibyte_claim_is_refused_without_allocating_it() {
    let mut document = good();
    document["buffers"][0]["byteLength"] = json!(2_147_483_648_u64);
    let error = load(&document).unwrap_err();
    assert!(matches!(error, ImportError::Buffer { buffer: 0, .. }), "{error}");
    assert!(error.to_string().contains("claims 2147483648 bytes"), "{error}");
    let mut document = good();
    document["accessors"][1]["count"] = json!(1_073_741_824_u64);
    assert!(matches!(load(&document).unwrap_err(), ImportError::Accessor { accessor: 1, .. }), "a huge count");
    let mut glb = common::glb();
    glb[8..12].copy_from_slice(&0x8000_0000_u32.to_le_bytes());
    assert!(load_gltf_bytes(&glb, None, &ProcessOptions::default()).unwrap_err().to_string().contains("truncated"));
}

#[test]
fn a_non_json_file_and_a_bad_camera_are_named() {
    assert!(matches!(load_gltf_bytes(b"not a scene", None, &ProcessOptions::default()), Err(ImportError::Json(_))));
    let mut document = good();
    document["cameras"][0]["perspective"]["yfov"] = json!(4.0);
    assert!(matches!(load(&document).unwrap_err(), ImportError::Camera { camera: 0, .. }));
}

#[test]
fn every_field_removed_or_wrong_in_turn_loads_or_fails_without_panic() {
    let mut loaded = 0;
    let mut refused = 0;
    let variants = common::for_each_variant(&good(), |variant| match load(variant) {
        Ok(scene) => {
            // A file that loads is a whole scene: every node's meshes exist.
            assert!(scene.nodes.iter().flat_map(|node| &node.meshes).all(|&mesh| mesh < scene.meshes.len()));
            loaded += 1;
        }
        Err(error) => {
            assert!(!error.to_string().is_empty());
            refused += 1;
        }
    });
    assert!(variants > 80 * 9, "the corpus walks the whole document ({variants} variants)");
    assert!(loaded > 0 && refused > 0, "{loaded} loaded, {refused} refused");
}

#[test]
fn every_truncation_of_a_glb_fails_without_panic() {
    let bytes = common::glb();
    for length in 0..bytes.len() {
        let result = load_gltf_bytes(&bytes[..length], None, &ProcessOptions::default());
        assert!(result.is_err(), "a .glb cut to {length} of {} bytes must not load", bytes.len());
    }
}
