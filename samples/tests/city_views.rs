//! `city --views 2`: split-screen, each view judged against its own answer (on both culling
//! backends), in the window
//! (under Xvfb, where `xvfb-run` exists) as headless, with the users' passes (per view), and
//! the refusal of what it does not take; `city --monitor`: a rooftop camera's image on a
//! billboard, both views judged, with the users' passes, and its refusals; `city --monitor --views 2`: the monitor and both halves of the window judged;
//! `--stream` seen by several views: every view's meshes kept resident and its stand-ins
//! followed by its reference.

use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use render_graph::testing::gpu_test_context;

mod common;
use common::{read_png, temporary};

/// Runs the demo in a fresh temporary folder (its default `--out` is the current folder).
fn city(arguments: &[&str]) -> (Output, String) {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let folder = temporary("city_views", &format!("run-{}", RUNS.fetch_add(1, Ordering::Relaxed)));
    let output = Command::new(env!("CARGO_BIN_EXE_city"))
        .args(arguments)
        .current_dir(&folder)
        .output()
        .expect("the demo starts");
    let _ = std::fs::remove_dir_all(&folder);
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    (output, text)
}

/// `city --views 2 --cull CULL --truth --validate` (and `extra`): every view of every frame
/// equals its unculled reference and hides nothing.
fn two_views_hold_to_the_truth(cull: &str, extra: &[&str]) -> String {
    if gpu_test_context().is_none() {
        return String::new();
    }
    let mut arguments = vec!["--views", "2", "--cull", cull, "--frames", "3", "--objects", "2000", "--size", "128x64"];
    arguments.extend(["--render", "every", "--truth", "--validate"]);
    arguments.extend_from_slice(extra);
    let (output, text) = city(&arguments);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("views: 2, split-screen"), "{text}");
    views_hold_to_the_truth(&text, 0..2);
    text
}

#[test]
fn two_views_each_equal_their_unculled_reference_and_hide_nothing() {
    two_views_hold_to_the_truth("cpu", &[]);
}

/// With shadows: the sun's cascades follow the main view, the lamps either view sees cast
/// once for both, and each view's reference is lit and shadowed the same way.
#[test]
fn two_views_with_shadows_each_equal_their_unculled_reference() {
    two_views_hold_to_the_truth("cpu", &["--shadows"]);
}

/// With shadows, culled on the GPU, each view judged against its own bits.
#[test]
fn two_views_with_shadows_culled_on_the_gpu_each_equal_their_unculled_reference() {
    two_views_hold_to_the_truth("gpu", &["--shadows"]);
}

/// Culled on the GPU, each view judged against its own bits; the summary has each view's
/// share of both cull phases and its triangles (none of the shares with one dispatch).
#[test]
fn two_views_culled_on_the_gpu_each_equal_their_unculled_reference_and_hide_nothing() {
    let text = two_views_hold_to_the_truth("gpu", &[]);
    if text.is_empty() {
        return; // No device.
    }
    let rows = ["gpu ms pass gpu cull early view ", "gpu ms pass gpu cull late view ", "triangles view "];
    for (row, view) in rows.iter().flat_map(|row| [(row, 0), (row, 1)]) {
        assert!(text.lines().any(|line| line.starts_with(&format!("{row}{view} "))), "{row}{view}: {text}");
    }
    let shared = two_views_hold_to_the_truth("gpu", &["--view-dispatch", "off"]);
    assert!(!shared.contains("gpu cull early view"), "{shared}");
}

#[test]
fn two_views_refuse_what_they_cannot_be_judged_with() {
    for (refused, why) in
        [("--classify", "writes no PNG for the classify image"), ("--clusters", "the cluster check draws one view")]
    {
        let (output, text) = city(&["--views", "2", refused, "--frames", "1", "--objects", "1000"]);
        assert!(!output.status.success(), "{text}");
        assert!(text.contains("--views 2 does not take") && text.contains(why), "{text}");
    }
    let (output, text) = city(&["--views", "3", "--frames", "1"]);
    assert!(!output.status.success(), "three views are not offered: {text}");
}

