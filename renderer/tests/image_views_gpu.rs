//! Image-target views culled on the GPU by their own two-phase cull, on lavapipe with
//! validation: a monitor camera ([`CameraTarget::Image`]) and the window's camera look at two
//! walls from opposite sides, each wall hiding from one camera a row of cubes the other camera
//! sees. Over a camera path that cuts to the window's side and back, every frame: the monitor
//! equals itself drawn unculled, the truth of its own bits finds nothing owning a pixel of it
//! left out (so the window's occluders never hide what the monitor sees), and the window's
//! truth likewise (the monitor's never hide what the window sees); the monitor's own cull
//! counts objects occluded behind its wall; one and two threads draw the same pictures and
//! bits. Removing the monitor camera mid-run and adding it back starts its history afresh
//! (its first frame back draws nothing early). The scene growing past its capacity grows the
//! monitor's buffers and bits with it. A scene with a chain of levels the GPU is not given
//! draws the monitor from its CPU answer's lists (the fallback).

mod headless_app;
mod lit_cube;

use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{scene, BaseColor, Camera, CameraTarget, ImageFormat, ImageTarget, ResolvedViews, Transform, ViewTarget};
use glam::Vec3;
use headless_app::{culling, headless_app_with, AppOptions, SKY};
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::GpuDevice;
use renderer::truth::{check_gpu_image_view, check_gpu_view, FrameCheck, ReferenceRenderer};
use renderer::{lock_capture, FrameInFlight, RenderReport, Screenshot, Screenshots};
use runtime::hecs::Entity;

/// The clear colour.
const WIDTH: u32 = 96;
const HEIGHT: u32 = 64;
/// The monitor's side.
const SIDE: u32 = 64;
const MONITOR: &str = "monitor";
const CAPACITY: u32 = 64;
/// The frames of the path (see [`monitor_eye`]).
const FRAMES: usize = 7;
/// The frame before which the monitor camera is despawned, and the one it comes back in.
const GONE: usize = 4;
const BACK: usize = 5;

/// The window's eye, on the +z side of the walls.
fn window_eye() -> Transform {
    scene::look_at(Vec3::new(0.0, 2.0, 12.0), Vec3::ZERO)
}

/// The monitor's eye in `frame`: on the -z side (opposite the window's), cut to the window's
/// side in frame 2 (crossing it), back to the -z side in frame 3; from frame [`BACK`] on it
/// comes back opposite, then drifts.
fn monitor_eye(frame: usize) -> Transform {
    match frame {
        2 => scene::look_at(Vec3::new(1.5, 2.5, 11.0), Vec3::ZERO),
        _ => scene::look_at(Vec3::new(0.3 * frame as f32 - 0.6, 2.0, -12.0), Vec3::ZERO),
    }
}

/// Two walls and two rows: wall A (x < 0, z = 6) hides row A (z = 4) from the window, which
/// the monitor sees past wall B; wall B (x > 0, z = -6) hides row B (z = -4) from the monitor,
/// which the window sees; a cube in the middle both see.
fn spawn_scene(world: &mut runtime::hecs::World) {
    for (x, z) in [(-3.0f32, 6.0f32), (3.0, -6.0)] {
        let place = Transform::from_translation(Vec3::new(x, 1.0, z)).with_scale(Vec3::new(6.5, 5.0, 0.5));
        let wall = scene::spawn_mesh(world, scene::unit_cube_mesh(), place);
        world.insert_one(wall, BaseColor([0.8, 0.3, 0.2, 1.0])).expect("a wall");
    }
    for (side, z) in [(-1.0f32, 4.0f32), (1.0, -4.0)] {
        for x in [1.0f32, 2.5, 4.0] {
            let place = Transform::from_translation(Vec3::new(side * x, 0.0, z));
            scene::spawn_mesh(world, scene::unit_cube_mesh(), place);
        }
    }
    scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform::from_translation(Vec3::new(0.0, 0.0, 0.0)));
}

