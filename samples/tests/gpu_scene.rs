//! The GPU scene mirrors the world on every frame, on both culling backends, on lavapipe with
//! validation: whatever moves, spawns, despawns, is re-parented, hidden or restyled, every
//! slot of `object_transforms` and `object_records` equals a from-scratch upload of the same
//! world (`samples::scene_check`) in the frame the change is made; despawned slots are empty
//! the same frame; and the answers the game reads never lie.

use std::sync::Arc;

use culling::{CullingBackend, ObjectState, Visibility};
use ecs::{scene, BaseColor, Camera, Transform, Viewport};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::MeshLibrary;
use renderer::{install_render_to, BitsReadback, GpuCullControl, RenderReport, RenderSetup};
use renderer::{lock_capture, HeadlessTarget, SharedCapture};
use runtime::App;
use samples::scene_check::{compare_scene, expected_scene, lock_copy, SceneCheckTarget, SharedSceneCopy};
use samples::stress::{build_stress, StressConfig, StressMeshes};

const CLEAR: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

/// An app rendering on `device` with `backend`, its GPU scene read back after every frame
/// (and its image, when `capture`).
struct Rendered {
    app: App,
    copy: SharedSceneCopy,
    capture: Option<SharedCapture>,
    library: MeshLibrary,
}

fn rendered(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    capacity: u32,
    bits: BitsReadback,
    capture: bool,
    build: impl FnOnce(&mut App),
) -> Rendered {
    rendered_with_room(device, backend, (capacity, capacity), bits, capture, build)
}

/// [`rendered`] with the renderer made for `capacity` slots at first and the check reading
/// back `room` slots (the renderer grows past its capacity; the check's readback does not).
fn rendered_with_room(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    (capacity, room): (u32, u32),
    bits: BitsReadback,
    capture: bool,
    build: impl FnOnce(&mut App),
) -> Rendered {
    let mut app = App::with_threads(2);
    culling::install(&mut app);
    app.insert_resource(Viewport { width: 64, height: 48 });
    build(&mut app);
    let extent = vk::Extent2D { width: 64, height: 48 };
    let library = StressMeshes::library();
    let (inner, shared): (Option<Box<dyn renderer::FrameTarget>>, _) = if capture {
        let (target, shared) = HeadlessTarget::new();
        lock_capture(&shared).draw = true;
        lock_capture(&shared).capture = true;
        (Some(Box::new(target)), Some(shared))
    } else {
        (None, None)
    };
    let (target, copy) = SceneCheckTarget::new(device, room, inner);
    let setup = RenderSetup {
        shadows: false,
        backend,
        device: Some(Arc::clone(device)),
        extent,
        capacity,
        meshes: library.clone(),
        clear_color: CLEAR,
        bits,
        passes: Vec::new(),
    };
    let choice = install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    assert_eq!(choice.on_device, backend == CullingBackend::Gpu, "{choice:?}");
    Rendered { app, copy, capture: shared, library }
}

impl Rendered {
    /// Runs a frame and returns how many slots of the GPU scene differ from a from-scratch
    /// upload (with the first few described).
    fn frame(&mut self) -> (usize, Vec<String>) {
        self.app.run_frame();
        let report = self.app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{:?}", report.error);
        let copy = lock_copy(&self.copy);
        assert!(copy.fresh, "the frame was drawn and read back");
        let visibility = self.app.resource::<Visibility>();
        compare_scene(&expected_scene(self.app.world(), &visibility, &self.library), &copy, 4)
    }

    fn assert_mirrors(&mut self, what: &str) {
        let (mismatches, described) = self.frame();
        assert_eq!(mismatches, 0, "{what}: {described:#?}");
    }

    fn pixels_of(&self, color: BaseColor) -> usize {
        let capture = lock_capture(self.capture.as_ref().expect("captured"));
        let rgba = color.to_rgba8();
        capture.pixels.chunks_exact(4).filter(|pixel| pixel == &rgba).count()
    }
}