/// `--views 2 --window`: each half of the window shows its own camera's picture; over a
/// streamed city with the users' passes (GPU-culled), each half also shows its own box lines.
#[test]
fn two_views_split_the_window_into_two_pictures() {
    if gpu_test_context().is_none() {
        return;
    }
    let has_xvfb = Command::new("xvfb-run").arg("--help").output().is_ok_and(|output| output.status.success());
    if !has_xvfb {
        assert!(std::env::var("ENGINE_REQUIRE_VULKAN").is_err(), "ENGINE_REQUIRE_VULKAN=1 but xvfb-run is missing");
        return;
    }
    let streamed = ["--stream", "--stream-wait", "--stream-dir", "districts", "--stream-radius", "60"];
    let passes = ["--cull", "gpu", "--post", "outline", "--gpu-animate", "--debug-boxes"];
    for extra in [&[][..], &[&streamed[..], &passes].concat()] {
        let [left, right] = window_halves(extra);
        assert_ne!(left, right, "{extra:?}: each half shows its own camera");
        for picture in [&left, &right] {
            let first = &picture[..4];
            assert!(picture.chunks_exact(4).any(|pixel| pixel != first), "{extra:?}: a half is one colour");
            if extra.contains(&"--debug-boxes") {
                let green = picture.chunks_exact(4).filter(|pixel| pixel[..3] == [0, 255, 0]).count();
                assert!(green > 0, "{extra:?}: a half shows no box lines");
            }
        }
    }
}

/// The two halves (RGBA8) of the screenshot of `city --window --views 2` with `extra`, 160x96.
fn window_halves(extra: &[&str]) -> [Vec<u8>; 2] {
    let folder = temporary("city_views", "window");
    let output = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1024x768x24", env!("CARGO_BIN_EXE_city"), "--window"])
        .args(["--views", "2", "--frames", "5", "--objects", "1000", "--size", "160x96", "--validate"])
        .args(["--screenshot", "shot.png"])
        .args(extra)
        .current_dir(&folder)
        .output()
        .expect("xvfb-run starts");
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{text}");
    let (width, height, pixels) = read_png(&folder.join("shot.png"));
    let _ = std::fs::remove_dir_all(&folder);
    assert_eq!((width, height), (160, 96), "{text}");
    let half = |from: usize| -> Vec<u8> {
        pixels.chunks_exact(width as usize * 4).flat_map(|row| row[from * 4..(from + 80) * 4].to_vec()).collect()
    };
    [half(0), half(80)]
}

/// `city --monitor --cull CULL --truth --validate` (and `extra`): the monitor's view (view 0,
/// drawn first) and the street view (view 1) each equal their unculled reference and hide
/// nothing, every frame.
fn a_monitor_holds_to_the_truth(cull: &str, extra: &[&str]) {
    monitored_views_hold_to_the_truth(cull, extra, 2);
}

/// `city --monitor` with `extra` (`--views 2` for `views` 3) culled by `cull`, `--truth
/// --validate`: every view (the monitor's first, then the window's) equals its unculled
/// reference and hides nothing, every frame.
fn monitored_views_hold_to_the_truth(cull: &str, extra: &[&str], views: u32) {
    if gpu_test_context().is_none() {
        return;
    }
    let arguments = ["--monitor", "--frames", "3", "--objects", "2000", "--size", "128x64", "--render", "every"];
    let (output, text) = city(&[&arguments[..], &["--cull", cull, "--truth", "--validate"], extra].concat());
    assert!(output.status.success(), "{text}");
    assert!(text.contains("monitor: a rooftop camera renders into a 256x256 image"), "{text}");
    views_hold_to_the_truth(&text, 0..views);
    assert!(!text.contains("a cycle"), "the rooftop camera never sees its own screen: {text}");
}

#[test]
fn a_monitor_and_the_street_view_hold_to_the_truth() {
    a_monitor_holds_to_the_truth("cpu", &[]);
}

/// Culled on the GPU: the street view by the window's cull, the monitor's view by its own
/// (judged against its own bits).
#[test]
fn a_monitor_and_the_street_view_culled_on_the_gpu_hold_to_the_truth() {
    a_monitor_holds_to_the_truth("gpu", &[]);
}

