//! The demo's command line as other tools use it: the contract's options, camera paths,
//! every-frame rendering with PNGs, and clear errors for bad input.

use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use render_graph::testing::gpu_test_context;

mod common;
use common::{read_png, temporary};

/// Runs the demo in a fresh temporary folder (its default `--out` is the current folder).
fn city(arguments: &[&str]) -> (Output, String) {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let folder = temporary("city", &format!("run-{}", RUNS.fetch_add(1, Ordering::Relaxed)));
    let output = Command::new(env!("CARGO_BIN_EXE_city"))
        .args(arguments)
        .current_dir(&folder)
        .output()
        .expect("the demo starts");
    let _ = std::fs::remove_dir_all(&folder);
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    (output, text)
}

#[test]
fn prints_bounds_and_blocks_and_follows_a_camera_path() {
    let folder = temporary("city", "path");
    let path = folder.join("path.json");
    // Above the city looking straight down, then a cut to street level.
    std::fs::write(
        &path,
        r#"{"keyframes":[{"frame":0,"position":[100,200,100],"yaw":0,"pitch":-89,"fov":60},
                         {"frame":3,"position":[100,200,100],"yaw":0,"pitch":-89,"fov":60},
                         {"frame":4,"position":[-6,1.8,300],"yaw":0,"pitch":0,"fov":60}]}"#,
    )
    .expect("the path is written");
    let (output, text) = city(&[
        "--frames",
        "6",
        "--objects",
        "1000",
        "--size",
        "96x64",
        "--render",
        "none",
        "--report-every",
        "1",
        "--camera-path",
        path.to_str().expect("a UTF-8 path"),
    ]);
    let _ = std::fs::remove_dir_all(&folder);
    assert!(output.status.success(), "{text}");
    let bounds = text.lines().find(|line| line.starts_with("city bounds: min ")).expect("a bounds line");
    let numbers: Vec<f32> = bounds.split_whitespace().filter_map(|word| word.parse().ok()).collect::<Vec<_>>();
    assert_eq!(numbers.len(), 6, "{bounds}");
    assert!(numbers[1] < 0.0 && numbers[1] > -1.0 && numbers[4] > 10.0, "ground at y = 0: {bounds}");
    assert!(text.contains("city blocks: 6 x 6 of 40 m, streets 12 m wide"), "{text}");
    // The report's second column is the camera height: 200 m until the cut, 1.8 after it.
    let heights: Vec<f32> = text
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let frame: u64 = words.next()?.parse().ok()?;
            Some((frame, words.next()?.parse::<f32>().ok()?))
        })
        .map(|(_, height)| height)
        .collect();
    assert_eq!(heights.len(), 6, "{text}");
    assert!(heights[..3].iter().all(|&height| (height - 200.0).abs() < 0.01), "{heights:?}");
    assert!((heights[5] - 1.8).abs() < 0.01, "{heights:?}");
}

