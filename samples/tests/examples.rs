//! The render-graph examples run as a new user runs them, with the validation layer forced by
//! the Vulkan loader (`VK_INSTANCE_LAYERS`, the way RenderDoc users and CI systems turn it
//! on) and the engine's own switch off: they must succeed with zero validation problems.

use std::process::Command;

use render_graph::testing::gpu_test_context;

fn run_with_forced_layer(binary: &str, name: &str) {
    if gpu_test_context().is_none() {
        return;
    }
    let output_png = std::env::temp_dir().join(format!("{name}-{}.png", std::process::id()));
    let output = Command::new(binary)
        .arg("--out")
        .arg(&output_png)
        .env("VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation")
        .env_remove("ENGINE_VALIDATION")
        .output()
        .expect("the example starts");
    let text = String::from_utf8_lossy(&output.stdout) + String::from_utf8_lossy(&output.stderr);
    let _ = std::fs::remove_file(&output_png);
    assert!(output.status.success(), "{name} failed with the layer forced by the loader:\n{text}");
    assert!(text.contains("wrote "), "{name} finished its work:\n{text}");
}

#[test]
fn custom_pass_succeeds_with_the_validation_layer_forced_by_the_loader() {
    run_with_forced_layer(env!("CARGO_BIN_EXE_custom_pass"), "custom_pass");
}

#[test]
fn post_process_succeeds_with_the_validation_layer_forced_by_the_loader() {
    run_with_forced_layer(env!("CARGO_BIN_EXE_post_process"), "post_process");
}

/// `--help` explains the options and exits successfully without running (it once wrote an
/// image named `--help`); an unknown option is an error. No device needed.
fn help_is_help(binary: &str, name: &str) {
    let folder = std::env::temp_dir().join(format!("{name}-help-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("a temporary folder");
    let output = Command::new(binary).arg("--help").current_dir(&folder).output().expect("the example starts");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let written: Vec<_> = std::fs::read_dir(&folder).expect("the folder").collect();
    let _ = std::fs::remove_dir_all(&folder);
    assert!(output.status.success(), "{name} --help failed:\n{text}");
    assert!(text.contains("--out <FILE>"), "{name} --help explains --out:\n{text}");
    assert!(written.is_empty(), "{name} --help wrote files: {written:?}");
    let wrong = Command::new(binary).arg("--no-such-option").output().expect("the example starts");
    assert!(!wrong.status.success(), "{name} accepted an unknown option");
}

#[test]
fn custom_pass_help_explains_and_writes_nothing() {
    help_is_help(env!("CARGO_BIN_EXE_custom_pass"), "custom_pass");
}

#[test]
fn post_process_help_explains_and_writes_nothing() {
    help_is_help(env!("CARGO_BIN_EXE_post_process"), "post_process");
}

/// The user's passes inside the engine's frame (GPU bobbing before the cull, fog and outlines
/// after the geometry, boxes coloured by the GPU's bits) match the CPU on every frame, with
/// zero validation messages, alone and together.
#[test]
fn frame_passes_match_the_cpu_on_every_frame() {
    if gpu_test_context().is_none() {
        return;
    }
    for args in [
        &["--post", "fog"][..],
        &["--post", "outline"],
        &["--debug-boxes"],
        &["--bob", "--post", "fog,outline", "--debug-boxes"],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_frame_passes"))
            .args(args)
            .args(["--frames", "4"])
            .env("ENGINE_VALIDATION", "1")
            .output()
            .expect("the example starts");
        let text = String::from_utf8_lossy(&output.stdout) + String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{args:?}:\n{text}");
        assert!(text.contains("4 frames, 0 mismatches"), "{args:?}:\n{text}");
    }
    let unknown = Command::new(env!("CARGO_BIN_EXE_frame_passes")).args(["--post", "bloom"]).output().expect("starts");
    assert!(
        !unknown.status.success() && String::from_utf8_lossy(&unknown.stderr).contains("unknown post-process `bloom`")
    );
}
