//! Split-screen on both culling backends, on lavapipe with validation: two cameras looking at
//! the same cubes from opposite sides, each in one half of the window ([`CameraRect`]). Each
//! half of the frame equals the frame its camera draws alone at the half's size, culled or not
//! (the other view's culling never hides what a view sees: on the GPU each view has its own
//! two-phase occlusion, pyramid rectangle, bits and lists), and the truth of each view finds
//! nothing owning a pixel of its rectangle left out of its answer (on the GPU, of its own
//! bits); once the second camera is despawned the frame is the first camera's alone; one and
//! two threads draw the same frames.

mod headless_app;
mod lit_cube;
mod window_views;

use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{scene, Camera, ResolvedViews, Transform};
use glam::Vec3;
use headless_app::{culling, headless_app_with, AppOptions, SKY};
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::GpuDevice;
use renderer::truth::ReferenceRenderer;
use renderer::{lock_capture, FrameInFlight, RenderReport};
use window_views::{check_window_views, split_cameras};

const WIDTH: u32 = 128;
const HEIGHT: u32 = 64;
const FRAMES: u64 = 4;
/// The frame the second camera is despawned before.
const DESPAWNED: u64 = 3;

/// The two eyes, on opposite sides of the cubes.
fn eyes() -> [Transform; 2] {
    [scene::look_at(Vec3::new(1.0, 2.0, 9.0), Vec3::ZERO), scene::look_at(Vec3::new(-1.0, 3.0, -9.0), Vec3::ZERO)]
}

/// An app of `threads` threads drawing into a `width` x `height` window on the CPU backend,
/// with the cubes: a grid around the origin and a few beside each eye (seen by the other).
fn app(
    device: &Arc<GpuDevice>,
    (width, height): (u32, u32),
    threads: usize,
    culled: bool,
) -> (runtime::App, renderer::SharedCapture) {
    app_on(device, CullingBackend::Cpu, (width, height), threads, culled)
}

/// [`app`] culled by `backend`.
fn app_on(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    (width, height): (u32, u32),
    threads: usize,
    culled: bool,
) -> (runtime::App, renderer::SharedCapture) {
    let options = AppOptions { threads, ..AppOptions::default() };
    let size = (width, height, 64);
    let (mut app, capture) = headless_app_with(device, backend, lit_cube(), size, options, |app| culling(app, culled));
    let world = app.world_mut();
    for x in [-3.0f32, -1.5, 0.0, 1.5, 3.0] {
        for z in [-1.5f32, 0.0, 1.5] {
            scene::spawn_mesh(
                world,
                scene::unit_cube_mesh(),
                Transform::from_translation(Vec3::new(x, (x + z) * 0.3, z)),
            );
        }
    }
    for side in [-1.0f32, 1.0] {
        // Beside and behind each eye: outside one view, far inside the other.
        scene::spawn_mesh(
            world,
            scene::unit_cube_mesh(),
            Transform::from_translation(Vec3::new(6.0 * side, 0.0, 12.0 * side)),
        );
        scene::spawn_mesh(
            world,
            scene::unit_cube_mesh(),
            Transform::from_translation(Vec3::new(0.0, -1.0, 11.0 * side)),
        );
    }
    (app, capture)
}

/// The frames of the split-screen app culled by `backend`: the whole image, frame by frame.
/// With `reference` (drawing at the window's size), every view of the frames with two is judged.
fn split_frames(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    threads: usize,
    culled: bool,
    mut reference: Option<&mut ReferenceRenderer>,
) -> Vec<(Vec<u8>, (u32, u32))> {
    let (mut app, capture) = app_on(device, backend, (WIDTH, HEIGHT), threads, culled);
    let [_, second] = split_cameras(app.world_mut(), eyes());
    let mut frames = Vec::new();
    for frame in 0..FRAMES {
        if frame == DESPAWNED {
            app.world_mut().despawn(second).expect("spawned");
        }
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
        if backend == CullingBackend::Gpu {
            let views = if frame < DESPAWNED { 2 } else { 0 };
            assert_eq!(report.view_gpu.len(), views, "frame {frame}: the GPU culled each window view");
            assert!(report.view_gpu.iter().all(|stats| stats.culled_on_device));
        }
        drop(report);
        let capture = lock_capture(&capture);
        if let Some(reference) = reference.as_deref_mut().filter(|_| frame < DESPAWNED) {
            judge_views(reference, &app, (&capture.pixels, capture.extent), frame, backend);
        }
        frames.push((capture.pixels.clone(), capture.extent));
    }
    frames
}

