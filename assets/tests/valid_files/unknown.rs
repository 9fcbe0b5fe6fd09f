//! What the importer does not read must not stop a load: textures without a source,
//! channels without a node, unknown optional extensions; a required one it cannot honour is
//! an error.

use super::*;

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
