//! `city --hud` without a window: the overlay is drawn into the frames and their PNGs, while
//! the checks compare the colour before it with the unculled reference (every checked frame
//! identical, nothing falsely hidden), and `city.png` differs from the same run without
//! `--hud` only inside the overlay's panels, which the run prints.

use std::path::Path;
use std::process::Command;

use render_graph::testing::gpu_test_context;

mod common;
use common::{read_png, temporary};

/// Runs the headless city of three `size` frames, each drawn and checked with `--truth`,
/// writing into `out`; with `hud`, the overlay open. Its output and `city.png`.
fn city(out: &Path, size: &str, hud: bool) -> (String, (u32, u32, Vec<u8>)) {
    let mut arguments = vec!["--frames", "3", "--render", "every", "--truth", "--validate", "--objects", "1000"];
    arguments.extend(["--size", size, "--out", out.to_str().expect("a UTF-8 path")]);
    if hud {
        arguments.push("--hud");
    }
    let output = Command::new(env!("CARGO_BIN_EXE_city")).args(&arguments).output().expect("the demo starts");
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{arguments:?}:\n{text}");
    (text, read_png(&out.join("city.png")))
}

/// The rectangles (left, top, right, bottom) of the `hud:` line.
fn panels(text: &str) -> Vec<[f32; 4]> {
    let line = text.lines().find(|line| line.starts_with("hud: ")).expect("a hud line");
    let (_, list) = line.split_once("panels: ").expect("the panels");
    list.split(", ")
        .map(|rect| {
            let numbers: Vec<f32> = rect.split_whitespace().map(|number| number.parse().expect("a number")).collect();
            numbers.try_into().expect("four numbers")
        })
        .collect()
}

/// Runs the city of `size` frames with and without `--hud` (each frame identical to its
/// reference, nothing falsely hidden) and compares their `city.png`: the pixels the overlay
/// changed (all inside its panels) and the pixels outside every panel.
fn with_and_without(size: &str) -> (usize, usize) {
    let folder = temporary("city_hud", size);
    let (text, (width, height, with)) = city(&folder.join("hud"), size, true);
    let (plain, (_, _, without)) = city(&folder.join("plain"), size, false);
    let _ = std::fs::remove_dir_all(&folder);
    for output in [&text, &plain] {
        assert_eq!(output.matches("identical images").count(), 3, "each frame equals its reference:\n{output}");
        let hidden: Vec<&str> =
            output.lines().filter(|line| line.starts_with("frame ") && line.contains(" false_hidden ")).collect();
        assert_eq!(hidden.len(), 3, "{output}");
        assert!(hidden.iter().all(|line| line.ends_with(" false_hidden 0")), "{hidden:?}");
    }
    assert!(!plain.contains("hud: "), "no overlay without --hud");
    let rects = panels(&text);
    assert!(!rects.is_empty(), "{text}");
    let (mut changed, mut outside) = (0, 0);
    for (index, (old, new)) in without.chunks_exact(4).zip(with.chunks_exact(4)).enumerate() {
        let (x, y) = ((index as u32 % width) as f32 + 0.5, (index as u32 / width) as f32 + 0.5);
        // Anti-aliasing feathers an edge by up to a pixel outside the rectangle.
        let inside = rects.iter().any(|&[left, top, right, bottom]| {
            x >= left - 1.5 && x <= right + 1.5 && y >= top - 1.5 && y <= bottom + 1.5
        });
        outside += usize::from(!inside);
        if old != new {
            changed += 1;
            assert!(inside, "{size}: pixel ({x}, {y}) changed outside the panels {rects:?}");
        }
    }
    assert!(changed > 1000, "{size}: the overlay shows in city.png: {changed} of {} pixels", width * height);
    (changed, outside)
}

#[test]
fn a_headless_hud_draws_the_overlay_into_the_pngs_and_the_checks_read_the_frame_before_it() {
    if gpu_test_context().is_none() {
        return;
    }
    // The panels cover most of a small frame; at 960x540 they leave a third of it, which
    // must be the frame without the overlay to the pixel.
    with_and_without("320x180");
    let (changed, outside) = with_and_without("960x540");
    assert!(outside > 960 * 540 / 3, "{outside} pixels outside the panels, {changed} changed inside");
}

#[test]
fn a_headless_hud_is_refused_beside_the_checks_that_read_the_final_image() {
    let folder = temporary("city_hud", "refused");
    for extra in [&["--post", "fog"][..], &["--views", "2"]] {
        let mut arguments = vec!["--frames", "1", "--objects", "1000", "--size", "96x64", "--hud"];
        arguments.extend_from_slice(extra);
        arguments.extend(["--out", folder.to_str().expect("a UTF-8 path")]);
        let output = Command::new(env!("CARGO_BIN_EXE_city")).args(&arguments).output().expect("the demo starts");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{arguments:?} was accepted");
        assert!(stderr.contains("a headless --hud draws over the image"), "{arguments:?}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&folder);
}
