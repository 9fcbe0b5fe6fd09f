//! `KHR_mesh_quantization`: positions, normals and texture coordinates of every type the
//! extension allows, and the texture transform that dequantizes texture coordinates.

use super::*;

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
pub(super) fn cube_with(normals: Option<(Component, &[[f32; 3]])>, uvs: Option<(Component, &[[f32; 2]])>) -> Vec<u8> {
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
