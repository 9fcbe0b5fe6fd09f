//! Cluster culling on lavapipe with validation (synchronization included), against truth:
//! for 20 cameras in a generated scene of large closed meshes, the meshlet owning each pixel
//! of an unculled render is never culled (false-hidden 0), the images with and without
//! cluster culling are equal, the GPU keeps everything the CPU reference keeps, and no meshlet
//! the cone rejected has a triangle facing the eye.

use std::sync::Arc;

use culling::cluster::{
    classify_cluster, classify_object, ClusterMargins, ClusterSettings, ClusterVerdict, ClusterView, HiZLevels,
    ObjectVerdict,
};
use glam::{DVec3, Mat4, Vec3};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, RenderGraph};
use renderer::{add_cluster_culled_scene_passes, reduce_depth_pyramid, ClusterReadbacks, ClusterTable};
use renderer::{add_scene_passes, lock_scene, ScenePassOptions, SharedScene};
use tests::cluster_scene::scenes;
use tests::offscreen::object_of;

const EXTENT: vk::Extent2D = vk::Extent2D { width: 128, height: 80 };

/// Street-level and raised cameras walking around the blocks, turning (cuts included).
fn cameras() -> Vec<(Vec3, Mat4)> {
    let projection = Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 128.0 / 80.0, 0.1);
    (0..20)
        .map(|camera| {
            let angle = camera as f32 * 0.7;
            let height = if camera % 4 == 3 { 30.0 } else { 1.7 + (camera % 3) as f32 };
            let eye = Vec3::new(angle.cos() * 30.0 + 3.0, height, angle.sin() * 30.0 - 2.0);
            let target =
                eye + Vec3::new((angle * 2.3).sin(), if height > 20.0 { -0.6 } else { -0.05 }, (angle * 2.3).cos());
            (eye, projection * Mat4::look_at_rh(eye, target, Vec3::Y))
        })
        .collect()
}

/// Whether a triangle of the library faces `eye` (mesh space, f64).
fn faces_eye(positions: &[[f32; 4]], triangle: [usize; 3], eye: DVec3) -> bool {
    let [a, b, c] = triangle.map(|vertex| {
        let [x, y, z, _] = positions[vertex];
        DVec3::new(f64::from(x), f64::from(y), f64::from(z))
    });
    (b - a).cross(c - a).dot(eye - a) > 0.0
}

/// The CPU reference's verdict on every pair, from this frame's early depth.
fn cpu_verdicts(
    scene: &SharedScene,
    table: &ClusterTable,
    view_projection: Mat4,
    depth: &[f32],
) -> Vec<ClusterVerdict> {
    let mips = reduce_depth_pyramid(depth, EXTENT.width as usize, EXTENT.height as usize);
    let hiz = HiZLevels { width: EXTENT.width, height: EXTENT.height, mips: &mips };
    let view = ClusterView::new(view_projection);
    let settings = ClusterSettings::default();
    let margins = ClusterMargins::NONE;
    let scene = lock_scene(scene);
    (0..table.pair_count())
        .map(|pair| {
            let (object, meshlet) = table.pair(pair).expect("pair in range");
            let record = scene.record(object).expect("object in range");
            let transform = scene.transform(object).expect("object in range");
            let world = Mat4::from_cols_array_2d(&transform.to_cols());
            let (center, half) = renderer::world_box(transform, record);
            let (min, max) = (Vec3::from(center) - Vec3::from(half), Vec3::from(center) + Vec3::from(half));
            let meshlet = meshlet.expect("every generated mesh has meshlets");
            match classify_object(&view, min, max, Some(&hiz), settings, margins) {
                ObjectVerdict::Frustum => ClusterVerdict::Frustum,
                ObjectVerdict::Occluded => ClusterVerdict::Occluded,
                ObjectVerdict::Visible => {
                    classify_cluster(&view, &world, &meshlet.bounds(), Some(&hiz), settings, margins)
                }
            }
        })
        .collect()
}

