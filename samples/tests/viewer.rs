//! The viewer binary on glTF files the test writes: a scene renders to a PNG (when there is
//! a Vulkan device), a scene without meshes exits 0 saying so, a bad file exits non-zero with
//! one line naming the problem; a model of any size is framed centred in the image, and
//! several files are drawn side by side (a bad one among them named, the others drawn).

#[path = "../../assets/tests/common/mod.rs"]
mod common;
/// The samples' test helpers (`read_png`).
#[path = "common/mod.rs"]
#[allow(dead_code)]
mod samples_common;

use std::process::Command;

use serde_json::json;

fn run_viewer(arguments: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_viewer")).args(arguments).output().expect("the viewer runs")
}

/// Whether the viewer drew, from what it printed: without a usable Vulkan device it draws
/// nothing (allowed only where Vulkan is not required); a run that drew found its culled and
/// unculled images identical. `label` names the run in a failure.
fn viewer_drew(stdout: &str, label: &str) -> bool {
    if stdout.contains("no usable Vulkan device") {
        assert!(!render_graph::testing::vulkan_required(), "Vulkan is required here: {stdout}");
        return false;
    }
    assert!(stdout.contains("identical images"), "{label}: {stdout}");
    true
}

#[test]
fn a_scene_renders_to_a_png_with_identical_culled_image() {
    let folder = common::scratch("viewer-scene");
    let scene = folder.join("scene.glb");
    std::fs::write(&scene, common::glb()).unwrap();
    let out = folder.join("scene.png");
    let output =
        run_viewer(&[scene.as_os_str(), "--out".as_ref(), out.as_os_str(), "--size".as_ref(), "96x64".as_ref()]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "viewer failed: {stdout}\n{stderr}");
    assert!(stdout.contains("load: 2 meshes, 14 triangles"), "{stdout}");
    assert!(stdout.contains("camera: the file's first camera"), "{stdout}");
    if !viewer_drew(&stdout, "viewer") {
        return;
    }
    let (width, height, _) = samples_common::read_png(&out);
    assert_eq!((width, height), (96, 64));
    std::fs::remove_dir_all(&folder).unwrap();
}

/// `--shadows`: a sun lights the scene and its meshes shade one another; the culled image
/// still equals the unculled one, and the picture is not the unlit one.
#[test]
fn a_scene_lit_by_a_sun_casts_shadows_culled_and_unculled_alike() {
    let folder = common::scratch("viewer-shadows");
    let scene = folder.join("scene.glb");
    std::fs::write(&scene, common::glb()).unwrap();
    let (lit, plain) = (folder.join("lit.png"), folder.join("plain.png"));
    let size = ["--size".as_ref(), "96x64".as_ref()];
    let output = run_viewer(
        &[&[scene.as_os_str(), "--out".as_ref(), lit.as_os_str(), "--shadows".as_ref()], &size[..]].concat(),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "viewer failed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    if !viewer_drew(&stdout, "viewer") {
        return;
    }
    let output = run_viewer(&[&[scene.as_os_str(), "--out".as_ref(), plain.as_os_str()], &size[..]].concat());
    assert!(output.status.success());
    let (_, _, lit) = samples_common::read_png(&lit);
    let (_, _, plain) = samples_common::read_png(&plain);
    assert_ne!(lit, plain, "the sun and its shadows change the picture");
    std::fs::remove_dir_all(&folder).unwrap();
}

#[test]
fn a_scene_without_meshes_says_so_and_succeeds() {
    let folder = common::scratch("viewer-empty");
    let scene = folder.join("empty.gltf");
    let document =
        json!({ "asset": { "version": "2.0" }, "scenes": [{ "nodes": [0] }], "nodes": [{ "name": "lonely" }] });
    std::fs::write(&scene, serde_json::to_vec(&document).unwrap()).unwrap();
    let output = run_viewer(&[scene.as_os_str()]);
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("has nothing to draw"));
    std::fs::remove_dir_all(&folder).unwrap();
}

