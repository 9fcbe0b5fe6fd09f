//! Last frame's matrices follow the camera, not the place, on lavapipe with validation, on
//! both culling backends: two split-screen cameras move and swap their orders and halves,
//! then the main one is replaced by a new camera (the main view passes to the other one).
//! While each frame runs,
//! every window view's block of the `view` uniform (the graph's `WindowViews`, as a pass
//! reads it) and the frame's own view hold last frame's matrices of their own camera, and a
//! camera not drawn last frame holds its own (no motion).

use std::sync::{Arc, Mutex};

use culling::CullingBackend;
use ecs::{scene, Camera, CameraRect, Transform};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, ExecuteContext, GpuDevice, Registry, RenderGraph, TypedPass};
use renderer::{
    install_render_to, points, BitsReadback, FrameInFlight, FrameView, HeadlessTarget, MeshLibrary, RenderReport,
    RenderSetup, WindowViews,
};
use runtime::hecs::Entity;

const WIDTH: u32 = 128;
const HEIGHT: u32 = 64;

/// A view-projection matrix, column-major.
type Matrix = [[f32; 4]; 4];

/// One view's matrices as a pass saw them: its camera, this frame's and last frame's
/// view-projection.
type Block = (Option<Entity>, Matrix, Matrix);

/// What the probe saw while the frame ran: each window view's block, the main view's index
/// among them and the frame's own view.
#[derive(Default)]
struct Seen {
    blocks: Vec<Block>,
    main: usize,
    frame: Option<(Matrix, Matrix)>,
}

/// Reads the frame's view parameters while the frame runs.
struct Probe(Arc<Mutex<Seen>>);

impl TypedPass for Probe {
    type Handles = ();
    fn name(&self) -> &str {
        "view history probe"
    }
    fn register(&mut self, registry: &mut Registry<'_>) {
        registry.side_effect();
    }
    fn execute(&mut self, _: &(), context: &mut ExecuteContext<'_>) {
        let mut seen = self.0.lock().expect("the probe's record");
        seen.blocks.clear();
        if let Some(views) = context.param::<WindowViews>() {
            let blocks = views.views().iter().zip(views.uniforms());
            seen.blocks.extend(
                blocks.map(|(view, block)| (view.camera, block.view_projection, block.previous_view_projection)),
            );
            seen.main = views.main();
        }
        seen.frame = context.param::<FrameView>().map(|view| (view.view_projection, view.previous_view_projection));
    }
}

fn app(device: &Arc<GpuDevice>, backend: CullingBackend, seen: &Arc<Mutex<Seen>>) -> runtime::App {
    let seen = Arc::clone(seen);
    let add = move |graph: &mut RenderGraph| graph.add_typed_pass_at(points::AFTER_GEOMETRY, Probe(Arc::clone(&seen)));
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: 16,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.1, 0.2, 0.3, 1.0],
        bits: BitsReadback::Wait,
        passes: vec![Box::new(add)],
        shadows: false,
    };
    let mut app = runtime::App::with_threads(2);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    ecs::install(&mut app);
    let (target, _capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    let bounds = ecs::Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5));
    let cube = ecs::Mesh::new(ecs::MeshHandle(0), ecs::MaterialHandle(0), bounds);
    scene::spawn_mesh(app.world_mut(), cube, Transform::default());
    app
}

/// A camera of `order` in the window's half `side` (0 left, 1 right), at `eye`.
fn camera(app: &mut runtime::App, order: i32, side: u32, eye: Vec3) -> Entity {
    let entity =
        scene::spawn_camera(app.world_mut(), Camera { order, ..Camera::default() }, scene::look_at(eye, Vec3::ZERO));
    place(app, entity, order, side, eye);
    entity
}

/// Gives `camera` its order, half of the window and eye.
fn place(app: &mut runtime::App, camera: Entity, order: i32, side: u32, eye: Vec3) {
    let world = app.world_mut();
    world.get::<&mut Camera>(camera).expect("a camera").order = order;
    *world.get::<&mut Transform>(camera).expect("a camera") = scene::look_at(eye, Vec3::ZERO);
    world.insert_one(camera, CameraRect::new(0.5 * side as f32, 0.0, 0.5, 1.0)).expect("a camera");
}

/// Runs a frame; returns what the probe saw.
fn frame(app: &mut runtime::App, seen: &Mutex<Seen>) -> (Vec<Block>, usize, (Matrix, Matrix)) {
    app.run_frame();
    FrameInFlight::finish(app);
    let report = app.resource::<RenderReport>();
    assert!(report.error.is_none(), "{:?}", report.error);
    let seen = seen.lock().expect("the probe's record");
    (seen.blocks.clone(), seen.main, seen.frame.expect("the frame's view"))
}

/// This frame's view-projection of `camera` among `blocks`.
fn now_of(blocks: &[Block], camera: Entity) -> Matrix {
    blocks.iter().find(|block| block.0 == Some(camera)).expect("the camera's view").1
}

fn check(backend: CullingBackend) {
    let Some(device) = gpu_test_context() else { return };
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut app = app(&device, backend, &seen);
    let first = camera(&mut app, 0, 0, Vec3::new(0.0, 2.0, 6.0));
    let second = camera(&mut app, 1, 1, Vec3::new(0.0, 2.0, -6.0));
    let (before, main, _) = frame(&mut app, &seen);
    assert_eq!((before.len(), before[main].0), (2, Some(first)), "{backend:?}: two views, the first camera's main");
    // Both move and swap orders and halves: the second camera's view now draws first, where
    // the first's stood (the main view stays the first camera's: it is held while active).
    place(&mut app, first, 1, 1, Vec3::new(1.0, 2.0, 6.0));
    place(&mut app, second, 0, 0, Vec3::new(-1.0, 2.0, -6.0));
    let (after, main, frame_view) = frame(&mut app, &seen);
    assert_eq!((after[0].0, after[1].0, after[main].0), (Some(second), Some(first), Some(first)), "{backend:?}");
    for &(camera, now, previous) in &after {
        let camera = camera.expect("a camera's view");
        assert_eq!(previous, now_of(&before, camera), "{backend:?}: {camera:?} takes its own history");
        assert_ne!(previous, now, "{backend:?}: {camera:?} moved");
    }
    assert_eq!(frame_view, (now_of(&after, first), now_of(&before, first)), "{backend:?}: the main view's history");
    // The first camera replaced by a new one at its place: the main view passes to the second
    // camera, with that camera's history; the newcomer has none.
    app.world_mut().despawn(first).expect("a camera");
    let third = camera(&mut app, 1, 1, Vec3::new(4.0, 2.0, 4.0));
    let (last, main, frame_view) = frame(&mut app, &seen);
    let cameras: Vec<_> = last.iter().map(|block| block.0).collect();
    assert_eq!((cameras, last[main].0), (vec![Some(second), Some(third)], Some(second)), "{backend:?}");
    assert_eq!(last[0].2, now_of(&after, second), "{backend:?}: the second camera's history");
    assert_eq!(last[1].2, last[1].1, "{backend:?}: the new camera starts without motion");
    assert_eq!(frame_view, (last[0].1, now_of(&after, second)), "{backend:?}: the new main view's history");
    assert_no_validation_messages(&device);
}

#[test]
fn last_frames_matrices_follow_the_camera_on_the_cpu_backend() {
    check(CullingBackend::Cpu);
}

#[test]
fn last_frames_matrices_follow_the_camera_on_the_gpu_backend() {
    check(CullingBackend::Gpu);
}
