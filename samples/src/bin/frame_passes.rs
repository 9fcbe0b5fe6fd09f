//! A user's passes inside the engine's frame, checked against the CPU on every frame: GPU
//! bobbing before the cull (`--bob`), fog and outlines on the engine's colour (`--post
//! fog,outline`) and every object's box coloured by the GPU's visibility bits
//! (`--debug-boxes`). The passes are in `samples/src/frame_passes/`; this program builds a
//! field of cubes behind a wall, renders it headless with GPU culling and, per frame, compares
//! the GPU's image, transforms and bits with what the CPU computes from the same inputs.
//!
//! Run: `cargo run -p samples --bin frame_passes -- --bob --post fog,outline --debug-boxes`.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use culling::{CullingBackend, Visibility};
use ecs::{scene, BaseColor, Camera, Transform, Viewport};
use glam::Vec3;
use render_graph::device::DeviceConfig;
use render_graph::{vk, GpuDevice};
use renderer::{install_render, BitsReadback, MeshLibrary, RenderReport, RenderSetup, Screenshots};
use samples::frame_passes::{BobClock, FramePassCheck, FramePassChoice};

#[derive(Parser)]
#[command(about = "A user's passes inside the engine's frame, checked against the CPU every frame")]
struct Options {
    /// Frames to run.
    #[arg(long, default_value_t = 12)]
    frames: u64,
    /// Post-processes after the geometry, in order: `fog`, `outline` (comma-separated).
    #[arg(long, value_delimiter = ',')]
    post: Vec<String>,
    /// Every object's box as lines, green where the GPU drew it, red where it culled it.
    #[arg(long)]
    debug_boxes: bool,
    /// Move every object up and down on the GPU before the cull.
    #[arg(long)]
    bob: bool,
    /// Write the last frame to this PNG.
    #[arg(long)]
    png: Option<std::path::PathBuf>,
}

const SIZE: (u32, u32) = (160, 96);
const CAPACITY: u32 = 256;

fn main() -> ExitCode {
    samples::init_logging();
    let options = Options::parse();
    let choice = match FramePassChoice::parse(&options.post, options.debug_boxes, options.bob) {
        Ok(choice) => choice,
        Err(error) => {
            eprintln!("frame_passes: {error}");
            return ExitCode::FAILURE;
        }
    };
    let device = match GpuDevice::new(&DeviceConfig::default()) {
        Ok(device) => Arc::new(device),
        Err(error) => {
            eprintln!("frame_passes: needs a Vulkan device: {error}");
            return ExitCode::FAILURE;
        }
    };
    let clock = BobClock::default();
    let (check, add_passes) = match FramePassCheck::new(&device, choice, CAPACITY, clock.clone()) {
        Ok(both) => both,
        Err(error) => {
            eprintln!("frame_passes: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut app = runtime::App::new();
    let setup = RenderSetup {
        shadows: false,
        backend: CullingBackend::Gpu,
        device: Some(Arc::clone(&device)),
        extent: vk::Extent2D { width: SIZE.0, height: SIZE.1 },
        capacity: CAPACITY,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.1, 0.1, 0.2, 1.0],
        bits: BitsReadback::Wait,
        passes: vec![Box::new(add_passes)],
    };
    if let Err(error) = install_render(&mut app, setup) {
        eprintln!("frame_passes: needs a Vulkan device with GPU culling: {error}");
        return ExitCode::FAILURE;
    }
    app.insert_resource(Viewport { width: SIZE.0, height: SIZE.1 });
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 3.0, 14.0), Vec3::ZERO));
    let wall = Transform { scale: Vec3::new(4.0, 3.0, 0.3), ..Transform::from_translation(Vec3::new(-3.0, 0.0, 4.0)) };
    let mut places = vec![wall];
    places.extend((0..48).map(|index| {
        Transform::from_translation(Vec3::new((index % 8) as f32 * 2.5 - 9.0, 0.0, -(index / 8) as f32 * 3.0))
    }));
    for (index, place) in places.iter().enumerate() {
        let entity = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), *place);
        let color = if index == 0 { [0.9, 0.5, 0.1, 1.0] } else { [0.2, 0.4, 0.9, 1.0] };
        app.world_mut().insert_one(entity, BaseColor(color)).expect("spawned");
    }
    let mut failures = 0;
    for frame in 0..options.frames {
        clock.set(app.frames_run() + 1);
        {
            let mut shots = app.resource_mut::<Screenshots>();
            shots.request(renderer::COLOR);
            if frame + 1 == options.frames {
                if let Some(png) = &options.png {
                    shots.request_png(renderer::COLOR, None, png);
                }
            }
        }
        app.run_frame();
        let report = app.resource::<RenderReport>().clone();
        if let Some(error) = &report.error {
            eprintln!("frame_passes: frame {frame}: {error}");
            return ExitCode::FAILURE;
        }
        let shots = app.resource_mut::<Screenshots>().take();
        let Some(color) = shots.iter().find(|shot| shot.image == renderer::COLOR) else {
            eprintln!("frame_passes: frame {frame}: no screenshot of the colour");
            return ExitCode::FAILURE;
        };
        let checked = check.check(&app.resource::<Visibility>(), &[], (&report.bits, &[]), &color.rgba8, color.width);
        match checked {
            Ok(mismatches) if mismatches.is_clean() => {}
            Ok(mismatches) => {
                eprintln!("frame {frame}: does not match the CPU: {mismatches:?}");
                failures += 1;
            }
            Err(error) => {
                eprintln!("frame {frame}: cannot check: {error}");
                failures += 1;
            }
        }
    }
    drop(app);
    let problems = device.validation_counts();
    println!("frame_passes: {} frames, {failures} mismatches against the CPU ({choice:?})", options.frames);
    if problems.has_problems() {
        eprintln!("frame_passes: validation reported {problems:?}");
        return ExitCode::FAILURE;
    }
    if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
