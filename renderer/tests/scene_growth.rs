//! A world that grows while it plays, on lavapipe with validation: the renderer is installed
//! for 64 object slots and the game spawns ten times as many in bursts (despawning some as it
//! goes), shadow casters under the sun among them. Every frame, serial and pipelined, with
//! GPU and CPU culling, every object is drawn the frame it spawns (the truth finds nothing
//! hidden that shows, no caster dropped from a light view, the same picture as with culling
//! off) and nothing is reported wrong. A growth that cannot allocate is reported once and the
//! frames go on drawing what fits.

mod lit_cube;

use std::sync::Arc;

use culling::{CullingBackend, ShadowViews, Visibility};
use ecs::{scene, Aabb, Camera, DirectionalLight, MaterialHandle, Mesh, MeshHandle, ShadowCaster, Transform};
use glam::{Quat, Vec3};
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::truth::{check_frame, compare_with_unculled, ReferenceRenderer};
use renderer::{
    install_render_to, lock_capture, BitsReadback, FrameInFlight, HeadlessTarget, RenderReport, RenderSetup,
    SharedCapture,
};
use runtime::hecs::Entity;

const WIDTH: u32 = 64;
const HEIGHT: u32 = 48;
const SKY: [f32; 4] = [0.1, 0.2, 0.3, 1.0];
const INITIAL: u32 = 64;
const ATLAS: u32 = 1024;

/// A small deterministic generator (xorshift64).
struct Random(u64);

impl Random {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn app(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    pipelined: bool,
    bits: BitsReadback,
) -> (runtime::App, SharedCapture) {
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: INITIAL,
        meshes: lit_cube(),
        clear_color: SKY,
        bits,
        passes: Vec::new(),
        shadows: true,
    };
    let mut app = runtime::App::with_threads(2);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    ecs::install(&mut app);
    {
        let mut settings = app.resource_mut::<ecs::ShadowSettings>();
        settings.atlas_resolution = ATLAS;
        settings.cascade_resolution = 256;
        settings.max_distance = 40.0;
    }
    app.resource_mut::<ecs::RenderSettings>().pipelined_frames = pipelined;
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 9.0, 14.0), Vec3::ZERO));
    let sun = Quat::from_rotation_arc(Vec3::NEG_Z, Vec3::new(0.5, -1.0, 0.3).normalize());
    app.world_mut().spawn((Transform::from_translation_rotation(Vec3::ZERO, sun), DirectionalLight::default()));
    spawn_cube(&mut app, Vec3::new(0.0, -0.5, 0.0), Vec3::new(60.0, 1.0, 60.0), false);
    (app, capture)
}

fn spawn_cube(app: &mut runtime::App, center: Vec3, size: Vec3, caster: bool) -> Entity {
    let mesh = Mesh::new(MeshHandle(0), MaterialHandle(0), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
    let entity = scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(center).with_scale(size));
    if caster {
        app.world_mut().insert_one(entity, ShadowCaster).expect("spawned");
    }
    entity
}

/// Spawns a burst of `count` cubes over the ground (every third a shadow caster, some out
/// of view), and despawns `despawn` of the living ones.
fn burst(app: &mut runtime::App, random: &mut Random, living: &mut Vec<Entity>, count: usize, despawn: usize) {
    for index in 0..count {
        let center = Vec3::new(random.next() * 36.0 - 18.0, random.next() * 3.0, random.next() * 36.0 - 24.0);
        let size = Vec3::splat(0.3 + random.next() * 0.9);
        living.push(spawn_cube(app, center, size, index % 3 == 0));
    }
    for _ in 0..despawn.min(living.len()) {
        let index = (random.next() * living.len() as f32) as usize % living.len();
        let entity = living.swap_remove(index);
        app.world_mut().despawn(entity).expect("alive");
    }
}

