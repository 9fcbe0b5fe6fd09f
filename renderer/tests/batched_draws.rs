//! Instanced batching on lavapipe with validation: the frames drawn with one instanced
//! command per (mesh, level of detail, material) are the frames drawn with one command per
//! object, pixel for pixel, on both backends, over a camera path on which objects hidden
//! behind a wall come into view (drawn by the late phase); and the commands follow the
//! distinct triples, not the objects.

use std::sync::Arc;

use culling::CullingBackend;
use ecs::{scene, Aabb, BaseColor, Camera, Lod, LodLevel, MaterialHandle, Mesh, MeshHandle, Transform};
use glam::{Mat4, Quat, Vec3};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::{install_render_to, lock_capture, BitsReadback, HeadlessTarget, Material, MeshLibrary};
use renderer::{RenderReport, RenderSetup, SharedCapture};

const WIDTH: u32 = 96;
const HEIGHT: u32 = 64;
const CAPACITY: u32 = 512;
const SKY: [f32; 4] = [0.1, 0.2, 0.3, 1.0];
/// Meshes with two levels each: cube (0, its coarse level 2) and pyramid (1, coarse 3).
const MESHES: u32 = 2;
const LEVELS: u32 = 2;
/// Materials the objects use (0 plain, 1 plain, 2 double-sided).
const MATERIALS: u32 = 3;
const SIDE: usize = 14;
const FRAMES: usize = 8;

/// The meshes and materials of the scene.
fn library() -> MeshLibrary {
    let mut library = MeshLibrary::with_unit_cube();
    let pyramid = [[-0.5, -0.5, -0.5], [0.5, -0.5, -0.5], [0.5, -0.5, 0.5], [-0.5, -0.5, 0.5], [0.0, 0.5, 0.0]];
    let faces = [0, 1, 2, 0, 2, 3, 0, 4, 1, 1, 4, 2, 2, 4, 3, 3, 4, 0];
    assert_eq!(library.add_mesh(&pyramid, &faces).expect("pyramid"), 1);
    assert_eq!(library.add_unit_cube(), 2, "the cube's coarse level");
    assert_eq!(library.add_mesh(&pyramid, &faces[..12]).expect("coarse pyramid"), 3);
    library.add_material(Material::default()).expect("material");
    library.add_material(Material::default()).expect("material");
    library.add_material(Material { double_sided: true, ..Material::default() }).expect("material");
    library
}

fn setup(device: &Arc<GpuDevice>, backend: CullingBackend) -> RenderSetup {
    RenderSetup {
        shadows: false,
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: CAPACITY,
        meshes: library(),
        clear_color: SKY,
        // Each frame's own counters.
        bits: if backend == CullingBackend::Gpu { BitsReadback::Wait } else { BitsReadback::None },
        passes: Vec::new(),
    }
}

/// A wall, and a grid of cubes and pyramids of three materials (two levels each, the coarse
/// one past 14 units) before and behind it, none touching another.
fn build_scene(app: &mut runtime::App) -> runtime::hecs::Entity {
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), camera_at(0));
    let wall =
        Mat4::from_scale_rotation_translation(Vec3::new(9.0, 7.0, 0.3), Quat::IDENTITY, Vec3::new(0.0, 2.0, -4.0));
    scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_matrix(wall));
    let bounds = Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5));
    for index in 0..SIDE * SIDE {
        let (column, row) = ((index % SIDE) as f32, (index / SIDE) as f32);
        let place = Vec3::new(column * 2.1 - 13.6, 0.3 * (index % 3) as f32, 1.0 - row * 2.3);
        let mesh = (index % MESHES as usize) as u32;
        let material = ((index / 2) % MATERIALS as usize) as u32;
        let levels = [
            LodLevel { mesh: MeshHandle(mesh), max_distance: 14.0 },
            LodLevel { mesh: MeshHandle(mesh + 2), max_distance: 1000.0 },
        ];
        let entity = scene::spawn_mesh(
            app.world_mut(),
            Mesh::new(MeshHandle(mesh), MaterialHandle(material), bounds),
            Transform::from_translation(place),
        );
        let colour = BaseColor([0.2 + 0.05 * column, 0.9 - 0.05 * row, 0.3 + 0.2 * material as f32, 1.0]);
        let lod = Lod { levels: levels.to_vec().into(), bias: 1.0 };
        app.world_mut().insert(entity, (colour, lod)).expect("spawned");
    }
    camera
}

