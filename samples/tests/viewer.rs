//! The viewer binary on glTF files the test writes: a scene renders to a PNG (when there is
//! a Vulkan device), a scene without meshes exits 0 saying so, a bad file exits non-zero with
//! one line naming the problem.

#[path = "../../assets/tests/common/mod.rs"]
mod common;

use std::process::Command;

use serde_json::json;

fn run_viewer(arguments: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_viewer")).args(arguments).output().expect("the viewer runs")
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
    if stdout.contains("no usable Vulkan device") {
        assert!(!render_graph::testing::vulkan_required(), "Vulkan is required here: {stdout}");
        return;
    }
    assert!(stdout.contains("identical images"), "{stdout}");
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&out).expect("the PNG exists")));
    let reader = decoder.read_info().expect("a PNG");
    assert_eq!((reader.info().width, reader.info().height), (96, 64));
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
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(folder.join("scene-materials.png")).expect("the materials view exists"),
    ));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("fits")];
    reader.next_frame(&mut pixels).expect("decodes");
    // Lighting scales the class colours: look for their hues.
    let greenish = pixels.chunks_exact(4).filter(|texel| texel[1] > texel[0] + 40 && texel[1] > texel[2] + 40).count();
    let bluish = pixels.chunks_exact(4).filter(|texel| texel[2] > texel[0] + 40 && texel[2] > texel[1] + 40).count();
    assert!(greenish > 0 && bluish > 0, "masked green {greenish}, blended blue {bluish}");
    std::fs::remove_dir_all(&folder).unwrap();
}
