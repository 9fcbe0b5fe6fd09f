//! GPU culling on the device there is (lavapipe in CI), timed by the GPU's own timestamps
//! where the work is one pass, and by the wall clock for whole frames.
//!
//! - `gpu passes/<n> objects`: GPU milliseconds of [`HiZBuildPass`] (1280x720 pyramid) and of
//!   the late [`GpuCullPass`] (frustum + occlusion of every object) for 100k and 1M random
//!   boxes behind a wall, read from the graph's timestamp queries (`iter_custom`).
//! - `frame 100k occluder-heavy 1280x720/culling on|off`: a whole frame (cull, depth
//!   prepasses, Hi-Z, geometry; submit and wait) of a block grid of buildings with 100k
//!   objects, with GPU culling on and off; the ratio is the speed-up of culling.
//!
//! Without a Vulkan device the benchmarks say why and measure nothing.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use glam::{Mat4, Vec3};
use render_graph::device::{DeviceConfig, GpuDevice};
use render_graph::{vk, RenderGraph};
use renderer::{add_gpu_culled_scene_passes, FrameView, GpuCullPass, GpuCullSettings, HiZBuildPass};
use renderer::{lock_scene, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions, SharedScene};

const EXTENT: vk::Extent2D = vk::Extent2D { width: 1280, height: 720 };

struct Random(u64);

impl Random {
    fn range(&mut self, low: f32, high: f32) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        low + (high - low) * ((self.0 >> 40) as f32 / (1u64 << 24) as f32)
    }
}

fn cube(min: Vec3, max: Vec3, color: u32) -> ObjectDesc {
    let world = Mat4::from_translation((min + max) * 0.5) * Mat4::from_scale(max - min);
    ObjectDesc { world: world.to_cols_array_2d(), color, mesh: 0, material: 0 }
}

/// `objects` boxes: a wall across the view first, then random small boxes behind it.
fn wall_scene(device: &Arc<GpuDevice>, objects: u32) -> SharedScene {
    let mut scene = GpuScene::new(device, MeshLibrary::with_unit_cube(), objects).expect("scene");
    scene
        .push_object(cube(Vec3::new(-200.0, -200.0, -11.0), Vec3::new(200.0, 200.0, -10.0), 0xff80_8080))
        .expect("room");
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    for _ in 1..objects {
        let min = Vec3::new(random.range(-150.0, 150.0), random.range(-60.0, 60.0), random.range(-300.0, -20.0));
        scene.push_object(cube(min, min + Vec3::splat(random.range(0.2, 2.0)), 0xff20_60a0)).expect("room");
    }
    scene.draw_all_objects();
    scene.into_shared()
}

/// A block grid of buildings with small objects in the streets: `objects` in all.
fn city_scene(device: &Arc<GpuDevice>, objects: u32) -> SharedScene {
    let mut scene = GpuScene::new(device, MeshLibrary::with_unit_cube(), objects).expect("scene");
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    let blocks = 40;
    for x in 0..blocks {
        for z in 0..blocks {
            let corner = Vec3::new(x as f32 * 20.0 - 400.0, 0.0, z as f32 * 20.0 - 400.0);
            let height = random.range(10.0, 60.0);
            scene.push_object(cube(corner, corner + Vec3::new(14.0, height, 14.0), 0xff90_8070)).expect("room");
        }
    }
    while scene.object_count() < objects {
        let spot = Vec3::new(random.range(-400.0, 400.0), 0.0, random.range(-400.0, 400.0));
        scene.push_object(cube(spot, spot + Vec3::splat(random.range(0.3, 2.0)), 0xff30_a040)).expect("room");
    }
    scene.draw_all_objects();
    scene.into_shared()
}

fn graph_for(
    device: &Arc<GpuDevice>,
    scene: &SharedScene,
    settings: GpuCullSettings,
    eye: Vec3,
    target: Vec3,
) -> RenderGraph {
    let mut graph = RenderGraph::new(Arc::clone(device), EXTENT).expect("graph");
    let settings = Arc::new(Mutex::new(settings));
    let options = ScenePassOptions { readback: false, ..ScenePassOptions::default() };
    add_gpu_culled_scene_passes(&mut graph, scene, &options, &settings, false).expect("passes");
    let projection = Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 16.0 / 9.0, 0.1);
    graph.set_param(FrameView::from_view_projection(projection * Mat4::look_at_rh(eye, target, Vec3::Y)));
    // Upload every record (4 MiB of staging per frame) and warm the history.
    while lock_scene(scene).dirty_count() > 0 {
        graph.execute_frame().expect("upload frame");
    }
    for _ in 0..3 {
        graph.execute_frame().expect("warm frame");
    }
    graph.wait_idle().expect("idle");
    graph
}

fn gpu_ms_of(graph: &RenderGraph, pass: &str) -> f64 {
    graph.stats().passes.iter().find(|stats| stats.name == pass).and_then(|stats| stats.gpu_ms).unwrap_or(0.0)
}

fn gpu_passes(criterion: &mut Criterion, device: &Arc<GpuDevice>) {
    for objects in [100_000u32, 1_000_000] {
        let scene = wall_scene(device, objects);
        let mut graph = graph_for(device, &scene, GpuCullSettings::default(), Vec3::ZERO, Vec3::NEG_Z);
        let mut group = criterion.benchmark_group(format!("gpu passes/{objects} objects"));
        group.sample_size(10);
        for pass in [HiZBuildPass::NAME, GpuCullPass::LATE_NAME] {
            group.bench_function(pass, |bencher| {
                bencher.iter_custom(|iterations| {
                    let mut total = 0.0;
                    for _ in 0..iterations {
                        graph.execute_frame().expect("frame");
                        graph.wait_idle().expect("idle");
                        total += gpu_ms_of(&graph, pass);
                    }
                    Duration::from_secs_f64(total / 1e3)
                })
            });
        }
        group.finish();
    }
}

fn whole_frame(criterion: &mut Criterion, device: &Arc<GpuDevice>) {
    let mut group = criterion.benchmark_group("frame 100k occluder-heavy 1280x720");
    group.sample_size(10);
    for (name, settings) in [
        ("culling on", GpuCullSettings::default()),
        ("culling off", GpuCullSettings { frustum: false, occlusion: false, ..GpuCullSettings::default() }),
    ] {
        let scene = city_scene(device, 100_000);
        let mut graph = graph_for(device, &scene, settings, Vec3::new(3.0, 2.0, 3.0), Vec3::new(40.0, 2.0, 60.0));
        group.bench_function(name, |bencher| {
            bencher.iter(|| {
                graph.execute_frame().expect("frame");
                graph.wait_idle().expect("idle");
            })
        });
    }
    group.finish();
}

fn benches(criterion: &mut Criterion) {
    let device =
        match GpuDevice::new(&DeviceConfig { app_name: String::from("culling bench"), ..DeviceConfig::default() }) {
            Ok(device) => Arc::new(device),
            Err(error) => {
                println!("skipping GPU culling benchmarks: no Vulkan device ({error})");
                return;
            }
        };
    gpu_passes(criterion, &device);
    whole_frame(criterion, &device);
}

criterion_group!(gpu, benches);
criterion_main!(gpu);