/// An app of `threads` threads culled on the GPU (`culled`: culling on), with the scene and the
/// window's camera.
fn gpu_app(device: &Arc<GpuDevice>, threads: usize, culled: bool) -> (runtime::App, renderer::SharedCapture) {
    let options = AppOptions { threads, ..AppOptions::default() };
    let size = (WIDTH, HEIGHT, CAPACITY);
    let prepare = |app: &mut runtime::App| culling(app, culled);
    let (mut app, capture) = headless_app_with(device, CullingBackend::Gpu, lit_cube(), size, options, prepare);
    spawn_scene(app.world_mut());
    scene::spawn_camera(app.world_mut(), Camera::default(), window_eye());
    (app, capture)
}

/// Spawns the monitor camera at its eye of `frame`.
fn spawn_monitor(world: &mut runtime::hecs::World, frame: usize) -> Entity {
    let camera = scene::spawn_camera(world, Camera { order: -1, ..Camera::default() }, monitor_eye(frame));
    let target = ImageTarget::new(MONITOR, SIDE, SIDE, ImageFormat::Rgba8Unorm);
    world.insert_one(camera, CameraTarget::Image(target)).expect("a camera");
    camera
}

/// What one frame of the path drew: the window, the monitor (empty while it is gone), the
/// window's and the monitor's bits, and the monitor's counters.
struct Frame {
    window: Vec<u8>,
    monitor: Vec<u8>,
    window_bits: Vec<u64>,
    monitor_bits: Vec<u64>,
    monitor_stats: Option<renderer::GpuCullStats>,
    /// What the window's cull found occluded.
    window_occluded: u32,
}

/// Whether two runs drew the same pictures with the same bits and counters (the GPU times
/// apart).
fn same_answers(a: &Frame, b: &Frame) -> bool {
    let counters =
        |frame: &Frame| frame.monitor_stats.map(|stats| renderer::GpuCullStats { gpu_ms: [None; 3], ..stats });
    a.window == b.window
        && a.monitor == b.monitor
        && a.window_bits == b.window_bits
        && a.monitor_bits == b.monitor_bits
        && counters(a) == counters(b)
}

/// The references judging the monitor (at its size) and the window (at the window's).
struct References {
    monitor: ReferenceRenderer,
    window: ReferenceRenderer,
}

impl References {
    /// The references of the scene's meshes on `device`.
    fn new(device: &Arc<GpuDevice>) -> References {
        let reference = |(width, height)| {
            ReferenceRenderer::with_device(Arc::clone(device), width, height, CAPACITY, lit_cube(), SKY)
                .expect("a reference")
        };
        References { monitor: reference((SIDE, SIDE)), window: reference((WIDTH, HEIGHT)) }
    }
}

/// Runs the path on the GPU backend; with `references`, judges every view of every frame.
fn run_path(
    device: &Arc<GpuDevice>,
    threads: usize,
    culled: bool,
    mut references: Option<&mut References>,
) -> Vec<Frame> {
    let (mut app, capture) = gpu_app(device, threads, culled);
    let mut monitor = Some(spawn_monitor(app.world_mut(), 0));
    let mut frames = Vec::new();
    for frame in 0..FRAMES {
        match (frame, monitor) {
            (GONE, Some(camera)) => {
                app.world_mut().despawn(camera).expect("spawned");
                monitor = None;
            }
            (BACK, None) => monitor = Some(spawn_monitor(app.world_mut(), frame)),
            (_, Some(camera)) => *app.world_mut().get::<&mut Transform>(camera).expect("a camera") = monitor_eye(frame),
            (_, None) => {}
        }
        if monitor.is_some() {
            // The monitor's picture, by its name (a screenshot: the frame waits for it).
            app.resource_mut::<Screenshots>().request(MONITOR);
        }
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let shots = app.resource_mut::<Screenshots>().take();
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
        let own = report.image_views.iter().find(|own| &*own.name == MONITOR);
        assert_eq!(own.is_some(), monitor.is_some(), "frame {frame}: the monitor culled on the GPU while it exists");
        let drawn = Frame {
            window: lock_capture(&capture).pixels.clone(),
            monitor: shots.into_iter().find(|shot| shot.image == MONITOR).map(shot_pixels).unwrap_or_default(),
            window_bits: report.bits.clone(),
            monitor_bits: own.map(|own| own.bits.clone()).unwrap_or_default(),
            monitor_stats: own.map(|own| own.stats),
            window_occluded: report.gpu.map_or(0, |stats| stats.occlusion_rejected),
        };
        drop(report);
        if let Some(references) = references.as_deref_mut() {
            judge(references, &app, &drawn, frame);
        }
        frames.push(drawn);
    }
    assert!(report_dropped(&app).is_empty(), "{:?}", report_dropped(&app));
    frames
}

