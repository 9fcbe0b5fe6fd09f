//! Pipelined frames on lavapipe with validation: a scripted game (movers, spawns and
//! despawns every frame, parented children) draws, frame for frame, the same pictures
//! pipelined as serially on both culling backends, each delivered one frame later; switching
//! modes mid-run, resizing while a frame is in flight, a panic on the render thread or in a
//! system, and dropping the app mid-run never hang, panic twice or leak the device.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use culling::CullingBackend;
use ecs::{scene, BaseColor, Camera, Parent, RenderSettings, Transform, Viewport};
use glam::{Quat, Vec3};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice, RenderGraph};
use renderer::{install_render_to, BitsReadback, FrameTarget, MeshLibrary, RenderReport, RenderSetup, Screenshots};
use runtime::{App, Stage, System};

/// Marks the scripted movers.
#[derive(Clone, Copy)]
struct Mover(u32);

/// The scripted game: a camera, 40 movers (each with a parented child) on circles, and one
/// cube spawned and the oldest despawned every frame.
fn game(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    pipelined: bool,
    target: Option<Box<dyn FrameTarget>>,
) -> App {
    game_with(device, backend, pipelined, target, BitsReadback::None, false)
}

/// [`game`] with the GPU's answers read back as `bits` says, and with a shadowing sun when
/// `shadows`.
fn game_with(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    pipelined: bool,
    target: Option<Box<dyn FrameTarget>>,
    bits: BitsReadback,
    shadows: bool,
) -> App {
    let mut app = App::with_threads(2);
    let setup = RenderSetup {
        shadows,
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: 64, height: 40 },
        capacity: 256,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.1, 0.1, 0.2, 1.0],
        bits,
        passes: Vec::new(),
    };
    install_render_to(&mut app, setup, target).expect("a device is there");
    if shadows {
        let sun = scene::look_at(Vec3::new(10.0, 20.0, 10.0), Vec3::ZERO);
        app.world_mut().spawn((sun, ecs::DirectionalLight::default()));
    }
    app.resource_mut::<RenderSettings>().pipelined_frames = pipelined;
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 12.0, 30.0), Vec3::ZERO));
    for index in 0..40_u32 {
        let parent = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
        let hue = index as f32 / 40.0;
        app.world_mut().insert(parent, (Mover(index), BaseColor([hue, 1.0 - hue, 0.5, 1.0]))).expect("spawned");
        let child = scene::spawn_mesh(
            app.world_mut(),
            scene::unit_cube_mesh(),
            Transform { scale: Vec3::splat(0.5), ..Transform::from_translation(Vec3::new(0.0, 1.5, 0.0)) },
        );
        app.world_mut().insert(child, (Parent(parent), BaseColor([1.0, 1.0, 1.0, 1.0]))).expect("spawned");
    }
    let mut alive = std::collections::VecDeque::new();
    app.add_system(
        Stage::Input,
        System::new("script", move |ctx| {
            let frame = ctx.time.frame_index;
            for (transform, mover) in ctx.query::<(&mut Transform, &Mover)>().iter() {
                let angle = mover.0 as f32 * 0.157 + frame as f32 * 0.09;
                let radius = 4.0 + (mover.0 % 5) as f32 * 2.0;
                transform.translation = Vec3::new(angle.cos() * radius, (mover.0 % 3) as f32, angle.sin() * radius);
                transform.rotation = Quat::from_rotation_y(angle);
            }
            let x = (frame % 13) as f32 * 2.0 - 12.0;
            alive.push_back(ctx.commands.spawn((
                Transform::from_translation(Vec3::new(x, 4.0, -6.0)),
                scene::unit_cube_mesh(),
                ecs::WorldTransform::default(),
                ecs::Visible(true),
                BaseColor([1.0, 0.2, 0.2, 1.0]),
            )));
            if alive.len() > 6 {
                ctx.commands.despawn(alive.pop_front().expect("more than six"));
            }
        })
        .writes::<Transform>()
        .reads::<Mover>()
        .spawns(),
    );
    if shadows {
        let meshes = app
            .world()
            .query::<(runtime::hecs::Entity, &ecs::Mesh)>()
            .iter()
            .map(|(entity, _)| entity)
            .collect::<Vec<_>>();
        for entity in meshes {
            app.world_mut().insert_one(entity, ecs::ShadowCaster).expect("spawned");
        }
    }
    app
}

/// Runs `frames` frames asking for a screenshot of `color` every frame (plus one frame for
/// the pipelined run's last picture); returns (game frame, pixels) of every shot.
fn pictures(app: &mut App, frames: u64) -> Vec<(u64, Vec<u8>)> {
    let mut shots = Vec::new();
    for frame in 0..=frames {
        if frame < frames {
            app.resource_mut::<Screenshots>().request(renderer::COLOR);
        }
        app.run_frame();
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
        drop(report);
        shots.extend(app.resource_mut::<Screenshots>().take().into_iter().map(|shot| (shot.frame, shot.rgba8)));
    }
    shots
}

