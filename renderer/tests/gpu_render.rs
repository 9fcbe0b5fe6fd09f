//! Rendering installed as the frame's Render stage: GPU culling every frame with lagged
//! statistics and bits fed back into the host's `Occluded` tags, on lavapipe with validation
//! (zero messages).

use culling::{CullingBackend, CullingChoice, Visibility};
use ecs::{scene, Camera, Transform, Viewport};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::vk;
use renderer::MeshLibrary;
use renderer::{install_render, BitsReadback, RenderReport, RenderSetup};

/// An app rendering with GPU culling and lagged bits: a wall, a cube hidden behind it, a
/// cube beside it and a cube behind the camera (returned in that order).
fn wall_scene(device: &std::sync::Arc<render_graph::GpuDevice>) -> (runtime::App, [runtime::hecs::Entity; 4]) {
    let mut app = runtime::App::with_threads(2);
    let setup = RenderSetup {
        shadows: false,
        backend: CullingBackend::Gpu,
        device: Some(device.clone()),
        extent: vk::Extent2D { width: 48, height: 32 },
        capacity: 256,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.0, 0.0, 0.0, 1.0],
        bits: BitsReadback::Lagged,
        passes: Vec::new(),
    };
    let choice = install_render(&mut app, setup).expect("a device is there");
    assert!(choice.on_device && choice.reason.is_none(), "{choice:?}");
    app.insert_resource(Viewport { width: 48, height: 32 });
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO));
    // A unit cube scaled to an 8 x 8 x 0.5 wall: the geometry the GPU draws is the box it culls.
    let wall_place = Transform { scale: Vec3::new(8.0, 8.0, 0.5), ..Transform::IDENTITY };
    let wall = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), wall_place);
    let cube_at = |app: &mut runtime::App, position: Vec3| {
        scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(position))
    };
    let hidden = cube_at(&mut app, Vec3::NEG_Z * 5.0);
    let beside = cube_at(&mut app, Vec3::new(6.0, 0.0, 0.0));
    let behind = cube_at(&mut app, Vec3::Z * 20.0);
    (app, [wall, hidden, beside, behind])
}

#[test]
fn the_render_stage_culls_on_the_gpu_and_the_tags_are_one_frame_late_without_a_stall() {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, [wall, hidden, beside, behind]) = wall_scene(&device);
    app.run_frame();
    assert!(app.resource::<RenderReport>().gpu.is_none(), "no frame had been submitted when frame 0 started");
    for frame in 1..6u64 {
        // A GPU that keeps up: the previous frame has finished before this one starts. The
        // readback only asks the fence (the lagged mode never waits).
        device.wait_idle().expect("the device waits");
        app.run_frame();
        let report = app.resource::<RenderReport>().clone();
        assert!(report.error.is_none(), "{:?}", report.error);
        assert_eq!(report.bits_frame, Some(frame - 1), "frame {frame} reads the previous frame's answer");
        assert_eq!(app.resource::<culling::GpuFeedback>().frame, Some(frame - 1), "and feeds it back");
        let stats = report.gpu.expect("the previous frame is read back");
        assert!(stats.culled_on_device);
        assert_eq!(stats.objects, 4, "frame {frame}: {stats:?}");
        assert_eq!(stats.frustum_rejected, 1, "frame {frame}: the cube behind the camera: {stats:?}");
        let visibility = app.resource::<Visibility>();
        let slot = visibility.objects().entities.iter().position(|&entity| entity == hidden).expect("a slot");
        // Frame 0 had no history, so its pyramid was empty and the hidden cube passed; from
        // frame 1 on the GPU hides it. Its answer reaches the lists and tags one frame later.
        let hidden_on_gpu = frame >= 2;
        assert_eq!(
            report.bits[slot / 64] >> (slot % 64) & 1 == 0,
            hidden_on_gpu,
            "frame {frame}: the bit of {:?}",
            report.bits_frame
        );
        assert_eq!(visibility.visible().len(), if hidden_on_gpu { 2 } else { 3 }, "frame {frame}");
        assert_eq!(app.world().satisfies::<&ecs::Occluded>(hidden), hidden_on_gpu, "frame {frame}: Occluded tag");
        assert!(report.upload.bytes == 0 || frame == 1, "still objects upload nothing: {:?}", report.upload);
    }
    assert!(app.resource::<CullingChoice>().on_device);
    let world = app.world();
    assert!(world.satisfies::<&ecs::Culled>(behind), "the cube behind the camera is Culled");
    for entity in [wall, beside] {
        assert!(!world.satisfies::<&ecs::Occluded>(entity) && !world.satisfies::<&ecs::Culled>(entity));
    }
    drop(app);
    assert_no_validation_messages(&device);
}

