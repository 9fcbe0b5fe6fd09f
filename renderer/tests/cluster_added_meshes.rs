//! Meshes added while frames run, culled meshlet by meshlet, on lavapipe with validation: a
//! cluster-culled scene installed with one mesh gets two more while it draws (each with its
//! meshlets, placed wherever the GPU buffers have room), its objects move between the meshes,
//! and every frame's image equals the unculled image of the same objects drawn from a
//! library that held every mesh from the start. The host never refreshes the cluster tables
//! itself: following the scene's growth between frames does, so every frame culls every
//! object meshlet by meshlet (none drawn whole), the counters count the added meshes'
//! meshlets, and the graph compiles again only on frames whose objects changed mesh.
//!
//! Meshes arriving frame after frame (a loader's) recompile the graph a bounded number of
//! times: the tables are refreshed at most once per `GpuScene::set_cluster_refresh_frames`
//! frames, the objects of meshes not in them yet drawn whole meanwhile, every image still the
//! unculled one.

use std::sync::Arc;

use culling::cluster::{ClusterSettings, ClusterStats};
use glam::{Mat4, Vec3};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice, ReadbackBuffer, RenderGraph};
use renderer::{
    add_cluster_culled_scene_passes, add_scene_passes, lock_scene, ClusterCulledScene, ClusterReadbacks, FrameView,
    GpuScene, MeshLibrary, MeshVertices, Meshlet, ObjectDesc, ScenePassOptions, SharedScene,
};

/// The meshlet cones' weight these shapes are built with.
const CONE_WEIGHT: f32 = 0.25;

const EXTENT: vk::Extent2D = vk::Extent2D { width: 96, height: 64 };

/// A closed mesh with its meshlets.
struct Shape {
    geometry: ecs::scene::Geometry,
    ordered: Vec<u32>,
    meshlets: Vec<Meshlet>,
}

impl Shape {
    fn new(geometry: ecs::scene::Geometry) -> Shape {
        let (ordered, meshlets) = assets::meshlets_in_order(&geometry.positions, &geometry.indices, CONE_WEIGHT);
        Shape { geometry, ordered, meshlets }
    }

    fn vertices(&self) -> MeshVertices<'_> {
        MeshVertices { positions: &self.geometry.positions, normals: &self.geometry.normals, uvs: &[] }
    }
}

/// The installed box, then the two meshes the game adds.
fn shapes() -> [Shape; 3] {
    [ecs::scene::subdivided_box(6), ecs::scene::uv_sphere(24), ecs::scene::uv_sphere(12)].map(Shape::new)
}

/// The objects of frame `frame`: the box, and two objects per added mesh (their shape
/// indices, mapped to mesh ids by the caller), moving between the added meshes.
fn objects(frame: u32, added: usize) -> Vec<(usize, Mat4, u32)> {
    let mut objects = vec![(0, Mat4::from_scale(Vec3::new(3.0, 1.5, 1.5)), 0xff80_8080)];
    for slot in 0..added * 2 {
        let shape = 1 + (slot + frame as usize / 3) % added;
        let x = slot as f32 * 1.6 - 2.4;
        let world = Mat4::from_translation(Vec3::new(x, 1.8 + 0.2 * (slot % 2) as f32, 0.5));
        objects.push((shape, world * Mat4::from_scale(Vec3::splat(0.7)), 0xff20_40c0 + slot as u32 * 0x0030_1000));
    }
    objects
}

fn view(graph: &mut RenderGraph, frame: u32) {
    let projection = Mat4::perspective_infinite_reverse_rh(1.0, 1.5, 0.1);
    let turn = frame as f32 * 0.15;
    let eye = Vec3::new(6.0 * turn.sin(), 2.5, 6.0 * turn.cos());
    graph.set_param(FrameView::from_view_projection(projection * Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y)));
}

