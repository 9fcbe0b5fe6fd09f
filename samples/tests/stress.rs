//! The stress scene's command line: `--truth` on both culling backends prints, for every
//! drawn frame, `false_hidden 0`, identical culled and unculled images and `scene_mismatches
//! 0`, and writes `stress.png` and `stats.json`; bad options are clear errors.

use std::process::{Command, Output};

use render_graph::testing::gpu_test_context;

mod common;
use common::{read_png, temporary};

fn stress(folder: &std::path::Path, arguments: &[&str]) -> (Output, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_stress"))
        .args(arguments)
        .args(["--out", folder.to_str().expect("a UTF-8 path")])
        .output()
        .expect("the stress scene starts");
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    (output, text)
}

#[test]
fn every_frame_of_the_stress_scene_is_truthful_on_both_backends() {
    if gpu_test_context().is_none() {
        return;
    }
    for cull in ["gpu", "cpu"] {
        let folder = temporary("stress", cull);
        let frames = 8;
        let arguments = [
            "--objects",
            "4000",
            "--moving",
            "0.3",
            "--churn",
            "120",
            "--frames",
            "8",
            "--size",
            "128x72",
            "--cull",
            cull,
            "--truth",
            "--validate",
            "--threads",
            "2",
        ];
        let (output, text) = stress(&folder, &arguments);
        assert!(output.status.success(), "{cull}: {text}");
        let count = |needle: &str| text.lines().filter(|line| line.contains(needle)).count();
        assert_eq!(count("false_hidden 0"), frames, "{cull}: every frame's truth: {text}");
        assert_eq!(count("scene_mismatches 0"), frames, "{cull}: every frame's GPU scene: {text}");
        assert_eq!(count("culling on vs off: identical images"), frames, "{cull}: {text}");
        assert!(text.contains(if cull == "gpu" { "culling: GPU" } else { "culling: CPU" }), "{cull}: {text}");
        let stats = std::fs::read_to_string(folder.join("stats.json")).expect("stats.json is written");
        let stats: serde_json::Value = serde_json::from_str(&stats).expect("valid JSON");
        assert_eq!(stats["frames"].as_array().map(Vec::len), Some(frames), "{cull}");
        let (width, height, _) = read_png(&folder.join("stress.png"));
        assert_eq!((width, height), (128, 72), "{cull}: the last frame's image");
        let _ = std::fs::remove_dir_all(&folder);
    }
}

#[test]
fn bad_options_are_named() {
    let folder = temporary("stress", "bad");
    for bad in [&["--moving", "1.5"][..], &["--objects", "10"], &["--size", "0x4"], &["--cull", "fast"]] {
        let (output, text) = stress(&folder, bad);
        assert!(!output.status.success(), "{bad:?} was accepted: {text}");
        assert!(text.contains(bad[0]) || text.contains(bad[1]), "{bad:?}: the error names the option: {text}");
    }
    let _ = std::fs::remove_dir_all(&folder);
}

#[test]
fn the_stress_scene_runs_without_a_renderer() {
    // `--render none` culls on the CPU and draws nothing, whatever device the machine has.
    let folder = temporary("stress", "none");
    let arguments = ["--objects", "3000", "--churn", "100", "--frames", "6", "--render", "none", "--cull", "cpu"];
    let (output, text) = stress(&folder, &arguments);
    assert!(output.status.success(), "{text}");
    let stats = std::fs::read_to_string(folder.join("stats.json")).expect("stats.json is written");
    let stats: serde_json::Value = serde_json::from_str(&stats).expect("valid JSON");
    assert_eq!(stats["frames"].as_array().map(Vec::len), Some(6));
    let _ = std::fs::remove_dir_all(&folder);
}
