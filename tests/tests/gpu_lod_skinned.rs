//! The GPU chooses the levels of skinned meshes too: bars of two joints (the skinned bar of
//! `test_assets`, its levels a chain made with `MeshLibrary::add_skinned_mesh_levels`), each
//! bent by its clip to a pose of its own, at several distances from a camera that walks
//! towards them, casting shadows on a ground under a sun. On lavapipe with validation, with
//! the camera's and the shadow casters' GPU culls choosing the levels:
//! every slot's level the GPU keeps (`object_lod_levels`, read back) is the level the
//! Visibility stage chose for it, the GPU draws every level somewhere, and every frame is the
//! frame drawn with the records holding the CPU's levels (`RenderSettings::gpu_lod_selection`
//! off), pixel for pixel, in the bent poses.

use std::ops::Range;
use std::sync::Arc;

use animation::AnimationPlayer;
use assets::{load_gltf_bytes, spawn_model, Model, ProcessOptions};
use culling::occlusion::OccluderMeshes;
use culling::{CullingBackend, Visibility};
use ecs::{scene, Aabb, Camera, CameraRect, DirectionalLight, Lod, LodLevel, MaterialHandle, Mesh, MeshHandle};
use ecs::{ResolvedViews, ShadowCaster, Transform, ViewTarget};
use glam::Vec3;
use render_graph::readback::BufferReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice, ReadbackBuffer};
use renderer::truth::{check_gpu_view, check_view, ReferenceRenderer};
use renderer::{install_render_to, lock_capture, points, BitsReadback, HeadlessTarget, MeshLibrary, MeshVertices};
use renderer::{RenderReport, RenderSetup, SharedCapture, OBJECT_LOD_LEVELS};
use runtime::hecs::Entity;

const WIDTH: u32 = 96;
const HEIGHT: u32 = 64;
/// Slots the scene is made with (the readback covers them all).
const CAPACITY: u32 = 256;
const FRAMES: usize = 10;
/// Bars across, and rows going away from the camera.
const ACROSS: usize = 4;
const ROWS: usize = 9;
/// The chain's simplification errors, finest first (mesh units; the bar is two units tall).
const ERRORS: [f32; 3] = [0.0, 0.06, 0.3];
const LEVELS_READBACK: &str = "skinned lod levels readback";

/// The skinned bar as imported, a chain of three levels of its vertices (the whole bar, then
/// two halves of its triangles) with [`ERRORS`], and the unit cube (the ground).
fn library() -> (MeshLibrary, Model, Range<u32>, u32) {
    let gltf = test_assets::skinned_bar::gltf_text();
    let scene = load_gltf_bytes(gltf.as_bytes(), None, &ProcessOptions::default()).expect("a valid skinned file");
    let mut library = MeshLibrary::new();
    let model = scene.add_model(&mut library, &mut OccluderMeshes::new()).expect("the model goes in the library");
    let bar = *library.range(model.meshes()[0].finest().0).expect("the bar");
    let vertices = bar.vertex_offset as usize..bar.vertex_offset as usize + test_assets::skinned_bar::POSITIONS.len();
    let positions: Vec<[f32; 3]> =
        library.positions()[vertices.clone()].iter().map(|&[x, y, z, _]| [x, y, z]).collect();
    let normals = vec![[0.0, 0.0, 1.0]; positions.len()];
    let joints = library.vertex_joints()[vertices.clone()].to_vec();
    let weights = library.vertex_weights()[vertices].to_vec();
    let first = bar.first_index as usize;
    let indices = library.indices()[first..first + bar.index_count as usize].to_vec();
    assert_eq!(indices.len(), 12, "the bar has four triangles");
    let levels: [(&[u32], &[renderer::Meshlet]); 3] = [(&indices, &[]), (&indices[..9], &[]), (&indices[6..], &[])];
    let chain = library
        .add_skinned_mesh_levels(
            MeshVertices { positions: &positions, normals: &normals, uvs: &[] },
            renderer::VertexSkin { joints: &joints, weights: &weights },
            &levels,
        )
        .expect("a skinned chain");
    library.set_level_errors(chain.clone(), &ERRORS).expect("errors of the whole chain");
    assert!(renderer::mesh_is_skinned(&library, chain.start + 2), "every level keeps its influences");
    let cube = library.add_unit_cube();
    (library, model, chain, cube)
}

