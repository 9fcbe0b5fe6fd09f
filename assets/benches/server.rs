//! Loading a 1M-triangle glTF file while the game runs: the frames (paced at 60 Hz) of a
//! CPU-culled world of 100,000 objects with a turning camera, first without a load, then
//! while the [`AssetServer`] loads and processes the file on a loader thread, its jobs on
//! the frame's job system (the global one), then on a pool of its own of one thread (the
//! loader thread alone). Prints the median and worst frame of each run, the time and frames
//! from `load` to `Ready`, and the frames its upload takes under the default transfer budget
//! ([`meshes::TransferQueue`]).
//!
//! Run: `ENGINE_THREADS=2 cargo bench -p assets --bench server`

use std::sync::Arc;
use std::time::{Duration, Instant};

use assets::{AssetServer, LoadState, ServerOptions};
use ecs::{scene, Camera, Transform, Visible, WorldTransform};
use glam::{Mat4, Quat, Vec3};
use meshes::{FrameTransfer, TransferQueue, TransferRegion, DEFAULT_TRANSFER_BUDGET};
use runtime::{App, JobSystem, Stage, System};
use serde_json::json;

/// Quads per side of the grid: 708 x 708 x 2 = 1,002,528 triangles.
const SIDE: u32 = 708;
const OBJECTS: usize = 100_000;
const FRAME: Duration = Duration::from_micros(16_667);
const BASELINE_FRAMES: usize = 120;

/// A rolling grid of `SIDE` x `SIDE` quads with normals, as .glb bytes.
fn grid_glb() -> Vec<u8> {
    let mut bin = Vec::new();
    let height = |x: f32, z: f32| 0.08 * (x * 9.0).sin() * (z * 7.0).cos();
    for row in 0..=SIDE {
        for column in 0..=SIDE {
            let (x, z) = (column as f32 / SIDE as f32, row as f32 / SIDE as f32);
            for value in [x, height(x, z), z] {
                bin.extend_from_slice(&value.to_le_bytes());
            }
        }
    }
    let positions = bin.len();
    let stride = SIDE + 1;
    for row in 0..SIDE {
        for column in 0..SIDE {
            let corner = row * stride + column;
            for index in [corner, corner + stride, corner + 1, corner + 1, corner + stride, corner + stride + 1] {
                bin.extend_from_slice(&index.to_le_bytes());
            }
        }
    }
    let vertices = stride * stride;
    let document = json!({
        "asset": { "version": "2.0" },
        "scene": 0,
        "scenes": [{ "nodes": [0] }],
        "nodes": [{ "mesh": 0 }],
        "meshes": [{ "primitives": [{ "attributes": { "POSITION": 0 }, "indices": 1 }] }],
        "buffers": [{ "byteLength": bin.len() }],
        "bufferViews": [
            { "buffer": 0, "byteOffset": 0, "byteLength": positions },
            { "buffer": 0, "byteOffset": positions, "byteLength": bin.len() - positions }
        ],
        "accessors": [
            { "bufferView": 0, "componentType": 5126, "count": vertices, "type": "VEC3",
              "min": [0.0, -0.08, 0.0], "max": [1.0, 0.08, 1.0] },
            { "bufferView": 1, "componentType": 5125, "count": SIDE * SIDE * 6, "type": "SCALAR" }
        ]
    });
    let mut text = serde_json::to_vec(&document).expect("serialises");
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    let total = 12 + 8 + text.len() + 8 + bin.len();
    let mut out = b"glTF".to_vec();
    out.extend_from_slice(&2_u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}

/// The turning camera's heading, degrees.
struct Heading(f32);

/// A world of `OBJECTS` unit cubes on a grid and a camera that turns a degree a frame.
fn game() -> App {
    let mut app = App::new();
    culling::install(&mut app);
    let side = (OBJECTS as f32).sqrt().ceil() as usize;
    let mesh = scene::unit_cube_mesh();
    app.world_mut().spawn_batch((0..OBJECTS).map(|index| {
        let (x, z) = ((index % side) as f32 - side as f32 / 2.0, (index / side) as f32 - side as f32 / 2.0);
        (WorldTransform(Mat4::from_translation(Vec3::new(x * 2.0, 0.0, z * 2.0))), mesh, Visible(true))
    }));
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), Transform::IDENTITY);
    app.insert_resource(Heading(0.0));
    app.add_system(
        Stage::Input,
        System::new("turn camera", move |ctx| {
            let degrees = {
                let mut heading = ctx.resource_mut::<Heading>();
                heading.0 += 1.0;
                heading.0
            };
            let rotation = Quat::from_rotation_y(degrees.to_radians());
            *ctx.get_mut::<Transform>(camera).expect("the camera has a Transform") =
                Transform::from_translation_rotation(Vec3::new(0.0, 3.0, 0.0), rotation);
        })
        .writes::<Transform>()
        .writes_resource::<Heading>(),
    );
    for _ in 0..10 {
        app.run_frame();
    }
    app
}

