//! A user's passes inside the engine's frame, checked against the CPU on every frame: GPU
//! bobbing before the cull (`--bob`), fog and outlines on the engine's colour (`--post
//! fog,outline`) and every object's box coloured by the GPU's visibility bits
//! (`--debug-boxes`). The passes are in `samples/src/frame_passes.rs`; this program builds a
//! field of cubes behind a wall, renders it headless with GPU culling and, per frame, compares
//! the GPU's image, transforms and bits with what the CPU computes from the same inputs.
//!
//! Run: `cargo run -p samples --bin frame_passes -- --bob --post fog,outline --debug-boxes`.

use std::process::ExitCode;

use clap::Parser;
use culling::CullingBackend;
use ecs::{scene, BaseColor, Camera, Transform, Viewport};
use glam::Vec3;
use render_graph::vk;
use std::sync::{Arc, Mutex};

use render_graph::device::DeviceConfig;
use render_graph::readback::{image_readback_buffer, BufferReadbackPass, ReadbackPass};
use render_graph::{GpuDevice, ReadbackBuffer};
use renderer::{
    install_render, points, BitsReadback, MeshLibrary, RenderReport, RenderSetup, Screenshots, OBJECT_TRANSFORMS,
    OBJECT_TRANSFORM_BYTES,
};
use samples::frame_passes::{
    add_frame_passes, bob_offset, close, post_reference, FramePassChoice, BOB_HEIGHT, BOB_SPEED,
};

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
/// The host copy of the colour before the post-processes.
const BEFORE_POST: &str = "color before post";
/// The host copy of the transforms the frame drew with.
const TRANSFORMS_AFTER: &str = "transforms after";

