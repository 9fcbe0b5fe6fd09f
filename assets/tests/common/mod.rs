//! Small glTF files written by the tests: a closed red cube and an open quad (with a point
//! primitive to skip) under one root, plus a camera; as .gltf with a data URI, .gltf with an
//! external .bin, or .glb.

#![allow(dead_code)]

use serde_json::{json, Value};

/// The closed unit cube the files hold: the engine's own (corners at ±0.5, wound
/// counter-clockwise seen from outside).
pub use meshes::{UNIT_CUBE_INDICES as CUBE_INDICES, UNIT_CUBE_POSITIONS as CUBE};

/// The binary buffer: cube positions and u16 indices, then quad positions and u16 indices.
pub fn buffer() -> Vec<u8> {
    let quad: [[f32; 3]; 4] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]];
    let quad_indices: [u16; 6] = [0, 1, 2, 0, 2, 3];
    let mut bytes = Vec::new();
    bytes.extend(CUBE.iter().flatten().flat_map(|value| value.to_le_bytes()));
    bytes.extend(CUBE_INDICES.iter().flat_map(|&value| (value as u16).to_le_bytes()));
    bytes.extend(quad.iter().flatten().flat_map(|value| value.to_le_bytes()));
    bytes.extend(quad_indices.iter().flat_map(|value| value.to_le_bytes()));
    assert_eq!(bytes.len(), 228);
    bytes
}

/// The document; `buffer` is the buffer object (with `byteLength` and any `uri`).
pub fn document(buffer: Value) -> Value {
    json!({
        "asset": { "version": "2.0" },
        "scene": 0,
        "scenes": [{ "nodes": [0] }],
        "nodes": [
            { "name": "root", "children": [1, 2, 3], "translation": [0.0, 0.0, -5.0] },
            { "name": "cube", "mesh": 0 },
            { "name": "quad", "mesh": 1, "scale": [2.0, 2.0, 2.0], "translation": [3.0, 0.0, 0.0] },
            { "name": "eye", "camera": 0, "translation": [0.0, 0.0, 10.0] }
        ],
        "cameras": [{ "type": "perspective", "perspective": { "yfov": 0.8, "znear": 0.1 } }],
        "materials": [{ "pbrMetallicRoughness": { "baseColorFactor": [1.0, 0.0, 0.0, 1.0] } }],
        "meshes": [
            { "primitives": [{ "attributes": { "POSITION": 0 }, "indices": 1, "material": 0 }] },
            { "primitives": [
                { "attributes": { "POSITION": 2 }, "indices": 3 },
                { "attributes": { "POSITION": 2 }, "mode": 0 }
            ] }
        ],
        "buffers": [buffer],
        "bufferViews": [
            { "buffer": 0, "byteOffset": 0, "byteLength": 96 },
            { "buffer": 0, "byteOffset": 96, "byteLength": 72 },
            { "buffer": 0, "byteOffset": 168, "byteLength": 48 },
            { "buffer": 0, "byteOffset": 216, "byteLength": 12 }
        ],
        "accessors": [
            { "bufferView": 0, "componentType": 5126, "count": 8, "type": "VEC3",
              "min": [-0.5, -0.5, -0.5], "max": [0.5, 0.5, 0.5] },
            { "bufferView": 1, "componentType": 5123, "count": 36, "type": "SCALAR" },
            { "bufferView": 2, "componentType": 5126, "count": 4, "type": "VEC3",
              "min": [0.0, 0.0, 0.0], "max": [1.0, 1.0, 0.0] },
            { "bufferView": 3, "componentType": 5123, "count": 6, "type": "SCALAR" }
        ]
    })
}

/// Standard base64 with padding (the data URIs of the files written here).
pub use test_assets::base64;

/// The scene as .gltf text with the buffer embedded as a data URI.
pub fn embedded_gltf() -> Vec<u8> {
    let data = buffer();
    let uri = format!("data:application/octet-stream;base64,{}", base64(&data));
    serde_json::to_vec(&document(json!({ "byteLength": data.len(), "uri": uri }))).unwrap()
}