/// Each window view of the frame `app` drew into `image`: its rectangle equals the unculled
/// reference of that view and nothing owning a pixel of it was left out of its answer (culled
/// on the GPU, of its own bits).
fn judge_views(
    reference: &mut ReferenceRenderer,
    app: &runtime::App,
    image: (&[u8], (u32, u32)),
    frame: u64,
    backend: CullingBackend,
) {
    assert_eq!(app.resource::<ResolvedViews>().len(), 2, "frame {frame}: two views");
    for (view, _, checked) in check_window_views(reference, app, image, backend) {
        let label = format!("frame {frame} view {}", view.0);
        assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
        assert_eq!(checked.differing_pixels, 0, "{label}: culling changed the picture");
        assert!(checked.truth.objects_with_pixels > 0, "{label}: the view sees cubes");
    }
    let views = app.resource::<ResolvedViews>();
    let visibility = app.resource::<Visibility>();
    let report = app.resource::<RenderReport>();
    let second = visibility.for_view(views.views()[1].id).expect("an answer");
    let main = visibility.for_view(views.views()[0].id).expect("an answer");
    assert_ne!(main.visible(), second.visible(), "frame {frame}: each view culled for itself");
    if backend == CullingBackend::Gpu {
        let words = report.bits.len();
        let (first, other) = report.view_bits.split_at(words);
        assert_ne!(first, other, "frame {frame}: each view has bits of its own");
    }
}

/// The frame camera `eye` draws alone into a window of half the width.
fn alone(device: &Arc<GpuDevice>, eye: Transform) -> Vec<u8> {
    let (mut app, capture) = app(device, (WIDTH / 2, HEIGHT), 2, true);
    scene::spawn_camera(app.world_mut(), Camera::default(), eye);
    app.run_frame();
    FrameInFlight::finish(&mut app);
    let capture = lock_capture(&capture);
    assert_eq!(capture.extent, (WIDTH / 2, HEIGHT));
    capture.pixels.clone()
}

/// Columns `from..from + WIDTH / 2` of an RGBA8 image `WIDTH` wide.
fn half(pixels: &[u8], from: u32) -> Vec<u8> {
    let row = WIDTH as usize * 4;
    let (start, len) = (from as usize * 4, WIDTH as usize / 2 * 4);
    pixels.chunks_exact(row).flat_map(|row| row[start..start + len].iter().copied()).collect()
}

/// Pixels (RGBA8) that differ between `a` and `b`.
fn differing(a: &[u8], b: &[u8]) -> usize {
    assert_eq!(a.len(), b.len());
    a.chunks_exact(4).zip(b.chunks_exact(4)).filter(|(a, b)| a != b).count()
}

