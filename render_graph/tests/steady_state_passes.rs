//! The standard passes allocate nothing on the Rust heap per frame once warm, while the
//! renderer changes the camera, the draw list and one object each frame (driver and layer
//! allocations are outside Rust's allocator and not counted).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use render_graph::passes::{self, add_scene_passes, lock_scene, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, RenderGraph};

/// Counts allocations made while `COUNTING` is set.
struct CountingAllocator;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to the system allocator with the same arguments; counting
// touches only atomics.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `pointer` came from `System.alloc` with `layout`.
        unsafe { System.dealloc(pointer, layout) }
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::realloc`'s contract.
        unsafe { System.realloc(pointer, layout, new_size) }
    }
}

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
            .push_object(ObjectDesc { world, color: passes::pack_rgba8(200, 10, 10, 255), mesh: 0, material: 0 })
            .unwrap();
    }
    let scene = scene.into_shared();
    let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 32, height: 32 }).expect("graph");
    let readback = add_scene_passes(&mut graph, &scene, &ScenePassOptions::default()).expect("passes");
    let mut list = Vec::with_capacity(OBJECTS as usize);
    let mut run_frame = |frame: u32| {
        {
            let mut scene = lock_scene(&scene);
            let offset = frame as f32 * 0.01;
            scene.set_view_projection(translation(offset, 0.0, 0.0));
            list.clear();
            list.extend((0..OBJECTS).filter(|index| (index + frame) % 3 != 0));
            scene.set_draw_list(&list).expect("valid list");
            let moved = frame % OBJECTS;
            let world = translation(moved as f32 * 0.1 - 5.0, offset, -10.0);
            let color = passes::pack_rgba8(200, 10, 10, 255);
            scene.set_object(moved, ObjectDesc { world, color, mesh: 0, material: 0 }).expect("object exists");
        }
        graph.execute_frame().expect("frame runs");
    };
    for frame in 0..4 {
        run_frame(frame);
    }
    COUNTING.store(true, Ordering::SeqCst);
    for frame in 4..20 {
        run_frame(frame);
    }
    COUNTING.store(false, Ordering::SeqCst);
    let allocations = ALLOCATIONS.load(Ordering::SeqCst);
    graph.wait_idle().expect("wait");
    let report = lock_scene(&scene).last_upload();
    assert_eq!((report.bytes, report.regions), (passes::OBJECT_RECORD_BYTES, 1), "one moved object per frame");
    assert!(readback.is_some());
    assert_eq!(allocations, 0, "16 changing frames allocated {allocations} times on the Rust heap");
    drop(graph);
    assert_no_validation_messages(&device);
}
