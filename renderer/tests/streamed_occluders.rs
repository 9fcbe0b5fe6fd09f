//! CPU occluders of meshes added while frames run, on lavapipe with validation: a world of
//! small cubes; a few frames in, a wall (a closed box with two levels) is added and spawned
//! between the camera and the cubes. From the frame it is added in the wall's levels have
//! an occluder and the Visibility stage culls the cubes behind it; once the wall's mesh is
//! removed its levels have none, and the cubes show again. Every frame the truth finds
//! nothing hidden that shows and the picture of the unculled frame.

mod headless_app;
mod lit_cube;

use headless_app::{headless_app, SKY};
use std::sync::Arc;

use culling::occlusion::OccluderMeshes;
use culling::{CullingBackend, Visibility};
use ecs::{scene, Aabb, Camera, MaterialHandle, Mesh, MeshHandle, Transform};
use glam::Vec3;
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::GpuDevice;
use renderer::truth::{check_frame, ReferenceRenderer};
use renderer::{lock_capture, FrameInFlight, MeshVertices, RenderMeshes, RenderReport};

const WIDTH: u32 = 96;
const HEIGHT: u32 = 64;
/// The frame the wall is added and spawned in, and the frame its mesh is removed in.
const ADDED: u64 = 2;
const REMOVED: u64 = 8;
const FRAMES: u64 = 12;
/// The wall's half extents.
const WALL: Vec3 = Vec3::new(4.0, 2.5, 0.25);

/// A closed box of half extents `half`, a normal per face, counter-clockwise from outside:
/// its positions, normals and triangles.
fn box_mesh(half: Vec3) -> (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<u32>) {
    let (mut positions, mut normals, mut indices) = (Vec::new(), Vec::new(), Vec::new());
    for axis in 0..3 {
        for sign in [1.0f32, -1.0] {
            let normal = Vec3::from_array(std::array::from_fn(|i| if i == axis { sign } else { 0.0 }));
            let u = Vec3::from_array(std::array::from_fn(|i| if i == (axis + 1) % 3 { 1.0 } else { 0.0 }));
            let v = normal.cross(u);
            let base = positions.len() as u32;
            for (a, b) in [(-1.0f32, -1.0f32), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                positions.push(((normal + u * a + v * b) * half).to_array());
                normals.push(normal.to_array());
            }
            indices.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    (positions, normals, indices)
}

#[test]
fn a_mesh_added_while_frames_run_occludes_from_the_next_frame_until_removed() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        run(&device, backend);
    }
    assert_no_validation_messages(&device);
}

fn run(device: &Arc<GpuDevice>, backend: CullingBackend) {
    let (mut app, capture) = headless_app(device, backend, lit_cube(), (WIDTH, HEIGHT, 32), |_| {});
    let mut reference =
        ReferenceRenderer::with_device(Arc::clone(device), WIDTH, HEIGHT, 32, lit_cube(), SKY).expect("a reference");
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 1.0, 9.0), Vec3::ZERO));
    let cube = Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5));
    for x in [-1.5f32, 0.0, 1.5] {
        for y in [-0.5f32, 1.0] {
            let mesh = Mesh::new(MeshHandle(0), MaterialHandle(0), cube);
            scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(Vec3::new(x, y, -2.0)));
        }
    }
    let meshes = app.resource::<RenderMeshes>().clone();
    let (positions, normals, indices) = box_mesh(WALL);
    let mut wall = None;
    let mut occluded = Vec::new();
    for frame in 0..FRAMES {
        let label = format!("{backend:?} frame {frame}");
        if frame == ADDED {
            let vertices = MeshVertices { positions: &positions, normals: &normals, uvs: &[] };
            // Two levels of one box: the occluder lies inside both.
            let levels: [(&[u32], &[renderer::Meshlet]); 2] = [(&indices, &[]), (&indices, &[])];
            let ids = meshes.add_mesh_levels(vertices, &levels).expect("a closed box");
            assert_eq!(reference.add_mesh_levels(vertices, &levels).expect("the same box"), ids, "{label}");
            let bounds = Aabb::new(-WALL, WALL);
            let mesh = Mesh::new(MeshHandle(ids.start), MaterialHandle(0), bounds);
            scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(Vec3::new(0.0, 0.5, 2.0)));
            wall = Some(ids);
        }
        if frame == REMOVED {
            let ids = wall.clone().expect("added");
            // The reference draws nothing for it too (it follows the frame's stand-ins).
            assert_eq!(meshes.remove_mesh(ids.start), Ok(ids.clone()), "{label}");
        }
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let has_occluder = wall.clone().is_some_and(|ids| {
            let occluders = app.resource::<OccluderMeshes>();
            ids.clone().all(|level| occluders.get(MeshHandle(level)).is_some())
        });
        let expect_occluder = (ADDED..REMOVED).contains(&frame);
        assert_eq!(has_occluder, expect_occluder, "{label}: the wall's levels have their occluder");
        let capture = lock_capture(&capture);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{label}: {:?}", report.error);
        let (world, visibility) = (app.world(), app.resource::<Visibility>());
        occluded.push(visibility.stats().occluded);
        let checked =
            check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None).expect("the truth answers");
        assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
        assert_eq!(checked.differing_pixels, 0, "{label}: culling changed the picture");
    }
    // The occluder is in the table from the frame the wall is added in (the Input stage
    // hands it over before the Visibility stage runs; until the wall's levels are on the GPU
    // its object draws the box of its bounds, which hides as much): the cubes behind it are
    // culled until its mesh is removed. (The GPU backend's count is its own occlusion's,
    // from the depth of the frames before: there the truth alone is asked.)
    if backend != CullingBackend::Cpu {
        return;
    }
    let label = format!("{backend:?}: occluded by frame {occluded:?}");
    assert!(occluded[..ADDED as usize].iter().all(|&count| count == 0), "{label}");
    assert!(occluded[ADDED as usize..REMOVED as usize].iter().all(|&count| count == 6), "{label}");
    assert!(occluded[REMOVED as usize..].iter().all(|&count| count == 0), "{label}");
}

#[test]
fn the_occluder_of_a_streamed_mesh_lies_inside_every_level() {
    // Two boxes as two levels over one vertex list: a wide flat one and a narrow tall one.
    let (mut positions, _, wide) = box_mesh(Vec3::new(2.0, 0.5, 2.0));
    let (tall_positions, _, tall) = box_mesh(Vec3::new(0.5, 2.0, 0.5));
    let offset = positions.len() as u32;
    positions.extend(tall_positions);
    let tall: Vec<u32> = tall.iter().map(|index| index + offset).collect();
    let occluder = renderer::streamed_occluder(&positions, &[&wide[..], &tall[..]]).expect("both closed");
    for corner in occluder.positions() {
        assert!(corner.abs().cmple(Vec3::new(0.5, 0.5, 0.5) + 1e-4).all(), "inside both: {corner:?}");
    }
    // An open level (one quad) leaves the mesh without an occluder.
    let quad = [wide[0], wide[1], wide[2], wide[3], wide[4], wide[5]];
    assert!(renderer::streamed_occluder(&positions, &[&wide[..], &quad[..]]).is_none());
}
