//! The render graph proves its own barriers: the engine's frames (the CPU-list frame and the
//! GPU-culled frame, with shadows, and the meshlet-culled frame), each with the users' passes of
//! `samples::frame_passes`, drawn with the passes the graph considers independent reordered
//! by several seeds (`RenderGraph::shuffle_independent`), under synchronization validation,
//! give the images (and bits) of the declared order. A dependency the passes never declared
//! shows as a changed image or a validation message here, instead of a lucky order.
//!
//! Kept small for lavapipe: 64x48 images, three frames a seed.

use std::sync::{Arc, Mutex};

use culling::cluster::ClusterSettings;
use culling::{CullingBackend, Visibility};
use ecs::{scene, Camera, DirectionalLight, ShadowCaster, ShadowSettings, Transform};
use glam::{Mat4, Quat, Vec3};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice, Owner, RenderGraph};
use renderer::{
    add_cluster_culled_scene_passes, install_render_to, BitsReadback, ClusterReadbacks, FrameTarget, FrameView,
    GpuScene, MeshLibrary, ObjectDesc, RenderReport, RenderSetup, ScenePassOptions,
};
use samples::frame_passes::{add_frame_passes, BobClock, FramePassChoice};

const WIDTH: u32 = 64;
const HEIGHT: u32 = 48;
const CAPACITY: u32 = 64;
const FRAMES: u32 = 3;
/// The seeds of the shuffled orders (each against the declared order).
const SEEDS: [u64; 4] = [0x5eed_0001, 0x5eed_0002, 0x5eed_0003, 0x5eed_0004];

/// What a frame drew and in which order its passes ran.
#[derive(Debug, Default, PartialEq)]
struct Drawn {
    images: Vec<Vec<u8>>,
    bits: Vec<Vec<u64>>,
    order: Vec<String>,
}

/// Shuffles the graph with `seed` when the renderer installs it, and notes the order.
struct Shuffled {
    seed: Option<u64>,
    order: Arc<Mutex<Vec<String>>>,
}

impl FrameTarget for Shuffled {
    fn add_passes(&mut self, graph: &mut RenderGraph) -> render_graph::Result<()> {
        graph.shuffle_independent(self.seed);
        Ok(())
    }
    fn begin_frame(&mut self, _: &mut RenderGraph, _: renderer::TargetFrame) -> render_graph::Result<bool> {
        Ok(true)
    }
    fn end_frame(&mut self, graph: &mut RenderGraph, _: renderer::TargetFrame) -> render_graph::Result<()> {
        *self.order.lock().expect("not poisoned") = graph.execution_order()?;
        Ok(())
    }
}

/// The Render stage's frames of a small lit scene on `backend` (with shadows when asked),
/// the sample passes `choice` added as a user's, the graph shuffled with `seed`.
fn stage_frames(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    shadows: bool,
    choice: FramePassChoice,
    seed: Option<u64>,
) -> Drawn {
    let clock = BobClock::default();
    let setup = RenderSetup {
        shadows,
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: CAPACITY,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.1, 0.2, 0.3, 1.0],
        bits: if backend == CullingBackend::Gpu { BitsReadback::Wait } else { BitsReadback::None },
        passes: vec![Box::new(move |graph: &mut RenderGraph| add_frame_passes(graph, &choice, CAPACITY, &clock))],
    };
    let mut app = runtime::App::with_threads(1);
    ecs::install(&mut app);
    {
        let mut settings = app.resource_mut::<ShadowSettings>();
        settings.atlas_resolution = 512;
        settings.cascade_resolution = 128;
        settings.max_distance = 30.0;
    }
    let order = Arc::new(Mutex::new(Vec::new()));
    let target = Shuffled { seed, order: Arc::clone(&order) };
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(1.0, 4.0, 10.0), Vec3::ZERO));
    let sun = Quat::from_rotation_arc(Vec3::NEG_Z, Vec3::new(-0.4, -1.0, -0.3).normalize());
    app.world_mut().spawn((Transform::from_translation_rotation(Vec3::ZERO, sun), DirectionalLight::default()));
    let ground = Transform::from_translation(Vec3::new(0.0, -1.0, 0.0)).with_scale(Vec3::new(16.0, 0.2, 16.0));
    let wall = Transform::from_translation(Vec3::new(0.0, 0.5, 0.0)).with_scale(Vec3::new(6.0, 3.0, 0.3));
    for place in [ground, wall] {
        let entity = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), place);
        app.world_mut().insert_one(entity, ShadowCaster).expect("spawned");
    }
    for index in 0..8 {
        let (x, z) = (index as f32 * 1.5 - 5.0, if index % 2 == 0 { 3.0 } else { -3.0 });
        let cube = scene::spawn_mesh(
            app.world_mut(),
            scene::unit_cube_mesh(),
            Transform::from_translation(Vec3::new(x, 0.0, z)),
        );
        let colour = ecs::BaseColor([0.2 + 0.1 * index as f32, 0.9 - 0.1 * index as f32, 0.4, 1.0]);
        app.world_mut().insert_one(cube, (colour, ShadowCaster)).expect("spawned");
    }
    let mut drawn = Drawn::default();
    for _ in 0..FRAMES {
        app.resource_mut::<renderer::Screenshots>().request(renderer::COLOR);
        app.run_frame();
        {
            let report = app.resource::<RenderReport>();
            assert!(report.error.is_none(), "seed {seed:?}: {:?}", report.error);
            assert!(report.dropped_passes.is_empty(), "seed {seed:?}: {:?}", report.dropped_passes);
        }
        let shot = app.resource_mut::<renderer::Screenshots>().take().pop().expect("taken every frame");
        drawn.images.push(shot.rgba8);
        let bits = if backend == CullingBackend::Gpu {
            app.resource::<RenderReport>().bits.clone()
        } else {
            app.resource::<Visibility>().bits().words().to_vec()
        };
        drawn.bits.push(bits);
    }
    drop(app);
    drawn.order = std::mem::take(&mut *order.lock().expect("not poisoned"));
    drawn
}

