//! The glTF viewer (the binary `src/bin/viewer.rs` is its command line): where several files'
//! models go ([`layout`]) and the camera that frames whatever was loaded ([`framing`]), tested
//! without a device; `--stream`'s loads while frames run ([`stream`]); and the runs themselves:
//! the preloaded scene drawn into a checked PNG or shown in a window, `--animate`'s frames, and
//! the streamed scene (see [`run`]).

mod animate;
pub mod framing;
pub mod layout;
mod load;
pub mod options;
mod spawn;
mod still;
pub mod stream;
mod streamed;

pub use framing::{frame_bounds, Framing};
pub use layout::{place_models, scene_bounds, Placement};
pub use options::{Options, USAGE};

use std::process::ExitCode;

/// The background the viewer's frames are cleared to.
const SKY: [f32; 4] = [0.55, 0.70, 0.90, 1.0];

/// Runs the viewer as `options` ask: the files streamed (`--stream`) or loaded first, then
/// drawn into the PNG, animated or shown in the window. The exit code is a failure when a
/// file was bad, even if the others were shown.
pub fn run(options: &Options) -> ExitCode {
    if options.stream {
        return streamed::view_streamed(options);
    }
    let mut any_bad = false;
    let loaded = load::load_files(&options.scenes, &mut any_bad);
    let outcome = if loaded.is_empty() { ExitCode::FAILURE } else { still::view(options, &loaded, &mut any_bad) };
    // A bad file among good ones: the good ones were shown, the exit code still says so.
    if any_bad {
        ExitCode::FAILURE
    } else {
        outcome
    }
}

/// The window the viewer opens with `--window`, preloaded or streamed alike.
fn window_options(options: &Options) -> crate::window::run::WindowOptions {
    crate::window::run::WindowOptions {
        title: "viewer",
        size: (options.width, options.height),
        frames: options.frames,
        present: render_graph::vk::PresentModeKHR::FIFO,
        screenshot: options.screenshot.clone(),
        resize_to: None,
        backend: culling::CullingBackend::Auto,
        frame_passes: crate::frame_passes::FramePassChoice::default(),
        debug_view: renderer::DebugView::default(),
        pipelined: true,
        shadows: options.shadows,
        hud: options.hud,
    }
}