/// Runs a frame and sleeps out the rest of its 60 Hz period; returns the frame's time.
fn timed_frame(app: &mut App) -> Duration {
    let started = Instant::now();
    app.run_frame();
    let took = started.elapsed();
    std::thread::sleep(FRAME.saturating_sub(took));
    took
}

fn median_and_worst(frames: &mut [Duration]) -> (f64, f64) {
    frames.sort();
    let milliseconds = |duration: Duration| duration.as_secs_f64() * 1e3;
    (milliseconds(frames[frames.len() / 2]), milliseconds(frames[frames.len() - 1]))
}

fn main() {
    let folder = std::env::temp_dir().join(format!("assets-server-bench-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("a scratch folder");
    let path = folder.join("grid.glb");
    std::fs::write(&path, grid_glb()).expect("writes the file");
    let mut app = game();
    let mut baseline: Vec<Duration> = (0..BASELINE_FRAMES).map(|_| timed_frame(&mut app)).collect();

    let (base_median, base_worst) = median_and_worst(&mut baseline);
    println!("frames without a load: median {base_median:.2} ms, worst {base_worst:.2} ms ({BASELINE_FRAMES})");
    let mut scene = None;
    for (label, jobs) in [("the frame's pool", None), ("a pool of its own", Some(Arc::new(JobSystem::new(1))))] {
        let server = AssetServer::new(ServerOptions { loader_threads: 1, jobs, ..ServerOptions::default() });
        let started = Instant::now();
        let handle = server.load(&path);
        let mut loading = Vec::new();
        while server.state(handle).expect("a live handle") == LoadState::Loading {
            loading.push(timed_frame(&mut app));
        }
        let ready = started.elapsed();
        assert_eq!(server.state(handle).expect("a live handle"), LoadState::Ready, "the grid loads");
        let loaded = server.get(handle).expect("a live handle").expect("ready");
        let frames = loading.len();
        let (median, worst) = median_and_worst(&mut loading);
        println!(
            "load on {label}: {} triangles ({} levels) Ready after {:.0} ms, {frames} frames; \
             frames meanwhile: median {median:.2} ms, worst {worst:.2} ms",
            loaded.triangle_count(),
            loaded.meshes[0].levels.len(),
            ready.as_secs_f64() * 1e3
        );
        scene = Some(loaded);
    }
    let scene = scene.expect("loaded");

    // What the upload would move: every vertex (16 bytes, and 8 of texture coordinates),
    // every level's indices, every meshlet.
    let mut queue = TransferQueue::new();
    for (key, mesh) in scene.meshes.iter().enumerate() {
        let vertices = mesh.positions.len() as u64;
        let indices: u64 = mesh.levels.iter().map(|level| level.indices.len() as u64 * 4).sum();
        let meshlets: u64 = mesh.levels.iter().map(|level| level.meshlets.len() as u64).sum();
        let meshlet_bytes = meshlets * std::mem::size_of::<meshes::Meshlet>() as u64;
        queue.push(
            key,
            &[
                TransferRegion { target: 0, offset: 0, bytes: vertices * 16 },
                TransferRegion { target: 1, offset: 0, bytes: vertices * 8 },
                TransferRegion { target: 2, offset: 0, bytes: indices },
                TransferRegion { target: 3, offset: 0, bytes: meshlet_bytes },
            ],
        );
    }
    let total = queue.pending_bytes();
    let mut frame = FrameTransfer::default();
    let mut upload_frames = 0;
    while !queue.is_empty() {
        queue.next_frame(DEFAULT_TRANSFER_BUDGET, &mut frame);
        upload_frames += 1;
    }

    println!(
        "upload: {:.1} MiB in {upload_frames} frames of at most {} MiB",
        total as f64 / (1 << 20) as f64,
        DEFAULT_TRANSFER_BUDGET >> 20
    );
    std::fs::remove_dir_all(&folder).ok();
}
