//! `viewer --stream`: the files load through the asset server while the Render stage draws
//! frames (see [`super::stream`]); headless, the last frame once all is on the GPU is the
//! PNG, checked against the unculled image and the truth.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use culling::Visibility;
use ecs::{Aabb, Viewport};
use glam::Vec3;
use render_graph::GpuDevice;
use renderer::{MeshLibrary, SharedCapture};
use runtime::App;

use super::options::Options;
use super::spawn::add_sun;
use super::stream::{self, Arrivals};
use super::{frame_bounds, window_options, SKY};
use crate::city::check::{check_frame, CheckRequest, Checked};
use crate::mesh_render::MeshRenderer;

/// Frames the viewer runs at most while streaming headless.
const STREAM_FRAMES: u64 = 100_000;

/// Streams the files in the window, or headless until every file has arrived and is on the
/// GPU, then checks the last frame.
pub(super) fn view_streamed(options: &Options) -> ExitCode {
    let mut app = App::new();
    culling::install(&mut app);
    app.insert_resource(Viewport { width: options.width, height: options.height });
    let aspect = options.width as f32 / options.height as f32;
    let framing = frame_bounds(Aabb::new(Vec3::splat(-1.0), Vec3::splat(1.0)), aspect);
    let camera = ecs::scene::spawn_camera(app.world_mut(), framing.camera, framing.pose);
    if options.shadows {
        add_sun(&mut app, None, &[]);
    }
    let arrivals = stream::install(&mut app, &options.scenes, options.placement, camera, aspect, options.shadows);
    // The library the renderer starts with: the unit cube alone (the files' meshes come later).
    let library = MeshLibrary::with_unit_cube();
    let any_failed = || !stream::lock(&arrivals).failed.is_empty();
    if options.window {
        let window = window_options(options);
        let outcome = crate::window::run::run(app, &library, window);
        let code = crate::window::run::WindowSummary::report(outcome, "viewer", options.screenshot.as_deref());
        return if any_failed() { ExitCode::FAILURE } else { code };
    }
    let device = match GpuDevice::new(&render_graph::DeviceConfig {
        app_name: "viewer".into(),
        ..render_graph::DeviceConfig::default()
    }) {
        Ok(device) => Arc::new(device),
        Err(reason) => {
            println!("render: no usable Vulkan device ({reason}); --stream draws while it loads, nothing done");
            return ExitCode::SUCCESS;
        }
    };
    let (target, capture) = renderer::HeadlessTarget::drawing();
    let setup = renderer::RenderSetup {
        backend: culling::CullingBackend::Auto,
        device: Some(Arc::clone(&device)),
        extent: render_graph::vk::Extent2D { width: options.width, height: options.height },
        capacity: 64,
        meshes: library.clone(),
        clear_color: SKY,
        bits: renderer::BitsReadback::Wait,
        passes: Vec::new(),
        shadows: options.shadows,
    };
    if let Err(error) = renderer::install_render_to(&mut app, setup, Some(Box::new(target))) {
        eprintln!("viewer: rendering could not be set up: {error}");
        return ExitCode::FAILURE;
    }
    if let Err(code) = run_until_arrived(&mut app, &capture, &arrivals, options) {
        return code;
    }
    if stream::lock(&arrivals).drawables.is_empty() {
        println!("viewer: nothing to draw");
        return if any_failed() { ExitCode::FAILURE } else { ExitCode::SUCCESS };
    }
    let code = check_arrived(&app, device, &library, &capture, &arrivals, options);
    if any_failed() {
        ExitCode::FAILURE
    } else {
        code
    }
}

