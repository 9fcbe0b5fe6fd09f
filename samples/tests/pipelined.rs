//! Pipelined frames in the stress world (movers, bullets spawned and despawned every frame,
//! turrets re-parented between ships), rendered on lavapipe with GPU culling and the GPU's
//! answer fed back: over 600 frames the world is the same, frame by frame, serial and
//! pipelined, on one thread and on two.

use std::sync::Arc;

use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::vk;
use renderer::{install_render, BitsReadback, RenderReport, RenderSetup};
use runtime::App;
use samples::stress::{build_stress, world_hash, StressConfig, StressMeshes};

/// The hash of every frame's world, chained, over `frames` frames.
fn run(device: &Arc<render_graph::GpuDevice>, threads: usize, pipelined: bool, frames: u64) -> u64 {
    let mut app = App::with_threads(threads);
    culling::install(&mut app);
    app.set_fixed_delta(Some(1.0 / 60.0));
    app.insert_resource(ecs::Viewport { width: 64, height: 36 });
    let config = StressConfig { objects: 1_000, churn: 40, restyle: 16, reparent: 4, ..StressConfig::default() };
    let objects = build_stress(&mut app, config);
    let setup = RenderSetup {
        shadows: false,
        backend: culling::CullingBackend::Gpu,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: 64, height: 36 },
        capacity: objects as u32 + 2 * config.churn as u32 + 64,
        meshes: StressMeshes::library(),
        clear_color: [0.0, 0.0, 0.0, 1.0],
        bits: BitsReadback::Lagged,
        passes: Vec::new(),
    };
    install_render(&mut app, setup).expect("a device is there");
    app.resource_mut::<ecs::RenderSettings>().pipelined_frames = pipelined;
    let mut chained = 0_u64;
    for frame in 0..frames {
        app.run_frame();
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
        drop(report);
        chained = chained.rotate_left(5) ^ world_hash(app.world());
    }
    chained
}

#[test]
fn the_world_is_the_same_pipelined_and_serial_on_one_and_two_threads() {
    let Some(device) = gpu_test_context() else { return };
    let serial = run(&device, 1, false, 600);
    for (threads, pipelined) in [(2, false), (1, true), (2, true)] {
        assert_eq!(run(&device, threads, pipelined, 600), serial, "{threads} threads, pipelined {pipelined}");
    }
    assert_no_validation_messages(&device);
}
