//! Split-screen culled on the GPU where occlusion decides, on lavapipe with validation: a wall
//! between two rows of cubes, one camera on each side, each in one half of the window. Each
//! view's wall hides the row behind it, which the other view sees in front of its own wall:
//! one view's occluders must never hide what the other sees. Each view must occlude something
//! (its own pyramid rectangle is tested), keep every object owning a pixel of its rectangle in
//! its own bits (`false_hidden` 0), draw its rectangle as the unculled reference does, and one
//! and two threads must draw the same frames while the cameras move.

mod headless_app;
mod lit_cube;
mod window_views;

use std::sync::Arc;

use culling::CullingBackend;
use ecs::{scene, Transform};
use glam::Vec3;
use headless_app::{headless_app_with, AppOptions, SKY};
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::GpuDevice;
use renderer::truth::ReferenceRenderer;
use renderer::{lock_capture, FrameInFlight, RenderReport};
use window_views::{check_window_views, split_cameras};

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
    let options = AppOptions { threads, ..AppOptions::default() };
    let size = (WIDTH, HEIGHT, 64);
    let (mut app, capture) = headless_app_with(device, CullingBackend::Gpu, lit_cube(), size, options, |_| {});
    let world = app.world_mut();
    let wall = Transform { scale: Vec3::new(14.0, 6.0, 0.3), ..Transform::from_translation(Vec3::new(0.0, 1.0, 0.0)) };
    scene::spawn_mesh(world, scene::unit_cube_mesh(), wall);
    for side in [-1.0f32, 1.0] {
        for x in [-2.0f32, -0.5, 1.0, 2.5] {
            let cube = Transform::from_translation(Vec3::new(x, 0.2, 2.0 * side));
            scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform { scale: Vec3::splat(0.6), ..cube });
        }
    }
    let cameras = split_cameras(world, eyes(0));
    (app, capture, cameras)
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
    drop(report);
    let checks = check_window_views(reference, app, image, CullingBackend::Gpu);
    let report = app.resource::<RenderReport>();
    for (_, index, checked) in checks {
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