/// With shadows, on both backends: the monitor is lit with the street view's lights and
/// atlas, each view judged by a reference shadowed the same way.
#[test]
fn a_monitor_and_the_street_view_with_shadows_hold_to_the_truth() {
    for cull in ["cpu", "gpu"] {
        a_monitor_holds_to_the_truth(cull, &["--shadows"]);
    }
}

/// `--monitor --views 2`: the monitor and both halves of the window, on both backends, with
/// and without shadows; the left half (the street camera's) shows the billboard, whose
/// reference must show the monitor's picture of the same frame.
#[test]
fn a_monitor_and_two_views_hold_to_the_truth() {
    for cull in ["cpu", "gpu"] {
        for shadows in [&[][..], &["--shadows"]] {
            monitored_views_hold_to_the_truth(cull, &[&["--views", "2"][..], shadows].concat(), 3);
        }
    }
}

/// Culled on the GPU by its own cull, the monitor chooses its own levels by the error rule too
/// (the distance rule is the city's default): its reference draws the levels the CPU chose for
/// it.
#[test]
fn a_monitor_culled_on_the_gpu_chooses_its_own_levels_by_the_error_rule() {
    a_monitor_holds_to_the_truth("gpu", &["--lod-rule", "error"]);
}

#[test]
fn a_monitor_refuses_what_it_cannot_be_judged_with() {
    for (refused, why) in [
        (&["--clusters"][..], "--monitor does not take --clusters: the cluster check"),
        (&["--classify", "--cull", "gpu"], "--monitor takes --classify on the CPU backend only"),
    ] {
        let (output, text) = city(&[&["--monitor", "--frames", "1", "--objects", "1000"][..], refused].concat());
        assert!(!output.status.success(), "{refused:?}: {text}");
        assert!(text.contains(why), "{refused:?}: {text}");
    }
}

/// Every frame's `passes vs cpu` line of `text` says the users' passes matched the CPU.
fn passes_match_the_cpu(text: &str) {
    for frame in 0..3 {
        let line = format!("frame {frame} passes vs cpu: post 0 lines 0 heights 0");
        assert!(text.lines().any(|seen| seen == line), "{line}: {text}");
    }
}

/// The users' passes with two views: fog and outline run once per view over its half (the
/// outline stops at the seam), checked against the CPU view by view, and both views judged on
/// the colour before them; culled on the GPU, with the objects bobbed by a pass before the
/// cull, which both views and their references see, and each view's boxes drawn through its
/// camera in its half, coloured by its own bits.
#[test]
fn two_views_with_the_users_passes_hold_to_the_truth() {
    if gpu_test_context().is_none() {
        return;
    }
    for (cull, passes) in
        [("cpu", &["--post", "fog,outline"][..]), ("gpu", &["--post", "fog,outline", "--gpu-animate", "--debug-boxes"])]
    {
        let (output, text) = city(&[&["--views", "2", "--cull", cull][..], &VIEW_RUN, passes].concat());
        assert!(output.status.success(), "{cull}: {text}");
        passes_match_the_cpu(&text);
        views_hold_to_the_truth(&text, 0..2);
    }
}

/// The users' passes with a monitor (and with two views): they draw over the window's views,
/// the monitor's image is left as its view drew it, and every view holds to the truth; on the
/// GPU with the objects bobbed (the monitor's reference bobs them too) and the debug boxes.
#[test]
fn a_monitor_with_the_users_passes_holds_to_the_truth() {
    if gpu_test_context().is_none() {
        return;
    }
    let gpu_passes = ["--post", "fog,outline", "--gpu-animate"];
    for (cull, passes, views) in [
        ("cpu", &["--post", "outline"][..], 2),
        ("gpu", &[&gpu_passes[..], &["--debug-boxes"]].concat()[..], 2),
        ("gpu", &[&gpu_passes[..], &["--views", "2"]].concat()[..], 3),
    ] {
        let (output, text) = city(&[&["--monitor", "--cull", cull][..], &VIEW_RUN, passes].concat());
        assert!(output.status.success(), "{cull} {passes:?}: {text}");
        passes_match_the_cpu(&text);
        views_hold_to_the_truth(&text, 0..views);
    }
}

