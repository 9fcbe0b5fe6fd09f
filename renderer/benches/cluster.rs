//! Cluster (meshlet) culling on the device there is (lavapipe in CI), at street level in a
//! block grid of large closed meshes (subdivided boxes and spheres, meshlets by meshopt):
//!
//! - printed once: triangles submitted per frame by object culling alone and by object +
//!   cluster culling (the goal is at least 40% fewer), and the meshlet funnel;
//! - `cluster pass/<n> meshlets`: GPU milliseconds of the late and early cluster passes,
//!   read from the graph's timestamp queries (`iter_custom`);
//! - `frame street level 1280x720/<mode>`: a whole frame (culls, depth prepasses, Hi-Z,
//!   geometry; submit and wait) with object culling, and with object + cluster culling.
//!
//! Without a Vulkan device the benchmarks say why and measure nothing.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use culling::cluster::ClusterSettings;
use glam::{Mat4, Quat, Vec3};
use render_graph::device::{DeviceConfig, GpuDevice};
use render_graph::{vk, RenderGraph};
use renderer::{
    add_cluster_culled_scene_passes, add_gpu_culled_scene_passes, ClusterCullPass, ClusterReadbacks,
    ClusterSurvivorPass, GpuCullSettings, GpuCullStats,
};
use renderer::{lock_scene, FrameView, GpuScene, MeshLibrary, MeshVertices, ObjectDesc, ScenePassOptions, SharedScene};

/// The meshlet cones' weight these shapes are built with.
const CONE_WEIGHT: f32 = 0.25;

const EXTENT: vk::Extent2D = vk::Extent2D { width: 1280, height: 720 };

/// A grid of `blocks` x `blocks` buildings with spheres in the streets, about `meshlets`
/// meshlets in all.
fn street_scene(device: &Arc<GpuDevice>, blocks: u32, meshlets: u32) -> SharedScene {
    let mut library = MeshLibrary::new();
    let mut meshlet_counts = Vec::new();
    for ecs::scene::Geometry { positions, normals, indices } in
        [ecs::scene::subdivided_box(12), ecs::scene::uv_sphere(40)]
    {
        let (ordered, built) = assets::meshlets_in_order(&positions, &indices, CONE_WEIGHT);
        meshlet_counts.push(built.len() as u32);
        let vertices = MeshVertices { positions: &positions, normals: &normals, uvs: &[] };
        library.add_mesh_levels(vertices, &[(&ordered, &built)]).expect("a valid mesh");
    }
    let buildings = blocks * blocks;
    let spheres = meshlets.saturating_sub(buildings * meshlet_counts[0]) / meshlet_counts[1];
    let mut scene = GpuScene::new(device, library, buildings + spheres).expect("scene");
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut random = move |low: f32, high: f32| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        low + (high - low) * ((state >> 40) as f32 / (1u64 << 24) as f32)
    };
    let pitch = 20.0;
    let half = blocks as f32 * pitch * 0.5;
    for x in 0..blocks {
        for z in 0..blocks {
            let size = Vec3::new(14.0, random(10.0, 60.0), 14.0);
            let center = Vec3::new(x as f32 * pitch - half, size.y * 0.5, z as f32 * pitch - half);
            let world = Mat4::from_scale_rotation_translation(size, Quat::IDENTITY, center);
            scene
                .push_object(ObjectDesc { world: world.to_cols_array_2d(), color: 0xff90_8070, mesh: 0, material: 0 })
                .expect("room");
        }
    }
    for _ in 0..spheres {
        let radius = random(0.3, 1.5);
        // In the streets: on the grid lines between blocks.
        let street = (random(0.0, blocks as f32).floor()) * pitch - half + pitch * 0.5;
        let along = random(-half, half);
        let spot =
            if random(0.0, 1.0) < 0.5 { Vec3::new(street, radius, along) } else { Vec3::new(along, radius, street) };
        let world = Mat4::from_scale_rotation_translation(Vec3::splat(radius), Quat::IDENTITY, spot);
        scene
            .push_object(ObjectDesc { world: world.to_cols_array_2d(), color: 0xff30_a040, mesh: 1, material: 0 })
            .expect("room");
    }
    scene.draw_all_objects();
    scene.into_shared()
}