#[test]
fn a_malformed_camera_path_is_an_error_naming_the_line() {
    let folder = temporary("city", "bad-path");
    let path = folder.join("bad.json");
    std::fs::write(
        &path,
        "{\"keyframes\":[\n  {\"frame\":0,\"position\":[0,2,0]},\n  {\"frame\":1 \"position\":[0,2,0]}\n]}",
    )
    .expect("the path is written");
    let (output, text) =
        city(&["--frames", "1", "--objects", "1000", "--render", "none", "--camera-path", path.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&folder);
    assert!(!output.status.success(), "{text}");
    assert!(text.contains("bad.json: line 3, column"), "{text}");
}

#[test]
fn bad_options_are_errors_and_help_explains_the_contract() {
    let (output, text) = city(&["--size", "640by360"]);
    assert!(!output.status.success() && text.contains("--size"), "{text}");
    let (output, text) = city(&["--help"]);
    assert!(output.status.success(), "{text}");
    for option in [
        "--frames",
        "--size",
        "--objects",
        "--seed",
        "--threads",
        "--cull",
        "--occlusion",
        "--camera-path",
        "--truth",
        "--classify",
        "--validate",
        "--out",
        "--window",
        "--render",
        "--png-every",
    ] {
        assert!(text.contains(option), "--help lacks {option}:\n{text}");
    }
}

#[test]
fn renders_every_frame_and_writes_pngs_when_asked() {
    if gpu_test_context().is_none() {
        return;
    }
    let folder = temporary("city", "every");
    let out = folder.join("images");
    // The CPU culler: `drawn` must equal the stage's `visible` (the GPU path has its own test).
    let (output, text) = city(&[
        "--cull",
        "cpu",
        "--frames",
        "4",
        "--objects",
        "1000",
        "--size",
        "96x64",
        "--render",
        "every",
        "--png-every",
        "2",
        "--validate",
        "--out",
        out.to_str().expect("a UTF-8 path"),
    ]);
    let mut written: Vec<String> = std::fs::read_dir(&out)
        .map(|entries| entries.filter_map(|entry| entry.ok()?.file_name().into_string().ok()).collect())
        .unwrap_or_default();
    written.sort();
    let stats = std::fs::read_to_string(out.join("stats.json")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&folder);
    assert!(output.status.success(), "{text}");
    let drawn = text.lines().filter(|line| line.starts_with("render: frame ")).count();
    assert_eq!(drawn, 4, "every frame is drawn:\n{text}");
    assert_eq!(text.matches("identical images").count(), 4, "{text}");
    assert_eq!(written, ["city.png", "frame-000000.png", "frame-000002.png", "stats.json"], "{text}");
    let stats: serde_json::Value = serde_json::from_str(&stats).expect("stats.json is JSON");
    let frames = stats["frames"].as_array().expect("a list of frames");
    assert_eq!(frames.len(), 4, "{stats}");
    for (index, frame) in frames.iter().enumerate() {
        assert_eq!(frame["frame"], index as u64, "{frame}: frames by their FrameTime::frame_index");
        assert_eq!(frame["drawn"], frame["visible"], "{frame}");
        assert_eq!(frame["differing_pixels"], 0, "{frame}");
        assert!(frame["uploaded_bytes"].as_u64().is_some_and(|bytes| bytes > 0), "{frame}");
        assert!(frame["stage_ms"]["Visibility"].as_f64().is_some(), "{frame}");
        assert!(frame["system_ms"]["Input/traffic"].as_f64().is_some(), "{frame}");
    }
    for row in [
        "cpu ms stage Visibility",
        "cpu ms system Input/camera path",
        "frustum rejects",
        "occluded",
        "triangles",
        "bytes uploaded",
    ] {
        assert!(text.lines().any(|line| line.starts_with(row)), "the summary table lacks {row}:\n{text}");
    }
}

#[test]
fn gpu_culling_draws_every_frame_identically_and_its_truth_hides_nothing() {
    if gpu_test_context().is_none() {
        return;
    }
    let folder = temporary("city", "gpu");
    let (output, text) = city(&[
        "--cull",
        "gpu",
        "--frames",
        "3",
        "--objects",
        "1000",
        "--size",
        "96x64",
        "--render",
        "every",
        "--truth",
        "--validate",
        "--out",
        folder.to_str().expect("a UTF-8 path"),
    ]);
    let stats = std::fs::read_to_string(folder.join("stats.json")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&folder);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("culling: GPU (two-phase Hi-Z)"), "{text}");
    assert_eq!(text.lines().filter(|line| line.starts_with("gpu cull: ")).count(), 3, "{text}");
    assert_eq!(text.matches("identical images").count(), 3, "{text}");
    assert_eq!(text.lines().filter(|line| line.ends_with("false_hidden 0")).count(), 3, "{text}");
    let stats: serde_json::Value = serde_json::from_str(&stats).expect("stats.json is JSON");
    for frame in stats["frames"].as_array().expect("a list of frames") {
        assert_eq!(frame["false_hidden"], 0, "{frame}");
        assert!(frame["uploaded_bytes"].as_u64().is_some(), "{frame}");
    }
}