/// The meshlet-culled frame of a row of cubes (object then meshlet culling, two phases each),
/// with the post-processes of `samples::frame_passes` as a user's, shuffled with `seed`.
fn cluster_frames(device: &Arc<GpuDevice>, seed: Option<u64>) -> Drawn {
    let mut scene = GpuScene::new(device, MeshLibrary::with_unit_cube(), CAPACITY).expect("a scene");
    for index in 0..10 {
        let (x, z) = (index as f32 * 1.3 - 6.0, if index % 3 == 0 { -2.0 } else { 1.5 });
        let world = Mat4::from_translation(Vec3::new(x, 0.0, z)).to_cols_array_2d();
        let color = renderer::pack_rgba8(40 + 20 * index as u8, 200 - 15 * index as u8, 90, 255);
        scene.push_object(ObjectDesc { world, color, mesh: 0, material: 0 }).expect("room");
    }
    let scene = scene.into_shared();
    let mut graph =
        RenderGraph::new(Arc::clone(device), vk::Extent2D { width: WIDTH, height: HEIGHT }).expect("a graph");
    let readbacks = ClusterReadbacks { color: true, verdicts: true, early_depth: false };
    let options = ScenePassOptions { clear_color: [0.1, 0.2, 0.3, 1.0], ..ScenePassOptions::default() };
    let frame = add_cluster_culled_scene_passes(&mut graph, &scene, &options, ClusterSettings::default(), readbacks)
        .expect("the cluster frame");
    graph.set_owner(Owner::User);
    let choice = FramePassChoice { fog: true, outline: true, ..FramePassChoice::default() };
    graph.add_group(|graph| add_frame_passes(graph, &choice, CAPACITY, &BobClock::default())).expect("the passes");
    graph.shuffle_independent(seed);
    let eye = Vec3::new(0.5, 2.0, 9.0);
    let view = Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y);
    let projection = Mat4::perspective_infinite_reverse_rh(1.0, WIDTH as f32 / HEIGHT as f32, 0.1);
    graph.set_param(FrameView::new(view, projection, eye, (WIDTH, HEIGHT), 0.1, f32::INFINITY));
    let mut drawn = Drawn::default();
    for _ in 0..FRAMES {
        graph.execute_frame().expect("the frame runs");
        graph.wait_idle().expect("the frame finishes");
        drawn.images.push(frame.color.as_ref().expect("asked for").read().expect("finished").to_vec());
        let mut verdicts = Vec::new();
        frame.read_verdicts(&mut verdicts).expect("finished");
        let stats = frame.read_stats().expect("finished");
        let counts = [stats.early_drawn, stats.late_drawn, stats.occlusion_rejected, stats.triangles];
        let mut answer: Vec<u64> = counts.iter().map(|&count| u64::from(count)).collect();
        answer.extend(verdicts.iter().map(|verdict| *verdict as u64));
        drawn.bits.push(answer);
    }
    assert!(graph.dropped_passes().is_empty(), "{:?}", graph.dropped_passes());
    drawn.order = graph.execution_order().expect("compiled");
    drawn
}

/// Asserts that every seed drew `declared`'s frames, and that some seed changed the order.
fn assert_shuffles_change_nothing(what: &str, declared: &Drawn, shuffled: &[Drawn]) {
    let colours: std::collections::HashSet<&[u8]> = declared.images[0].chunks_exact(4).collect();
    assert!(colours.len() > 4, "{what}: a scene worth comparing");
    for (seed, drawn) in SEEDS.iter().zip(shuffled) {
        for frame in 0..declared.images.len() {
            assert!(declared.images[frame] == drawn.images[frame], "{what}, seed {seed:#x}, frame {frame}: the image");
            assert_eq!(declared.bits[frame], drawn.bits[frame], "{what}, seed {seed:#x}, frame {frame}: the answer");
        }
        let mut sorted = (declared.order.clone(), drawn.order.clone());
        sorted.0.sort();
        sorted.1.sort();
        assert_eq!(sorted.0, sorted.1, "{what}, seed {seed:#x}: the same passes run");
    }
    assert!(shuffled.iter().any(|drawn| drawn.order != declared.order), "{what}: the seeds reorder some passes");
}

#[test]
fn every_frame_kind_draws_the_same_under_shuffled_orders_of_its_independent_passes() {
    let Some(device) = gpu_test_context() else { return };
    let every_pass = FramePassChoice { bob: true, fog: true, outline: true, boxes: true };
    let post = FramePassChoice { fog: true, outline: true, ..FramePassChoice::default() };
    let kinds: [(&str, CullingBackend, bool, FramePassChoice); 2] = [
        ("the CPU-list frame with shadows", CullingBackend::Cpu, true, post),
        ("the GPU-culled frame with shadows", CullingBackend::Gpu, true, every_pass),
    ];
    for (what, backend, shadows, choice) in kinds {
        let declared = stage_frames(&device, backend, shadows, choice, None);
        let shuffled: Vec<Drawn> =
            SEEDS.iter().map(|&seed| stage_frames(&device, backend, shadows, choice, Some(seed))).collect();
        assert_shuffles_change_nothing(what, &declared, &shuffled);
    }
    let declared = cluster_frames(&device, None);
    let shuffled: Vec<Drawn> = SEEDS.iter().map(|&seed| cluster_frames(&device, Some(seed))).collect();
    assert_shuffles_change_nothing("the meshlet-culled frame", &declared, &shuffled);
    assert_no_validation_messages(&device);
}