/// Sets `scene`'s objects to `objects`, shape `s` drawn as mesh `ids[s]`.
fn set_objects(scene: &mut GpuScene, objects: &[(usize, Mat4, u32)], ids: &[u32]) {
    scene.reserve(objects.len() as u32).expect("the scene grows");
    scene.set_object_count(objects.len() as u32).expect("room");
    for (slot, &(shape, world, color)) in objects.iter().enumerate() {
        let desc = ObjectDesc { world: world.to_cols_array_2d(), color, mesh: ids[shape], material: 0 };
        scene.set_object(slot as u32, desc).expect("a known mesh");
    }
}

/// The unculled image of `objects` from a scene that held every shape from the start.
struct Reference {
    graph: RenderGraph,
    scene: SharedScene,
    color: ReadbackBuffer,
}

impl Reference {
    fn new(device: &Arc<GpuDevice>, shapes: &[Shape]) -> Reference {
        let mut library = MeshLibrary::new();
        for shape in shapes {
            library.add_mesh_levels(shape.vertices(), &[(&shape.ordered, &shape.meshlets)]).expect("a mesh");
        }
        // Room for every object of both tests: the reference does not follow growth.
        let scene = GpuScene::new(device, library, 32).expect("a scene").into_shared();
        let mut graph = RenderGraph::new(Arc::clone(device), EXTENT).expect("a graph");
        let color =
            add_scene_passes(&mut graph, &scene, &ScenePassOptions::default()).expect("passes").expect("a readback");
        Reference { graph, scene, color }
    }

    fn image(&mut self, frame: u32, objects: &[(usize, Mat4, u32)]) -> Vec<u8> {
        {
            let mut scene = lock_scene(&self.scene);
            set_objects(&mut scene, objects, &[0, 1, 2]);
            scene.draw_all_objects();
        }
        view(&mut self.graph, frame);
        self.graph.execute_frame().expect("a reference frame");
        self.graph.wait_idle().expect("idle");
        self.color.read().expect("read").to_vec()
    }
}

/// One cluster-culled frame: its image and counters.
fn culled_frame(graph: &mut RenderGraph, culled: &ClusterCulledScene, frame: u32) -> (Vec<u8>, ClusterStats) {
    view(graph, frame);
    graph.execute_frame().expect("a cluster frame");
    graph.wait_idle().expect("idle");
    let image = culled.color.as_ref().expect("asked for").read().expect("read").to_vec();
    (image, culled.read_stats().expect("counters"))
}

