//! What the engine's frame offers the passes users write: the pyramid of the final depth
//! (`hiz_depth_final`, built after the late phase and only when a pass reads it), last
//! frame's matrices and the frustum planes in the `view` uniform, and the users' passes'
//! timings in the `RenderReport`. On lavapipe with validation.

use std::sync::{Arc, Mutex};

use culling::CullingBackend;
use ecs::{scene, Camera, Transform};
use glam::{Mat4, Vec3};
use render_graph::readback::BufferReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice, ReadbackBuffer, RenderGraph};
use renderer::{
    install_render_to, points, AddPasses, BitsReadback, FrameTarget, MeshLibrary, RenderReport, RenderSetup,
    DEPTH_PREPASS, HIZ_DEPTH, HIZ_DEPTH_FINAL, VIEW,
};

const WIDTH: u32 = 40;
const HEIGHT: u32 = 24;

/// Notes the graph's order of passes after every frame.
struct Order(Arc<Mutex<Vec<String>>>);

impl FrameTarget for Order {
    fn add_passes(&mut self, _: &mut RenderGraph) -> render_graph::Result<()> {
        Ok(())
    }
    fn begin_frame(&mut self, _: &mut RenderGraph, _: renderer::TargetFrame) -> render_graph::Result<bool> {
        Ok(true)
    }
    fn end_frame(&mut self, graph: &mut RenderGraph, _: renderer::TargetFrame) -> render_graph::Result<()> {
        *self.0.lock().expect("not poisoned") = graph.execution_order()?;
        Ok(())
    }
}

/// An app drawing a row of cubes with GPU culling and the user's `passes`; the order of the
/// last frame's passes goes to `order`.
fn app(device: &Arc<GpuDevice>, passes: Vec<AddPasses>, order: &Arc<Mutex<Vec<String>>>) -> runtime::App {
    let setup = RenderSetup {
        shadows: false,
        backend: CullingBackend::Gpu,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: 16,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.0, 0.0, 0.0, 1.0],
        bits: BitsReadback::Wait,
        passes,
    };
    let mut app = runtime::App::with_threads(1);
    install_render_to(&mut app, setup, Some(Box::new(Order(Arc::clone(order))))).expect("a device is there");
    for index in 0..4 {
        let place = Transform::from_translation(Vec3::new(index as f32 * 1.5 - 2.0, 0.0, 0.0));
        scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), place);
    }
    app
}

#[test]
fn the_final_depths_pyramid_is_built_after_the_late_phase_and_only_when_read() {
    let Some(device) = gpu_test_context() else { return };
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut app = app(&device, Vec::new(), &order);
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 1.0, 6.0), Vec3::ZERO));
    app.run_frame();
    let unread = order.lock().unwrap().clone();
    assert!(!unread.iter().any(|pass| pass == "hi-z build final"), "nobody reads it: {unread:?}");
    {
        let mut shots = app.resource_mut::<renderer::Screenshots>();
        for image in [DEPTH_PREPASS, HIZ_DEPTH, HIZ_DEPTH_FINAL] {
            shots.request(image);
        }
    }
    // A cube that appears now is drawn by the late phase only: the early phase's pyramid
    // lacks it, the final one holds the whole frame's depth.
    scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(Vec3::new(0.0, 1.2, 2.0)));
    app.run_frame();
    let shots = app.resource_mut::<renderer::Screenshots>().take();
    let texels = |name: &str| shots.iter().find(|shot| shot.image == name).expect("taken").texels.clone();
    let (depth, early, last) = (texels(DEPTH_PREPASS), texels(HIZ_DEPTH), texels(HIZ_DEPTH_FINAL));
    assert_eq!(last, depth, "mip 0 of the final pyramid is the frame's depth");
    assert!(depth.chunks_exact(4).any(|texel| texel != [0; 4]), "the cubes are drawn");
    let read = order.lock().unwrap().clone();
    let at = |name: &str| read.iter().position(|pass| pass == name).unwrap_or_else(|| panic!("{name}: {read:?}"));
    assert!(at("depth_prepass late") < at("hi-z build final"), "after the late phase: {read:?}");
    assert!(at("hi-z build") < at("gpu cull late"), "{read:?}");
    assert_eq!(early.len(), last.len());
    assert_ne!(early, last, "the early phase's pyramid lacks the new cube");
    assert!(app.resource::<RenderReport>().error.is_none());
    drop(app);
    assert_no_validation_messages(&device);
}

/// The `f32`s of `bytes` from byte `offset`, `count` of them.
fn floats(bytes: &[u8], offset: usize, count: usize) -> Vec<f32> {
    bytes[offset..offset + count * 4].chunks_exact(4).map(|word| f32::from_le_bytes(word.try_into().unwrap())).collect()
}

#[test]
fn the_view_uniform_holds_last_frames_matrices_and_the_frustum_planes_and_the_report_the_users_timings() {
    let Some(device) = gpu_test_context() else { return };
    let copy = ReadbackBuffer::new(&device, "view copy", size_of::<renderer::FrameView>() as u64).expect("allocates");
    let shared = copy.shared();
    let passes: Vec<AddPasses> = vec![Box::new(move |graph: &mut RenderGraph| {
        graph.import_buffer("view copy", shared);
        graph.add_typed_pass_at(points::BEFORE_OUTPUT, BufferReadbackPass::new(VIEW, "view copy"))
    })];
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut app = app(&device, passes, &order);
    let camera =
        scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 1.0, 6.0), Vec3::ZERO));
    let mut drawn_with: Vec<Vec<f32>> = Vec::new();
    for frame in 0..3 {
        let eye = Vec3::new(frame as f32 * 0.5, 1.0, 6.0);
        *app.world_mut().get::<&mut Transform>(camera).expect("the camera") = scene::look_at(eye, Vec3::ZERO);
        app.run_frame();
        let report = app.resource::<RenderReport>().clone();
        assert!(report.error.is_none(), "{:?}", report.error);
        let bytes = copy.read().expect("the frame was waited for");
        let view_projection = floats(bytes, 128, 16);
        let previous = floats(bytes, 368, 16);
        let expected_previous = drawn_with.last().unwrap_or(&view_projection);
        assert_eq!(&previous, expected_previous, "frame {frame}: last frame's view_projection");
        let planes = floats(bytes, 432, 24);
        let frustum = culling::Frustum::from_view_projection(Mat4::from_cols_slice(&view_projection));
        for (index, plane) in frustum.planes().iter().enumerate() {
            assert_eq!(&planes[index * 4..index * 4 + 4], plane.to_array().as_slice(), "frame {frame}: plane {index}");
        }
        assert_eq!(&planes[20..24], [0.0, 0.0, 0.0, 1.0], "the infinite far plane passes every point");
        drawn_with.push(view_projection);
        let timed: Vec<&str> = report.user_passes.iter().map(|pass| pass.name.as_str()).collect();
        assert_eq!(timed, ["readback view to view copy"], "the users' passes alone");
        if device.capabilities().timestamps && frame > 0 {
            assert!(report.user_passes[0].gpu_ms.is_some(), "GPU milliseconds of the user's pass");
        }
    }
    assert_ne!(drawn_with[0], drawn_with[2], "the camera moved");
    drop(app);
    assert_no_validation_messages(&device);
}
