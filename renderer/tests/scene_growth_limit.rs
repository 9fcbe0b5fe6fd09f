//! Device memory exhausted while the world grows, on lavapipe with validation: the growth
//! that cannot allocate is reported once (a `scene growth failed` error in the frame whose
//! growth failed), the frames draw the objects that fit, and the game goes on; once the
//! memory is there again, the next frame that needs more slots grows and draws them all.
//! (Its own test binary: the memory limit is the process's.)

use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{scene, Camera, Transform};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::{
    install_render, set_scene_memory_limit, BitsReadback, MeshLibrary, RenderReport, RenderSetup, OBJECT_RECORD_BYTES,
    OBJECT_TRANSFORM_BYTES,
};

fn app(device: &Arc<GpuDevice>, backend: CullingBackend) -> runtime::App {
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: 48, height: 32 },
        capacity: 64,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.1, 0.2, 0.3, 1.0],
        bits: if backend == CullingBackend::Gpu { BitsReadback::Wait } else { BitsReadback::None },
        passes: Vec::new(),
        shadows: false,
    };
    let mut app = runtime::App::with_threads(1);
    install_render(&mut app, setup).expect("a device is there");
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 30.0), Vec3::ZERO));
    app
}

fn spawn(app: &mut runtime::App, count: usize) {
    for index in 0..count {
        let place = Vec3::new((index % 20) as f32 - 10.0, (index / 20) as f32 - 10.0, 0.0);
        scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(place));
    }
}

#[test]
fn a_growth_without_memory_is_reported_once_and_the_frames_draw_what_fits() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        // Room for 128 slots: the growth to 256 fails.
        set_scene_memory_limit(Some(128 * (OBJECT_TRANSFORM_BYTES + OBJECT_RECORD_BYTES)));
        let mut app = app(&device, backend);
        spawn(&mut app, 100);
        app.run_frame();
        assert_eq!(app.resource::<RenderReport>().error, None, "{backend:?}: 64 grows to 128");
        spawn(&mut app, 100);
        app.run_frame();
        let report = app.resource::<RenderReport>().clone();
        let error = report.error.clone().unwrap_or_default();
        assert!(error.starts_with("scene growth failed"), "{backend:?}: the growth's error is named: {error:?}");
        assert!(error.contains("128 to 256"), "{backend:?}: {error}");
        assert_eq!(report.frames, 2, "{backend:?}: the frame is drawn all the same");
        let drawn = report.frames;
        for frame in 0..3 {
            spawn(&mut app, 10);
            app.run_frame();
            let report = app.resource::<RenderReport>();
            assert_eq!(report.error, None, "{backend:?} frame {frame}: reported once");
            assert_eq!(report.frames, drawn + frame + 1, "{backend:?}: the game goes on drawing");
            if backend == CullingBackend::Gpu {
                let objects = report.gpu.expect("the GPU's counts").objects;
                assert_eq!(objects, 128, "{backend:?}: the slots that fit are culled and drawn");
            }
        }
        assert_eq!(app.resource::<Visibility>().len(), 230, "{backend:?}: every mesh has a slot");
        // Memory again: the next frame that needs more slots grows.
        set_scene_memory_limit(None);
        spawn(&mut app, 60);
        app.run_frame();
        let report = app.resource::<RenderReport>();
        assert_eq!(report.error, None, "{backend:?}: grown");
        if backend == CullingBackend::Gpu {
            assert_eq!(report.gpu.expect("the GPU's counts").objects, 290, "{backend:?}: every slot");
        }
    }
    assert_no_validation_messages(&device);
}
