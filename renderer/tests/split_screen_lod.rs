//! Levels of detail by distance in a GPU-culled split-screen frame, on lavapipe with
//! validation: two cameras, each near one group of cubes and far from the other, so each view
//! picks other levels of the same objects. The GPU cull chooses the second view's levels of
//! the distance chains from that view's eye (the main view draws the records' levels, the
//! CPU's pick), so every view's rectangle equals the unculled reference drawn at the levels
//! the CPU picked for that view, and nothing owning a pixel was left out of its bits.

mod headless_app;
mod window_views;

use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{scene, Aabb, Lod, LodLevel, MaterialHandle, Mesh, MeshHandle, ResolvedViews, Transform};
use glam::Vec3;
use headless_app::{headless_app, SKY};
use meshes::{MeshVertices, UNIT_CUBE_INDICES, UNIT_CUBE_POSITIONS};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::GpuDevice;
use renderer::truth::ReferenceRenderer;
use renderer::{lock_capture, FrameInFlight, MeshLibrary, RenderReport};
use window_views::{check_window_views, split_cameras};

const WIDTH: u32 = 128;
const HEIGHT: u32 = 64;
const FRAMES: u64 = 3;

/// The unit cube (mesh 0) and a chain of three levels of it without errors, so chosen by
/// distance (meshes 1-3: the whole cube, four faces, two faces).
fn library() -> MeshLibrary {
    let mut library = MeshLibrary::with_unit_cube();
    let normals = [[0.0, 0.0, 1.0]; 8];
    let vertices = MeshVertices { positions: &UNIT_CUBE_POSITIONS, normals: &normals, uvs: &[] };
    let levels = [&UNIT_CUBE_INDICES[..36], &UNIT_CUBE_INDICES[..24], &UNIT_CUBE_INDICES[..12]];
    let levels: Vec<(&[u32], &[meshes::Meshlet])> = levels.iter().map(|indices| (*indices, &[][..])).collect();
    library.add_mesh_levels(vertices, &levels).expect("a chain");
    library
}

/// The app on the GPU backend, with two groups of cubes of the chain 10 m apart.
fn app(device: &Arc<GpuDevice>) -> (runtime::App, renderer::SharedCapture) {
    let (mut app, capture) = headless_app(device, CullingBackend::Gpu, library(), (WIDTH, HEIGHT, 64), |_| {});
    let bounds = Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5));
    let levels: Arc<[LodLevel]> = [8.0, 16.0, f32::INFINITY]
        .iter()
        .enumerate()
        .map(|(level, &max_distance)| LodLevel { mesh: MeshHandle(level as u32 + 1), max_distance })
        .collect();
    for group in [-5.0f32, 5.0] {
        for index in 0..6 {
            let place = Vec3::new(group + (index % 3) as f32 * 1.8 - 1.8, 0.0, (index / 3) as f32 * 1.8);
            let mut transform = Transform::from_translation(place);
            transform.rotation = glam::Quat::from_rotation_y(0.5 + index as f32 * 0.4);
            let entity =
                scene::spawn_mesh(app.world_mut(), Mesh::new(MeshHandle(1), MaterialHandle(0), bounds), transform);
            let lod = Lod { levels: Arc::clone(&levels), bias: 1.0 };
            app.world_mut().insert_one(entity, lod).expect("spawned");
        }
    }
    (app, capture)
}

#[test]
fn each_window_view_draws_its_own_distance_levels_on_the_gpu() {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, capture) = app(&device);
    // Each eye nearer one group than the other, both groups in both views.
    let left = scene::look_at(Vec3::new(-15.0, 3.0, 9.0), Vec3::ZERO);
    let right = scene::look_at(Vec3::new(15.0, 3.0, 9.0), Vec3::ZERO);
    split_cameras(app.world_mut(), [left, right]);
    let mut reference =
        ReferenceRenderer::with_device(Arc::clone(&device), WIDTH, HEIGHT, 64, library(), SKY).expect("a reference");
    for frame in 0..FRAMES {
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
        assert_eq!(app.resource::<ResolvedViews>().len(), 2);
        drop(report);
        let capture = lock_capture(&capture);
        let checks = check_window_views(&mut reference, &app, (&capture.pixels, capture.extent), CullingBackend::Gpu);
        let visibility = app.resource::<Visibility>();
        let mut view_levels = Vec::new();
        for (view, _, checked) in checks {
            let label = format!("frame {frame} view {}", view.0);
            assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
            assert_eq!(checked.differing_pixels, 0, "{label}: the view's levels differ from the CPU's");
            let answer = visibility.for_view(view).expect("an answer");
            let mut levels: Vec<_> =
                answer.visible().iter().enumerate().map(|(at, &slot)| (slot, answer.draw(at))).collect();
            levels.sort_by_key(|(slot, _)| *slot);
            view_levels.push(levels);
        }
        // The same object at another level in each view: the test would see a view drawn
        // at the other's levels.
        let differ = view_levels[0]
            .iter()
            .any(|(slot, mesh)| view_levels[1].iter().any(|(other, other_mesh)| other == slot && other_mesh != mesh));
        assert!(differ, "frame {frame}: the views pick other levels of some object");
    }
    assert_no_validation_messages(&device);
}