fn street_view(graph: &mut RenderGraph) {
    let projection = Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 16.0 / 9.0, 0.1);
    let eye = Vec3::new(10.0, 1.8, 3.0);
    let view = Mat4::look_at_rh(eye, eye + Vec3::new(0.3, -0.02, 1.0), Vec3::Y);
    graph.set_param(FrameView::from_view_projection(projection * view));
}

/// Uploads every record (4 MiB of staging per frame) and warms the history.
fn warm(graph: &mut RenderGraph, scene: &SharedScene) {
    while lock_scene(scene).dirty_count() > 0 {
        graph.execute_frame().expect("upload frame");
    }
    for _ in 0..3 {
        graph.execute_frame().expect("warm frame");
    }
    graph.wait_idle().expect("idle");
}

fn gpu_ms_of(graph: &RenderGraph, pass: &str) -> f64 {
    graph.stats().passes.iter().find(|stats| stats.name == pass).and_then(|stats| stats.gpu_ms).unwrap_or(0.0)
}

fn benches(criterion: &mut Criterion) {
    let device =
        match GpuDevice::new(&DeviceConfig { app_name: String::from("cluster bench"), ..DeviceConfig::default() }) {
            Ok(device) => Arc::new(device),
            Err(error) => {
                println!("skipping cluster culling benchmarks: no Vulkan device ({error})");
                return;
            }
        };
    let options = ScenePassOptions { readback: false, ..ScenePassOptions::default() };
    let objects_scene = street_scene(&device, 40, 1_000_000);
    let mut objects_graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph");
    street_view(&mut objects_graph);
    let settings = Arc::new(Mutex::new(GpuCullSettings::default()));
    let culled =
        add_gpu_culled_scene_passes(&mut objects_graph, &objects_scene, &options, &settings, false).expect("passes");
    warm(&mut objects_graph, &objects_scene);
    let object_stats = GpuCullStats::from_counters(culled.stats.read().expect("stats"), objects_graph.stats());

    let clusters_scene = street_scene(&device, 40, 1_000_000);
    let mut clusters_graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph");
    street_view(&mut clusters_graph);
    let clusters = add_cluster_culled_scene_passes(
        &mut clusters_graph,
        &clusters_scene,
        &options,
        ClusterSettings::default(),
        ClusterReadbacks::default(),
    )
    .expect("passes");
    warm(&mut clusters_graph, &clusters_scene);
    let stats = clusters.read_stats().expect("stats");
    println!(
        "street level, {} objects, {} meshlets: triangles submitted: object culling {}, object + cluster culling {} ({:.1}% fewer); meshlets after objects {}, frustum {}, cone {}, occlusion {} ({} conservative), drawn {}",
        lock_scene(&clusters_scene).object_count(),
        stats.meshlets,
        object_stats.triangles,
        stats.triangles,
        (1.0 - f64::from(stats.triangles) / f64::from(object_stats.triangles.max(1))) * 100.0,
        stats.after_objects(),
        stats.after_frustum(),
        stats.after_cone(),
        stats.after_occlusion(),
        stats.conservative,
        stats.drawn()
    );

    let mut group = criterion.benchmark_group(format!("cluster pass/{} meshlets", stats.meshlets));
    group.sample_size(10);
    for pass in [ClusterCullPass::LATE_NAME, ClusterSurvivorPass::NAME, ClusterCullPass::EARLY_NAME] {
        group.bench_function(pass, |bencher| {
            bencher.iter_custom(|iterations| {
                let mut total = 0.0;
                for _ in 0..iterations {
                    clusters_graph.execute_frame().expect("frame");
                    clusters_graph.wait_idle().expect("idle");
                    total += gpu_ms_of(&clusters_graph, pass);
                }
                Duration::from_secs_f64(total / 1e3)
            })
        });
    }
    group.finish();

    let mut group = criterion.benchmark_group("frame street level 1280x720");
    group.sample_size(10);
    for (name, graph) in [("object culling", &mut objects_graph), ("object + cluster culling", &mut clusters_graph)] {
        group.bench_function(name, |bencher| {
            bencher.iter(|| {
                graph.execute_frame().expect("frame");
                graph.wait_idle().expect("idle");
            })
        });
    }
    group.finish();
}

criterion_group!(cluster, benches);
criterion_main!(cluster);