#[test]
fn an_object_entering_the_view_is_not_taken_for_occluded_by_last_frames_bits() {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, [_, hidden, _, behind]) = wall_scene(&device);
    for _ in 0..4 {
        device.wait_idle().expect("the device waits");
        app.run_frame();
    }
    assert!(app.world().satisfies::<&ecs::Occluded>(hidden), "occlusion works before the turn");
    // Turn round: the cube behind the camera enters the view. Last frame's GPU bit for it is
    // clear because it was outside that frame's frustum, not because anything hid it.
    let camera =
        app.world_mut().query_mut::<(runtime::hecs::Entity, &Camera)>().into_iter().map(|(entity, _)| entity).next();
    let camera = camera.expect("the scene has a camera");
    *app.world_mut().get::<&mut Transform>(camera).expect("the camera has a Transform") =
        scene::look_at(Vec3::new(0.0, 0.0, 10.0), Vec3::new(0.0, 0.0, 30.0));
    device.wait_idle().expect("the device waits");
    app.run_frame();
    {
        let visibility = app.resource::<Visibility>();
        let slot = visibility.objects().entities.iter().position(|&entity| entity == behind).expect("a slot") as u32;
        assert!(visibility.visible().contains(&slot), "the cube now in front is visible on the frame it enters");
    }
    assert!(!app.world().satisfies::<&ecs::Occluded>(behind), "and not tagged Occluded");
    assert!(!app.world().satisfies::<&ecs::Culled>(behind), "nor Culled");
    drop(app);
    assert_no_validation_messages(&device);
}

#[test]
fn without_waiting_the_lagged_readback_is_never_more_than_frames_in_flight_plus_one_late() {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, _) = wall_scene(&device);
    let most = render_graph::FRAMES_IN_FLIGHT as u64 + 1;
    for frame in 0..12u64 {
        app.run_frame();
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{:?}", report.error);
        match report.bits_frame {
            None => assert!(frame < most, "frame {frame}: frame {} had been waited for", frame.saturating_sub(most)),
            Some(read) => assert!(read < frame && frame - read <= most, "frame {frame} read frame {read}"),
        }
    }
    drop(app);
    assert_no_validation_messages(&device);
}

#[test]
fn a_turning_camera_uploads_only_the_records_of_moving_objects() {
    let Some(device) = gpu_test_context() else { return };
    let mut app = runtime::App::with_threads(2);
    let setup = RenderSetup {
        shadows: false,
        backend: CullingBackend::Cpu,
        device: Some(device.clone()),
        extent: vk::Extent2D { width: 32, height: 32 },
        capacity: 4096,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.0, 0.0, 0.0, 1.0],
        bits: BitsReadback::None,
        passes: Vec::new(),
    };
    let choice = install_render(&mut app, setup).expect("the CPU backend always installs");
    assert!(!choice.on_device);
    app.insert_resource(Viewport { width: 32, height: 32 });
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), Transform::IDENTITY);
    let mut movers = Vec::new();
    for index in 0..3000 {
        let angle = index as f32 * 0.618_034 * std::f32::consts::TAU;
        let radius = 20.0 + (index % 40) as f32;
        let position = Vec3::new(angle.cos() * radius, (index % 7) as f32 - 3.0, angle.sin() * radius);
        let entity = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(position));
        if index % 150 == 0 {
            movers.push(entity);
        }
    }
    app.run_frame();
    app.run_frame();
    let mut tag_changes = 0;
    for frame in 1..=36 {
        let yaw = (frame as f32 * 10.0).to_radians();
        *app.world_mut().get::<&mut Transform>(camera).expect("camera") =
            scene::look_at(Vec3::ZERO, Vec3::new(yaw.sin(), 0.0, -yaw.cos()));
        for &mover in &movers {
            app.world_mut().get::<&mut Transform>(mover).expect("mover").translation.y += 0.25;
        }
        app.run_frame();
        let stats = *app.resource::<Visibility>().stats();
        tag_changes += stats.tags_inserted + stats.tags_removed;
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{:?}", report.error);
        // A mover uploads its transform and its slot index, nothing else.
        let expected = movers.len() as u64 * (renderer::OBJECT_TRANSFORM_BYTES + 4);
        assert_eq!(report.upload.bytes, expected, "frame {frame}: only the movers' transforms are uploaded");
        assert_eq!((report.upload.transforms, report.upload.records), (movers.len() as u32, 0), "frame {frame}");
    }
    assert!(tag_changes > 3000, "the turn moves thousands of entities between archetypes: {tag_changes}");
    drop(app);
    assert_no_validation_messages(&device);
}
