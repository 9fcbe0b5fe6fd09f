//! With the `profile` feature and a running Tracy client, every pass of a frame opens a GPU
//! zone named `graph: pass`, with the pass named as in `GraphStats`, so a capture and the
//! statistics speak of the same passes and two graphs' zones never share a name.
#![cfg(feature = "profile")]

use std::sync::Arc;

use render_graph::testing::gpu_test_context;
use render_graph::{vk, RenderGraph};
use renderer::{add_scene_passes, FrameView, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions};

#[test]
fn gpu_zones_carry_the_pass_names_of_graph_stats() {
    let Some(device) = gpu_test_context() else { return };
    if !device.capabilities().timestamps {
        return;
    }
    let _client = runtime::profiling::tracy_client::Client::start();
    let mut scene = GpuScene::new(&device, MeshLibrary::with_unit_cube(), 4).expect("scene");
    scene
        .push_object(ObjectDesc { world: renderer::IDENTITY, color: 0xff00_00ff, mesh: 0, material: 0 })
        .expect("an object");
    scene.draw_all_objects();
    let scene = scene.into_shared();
    let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 32, height: 32 }).expect("graph");
    graph.set_name("test scene");
    add_scene_passes(&mut graph, &scene, &ScenePassOptions::default()).expect("passes");
    graph.set_param(FrameView::from_view_projection(glam::Mat4::IDENTITY));
    for _ in 0..3 {
        graph.execute_frame().expect("frame");
    }
    graph.wait_idle().expect("idle");
    let stats: Vec<String> = graph.stats().passes.iter().map(|pass| format!("test scene: {}", pass.name)).collect();
    assert!(stats.len() >= 3, "{stats:?}");
    assert_eq!(graph.gpu_zone_names(), stats.as_slice());
}
