//! The `city` program: parses its command line, sets the city up (`setup`), and runs its
//! frames headless (`headless`, every drawn frame checked against the same frame drawn with
//! culling off) or in a window (`window`).
//!
//! A failure before the frames (a bad option, no device for `--cull gpu`, a file that cannot be
//! written) and a failed check's setup end the run with one line on standard error; a check
//! that finds a difference ends it with a failing status after the summary.

mod checks;
mod headless;
mod install;
mod lines;
mod setup;
mod window;

use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};

use super::CityOptions;

/// The `city` binary: reads [`CityOptions`] from the command line and runs the city. Its
/// status is a failure when an option is refused, setting up fails, or a checked frame
/// differs from its reference.
pub fn main() -> ExitCode {
    crate::init_logging();
    let matches = CityOptions::command().get_matches();
    let options = CityOptions::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
    // `--window` runs until closed unless `--frames` was given.
    let frames_given = matches.value_source("frames") == Some(ValueSource::CommandLine);
    if options.validate {
        // Read by `DeviceConfig::default` when the renderer makes its device; set before any
        // thread that could read the environment starts.
        std::env::set_var("ENGINE_VALIDATION", "1");
    }
    match run(&options, frames_given) {
        Ok(status) => status,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// Sets the city up and runs its frames; `Err` is the line that says why the run stopped.
fn run(options: &CityOptions, frames_given: bool) -> Result<ExitCode, String> {
    let mut app = setup::app(options);
    std::fs::create_dir_all(&options.out)
        .map_err(|error| format!("city: cannot create {}: {error}", options.out.display()))?;
    let scene = setup::scene(&mut app, options)?;
    let choices = setup::choices(options, &scene)?;
    if options.window {
        return Ok(window::run(app, &scene.meshes, options, frames_given, choices, scene.districts.as_ref()));
    }
    setup::refuse_window_options(options)?;
    // Rendering is installed in one call: the Render stage draws every frame the target
    // asks for through the render graph, culling on the GPU (two-phase Hi-Z, frustum and
    // occlusion leave the Visibility stage) or with the CPU's lists, as `--cull` decides.
    let mut rendering = install::rendering(&mut app, options, &scene, choices)?;
    let streaming = install::streaming(&mut app, options, scene.districts.as_ref(), rendering.as_mut())?;
    headless::run(app, options, &scene, rendering, streaming)
}