/// Grows the world from 1 to past 640 objects (ten times the initial capacity) and checks
/// every frame against the truth; returns the most objects alive at once.
fn grow_and_check(device: &Arc<GpuDevice>, backend: CullingBackend, pipelined: bool) -> usize {
    // The truth needs each frame's own GPU answer.
    let (mut app, capture) = app(device, backend, pipelined, BitsReadback::Wait);
    let mut reference =
        ReferenceRenderer::with_shadows(Arc::clone(device), (WIDTH, HEIGHT), INITIAL, lit_cube(), SKY, ATLAS)
            .expect("a reference");
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut living = Vec::new();
    let mut most = 0;
    for frame in 0..24 {
        // Bursts that double the slots in some frames, and despawns that free some.
        let count = [8, 40, 70, 30][frame % 4];
        burst(&mut app, &mut random, &mut living, count, count / 4);
        app.run_frame();
        FrameInFlight::finish(&mut app);
        most = most.max(living.len());
        let capture = lock_capture(&capture);
        let report = app.resource::<RenderReport>();
        let label = format!("{backend:?} pipelined {pipelined} frame {frame} ({} objects)", living.len() + 1);
        assert!(report.error.is_none(), "{label}: {:?}", report.error);
        assert_eq!(report.game_frame, Some(frame as u64), "{label}: the report is the frame's");
        assert_eq!(capture.frame, Some(frame as u64), "{label}: the image is the frame's");
        let (world, visibility) = (app.world(), app.resource::<Visibility>());
        let shadows = app.resource::<ShadowViews>();
        let checked = check_frame(&mut reference, &capture.pixels, world, &visibility, &report, Some(&shadows))
            .expect("the truth answers");
        assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
        assert_eq!(checked.truth.dropped_casters, Some(0), "{label}: {:?}", checked.truth);
        assert_eq!(checked.differing_pixels, 0, "{label}: culling changed the picture");
        assert!(checked.truth.objects_with_pixels > 1, "{label}: the cubes show");
    }
    most
}

#[test]
fn a_world_ten_times_the_initial_capacity_draws_every_object_the_frame_it_spawns() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        for pipelined in [false, true] {
            let most = grow_and_check(&device, backend, pipelined);
            assert!(most >= 10 * INITIAL as usize, "{backend:?}: {most} objects at most");
        }
    }
    assert_no_validation_messages(&device);
}

/// Frames in flight while the world grows (pipelined, the GPU's answer read a frame late,
/// no frame waited for): the outgrown buffers outlive the frames that use them (validation
/// would name a destroyed buffer), no frame reports an error, and the last frame's picture is
/// the one drawn with culling off.
#[test]
fn growth_while_frames_overlap_keeps_every_frame_whole() {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, capture) = app(&device, CullingBackend::Gpu, true, BitsReadback::Lagged);
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    let mut living = Vec::new();
    for frame in 0..20 {
        let count = [8, 40, 70, 30][frame % 4];
        burst(&mut app, &mut random, &mut living, count, count / 4);
        app.run_frame();
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame} ({} objects): {:?}", living.len(), report.error);
    }
    FrameInFlight::finish(&mut app);
    assert!(app.resource::<RenderReport>().error.is_none());
    let mut reference =
        ReferenceRenderer::with_shadows(Arc::clone(&device), (WIDTH, HEIGHT), INITIAL, lit_cube(), SKY, ATLAS)
            .expect("a reference");
    let capture = lock_capture(&capture);
    let (world, visibility) = (app.world(), app.resource::<Visibility>());
    reference.set_shadows(Some(&app.resource::<ShadowViews>()), &visibility);
    let differing = compare_with_unculled(&mut reference, &capture.pixels, world, &visibility).expect("the truth");
    assert_eq!(differing, 0, "the last frame of {} objects is whole", living.len());
    assert_no_validation_messages(&device);
}

