//! The headless form and the truth API on lavapipe with validation: the target
//! `install_render` installs draws the whole frame every frame, a `HeadlessTarget` keeps
//! each frame's image, and `renderer::truth` finds nothing hidden that shows on a test scene
//! (GPU and CPU culling) but catches a planted culling bug.

use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{scene, Aabb, BaseColor, Camera, MaterialHandle, Transform};
use glam::{Mat4, Quat, Vec3};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::truth::{check_frame, ReferenceRenderer};
use renderer::{
    install_render, install_render_to, lock_capture, BitsReadback, HeadlessTarget, Material, MeshLibrary, RenderReport,
    RenderSetup, SharedCapture,
};

const WIDTH: u32 = 48;
const HEIGHT: u32 = 32;
const CAPACITY: u32 = 64;
const SKY: [f32; 4] = [0.1, 0.2, 0.3, 1.0];

fn setup(device: &Arc<GpuDevice>, backend: CullingBackend) -> RenderSetup {
    let gpu = backend == CullingBackend::Gpu;
    RenderSetup {
        shadows: false,
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: CAPACITY,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: SKY,
        // The truth needs each frame's own GPU answer.
        bits: if gpu { BitsReadback::Wait } else { BitsReadback::None },
        passes: Vec::new(),
    }
}

/// A wall hiding some cubes, coloured cubes in front of it; returns the front cubes.
fn build_scene(app: &mut runtime::App) -> Vec<runtime::hecs::Entity> {
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.5, 1.0, 10.0), Vec3::ZERO));
    let wall = Mat4::from_scale_rotation_translation(Vec3::new(8.0, 5.0, 0.2), Quat::IDENTITY, Vec3::ZERO);
    scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_matrix(wall));
    let mut front = Vec::new();
    for index in 0..6 {
        let x = index as f32 * 1.4 - 3.5;
        scene::spawn_mesh(
            app.world_mut(),
            scene::unit_cube_mesh(),
            Transform::from_translation(Vec3::new(x, 0.0, -4.0)),
        );
        let place = Transform::from_translation(Vec3::new(x, -1.0 + index as f32 * 0.3, 3.0));
        let cube = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), place);
        let colour = BaseColor([0.2 + 0.13 * index as f32, 0.9 - 0.1 * index as f32, 0.5, 1.0]);
        app.world_mut().insert_one(cube, colour).expect("spawned");
        front.push(cube);
    }
    front
}

fn headless_app(device: &Arc<GpuDevice>, backend: CullingBackend) -> (runtime::App, SharedCapture) {
    let mut app = runtime::App::with_threads(1);
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup(device, backend), Some(Box::new(target))).expect("a device is there");
    (app, capture)
}

#[test]
fn a_capture_names_the_game_frame_its_pixels_are_of_when_frames_are_skipped() {
    let Some(device) = gpu_test_context() else { return };
    let mut app = runtime::App::with_threads(1);
    install_render(&mut app, setup(&device, CullingBackend::Cpu)).expect("a device is there");
    build_scene(&mut app);
    let capture = app.resource::<SharedCapture>().clone();
    for frame in 0..6u64 {
        // Frames 1 and 2 are not drawn: the drawn count and the game frame part ways.
        let drawn = !(1..=2).contains(&frame);
        (lock_capture(&capture).draw, lock_capture(&capture).capture) = (drawn, true);
        app.run_frame();
        assert_eq!(app.last_frame_index(), Some(frame));
        let report = app.resource::<RenderReport>();
        let capture = lock_capture(&capture);
        assert_eq!(capture.captured, drawn, "frame {frame}: copied when drawn");
        if capture.captured {
            assert_eq!(
                capture.frame,
                Some(frame),
                "the game frame, not the {} frames drawn before it",
                report.frames - 1
            );
            assert_eq!(report.game_frame, Some(frame), "the report agrees");
        }
    }
    assert_eq!(app.resource::<RenderReport>().frames, 4, "two frames were not drawn");
    assert_no_validation_messages(&device);
}

fn reference_renderer(device: &Arc<GpuDevice>) -> ReferenceRenderer {
    let meshes = MeshLibrary::with_unit_cube();
    ReferenceRenderer::with_device(Arc::clone(device), WIDTH, HEIGHT, CAPACITY, meshes, SKY).expect("a reference")
}

#[test]
fn install_render_draws_the_whole_frame_every_frame_and_keeps_images_when_asked() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        let mut app = runtime::App::with_threads(1);
        install_render(&mut app, setup(&device, backend)).expect("a device is there");
        build_scene(&mut app);
        let capture = app.resource::<SharedCapture>().clone();
        for frame in 0..4u64 {
            lock_capture(&capture).capture = frame % 2 == 1;
            app.run_frame();
            let report = app.resource::<RenderReport>();
            assert!(report.error.is_none(), "{backend:?}: {:?}", report.error);
            assert_eq!(report.frames, frame + 1, "{backend:?}: every frame is drawn");
            let capture = lock_capture(&capture);
            assert_eq!(capture.captured, frame % 2 == 1, "{backend:?} frame {frame}: copied only when asked");
            if capture.captured {
                assert_eq!(capture.extent, (WIDTH, HEIGHT));
                assert_eq!(capture.frame, Some(frame));
                let sky = [(SKY[0] * 255.0).round() as u8, (SKY[1] * 255.0).round() as u8];
                let drawn = capture.pixels.chunks_exact(4).filter(|pixel| pixel[..2] != sky).count();
                assert!(drawn > 100, "{backend:?}: the geometry pass ran and drew the scene ({drawn} pixels)");
            }
        }
    }
    assert_no_validation_messages(&device);
}

