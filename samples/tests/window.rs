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

#[test]
fn the_window_survives_a_resize_with_gpu_culling_and_mailbox_present() {
    if !window_available() {
        return;
    }
    let folder = temporary("window", "resize");
    let path = folder.join("path.json");
    std::fs::write(&path, PATH).expect("the path is written");
    let (output, text) = windowed(
        &folder,
        &[
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
    assert!(output.status.success(), "{text}");
    assert!(text.contains("window: 8 frames, 8 presented"), "{text}");
    let (width, height, shot) = read_png(&folder.join("shot.png"));
    let _ = std::fs::remove_dir_all(&folder);
    // The swapchain was recreated at the new size and the graph followed it.
    assert_eq!((width, height), (200, 120), "{text}");
    assert!(colours(&shot) >= 8, "the screenshot has {} colours", colours(&shot));
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
