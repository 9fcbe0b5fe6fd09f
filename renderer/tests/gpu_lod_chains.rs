//! The table of LOD chains grows past its first buffer's room ([`LOD_CHAINS_AT_FIRST`]
//! chains), on lavapipe with validation: a scene whose objects each name a chain of their
//! own (the same three meshes, errors of their own) keeps adding chains while frames run,
//! past the first room, the graph following the scene's growth; after every frame each
//! slot's state the GPU keeps (`object_lod_levels`) is the CPU rule's level for that object's
//! chain, the newest chains' objects included.

use std::sync::{Arc, Mutex};

use culling::{lod_box_distance_sq, lod_scale_sq, select_lod_by_error, LodErrorView};
use glam::{Mat4, Vec3};
use meshes::{MeshVertices, UNIT_CUBE_INDICES, UNIT_CUBE_POSITIONS};
use render_graph::readback::BufferReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, ReadbackBuffer, RenderGraph};
use renderer::{add_gpu_culled_scene_passes, GpuCullSettings, LOD_CHAINS_AT_FIRST, MAX_GPU_LOD_LEVELS};
use renderer::{lock_scene, FrameView, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions, OBJECT_LOD_LEVELS};

/// Objects, one chain each: past the first room.
const OBJECTS: u32 = LOD_CHAINS_AT_FIRST + 100;
/// Objects (and chains) the scene starts with; the others come while frames run.
const FIRST: u32 = 700;
const SIZE: u32 = 64;

/// The unit cube and a chain of three levels of it (meshes 1-3).
fn library() -> MeshLibrary {
    let mut library = MeshLibrary::with_unit_cube();
    let normals = [[0.0, 0.0, 1.0]; 8];
    let vertices = MeshVertices { positions: &UNIT_CUBE_POSITIONS, normals: &normals, uvs: &[] };
    let levels = [&UNIT_CUBE_INDICES[..36], &UNIT_CUBE_INDICES[..24], &UNIT_CUBE_INDICES[..12]];
    let levels: Vec<(&[u32], &[meshes::Meshlet])> = levels.iter().map(|indices| (*indices, &[][..])).collect();
    library.add_mesh_levels(vertices, &levels).expect("a chain");
    library
}

/// Object `index`: its world matrix and its chain's errors (its own, so its own chain).
fn object(index: u32) -> (Mat4, [f32; 3]) {
    let (column, row) = ((index % 40) as f32, (index / 40) as f32);
    let world = Mat4::from_translation(Vec3::new(column * 1.5 - 30.0, 0.0, -2.0 - row * 1.5));
    // Far, fine or coarse by turns, and a little apart for each object.
    let coarse = [0.002, 0.3, 3.0][index as usize % 3] * (1.0 + 1e-4 * index as f32);
    (world, [0.0, coarse, coarse * 4.0])
}

/// Adds objects `range` to `scene`, each naming its chain; returns how many chains there are.
fn add_objects(scene: &mut GpuScene, range: std::ops::Range<u32>) -> usize {
    for index in range {
        let (world, errors) = object(index);
        let desc =
            ObjectDesc { world: world.to_cols_array_2d(), color: 0xff00_0000 | (index * 977), mesh: 1, material: 0 };
        let slot = scene.push_object(desc).expect("room");
        let columns = scene.lod_chain_columns(&[1, 2, 3], &errors, 0).expect("every chain goes to the GPU");
        assert_eq!(columns[0], index * MAX_GPU_LOD_LEVELS, "object {index} names a chain of its own");
        let record = renderer::ObjectRecord { reserved: columns, ..*scene.record(slot).expect("slot") };
        let transform = *scene.transform(slot).expect("slot");
        scene.set_parts(slot, transform, record).expect("slot");
    }
    scene.lod_chain_count()
}

#[test]
fn gpu_lod_chains_past_the_first_room_keep_the_cpu_rules_levels() {
    let Some(device) = gpu_test_context() else { return };
    let mut scene = GpuScene::new(&device, library(), OBJECTS).expect("scene");
    assert_eq!(add_objects(&mut scene, 0..FIRST), FIRST as usize);
    assert_eq!(scene.lod_chain_room(), LOD_CHAINS_AT_FIRST, "the first room is enough so far");
    let projection = Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 1.0, 0.1);
    let eye = Vec3::new(0.0, 6.0, 12.0);
    let view = Mat4::look_at_rh(eye, Vec3::new(0.0, 0.0, -20.0), Vec3::Y);
    let lod = LodErrorView::new(&projection, SIZE as f32, 1.0, 0.2);
    // Every object's level is its state (the CPU's full pass), in view or not.
    scene.set_lod_view(Some((lod, eye)), true);
    let scene = scene.into_shared();
    let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: SIZE, height: SIZE }).expect("graph");
    let settings = Arc::new(Mutex::new(GpuCullSettings::default()));
    add_gpu_culled_scene_passes(&mut graph, &scene, &ScenePassOptions::default(), &settings, false).expect("passes");
    let readback = ReadbackBuffer::new(&device, "lod levels readback", u64::from(OBJECTS) * 4).expect("readback");
    graph.import_buffer("lod levels readback", readback.shared());
    graph.add_typed_pass(BufferReadbackPass::new(OBJECT_LOD_LEVELS, "lod levels readback"));
    graph.set_param(FrameView::from_view_projection(projection * view));
    let mut generation = lock_scene(&scene).generation();
    let mut seen = [0u32; 3];
    for (frame, added) in [(0, FIRST..FIRST), (1, FIRST..OBJECTS), (2, OBJECTS..OBJECTS)] {
        {
            let mut scene = lock_scene(&scene);
            add_objects(&mut scene, added);
            scene.follow_growth(&mut graph, &mut generation);
        }
        graph.execute_frame().expect("frame");
        graph.wait_idle().expect("idle");
        let states = readback.read_u32().expect("states");
        let scene = lock_scene(&scene);
        for slot in 0..scene.object_count() {
            let (transform, record) = (scene.transform(slot).unwrap(), scene.record(slot).unwrap());
            let (center, half) = renderer::world_box(transform, record);
            let world = Mat4::from_cols_array_2d(&transform.to_cols());
            let scale = lod_scale_sq([world.x_axis.truncate(), world.y_axis.truncate(), world.z_axis.truncate()]);
            let distance_sq = lod_box_distance_sq(eye, Vec3::from_array(center), Vec3::from_array(half));
            // The eye stands still: last frame's level holds, so a fresh pick is the rule's.
            let level = select_lod_by_error(&object(slot).1, scale, distance_sq, &lod, 0);
            let word = ((slot * MAX_GPU_LOD_LEVELS + 1) << 3) | level;
            assert_eq!(
                states[slot as usize], word,
                "frame {frame}, slot {slot}: the GPU's state, the CPU's level {level}"
            );
            seen[level as usize] += u32::from(slot >= LOD_CHAINS_AT_FIRST);
        }
    }
    assert!(lock_scene(&scene).lod_chain_room() > LOD_CHAINS_AT_FIRST, "the table grew");
    assert!(seen.iter().all(|&count| count > 0), "the newest chains' objects at every level: {seen:?}");
    drop(graph);
    assert_no_validation_messages(&device);
}