#[test]
fn twenty_cameras_over_large_closed_meshes_hide_no_meshlet_that_owns_a_pixel() {
    let Some(device) = gpu_test_context() else { return };
    let options = ScenePassOptions { clear_color: [0.0, 0.0, 0.0, 1.0], ..ScenePassOptions::default() };
    let (scene, truth) = scenes(&device).expect("scenes");
    let (reference, _) = scenes(&device).expect("scenes");
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph");
    let readbacks = ClusterReadbacks { color: true, verdicts: true, early_depth: true };
    let culled = add_cluster_culled_scene_passes(&mut graph, &scene, &options, ClusterSettings::default(), readbacks)
        .expect("passes");
    let mut truth_graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph");
    let truth_color = add_scene_passes(&mut truth_graph, &truth, &options).expect("passes").expect("readback");
    let mut reference_graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph");
    let reference_color =
        add_scene_passes(&mut reference_graph, &reference, &options).expect("passes").expect("readback");
    let table = &culled.table;
    assert_eq!(lock_scene(&truth).object_count(), table.pair_count(), "one truth object per pair");
    let library_positions = lock_scene(&scene).meshes().positions().to_vec();
    let library_indices = lock_scene(&scene).meshes().indices().to_vec();

    let (mut cone_rejects, mut occlusion_rejects, mut saved) = (0u32, 0u32, 0.0f64);
    let mut verdicts = Vec::new();
    let (mut agree, mut compared) = (0usize, 0usize);
    for (camera, (eye, view_projection)) in cameras().into_iter().enumerate() {
        for graph in [&mut graph, &mut truth_graph, &mut reference_graph] {
            graph.set_param(renderer::FrameView::from_view_projection(view_projection));
            graph.execute_frame().expect("frame");
            graph.wait_idle().expect("idle");
        }
        culled.read_verdicts(&mut verdicts).expect("verdicts");
        let stats = culled.read_stats().expect("stats");
        cone_rejects += stats.cone_rejected;
        occlusion_rejects += stats.occlusion_rejected;
        saved += stats.triangle_saving();

        // 1. Truth: every pair that owns a pixel is drawn-visible (false-hidden 0).
        let truth_image = truth_color.read().expect("truth image").to_vec();
        let mut false_hidden = Vec::new();
        for texel in truth_image.chunks_exact(4) {
            let Some(pair) = object_of(texel.try_into().expect("4 bytes")) else { continue };
            if !culled.read_bit(pair).expect("bits") {
                false_hidden.push((pair, verdicts[pair as usize]));
            }
        }
        assert!(
            false_hidden.is_empty(),
            "camera {camera}: pixels of meshlets culled: {:?}",
            &false_hidden[..false_hidden.len().min(8)]
        );

        // 2. The images with and without cluster culling are equal.
        let image = culled.color.as_ref().expect("colour").read().expect("image").to_vec();
        let expected = reference_color.read().expect("image").to_vec();
        let differing = image.chunks_exact(4).zip(expected.chunks_exact(4)).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 0, "camera {camera}: culled and unculled images differ in {differing} pixels");

        // 3. The GPU keeps everything the CPU reference keeps, and rejects for the same reason.
        let depth: Vec<f32> = culled
            .early_depth
            .as_ref()
            .expect("early depth")
            .read()
            .expect("depth")
            .chunks_exact(4)
            .map(|texel| f32::from_le_bytes(texel.try_into().expect("4 bytes")))
            .collect();
        let reference_verdicts = cpu_verdicts(&scene, table, view_projection, &depth);
        for (pair, (&gpu, &cpu)) in verdicts.iter().zip(&reference_verdicts).enumerate() {
            assert!(gpu != ClusterVerdict::Untested, "camera {camera}: pair {pair} was not classified");
            if cpu.is_drawn() || !gpu.is_drawn() {
                assert!(gpu.is_drawn() || gpu == cpu, "camera {camera}: pair {pair}: GPU {gpu:?}, CPU {cpu:?}");
            }
            agree += usize::from(gpu == cpu);
            compared += 1;
        }

        // 4. No meshlet the cone rejected has a triangle facing the eye (f64, mesh space).
        let scene_guard = lock_scene(&scene);
        for (pair, verdict) in verdicts.iter().enumerate() {
            if *verdict != ClusterVerdict::BackFacing {
                continue;
            }
            let (object, meshlet) = table.pair(pair as u32).expect("pair");
            let meshlet = meshlet.expect("meshlet");
            let record = scene_guard.record(object).expect("object");
            let transform = scene_guard.transform(object).expect("object");
            let world = Mat4::from_cols_array_2d(&transform.to_cols()).as_dmat4();
            let local_eye = world.inverse().transform_point3(eye.as_dvec3());
            let first = record.first_index + meshlet.first_index;
            let range = first as usize..(first + meshlet.index_count) as usize;
            for triangle in library_indices[range].chunks_exact(3) {
                let vertices = [0, 1, 2].map(|corner| (record.vertex_offset + triangle[corner] as i32) as usize);
                assert!(
                    !faces_eye(&library_positions, vertices, local_eye),
                    "camera {camera}: pair {pair} was cone-rejected with a triangle facing the eye"
                );
            }
        }
    }
    assert!(
        cone_rejects > 0 && occlusion_rejects > 0,
        "cone {cone_rejects}, occlusion {occlusion_rejects} rejects over 20 cameras"
    );
    assert!(agree * 100 >= compared * 95, "GPU and CPU verdicts agree on {agree} of {compared} pairs");
    println!("cone rejects {cone_rejects}, occlusion rejects {occlusion_rejects}, mean triangle saving {:.1}%, exact agreement {agree}/{compared}", saved * 5.0);
    drop(graph);
    drop(truth_graph);
    drop(reference_graph);
    assert_no_validation_messages(&device);
}
