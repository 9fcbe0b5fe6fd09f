//! The Render stage's CPU cost against what moved: 100k objects with GPU culling
//! (`install_render`), 0%, 1%, 10% and 30% of them moving every frame (a system with a
//! filtered query, as a game moves things). Each sample is the Render stage's own time of a
//! frame (the changed slots into the GPU scene, the upload staged, the graph recorded and
//! submitted: `<share>/stage`) and, apart, the part that follows the changes (the changed
//! slots written into the GPU scene: `<share>/sync`); the device is waited for before each
//! frame, outside the time, so the stage never waits for the GPU and what is measured is the
//! CPU's work. The same run prints the bytes uploaded per frame against movers x bytes per
//! mover.
//!
//! Without a Vulkan device the benchmark says why and measures nothing.

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use culling::CullingBackend;
use ecs::{scene, Camera, Transform, Viewport};
use glam::Vec3;
use render_graph::device::{DeviceConfig, GpuDevice};
use render_graph::vk;
use renderer::{install_render, BitsReadback, RenderReport, RenderSetup};
use renderer::{MeshLibrary, OBJECT_TRANSFORM_BYTES};
use runtime::hecs::With;
use runtime::{App, Stage, System};

const OBJECTS: usize = 100_000;

/// Marks a moving object.
struct Mover;

/// 100k unit cubes on a grid, every `1 / share`-th a mover that bobs each frame, and a camera
/// looking over part of it.
fn app(device: &Arc<GpuDevice>, share: f64) -> App {
    let mut app = App::with_threads(2);
    let setup = RenderSetup {
        shadows: false,
        backend: CullingBackend::Gpu,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: 64, height: 64 },
        capacity: OBJECTS as u32 + 64,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.0; 4],
        bits: BitsReadback::None,
        passes: Vec::new(),
    };
    install_render(&mut app, setup).expect("a device is there");
    app.insert_resource(Viewport { width: 64, height: 64 });
    let world = app.world_mut();
    scene::spawn_camera(
        world,
        Camera::default(),
        scene::look_at(Vec3::new(0.0, 30.0, 0.0), Vec3::new(200.0, 0.0, 200.0)),
    );
    let entities = scene::spawn_mesh_grid(world, OBJECTS, 2.0, scene::unit_cube_mesh());
    let movers = (OBJECTS as f64 * share) as usize;
    for (index, &entity) in entities.iter().enumerate() {
        if movers > 0 && index * movers / OBJECTS != (index + 1) * movers / OBJECTS {
            world.insert_one(entity, Mover).expect("just spawned");
        }
    }
    app.add_system(
        Stage::Input,
        System::new("bob", |ctx| {
            let lift = (ctx.time.frame_index % 2) as f32 * 0.25;
            ctx.par_for_each::<With<&mut Transform, &Mover>>(4096, |transform| transform.translation.y = lift);
        })
        .query::<With<&mut Transform, &Mover>>(),
    );
    app
}

fn render_stage(criterion: &mut Criterion) {
    let device = match GpuDevice::new(&DeviceConfig::default()) {
        Ok(device) => Arc::new(device),
        Err(reason) => {
            eprintln!("render_stage: no Vulkan device ({reason}); nothing measured");
            return;
        }
    };
    let mut group = criterion.benchmark_group("render_stage_100k");
    group.sample_size(20).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    for (name, share) in [("still", 0.0), ("moving_1pct", 0.01), ("moving_10pct", 0.1), ("moving_30pct", 0.3)] {
        let mut app = app(&device, share);
        for _ in 0..4 {
            app.run_frame();
            device.wait_idle().expect("the device waits");
        }
        let report = app.resource::<RenderReport>().clone();
        assert!(report.error.is_none(), "{:?}", report.error);
        let movers = (OBJECTS as f64 * share) as u64;
        eprintln!(
            "render_stage_100k/{name}: {} bytes uploaded a frame for {movers} movers x {} bytes = {} ({:.3}x)",
            report.upload.bytes,
            OBJECT_TRANSFORM_BYTES,
            movers * OBJECT_TRANSFORM_BYTES,
            report.upload.bytes as f64 / (movers * OBJECT_TRANSFORM_BYTES).max(1) as f64
        );
        // The whole stage, and apart the part that follows the changes (the changed slots
        // written into the GPU scene; the rest is the graph's recording and submission).
        for (part, sync_only) in [("stage", false), ("sync", true)] {
            group.bench_function(format!("{name}/{part}"), |bencher| {
                bencher.iter_custom(|iterations| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iterations {
                        device.wait_idle().expect("the device waits");
                        app.run_frame();
                        let seconds = if sync_only {
                            app.resource::<RenderReport>().sync_seconds
                        } else {
                            let render = app.schedule().stage_seconds().find(|(stage, _)| *stage == "Render");
                            render.map_or(0.0, |(_, seconds)| seconds)
                        };
                        total += Duration::from_secs_f64(seconds);
                    }
                    total
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, render_stage);
criterion_main!(benches);