/// The camera of frame `frame`: it walks towards the bars and turns a little, so levels
/// change and bars come into and leave the view.
fn camera_at(frame: usize) -> Transform {
    let step = frame as f32;
    let eye = Vec3::new(0.6 * (step * 0.7).sin(), 1.2, 6.0 - 2.5 * step);
    scene::look_at(eye, eye + Vec3::new(0.15 * (step * 0.9).cos(), -0.05, -1.0))
}

/// The pose of bar `index` in frame `frame`: its clip's time (held, so both runs pose alike).
fn clip_time(index: usize, frame: usize) -> f32 {
    ((index * 7 + frame * 3) % 10) as f32 * 0.1
}

/// The bars, each drawing the chain and casting a shadow, bent its own way, on a ground
/// under a sun; returns the bars.
fn spawn_bars(app: &mut runtime::App, model: &Model, chain: &Range<u32>, cube: u32) -> Vec<Entity> {
    let levels: Arc<[LodLevel]> =
        chain.clone().map(|mesh| LodLevel { mesh: MeshHandle(mesh), max_distance: f32::INFINITY }).collect();
    let mut bars = Vec::new();
    for index in 0..ACROSS * ROWS {
        let (column, row) = ((index % ACROSS) as f32, (index / ACROSS) as f32);
        let place = Vec3::new((column - 1.5) * (0.9 + 0.35 * row), 0.0, -4.0 * row);
        let mut transform = Transform::from_translation(place);
        transform.rotation = glam::Quat::from_rotation_y(index as f32 * 0.61);
        let entity = spawn_model(app.world_mut(), model, transform).drawables[0];
        let world = app.world_mut();
        world.get::<&mut Mesh>(entity).expect("a drawable").mesh = MeshHandle(chain.start);
        world.insert(entity, (Lod { levels: Arc::clone(&levels), bias: 1.0 }, ShadowCaster)).expect("spawned");
        world.get::<&mut AnimationPlayer>(entity).expect("the bar's clip").playing = false;
        bars.push(entity);
    }
    let ground = Mesh::new(MeshHandle(cube), MaterialHandle::PLAIN, Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
    let place = Transform::from_translation(Vec3::new(0.0, -0.5, -14.0)).with_scale(Vec3::new(30.0, 1.0, 40.0));
    scene::spawn_mesh(app.world_mut(), ground, place);
    let sun = glam::Quat::from_rotation_arc(Vec3::NEG_Z, Vec3::new(-0.6, -1.0, -0.3).normalize());
    app.world_mut().spawn((Transform::from_translation_rotation(Vec3::ZERO, sun), DirectionalLight::default()));
    bars
}

struct Run {
    images: Vec<Vec<u8>>,
    /// Per frame and bar: the level the Visibility stage chose and the GPU's state word.
    levels: Vec<Vec<(u32, u32)>>,
    histograms: Vec<[u32; renderer::LOD_STAT_LEVELS]>,
    /// Per frame: joints of the palette that are not the identity (the bars are bent).
    bent_joints: Vec<usize>,
}

fn run(device: &Arc<GpuDevice>, gpu_lod: bool, batch_draws: bool) -> Run {
    let (library, model, chain, cube) = library();
    let readback = Arc::new(ReadbackBuffer::new(device, LEVELS_READBACK, u64::from(CAPACITY) * 4).expect("a buffer"));
    let shared = Arc::clone(&readback);
    let add_readback: renderer::AddPasses = Box::new(move |graph| {
        graph.import_buffer(LEVELS_READBACK, shared.shared());
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, BufferReadbackPass::new(OBJECT_LOD_LEVELS, LEVELS_READBACK))
    });
    let setup = RenderSetup {
        shadows: true,
        backend: CullingBackend::Gpu,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: CAPACITY,
        meshes: library,
        clear_color: [0.1, 0.2, 0.3, 1.0],
        bits: BitsReadback::Wait,
        passes: vec![add_readback],
    };
    let mut app = runtime::App::with_threads(1);
    animation::install(&mut app);
    let (target, capture): (HeadlessTarget, SharedCapture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    app.resource_mut::<ecs::RenderSettings>().gpu_lod_selection = gpu_lod;
    app.resource_mut::<ecs::RenderSettings>().batch_draws = batch_draws;
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), camera_at(0));
    let bars = spawn_bars(&mut app, &model, &chain, cube);
    let mut run = Run { images: Vec::new(), levels: Vec::new(), histograms: Vec::new(), bent_joints: Vec::new() };
    for frame in 0..FRAMES {
        *app.world_mut().get::<&mut Transform>(camera).expect("the camera") = camera_at(frame);
        for (index, &bar) in bars.iter().enumerate() {
            app.world_mut().get::<&mut AnimationPlayer>(bar).expect("a player").time = clip_time(index, frame);
        }
        app.run_frame();
        device.wait_idle().expect("the GPU finishes");
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
        run.histograms.push(report.gpu.as_ref().expect("GPU culling").lod_levels);
        assert!(report.shadows.draws() > 0, "frame {frame}: the bars cast shadows");
        let words = readback.read_u32().expect("the levels");
        let visibility = app.resource::<Visibility>();
        let levels = bars
            .iter()
            .map(|&bar| {
                let slot = visibility.slot_of(bar).expect("a bar has a slot") as usize;
                (visibility.objects().draws[slot].mesh.0 - chain.start, words[slot])
            })
            .collect();
        run.levels.push(levels);
        let palette = app.resource::<animation::SkinPalette>();
        let bent = palette.matrices().iter().filter(|&&matrix| matrix != animation::SkinMatrix::IDENTITY).count();
        run.bent_joints.push(bent);
        run.images.push(lock_capture(&capture).pixels.clone());
    }
    run
}