#[test]
fn every_mover_past_any_budget_is_on_the_gpu_the_frame_it_moves() {
    let Some(device) = gpu_test_context() else { return };
    for (objects, backend) in
        [(20_000, CullingBackend::Gpu), (60_000, CullingBackend::Gpu), (20_000, CullingBackend::Cpu)]
    {
        let config = StressConfig {
            objects,
            moving: 1.0,
            churn: 0,
            children_every: 0,
            restyle: 0,
            reparent: 0,
            ..StressConfig::default()
        };
        let mut scene = rendered(&device, backend, objects as u32 + 64, BitsReadback::Wait, false, |app| {
            build_stress(app, config);
        });
        if let Some(control) = scene.app.resources().get::<GpuCullControl>().map(|control| control.settings.clone()) {
            // Frustum only: the GPU's bits are then exactly the CPU's frustum bits.
            control.lock().expect("settings").occlusion = false;
        }
        for frame in 0..3 {
            scene.assert_mirrors(&format!("{objects} movers, {backend:?}, frame {frame}"));
            let report = scene.app.resource::<RenderReport>().clone();
            if frame > 0 {
                assert_eq!(report.upload.transforms as usize, objects, "every mover's transform, this frame");
                assert_eq!(report.upload.records, 0, "nothing but positions changed");
                assert_eq!(report.upload.bytes, objects as u64 * (48 + 4), "48 bytes and a slot index per mover");
            }
            if backend == CullingBackend::Gpu {
                let visibility = scene.app.resource::<Visibility>();
                let stats = report.gpu.expect("waited-for statistics");
                assert_eq!(stats.objects as usize, visibility.len(), "the cull dispatches over every slot");
                let cpu = visibility.bits().words();
                assert_eq!(&report.bits[..cpu.len()], cpu, "{objects} movers, frame {frame}: GPU and CPU frustum bits");
            }
        }
        drop(scene);
    }
    assert_no_validation_messages(&device);
}

/// A red cube behind a grey wall, both facing the camera, and `extra` white cubes off to the
/// side; returns the cube, the wall and the extras, in spawn order (so the wall holds the
/// highest slot when `wall_last`).
fn wall_and_cube(app: &mut App, wall_last: bool, extra: usize) -> (hecs::Entity, hecs::Entity, Vec<hecs::Entity>) {
    let world = app.world_mut();
    scene::spawn_camera(world, Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO));
    let spawn = |world: &mut hecs::World, transform: Transform, color: BaseColor| {
        let entity = scene::spawn_mesh(world, StressMeshes::mesh(StressMeshes::ALL[0], 0), transform);
        world.insert_one(entity, color).expect("just spawned");
        entity
    };
    let extras: Vec<hecs::Entity> = (0..extra)
        .map(|index| {
            spawn(world, Transform::from_translation(Vec3::new(-3.5, index as f32 * 0.6 - 2.0, -1.0)), BaseColor::WHITE)
        })
        .collect();
    let cube_place =
        Transform { translation: Vec3::new(0.0, 0.0, -3.0), scale: Vec3::splat(2.5), ..Transform::IDENTITY };
    let wall_place = Transform { scale: Vec3::new(8.0, 8.0, 0.2), ..Transform::IDENTITY };
    let (cube, wall) = if wall_last {
        let cube = spawn(world, cube_place, BaseColor([1.0, 0.0, 0.0, 1.0]));
        (cube, spawn(world, wall_place, BaseColor([0.4, 0.4, 0.4, 1.0])))
    } else {
        let wall = spawn(world, wall_place, BaseColor([0.4, 0.4, 0.4, 1.0]));
        (spawn(world, cube_place, BaseColor([1.0, 0.0, 0.0, 1.0])), wall)
    };
    (cube, wall, extras)
}

