//! The geometry pass lights a processed mesh with the sun from its normals, and still draws a
//! mesh without normals in its exact flat colour (GPU, validated; skipped without a device
//! unless ENGINE_REQUIRE_VULKAN is set).

use std::sync::Arc;

use assets::{add_to_library, process_mesh, MeshData, ProcessOptions};
use glam::{Mat4, Vec3};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, RenderGraph};
use renderer::{add_scene_passes, pack_rgba8, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions};

const SIZE: u32 = 32;

#[test]
fn a_lit_quad_takes_the_sun_and_an_unlit_cube_keeps_its_colour() {
    let Some(device) = gpu_test_context() else { return };
    // A quad facing +y (counter-clockwise seen from above) at the left, the cube at the right.
    let quad = MeshData::new(
        vec![[-1.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 0.0, -1.0]],
        vec![0, 1, 2, 0, 2, 3],
    );
    let processed = process_mesh(&quad, &ProcessOptions::default()).expect("a quad processes");
    let mut library = MeshLibrary::with_unit_cube();
    let placed = add_to_library(&mut library, &processed).expect("the library takes it");
    let mut scene = GpuScene::new(&device, library, 4).expect("scene");
    let color = pack_rgba8(200, 100, 50, 255);
    let left = Mat4::from_translation(Vec3::new(-1.2, 0.0, 0.0)).to_cols_array_2d();
    let right = Mat4::from_translation(Vec3::new(1.2, 0.0, 0.0)).to_cols_array_2d();
    scene.push_object(ObjectDesc { world: left, color, mesh: placed.levels.start, material: 0 }).expect("room");
    scene.push_object(ObjectDesc { world: right, color, mesh: 0, material: 0 }).expect("room");
    // Looking straight down from 6 m, +z towards the bottom of the image.
    let view = Mat4::look_at_rh(Vec3::new(0.0, 6.0, 0.0), Vec3::ZERO, Vec3::NEG_Z);
    let projection = Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 1.0, 0.1);
    scene.draw_all_objects();
    let scene = scene.into_shared();
    let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: SIZE, height: SIZE }).expect("graph");
    graph.set_param(renderer::FrameView::from_view_projection(projection * view));
    let readback =
        add_scene_passes(&mut graph, &scene, &ScenePassOptions::default()).expect("passes").expect("readback");
    graph.execute_frame().expect("frame");
    graph.wait_idle().expect("idle");
    let image = readback.read().expect("readback").to_vec();
    let pixel = |x: u32, y: u32| -> [u8; 4] {
        let start = ((y * SIZE + x) * 4) as usize;
        image[start..start + 4].try_into().expect("four bytes")
    };
    // The sun of geometry.frag.glsl: ambient 0.35, diffuse 0.65 * dot(up, normalize(0.4, 0.9, 0.35)).
    let shade = 0.35 + 0.65 * (0.9 / (0.4_f32 * 0.4 + 0.9 * 0.9 + 0.35 * 0.35).sqrt());
    let lit = pixel(SIZE / 2 - 6, SIZE / 2);
    for (channel, base) in [200.0_f32, 100.0, 50.0].iter().enumerate() {
        let expected = base * shade;
        assert!((f32::from(lit[channel]) - expected).abs() <= 1.0, "lit {lit:?}, channel {channel} ~ {expected}");
    }
    assert_eq!(lit[3], 255);
    assert_eq!(pixel(SIZE / 2 + 6, SIZE / 2), [200, 100, 50, 255], "a mesh without normals is drawn flat");
    drop(graph);
    drop(readback);
    drop(scene);
    assert_no_validation_messages(&device);
}
