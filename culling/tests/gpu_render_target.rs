//! A `FrameTarget` that needs complete frames gets every object record uploaded before its
//! frame counts as drawn, even when they exceed one frame's upload budget; without it the
//! records stream in over the next frames.

use culling::gpu::{install_render_to, BitsReadback, FrameTarget, RenderReport, RenderSetup};
use culling::CullingBackend;
use ecs::{scene, Camera, Transform, Viewport};
use glam::Vec3;
use render_graph::passes::{MeshLibrary, ObjectDesc, DEFAULT_UPLOAD_BUDGET, OBJECT_RECORD_BYTES};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, RenderGraph};

/// Draws every frame; counts its calls.
struct Counting {
    complete: bool,
    frames: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl FrameTarget for Counting {
    fn add_passes(&mut self, _graph: &mut RenderGraph) -> render_graph::Result<()> {
        Ok(())
    }

    fn begin_frame(&mut self, _graph: &mut RenderGraph, _frame: u64) -> render_graph::Result<bool> {
        Ok(true)
    }

    fn end_frame(&mut self, _graph: &mut RenderGraph, _frame: u64) -> render_graph::Result<()> {
        self.frames.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    fn complete_uploads(&self) -> bool {
        self.complete
    }
}

/// The first frame's upload report and the graph executions it took, for a scene of more
/// records than one frame's budget, on the `backend`.
fn first_frame(complete: bool, backend: CullingBackend) -> Option<(RenderReport, u64, u64)> {
    let device = gpu_test_context()?;
    let objects = (2 * DEFAULT_UPLOAD_BUDGET / OBJECT_RECORD_BYTES + 10) as u32;
    let mut app = runtime::App::with_threads(2);
    let frames = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let setup = RenderSetup {
        backend,
        device: Some(device.clone()),
        extent: vk::Extent2D { width: 32, height: 32 },
        capacity: objects + 16,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.0, 0.0, 0.0, 1.0],
        style: Box::new(|slot, columns| ObjectDesc {
            world: columns.models[slot].to_cols_array_2d(),
            color: 0xff20_4080,
            mesh: 0,
            material: 0,
        }),
        bits: BitsReadback::Wait,
    };
    install_render_to(&mut app, setup, Some(Box::new(Counting { complete, frames: frames.clone() })))
        .expect("a device is there");
    app.insert_resource(Viewport { width: 32, height: 32 });
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO));
    for index in 0..objects {
        let position = Vec3::new((index % 100) as f32, (index / 100) as f32, -20.0);
        scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(position));
    }
    app.run_frame();
    let report = app.resource::<RenderReport>().clone();
    assert!(report.error.is_none(), "{:?}", report.error);
    assert_no_validation_messages(&device);
    let executions = report.frames;
    Some((report, executions, frames.load(std::sync::atomic::Ordering::Relaxed)))
}

#[test]
fn a_target_that_needs_complete_frames_gets_every_record_in_its_first_frame() {
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        let Some((report, executions, ends)) = first_frame(true, backend) else { return };
        assert_eq!(report.upload.pending_objects, 0, "{backend:?}: {:?}", report.upload);
        assert!(executions >= 3, "{backend:?}: two budgets and a rest take three executions: {executions}");
        assert!(report.upload.bytes > 2 * DEFAULT_UPLOAD_BUDGET, "{backend:?}: {:?}", report.upload);
        assert_eq!(ends, 1, "{backend:?}: the target sees one frame");
        let (streamed, executions, _) = first_frame(false, backend).expect("the device is still there");
        assert!(streamed.upload.pending_objects > 0, "{backend:?}: a game streams the rest: {:?}", streamed.upload);
        assert_eq!(executions, 1, "{backend:?}");
    }
}