fn report_dropped(app: &runtime::App) -> Vec<String> {
    app.resource::<RenderReport>().dropped_passes.clone()
}

/// A screenshot's RGBA8 picture, checked.
fn shot_pixels(shot: Screenshot) -> Vec<u8> {
    assert!(shot.error.is_none(), "{:?}", shot.error);
    assert_eq!((shot.width, shot.height), (SIDE, SIDE));
    shot.rgba8
}

/// Every view of the frame `app` drew: its picture equals its unculled reference and nothing
/// owning a pixel of it is left out of its own GPU bits.
fn judge(references: &mut References, app: &runtime::App, drawn: &Frame, frame: usize) {
    let views = app.resource::<ResolvedViews>();
    let visibility = app.resource::<Visibility>();
    let report = app.resource::<RenderReport>();
    let answers = (app.world(), &*visibility);
    let main = views.main().expect("the window's view");
    let window = check_gpu_view(
        &mut references.window,
        (&drawn.window, (WIDTH, HEIGHT)),
        [0, 0, WIDTH, HEIGHT],
        answers,
        (main, 0),
        &report,
    );
    assert_clean(window.expect("the window's truth answers"), &format!("frame {frame} window"));
    let Some(view) = views.views().iter().find(|view| matches!(&view.target, ViewTarget::Image(_))) else { return };
    let image = (&drawn.monitor[..], (SIDE, SIDE));
    let checked = check_gpu_image_view(&mut references.monitor, image, answers, (view.id, MONITOR), &report);
    assert_clean(checked.expect("the monitor's truth answers"), &format!("frame {frame} monitor"));
}

fn assert_clean(checked: FrameCheck, label: &str) {
    assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
    assert_eq!(checked.differing_pixels, 0, "{label}: culling changed the picture");
    assert!(checked.truth.objects_with_pixels > 0, "{label}: the view sees cubes");
}

#[test]
fn an_image_view_is_culled_on_the_gpu_with_its_own_two_phase_occlusion() {
    let Some(device) = gpu_test_context() else { return };
    let mut references = References::new(&device);
    let culled = run_path(&device, 2, true, Some(&mut references));
    let unculled = run_path(&device, 2, false, None);
    let one_thread = run_path(&device, 1, true, None);
    for (frame, drawn) in culled.iter().enumerate() {
        assert_eq!(drawn.monitor, unculled[frame].monitor, "frame {frame}: culling changed the monitor");
        assert_eq!(drawn.window, unculled[frame].window, "frame {frame}: culling changed the window");
        assert!(same_answers(drawn, &one_thread[frame]), "frame {frame}: one thread and two differ");
    }
    // Opposite the window, behind its wall, the monitor's own cull finds row B occluded
    // (its first frame has no history: everything is drawn late, and tested).
    for frame in [1, 3, BACK + 1] {
        let stats = culled[frame].monitor_stats.expect("the monitor's counters");
        assert!(stats.occlusion_rejected > 0, "frame {frame}: the monitor occludes nothing: {stats:?}");
        assert!(stats.early_drawn > 0, "frame {frame}: the monitor's history drew nothing early: {stats:?}");
        assert_ne!(culled[frame].monitor_bits, culled[frame].window_bits, "frame {frame}: bits of its own");
        // And the window's, behind its own wall, row A: which the monitor sees all the same.
        assert!(culled[frame].window_occluded > 0, "frame {frame}: the window occludes nothing");
    }
    // Back after its camera went: its history starts afresh, nothing drawn early.
    let back = culled[BACK].monitor_stats.expect("the monitor's counters");
    assert_eq!(back.early_drawn, 0, "the monitor came back with stale history: {back:?}");
    assert!(back.late_drawn > 0, "the monitor came back drawing nothing: {back:?}");
    assert!(culled[GONE].monitor_stats.is_none(), "the monitor's cull went with its camera");
    assert_no_validation_messages(&device);
}