/// The state word of `lod_table.h` for the scene's first chain and `level`.
fn state_word(level: u32) -> u32 {
    (1 << 3) | level
}

#[test]
fn gpu_lod_skinned_levels_equal_the_cpu_rule_and_the_frames_the_cpu_levels() {
    let Some(device) = gpu_test_context() else { return };
    let cpu_levels = run(&device, false, true);
    let mut seen = [0u32; 3];
    for batch_draws in [true, false] {
        let gpu_levels = run(&device, true, batch_draws);
        for (frame, levels) in gpu_levels.levels.iter().enumerate() {
            for (bar, &(cpu, gpu)) in levels.iter().enumerate() {
                assert_eq!(
                    gpu,
                    state_word(cpu),
                    "frame {frame}, bar {bar} (batched {batch_draws}): the GPU keeps {gpu:#x}, the CPU chose level {cpu}"
                );
                seen[cpu as usize] += 1;
            }
        }
        for (frame, (gpu, cpu)) in gpu_levels.images.iter().zip(&cpu_levels.images).enumerate() {
            let differing = gpu.chunks_exact(4).zip(cpu.chunks_exact(4)).filter(|(a, b)| a != b).count();
            assert_eq!(
                differing, 0,
                "frame {frame} (batched {batch_draws}): the GPU's levels changed {differing} pixels"
            );
        }
        let drawn: Vec<u32> =
            (0..3).map(|level| gpu_levels.histograms.iter().map(|counts| counts[level]).sum()).collect();
        assert!(drawn.iter().all(|&count| count > 0), "the GPU drew every level somewhere: {drawn:?}");
    }
    assert!(seen.iter().all(|&count| count > 0), "the CPU chose every level somewhere: {seen:?}");
    // The records' levels are the CPU's: with the selection off the GPU counts every drawn
    // object at level 0, so the frames above compare two different paths.
    let chosen_by_gpu: u32 = cpu_levels.histograms.iter().map(|levels| levels[1..].iter().sum::<u32>()).sum();
    assert_eq!(chosen_by_gpu, 0, "with the selection off the GPU draws the records' levels");
    // The frames are posed: most bars bend their knee (a clip time of 0 is the bind pose).
    assert!(
        cpu_levels.bent_joints.iter().all(|&bent| bent >= ACROSS * ROWS / 2),
        "the bars are bent: {:?}",
        cpu_levels.bent_joints
    );
    assert_no_validation_messages(&device);
}

