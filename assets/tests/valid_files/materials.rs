//! Materials and base-colour textures: factors, samplers, alpha modes, sidedness, shared and
//! undecodable images, and which meshes may occlude.

use super::quantization::cube_with;
use super::*;

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
