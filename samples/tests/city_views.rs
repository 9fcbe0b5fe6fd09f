//! `city --views 2`: split-screen, each view judged against its own answer, and the refusal
//! of what it does not take yet.

use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use render_graph::testing::gpu_test_context;

/// The samples' test helpers (`temporary`).
#[allow(dead_code)]
mod common;
use common::temporary;

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

#[test]
fn two_views_each_equal_their_unculled_reference_and_hide_nothing() {
    if gpu_test_context().is_none() {
        return;
    }
    let frames = 3;
    let (output, text) = city(&[
        "--views",
        "2",
        "--frames",
        "3",
        "--objects",
        "2000",
        "--size",
        "128x64",
        "--render",
        "every",
        "--truth",
        "--validate",
    ]);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("views: 2, split-screen"), "{text}");
    for frame in 0..frames {
        for view in 0..2 {
            let hidden = format!("frame {frame} view {view} false_hidden 0");
            let pixels = format!("frame {frame} view {view} differing_pixels 0");
            assert!(text.lines().any(|line| line == hidden), "{hidden}: {text}");
            assert!(text.lines().any(|line| line == pixels), "{pixels}: {text}");
        }
    }
    assert_eq!(text.lines().filter(|line| line.contains(" view ") && line.contains("false_hidden")).count(), 6);
}

#[test]
fn two_views_refuse_gpu_culling_and_what_they_do_not_take_yet() {
    let (output, text) = city(&["--views", "2", "--cull", "gpu", "--frames", "1", "--objects", "1000"]);
    assert!(!output.status.success(), "{text}");
    assert!(text.contains("--views 2 needs CPU culling"), "{text}");
    let (output, text) = city(&["--views", "2", "--shadows", "--frames", "1", "--objects", "1000"]);
    assert!(!output.status.success(), "{text}");
    assert!(text.contains("--views 2 does not yet take"), "{text}");
    let (output, text) = city(&["--views", "3", "--frames", "1"]);
    assert!(!output.status.success(), "three views are not offered: {text}");
}