#[test]
fn meshes_added_while_frames_run_are_culled_meshlet_by_meshlet() {
    let Some(device) = gpu_test_context() else { return };
    let shapes = shapes();
    let mut reference = Reference::new(&device, &shapes);
    let mut library = MeshLibrary::new();
    library.add_mesh_levels(shapes[0].vertices(), &[(&shapes[0].ordered, &shapes[0].meshlets)]).expect("the box");
    let scene = GpuScene::new(&device, library, 2).expect("a scene").into_shared();
    set_objects(&mut lock_scene(&scene), &objects(0, 0), &[0]);
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("a graph");
    let readbacks = ClusterReadbacks { color: true, verdicts: false, early_depth: false };
    let culled = add_cluster_culled_scene_passes(
        &mut graph,
        &scene,
        &ScenePassOptions::default(),
        ClusterSettings::default(),
        readbacks,
    )
    .expect("the cluster frame");
    // Every frame whose objects changed mesh refreshes the tables (no throttle).
    lock_scene(&scene).set_cluster_refresh_frames(1);
    let mut generation = lock_scene(&scene).generation();
    let mut ids = vec![0u32];
    let mut compiles_unchanged = 0;
    let mut previous: Option<Vec<usize>> = None;
    // A mesh added and removed at once: its GPU ranges are given again (once the frames
    // that may read them finished) to the next mesh, which so lies elsewhere on the GPU than
    // in the library.
    let decoy = Shape::new(ecs::scene::uv_sphere(32));
    let decoy_id = lock_scene(&scene)
        .add_mesh_levels(decoy.vertices(), &[(&decoy.ordered, &decoy.meshlets)])
        .expect("an added mesh")
        .start;
    lock_scene(&scene).remove_mesh(decoy_id).expect("removed");
    for frame in 0..24u32 {
        let added = match frame {
            0..4 => 0,
            4..12 => 1,
            _ => 2,
        };
        {
            let mut scene = lock_scene(&scene);
            if ids.len() <= added {
                let shape = &shapes[added];
                let levels = scene.add_mesh_levels(shape.vertices(), &[(&shape.ordered, &shape.meshlets)]);
                ids.push(levels.expect("an added mesh").start);
            }
            scene.stream_frame(u64::MAX).expect("streams");
            assert!(ids.iter().all(|&id| scene.is_resident(id)), "frame {frame}: the whole budget loads them");
            set_objects(&mut scene, &objects(frame, added), &ids);
            // The only call between frames: the tables follow the records with it.
            scene.follow_growth(&mut graph, &mut generation);
        }
        let shapes_now: Vec<usize> = objects(frame, added).iter().map(|(shape, ..)| *shape).collect();
        let compiles_before = graph.compile_count();
        let (image, stats) = culled_frame(&mut graph, &culled, frame);
        if previous.as_ref() == Some(&shapes_now) {
            // Nothing named another mesh: the frame runs the compiled graph.
            assert_eq!(graph.compile_count(), compiles_before, "frame {frame}: compiled again for nothing");
            compiles_unchanged += 1;
        }
        previous = Some(shapes_now);
        let expected = reference.image(frame, &objects(frame, added));
        let differing = image.chunks_exact(4).zip(expected.chunks_exact(4)).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 0, "frame {frame} ({added} added): the image is the unculled one");
        let scene = lock_scene(&scene);
        let table = scene.cluster_table().expect("kept");
        let fresh = table.object_count() == scene.object_count()
            && (0..scene.object_count())
                .all(|object| table.built_mesh(object) == Some(scene.records()[object as usize].mesh));
        assert!(fresh, "frame {frame}: the tables follow the objects without a call of the host's");
        let meshlets: usize = objects(frame, added).iter().map(|(shape, ..)| shapes[*shape].meshlets.len()).sum();
        assert_eq!(table.meshlet_pair_count() as usize, meshlets, "frame {frame}: every object in meshlets");
        assert_eq!(stats.meshlets as usize, meshlets, "frame {frame}: the GPU counts them all: {stats:?}");
        assert_eq!(stats.whole_objects, 0, "frame {frame}: nothing drawn whole: {stats:?}");
        assert!(stats.cone_rejected > 0, "frame {frame}: back-facing meshlets are culled: {stats:?}");
    }
    assert!(compiles_unchanged >= 10, "{compiles_unchanged} frames changed nothing and ran the compiled graph");
    let scene = lock_scene(&scene);
    let sphere = scene.cluster_table().expect("kept").meshlets().iter().find(|meshlet| meshlet.mesh == ids[1]);
    assert!(sphere.is_some(), "the added mesh's meshlets are in the table");
    let gpu_first =
        (0..scene.object_count()).map(|object| scene.records()[object as usize]).find(|record| record.mesh == ids[1]);
    let library_first = scene.meshes().range(ids[1]).expect("a mesh").first_index;
    assert_ne!(gpu_first.map(|record| record.first_index), Some(library_first), "placed apart from its library range");
    assert_no_validation_messages(&device);
}

/// The objects of a frame of the arrivals test: the box, and one object per mesh arrived so
/// far, in a row (the reference draws them all with shape 1, the arrivals' shape).
fn arrival_objects(arrived: usize) -> Vec<(usize, Mat4, u32)> {
    let mut objects = vec![(0, Mat4::from_scale(Vec3::new(3.0, 1.5, 1.5)), 0xff80_8080)];
    for slot in 0..arrived {
        let world = Mat4::from_translation(Vec3::new(slot as f32 * 0.7 - 2.6, 1.9, 0.4 + 0.3 * (slot % 3) as f32));
        objects.push((1, world * Mat4::from_scale(Vec3::splat(0.35)), 0xff20_40c0 + slot as u32 * 0x0004_0800));
    }
    objects
}

