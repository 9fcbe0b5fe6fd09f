//! The standard passes allocate nothing on the Rust heap per frame once warm, while the
//! renderer changes the camera, the draw list and one object each frame (driver and layer
//! allocations are outside Rust's allocator and not counted).

use runtime::alloc_counter::{count_allocations, CountingAllocator};
use std::sync::Arc;

use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, RenderGraph};
use renderer::{add_scene_passes, lock_scene, FrameView, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn translation(x: f32, y: f32, z: f32) -> [[f32; 4]; 4] {
    [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [x, y, z, 1.0]]
}

#[test]
fn changing_frames_of_the_standard_passes_allocate_nothing() {
    let Some(device) = gpu_test_context() else { return };
    const OBJECTS: u32 = 100;
    let mut scene = GpuScene::new(&device, MeshLibrary::with_unit_cube(), OBJECTS).expect("scene");
    for index in 0..OBJECTS {
        let world = translation(index as f32 * 0.1 - 5.0, 0.0, -10.0);
        scene
            .push_object(ObjectDesc { world, color: renderer::pack_rgba8(200, 10, 10, 255), mesh: 0, material: 0 })
            .unwrap();
    }
    let scene = scene.into_shared();
    let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 32, height: 32 }).expect("graph");
    let readback = add_scene_passes(&mut graph, &scene, &ScenePassOptions::default()).expect("passes");
    let mut list = Vec::with_capacity(OBJECTS as usize);
    let mut run_frame = |frame: u32| {
        let offset = frame as f32 * 0.01;
        let camera = glam::Mat4::from_cols_array_2d(&translation(offset, 0.0, 0.0));
        graph.set_param(FrameView::from_view_projection(camera));
        {
            let mut scene = lock_scene(&scene);
            list.clear();
            list.extend((0..OBJECTS).filter(|index| !(index + frame).is_multiple_of(3)));
            scene.set_draw_list(&list).expect("valid list");
            let moved = frame % OBJECTS;
            let world = translation(moved as f32 * 0.1 - 5.0, offset, -10.0);
            let color = renderer::pack_rgba8(200, 10, 10, 255);
            scene.set_object(moved, ObjectDesc { world, color, mesh: 0, material: 0 }).expect("object exists");
        }
        graph.execute_frame().expect("frame runs");
    };
    for frame in 0..4 {
        run_frame(frame);
    }
    let ((), allocations) = count_allocations(|| {
        for frame in 4..20 {
            run_frame(frame);
        }
    });
    graph.wait_idle().expect("wait");
    let report = lock_scene(&scene).last_upload();
    assert_eq!((report.transforms, report.records), (1, 0), "one moved object per frame: {report:?}");
    assert_eq!(report.bytes, renderer::OBJECT_TRANSFORM_BYTES + 4, "its transform and slot index");
    assert!(readback.is_some());
    assert_eq!(allocations, 0, "16 changing frames allocated {allocations} times on the Rust heap");
    drop(graph);
    assert_no_validation_messages(&device);
}
