//! `city --stream`: a short flight that loads districts from their .glb files while frames run
//! and removes them after a cut across the city, on both culling backends, with the truth
//! and validation: nothing that shows is hidden, and the resident mesh bytes stay within the
//! budget on every frame. The same flight in a window (`--window`, under Xvfb) loads its
//! districts between the window's frames.

use std::process::Command;

use render_graph::testing::gpu_test_context;

/// The samples' test helpers (`temporary`).
#[allow(dead_code)]
mod common;
use common::temporary;

/// The flight: near one corner of the city, then a cut to the opposite one.
const PATH: &str = r#"{"keyframes":[{"frame":0,"position":[20,30,20],"yaw":45,"pitch":-30,"fov":60},
 {"frame":12,"position":[40,30,40],"yaw":45,"pitch":-30,"fov":60},
 {"frame":13,"position":[300,30,300],"yaw":-135,"pitch":-30,"fov":60},
 {"frame":40,"position":[280,30,280],"yaw":-135,"pitch":-30,"fov":60}]}"#;

/// The streamed flight both tests run: districts within 60 m loaded under a 1.5 MiB budget,
/// each frame waiting for the districts asked for before it (the same flight on any machine).
const FLIGHT: [&str; 10] =
    ["--stream", "--stream-wait", "--budget", "1.5", "--stream-radius", "60", "--objects", "1000", "--frames", "24"];

/// The budget, bytes (`--budget 1.5`).
const BUDGET: u64 = 3 << 19;

/// The numbers after `name` on the summary's `stream:` lines.
fn stream_value(text: &str, name: &str) -> u64 {
    text.lines()
        .filter(|line| line.starts_with("stream: "))
        .find_map(|line| line.split_once(name).and_then(|(_, rest)| rest.split_whitespace().next()?.parse().ok()))
        .unwrap_or_else(|| panic!("no '{name}' in the summary:\n{text}"))
}

#[test]
fn streamed_districts_load_and_leave_within_the_budget_and_culling_hides_nothing() {
    if gpu_test_context().is_none() {
        return;
    }
    let folder = temporary("city-stream", "flight");
    let path = folder.join("path.json");
    std::fs::write(&path, PATH).expect("the path is written");
    for backend in ["cpu", "gpu"] {
        let output = Command::new(env!("CARGO_BIN_EXE_city"))
            .args(FLIGHT)
            .args(["--size", "96x64", "--render", "every", "--truth", "--validate", "--threads", "2"])
            .args(["--cull", backend])
            .arg("--stream-dir")
            .arg(folder.join("districts"))
            .arg("--camera-path")
            .arg(&path)
            .current_dir(&folder)
            .output()
            .expect("the demo starts");
        let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{backend}: {text}");
        let hidden: Vec<&str> = text.lines().filter(|line| line.contains(" false_hidden ")).collect();
        assert_eq!(hidden.len(), 24, "{backend}: a truth line per frame:\n{text}");
        assert!(hidden.iter().all(|line| line.ends_with(" false_hidden 0")), "{backend}: {hidden:?}");
        let resident: Vec<u64> = text
            .lines()
            .filter_map(|line| line.split_once(" resident_bytes ")?.1.split_whitespace().next()?.parse().ok())
            .collect();
        assert_eq!(resident.len(), 24, "{backend}: a residency line per frame:\n{text}");
        assert!(resident.iter().all(|&bytes| bytes <= BUDGET), "{backend}: over the budget: {resident:?}");
        assert!(stream_value(&text, "districts loaded ") >= 4, "{backend}: {text}");
        assert!(stream_value(&text, "removed ") >= 1, "{backend}: the cut leaves districts behind: {text}");
        assert_eq!(stream_value(&text, "frames over budget "), 0, "{backend}: {text}");
    }
    let _ = std::fs::remove_dir_all(&folder);
}

/// `--stream --window`: the districts load between the window's frames as they do headless,
/// validation stays silent and the last frame is presented. Without `xvfb-run` the test
/// skips, unless `ENGINE_REQUIRE_VULKAN=1`, where it fails.
#[test]
fn streamed_districts_load_between_the_window_frames() {
    if gpu_test_context().is_none() {
        return;
    }
    let has_xvfb = Command::new("xvfb-run").arg("--help").output().is_ok_and(|output| output.status.success());
    if !has_xvfb {
        let required = std::env::var("ENGINE_REQUIRE_VULKAN").is_ok_and(|value| value == "1");
        assert!(!required, "ENGINE_REQUIRE_VULKAN=1 but xvfb-run is missing (apt-get install xvfb xauth)");
        return;
    }
    let folder = temporary("city-stream", "window");
    std::fs::write(folder.join("path.json"), PATH).expect("the path is written");
    for backend in ["cpu", "gpu"] {
        let shot = format!("shot-{backend}.png");
        let output = Command::new("xvfb-run")
            .args(["-a", "-s", "-screen 0 1024x768x24", env!("CARGO_BIN_EXE_city"), "--window"])
            .args(FLIGHT)
            .args(["--size", "160x96", "--validate", "--threads", "2", "--cull", backend])
            .args(["--camera-path", "path.json", "--stream-dir", "districts", "--screenshot", &shot])
            .current_dir(&folder)
            .output()
            .expect("xvfb-run starts");
        let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{backend}: {text}");
        assert!(!text.contains("validation"), "{backend}: {text}");
        assert!(text.contains("window: 24 frames"), "{backend}: {text}");
        assert!(stream_value(&text, "districts loaded ") >= 1, "{backend}: {text}");
        assert_eq!(stream_value(&text, "frames over budget "), 0, "{backend}: {text}");
        assert!(folder.join(&shot).is_file(), "{backend}: {text}");
    }
    let _ = std::fs::remove_dir_all(&folder);
}
