//! The GPU's choice of levels of detail in a running app (the Visibility stage's rule and view
//! handed to the camera's GPU cull by the Render stage), on lavapipe with validation: over a
//! camera path through a field of objects whose LOD chains carry simplification errors, the
//! frames drawn with the GPU choosing the levels are the frames drawn with the levels the
//! Visibility stage chose (`RenderSettings::gpu_lod_selection` off), pixel for pixel, and the
//! GPU's histogram shows it chose coarser levels.

use std::sync::Arc;

use culling::CullingBackend;
use ecs::{scene, Aabb, BaseColor, Camera, Lod, LodLevel, MaterialHandle, Mesh, MeshHandle, Transform};
use glam::Vec3;
use meshes::{MeshVertices, UNIT_CUBE_INDICES, UNIT_CUBE_POSITIONS};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::{install_render_to, lock_capture, BitsReadback, HeadlessTarget, MeshLibrary};
use renderer::{RenderReport, RenderSetup, SharedCapture};

const WIDTH: u32 = 96;
const HEIGHT: u32 = 64;
const SIDE: usize = 24;
const FRAMES: usize = 12;

/// The unit cube (mesh 0) and a chain of three levels of it (meshes 1-3: the whole cube, four
/// faces, two faces) with simplification errors.
fn library() -> MeshLibrary {
    let mut library = MeshLibrary::with_unit_cube();
    let normals = [[0.0, 0.0, 1.0]; 8];
    let vertices = MeshVertices { positions: &UNIT_CUBE_POSITIONS, normals: &normals, uvs: &[] };
    let levels = [&UNIT_CUBE_INDICES[..36], &UNIT_CUBE_INDICES[..24], &UNIT_CUBE_INDICES[..12]];
    let levels: Vec<(&[u32], &[meshes::Meshlet])> = levels.iter().map(|indices| (*indices, &[][..])).collect();
    let chain = library.add_mesh_levels(vertices, &levels).expect("a chain");
    library.set_level_errors(chain, &[0.0, 0.02, 0.12]).expect("errors of the whole chain");
    library
}

fn setup(device: &Arc<GpuDevice>) -> RenderSetup {
    RenderSetup {
        shadows: false,
        backend: CullingBackend::Gpu,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: 1024,
        meshes: library(),
        clear_color: [0.1, 0.2, 0.3, 1.0],
        bits: BitsReadback::Wait,
        passes: Vec::new(),
    }
}

/// A field of cubes of the chain, rotated and scaled apart, each its own colour.
fn build_scene(app: &mut runtime::App) -> runtime::hecs::Entity {
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), camera_at(0));
    let bounds = Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5));
    let levels: Arc<[LodLevel]> =
        (1..4).map(|mesh| LodLevel { mesh: MeshHandle(mesh), max_distance: f32::INFINITY }).collect();
    for index in 0..SIDE * SIDE {
        let (column, row) = ((index % SIDE) as f32, (index / SIDE) as f32);
        let place = Vec3::new(column * 2.5 - 30.0, 0.4 * (index % 5) as f32, 4.0 - row * 2.5);
        let mut transform = Transform::from_translation(place);
        transform.rotation = glam::Quat::from_rotation_y(index as f32 * 0.37);
        transform.scale = Vec3::splat(0.6 + 0.1 * (index % 7) as f32);
        let entity = scene::spawn_mesh(app.world_mut(), Mesh::new(MeshHandle(1), MaterialHandle(0), bounds), transform);
        let colour = BaseColor([0.2 + 0.03 * column, 0.9 - 0.03 * row, 0.1 * (index % 9) as f32, 1.0]);
        let lod = Lod { levels: Arc::clone(&levels), bias: 1.0 };
        app.world_mut().insert(entity, (colour, lod)).expect("spawned");
    }
    camera
}

/// The camera of frame `frame`: it walks into the field and turns, back and forth, so levels
/// change and objects come into and leave the view.
fn camera_at(frame: usize) -> Transform {
    let step = frame as f32;
    let eye = Vec3::new(-10.0 + 1.5 * step, 2.0, 12.0 - 3.0 * step + 2.0 * (step * 1.3).sin());
    scene::look_at(eye, eye + Vec3::new((step * 0.5).sin(), -0.1, -1.0))
}

struct Run {
    images: Vec<Vec<u8>>,
    /// Per frame: the GPU's histogram of drawn objects by level it chose.
    histograms: Vec<[u32; renderer::LOD_STAT_LEVELS]>,
}

fn run(device: &Arc<GpuDevice>, gpu_lod: bool, batch_draws: bool) -> Run {
    let mut app = runtime::App::with_threads(1);
    let (target, capture): (HeadlessTarget, SharedCapture) = HeadlessTarget::new();
    install_render_to(&mut app, setup(device), Some(Box::new(target))).expect("a device is there");
    app.resource_mut::<ecs::RenderSettings>().gpu_lod_selection = gpu_lod;
    app.resource_mut::<ecs::RenderSettings>().batch_draws = batch_draws;
    let camera = build_scene(&mut app);
    let mut run = Run { images: Vec::new(), histograms: Vec::new() };
    for frame in 0..FRAMES {
        *app.world_mut().get::<&mut Transform>(camera).expect("the camera") = camera_at(frame);
        app.run_frame();
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
        run.histograms.push(report.gpu.as_ref().expect("GPU culling").lod_levels);
        let capture = lock_capture(&capture);
        assert!(capture.captured, "a headless target keeps every frame's image");
        run.images.push(capture.pixels.clone());
    }
    run
}