#[test]
fn a_despawned_object_leaves_the_gpu_scene_in_the_same_frame_whatever_its_slot() {
    let Some(device) = gpu_test_context() else { return };
    let red = BaseColor([1.0, 0.0, 0.0, 1.0]);
    let grey = BaseColor([0.4, 0.4, 0.4, 1.0]);
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        let mut entities = None;
        let mut scene = rendered(&device, backend, 64, BitsReadback::Wait, true, |app| {
            entities = Some(wall_and_cube(app, true, 4));
        });
        let (cube, wall, extras) = entities.expect("built");
        for _ in 0..3 {
            scene.assert_mirrors(&format!("{backend:?}: the wall in front"));
        }
        assert!(scene.pixels_of(grey) > 500, "{backend:?}: the wall fills the view");
        assert_eq!(scene.pixels_of(red), 0, "{backend:?}: and hides the cube");

        // The wall holds the highest slot: its despawn shrinks the slot count.
        scene.app.world_mut().despawn(wall).expect("the wall lives");
        scene.assert_mirrors(&format!("{backend:?}: the highest slot despawned"));
        assert_eq!(scene.pixels_of(grey), 0, "{backend:?}: the despawned wall is gone in the same frame");
        assert!(scene.pixels_of(red) > 20, "{backend:?}: and the cube behind it is drawn");
        let report = scene.app.resource::<RenderReport>().clone();
        if let Some(stats) = report.gpu {
            assert_eq!(
                stats.objects as usize,
                scene.app.resource::<Visibility>().len(),
                "the dispatch follows the slots"
            );
            assert_eq!(stats.objects, 5, "{backend:?}: four extras and the cube");
        }

        // A middle slot, then everything.
        scene.app.world_mut().despawn(extras[1]).expect("lives");
        scene.assert_mirrors(&format!("{backend:?}: a middle slot despawned"));
        for &entity in extras.iter().filter(|&&entity| entity != extras[1]).chain([&cube]) {
            scene.app.world_mut().despawn(entity).expect("lives");
        }
        scene.assert_mirrors(&format!("{backend:?}: everything despawned"));
        assert_eq!(scene.app.resource::<Visibility>().len(), 0);
        assert_eq!(scene.pixels_of(red), 0);
        if let Some(stats) = scene.app.resource::<RenderReport>().gpu {
            assert_eq!(stats.objects, 0, "{backend:?}: nothing left to cull");
        }

        // Respawning fills the freed slots with the new objects, drawn at once.
        let world = scene.app.world_mut();
        let green = BaseColor([0.0, 1.0, 0.0, 1.0]);
        for index in 0..3 {
            let place = Transform::from_translation(Vec3::new(index as f32 * 1.5 - 1.5, 0.0, 0.0));
            let entity = scene::spawn_mesh(world, StressMeshes::mesh(StressMeshes::ALL[1], 0), place);
            world.insert_one(entity, green).expect("just spawned");
        }
        scene.assert_mirrors(&format!("{backend:?}: respawned into freed slots"));
        assert_eq!(scene.app.resource::<Visibility>().len(), 3, "the lowest free slots are reused");
        assert!(scene.pixels_of(green) > 20, "{backend:?}: the newcomers are drawn in their first frame");
        drop(scene);
    }
    assert_no_validation_messages(&device);
}

#[test]
fn games_that_move_spawn_despawn_reparent_hide_and_restyle_match_a_from_scratch_upload() {
    let Some(device) = gpu_test_context() else { return };
    for (backend, seed) in [(CullingBackend::Gpu, 3), (CullingBackend::Cpu, 5), (CullingBackend::Gpu, 11)] {
        let config = StressConfig {
            objects: 3_000,
            moving: 0.4,
            churn: 150,
            bullet_frames: 4,
            children_every: 6,
            restyle: 80,
            reparent: 25,
            seed,
        };
        let mut scene = rendered(&device, backend, 3_600, BitsReadback::Lagged, false, |app| {
            build_stress(app, config);
        });
        for frame in 0..40 {
            scene.assert_mirrors(&format!("{backend:?}, seed {seed}, frame {frame}"));
        }
        let report = scene.app.resource::<RenderReport>().clone();
        assert!(report.synced_slots > 0 && report.upload.records > 0, "the run changed records: {report:?}");
        drop(scene);
    }
    assert_no_validation_messages(&device);
}

#[test]
fn with_gpu_culling_and_no_readback_an_object_behind_the_camera_is_culled() {
    let Some(device) = gpu_test_context() else { return };
    let mut entities = None;
    let mut scene = rendered(&device, CullingBackend::Gpu, 64, BitsReadback::None, false, |app| {
        let world = app.world_mut();
        scene::spawn_camera(world, Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO));
        let front = scene::spawn_mesh(world, StressMeshes::mesh(StressMeshes::ALL[0], 0), Transform::IDENTITY);
        let behind = scene::spawn_mesh(
            world,
            StressMeshes::mesh(StressMeshes::ALL[0], 0),
            Transform::from_translation(Vec3::new(0.0, 0.0, 30.0)),
        );
        entities = Some((front, behind));
    });
    let (front, behind) = entities.expect("built");
    scene.assert_mirrors("two cubes");
    let visibility = scene.app.resource::<Visibility>();
    assert_eq!(visibility.state_of(behind), Some(ObjectState::Culled), "off screen is Culled on the GPU backend");
    assert_eq!(visibility.state_of(front), Some(ObjectState::Visible));
    assert_eq!(visibility.visible().len(), 1, "the list holds only what is in view");
    drop(visibility);
    assert!(scene.app.world().satisfies::<&ecs::Culled>(behind), "and the tag says so");
    drop(scene);
    assert_no_validation_messages(&device);
}

