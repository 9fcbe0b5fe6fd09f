//! `city --window --hud`, `stress --window --hud` and `tower_defence --window --hud` under a virtual X server (Xvfb) on
//! lavapipe with validation: the debug overlay is in the window's picture (its panels at the
//! top left), the rest of the picture is the picture without it, and validation stays silent. Without `xvfb-run` the
//! test skips, unless `ENGINE_REQUIRE_VULKAN=1`, where it fails.

use std::path::Path;
use std::process::Command;

use render_graph::testing::gpu_test_context;

mod common;
use common::{read_png, temporary};

/// A fixed camera over the city, so both runs see one view.
const PATH: &str = r#"{"keyframes":[{"frame":0,"position":[30,40,120],"yaw":20,"pitch":-20,"fov":60}]}"#;

/// The window's size: wide enough that the overlay's two columns of panels leave the right
/// part of the picture alone.
const WIDTH: u32 = 1000;
const HEIGHT: u32 = 600;
/// Columns right of this are outside every panel.
const PANELS_END: u32 = 720;

/// `program --window --frames 6 --size WxH --validate --cull cpu --screenshot SHOT ARGS`
/// under Xvfb in `folder`; its screenshot.
fn windowed(program: &str, folder: &Path, arguments: &[&str], shot: &str) -> Vec<u8> {
    let size = format!("{WIDTH}x{HEIGHT}");
    let output = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1024x768x24", program, "--window"])
        .args(["--frames", "6", "--size", &size, "--validate", "--cull", "cpu", "--screenshot", shot])
        .args(arguments)
        .current_dir(folder)
        .output()
        .expect("xvfb-run starts");
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{text}");
    assert!(!text.contains("debug overlay is dropped"), "{text}");
    let (width, height, pixels) = read_png(&folder.join(shot));
    assert_eq!((width, height), (WIDTH, HEIGHT));
    pixels
}

/// Whether the window tests can run here (a device and Xvfb); fails where
/// `ENGINE_REQUIRE_VULKAN=1` asks for them and Xvfb is missing.
fn can_run() -> bool {
    if gpu_test_context().is_none() {
        return false;
    }
    let has_xvfb = Command::new("xvfb-run").arg("--help").output().is_ok_and(|output| output.status.success());
    if !has_xvfb {
        let required = std::env::var("ENGINE_REQUIRE_VULKAN").is_ok_and(|value| value == "1");
        assert!(!required, "ENGINE_REQUIRE_VULKAN=1 but xvfb-run is missing (apt-get install xvfb xauth)");
    }
    has_xvfb
}

/// The overlay changed pixels inside its panels only, and enough of them to be there.
fn assert_overlay_only_in_panels(plain: &[u8], hud: &[u8]) {
    let row_bytes = WIDTH as usize * 4;
    let (mut inside, mut outside) = (0, 0);
    for (row, (plain_row, hud_row)) in plain.chunks_exact(row_bytes).zip(hud.chunks_exact(row_bytes)).enumerate() {
        for (column, (old, new)) in plain_row.chunks_exact(4).zip(hud_row.chunks_exact(4)).enumerate() {
            if old != new {
                if column as u32 >= PANELS_END {
                    outside += 1;
                    assert!(outside < 10, "pixel ({column}, {row}) changed outside the panels");
                } else {
                    inside += 1;
                }
            }
        }
    }
    assert_eq!(outside, 0);
    assert!(inside > 20_000, "the overlay's panels are in the picture: {inside} pixels changed");
}

#[test]
fn the_hud_shows_the_overlay_in_the_window_and_leaves_the_rest_of_the_picture() {
    if !can_run() {
        return;
    }
    let folder = temporary("window_hud", "hud");
    std::fs::write(folder.join("path.json"), PATH).expect("the path is written");
    let city = env!("CARGO_BIN_EXE_city");
    let arguments = ["--objects", "1000", "--camera-path", "path.json"];
    let plain = windowed(city, &folder, &arguments, "plain.png");
    let hud = windowed(city, &folder, &[&arguments[..], &["--hud"]].concat(), "hud.png");
    let _ = std::fs::remove_dir_all(&folder);
    assert_overlay_only_in_panels(&plain, &hud);
}

/// The stress world moves, spawns and despawns by its frame count alone, so two windowed runs
/// of as many frames draw the same picture but for the overlay.
#[test]
fn the_stress_world_shows_the_overlay_in_its_window_too() {
    if !can_run() {
        return;
    }
    let folder = temporary("window_hud", "stress");
    let stress = env!("CARGO_BIN_EXE_stress");
    let arguments = ["--objects", "2000", "--churn", "50"];
    let plain = windowed(stress, &folder, &arguments, "plain.png");
    let hud = windowed(stress, &folder, &[&arguments[..], &["--hud"]].concat(), "hud.png");
    let _ = std::fs::remove_dir_all(&folder);
    assert_overlay_only_in_panels(&plain, &hud);
}

/// The tower-defence game runs on a fixed step from a fixed seed (its follow camera too), so
/// two windowed runs of as many frames draw the same game but for the overlay; the window
/// draws the walkers at all (red grunts over the green ground and the blue sky).
#[test]
fn the_tower_defence_game_is_drawn_in_a_window_with_the_overlay() {
    if !can_run() {
        return;
    }
    let folder = temporary("window_hud", "tower_defence");
    let game = env!("CARGO_BIN_EXE_tower_defence");
    let plain = windowed(game, &folder, &[], "plain.png");
    let hud = windowed(game, &folder, &["--hud"], "hud.png");
    let _ = std::fs::remove_dir_all(&folder);
    let red = |pixel: &[u8]| pixel[0] > pixel[1].saturating_add(40) && pixel[0] > pixel[2].saturating_add(40);
    let grunts = plain.chunks_exact(4).filter(|pixel| red(pixel)).count();
    assert!(grunts > 500, "the enemies are drawn: {grunts} red pixels");
    assert_overlay_only_in_panels(&plain, &hud);
}