/// `--shadows --truth` on both backends: every drawn frame equals the reference that draws
/// every caster into every light view, no culled caster owns a texel of a light view, and
/// the `shadows:` line counts what each view kept (a sun's four cascades, four lamps).
#[test]
fn shadows_culled_per_light_view_drop_no_caster_on_either_backend() {
    if gpu_test_context().is_none() {
        return;
    }
    for cull in ["gpu", "cpu"] {
        let arguments = ["--cull", cull, "--frames", "3", "--objects", "1000", "--size", "128x72", "--render", "every"];
        let (output, text) = city(&[&arguments[..], &["--truth", "--validate", "--shadows"]].concat());
        assert!(output.status.success(), "{cull}: {text}");
        assert_eq!(text.matches("identical images").count(), 3, "{cull}: {text}");
        assert_eq!(text.lines().filter(|line| line.ends_with("dropped_casters 0")).count(), 3, "{cull}: {text}");
        assert_eq!(text.lines().filter(|line| line.ends_with("false_hidden 0")).count(), 3, "{cull}: {text}");
        let shadows: Vec<&str> = text.lines().filter(|line| line.starts_with("shadows: frame ")).collect();
        assert_eq!(shadows.len(), 3, "{cull}: {text}");
        let device = if cull == "gpu" { "GPU" } else { "CPU" };
        for line in shadows {
            assert!(line.contains(&format!("8 views culled on the {device}")), "{line}");
            assert!(line.contains("c0 ") && line.contains("spot "), "{line}");
        }
        // The budget line names the four lamps that cast, four views of the budget's 24.
        let budgets =
            text.lines().filter(|line| line.contains(" shadowed lights 4 of ") && line.contains(", views 4 of 24 "));
        assert_eq!(budgets.count(), 3, "{cull}: {text}");
    }
    // Without culling every view draws every caster, and the counts say so.
    let (output, text) =
        city(&["--frames", "1", "--objects", "1000", "--size", "64x36", "--shadows", "--shadow-culling", "off"]);
    assert!(output.status.success(), "{text}");
    let line = text.lines().find(|line| line.starts_with("shadows: frame ")).expect("a shadows line");
    let counts: Vec<(u32, u32)> = line
        .split("per view: ")
        .nth(1)
        .expect("per-view counts")
        .split(", ")
        .map(|view| {
            let (kept, tested) = view.split_whitespace().nth(1).and_then(|pair| pair.split_once('/')).expect("k/n");
            (kept.parse().expect("a count"), tested.parse().expect("a count"))
        })
        .collect();
    assert!(!counts.is_empty() && counts.iter().all(|(kept, tested)| kept == tested), "{line}");
}

/// The frame's `false_hidden`/`efficiency` lines and the `objects with pixels` summary row.
fn truth_of(text: &str) -> (Vec<u64>, Vec<f64>, String) {
    let value = |line: &str| line.split_whitespace().nth(3).map(String::from);
    let hidden = text
        .lines()
        .filter(|line| line.contains(" false_hidden "))
        .filter_map(|line| value(line)?.parse().ok())
        .collect();
    let efficiency = text
        .lines()
        .filter(|line| line.contains(" efficiency "))
        .filter_map(|line| value(line)?.parse().ok())
        .collect();
    let with_pixels = text.lines().find(|line| line.starts_with("objects with pixels")).unwrap_or_default().to_string();
    (hidden, efficiency, with_pixels)
}

#[test]
fn truth_counts_objects_with_pixels_the_same_with_culling_on_and_off() {
    if gpu_test_context().is_none() {
        return;
    }
    let run = |cull: &str| {
        city(&[
            "--frames",
            "3",
            "--objects",
            "1000",
            "--size",
            "128x72",
            "--render",
            "every",
            "--truth",
            "--validate",
            "--cull",
            cull,
        ])
    };
    let (culled, culled_text) = run("cpu");
    let (all, all_text) = run("off");
    assert!(culled.status.success(), "{culled_text}");
    assert!(all.status.success(), "{all_text}");
    let (hidden, efficiency, with_pixels) = truth_of(&culled_text);
    assert_eq!(hidden, [0, 0, 0], "{culled_text}");
    assert_eq!(efficiency.len(), 3, "{culled_text}");
    assert!(efficiency.iter().all(|&value| value > 0.0 && value <= 1.0), "{efficiency:?}");
    let (hidden_off, efficiency_off, with_pixels_off) = truth_of(&all_text);
    assert_eq!(hidden_off, [0, 0, 0], "{all_text}");
    // The truth does not depend on culling; with culling off everything drawable is
    // submitted, so the share of submitted objects with pixels drops.
    assert!(!with_pixels.is_empty() && with_pixels == with_pixels_off, "{with_pixels} vs {with_pixels_off}");
    assert!(efficiency_off.iter().zip(&efficiency).all(|(off, on)| off < on), "{efficiency_off:?} vs {efficiency:?}");
}