/// Runs frames, each captured, until every file has arrived and none draws a stand-in any
/// more, then prints how long that took; `Err` holds the exit code of a frame that failed or
/// of files that never came.
fn run_until_arrived(
    app: &mut App,
    capture: &SharedCapture,
    arrivals: &Mutex<Arrivals>,
    options: &Options,
) -> Result<(), ExitCode> {
    let started = std::time::Instant::now();
    let mut frame_ms = Vec::new();
    let mut stand_in_frames = 0_u64;
    loop {
        renderer::lock_capture(capture).capture = true;
        let frame_started = std::time::Instant::now();
        app.run_frame();
        frame_ms.push(frame_started.elapsed().as_secs_f64() * 1e3);
        let report = app.resource::<renderer::RenderReport>();
        if let Some(error) = &report.error {
            eprintln!("viewer: frame {}: {error}", frame_ms.len() - 1);
            return Err(ExitCode::FAILURE);
        }
        stand_in_frames += u64::from(!report.stand_ins.is_empty());
        if stream::lock(arrivals).done() && report.stand_ins.is_empty() {
            break;
        }
        if frame_ms.len() as u64 >= STREAM_FRAMES {
            eprintln!("viewer: the files did not arrive in {STREAM_FRAMES} frames");
            return Err(ExitCode::FAILURE);
        }
    }
    frame_ms.sort_by(f64::total_cmp);
    println!(
        "stream: {} of {} files arrived in {} frames ({:.1} ms; frame median {:.3} ms, worst {:.3} ms), {} frames drew stand-ins",
        stream::lock(arrivals).scenes.len(),
        options.scenes.len(),
        frame_ms.len(),
        started.elapsed().as_secs_f64() * 1e3,
        frame_ms[frame_ms.len() / 2],
        frame_ms[frame_ms.len() - 1],
        stand_in_frames
    );
    Ok(())
}

/// Draws the last captured frame again with a renderer of its own (culling off, and the
/// object-id truth), writes the PNG and prints the comparison.
fn check_arrived(
    app: &App,
    device: Arc<GpuDevice>,
    library: &MeshLibrary,
    capture: &SharedCapture,
    arrivals: &Mutex<Arrivals>,
    options: &Options,
) -> ExitCode {
    let scenes = stream::lock(arrivals).scenes.clone();
    // The check's renderer gets the same meshes in the same order, so the same ids.
    let capacity = app.resource::<Visibility>().objects().len() as u32;
    let atlas = if options.shadows { app.resource::<ecs::ShadowSettings>().atlas_resolution } else { 0 };
    let size = (options.width, options.height);
    let mut checker = match MeshRenderer::with_shadows(device, size, capacity, library.clone(), SKY, atlas) {
        Ok(checker) => checker,
        Err(error) => {
            eprintln!("viewer: the check's renderer: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut refused = None;
    for (_, scene) in &scenes {
        let added = scene.add_model_with(|vertices, levels| match checker.add_mesh_levels(vertices, levels) {
            Ok(ids) => Ok(ids),
            Err(error) => {
                refused = Some(error.to_string());
                Ok(0..levels.len() as u32)
            }
        });
        if let Err(error) = added {
            refused = Some(error.to_string());
        }
    }
    if let Some(error) = refused {
        eprintln!("viewer: the check's renderer refused a mesh: {error}");
        return ExitCode::FAILURE;
    }
    let visibility = app.resource::<Visibility>();
    let report = app.resource::<renderer::RenderReport>();
    let shadows = options.shadows.then(|| app.resource::<culling::ShadowViews>());
    let request = CheckRequest { truth: true, pngs: vec![options.out.clone()], ..Default::default() };
    let checked = check_frame(
        &mut checker,
        &renderer::lock_capture(capture),
        &visibility,
        &report,
        app.world(),
        library,
        shadows.as_deref(),
        app.resources().get::<animation::SkinPalette>().as_deref(),
        &request,
    );
    let code = match checked {
        Ok(Checked { frame, truth, .. }) => {
            let false_hidden = truth.map_or(0, |truth| truth.false_hidden);
            println!(
                "render: {}x{} on {}: drew {} of {} objects, {} triangles, wrote {}; culling on vs off: {}; false_hidden {false_hidden}",
                options.width,
                options.height,
                checker.device_name(),
                frame.drawn,
                frame.drawn_without_culling,
                frame.triangles,
                options.out.display(),
                if frame.differing_pixels == 0 {
                    String::from("identical images")
                } else {
                    format!("{} pixels differ", frame.differing_pixels)
                }
            );
            if frame.differing_pixels == 0 && false_hidden == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(error) => {
            eprintln!("viewer: render: {error}");
            ExitCode::FAILURE
        }
    };
    let problems = checker.validation_problems();
    if !problems.is_empty() {
        eprintln!("viewer: validation reported problems: {problems:?}");
        return ExitCode::FAILURE;
    }
    code
}
