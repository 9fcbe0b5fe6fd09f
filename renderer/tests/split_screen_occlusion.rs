//! Split-screen culled on the GPU where occlusion decides, on lavapipe with validation: a wall
//! between two rows of cubes, one camera on each side, each in one half of the window. Each
//! view's wall hides the row behind it, which the other view sees in front of its own wall:
//! one view's occluders must never hide what the other sees. Each view must occlude something
//! (its own pyramid rectangle is tested), keep every object owning a pixel of its rectangle in
//! its own bits (`false_hidden` 0), draw its rectangle as the unculled reference does, and one
//! and two threads must draw the same frames while the cameras move.

mod lit_cube;

use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{scene, Camera, CameraRect, ResolvedViews, Transform, ViewTarget};
use glam::Vec3;
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::truth::{check_gpu_view, ReferenceRenderer};
use renderer::{
    install_render_to, lock_capture, BitsReadback, FrameInFlight, HeadlessTarget, RenderReport, RenderSetup,
};

const SKY: [f32; 4] = [0.1, 0.2, 0.3, 1.0];
const WIDTH: u32 = 128;
const HEIGHT: u32 = 64;
const FRAMES: u64 = 5;

/// The two eyes of frame `frame`, on opposite sides of the wall, drifting sideways.
fn eyes(frame: u64) -> [Transform; 2] {
    let drift = frame as f32 * 0.4;
    [
        scene::look_at(Vec3::new(drift, 1.0, 9.0), Vec3::new(0.0, 0.5, 0.0)),
        scene::look_at(Vec3::new(-drift, 1.5, -9.0), Vec3::new(0.0, 0.5, 0.0)),
    ]
}

/// A GPU-culled app of `threads` threads with the wall, a row of cubes on each side of it
/// and the two cameras, each in one half of the window.
fn app(device: &Arc<GpuDevice>, threads: usize) -> (runtime::App, renderer::SharedCapture, [runtime::hecs::Entity; 2]) {
    let setup = RenderSetup {
        backend: CullingBackend::Gpu,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: 64,
        meshes: lit_cube(),
        clear_color: SKY,
        bits: BitsReadback::Wait,
        passes: Vec::new(),
        shadows: false,
    };
    let mut app = runtime::App::with_threads(threads);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    ecs::install(&mut app);
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    let world = app.world_mut();
    let wall = Transform { scale: Vec3::new(14.0, 6.0, 0.3), ..Transform::from_translation(Vec3::new(0.0, 1.0, 0.0)) };
    scene::spawn_mesh(world, scene::unit_cube_mesh(), wall);
    for side in [-1.0f32, 1.0] {
        for x in [-2.0f32, -0.5, 1.0, 2.5] {
            let cube = Transform::from_translation(Vec3::new(x, 0.2, 2.0 * side));
            scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform { scale: Vec3::splat(0.6), ..cube });
        }
    }
    let [left, right] = eyes(0);
    let first = scene::spawn_camera(world, Camera::default(), left);
    let second = scene::spawn_camera(world, Camera { order: 1, ..Camera::default() }, right);
    world.insert_one(first, CameraRect::new(0.0, 0.0, 0.5, 1.0)).expect("a camera");
    world.insert_one(second, CameraRect::new(0.5, 0.0, 0.5, 1.0)).expect("a camera");
    (app, capture, [first, second])
}

/// The frames of the app on `threads` threads, each view judged by `reference` when given.
fn frames(device: &Arc<GpuDevice>, threads: usize, mut reference: Option<&mut ReferenceRenderer>) -> Vec<Vec<u8>> {
    let (mut app, capture, cameras) = app(device, threads);
    let mut images = Vec::new();
    for frame in 0..FRAMES {
        for (camera, eye) in cameras.iter().zip(eyes(frame)) {
            *app.world_mut().get::<&mut Transform>(*camera).expect("a camera") = eye;
        }
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let capture = lock_capture(&capture);
        if let Some(reference) = reference.as_deref_mut() {
            judge(reference, &app, (&capture.pixels, capture.extent), frame);
        }
        images.push(capture.pixels.clone());
    }
    images
}

/// Both views of the frame `app` drew into `image` against the truth, each with its own bits.
fn judge(reference: &mut ReferenceRenderer, app: &runtime::App, image: (&[u8], (u32, u32)), frame: u64) {
    let report = app.resource::<RenderReport>();
    assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
    assert_eq!(report.view_gpu.len(), 2, "frame {frame}: the GPU culled both views");
    let views = app.resource::<ResolvedViews>();
    let visibility = app.resource::<Visibility>();
    for view in views.views() {
        let ViewTarget::Window(rect) = &view.target else { panic!("frame {frame}: a window view") };
        let rect = [rect.x, rect.y, rect.width, rect.height];
        let index = usize::from(views.main() != Some(view.id));
        let answers = (app.world(), &*visibility);
        let checked =
            check_gpu_view(reference, image, rect, answers, (view.id, index), &report).expect("the truth answers");
        let label = format!("frame {frame} view {index}");
        assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
        assert_eq!(checked.differing_pixels, 0, "{label}: culling changed the picture");
        assert!(checked.truth.objects_with_pixels > 1, "{label}: the view sees the wall and its cubes");
        if frame > 0 {
            // Hidden behind its own wall: the row beyond it (seen by the other view).
            assert!(report.view_gpu[index].occlusion_rejected > 0, "{label}: {:?}", report.view_gpu[index]);
        }
    }
}

#[test]
fn one_views_occluders_never_hide_what_the_other_view_sees() {
    let Some(device) = gpu_test_context() else { return };
    let mut reference =
        ReferenceRenderer::with_device(Arc::clone(&device), WIDTH, HEIGHT, 64, lit_cube(), SKY).expect("a reference");
    let two = frames(&device, 2, Some(&mut reference));
    let one = frames(&device, 1, None);
    for (frame, (two, one)) in two.iter().zip(&one).enumerate() {
        assert_eq!(two, one, "frame {frame}: one thread and two differ");
    }
    assert_no_validation_messages(&device);
}