/// A monitor with `--classify` on the CPU backend: the classify image of the street view is
/// written beside its PNG and every view holds to the truth.
#[test]
fn a_monitor_takes_classify_on_the_cpu() {
    if gpu_test_context().is_none() {
        return;
    }
    let out = temporary("city_views", "classify");
    let out_path = out.to_string_lossy().into_owned();
    let (output, text) =
        city(&[&["--monitor", "--cull", "cpu", "--classify", "--out", &out_path][..], &VIEW_RUN].concat());
    let written = out.join("city-classify.png").is_file();
    let _ = std::fs::remove_dir_all(&out);
    assert!(output.status.success(), "{text}");
    assert!(written, "the classify image is written: {text}");
    views_hold_to_the_truth(&text, 0..2);
}

/// The arguments of a short judged run: 3 frames of a small city, every frame drawn and judged.
const VIEW_RUN: [&str; 12] = [
    "--frames",
    "3",
    "--objects",
    "1000",
    "--size",
    "128x64",
    "--render",
    "every",
    "--truth",
    "--validate",
    "--threads",
    "2",
];

/// Every frame of 3 has, for each of `views`, `differing_pixels 0` and `false_hidden 0`, and no
/// other view's lines.
fn views_hold_to_the_truth(text: &str, views: std::ops::Range<u32>) {
    for frame in 0..3 {
        for view in views.clone() {
            let hidden = format!("frame {frame} view {view} false_hidden 0");
            let pixels = format!("frame {frame} view {view} differing_pixels 0");
            assert!(text.lines().any(|line| line == hidden), "{hidden}: {text}");
            assert!(text.lines().any(|line| line == pixels), "{pixels}: {text}");
        }
    }
    let lines = text.lines().filter(|line| line.contains(" view ") && line.contains("false_hidden")).count();
    assert_eq!(lines, 3 * views.len(), "{text}");
}

/// `city --window --monitor`: the billboard shows the rooftop camera's picture in the window.
#[test]
fn a_monitor_shows_in_the_window() {
    // The billboard's middle (the top right of the view).
    a_monitor_shows_in_a_window(&[], (205..235, 60..80));
}

/// `city --window --monitor --views 2 --shadows`: the billboard, carried by the street camera,
/// shows the rooftop camera's picture in the window's left half.
#[test]
fn a_monitor_shows_in_the_left_half_of_a_split_window() {
    a_monitor_shows_in_a_window(&["--views", "2", "--shadows"], (125..145, 50..70));
}

/// Runs `city --window --monitor` (and `extra`) at 320x180 under Xvfb and checks that the
/// billboard's `middle` (columns, rows) holds a picture: more than one colour.
fn a_monitor_shows_in_a_window(extra: &[&str], middle: (std::ops::Range<usize>, std::ops::Range<usize>)) {
    if gpu_test_context().is_none() {
        return;
    }
    let has_xvfb = Command::new("xvfb-run").arg("--help").output().is_ok_and(|output| output.status.success());
    if !has_xvfb {
        assert!(std::env::var("ENGINE_REQUIRE_VULKAN").is_err(), "ENGINE_REQUIRE_VULKAN=1 but xvfb-run is missing");
        return;
    }
    let folder = temporary("city_views", &format!("monitor-window{}", extra.concat()));
    let output = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1024x768x24", env!("CARGO_BIN_EXE_city"), "--window", "--monitor"])
        .args(["--frames", "5", "--objects", "1000", "--size", "320x180", "--validate", "--screenshot", "shot.png"])
        .args(extra)
        .current_dir(&folder)
        .output()
        .expect("xvfb-run starts");
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{text}");
    let (width, height, pixels) = read_png(&folder.join("shot.png"));
    let _ = std::fs::remove_dir_all(&folder);
    assert_eq!((width, height), (320, 180), "{text}");
    let texel = |x: usize, y: usize| &pixels[(y * width as usize + x) * 4..][..4];
    let (columns, rows) = middle;
    let picture: Vec<&[u8]> =
        rows.flat_map(|y| columns.clone().map(move |x| (x, y))).map(|(x, y)| texel(x, y)).collect();
    assert!(picture.iter().any(|pixel| *pixel != picture[0]), "the billboard is one colour: {text}");
}