#[test]
fn meshes_arriving_frame_after_frame_recompile_a_bounded_number_of_times() {
    let Some(device) = gpu_test_context() else { return };
    const ARRIVALS: u32 = 16;
    const REFRESH_FRAMES: u32 = 4;
    let shapes = shapes();
    let mut reference = Reference::new(&device, &shapes);
    let mut library = MeshLibrary::new();
    library.add_mesh_levels(shapes[0].vertices(), &[(&shapes[0].ordered, &shapes[0].meshlets)]).expect("the box");
    // Room for every object from the start: only the cluster tables and the mesh buffers
    // move the generation.
    let scene = GpuScene::new(&device, library, 32).expect("a scene").into_shared();
    set_objects(&mut lock_scene(&scene), &arrival_objects(0), &[0]);
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("a graph");
    let readbacks = ClusterReadbacks { color: true, verdicts: false, early_depth: false };
    let culled = add_cluster_culled_scene_passes(
        &mut graph,
        &scene,
        &ScenePassOptions::default(),
        ClusterSettings::default(),
        readbacks,
    )
    .expect("the cluster frame");
    lock_scene(&scene).set_cluster_refresh_frames(REFRESH_FRAMES);
    let mut generation = lock_scene(&scene).generation();
    // The first frame compiles the graph; count the recompiles of the arrival frames after it.
    culled_frame(&mut graph, &culled, 0);
    let compiles_before = graph.compile_count();
    // Object k draws arrival k, so every arrival changes the objects' meshes.
    let mut ids = vec![0u32];
    let (mut lagging_frames, mut buffer_growths) = (0, 0);
    let frames = ARRIVALS + REFRESH_FRAMES;
    for frame in 1..=frames {
        let arrived = (frame.min(ARRIVALS)) as usize;
        {
            let mut scene = lock_scene(&scene);
            if frame <= ARRIVALS {
                let shape = &shapes[1];
                let levels = scene.add_mesh_levels(shape.vertices(), &[(&shape.ordered, &shape.meshlets)]);
                ids.push(levels.expect("an arrival").start);
            }
            let buffer_bytes = scene.mesh_buffer_bytes();
            scene.stream_frame(u64::MAX).expect("streams");
            // A mesh buffer that grew is imported again: a recompile of its own.
            buffer_growths += u32::from(scene.mesh_buffer_bytes() != buffer_bytes);
            let objects = arrival_objects(arrived);
            scene.reserve(objects.len() as u32).expect("the scene grows");
            scene.set_object_count(objects.len() as u32).expect("room");
            for (slot, &(_, world, color)) in objects.iter().enumerate() {
                let desc = ObjectDesc { world: world.to_cols_array_2d(), color, mesh: ids[slot], material: 0 };
                scene.set_object(slot as u32, desc).expect("an arrived mesh");
            }
            scene.follow_growth(&mut graph, &mut generation);
            // Objects past the tables' are drawn whole by the object pass until they catch up.
            lagging_frames += u32::from(scene.cluster_table().expect("kept").object_count() < scene.object_count());
        }
        let (image, _) = culled_frame(&mut graph, &culled, frame);
        let expected = reference.image(frame, &arrival_objects(arrived));
        let differing = image.chunks_exact(4).zip(expected.chunks_exact(4)).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 0, "frame {frame} ({arrived} arrived): the image is the unculled one");
    }
    let recompiles = graph.compile_count() - compiles_before;
    // One refresh at the first arrival, then at most one per REFRESH_FRAMES frames, and the
    // frames whose mesh buffers grew.
    let bound = 1 + (frames - 1) / REFRESH_FRAMES + buffer_growths;
    assert!(
        recompiles as u32 <= bound,
        "{recompiles} recompiles over {frames} frames of arrivals ({buffer_growths} buffer growths, bound {bound})"
    );
    assert!(recompiles >= 2, "the tables followed the arrivals ({recompiles} recompiles)");
    assert!(lagging_frames > 0, "the tables lagged the arrivals on some frames, their objects drawn whole");
    let scene = lock_scene(&scene);
    let table = scene.cluster_table().expect("kept");
    let fresh =
        (0..scene.object_count()).all(|object| table.built_mesh(object) == Some(scene.records()[object as usize].mesh));
    assert!(fresh, "once the arrivals stopped, the tables caught up within {REFRESH_FRAMES} frames");
    assert_no_validation_messages(&device);
}