fn main() -> ExitCode {
    samples::init_logging();
    let options = Options::parse();
    let choice = FramePassChoice {
        bob: options.bob,
        fog: options.post.iter().any(|post| post == "fog"),
        outline: options.post.iter().any(|post| post == "outline"),
        boxes: options.debug_boxes,
    };
    if let Some(unknown) = options.post.iter().find(|post| !["fog", "outline"].contains(&post.as_str())) {
        eprintln!("frame_passes: unknown post-process `{unknown}` (fog, outline)");
        return ExitCode::FAILURE;
    }
    let device = match GpuDevice::new(&DeviceConfig::default()) {
        Ok(device) => Arc::new(device),
        Err(error) => {
            eprintln!("frame_passes: needs a Vulkan device: {error}");
            return ExitCode::FAILURE;
        }
    };
    let before_post: Arc<Mutex<Option<(ReadbackBuffer, ReadbackBuffer)>>> = Arc::default();
    let shared_before = Arc::clone(&before_post);
    let mut app = runtime::App::new();
    let setup = RenderSetup {
        backend: CullingBackend::Gpu,
        device: Some(Arc::clone(&device)),
        extent: vk::Extent2D { width: SIZE.0, height: SIZE.1 },
        capacity: CAPACITY,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.1, 0.1, 0.2, 1.0],
        bits: BitsReadback::Wait,
        passes: vec![Box::new(move |graph| {
            // The colour as the geometry left it, before the post-processes: what the CPU's
            // reference starts from.
            let buffer = image_readback_buffer(graph.device(), BEFORE_POST, graph.output_extent())?;
            graph.import_buffer(BEFORE_POST, buffer.shared());
            graph.add_pass_at(points::AFTER_GEOMETRY, ReadbackPass::with_names(renderer::COLOR, BEFORE_POST))?;
            // The transforms as the frame drew them (after the GPU's bobbing).
            let transforms =
                ReadbackBuffer::new(graph.device(), TRANSFORMS_AFTER, u64::from(CAPACITY) * OBJECT_TRANSFORM_BYTES)?;
            graph.import_buffer(TRANSFORMS_AFTER, transforms.shared());
            graph.add_pass_at(points::BEFORE_OUTPUT, BufferReadbackPass::new(OBJECT_TRANSFORMS, TRANSFORMS_AFTER))?;
            *lock(&shared_before) = Some((buffer, transforms));
            add_frame_passes(graph, &choice, CAPACITY)
        })],
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
        {
            let mut shots = app.resource_mut::<Screenshots>();
            shots.request(renderer::COLOR);
            shots.request(renderer::DEPTH_PREPASS);
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
        let [color, depth] = [renderer::COLOR, renderer::DEPTH_PREPASS]
            .map(|name| shots.iter().find(|shot| shot.image == name).cloned().unwrap_or_default());
        let view = app.resource::<culling::Visibility>().view().copied().expect("a camera");
        let bob = if choice.bob { bob_offset(report.frames - 1, BOB_HEIGHT, BOB_SPEED) } else { 0.0 };
        let read = |pick: fn(&(ReadbackBuffer, ReadbackBuffer)) -> &ReadbackBuffer| {
            lock(&before_post)
                .as_ref()
                .and_then(|buffers| pick(buffers).read().ok().map(<[u8]>::to_vec))
                .unwrap_or_default()
        };
        let (before, transforms) = (read(|buffers| &buffers.0), read(|buffers| &buffers.1));
        let frame_view = FrameView { frame, planes: (view.near, view.far), bob, view: &view };
        failures += check_frame(&before, &color, &depth, &report, &frame_view, choice, &places);
        failures += check_transforms(frame, &transforms, &places, bob);
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

/// What the CPU knows of the frame's camera and motion.
struct FrameView<'a> {
    frame: u64,
    planes: (f32, f32),
    bob: f32,
    view: &'a ecs::ResolvedView,
}

fn lock<T>(value: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    value.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Compares one frame with the CPU's computation; returns the mismatches (and prints them).
fn check_frame(
    before: &[u8],
    color: &renderer::Screenshot,
    depth: &renderer::Screenshot,
    report: &RenderReport,
    camera: &FrameView<'_>,
    choice: FramePassChoice,
    places: &[Transform],
) -> usize {
    let FrameView { frame, planes, bob, view } = *camera;
    let width = color.width as usize;
    let depths: Vec<f32> =
        depth.texels.chunks_exact(4).map(|texel| f32::from_le_bytes(texel.try_into().expect("4"))).collect();
    let mut mismatches = 0;
    // The boxes: where each object is now (the host's place, moved by the GPU's bobbing), on
    // screen, and whether the GPU's bit says it was drawn.
    let screen_boxes: Vec<(bool, [f32; 4])> = places
        .iter()
        .enumerate()
        .map(|(slot, place)| {
            let visible = report.bits.get(slot / 64).is_some_and(|word| word >> (slot % 64) & 1 == 1);
            (
                visible,
                screen_rect(view, place.translation + Vec3::Y * bob, place.scale * 0.5, color.width, color.height),
            )
        })
        .collect();
    for (index, texel) in color.rgba8.chunks_exact(4).enumerate() {
        let (x, y) = ((index % width) as f32 + 0.5, (index / width) as f32 + 0.5);
        let line = match texel {
            [0, 255, 0, 255] => Some(true),
            [255, 0, 0, 255] => Some(false),
            _ => None,
        };
        if let (true, Some(visible)) = (choice.boxes, line) {
            let inside = screen_boxes.iter().any(|&(bit, [x0, y0, x1, y1])| {
                bit == visible && x >= x0 - 1.0 && x <= x1 + 1.0 && y >= y0 - 1.0 && y <= y1 + 1.0
            });
            if !inside {
                mismatches += 1;
            }
        }
    }
    if before.len() != color.rgba8.len() || depths.len() * 4 != color.rgba8.len() || color.rgba8.is_empty() {
        eprintln!("frame {frame}: the colour before the post-processes, the depth or the image is missing");
        return 1;
    }
    // The post-processes: the CPU's fog and outline of the colour before them, over the same
    // depth, against the GPU's, wherever no debug line was drawn over them.
    if choice.fog || choice.outline {
        let expected = post_reference(before, &depths, width, planes, choice.fog, choice.outline);
        for (texel, wanted) in color.rgba8.chunks_exact(4).zip(expected.chunks_exact(4)) {
            let line = choice.boxes && matches!(texel, [0, 255, 0, 255] | [255, 0, 0, 255]);
            if !line && !close(texel, wanted, 2) {
                mismatches += 1;
            }
        }
    }
    if mismatches > 0 {
        eprintln!("frame {frame}: {mismatches} pixels do not match the CPU");
    }
    mismatches
}

/// Compares the GPU's transforms after the frame with the host's places moved by the bobbing.
fn check_transforms(frame: u64, transforms: &[u8], places: &[Transform], bob: f32) -> usize {
    let floats: Vec<f32> =
        transforms.chunks_exact(4).map(|word| f32::from_le_bytes(word.try_into().expect("4"))).collect();
    // Row r of slot s starts at float s * 12 + r * 4; its w is the translation's component r.
    let wrong = places
        .iter()
        .enumerate()
        .filter(|&(slot, place)| {
            let height = floats.get(slot * 12 + 7).copied().unwrap_or(f32::NAN);
            let error = (height - (place.translation.y + bob)).abs();
            error.is_nan() || error > 1e-4
        })
        .count();
    if wrong > 0 {
        eprintln!("frame {frame}: {wrong} objects are not where the CPU says the bobbing put them");
    }
    wrong
}

/// The screen rectangle (pixels, y down) of the box `center ± half` seen through `view`.
fn screen_rect(view: &ecs::ResolvedView, center: Vec3, half: Vec3, width: u32, height: u32) -> [f32; 4] {
    let mut rect = [f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY];
    for corner in 0..8 {
        let side = Vec3::new(
            if corner & 1 != 0 { 1.0 } else { -1.0 },
            if corner & 2 != 0 { 1.0 } else { -1.0 },
            if corner & 4 != 0 { 1.0 } else { -1.0 },
        );
        let clip = view.view_projection * (center + half * side).extend(1.0);
        let (x, y) = ((clip.x / clip.w * 0.5 + 0.5) * width as f32, (0.5 - clip.y / clip.w * 0.5) * height as f32);
        rect = [rect[0].min(x), rect[1].min(y), rect[2].max(x), rect[3].max(y)];
    }
    rect
}