#[test]
fn pipelined_frames_draw_the_serial_pictures_one_frame_later_on_both_backends() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        let serial = pictures(&mut game(&device, backend, false, None), 12);
        let mut app = game(&device, backend, true, None);
        // Pipelined, frame N's picture comes with frame N + 1's Render stage.
        app.resource_mut::<Screenshots>().request(renderer::COLOR);
        app.run_frame();
        assert!(
            app.resource_mut::<Screenshots>().take().is_empty(),
            "{backend:?}: the first picture is still in flight"
        );
        let mut pipelined = vec![];
        for frame in 1..=12 {
            if frame < 12 {
                app.resource_mut::<Screenshots>().request(renderer::COLOR);
            }
            app.run_frame();
            let shots = app.resource_mut::<Screenshots>().take();
            assert_eq!(shots.len(), 1, "{backend:?}: one picture per frame");
            assert_eq!(shots[0].frame, frame - 1, "{backend:?}: the picture of the frame before");
            pipelined.push((shots[0].frame, shots[0].rgba8.clone()));
        }
        assert_eq!(serial.len(), 12);
        for ((frame, serial), (pipelined_frame, pipelined)) in serial.iter().zip(&pipelined) {
            assert_eq!(frame, pipelined_frame);
            assert!(serial == pipelined, "{backend:?}: frame {frame}'s picture differs between the modes");
        }
        let distinct: std::collections::BTreeSet<&Vec<u8>> = serial.iter().map(|(_, pixels)| pixels).collect();
        assert!(distinct.len() > 6, "{backend:?}: the script moves things ({} distinct pictures)", distinct.len());
    }
    assert_no_validation_messages(&device);
}

/// What a report says of its frame: every field that does not measure time.
#[derive(Debug, PartialEq)]
struct Answers {
    game_frame: Option<u64>,
    frames: u64,
    extent: (u32, u32),
    upload: renderer::UploadReport,
    synced_slots: u32,
    missing_meshes: u32,
    /// The GPU's culling counts: objects, frustum and occlusion rejected, early and late
    /// drawn, triangles.
    gpu: Option<[u32; 6]>,
    bits_frame: Option<u64>,
    bits: Vec<u64>,
    /// Each shadow view's casters, draws and triangles, and whether the GPU culled them.
    shadows: (Vec<(u32, u32, u64)>, bool),
}

impl Answers {
    fn of(report: &RenderReport) -> Answers {
        let gpu = report.gpu.as_ref().map(|gpu| {
            [gpu.objects, gpu.frustum_rejected, gpu.occlusion_rejected, gpu.early_drawn, gpu.late_drawn, gpu.triangles]
        });
        let views = report.shadows.views.iter().map(|view| (view.casters, view.count, view.triangles)).collect();
        Answers {
            game_frame: report.game_frame,
            frames: report.frames,
            extent: (report.extent.width, report.extent.height),
            upload: report.upload,
            synced_slots: report.synced_slots,
            missing_meshes: report.missing_meshes,
            gpu,
            bits_frame: report.bits_frame,
            bits: report.bits.clone(),
            shadows: (views, report.shadows.on_device),
        }
    }
}

/// The report's answers after each of `frames` frames, checking that the app names each
/// frame as its systems saw it.
fn reports(app: &mut App, frames: u64) -> Vec<Answers> {
    let seen = Arc::new(AtomicU64::new(u64::MAX));
    let noted = Arc::clone(&seen);
    app.add_system(Stage::Input, System::new("note", move |ctx| noted.store(ctx.time.frame_index, Ordering::Relaxed)));
    (0..frames)
        .map(|frame| {
            app.run_frame();
            assert_eq!(seen.load(Ordering::Relaxed), frame, "systems number frames from 0");
            assert_eq!(app.last_frame_index(), Some(frame), "the app names the frame its systems saw");
            let report = app.resource::<RenderReport>();
            assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
            Answers::of(&report)
        })
        .collect()
}

#[test]
fn pipelined_reports_are_the_serial_reports_one_frame_later() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        // Waited readbacks: each frame's own GPU answer, so serial and pipelined read the same.
        let run = |pipelined: bool, frames: u64| {
            let mut app = game_with(&device, backend, pipelined, None, BitsReadback::Wait, true);
            reports(&mut app, frames)
        };
        let serial = run(false, 10);
        let pipelined = run(true, 11);
        for (frame, answers) in (0..).zip(&serial) {
            assert_eq!(answers.game_frame, Some(frame), "{backend:?}: serial, the report is of the frame just run");
            assert!(answers.upload.bytes > 0 && answers.synced_slots > 0, "{backend:?}: the script moves things");
            assert!(answers.shadows.0.iter().any(|view| view.1 > 0), "{backend:?}: the sun's casters: {answers:?}");
            if backend == CullingBackend::Gpu {
                assert_eq!(answers.bits_frame, Some(frame), "{backend:?}: the frame's own GPU answer");
                let gpu = answers.gpu.expect("the GPU culls");
                assert!(gpu[0] > 0 && gpu[3] + gpu[4] > 0 && gpu[5] > 0, "{backend:?}: counts: {gpu:?}");
            }
        }
        // Pipelined, frame N's report is published by frame N + 1's Render stage.
        assert_eq!(pipelined[0].game_frame, None, "{backend:?}: no report when frame 0 returned");
        assert_eq!(pipelined[0].frames, 0, "{backend:?}: nothing was drawn when frame 0 returned");
        for (frame, (serial, pipelined)) in (0..).zip(serial.iter().zip(&pipelined[1..])) {
            assert_eq!(pipelined, serial, "{backend:?}: frame {frame}: the serial report, one frame later");
        }
    }
    assert_no_validation_messages(&device);
}