#[test]
fn a_bad_file_fails_with_one_line_naming_the_problem() {
    let folder = common::scratch("viewer-bad");
    let scene = folder.join("bad.glb");
    let bytes = common::glb();
    std::fs::write(&scene, &bytes[..bytes.len() / 2]).unwrap();
    let output = run_viewer(&[scene.as_os_str()]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("bad.glb") && stderr.contains("truncated"), "{stderr}");
    let output = run_viewer(&[folder.join("absent.glb").as_os_str()]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot read"));
    std::fs::remove_dir_all(&folder).unwrap();
}

#[test]
fn classify_writes_a_meshlet_view_and_hides_no_meshlet() {
    let folder = common::scratch("viewer-classify");
    let scene = folder.join("scene.glb");
    std::fs::write(&scene, common::glb()).unwrap();
    let out = folder.join("scene.png");
    let arguments = [scene.as_os_str(), "--out".as_ref(), out.as_os_str(), "--size".as_ref(), "96x64".as_ref()];
    let output = run_viewer(&[&arguments[..], &["--classify".as_ref()]].concat());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "viewer failed: {stdout}\n{stderr}");
    if stdout.contains("no usable Vulkan device") {
        assert!(!render_graph::testing::vulkan_required(), "Vulkan is required here: {stdout}");
        return;
    }
    let line = stdout.lines().find(|line| line.starts_with("cluster cull: ")).expect("a cluster line");
    assert!(
        line.contains("culled vs unculled: identical images") && line.contains("false_hidden_meshlets 0"),
        "{line}"
    );
    assert!(folder.join("scene-meshlets.png").exists(), "{stdout}");
    std::fs::remove_dir_all(&folder).unwrap();
}

#[test]
fn classify_marks_masked_and_blended_objects() {
    let folder = common::scratch("viewer-materials");
    let data = common::buffer();
    let mut document = common::document(json!({ "byteLength": data.len() }));
    document["materials"] = json!([{ "alphaMode": "MASK", "alphaCutoff": 0.4 }, { "alphaMode": "BLEND" }]);
    let meshes = document["meshes"].as_array_mut().expect("meshes");
    for (index, mesh) in meshes.iter_mut().enumerate() {
        for primitive in mesh["primitives"].as_array_mut().expect("primitives") {
            primitive["material"] = json!(index % 2);
        }
    }
    let scene = folder.join("scene.glb");
    std::fs::write(&scene, common::glb_from(&document, &data)).unwrap();
    let out = folder.join("scene.png");
    let arguments = [scene.as_os_str(), "--out".as_ref(), out.as_os_str(), "--size".as_ref(), "96x64".as_ref()];
    let output = run_viewer(&[&arguments[..], &["--classify".as_ref()]].concat());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "viewer failed: {stdout}\n{stderr}");
    assert!(stdout.contains("materials: 0 opaque, 1 masked, 1 blended; 0 textures decoded"), "{stdout}");
    if stdout.contains("no usable Vulkan device") {
        assert!(!render_graph::testing::vulkan_required(), "Vulkan is required here: {stdout}");
        return;
    }
    let (_, _, pixels) = samples_common::read_png(&folder.join("scene-materials.png"));
    // Lighting scales the class colours: look for their hues.
    let greenish = pixels.chunks_exact(4).filter(|texel| texel[1] > texel[0] + 40 && texel[1] > texel[2] + 40).count();
    let bluish = pixels.chunks_exact(4).filter(|texel| texel[2] > texel[0] + 40 && texel[2] > texel[1] + 40).count();
    assert!(greenish > 0 && bluish > 0, "masked green {greenish}, blended blue {bluish}");
    std::fs::remove_dir_all(&folder).unwrap();
}