#[test]
fn the_truth_finds_nothing_hidden_that_shows() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        let (mut app, capture) = headless_app(&device, backend);
        build_scene(&mut app);
        let mut reference = reference_renderer(&device);
        for frame in 0..3 {
            app.run_frame();
            let capture = lock_capture(&capture);
            assert!(capture.captured, "{backend:?}: a headless target keeps every frame's image");
            let (world, visibility) = (app.world(), app.resource::<Visibility>());
            let report = app.resource::<RenderReport>();
            let checked = check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None)
                .expect("the truth answers");
            assert_eq!(checked.differing_pixels, 0, "{backend:?} frame {frame}: culling changed the picture");
            assert_eq!(checked.truth.false_hidden, 0, "{backend:?} frame {frame}: {:?}", checked.truth);
            assert!(checked.truth.objects_with_pixels >= 7, "{backend:?}: the wall and the front cubes show");
            assert!(checked.truth.efficiency > 0.5 && checked.truth.efficiency <= 1.0, "{:?}", checked.truth);
        }
    }
    assert_no_validation_messages(&device);
}

#[test]
fn the_truth_catches_a_planted_culling_bug() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        let (mut app, capture) = headless_app(&device, backend);
        let front = build_scene(&mut app);
        // The bug: a cube whose box says it lies far to the side, so culling drops it,
        // while its mesh draws in the middle of the view.
        let mut wrong = scene::unit_cube_mesh();
        wrong.bounds = Aabb::new(Vec3::new(99.5, -0.5, -0.5), Vec3::new(100.5, 0.5, 0.5));
        app.world_mut().insert_one(front[2], wrong).expect("spawned");
        let mut reference = reference_renderer(&device);
        app.run_frame();
        app.run_frame();
        let capture = lock_capture(&capture);
        let (world, visibility) = (app.world(), app.resource::<Visibility>());
        let report = app.resource::<RenderReport>();
        let checked =
            check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None).expect("the truth answers");
        let slot = visibility.slot_of(front[2]).expect("a slot");
        assert_eq!(checked.truth.false_hidden, 1, "{backend:?}: {:?}", checked.truth);
        assert_eq!(checked.truth.false_hidden_slots, [slot], "{backend:?}: the planted cube is named");
        assert!(checked.differing_pixels > 0, "{backend:?}: and the picture lacks it");
    }
    assert_no_validation_messages(&device);
}

/// The id image of masked, textured surfaces: each object is named by its own id, whatever
/// its slot and its texels' alpha. Cubes of a masked material whose texel alpha (200) is
/// above the cutoff stand in a row in view, after 300 cubes behind the camera (so their
/// slots need more than one byte); the objects owning pixels are exactly the row.
#[test]
fn the_id_image_names_masked_textured_objects_by_their_own_ids() {
    let Some(device) = gpu_test_context() else { return };
    let mut meshes = MeshLibrary::with_unit_cube();
    let texture = meshes.add_texture(1, vec![vec![255, 255, 255, 200]]).expect("a texel");
    let masked =
        meshes.add_material(Material { texture: Some(texture), alpha_cutoff: Some(0.5), ..Material::default() });
    let masked = MaterialHandle(masked.expect("a masked material"));
    let capacity = 512;
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        let mut app = runtime::App::with_threads(1);
        let (target, capture) = HeadlessTarget::new();
        let setup = RenderSetup { capacity, meshes: meshes.clone(), ..setup(&device, backend) };
        install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
        scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 8.0), Vec3::ZERO));
        for index in 0..300 {
            let behind = Transform::from_translation(Vec3::new(index as f32 * 0.1, 0.0, 20.0));
            scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), behind);
        }
        let mut row = Vec::new();
        for index in 0..5 {
            let mut cube = scene::unit_cube_mesh();
            cube.material = masked;
            let place = Transform::from_translation(Vec3::new(index as f32 * 1.6 - 3.2, 0.0, 0.0));
            row.push(scene::spawn_mesh(app.world_mut(), cube, place));
        }
        let mut reference =
            ReferenceRenderer::with_device(Arc::clone(&device), WIDTH, HEIGHT, capacity, meshes.clone(), SKY)
                .expect("a reference");
        app.run_frame();
        let capture = lock_capture(&capture);
        let (world, visibility) = (app.world(), app.resource::<Visibility>());
        let mut expected: Vec<u32> = row.iter().map(|&cube| visibility.slot_of(cube).expect("a slot")).collect();
        expected.sort_unstable();
        assert!(expected[0] > 255, "{backend:?}: the row's slots need two bytes: {expected:?}");
        let owners = reference.objects_with_pixels(world, &visibility).expect("the id image");
        assert_eq!(owners, expected, "{backend:?}: the masked cubes own pixels under their own ids");
        let report = app.resource::<RenderReport>();
        let checked =
            check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None).expect("the truth answers");
        assert_eq!((checked.truth.false_hidden, checked.differing_pixels), (0, 0), "{backend:?}: {:?}", checked.truth);
    }
    assert_no_validation_messages(&device);
}