/// The scene as .glb bytes (`document` given the buffer object without a URI).
pub fn glb_from(document: &Value, bin: &[u8]) -> Vec<u8> {
    let mut json = serde_json::to_vec(document).unwrap();
    while !json.len().is_multiple_of(4) {
        json.push(b' ');
    }
    let mut bin = bin.to_vec();
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let total = 12 + 8 + json.len() + 8 + bin.len();
    let mut out = b"glTF".to_vec();
    out.extend_from_slice(&2_u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}

/// `document` as .glb bytes with a JSON chunk only (no BIN chunk).
pub fn glb_without_bin(document: &Value) -> Vec<u8> {
    let mut json = serde_json::to_vec(document).unwrap();
    while !json.len().is_multiple_of(4) {
        json.push(b' ');
    }
    let mut out = b"glTF".to_vec();
    out.extend_from_slice(&2_u32.to_le_bytes());
    out.extend_from_slice(&((12 + 8 + json.len()) as u32).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    out
}

/// The scene's document with its data in buffer 1 (a data URI) and buffer 0 a buffer
/// without a URI that no view uses: valid in a .gltf and in a .glb without BIN chunk.
pub fn document_with_unused_first_buffer() -> Value {
    let data = buffer();
    let uri = format!("data:application/octet-stream;base64,{}", base64(&data));
    let mut document = document(json!({ "byteLength": 64 }));
    document["buffers"] = json!([{ "byteLength": 64 }, { "byteLength": data.len(), "uri": uri }]);
    for view in document["bufferViews"].as_array_mut().unwrap() {
        view["buffer"] = json!(1);
    }
    document
}

/// The scene as .glb bytes.
pub fn glb() -> Vec<u8> {
    let data = buffer();
    glb_from(&document(json!({ "byteLength": data.len() })), &data)
}

/// A fresh folder under the target's temporary directory for one test's files.
pub fn scratch(test: &str) -> std::path::PathBuf {
    let folder = std::env::temp_dir().join(format!("assets-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    folder
}

/// Every path to a value of `value` (object keys and array positions).
fn paths(value: &Value, prefix: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                prefix.push(json!(key));
                out.push(prefix.clone());
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                prefix.push(json!(index));
                out.push(prefix.clone());
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

/// The parent of `path`'s value and its last step.
fn parent_of<'a>(root: &'a mut Value, path: &[Value]) -> (&'a mut Value, Value) {
    let mut at = root;
    for step in &path[..path.len() - 1] {
        at = match step {
            Value::String(key) => &mut at[key.as_str()],
            other => &mut at[other.as_u64().unwrap() as usize],
        };
    }
    (at, path[path.len() - 1].clone())
}

/// Runs `check` on every variant of `base` a validator-style corpus makes: each value
/// (object field or array item, at any depth) removed, then replaced by each of a set of
/// wrong values in turn. Returns the number of variants.
pub fn for_each_variant(base: &Value, mut check: impl FnMut(&Value)) -> usize {
    let mut all = Vec::new();
    paths(base, &mut Vec::new(), &mut all);
    let wrong_values =
        [json!(null), json!(-1), json!(4_294_967_295_u64), json!(1.0e30), json!("x"), json!([]), json!({}), json!(0)];
    let mut count = 0;
    for path in &all {
        let mut removed = base.clone();
        let (parent, step) = parent_of(&mut removed, path);
        match (parent, step) {
            (Value::Object(map), Value::String(key)) => {
                map.remove(&key);
            }
            (Value::Array(items), Value::Number(index)) => {
                items.remove(index.as_u64().unwrap() as usize);
            }
            _ => unreachable!("paths step through objects by key and arrays by index"),
        }
        check(&removed);
        for wrong in &wrong_values {
            let mut changed = base.clone();
            let (parent, step) = parent_of(&mut changed, path);
            match step {
                Value::String(key) => parent[key.as_str()] = wrong.clone(),
                index => parent[index.as_u64().unwrap() as usize] = wrong.clone(),
            }
            check(&changed);
        }
        count += 1 + wrong_values.len();
    }
    count
}
