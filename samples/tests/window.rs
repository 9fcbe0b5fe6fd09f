//! `city --window` under a virtual X server (Xvfb, through `xvfb-run`) on lavapipe with
//! validation: the swapchain's last image, copied back with `--screenshot`, must be the
//! image the headless run draws for the same camera, and resizing must not break it.
//! Without `xvfb-run` the tests skip, unless `ENGINE_REQUIRE_VULKAN=1`, where they fail.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Mutex;

use render_graph::testing::gpu_test_context;

mod common;
use common::{read_png, temporary};

/// One virtual X server at a time (`xvfb-run -a` picks a free display, racily).
static XVFB: Mutex<()> = Mutex::new(());

/// A fixed camera over the city, so the window and the headless run see one view.
const PATH: &str = r#"{"keyframes":[{"frame":0,"position":[30,40,120],"yaw":20,"pitch":-20,"fov":60}]}"#;

/// Whether the windowed tests can run here; panics where they must (`ENGINE_REQUIRE_VULKAN=1`).
fn window_available() -> bool {
    if gpu_test_context().is_none() {
        return false;
    }
    let has_xvfb = Command::new("xvfb-run").arg("--help").output().is_ok_and(|output| output.status.success());
    if !has_xvfb && std::env::var("ENGINE_REQUIRE_VULKAN").is_ok_and(|value| value == "1") {
        panic!("ENGINE_REQUIRE_VULKAN=1 but xvfb-run is missing (apt-get install xvfb xauth)");
    }
    has_xvfb
}

fn run(command: &mut Command) -> (Output, String) {
    let output = command.output().expect("the command starts");
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    (output, text)
}

/// `city --window ARGS` under Xvfb, in `folder`.
fn windowed(folder: &Path, arguments: &[&str]) -> (Output, String) {
    let _one = XVFB.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    run(Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1024x768x24", env!("CARGO_BIN_EXE_city"), "--window"])
        .args(arguments)
        .current_dir(folder))
}