/// The records' colours and index counts as the GPU holds them (read back after the frame).
fn gpu_records(readback: &render_graph::ReadbackBuffer, count: usize) -> Vec<(u32, u32)> {
    let bytes = readback.read().expect("the frame finished");
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    let stride = renderer::OBJECT_RECORD_BYTES as usize;
    (0..count).map(|slot| (word(slot * stride + 36), word(slot * stride + 12))).collect()
}

/// The records' colours and index counts as the host holds them.
fn host_records(scene: &renderer::SharedScene) -> Vec<(u32, u32)> {
    renderer::lock_scene(scene).records().iter().map(|record| (record.color, record.index_count)).collect()
}

#[test]
fn the_scene_doubles_keeping_its_slots_on_the_host_and_on_the_gpu() {
    use renderer::{add_scene_passes, lock_scene, FrameView, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions};
    let Some(device) = gpu_test_context() else { return };
    let scene = GpuScene::new(&device, MeshLibrary::with_unit_cube(), 4).expect("a scene").into_shared();
    let mut graph =
        render_graph::RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 16, height: 16 }).expect("a graph");
    add_scene_passes(&mut graph, &scene, &ScenePassOptions::default()).expect("the scene's passes");
    graph.set_param(FrameView::from_view_projection(glam::Mat4::IDENTITY));
    let readback = render_graph::ReadbackBuffer::new(&device, "records readback", 256 * renderer::OBJECT_RECORD_BYTES)
        .expect("a readback");
    graph.import_buffer("records readback", readback.shared());
    graph.add_typed_pass(render_graph::readback::BufferReadbackPass::new(renderer::OBJECT_RECORDS, "records readback"));
    let object = |slot: u32| ObjectDesc {
        world: glam::Mat4::IDENTITY.to_cols_array_2d(),
        color: slot * 7 + 1,
        mesh: 0,
        material: 0,
    };
    let mut generation = 0;
    let draw = |graph: &mut render_graph::RenderGraph, generation: &mut u64| {
        lock_scene(&scene).follow_growth(graph, generation);
        lock_scene(&scene).draw_all_objects();
        graph.execute_frame().expect("a frame");
        graph.wait_idle().expect("idle");
    };
    for slot in 0..4 {
        lock_scene(&scene).push_object(object(slot)).expect("room");
    }
    draw(&mut graph, &mut generation);
    let compiles = graph.compile_count();
    assert_eq!(gpu_records(&readback, 4), host_records(&scene));
    {
        let mut scene = lock_scene(&scene);
        assert_eq!(scene.push_object(object(4)).expect("grows"), 4);
        assert_eq!((scene.capacity(), scene.generation()), (8, 1), "a full scene doubles");
        assert_eq!(scene.dirty_count(), 1, "only the new slot waits for upload: the rest is copied");
        assert_eq!(scene.records()[..4].iter().map(|record| record.color).collect::<Vec<_>>(), [1, 8, 15, 22]);
        assert!(!scene.reserve(8).expect("no growth"), "room for 8 already");
        assert!(scene.reserve(20).expect("grows"), "8 doubles twice for 20");
        assert_eq!((scene.capacity(), scene.generation()), (32, 2));
    }
    draw(&mut graph, &mut generation);
    assert_eq!(graph.compile_count(), compiles + 1, "two growths before a frame: one compile");
    assert_eq!(gpu_records(&readback, 5), host_records(&scene), "copied through the buffer between");
    for slot in 5..40 {
        lock_scene(&scene).push_object(object(slot)).expect("room");
    }
    lock_scene(&scene).clear_object(2).expect("a slot");
    draw(&mut graph, &mut generation);
    assert_eq!(lock_scene(&scene).capacity(), 64);
    assert_eq!(gpu_records(&readback, 40), host_records(&scene));
    // The outgrown buffers of the copies are freed once their frames have finished.
    draw(&mut graph, &mut generation);
    draw(&mut graph, &mut generation);
    assert_eq!(gpu_records(&readback, 40), host_records(&scene));
    assert_no_validation_messages(&device);
}