#[test]
fn classify_writes_the_verdicts_next_to_the_normal_image() {
    if gpu_test_context().is_none() {
        return;
    }
    let folder = temporary("city", "classify");
    let (output, text) = city(&[
        "--frames",
        "2",
        "--objects",
        "1000",
        "--size",
        "96x64",
        "--classify",
        "--validate",
        "--out",
        folder.to_str().expect("a UTF-8 path"),
    ]);
    assert!(output.status.success(), "{text}");
    let (width, height, normal) = read_png(&folder.join("city.png"));
    let (both_width, both_height, both) = read_png(&folder.join("city-classify.png"));
    let _ = std::fs::remove_dir_all(&folder);
    assert_eq!((both_width, both_height), (width * 2, height));
    let row = width as usize * 4;
    let halves: Vec<(&[u8], &[u8])> = both.chunks_exact(row * 2).map(|line| line.split_at(row)).collect();
    let left: Vec<u8> = halves.iter().flat_map(|(left, _)| left.iter().copied()).collect();
    assert!(left == normal, "the left half is the normal image");
    // At street level most of what the camera sees was submitted: the right half is mostly
    // the verdict green (shaded), with the sky where nothing is.
    let green = halves
        .iter()
        .flat_map(|(_, right)| right.chunks_exact(4))
        .filter(|pixel| pixel[1] > pixel[0].saturating_add(40) && pixel[1] > pixel[2].saturating_add(40))
        .count();
    assert!(green > (width * height / 4) as usize, "{green} green pixels of {}", width * height);
}

/// The `tags±` column (tag changes per frame) of the report lines.
fn tag_changes(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            words.first()?.parse::<u64>().ok()?;
            words.get(8)?.parse().ok()
        })
        .collect()
}

#[test]
fn memory_is_reported_and_the_default_tag_policy_moves_only_marked_entities() {
    let folder = temporary("city", "memory");
    let out = folder.join("out");
    let arguments = ["--frames", "110", "--objects", "1000", "--render", "none", "--report-every", "1", "--out"];
    let (output, text) = city(&[&arguments[..], &[out.to_str().expect("a UTF-8 path")]].concat());
    let stats = std::fs::read_to_string(out.join("stats.json")).unwrap_or_default();
    let (all_output, all_text) =
        city(&[&arguments[..], &[out.to_str().expect("a UTF-8 path"), "--tags", "all"]].concat());
    let _ = std::fs::remove_dir_all(&folder);
    assert!(output.status.success() && all_output.status.success(), "{text}\n{all_text}");

    let (marked, all) = (tag_changes(&text), tag_changes(&all_text));
    assert_eq!((marked.len(), all.len()), (110, 110), "{text}");
    // Only the pedestrians are marked (their animation is posed while in view), so only
    // they move between tag archetypes, and far fewer than every entity with `--tags all`.
    let pedestrians = text
        .lines()
        .find_map(|line| {
            line.strip_prefix("city: ")?.split(" pedestrians").next()?.rsplit(' ').next()?.parse::<u64>().ok()
        })
        .expect("the city line counts its pedestrians");
    assert!(marked.iter().all(|&changes| changes <= pedestrians), "only pedestrians are marked: {marked:?}");
    assert!(all.iter().sum::<u64>() > 0, "with --tags all the flight changes tags: {all:?}");
    assert!(marked.iter().sum::<u64>() < all.iter().sum::<u64>(), "marked {marked:?} against all {all:?}");

    let line = text.lines().find(|line| line.starts_with("memory: ")).expect("a memory line");
    let stats: serde_json::Value = serde_json::from_str(&stats).expect("stats.json is JSON");
    let memory = &stats["memory"];
    assert_eq!(memory["last_frame"], 110, "{memory}");
    if cfg!(target_os = "linux") {
        assert!(
            line.contains("at frame 100 ") && line.contains("at frame 110 ") && !line.contains("unavailable"),
            "{line}"
        );
        let bytes = |field: &str| memory[field].as_u64().unwrap_or_else(|| panic!("{field} in {memory}"));
        assert!(bytes("after_setup_bytes") > 0 && bytes("frame_100_bytes") > 0, "{memory}");
        assert!(bytes("last_frame_bytes") <= bytes("peak_bytes"), "{memory}");
    } else {
        assert!(line.contains("unavailable"), "{line}");
    }
}

/// With `--render last` the memory line also reads the last frame the GPU did not draw, so
/// the steady state is on the line beside the reading after the driver's first draws.
#[test]
fn the_memory_line_reads_the_last_frame_not_drawn_before_the_drawn_ones() {
    if gpu_test_context().is_none() || !cfg!(target_os = "linux") {
        return;
    }
    let folder = temporary("city", "memory-drawn");
    let arguments = ["--frames", "6", "--objects", "1000", "--size", "64x48", "--render", "last", "--out"];
    let (output, text) = city(&[&arguments[..], &[folder.to_str().expect("a UTF-8 path")]].concat());
    let stats = std::fs::read_to_string(folder.join("stats.json")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&folder);
    assert!(output.status.success(), "{text}");
    let line = text.lines().find(|line| line.starts_with("memory: ")).expect("a memory line");
    // Frames 4 to 6 are drawn (`--render last` draws the two before the last too).
    assert!(line.contains(", at frame 3 (the last not drawn) ") && line.contains(", at frame 6 "), "{line}");
    let stats: serde_json::Value = serde_json::from_str(&stats).expect("stats.json is JSON");
    let before = &stats["memory"]["before_drawing"];
    assert_eq!(before[0], 3, "{before}");
    assert!(before[1].as_u64().is_some_and(|bytes| bytes > 0), "{before}");
}