#[test]
fn an_object_spawned_into_the_slot_of_an_occluded_one_is_not_reported_occluded() {
    let Some(device) = gpu_test_context() else { return };
    let mut entities = None;
    let mut scene = rendered(&device, CullingBackend::Gpu, 64, BitsReadback::Lagged, true, |app| {
        entities = Some(wall_and_cube(app, false, 0));
    });
    let (cube, _, _) = entities.expect("built");
    for _ in 0..5 {
        device.wait_idle().expect("idle");
        scene.frame();
    }
    assert_eq!(
        scene.app.resource::<Visibility>().state_of(cube),
        Some(ObjectState::Occluded),
        "the GPU hides the cube"
    );
    let slot = scene.app.resource::<Visibility>().slot_of(cube).expect("a slot");
    // No frame is drawn from now on, so the newest GPU answer stays the one that hid the
    // cube: as a GPU far behind would leave it.
    lock_capture(scene.capture.as_ref().expect("captured")).draw = false;
    scene.app.world_mut().despawn(cube).expect("lives");
    scene.app.run_frame();
    // A cube beside the wall, in plain view, takes the freed slot.
    let beside = scene::spawn_mesh(
        scene.app.world_mut(),
        StressMeshes::mesh(StressMeshes::ALL[0], 0),
        Transform::from_translation(Vec3::new(5.5, 0.0, 0.0)),
    );
    for frame in 0..6 {
        if frame == 3 {
            lock_capture(scene.capture.as_ref().expect("captured")).draw = true;
        }
        device.wait_idle().expect("idle");
        scene.app.run_frame();
        let visibility = scene.app.resource::<Visibility>();
        assert_eq!(visibility.slot_of(beside), Some(slot), "the newcomer reuses the freed slot");
        assert_eq!(
            visibility.state_of(beside),
            Some(ObjectState::Visible),
            "frame {frame}: the slot's earlier GPU answer is not the newcomer's"
        );
    }
    let (mismatches, described) = scene.frame();
    assert_eq!(mismatches, 0, "{described:#?}");
    drop(scene);
    assert_no_validation_messages(&device);
}

#[test]
fn a_scene_past_its_initial_capacity_grows_in_the_frame_and_mirrors_the_world() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        let mut cubes = Vec::new();
        let mut scene = rendered_with_room(&device, backend, (8, 16), BitsReadback::Wait, false, |app| {
            let world = app.world_mut();
            scene::spawn_camera(world, Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO));
            for index in 0..6 {
                let place = Transform::from_translation(Vec3::new(index as f32 - 3.0, 0.0, 0.0));
                cubes.push(scene::spawn_mesh(world, StressMeshes::mesh(StressMeshes::ALL[0], 0), place));
            }
        });
        scene.assert_mirrors(&format!("{backend:?}: six cubes"));
        for index in 0..6 {
            let place = Transform::from_translation(Vec3::new(index as f32 - 3.0, 2.0, 0.0));
            cubes.push(scene::spawn_mesh(scene.app.world_mut(), StressMeshes::mesh(StressMeshes::ALL[1], 0), place));
        }
        // Twelve slots in a scene made for eight: it grows in the frame (the six first copied
        // on the GPU, the six new uploaded), with no error.
        scene.assert_mirrors(&format!("{backend:?}: twelve slots in a scene made for eight"));
        scene.assert_mirrors(&format!("{backend:?}: and the frame after"));
        // Moving one that stays, despawning five.
        scene.app.world_mut().get::<&mut Transform>(cubes[0]).expect("lives").translation.y = -2.0;
        for &cube in &cubes[7..] {
            scene.app.world_mut().despawn(cube).expect("lives");
        }
        scene.assert_mirrors(&format!("{backend:?}: moved and despawned after the growth"));
        drop(scene);
    }
    assert_no_validation_messages(&device);
}