/// A scene with a chain of levels the GPU is not given (nine levels, past the eight it chooses
/// from) draws that chain's objects at the main view's level in every view, so the monitor
/// cannot be culled on the GPU: it draws its CPU answer's lists (`image view monitor lists`),
/// and still equals itself unculled.
#[test]
fn an_image_view_whose_levels_the_gpu_cannot_choose_draws_its_cpu_answer() {
    let Some(device) = gpu_test_context() else { return };
    let mut pictures = Vec::new();
    for culled in [true, false] {
        let (mut app, _capture) = gpu_app(&device, 2, culled);
        let levels: Vec<ecs::LodLevel> = (1..=9)
            .map(|step| ecs::LodLevel { mesh: scene::unit_cube_mesh().mesh, max_distance: 2.0 * step as f32 })
            .collect();
        let place = Transform::from_translation(Vec3::new(-2.5, 0.0, 0.0));
        let chained = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), place);
        app.world_mut().insert_one(chained, ecs::Lod { levels: levels.into(), bias: 1.0 }).expect("an object");
        spawn_monitor(app.world_mut(), 0);
        for frame in 0..3 {
            app.resource_mut::<Screenshots>().request(MONITOR);
            app.run_frame();
            FrameInFlight::finish(&mut app);
            let shots = app.resource_mut::<Screenshots>().take();
            let report = app.resource::<RenderReport>();
            assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
            assert!(report.image_views.is_empty(), "frame {frame}: the monitor was culled on the GPU");
            let lists = report.passes.iter().any(|pass| pass.name == "image view monitor lists");
            assert!(lists, "frame {frame}: the monitor draws its CPU answer's lists");
            let shot = shots.into_iter().find(|shot| shot.image == MONITOR).expect("a screenshot");
            pictures.push(shot_pixels(shot));
        }
    }
    let (culled, unculled) = pictures.split_at(3);
    assert_eq!(culled, unculled, "culling changed the monitor");
    assert_no_validation_messages(&device);
}

/// The scene grows past its capacity while the monitor is culled on the GPU: its buffers and
/// the ring of its bits grow with the scene, and both views still hold to their truth.
#[test]
fn an_image_view_culled_on_the_gpu_follows_the_scene_as_it_grows() {
    let Some(device) = gpu_test_context() else { return };
    let mut references = References::new(&device);
    let (mut app, capture) = gpu_app(&device, 2, true);
    spawn_monitor(app.world_mut(), 0);
    for frame in 0..4 {
        if frame == 2 {
            // More cubes than the capacity, a grid under both cameras' eyes.
            for index in 0..CAPACITY + 16 {
                let (x, z) = ((index % 16) as f32 - 7.5, (index / 16) as f32 - 2.5);
                let place = Transform::from_translation(Vec3::new(x, -3.0, z)).with_scale(Vec3::splat(0.4));
                scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), place);
            }
        }
        app.resource_mut::<Screenshots>().request(MONITOR);
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let shots = app.resource_mut::<Screenshots>().take();
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
        let own = report.image_views.iter().find(|own| &*own.name == MONITOR).expect("culled on the GPU");
        let objects = app.resource::<Visibility>().len();
        assert!(own.bits.len() * 64 >= objects, "frame {frame}: the monitor's bits cover {objects} objects");
        let drawn = Frame {
            window: lock_capture(&capture).pixels.clone(),
            monitor: shots.into_iter().find(|shot| shot.image == MONITOR).map(shot_pixels).expect("a screenshot"),
            window_bits: report.bits.clone(),
            monitor_bits: own.bits.clone(),
            monitor_stats: Some(own.stats),
            window_occluded: 0,
        };
        drop(report);
        judge(&mut references, &app, &drawn, frame);
    }
    assert_no_validation_messages(&device);
}