/// A leaf card (a quad with a checker of opaque and clear texels, alpha-masked) in front of a
/// red cube, seen through the file's camera: the cube shows through the holes and only there,
/// culled and unculled images are equal; the same card opaque hides the cube, and blended
/// shows it through its clear texels (drawn after the cube, which it does not occlude).
fn leaf_scene(alpha_mode: &str) -> Vec<u8> {
    let floats = |values: &[f32]| values.iter().flat_map(|value| value.to_le_bytes()).collect::<Vec<u8>>();
    let quad = floats(&[-2.0, -2.0, 0.0, 2.0, -2.0, 0.0, 2.0, 2.0, 0.0, -2.0, 2.0, 0.0]);
    let quad_uvs = floats(&[0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
    let quad_indices: Vec<u8> = [0_u16, 1, 2, 0, 2, 3, 0, 0].iter().flat_map(|index| index.to_le_bytes()).collect();
    let cube: Vec<f32> = (0..8)
        .flat_map(|corner| [(corner & 1) as f32 - 0.5, (corner >> 1 & 1) as f32 - 0.5, (corner >> 2 & 1) as f32 - 3.5])
        .collect();
    let cube = floats(&cube);
    let cube_indices: Vec<u8> = [
        0_u16, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4, 2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5,
    ]
    .iter()
    .flat_map(|index| index.to_le_bytes())
    .collect();
    let picture = image::RgbaImage::from_fn(8, 8, |x, y| {
        image::Rgba(if (x / 2 + y / 2) % 2 == 0 { [255, 255, 255, 255] } else { [255, 255, 255, 0] })
    });
    let mut png = std::io::Cursor::new(Vec::new());
    picture.write_to(&mut png, image::ImageFormat::Png).expect("encodes");
    let png = png.into_inner();
    let mut bin = Vec::new();
    let mut views = Vec::new();
    for bytes in [&quad, &quad_uvs, &quad_indices, &cube, &cube_indices, &png] {
        views.push(json!({ "buffer": 0, "byteOffset": bin.len(), "byteLength": bytes.len() }));
        bin.extend_from_slice(bytes);
        bin.resize(bin.len().next_multiple_of(4), 0);
    }
    let document = json!({
        "asset": { "version": "2.0" },
        "scene": 0,
        "scenes": [{ "nodes": [0, 1, 2] }],
        "nodes": [{ "mesh": 0 }, { "mesh": 1 }, { "camera": 0, "translation": [0.0, 0.0, 6.0] }],
        "cameras": [{ "type": "perspective", "perspective": { "yfov": 0.7, "znear": 0.1, "aspectRatio": 1.5 } }],
        "meshes": [
            { "primitives": [{ "attributes": { "POSITION": 0, "TEXCOORD_0": 1 }, "indices": 2, "material": 0 }] },
            { "primitives": [{ "attributes": { "POSITION": 3 }, "indices": 4, "material": 1 }] }
        ],
        "materials": [
            { "pbrMetallicRoughness": { "baseColorTexture": { "index": 0 } }, "alphaMode": alpha_mode },
            { "pbrMetallicRoughness": { "baseColorFactor": [1.0, 0.0, 0.0, 1.0] } }
        ],
        "textures": [{ "source": 0, "sampler": 0 }],
        "samplers": [{ "magFilter": 9728, "minFilter": 9728 }],
        "images": [{ "bufferView": 5, "mimeType": "image/png" }],
        "buffers": [{ "byteLength": bin.len() }],
        "bufferViews": views,
        "accessors": [
            { "bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3", "min": [-2, -2, 0], "max": [2, 2, 0] },
            { "bufferView": 1, "componentType": 5126, "count": 4, "type": "VEC2" },
            { "bufferView": 2, "componentType": 5123, "count": 6, "type": "SCALAR" },
            { "bufferView": 3, "componentType": 5126, "count": 8, "type": "VEC3", "min": [-0.5, -0.5, -4.0], "max": [0.5, 0.5, -3.0] },
            { "bufferView": 4, "componentType": 5123, "count": 36, "type": "SCALAR" }
        ]
    });
    common::glb_from(&document, &bin)
}

#[test]
fn a_masked_leaf_shows_what_is_behind_its_holes_culled_and_unculled_alike() {
    let folder = common::scratch("viewer-leaf");
    let mut reds = Vec::new();
    for mode in ["MASK", "OPAQUE", "BLEND"] {
        let scene = folder.join(format!("{mode}.glb"));
        std::fs::write(&scene, leaf_scene(mode)).unwrap();
        let out = folder.join(format!("{mode}.png"));
        let output =
            run_viewer(&[scene.as_os_str(), "--out".as_ref(), out.as_os_str(), "--size".as_ref(), "96x64".as_ref()]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{mode}: {stdout}\n{stderr}");
        assert!(stdout.contains("1 textures decoded"), "{stdout}");
        if !viewer_drew(&stdout, mode) {
            return;
        }
        let (_, _, pixels) = samples_common::read_png(&out);
        let red = pixels.chunks_exact(4).filter(|texel| texel[0] > 100 && texel[1] < 40 && texel[2] < 40).count();
        // The card is white, lit grey by the sun.
        let white = pixels
            .chunks_exact(4)
            .filter(|texel| texel[0] > 80 && texel[0] == texel[1] && texel[1] == texel[2])
            .count();
        assert!(white > 100, "{mode}: the card's opaque texels are drawn ({white})");
        reds.push(red);
    }
    std::fs::remove_dir_all(&folder).unwrap();
    assert!(reds[0] > 10, "the cube shows through the mask's holes ({} pixels)", reds[0]);
    assert_eq!(reds[1], 0, "the opaque card hides the cube");
    assert!(reds[2] > 10, "the cube shows through the blended card's clear texels ({} pixels)", reds[2]);
}

/// meshoptimizer's gltfpack output of one textured, masked, double-sided scene (see
/// `assets/tests/data/gltfpack/README.md`): with its default options (quantized positions,
/// normals and texture coordinates, `KHR_texture_transform`), with `-c` and with `-cc`
/// (meshopt compression, octahedral normals) every file renders the original's picture, to
/// within the quantization of positions, culled and unculled alike.
#[test]
fn gltfpacks_outputs_render_the_picture_of_the_original() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/tests/data/gltfpack");
    let folder = common::scratch("viewer-gltfpack");
    let mut pictures = Vec::new();
    for name in ["scene", "default", "c", "cc"] {
        let out = folder.join(format!("{name}.png"));
        let file = data.join(format!("{name}.glb"));
        let output =
            run_viewer(&[file.as_os_str(), "--out".as_ref(), out.as_os_str(), "--size".as_ref(), "192x128".as_ref()]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{name}: {stdout}\n{stderr}");
        assert!(stdout.contains("materials: 2 opaque, 1 masked, 0 blended; 2 textures decoded"), "{name}: {stdout}");
        if !viewer_drew(&stdout, name) {
            return;
        }
        pictures.push(samples_common::read_png(&out).2);
    }
    let original = &pictures[0];
    let leaf = original.chunks_exact(4).filter(|texel| texel[1] > texel[0] + 60 && texel[1] > texel[2] + 60).count();
    let red = original.chunks_exact(4).filter(|texel| texel[0] > 100 && texel[1] < 40 && texel[2] < 40).count();
    assert!(leaf > 500 && red > 20, "the leaf's texels ({leaf}) and the red cube through its holes ({red}) are drawn");
    for (name, picture) in ["default", "c", "cc"].iter().zip(&pictures[1..]) {
        let differing = original
            .chunks_exact(4)
            .zip(picture.chunks_exact(4))
            .filter(|(a, b)| a.iter().zip(b.iter()).any(|(a, b)| a.abs_diff(*b) > 8))
            .count();
        // Quantized positions move edges by a fraction of a pixel: at most 1% of the pixels.
        assert!(differing * 100 <= original.len() / 4, "{name}: {differing} pixels differ from the original's picture");
    }
    std::fs::remove_dir_all(&folder).unwrap();
}

/// A .glb of the unit cube alone, scaled by `side` and moved to `at`, coloured `color`, with
/// no camera (the viewer frames it).
fn cube_file(side: f32, at: [f32; 3], color: [f32; 4]) -> Vec<u8> {
    let data = common::buffer();
    let mut document = common::document(json!({ "byteLength": data.len() }));
    document["nodes"] = json!([{ "name": "cube", "mesh": 0, "scale": [side, side, side], "translation": at }]);
    // The cube only: no primitive to skip (and warn about) in a test that counts lines.
    document["meshes"] = json!([document["meshes"][0].clone()]);
    document["scenes"] = json!([{ "nodes": [0] }]);
    document.as_object_mut().expect("an object").remove("cameras");
    document["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"] = json!(color);
    common::glb_from(&document, &data)
}

const RED: [f32; 4] = [1.0, 0.0, 0.0, 1.0];
const GREEN: [f32; 4] = [0.0, 1.0, 0.0, 1.0];

/// Where the model is in an image: the pixels unlike the sky (the top-left pixel's colour,
/// which a framed model never reaches), their count and the centre and size of their box.
struct Drawn {
    count: usize,
    centre: (f32, f32),
    size: (u32, u32),
}

fn drawn(width: u32, height: u32, pixels: &[u8]) -> Drawn {
    let sky = &pixels[..4];
    let (mut low, mut high) = ((u32::MAX, u32::MAX), (0, 0));
    let mut count = 0;
    for (index, texel) in pixels.chunks_exact(4).enumerate() {
        if texel.iter().zip(sky).all(|(a, b)| a.abs_diff(*b) <= 8) {
            continue;
        }
        let (x, y) = (index as u32 % width, index as u32 / width);
        (low, high) = ((low.0.min(x), low.1.min(y)), (high.0.max(x), high.1.max(y)));
        count += 1;
    }
    assert!(count > 0, "nothing drawn in the {width}x{height} image");
    let centre = ((low.0 + high.0 + 1) as f32 * 0.5, (low.1 + high.1 + 1) as f32 * 0.5);
    Drawn { count, centre, size: (high.0 - low.0 + 1, high.1 - low.1 + 1) }
}

/// Pixels of a hue: red (`texel[0]` well above the others) or green.
fn hue_pixels(pixels: &[u8], channel: usize) -> Vec<usize> {
    pixels
        .chunks_exact(4)
        .enumerate()
        .filter(|(_, texel)| {
            (0..3)
                .filter(|&other| other != channel)
                .all(|other| u16::from(texel[channel]) > u16::from(texel[other]) + 40)
        })
        .map(|(index, _)| index)
        .collect()
}

/// A 2 cm cube and a 2 km one (each away from the origin) are framed alike: drawn, not cut by
/// the near plane, centred in the image and covering a good part of it.
#[test]
fn models_from_two_centimetres_to_two_kilometres_are_framed_centred() {
    let folder = common::scratch("viewer-scales");
    for side in [0.02_f32, 2000.0] {
        let scene = folder.join(format!("cube-{side}.glb"));
        std::fs::write(&scene, cube_file(side, [3.0 * side, -2.0 * side, 5.0 * side], RED)).unwrap();
        let out = folder.join(format!("cube-{side}.png"));
        let output =
            run_viewer(&[scene.as_os_str(), "--out".as_ref(), out.as_os_str(), "--size".as_ref(), "96x64".as_ref()]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{side} m: {stdout}\n{stderr}");
        assert!(stdout.contains("camera: framing the scene's bounds"), "{stdout}");
        if !viewer_drew(&stdout, &format!("{side} m")) {
            return;
        }
        let (width, height, pixels) = samples_common::read_png(&out);
        let model = drawn(width, height, &pixels);
        let (dx, dy) = (model.centre.0 - width as f32 * 0.5, model.centre.1 - height as f32 * 0.5);
        assert!(
            dx.abs() <= width as f32 * 0.08 && dy.abs() <= height as f32 * 0.08,
            "{side} m: the model's box is centred at {:?} in a {width}x{height} image",
            model.centre
        );
        assert!(
            model.size.1 * 3 >= height && model.count * 10 >= (width * height) as usize,
            "{side} m: the model covers a good share of the image (box {:?}, {} pixels)",
            model.size,
            model.count
        );
        assert!(hue_pixels(&pixels, 0).len() * 2 >= model.count, "{side} m: the drawn pixels are the red cube");
    }
    std::fs::remove_dir_all(&folder).unwrap();
}

/// Two files in one run: both are drawn, side by side along +x (the second to the right of
/// the first), each file's load reported.
#[test]
fn two_files_are_drawn_side_by_side() {
    let folder = common::scratch("viewer-two");
    let (red, green) = (folder.join("red.glb"), folder.join("green.glb"));
    std::fs::write(&red, cube_file(1.0, [0.0; 3], RED)).unwrap();
    std::fs::write(&green, cube_file(1.0, [0.0; 3], GREEN)).unwrap();
    let out = folder.join("two.png");
    let output = run_viewer(&[
        red.as_os_str(),
        green.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--size".as_ref(),
        "96x64".as_ref(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "viewer failed: {stdout}\n{stderr}");
    assert_eq!(stdout.matches("load: 1 meshes, 12 triangles").count(), 2, "{stdout}");
    assert!(stdout.contains("red.glb") && stdout.contains("green.glb"), "{stdout}");
    // Side by side the unit cubes span x from -0.5 to 1.6 (a gap of a tenth of their side);
    // `--as-is` leaves both at the origin.
    assert!(stdout.contains("centre [0.5500, 0.0000, 0.0000]"), "{stdout}");
    let as_is_png = folder.join("as-is.png");
    let as_is = run_viewer(&[
        red.as_os_str(),
        green.as_os_str(),
        "--as-is".as_ref(),
        "--out".as_ref(),
        as_is_png.as_os_str(),
        "--size".as_ref(),
        "96x64".as_ref(),
    ]);
    let as_is_out = String::from_utf8_lossy(&as_is.stdout);
    assert!(as_is.status.success() && as_is_out.contains("centre [0.0000, 0.0000, 0.0000]"), "{as_is_out}");
    if !viewer_drew(&stdout, "viewer") {
        return;
    }
    let (width, _, pixels) = samples_common::read_png(&out);
    let (reds, greens) = (hue_pixels(&pixels, 0), hue_pixels(&pixels, 1));
    assert!(reds.len() > 20 && greens.len() > 20, "both cubes drawn: {} red, {} green", reds.len(), greens.len());
    let mean_x =
        |found: &[usize]| found.iter().map(|&index| (index as u32 % width) as f32).sum::<f32>() / found.len() as f32;
    assert!(mean_x(&reds) < mean_x(&greens), "the second file stands to the right of the first");
    std::fs::remove_dir_all(&folder).unwrap();
}

/// `--stream`: the files load through the asset server while frames run, and once both are
/// on the GPU the frame shows them side by side, culled and unculled alike, the truth hiding
/// nothing.
#[test]
fn two_files_streamed_while_frames_run_are_drawn_side_by_side() {
    let folder = common::scratch("viewer-stream");
    let (red, green) = (folder.join("red.glb"), folder.join("green.glb"));
    std::fs::write(&red, cube_file(1.0, [0.0; 3], RED)).unwrap();
    std::fs::write(&green, cube_file(1.0, [0.0; 3], GREEN)).unwrap();
    let out = folder.join("streamed.png");
    let output = run_viewer(&[
        red.as_os_str(),
        green.as_os_str(),
        "--stream".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
        "--size".as_ref(),
        "96x64".as_ref(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "viewer failed: {stdout}\n{stderr}");
    if stdout.contains("no usable Vulkan device") {
        assert!(!render_graph::testing::vulkan_required(), "Vulkan is required here: {stdout}");
        return;
    }
    assert!(stdout.contains("2 of 2 files arrived"), "{stdout}");
    assert!(stdout.contains("identical images; false_hidden 0"), "{stdout}");
    let (width, _, pixels) = samples_common::read_png(&out);
    let (reds, greens) = (hue_pixels(&pixels, 0), hue_pixels(&pixels, 1));
    assert!(reds.len() > 20 && greens.len() > 20, "both cubes drawn: {} red, {} green", reds.len(), greens.len());
    let mean_x =
        |found: &[usize]| found.iter().map(|&index| (index as u32 % width) as f32).sum::<f32>() / found.len() as f32;
    assert!(mean_x(&reds) < mean_x(&greens), "the second file stands to the right of the first");
    std::fs::remove_dir_all(&folder).unwrap();
}

/// One bad file among two: the bad one is named on one line, the good one still drawn, and
/// the exit code is 1 so scripts notice.
#[test]
fn a_bad_file_among_two_is_named_and_the_good_one_drawn() {
    let folder = common::scratch("viewer-one-bad");
    let (good, bad) = (folder.join("good.glb"), folder.join("bad.glb"));
    std::fs::write(&good, cube_file(1.0, [0.0; 3], RED)).unwrap();
    let bytes = common::glb();
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    let out = folder.join("good.png");
    let output = run_viewer(&[
        bad.as_os_str(),
        good.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--size".as_ref(),
        "96x64".as_ref(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "a bad file makes the exit code 1: {stdout}\n{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("bad.glb") && stderr.contains("truncated") && !stderr.contains("good.glb"), "{stderr}");
    assert!(stdout.contains("load: 1 meshes, 12 triangles"), "the good file loads: {stdout}");
    if !viewer_drew(&stdout, "viewer") {
        return;
    }
    let (_, _, pixels) = samples_common::read_png(&out);
    assert!(hue_pixels(&pixels, 0).len() > 20, "the good file's red cube is drawn");
    std::fs::remove_dir_all(&folder).unwrap();
}

/// `--animate` on a real skinned sample (Khronos' RiggedSimple, `samples/tests/data/`):
/// the cylinder bends, so the frames differ, and every frame's culled image equals the
/// unculled one (`--truth`); the PNGs asked for are written beside `--out`.
#[test]
fn animate_plays_a_khronos_skinned_sample_and_culls_it_by_its_pose() {
    let folder = common::scratch("viewer-animate");
    let scene = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/RiggedSimple.gltf");
    let out = folder.join("rigged.png");
    let output = run_viewer(&[
        scene.as_os_str(),
        "--animate".as_ref(),
        "--frames".as_ref(),
        "12".as_ref(),
        "--png-every".as_ref(),
        "6".as_ref(),
        "--truth".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
        "--size".as_ref(),
        "96x64".as_ref(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stdout.contains("no usable Vulkan device") {
        assert!(!render_graph::testing::vulkan_required(), "Vulkan is required here: {stdout}");
        return;
    }
    assert!(output.status.success(), "viewer failed: {stdout}\n{stderr}");
    let line = stdout.lines().find(|line| line.starts_with("animate:")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains("1 rigs, 2 joints"), "{line}");
    assert!(line.contains("identical images"), "culled and unculled differ: {line}");
    let moved: u64 = line
        .split(" differ from the first")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(moved > 0, "the animation plays: {line}");
    for frame in [5, 11] {
        let png = folder.join(format!("rigged-{frame:04}.png"));
        let (width, height, _) = samples_common::read_png(&png);
        assert_eq!((width, height), (96, 64), "{}", png.display());
    }
    std::fs::remove_dir_all(&folder).unwrap();
}

/// `--animate CLIP` names the clip by name or index; one the file lacks is named with the
/// clips it has, and the viewer exits 1.
#[test]
fn animate_refuses_a_clip_the_file_lacks_by_name() {
    let scene = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/RiggedSimple.gltf");
    let output =
        run_viewer(&[scene.as_os_str(), "--animate".as_ref(), "walk".as_ref(), "--frames".as_ref(), "1".as_ref()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "an unknown clip fails");
    assert!(stderr.contains("no animation 'walk'"), "{stderr}");
}