/// Users' passes inside the engine's frame: fog and outlines after the geometry (both culling
/// backends), and with GPU culling boxes coloured by the GPU's bits and objects bobbed on the
/// GPU before the cull. Every drawn frame matches the CPU's computation of each pass, and the
/// colour the geometry drew matches the unculled reference pixel for pixel.
#[test]
fn users_frame_passes_match_the_cpu_and_keep_culled_and_unculled_frames_identical() {
    if gpu_test_context().is_none() {
        return;
    }
    let size = ["--frames", "3", "--objects", "2000", "--size", "96x64", "--render", "every", "--truth"];
    let runs: [(&str, &[&str]); 3] = [
        ("gpu", &["--post", "fog,outline"]),
        ("cpu", &["--post", "fog,outline"]),
        ("gpu", &["--post", "fog", "--debug-boxes", "--gpu-animate"]),
    ];
    for (backend, passes) in runs {
        let mut arguments = size.to_vec();
        arguments.extend(["--cull", backend]);
        arguments.extend(passes);
        let (output, text) = city(&arguments);
        assert!(output.status.success(), "{arguments:?}:\n{text}");
        assert_eq!(text.matches("culling on vs off: identical images").count(), 3, "{arguments:?}:\n{text}");
        assert_eq!(text.matches("passes vs cpu: post 0 lines 0 heights 0").count(), 3, "{arguments:?}:\n{text}");
        assert_eq!(text.matches("false_hidden 0").count(), 3, "{arguments:?}:\n{text}");
    }
    let (output, text) = city(&["--frames", "1", "--post", "bloom"]);
    assert!(!output.status.success() && text.contains("possible values: fog, outline"), "{text}");
    let (output, text) = city(&["--frames", "1", "--size", "96x64", "--cull", "cpu", "--gpu-animate"]);
    assert!(!output.status.success() && text.contains("need GPU culling"), "{text}");
}

/// Answered on request (`--cpu-answers on-request`): the Visibility stage leaves the objects
/// alone while the camera only turns, refreshing the 2% that bob, and every drawn frame
/// still equals the unculled reference and hides nothing, with the GPU choosing the levels
/// of the error rule and with the CPU's levels of the distance rule.
#[test]
fn gpu_culling_answered_on_request_hides_nothing_on_every_frame() {
    if gpu_test_context().is_none() {
        return;
    }
    let folder = temporary("city", "on-request");
    let path = folder.join("path.json");
    // Down the street, then turning where it stands, then on again.
    std::fs::write(
        &path,
        r#"{"keyframes":[{"frame":0,"position":[-6,3,40],"yaw":0,"pitch":-5,"fov":60},
                         {"frame":3,"position":[-6,3,20],"yaw":20,"pitch":-5,"fov":60},
                         {"frame":7,"position":[-6,3,20],"yaw":140,"pitch":-5,"fov":60},
                         {"frame":9,"position":[-6,20,0],"yaw":180,"pitch":-20,"fov":60}]}"#,
    )
    .expect("the path is written");
    for lod_rule in ["error", "distance"] {
        let arguments = ["--cull", "gpu", "--cpu-answers", "on-request", "--lod-rule", lod_rule, "--movers", "2"];
        let size = ["--frames", "10", "--objects", "1000", "--size", "96x64", "--render", "every", "--truth"];
        let path = ["--validate", "--camera-path", path.to_str().expect("a UTF-8 path")];
        let (output, text) = city(&[&arguments[..], &size, &path].concat());
        assert!(output.status.success(), "{lod_rule}: {text}");
        assert!(text.contains(" bobbing) on "), "{lod_rule}: {text}");
        assert_eq!(text.matches("identical images").count(), 10, "{lod_rule}: {text}");
        assert_eq!(text.lines().filter(|line| line.ends_with("false_hidden 0")).count(), 10, "{lod_rule}: {text}");
    }
    let _ = std::fs::remove_dir_all(&folder);
    let (output, text) = city(&["--frames", "1", "--movers", "101"]);
    assert!(!output.status.success() && text.contains("not a percent"), "{text}");
}
