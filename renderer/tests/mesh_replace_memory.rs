//! A mesh replaced many times while frames run, on lavapipe with validation: every frame
//! draws the data last made resident (the image equals that of a scene installed with it),
//! the GPU holds one copy of the mesh once a replacement stands for it (the ranges of the
//! copies it replaced, vertices and box included, are given to the next ones: the mesh bytes
//! return to the same value each round and the buffers stop growing), and removing the mesh
//! gives back everything it and its replacements held.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, ReadbackBuffer, RenderGraph};
use renderer::{
    add_scene_passes, lock_scene, FrameView, GpuScene, MeshLibrary, MeshVertices, ObjectDesc, ScenePassOptions,
    SharedScene,
};

const EXTENT: vk::Extent2D = vk::Extent2D { width: 64, height: 48 };

/// One shape of the mesh: positions, normals, the fine and the coarse level's indices.
struct Shape {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    fine: Vec<u32>,
    coarse: Vec<u32>,
}

/// Two shapes of one mesh (same vertex and index counts): a sphere and a squashed sphere,
/// each with a fine and a coarse level.
fn shapes() -> [Shape; 2] {
    let sphere = ecs::scene::uv_sphere(16);
    let coarse = sphere.indices[..sphere.indices.len() / 2].to_vec();
    let squashed = sphere.positions.iter().map(|&[x, y, z]| [0.8 * x, 0.4 * y, 0.8 * z]).collect();
    [
        Shape {
            positions: sphere.positions.clone(),
            normals: sphere.normals.clone(),
            fine: sphere.indices.clone(),
            coarse: coarse.clone(),
        },
        Shape { positions: squashed, normals: sphere.normals, fine: sphere.indices, coarse },
    ]
}

/// A frame of `scene` with its one object drawing `mesh`; returns the image.
fn frame(
    graph: &mut RenderGraph,
    scene: &SharedScene,
    color: &ReadbackBuffer,
    mesh: u32,
    generation: &mut u64,
) -> Vec<u8> {
    {
        let mut scene = lock_scene(scene);
        let world = Mat4::from_scale(Vec3::splat(1.5)).to_cols_array_2d();
        scene.set_object(0, ObjectDesc { world, color: 0xff40_a0e0, mesh, material: 0 }).expect("a known mesh");
        scene.draw_all_objects();
        scene.follow_growth(graph, generation);
    }
    let view = Mat4::perspective_infinite_reverse_rh(1.0, 4.0 / 3.0, 0.1)
        * Mat4::look_at_rh(Vec3::new(1.0, 2.0, 5.0), Vec3::ZERO, Vec3::Y);
    graph.set_param(FrameView::from_view_projection(view));
    graph.execute_frame().expect("a frame");
    graph.wait_idle().expect("idle");
    color.read().expect("read").to_vec()
}

/// A scene of `library` with one object, its graph and its colour readback.
fn scene_of(device: &Arc<render_graph::GpuDevice>, library: MeshLibrary) -> (SharedScene, RenderGraph, ReadbackBuffer) {
    let mut scene = GpuScene::new(device, library, 4).expect("a scene");
    let desc = ObjectDesc { world: Mat4::IDENTITY.to_cols_array_2d(), color: 0, mesh: 0, material: 0 };
    scene.push_object(desc).expect("room");
    let scene = scene.into_shared();
    let mut graph = RenderGraph::new(Arc::clone(device), EXTENT).expect("a graph");
    let color = add_scene_passes(&mut graph, &scene, &ScenePassOptions::default()).expect("passes").expect("readback");
    (scene, graph, color)
}

#[test]
fn a_mesh_replaced_many_times_keeps_one_copy_on_the_gpu() {
    let Some(device) = gpu_test_context() else { return };
    let shapes = shapes();
    let vertices =
        |shape: usize| MeshVertices { positions: &shapes[shape].positions, normals: &shapes[shape].normals, uvs: &[] };
    let levels = |shape: usize| [(&shapes[shape].fine[..], &[][..]), (&shapes[shape].coarse[..], &[][..])];
    // The truth: both shapes installed (mesh 1 and 3 are their fine levels).
    let mut installed = MeshLibrary::with_unit_cube();
    for shape in 0..2 {
        installed.add_mesh_levels(vertices(shape), &levels(shape)).expect("a mesh");
    }
    let (truth, mut truth_graph, truth_color) = scene_of(&device, installed);
    let mut truth_generation = 0;
    let (scene, mut graph, color) = scene_of(&device, MeshLibrary::with_unit_cube());
    let mut generation = 0;
    let install_bytes = lock_scene(&scene).residency_report().mesh_bytes;
    let ids = lock_scene(&scene).add_mesh_levels(vertices(0), &levels(0)).expect("the sphere");
    let mut per_round = Vec::new();
    let mut buffer_bytes = Vec::new();
    for round in 0..24usize {
        let shape = round % 2;
        if round > 0 {
            let mut scene = lock_scene(&scene);
            scene.replace_mesh_levels(ids.start, vertices(shape), &levels(shape)).expect("the same levels");
        }
        // The whole budget: the replacement is resident in this frame, drawn under the old id.
        let drawn = {
            let mut scene = lock_scene(&scene);
            scene.stream_frame(u64::MAX).expect("streams");
            scene.drawn_mesh(ids.start).expect("resident")
        };
        let image = frame(&mut graph, &scene, &color, drawn, &mut generation);
        let expected = frame(&mut truth_graph, &truth, &truth_color, 1 + 2 * shape as u32, &mut truth_generation);
        let differing = image.chunks_exact(4).zip(expected.chunks_exact(4)).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 0, "round {round}: the shape last made resident is drawn");
        // The freed ranges go back to their allocators once the frames in flight that may
        // read them have finished (until then they count).
        for _ in 0..=render_graph::FRAMES_IN_FLIGHT {
            frame(&mut graph, &scene, &color, drawn, &mut generation);
        }
        let scene = lock_scene(&scene);
        per_round.push(scene.residency_report().mesh_bytes);
        buffer_bytes.push(scene.mesh_buffer_bytes());
    }
    assert!(per_round.windows(2).all(|pair| pair[0] == pair[1]), "one copy each round: {per_round:?}");
    assert!(buffer_bytes[4..].windows(2).all(|pair| pair[0] == pair[1]), "the buffers stop growing: {buffer_bytes:?}");
    lock_scene(&scene).remove_mesh(ids.start).expect("removed");
    // The object draws the cube now; the frames in flight finish.
    for _ in 0..=render_graph::FRAMES_IN_FLIGHT {
        frame(&mut graph, &scene, &color, 0, &mut generation);
    }
    assert_eq!(lock_scene(&scene).residency_report().mesh_bytes, install_bytes, "the removal gives everything back");
    assert_no_validation_messages(&device);
}