/// The split frames culled by `backend` against the cameras drawn alone: each half is its
/// camera's frame, culled equals unculled, one thread equals two, and after the despawn the
/// frame is the first camera's alone.
fn check_split_screen(backend: CullingBackend) {
    let Some(device) = gpu_test_context() else { return };
    let [left, right] = eyes();
    let (left_alone, right_alone) = (alone(&device, left), alone(&device, right));
    assert_ne!(left_alone, right_alone, "the cameras see different pictures");
    let sky = left_alone.chunks_exact(4).filter(|pixel| pixel[..3] == left_alone[..3]).count();
    assert!(sky < left_alone.len() / 4, "the left camera sees cubes");
    let mut reference =
        ReferenceRenderer::with_device(Arc::clone(&device), WIDTH, HEIGHT, 64, lit_cube(), SKY).expect("a reference");
    let culled = split_frames(&device, backend, 2, true, Some(&mut reference));
    let unculled = split_frames(&device, backend, 2, false, None);
    let one_thread = split_frames(&device, backend, 1, true, None);
    for frame in 0..FRAMES as usize {
        let label = format!("frame {frame}");
        let (pixels, extent) = &culled[frame];
        assert_eq!(&unculled[frame], &culled[frame], "{label}: culling changed the picture");
        assert_eq!(&one_thread[frame], &culled[frame], "{label}: one thread and two differ");
        if (frame as u64) < DESPAWNED {
            assert_eq!(*extent, (WIDTH, HEIGHT), "{label}: the window");
            assert_eq!(differing(&half(pixels, 0), &left_alone), 0, "{label}: the left half");
            assert_eq!(differing(&half(pixels, WIDTH / 2), &right_alone), 0, "{label}: the right half");
        } else {
            assert_eq!(*extent, (WIDTH / 2, HEIGHT), "{label}: the first camera's rectangle alone");
            assert_eq!(differing(pixels, &left_alone), 0, "{label}: the first camera alone");
        }
    }
    assert_no_validation_messages(&device);
}

#[test]
fn each_half_of_a_split_screen_frame_is_its_camera_drawn_alone() {
    check_split_screen(CullingBackend::Cpu);
}

/// GPU culling culls every window view (in one dispatch per phase, the default), each
/// against its own rectangle of the pyramid, with its own history of bits and its own lists.
#[test]
fn gpu_culling_culls_each_window_view_for_itself() {
    check_split_screen(CullingBackend::Gpu);
}

/// With `per_view_dispatch` each window view's dispatch is timed in each cull phase (its own
/// GPU zone); off (the default) one dispatch culls both, untimed per view, and draws the
/// same frame. The setting switches while the game runs, both ways (the graph compiles again:
/// the further views' steps are declared only with it on).
#[test]
fn each_window_view_culled_on_the_gpu_has_its_own_cull_times() {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, capture) = app_on(&device, CullingBackend::Gpu, (WIDTH, HEIGHT), 2, true);
    split_cameras(app.world_mut(), eyes());
    let control = app.resource::<renderer::GpuCullControl>().settings.clone();
    control.lock().expect("settings").per_view_dispatch = true;
    let frame = |app: &mut runtime::App| {
        app.run_frame();
        FrameInFlight::finish(app);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{:?}", report.error);
        let times: Vec<_> = report.view_gpu.iter().map(|stats| stats.gpu_ms).collect();
        drop(report);
        (times, lock_capture(&capture).pixels.clone())
    };
    // The first frames settle the history (the scene is still from then on).
    frame(&mut app);
    let (times, timed) = frame(&mut app);
    assert_eq!(times.len(), 2, "two window views culled on the GPU");
    let timed_per_view = |times: &[[Option<f64>; 3]]| {
        for (view, [early, hiz, late]) in times.iter().enumerate() {
            assert!(early.is_some_and(|ms| ms > 0.0), "view {view}: early cull {early:?}");
            assert!(late.is_some_and(|ms| ms > 0.0), "view {view}: late cull {late:?}");
            assert_eq!(*hiz, None, "view {view}: the pyramid is the window's, not a view's");
        }
    };
    timed_per_view(&times);
    control.lock().expect("settings").per_view_dispatch = false;
    let (times, shared) = frame(&mut app);
    assert_eq!(times.len(), 2);
    assert!(times.iter().all(|ms| *ms == [None; 3]), "one dispatch: no view's own times ({times:?})");
    assert_eq!(shared, timed, "one dispatch for both views draws the same frame");
    control.lock().expect("settings").per_view_dispatch = true;
    let (times, again) = frame(&mut app);
    assert_eq!(times.len(), 2);
    timed_per_view(&times);
    assert_eq!(again, timed, "switched on again, the same frame");
    assert_no_validation_messages(&device);
}
