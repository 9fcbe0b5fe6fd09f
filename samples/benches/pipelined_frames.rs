//! Serial against pipelined frames: the city at 100k objects with CPU culling (a CPU-heavy
//! simulation and cull) rendered into a 160x90 image (recording and submitting the city's
//! graph, where lavapipe's rasterisation is small), on 2 threads. `simulate_only` is the same
//! city without the renderer: the first half of a frame. The render half is `serial` minus
//! it; pipelined frames should take about the longer of the two.
//!
//! Run: `cargo bench -p samples --bench pipelined_frames` (needs a Vulkan device; lavapipe
//! will do).

use criterion::{criterion_group, criterion_main, Criterion};
use culling::occlusion::OccluderMeshes;
use ecs::{RenderSettings, Viewport};
use renderer::{install_render, BitsReadback, RenderSetup};
use runtime::App;
use samples::city::{self, CityConfig, CityLibrary, CityMeshes};

/// The city at about `objects` mesh entities, with the renderer when `device` is given.
fn city_app(objects: f64, device: Option<&std::sync::Arc<render_graph::GpuDevice>>) -> App {
    let mut app = App::with_threads(2);
    culling::install(&mut app);
    city::install_motion(&mut app);
    app.set_fixed_delta(Some(1.0 / 60.0));
    app.insert_resource(Viewport { width: 160, height: 90 });
    let mut occluders = OccluderMeshes::new();
    occluders.insert(CityMeshes::BUILDING, city::building_occluder());
    app.insert_resource(occluders);
    // The city's own density: 31 objects a block.
    let config = CityConfig { blocks: (objects / 31.0).sqrt().round() as u32, ..CityConfig::default() };
    let meshes = CityLibrary::build(&config);
    city::build_city(app.world_mut(), &config, Some(&meshes));
    city::attach_lods(app.world_mut(), &meshes);
    if let Some(device) = device {
        let setup = RenderSetup {
            shadows: false,
            backend: culling::CullingBackend::Cpu,
            device: Some(std::sync::Arc::clone(device)),
            extent: render_graph::vk::Extent2D { width: 160, height: 90 },
            capacity: city::rendering::capacity(app.world()),
            meshes: meshes.library.clone(),
            clear_color: [0.5, 0.6, 0.8, 1.0],
            bits: BitsReadback::None,
            passes: Vec::new(),
        };
        install_render(&mut app, setup).expect("the device is there");
    }
    app.run_frames(30);
    app
}

fn frames(criterion: &mut Criterion) {
    let Some(device) = render_graph::testing::gpu_test_context() else {
        eprintln!("pipelined_frames: no Vulkan device; nothing measured");
        return;
    };
    let mut group = criterion.benchmark_group("city_100k_cpu_culling_160x90");
    group.sample_size(30);
    let mut simulate = city_app(100_000.0, None);
    group.bench_function("simulate_only", |bench| bench.iter(|| simulate.run_frame()));
    drop(simulate);
    let mut app = city_app(100_000.0, Some(&device));
    group.bench_function("serial", |bench| bench.iter(|| app.run_frame()));
    app.resource_mut::<RenderSettings>().pipelined_frames = true;
    app.run_frames(5);
    group.bench_function("pipelined", |bench| bench.iter(|| app.run_frame()));
    renderer::FrameInFlight::finish(&mut app);
    group.finish();
}

criterion_group!(benches, frames);
criterion_main!(benches);