#[test]
fn gpu_lod_app_frames_equal_the_frames_of_the_cpu_levels() {
    let Some(device) = gpu_test_context() else { return };
    let cpu_levels = run(&device, false, true);
    for batch_draws in [true, false] {
        let gpu_levels = run(&device, true, batch_draws);
        for (frame, (gpu, cpu)) in gpu_levels.images.iter().zip(&cpu_levels.images).enumerate() {
            let differing = gpu.chunks_exact(4).zip(cpu.chunks_exact(4)).filter(|(a, b)| a != b).count();
            assert_eq!(
                differing, 0,
                "frame {frame} (batched {batch_draws}): the GPU's levels changed {differing} pixels"
            );
        }
        let coarser: u32 = gpu_levels.histograms.iter().map(|levels| levels[1] + levels[2]).sum();
        assert!(coarser > 0, "the GPU chose coarser levels: {:?}", gpu_levels.histograms);
    }
    let chosen_by_gpu: u32 = cpu_levels.histograms.iter().map(|levels| levels[1..].iter().sum::<u32>()).sum();
    assert_eq!(chosen_by_gpu, 0, "with the selection off the GPU draws the records' levels (counted at 0)");
    assert_no_validation_messages(&device);
}

/// The camera of frame `frame` of the flight answered on request: it walks and turns, then
/// only turns where it stands, then walks again.
fn turning_camera_at(frame: u64) -> Transform {
    let walked = frame.min(4) + frame.saturating_sub(9);
    let step = walked as f32;
    let eye = Vec3::new(-10.0 + 1.5 * step, 2.0, 12.0 - 3.0 * step);
    let heading = frame as f32 * 0.35;
    scene::look_at(eye, eye + Vec3::new(heading.sin(), -0.1, -heading.cos()))
}

/// Per frame: the image, every mesh entity's `state_of`, and whether the Visibility stage
/// culled every object.
type AnsweredRun = Vec<(Vec<u8>, Vec<Option<culling::ObjectState>>, bool)>;

fn run_answered(device: &Arc<GpuDevice>, answers: ecs::CpuAnswers, gpu_lod: bool) -> AnsweredRun {
    let mut app = runtime::App::with_threads(1);
    let (target, capture): (HeadlessTarget, SharedCapture) = HeadlessTarget::new();
    install_render_to(&mut app, setup(device), Some(Box::new(target))).expect("a device is there");
    app.resource_mut::<ecs::RenderSettings>().gpu_lod_selection = gpu_lod;
    app.resource_mut::<ecs::RenderSettings>().cpu_answers = answers;
    let camera = build_scene(&mut app);
    // The camera moves from a system, so the frames after the first stay tracked.
    app.add_system(
        runtime::Stage::Input,
        runtime::System::new("fly", move |ctx| {
            *ctx.get_mut::<Transform>(camera).expect("the camera") = turning_camera_at(ctx.time.frame_index);
        })
        .writes::<Transform>(),
    );
    let meshes: Vec<runtime::hecs::Entity> =
        app.world().query::<(runtime::hecs::Entity, &Mesh)>().iter().map(|(entity, _)| entity).collect();
    let mut frames = Vec::new();
    for frame in 0..14 {
        app.run_frame();
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
        let visibility = app.resource::<culling::Visibility>();
        let states = meshes.iter().map(|&entity| visibility.state_of(entity)).collect();
        let image = lock_capture(&capture).pixels.clone();
        frames.push((image, states, visibility.stats().objects_culled));
    }
    frames
}

/// Answered on request, the Visibility stage leaves the objects alone while the camera only
/// turns, and the frames are those answered every frame, pixel for pixel, with the GPU
/// choosing the levels or drawing the CPU's; so is every entity's `state_of` (the GPU's
/// occlusion included, tested one entity at a time).
#[test]
fn gpu_lod_app_frames_answered_on_request_equal_the_frames_answered_every_frame() {
    let Some(device) = gpu_test_context() else { return };
    for gpu_lod in [true, false] {
        let every = run_answered(&device, ecs::CpuAnswers::EveryFrame, gpu_lod);
        let asked = run_answered(&device, ecs::CpuAnswers::OnRequest, gpu_lod);
        let mut occluded = 0;
        for (frame, ((every_image, every_states, _), (image, states, _))) in every.iter().zip(&asked).enumerate() {
            let differing = image.chunks_exact(4).zip(every_image.chunks_exact(4)).filter(|(a, b)| a != b).count();
            assert_eq!(differing, 0, "frame {frame} (GPU levels {gpu_lod}): {differing} pixels differ on request");
            assert_eq!(states, every_states, "frame {frame} (GPU levels {gpu_lod}): the answers differ on request");
            occluded += states.iter().filter(|state| **state == Some(culling::ObjectState::Occluded)).count();
        }
        assert!(occluded > 0, "the GPU's bits occlude some objects");
        // The frames that only turn (5 to 9, the first of them after the walk excepted).
        let skipped: Vec<usize> = asked.iter().enumerate().filter(|(_, run)| !run.2).map(|(frame, _)| frame).collect();
        assert_eq!(
            skipped,
            vec![5, 6, 7, 8, 9],
            "(GPU levels {gpu_lod}) only the turning frames leave the objects alone"
        );
    }
    assert_no_validation_messages(&device);
}
