//! The Visibility stage allocates nothing per frame in steady state: a counting global
//! allocator watches whole frames after warm-up, with a still camera and with a camera that
//! swings back and forth so `Culled` tags change every frame.

use culling::Visibility;
use ecs::{scene, Camera, Lod, LodLevel, MeshHandle, ShadowCaster, Transform};
use glam::Vec3;
use runtime::alloc_counter::{count_allocations, one_test_at_a_time, settle_threads, CountingAllocator};
use runtime::App;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Allocations made by `frames` frames of `app`, each after `before_frame(app, frame)`.
fn allocations_of(app: &mut App, frames: u64, mut before_frame: impl FnMut(&mut App, u64)) -> usize {
    settle_threads();
    let ((), allocations) = count_allocations(|| {
        for frame in 0..frames {
            before_frame(app, frame);
            app.run_frame();
        }
    });
    allocations
}

fn aim(app: &mut App, camera: runtime::hecs::Entity, target: Vec3) {
    *app.world_mut().get::<&mut Transform>(camera).expect("the camera has a Transform") =
        scene::look_at(Vec3::new(0.0, 3.0, 0.0), target);
}

#[test]
fn steady_state_frames_allocate_nothing() {
    let _alone = one_test_at_a_time();
    let mut app = App::with_threads(2);
    culling::install(&mut app);
    app.set_fixed_delta(Some(1.0 / 60.0));
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), Transform::IDENTITY);
    let meshes = scene::spawn_mesh_grid(app.world_mut(), 5000, 2.0, scene::unit_cube_mesh());
    for (index, &entity) in meshes.iter().enumerate() {
        if index % 4 == 0 {
            app.world_mut().insert_one(entity, ShadowCaster).expect("the mesh is alive");
        }
        if index % 7 == 0 {
            let levels = vec![
                LodLevel { mesh: MeshHandle(1), max_distance: 20.0 },
                LodLevel { mesh: MeshHandle(2), max_distance: 60.0 },
            ];
            app.world_mut().insert_one(entity, Lod { levels: levels.into(), bias: 1.0 }).expect("the mesh is alive");
        }
    }
    let targets = [Vec3::new(50.0, 0.0, 50.0), Vec3::new(-50.0, 0.0, 50.0)];
    // Warm-up: both aims, several times, so every buffer and archetype reaches its size.
    for frame in 0..12 {
        aim(&mut app, camera, targets[frame % 2]);
        app.run_frame();
    }
    // And still frames, which are tracked (see `VisibilityStats::tracked`): their buffers too.
    app.run_frames(4);
    assert!(app.resource::<Visibility>().stats().tracked, "a still frame after world_mut is tracked");
    let still = allocations_of(&mut app, 10, |_, _| {});
    assert_eq!(still, 0, "a still camera must not allocate");
    assert_eq!(app.resource::<Visibility>().stats().tags_inserted, 0);

    let swinging = allocations_of(&mut app, 10, |app, frame| aim(app, camera, targets[frame as usize % 2]));
    let stats = *app.resource::<Visibility>().stats();
    assert!(stats.tags_inserted + stats.tags_removed > 100, "the swing must change tags: {stats:?}");
    assert_eq!(swinging, 0, "frames whose tags change must not allocate either");
}

#[test]
fn several_views_allocate_nothing_in_steady_state() {
    let _alone = one_test_at_a_time();
    let mut app = App::with_threads(2);
    culling::install(&mut app);
    app.set_fixed_delta(Some(1.0 / 60.0));
    let main = scene::spawn_camera(app.world_mut(), Camera::default(), Transform::IDENTITY);
    let side = scene::spawn_camera(app.world_mut(), Camera { order: 1, ..Camera::default() }, Transform::IDENTITY);
    let monitor = scene::spawn_camera(app.world_mut(), Camera { order: 2, ..Camera::default() }, Transform::IDENTITY);
    let image = ecs::ImageTarget::new("monitor", 256, 256, ecs::ImageFormat::Rgba8Srgb);
    app.world_mut().insert_one(monitor, ecs::CameraTarget::Image(image)).expect("the camera is alive");
    app.world_mut().insert_one(main, ecs::CameraRect::new(0.0, 0.0, 0.5, 1.0)).expect("the camera is alive");
    app.world_mut().insert_one(side, ecs::CameraRect::new(0.5, 0.0, 0.5, 1.0)).expect("the camera is alive");
    let meshes = scene::spawn_mesh_grid(app.world_mut(), 5000, 2.0, scene::unit_cube_mesh());
    for &entity in meshes.iter().step_by(7) {
        let levels = vec![
            LodLevel { mesh: MeshHandle(1), max_distance: 20.0 },
            LodLevel { mesh: MeshHandle(2), max_distance: 60.0 },
        ];
        app.world_mut().insert_one(entity, Lod { levels: levels.into(), bias: 1.0 }).expect("the mesh is alive");
    }
    let targets = [Vec3::new(50.0, 0.0, 50.0), Vec3::new(-50.0, 0.0, 50.0), Vec3::new(0.0, 0.0, -50.0)];
    let swing = |app: &mut App, frame: u64| {
        for (index, camera) in [main, side, monitor].into_iter().enumerate() {
            aim(app, camera, targets[(frame as usize + index) % 3]);
        }
    };
    for frame in 0..12 {
        swing(&mut app, frame);
        app.run_frame();
    }
    app.run_frames(4);
    let swinging = allocations_of(&mut app, 12, swing);
    assert_eq!(app.resource::<Visibility>().other_views().count(), 2, "the side view and the monitor are answered");
    assert_eq!(swinging, 0, "frames of three views must not allocate");
}