/// The camera of frame `frame`: it pans along the wall, so what stood behind it comes into
/// view (the late phase draws it: last frame it was hidden).
fn camera_at(frame: usize) -> Transform {
    let x = -9.0 + 2.6 * frame as f32;
    scene::look_at(Vec3::new(x, 2.5, 9.0), Vec3::new(x * 0.3, 0.0, -12.0))
}

struct Run {
    images: Vec<Vec<u8>>,
    /// Per frame: commands of the early and of the late list (the host's list alone on the
    /// CPU backend), and the objects the late phase drew.
    commands: Vec<(u32, u32, u32)>,
}

fn run(device: &Arc<GpuDevice>, backend: CullingBackend, batch_draws: bool) -> Run {
    let mut app = runtime::App::with_threads(1);
    let (target, capture): (HeadlessTarget, SharedCapture) = HeadlessTarget::new();
    install_render_to(&mut app, setup(device, backend), Some(Box::new(target))).expect("a device is there");
    app.resource_mut::<ecs::RenderSettings>().batch_draws = batch_draws;
    let camera = build_scene(&mut app);
    let mut images = Vec::new();
    let mut commands = Vec::new();
    for frame in 0..FRAMES {
        *app.world_mut().get::<&mut Transform>(camera).expect("the camera") = camera_at(frame);
        app.run_frame();
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{backend:?}: {:?}", report.error);
        commands.push(match &report.gpu {
            Some(gpu) => (gpu.early_commands, gpu.late_commands, gpu.late_drawn),
            None => (report.host_draw_commands, 0, 0),
        });
        let capture = lock_capture(&capture);
        assert!(capture.captured, "a headless target keeps every frame's image");
        images.push(capture.pixels.clone());
    }
    Run { images, commands }
}

#[test]
fn batched_and_unbatched_frames_draw_the_same_images_on_both_backends() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        let batched = run(&device, backend, true);
        let unbatched = run(&device, backend, false);
        for (frame, (with, without)) in batched.images.iter().zip(&unbatched.images).enumerate() {
            let differing = with.chunks_exact(4).zip(without.chunks_exact(4)).filter(|(a, b)| a != b).count();
            assert_eq!(differing, 0, "{backend:?} frame {frame}: batching changed {differing} pixels");
            let sky = [(SKY[0] * 255.0).round() as u8, (SKY[1] * 255.0).round() as u8];
            let drawn = with.chunks_exact(4).filter(|pixel| pixel[..2] != sky).count();
            assert!(drawn > 500, "{backend:?} frame {frame}: the scene is drawn ({drawn} pixels)");
        }
        let total = |run: &Run| run.commands.iter().map(|&(early, late, _)| u64::from(early + late)).sum::<u64>();
        assert!(
            total(&batched) * 4 < total(&unbatched),
            "{backend:?}: batching issues far fewer commands ({} against {})",
            total(&batched),
            total(&unbatched)
        );
        if backend == CullingBackend::Gpu {
            // The path is a real test of the late lists: objects came into view behind the wall.
            let late: u32 = batched.commands.iter().skip(1).map(|&(_, _, late)| late).sum();
            assert!(late > 0, "some objects became visible in a late phase: {:?}", batched.commands);
            let late_commands: u32 = batched.commands.iter().skip(1).map(|&(_, late, _)| late).sum();
            assert!(late_commands > 0, "and the late list drew them: {:?}", batched.commands);
        }
    }
    assert_no_validation_messages(&device);
}

#[test]
fn commands_follow_the_distinct_mesh_level_material_triples_not_the_objects() {
    let Some(device) = gpu_test_context() else { return };
    // SIDE² objects (and the wall, a cube of material 0) of MESHES × MATERIALS pairs.
    let most = MESHES * MATERIALS * LEVELS;
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        let batched = run(&device, backend, true);
        let unbatched = run(&device, backend, false);
        for (frame, (&(early, late, _), &(objects_early, objects_late, _))) in
            batched.commands.iter().zip(&unbatched.commands).enumerate()
        {
            assert!(early <= most && late <= most, "{backend:?} frame {frame}: {early} + {late} commands, most {most}");
            // The first GPU frame has no history: it draws everything in its late phase.
            assert!(early + late > 0, "{backend:?} frame {frame}: something is drawn");
            assert!(
                objects_early + objects_late > 2 * most,
                "{backend:?} frame {frame}: unbatched, a command per object ({objects_early} + {objects_late})"
            );
        }
    }
    assert_no_validation_messages(&device);
}