/// `city --stream` culled by `cull` with `extra` (`--views 2`, `--monitor`) under a mesh budget
/// of `budget` MiB, `--truth --validate`: each of the frame's `views` equals its unculled
/// reference (which draws the stand-ins the frame drew, in every view) and hides nothing,
/// every frame. Returns the run's output.
fn streamed_views_hold_to_the_truth(cull: &str, budget: &str, extra: &[&str], views: u32) -> String {
    let streamed = ["--stream", "--stream-wait", "--stream-dir", "districts", "--stream-radius", "60"];
    let run = ["--frames", "3", "--objects", "1000", "--size", "128x64", "--render", "every", "--threads", "2"];
    let checks = ["--cull", cull, "--budget", budget, "--truth", "--validate"];
    let (output, text) = city(&[&streamed[..], &run, &checks, extra].concat());
    assert!(output.status.success(), "{text}");
    views_hold_to_the_truth(&text, 0..views);
    text
}

/// A streamed city in two views, on both backends, with room in the budget: the second view's
/// objects load at the levels it picked (the residency counts every view's needs), so no view
/// draws a stand-in, and both hold to the truth.
#[test]
fn two_views_of_a_streamed_city_keep_their_meshes_resident() {
    if gpu_test_context().is_none() {
        return;
    }
    for cull in ["cpu", "gpu"] {
        let text = streamed_views_hold_to_the_truth(cull, "1.5", &["--views", "2"], 2);
        for frame in 0..3 {
            let main = format!("frame {frame} resident_bytes ");
            let main = text.lines().find(|line| line.starts_with(&main)).unwrap_or_else(|| panic!("{main}: {text}"));
            assert!(main.ends_with(" stand_in 0"), "{cull}: {main}: {text}");
            let second = format!("frame {frame} view 1 stand_in 0");
            assert!(text.lines().any(|line| line == second), "{cull}: {second}: {text}");
        }
    }
}

/// Under a budget below what the views need, the second view draws stand-ins (coarser levels,
/// placeholder boxes) for levels only it picked; its reference draws the same ones, so it
/// still equals its reference and hides nothing, on both backends.
#[test]
fn two_views_of_a_streamed_city_under_a_tight_budget_draw_the_stand_ins_their_references_draw() {
    if gpu_test_context().is_none() {
        return;
    }
    for cull in ["cpu", "gpu"] {
        let text = streamed_views_hold_to_the_truth(cull, "0.3", &["--views", "2"], 2);
        let drew = text.lines().any(|line| line.starts_with("frame ") && line.ends_with(" view 1 stand_in 1"));
        assert!(drew, "{cull}: the budget leaves the second view stand-ins: {text}");
    }
}

/// The monitor and both halves of the window over a streamed city, under a tight budget, on
/// both backends: the monitor's reference takes the streamed meshes too, and every view holds
/// to the truth.
#[test]
fn a_monitor_and_two_views_of_a_streamed_city_hold_to_the_truth() {
    if gpu_test_context().is_none() {
        return;
    }
    for cull in ["cpu", "gpu"] {
        streamed_views_hold_to_the_truth(cull, "0.3", &["--monitor", "--views", "2"], 3);
    }
}

/// Districts load around every camera: two views of a small radius load more districts than
/// the first view alone.
#[test]
fn a_streamed_city_loads_the_districts_around_every_camera() {
    if gpu_test_context().is_none() {
        return;
    }
    let districts = |views: &str| -> usize {
        let streamed = ["--stream", "--stream-wait", "--stream-dir", "districts", "--stream-radius", "30"];
        let run = ["--frames", "3", "--objects", "1000", "--size", "64x32", "--render", "every", "--truth"];
        let (output, text) = city(&[&streamed[..], &run, &["--views", views]].concat());
        assert!(output.status.success(), "{text}");
        let last = text.lines().find(|line| line.starts_with("frame 2 resident_bytes ")).expect("a stream line");
        let count = last.split(" districts ").nth(1).and_then(|rest| rest.split(' ').next());
        count.and_then(|count| count.parse().ok()).unwrap_or_else(|| panic!("{last}"))
    };
    let (one, two) = (districts("1"), districts("2"));
    assert!(one > 0 && two > one, "one view loaded {one} districts, two views {two}");
}
