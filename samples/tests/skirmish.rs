//! The skirmish's command line: a small skirmish runs headless beside the city and prints the
//! side-by-side table and its invariants (the volleys' spawns and despawns, every child on its
//! parent); with a device, `--truth` on both culling backends prints `false_hidden 0` and
//! `dropped_casters 0` for every frame, shadows included; bad options are clear errors.

use std::process::{Command, Output};

use render_graph::testing::gpu_test_context;

mod common;
use common::{read_png, temporary};

fn skirmish(folder: &std::path::Path, arguments: &[&str]) -> (Output, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_skirmish"))
        .args(arguments)
        .args(["--out", folder.to_str().expect("a UTF-8 path")])
        .output()
        .expect("the skirmish starts");
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    (output, text)
}

/// A skirmish of 5,000 objects: 100 units (4 with torches), 20 arrows a frame living 5 frames.
const SMALL: [&str; 12] = [
    "--objects",
    "5000",
    "--units",
    "100",
    "--torches",
    "4",
    "--volley",
    "20",
    "--arrow-frames",
    "5",
    "--threads",
    "2",
];

#[test]
fn a_small_skirmish_runs_beside_the_city_and_keeps_its_invariants() {
    let folder = temporary("skirmish", "headless");
    let frames = 10;
    let mut arguments = SMALL.to_vec();
    arguments.extend(["--frames", "10", "--render", "none", "--cull", "cpu", "--turns", "4", "--report-every", "5"]);
    let (output, text) = skirmish(&folder, &arguments);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("skirmish: 5000 mesh entities"), "{text}");
    // Each frame after the muster fires 20 arrows and despawns the 20 oldest: 100 fly at once.
    let fired = 100 + 20 * (frames - 1);
    let invariants = format!(
        "invariants: {frames} frames: {fired} arrows fired and {} despawned, 100 in flight; 100 units on their rounds, every child on its parent",
        fired - 100
    );
    assert!(text.contains(&invariants), "expected '{invariants}': {text}");
    let row = |name: &str| {
        text.lines()
            .find(|line| line.strip_prefix(name).is_some_and(|rest| rest.starts_with(' ')))
            .unwrap_or_else(|| panic!("no {name} row: {text}"))
    };
    for stage in ["frame", "stage Transform", "stage Visibility"] {
        let cells: Vec<&str> = row(stage).split_whitespace().collect();
        assert!(cells.last().is_some_and(|ratio| ratio.ends_with('x')), "{stage}: the ratio to the city: {text}");
    }
    assert!(row("stage Skirmish").contains(" - "), "the city has no skirmish stage: {text}");
    assert!(row("system Visibility/culling::shadow_views").len() > 40, "{text}");
    assert!(text.contains("shadow work per frame: "), "what the shadow views redid: {text}");
    // How the default budget of 24 views was shared among the torches.
    let budget = text.lines().find(|line| line.starts_with("shadow budget per frame: ")).expect("a budget line");
    assert!(budget.contains("(budget 24)"), "{budget}");
    for (file, count) in [("stats.json", frames), ("city-stats.json", frames)] {
        let stats = std::fs::read_to_string(folder.join(file)).expect("the stats are written");
        let stats: serde_json::Value = serde_json::from_str(&stats).expect("valid JSON");
        assert_eq!(stats["frames"].as_array().map(Vec::len), Some(count), "{file}");
    }
    let _ = std::fs::remove_dir_all(&folder);
}

/// A skirmish small enough for a software rasteriser to draw every light view's truth: 1,200
/// objects, 30 units (2 with torches: a sun's cascades and twelve cube faces), 5 arrows a frame.
const TINY: [&str; 14] = [
    "--objects",
    "1200",
    "--units",
    "30",
    "--torches",
    "2",
    "--volley",
    "5",
    "--arrow-frames",
    "3",
    "--threads",
    "2",
    "--city",
    "off",
];

#[test]
fn every_frame_of_a_small_skirmish_is_truthful_on_both_backends() {
    if gpu_test_context().is_none() {
        return;
    }
    for cull in ["gpu", "cpu"] {
        let folder = temporary("skirmish", cull);
        let frames = 3;
        let mut arguments = TINY.to_vec();
        arguments.extend(["--frames", "3", "--size", "96x54", "--cull", cull, "--truth", "--validate"]);
        let (output, text) = skirmish(&folder, &arguments);
        assert!(output.status.success(), "{cull}: {text}");
        let count = |needle: &str| text.lines().filter(|line| line.contains(needle)).count();
        assert_eq!(count("false_hidden 0"), frames, "{cull}: every frame's truth: {text}");
        assert_eq!(count("dropped_casters 0"), frames, "{cull}: every frame's light views: {text}");
        assert_eq!(count("culling on vs off: identical images"), frames, "{cull}: {text}");
        assert!(text.contains(if cull == "gpu" { "culling: GPU" } else { "culling: CPU" }), "{cull}: {text}");
        let (width, height, _) = read_png(&folder.join("skirmish.png"));
        assert_eq!((width, height), (96, 54), "{cull}: the last frame's image");
        let _ = std::fs::remove_dir_all(&folder);
    }
}

#[test]
fn bad_options_are_named() {
    let folder = temporary("skirmish", "bad");
    for bad in [&["--objects", "10"][..], &["--torches", "40"], &["--still", "trees"], &["--cull", "fast"]] {
        let (output, text) = skirmish(&folder, bad);
        assert!(!output.status.success(), "{bad:?} was accepted: {text}");
        assert!(text.contains(bad[0]) || text.contains(bad[1]), "{bad:?}: the error names the option: {text}");
    }
    let (output, text) = skirmish(&folder, &["--objects", "2000", "--units", "1000"]);
    assert!(!output.status.success() && text.contains("no room for props"), "{text}");
    let _ = std::fs::remove_dir_all(&folder);
}
