//! Cluster culling in the city on lavapipe with validation: over 20 cameras of the demo's
//! flight, every meshlet owning a pixel of the unculled meshlet-id image is drawn
//! (`false_hidden_meshlets 0`), the images with and without cluster culling are identical,
//! the occlusion test rejects meshlets, and `--classify` writes the meshlet view. (The
//! city's low-poly meshes give meshopt cones too wide to reject from the street, so cone
//! rejects are printed, not required; `tests/tests/cluster_truth.rs` requires them.) With
//! `--lod-rule error` the cluster frames' records name their chains and the GPU chooses every
//! level: the images and the meshlet truth still hold.

use std::path::PathBuf;
use std::process::Command;

use render_graph::testing::gpu_test_context;

/// The numbers of a `cluster cull:` line: meshlets, after objects, after frustum, after
/// cone, after occlusion.
fn funnel(line: &str) -> Vec<u64> {
    let body = line.trim_start_matches("cluster cull: ");
    body.split(", ").take(5).filter_map(|part| part.split_whitespace().next()?.parse().ok()).collect()
}

#[test]
fn twenty_city_cameras_hide_no_meshlet_that_owns_a_pixel() {
    if gpu_test_context().is_none() {
        return;
    }
    let folder: PathBuf = std::env::temp_dir().join(format!("city-clusters-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).expect("a temporary folder");
    let output = Command::new(env!("CARGO_BIN_EXE_city"))
        .args(["--cull", "gpu", "--clusters", "--truth", "--classify", "--validate", "--frames", "20"])
        .args(["--objects", "1000", "--size", "160x100", "--render", "every", "--png-every", "10"])
        .arg("--out")
        .arg(&folder)
        .output()
        .expect("the demo starts");
    let meshlet_view = folder.join("frame-000010-meshlets.png").exists();
    let _ = std::fs::remove_dir_all(&folder);
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{text}");
    let lines: Vec<&str> = text.lines().filter(|line| line.starts_with("cluster cull: ")).collect();
    assert_eq!(lines.len(), 20, "one cluster line per camera:\n{text}");
    let (mut cone, mut occlusion) = (0, 0);
    for line in &lines {
        assert!(line.contains("culled vs unculled: identical images"), "{line}");
        assert!(line.contains("false_hidden_meshlets 0"), "{line}");
        let numbers = funnel(line);
        assert_eq!(numbers.len(), 5, "{line}");
        cone += numbers[2] - numbers[3];
        occlusion += numbers[3] - numbers[4];
    }
    assert!(occlusion > 0, "occlusion rejects {occlusion} over 20 cameras");
    println!("over 20 city cameras: cone rejects {cone}, occlusion rejects {occlusion}");
    assert!(meshlet_view, "--classify wrote no meshlet view:\n{text}");
}

#[test]
fn city_cluster_frames_of_the_error_rule_choose_levels_on_the_gpu() {
    if gpu_test_context().is_none() {
        return;
    }
    let folder: PathBuf = std::env::temp_dir().join(format!("city-cluster-chains-{}", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_city"))
        .args(["--cull", "gpu", "--clusters", "--truth", "--validate", "--frames", "20", "--lod-rule", "error"])
        .args(["--objects", "1000", "--size", "160x100", "--render", "every", "--out"])
        .arg(&folder)
        .output()
        .expect("the demo starts");
    let _ = std::fs::remove_dir_all(&folder);
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{text}");
    let lines: Vec<&str> = text.lines().filter(|line| line.starts_with("cluster cull: ")).collect();
    assert_eq!(lines.len(), 20, "one cluster line per camera:\n{text}");
    for line in &lines {
        assert!(line.contains("culled vs unculled: identical images"), "{line}");
        assert!(line.contains("false_hidden_meshlets 0"), "{line}");
        let chained = line.split("levels chosen on the GPU for ").nth(1).and_then(|rest| rest.split(' ').next());
        let chained: usize = chained.and_then(|count| count.parse().ok()).unwrap_or(0);
        assert!(chained > 0, "the records name their chains: {line}");
    }
    // Coarser levels than the finest were drawn (the summary's rows of the CPU's levels).
    let coarse = text.lines().find(|line| line.starts_with("cpu lod level 3+")).expect("a level row");
    let median: u64 = coarse.split_whitespace().nth(4).and_then(|value| value.parse().ok()).unwrap_or(0);
    assert!(median > 0, "coarse levels were chosen: {coarse}");
}