/// A chain whose levels as drawn mix skinned and rigid meshes (here a rigid cube as the last
/// level; a skinned level drawn by its placeholder box while it streams in is the same case)
/// is held at the record's level: the GPU would skin the rigid level's zero influences (every
/// vertex to a point) or draw a skinned level unposed. A chain of skinned levels alone, or of
/// rigid ones alone, is chosen on the GPU.
#[test]
fn gpu_lod_skinned_chains_mixing_skinned_and_rigid_levels_keep_the_record_level() {
    let Some(device) = gpu_test_context() else { return };
    let (library, _, chain, cube) = library();
    let mut scene = renderer::GpuScene::new(&device, library, 4).expect("a scene");
    let rule_of = |scene: &renderer::GpuScene, columns: [u32; 2]| {
        let entries = &scene.lod_entries()[columns[0] as usize..(columns[0] + columns[1]) as usize];
        assert!(entries.iter().all(|entry| entry.rule == entries[0].rule), "one rule per chain");
        entries[0].rule
    };
    let skinned = [chain.start, chain.start + 1, chain.start + 2];
    let columns = scene.lod_chain_columns(&skinned, &ERRORS, 0).expect("a chain");
    assert_eq!(rule_of(&scene, columns), renderer::LOD_RULE_ERROR, "skinned levels alone: the GPU chooses");
    let mixed = [chain.start, chain.start + 1, cube];
    let columns = scene.lod_chain_columns(&mixed, &ERRORS, 0).expect("a chain");
    assert_eq!(rule_of(&scene, columns), renderer::LOD_RULE_RECORD, "skinned and rigid: the record's level");
    let rigid = [cube, cube, cube];
    let columns = scene.lod_chain_columns(&rigid, &ERRORS, 0).expect("a chain");
    assert_eq!(rule_of(&scene, columns), renderer::LOD_RULE_ERROR, "rigid levels alone: the GPU chooses");

    // A far bar of each chain: the GPU's cull keeps a level of the skinned chain (the coarsest)
    // as the slot's state, and none of the mixed one, whose record's range it draws.
    let skinned = scene.lod_chain_columns(&skinned, &ERRORS, 0).expect("the chain");
    let mixed = scene.lod_chain_columns(&mixed, &ERRORS, 0).expect("the chain");
    for (index, columns) in [skinned, mixed].into_iter().enumerate() {
        let world = glam::Mat4::from_translation(Vec3::new(index as f32 - 0.5, -1.0, -30.0)).to_cols_array_2d();
        let slot =
            scene.push_object(renderer::ObjectDesc { world, color: 0xff80_8080, mesh: chain.start, material: 0 });
        let slot = slot.expect("room");
        let record = renderer::ObjectRecord { reserved: columns, ..*scene.record(slot).expect("slot") };
        let transform = *scene.transform(slot).expect("slot");
        scene.set_parts(slot, transform, record).expect("slot");
    }
    let projection = glam::Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 1.0, 0.1);
    let lod = culling::LodErrorView::new(&projection, HEIGHT as f32, 1.0, 0.2);
    scene.set_lod_view(Some((lod, Vec3::ZERO)), true);
    let scene = scene.into_shared();
    let extent = vk::Extent2D { width: HEIGHT, height: HEIGHT };
    let mut graph = render_graph::RenderGraph::new(Arc::clone(&device), extent).expect("a graph");
    let settings = Arc::new(std::sync::Mutex::new(renderer::GpuCullSettings::default()));
    let options = renderer::ScenePassOptions::default();
    renderer::add_gpu_culled_scene_passes(&mut graph, &scene, &options, &settings, false).expect("passes");
    let readback = ReadbackBuffer::new(&device, LEVELS_READBACK, 16).expect("a buffer");
    graph.import_buffer(LEVELS_READBACK, readback.shared());
    graph.add_typed_pass(BufferReadbackPass::new(OBJECT_LOD_LEVELS, LEVELS_READBACK));
    graph.set_param(renderer::FrameView::from_view_projection(projection));
    graph.execute_frame().expect("a frame");
    graph.wait_idle().expect("idle");
    let states = readback.read_u32().expect("the states");
    assert_eq!(states[0], (1 << 3) | 2, "the skinned chain's far bar: its coarsest level");
    assert_eq!(states[1], 0, "the mixed chain's bar: no level chosen, the record's drawn");
    drop(graph);
    assert_no_validation_messages(&device);
}