/// Distinct colours of an RGBA8 image.
fn colours(pixels: &[u8]) -> usize {
    let mut seen: Vec<&[u8]> = pixels.chunks_exact(4).collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

#[test]
fn the_window_presents_exactly_what_the_headless_run_draws() {
    if !window_available() {
        return;
    }
    let folder = temporary("window", "same");
    let path = folder.join("path.json");
    std::fs::write(&path, PATH).expect("the path is written");
    let path = path.to_str().expect("a UTF-8 path");
    let common = ["--frames", "5", "--objects", "1000", "--size", "160x96", "--validate", "--cull", "cpu"];
    let (output, text) =
        windowed(&folder, &[&common[..], &["--camera-path", path, "--screenshot", "shot.png"]].concat());
    assert!(output.status.success(), "{text}");
    assert!(text.contains("window: 5 frames, 5 presented, 0 skipped, last 160x96, present mode FIFO"), "{text}");
    let (headless, headless_text) = run(Command::new(env!("CARGO_BIN_EXE_city"))
        .args(common)
        .args(["--camera-path", path, "--out", "headless"])
        .current_dir(&folder));
    assert!(headless.status.success(), "{headless_text}");
    let (width, height, shot) = read_png(&folder.join("shot.png"));
    let (_, _, reference) = read_png(&folder.join("headless/city.png"));
    let _ = std::fs::remove_dir_all(&folder);
    assert_eq!((width, height), (160, 96));
    // Sky, ground, buildings and their shading: far from a blank or one-colour image.
    assert!(colours(&shot) >= 8, "the screenshot has {} colours", colours(&shot));
    // The same graph draws both; the blit into the swapchain converts channels exactly.
    let differing = shot.chunks_exact(4).zip(reference.chunks_exact(4)).filter(|(a, b)| a != b).count();
    assert_eq!(differing, 0, "the window's image differs from the headless one in {differing} pixels");
}

/// `--shadows` in the window (GPU culling, pipelined): the sun's and the lamps' shadows,
/// culled per light view on the GPU, are the headless run's pixel for pixel, and they change
/// the picture.
#[test]
fn the_window_shows_the_shadows_the_headless_run_draws() {
    if !window_available() {
        return;
    }
    let folder = temporary("window", "shadows");
    let path = folder.join("path.json");
    std::fs::write(&path, PATH).expect("the path is written");
    let path = path.to_str().expect("a UTF-8 path");
    let common = ["--frames", "4", "--objects", "1000", "--size", "160x96", "--validate", "--cull", "gpu"];
    let shadows = [&common[..], &["--camera-path", path, "--shadows"]].concat();
    let (output, text) = windowed(&folder, &[&shadows[..], &["--screenshot", "shot.png"]].concat());
    assert!(output.status.success(), "{text}");
    let (output, text) =
        windowed(&folder, &[&common[..], &["--camera-path", path, "--screenshot", "plain.png"]].concat());
    assert!(output.status.success(), "{text}");
    let (headless, headless_text) =
        run(Command::new(env!("CARGO_BIN_EXE_city")).args(&shadows).args(["--out", "headless"]).current_dir(&folder));
    assert!(headless.status.success(), "{headless_text}");
    let (_, _, shot) = read_png(&folder.join("shot.png"));
    let (_, _, plain) = read_png(&folder.join("plain.png"));
    let (_, _, reference) = read_png(&folder.join("headless/city.png"));
    let _ = std::fs::remove_dir_all(&folder);
    let differing = shot.chunks_exact(4).zip(reference.chunks_exact(4)).filter(|(a, b)| a != b).count();
    assert_eq!(differing, 0, "the window's shadowed image differs from the headless one in {differing} pixels");
    let changed = shot.chunks_exact(4).zip(plain.chunks_exact(4)).filter(|(a, b)| a != b).count();
    assert!(changed > shot.len() / 4 / 10, "shadows and lights change the picture ({changed} pixels)");
}

#[test]
fn the_window_survives_a_resize_with_gpu_culling_and_mailbox_present() {
    if !window_available() {
        return;
    }
    // Pipelined (the window's default: the resize lands while a frame is with the render
    // thread) and serial.
    for frames in ["--pipelined", "--serial"] {
        let folder = temporary("window", &format!("resize{frames}"));
        let path = folder.join("path.json");
        std::fs::write(&path, PATH).expect("the path is written");
        let (output, text) = windowed(
            &folder,
            &[
                frames,
                "--frames",
                "8",
                "--objects",
                "1000",
                "--size",
                "160x96",
                "--validate",
                "--cull",
                "gpu",
                "--present",
                "mailbox",
                "--resize-to",
                "200x120",
                "--camera-path",
                path.to_str().expect("a UTF-8 path"),
                "--screenshot",
                "shot.png",
            ],
        );
        assert!(output.status.success(), "{frames}: {text}");
        assert!(text.contains("window: 8 frames, 8 presented"), "{frames}: {text}");
        let (width, height, shot) = read_png(&folder.join("shot.png"));
        let _ = std::fs::remove_dir_all(&folder);
        // The swapchain was recreated at the new size and the graph followed it.
        assert_eq!((width, height), (200, 120), "{frames}: {text}");
        assert!(colours(&shot) >= 8, "{frames}: the screenshot has {} colours", colours(&shot));
    }
}

#[test]
fn a_screenshot_needs_a_frame_count() {
    let folder = temporary("window", "no-frames");
    let (output, text) = run(Command::new(env!("CARGO_BIN_EXE_city"))
        .args(["--window", "--objects", "1000", "--screenshot", "shot.png"])
        .current_dir(&folder));
    let _ = std::fs::remove_dir_all(&folder);
    assert!(!output.status.success() && text.contains("--screenshot needs --frames"), "{text}");
}

/// The window shows what a game asks of it: a debug view of the depth (grey, on a log scale),
/// the frame itself when the view names no image (logged, not an error, and not a hang on the
/// acquired swapchain image), and the users' frame passes, resized with the window.
#[test]
fn the_window_shows_debug_views_and_users_frame_passes() {
    if !window_available() {
        return;
    }
    let folder = temporary("window", "debug-view");
    let path = folder.join("path.json");
    std::fs::write(&path, PATH).expect("the path is written");
    let path = path.to_str().expect("a UTF-8 path");
    let common = ["--frames", "4", "--objects", "1000", "--size", "160x96", "--validate", "--cull", "gpu"];
    let shot = |name: &str, extra: &[&str]| {
        let (output, text) =
            windowed(&folder, &[&common[..], &["--camera-path", path, "--screenshot", name], extra].concat());
        assert!(output.status.success(), "{extra:?}:\n{text}");
        (read_png(&folder.join(name)).2, text)
    };
    let (plain, _) = shot("plain.png", &[]);
    let (depth, _) = shot("depth.png", &["--debug-view", "depth_prepass"]);
    assert!(depth.chunks_exact(4).all(|texel| texel[0] == texel[1] && texel[1] == texel[2]), "the depth is grey");
    assert!(colours(&depth) >= 8, "the depth has {} greys", colours(&depth));
    let (unknown, text) = shot("unknown.png", &["--debug-view", "no_such_image"]);
    assert!(text.contains("debug view of `no_such_image`") && text.contains("the frame is shown instead"), "{text}");
    assert_eq!(unknown, plain, "an image that cannot be shown shows the frame");
    let (boxes, _) = shot("boxes.png", &["--post", "fog", "--debug-boxes", "--gpu-animate", "--resize-to", "200x120"]);
    let _ = std::fs::remove_dir_all(&folder);
    let green = boxes.chunks_exact(4).filter(|texel| *texel == [0, 255, 0, 255]).count();
    assert!(green > 50, "the boxes of visible objects are drawn ({green} green pixels)");
    assert_eq!(boxes.len(), 200 * 120 * 4, "the passes follow the resize");
}

/// `viewer --window` on gltfpack's `-cc` output of a textured, masked, double-sided scene
/// (`assets/tests/data/gltfpack`): the window's last frame (the Render stage, GPU culling)
/// is the PNG the headless viewer draws (CPU culling, checked against no culling), pixel
/// for pixel, so textures, masks and the file's camera show in the window as on disk.
#[test]
fn the_viewer_window_shows_a_textured_masked_asset_as_its_png_does() {
    if !window_available() {
        return;
    }
    let folder = temporary("window", "viewer");
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/tests/data/gltfpack/cc.glb");
    let scene = scene.to_str().expect("a UTF-8 path");
    let (output, text) = {
        let _one = XVFB.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        run(Command::new("xvfb-run")
            .args(["-a", "-s", "-screen 0 1024x768x24", env!("CARGO_BIN_EXE_viewer"), scene, "--window"])
            .args(["--size", "192x128", "--frames", "4", "--screenshot", "window.png"])
            .current_dir(&folder))
    };
    assert!(output.status.success(), "{text}");
    assert!(text.contains("window: 4 frames, 4 presented, 0 skipped, last 192x128"), "{text}");
    let (output, text) = run(Command::new(env!("CARGO_BIN_EXE_viewer"))
        .args([scene, "--size", "192x128", "--out", "file.png"])
        .current_dir(&folder));
    assert!(output.status.success() && text.contains("identical images"), "{text}");
    let (window, file) = (read_png(&folder.join("window.png")), read_png(&folder.join("file.png")));
    assert_eq!((window.0, window.1), (file.0, file.1));
    let leaf = file.2.chunks_exact(4).filter(|texel| texel[1] > texel[0] + 60 && texel[1] > texel[2] + 60).count();
    assert!(leaf > 500, "the leaf's texture is drawn ({leaf} pixels)");
    let differing = window.2.chunks_exact(4).zip(file.2.chunks_exact(4)).filter(|(a, b)| a != b).count();
    assert_eq!(differing, 0, "the window's frame differs from the viewer's PNG in {differing} pixels");
    std::fs::remove_dir_all(&folder).unwrap();
}