#[test]
fn switching_modes_and_resizing_with_a_frame_in_flight_keep_every_picture() {
    let Some(device) = gpu_test_context() else { return };
    let mut app = game(&device, CullingBackend::Gpu, true, None);
    let mut taken = Vec::new();
    for frame in 0..16_u32 {
        // A resize every frame while the frame before is with the render thread.
        *app.resource_mut::<Viewport>() = Viewport { width: 40 + frame * 3, height: 30 + frame };
        app.resource_mut::<RenderSettings>().pipelined_frames = frame % 6 < 4;
        app.resource_mut::<Screenshots>().request(renderer::COLOR);
        app.run_frame();
        assert!(app.resource::<RenderReport>().error.is_none(), "{:?}", app.resource::<RenderReport>().error);
        taken.extend(app.resource_mut::<Screenshots>().take());
    }
    app.resource_mut::<RenderSettings>().pipelined_frames = false;
    app.run_frame();
    taken.extend(app.resource_mut::<Screenshots>().take());
    let frames: Vec<u64> = taken.iter().map(|shot| shot.frame).collect();
    assert_eq!(frames, (0..16).collect::<Vec<_>>(), "every frame's picture arrives once, in order");
    for shot in &taken {
        let frame = shot.frame as u32;
        assert_eq!((shot.width, shot.height), (40 + frame * 3, 30 + frame), "frame {frame} has its own size");
    }
    assert_no_validation_messages(&device);
}

/// A target that panics in `begin_frame` (on the render thread when pipelined) once, at one
/// frame.
struct PanickingTarget {
    at: u64,
    panicked: bool,
    begun: Arc<AtomicU64>,
}

impl FrameTarget for PanickingTarget {
    fn add_passes(&mut self, _graph: &mut RenderGraph) -> render_graph::Result<()> {
        Ok(())
    }

    fn begin_frame(&mut self, _graph: &mut RenderGraph, frame: renderer::TargetFrame) -> render_graph::Result<bool> {
        self.begun.fetch_add(1, Ordering::Relaxed);
        if frame.drawn == self.at && !self.panicked {
            self.panicked = true;
            panic!("the target fails at frame {}", frame.drawn);
        }
        Ok(true)
    }

    fn end_frame(&mut self, _graph: &mut RenderGraph, _frame: renderer::TargetFrame) -> render_graph::Result<()> {
        Ok(())
    }
}

#[test]
fn a_panic_on_the_render_thread_or_in_a_system_surfaces_once_and_the_app_goes_on() {
    let Some(device) = gpu_test_context() else { return };
    let begun = Arc::new(AtomicU64::new(0));
    let target = PanickingTarget { at: 3, panicked: false, begun: Arc::clone(&begun) };
    let mut app = game(&device, CullingBackend::Gpu, true, Some(Box::new(target)));
    app.add_system(
        Stage::Transform,
        System::new("fails at frame 7", |ctx| {
            if ctx.time.frame_index == 7 {
                panic!("a game system fails");
            }
        }),
    );
    let mut panics = Vec::new();
    for frame in 0..10 {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| app.run_frame()));
        if let Err(payload) = result {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|text| text.to_string()))
                .unwrap_or_default();
            panics.push((frame, message));
        }
    }
    assert_eq!(panics.len(), 2, "{panics:?}");
    // The render thread's panic of frame 3 is raised by frame 4's Render stage.
    assert_eq!(panics[0].0, 4, "{panics:?}");
    assert!(panics[0].1.contains("the target fails at frame 3"), "{panics:?}");
    assert_eq!(panics[1].0, 7, "{panics:?}");
    assert!(panics[1].1.contains("a game system fails"), "{panics:?}");
    // Every frame but the two that panicked (4 raises the thread's panic before it prepares,
    // 7 ends before its Render stage) is submitted; frame 9 may still be with the thread.
    let begun = begun.load(Ordering::Relaxed);
    assert!(begun >= 7, "frames go on being submitted after both panics: {begun}");
    // Dropped with a frame in flight: the thread finishes it and is joined.
    drop(app);
    assert_no_validation_messages(&device);
}

#[test]
fn dropping_the_app_with_a_frame_in_flight_finishes_it_and_frees_the_device() {
    let Some(device) = gpu_test_context() else { return };
    for frames in [1, 2, 5] {
        let mut app = game(&device, CullingBackend::Gpu, true, None);
        for _ in 0..frames {
            app.run_frame();
        }
        drop(app);
    }
    // Every scene buffer and pipeline went with its app: only the test's own handle is left.
    assert_eq!(Arc::strong_count(&device), 1, "the apps released the device");
    assert_no_validation_messages(&device);
}