/// Bars of the skinned chain seen by two cameras, each in one half of the window, on both
/// culling backends: the near camera and the far one pick different levels for some bars,
/// and each half equals its truth (the reference drawing that view's levels, skinned in the
/// frame's pose), with nothing hidden that is visible.
#[test]
fn gpu_lod_skinned_split_screen_views_draw_their_own_levels_posed() {
    let Some(device) = gpu_test_context() else { return };
    let (library, ..) = library();
    let reference = ReferenceRenderer::with_device(Arc::clone(&device), WIDTH * 2, HEIGHT, CAPACITY, library, SKY);
    let mut reference = reference.expect("a reference");
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        check_split(&device, backend, &mut reference);
    }
    assert_no_validation_messages(&device);
}

const SKY: [f32; 4] = [0.1, 0.2, 0.3, 1.0];

/// The split frames of [`gpu_lod_skinned_split_screen_views_draw_their_own_levels_posed`].
fn check_split(device: &Arc<GpuDevice>, backend: CullingBackend, reference: &mut ReferenceRenderer) {
    let (library, model, chain, cube) = library();
    let mut app = runtime::App::with_threads(1);
    app.insert_resource(ecs::Viewport { width: WIDTH * 2, height: HEIGHT });
    ecs::install(&mut app);
    animation::install(&mut app);
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH * 2, height: HEIGHT },
        capacity: CAPACITY,
        meshes: library,
        clear_color: SKY,
        bits: BitsReadback::Wait,
        passes: Vec::new(),
        shadows: false,
    };
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    let bars = spawn_bars(&mut app, &model, &chain, cube);
    let world = app.world_mut();
    let near = scene::spawn_camera(world, Camera::default(), camera_at(1));
    let far = scene::spawn_camera(world, Camera { order: 1, ..Camera::default() }, camera_at(0));
    world.insert_one(near, CameraRect::new(0.0, 0.0, 0.5, 1.0)).expect("a camera");
    world.insert_one(far, CameraRect::new(0.5, 0.0, 0.5, 1.0)).expect("a camera");
    let mut levels_apart = 0;
    for frame in 0..4 {
        for (index, &bar) in bars.iter().enumerate() {
            app.world_mut().get::<&mut AnimationPlayer>(bar).expect("a player").time = clip_time(index, frame);
        }
        app.run_frame();
        renderer::FrameInFlight::finish(&mut app);
        let capture = lock_capture(&capture);
        let report = app.resource::<RenderReport>();
        let label = format!("{backend:?} frame {frame}");
        assert_eq!(report.error, None, "{label}");
        reference.set_palette(&app.resource::<animation::SkinPalette>()).expect("the reference takes the palette");
        let views = app.resource::<ResolvedViews>();
        let visibility = app.resource::<Visibility>();
        assert_eq!(views.len(), 2, "{label}: two views");
        for view in views.views() {
            let ViewTarget::Window(rect) = &view.target else { panic!("{label}: a window view") };
            let rect = [rect.x, rect.y, rect.width, rect.height];
            let index = usize::from(views.main() != Some(view.id));
            let answer = visibility.for_view(view.id).expect("an answer per view");
            let draws = &visibility.objects().draws;
            levels_apart += answer
                .visible()
                .iter()
                .enumerate()
                .filter(|&(at, &slot)| answer.draw(at) != draws[slot as usize].mesh)
                .count();
            let image = (&capture.pixels[..], capture.extent);
            let checked = if backend == CullingBackend::Gpu {
                check_gpu_view(reference, image, rect, (app.world(), &visibility), (view.id, index), &report)
            } else {
                check_view(reference, image, rect, app.world(), &visibility, view.id)
            };
            let checked = checked.expect("the truth answers");
            let label = format!("{label} view {}", view.id.0);
            assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
            assert_eq!(checked.differing_pixels, 0, "{label}: the view's levels, posed, drawn again, are the frame");
        }
    }
    assert!(levels_apart > 0, "{backend:?}: the far view draws other levels than the near one for some bars");
}
