//! `--window`: the city in a window until it closes or `--frames` have run, streaming its
//! districts between frames with `--stream`.

use std::process::ExitCode;
use std::time::Instant;

use culling::Visibility;
use render_graph::vk;
use renderer::{RenderMeshes, RenderReport};
use runtime::App;

use super::setup::Choices;
use crate::city::districts::DistrictFiles;
use crate::city::stream::DistrictStreamer;
use crate::city::{self, CityLibrary, CityOptions, PresentChoice};
use crate::window::run::{FrameHook, WindowOptions, WindowSummary};

/// Runs the city in a window; the status says how the window's run ended.
pub(super) fn run(
    app: App,
    meshes: &CityLibrary,
    options: &CityOptions,
    frames_given: bool,
    Choices { backend, passes }: Choices,
    districts: Option<&DistrictFiles>,
) -> ExitCode {
    if options.screenshot.is_some() && !frames_given {
        eprintln!("city: --screenshot needs --frames N (the last frame is the screenshot)");
        return ExitCode::FAILURE;
    }
    let window_options = WindowOptions {
        title: "city",
        size: options.size,
        frames: frames_given.then_some(options.frames),
        present: match options.present {
            PresentChoice::Fifo => vk::PresentModeKHR::FIFO,
            PresentChoice::Mailbox => vk::PresentModeKHR::MAILBOX,
            PresentChoice::Immediate => vk::PresentModeKHR::IMMEDIATE,
        },
        screenshot: options.screenshot.clone(),
        resize_to: options.resize_to,
        backend,
        frame_passes: passes,
        debug_view: options.debug_view.clone().unwrap_or_default(),
        pipelined: !options.serial,
        shadows: options.shadows,
        hud: options.hud,
    };
    // `--stream`: the districts load and leave between the window's frames, as headless.
    let mut streamer = districts
        .map(|files| DistrictStreamer::new(files, options.stream_radius).waiting_for_loads(options.stream_wait));
    let hook = streamer.as_mut().map(|streamer| -> FrameHook<'_> {
        Box::new(move |app: &mut App| {
            if app.frames_run() > 0 {
                // The frame just run: its residency, and whether a visible object drew a
                // stand-in (the Visibility stage's list: objects that may be visible).
                let report = app.resource::<RenderReport>();
                let visibility = app.resource::<Visibility>();
                let stand_in = city::stream::visible_stand_in(&report, &visibility, visibility.visible());
                streamer.report.record_frame(&report, stand_in);
            }
            let started = Instant::now();
            let meshes = app.resource::<RenderMeshes>().clone();
            streamer.update(app.world_mut(), &meshes, &mut [])?;
            streamer.report.update_ms.push(started.elapsed().as_secs_f64() * 1e3);
            Ok(())
        })
    });
    let outcome = crate::window::run::run_with(app, &meshes.library, window_options, hook);
    if let Some(streamer) = &streamer {
        print!("{}", streamer.report.lines());
    }
    WindowSummary::report(outcome, "city", options.screenshot.as_deref())
}
