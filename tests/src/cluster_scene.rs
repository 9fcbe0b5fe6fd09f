//! A generated scene of large closed meshes for cluster-culling tests: subdivided boxes
//! (buildings, a ground slab) and spheres, processed by `assets` into meshlets, and its
//! *truth* twin in which every meshlet of every object is an object of its own with a unique
//! colour, so that an unculled render of the twin tells which meshlet owns each pixel.

use std::sync::Arc;

use assets::{add_to_library, process_mesh, MeshData, ProcessOptions};
use glam::{Mat4, Quat, Vec3};
use render_graph::device::GpuDevice;
use render_graph::Result;
use renderer::{pack_rgba8, GpuScene, MeshLibrary, ObjectDesc, SharedScene};

use crate::offscreen::object_color;

/// A generated mesh (`ecs::scene`) as the assets pipeline's input.
fn mesh_data(geometry: ecs::scene::Geometry) -> MeshData {
    MeshData::new(geometry.positions, geometry.indices)
}

/// The scene's objects: (mesh index into [`meshes`], world matrix).
pub fn placements() -> Vec<(usize, Mat4)> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut random = move |low: f32, high: f32| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        low + (high - low) * ((state >> 40) as f32 / (1u64 << 24) as f32)
    };
    let mut objects = vec![(
        0,
        Mat4::from_scale_rotation_translation(Vec3::new(200.0, 1.0, 200.0), Quat::IDENTITY, Vec3::new(0.0, -0.5, 0.0)),
    )];
    for x in -4..4 {
        for z in -4..4 {
            let center = Vec3::new(x as f32 * 14.0 + 7.0, 0.0, z as f32 * 14.0 + 7.0);
            let size = Vec3::new(random(4.0, 8.0), random(6.0, 28.0), random(4.0, 8.0));
            let turn = Quat::from_rotation_y(random(0.0, 0.6));
            // Lifted a hair so the bottom face is never coplanar with the ground.
            let position = center + Vec3::new(0.0, size.y * 0.5 + 0.01, 0.0);
            objects.push((1, Mat4::from_scale_rotation_translation(size, turn, position)));
            let radius = random(0.8, 2.0);
            let spot = center + Vec3::new(random(4.5, 5.5), radius + 0.02, random(-5.0, 5.0));
            // A non-uniform scale: the cone and sphere tests must hold under it.
            let stretch = Vec3::new(radius, radius * random(0.7, 1.6), radius);
            objects.push((2, Mat4::from_scale_rotation_translation(stretch, turn, spot)));
        }
    }
    objects
}

/// The meshes: ground slab, building, sphere.
pub fn meshes() -> Vec<MeshData> {
    [ecs::scene::subdivided_box(16), ecs::scene::subdivided_box(12), ecs::scene::uv_sphere(48)].map(mesh_data).into()
}

/// The lit scene (each mesh's finest level with meshlets, one object per placement) and its
/// truth twin (one object per meshlet, in the order of the lit scene's cluster pairs, with
/// colour [`object_color`] of the pair index).
pub fn scenes(device: &Arc<GpuDevice>) -> Result<(SharedScene, SharedScene)> {
    let options = ProcessOptions { max_levels: 1, ..ProcessOptions::default() };
    let processed: Vec<_> =
        meshes().iter().map(|mesh| process_mesh(mesh, &options).expect("generated meshes are valid")).collect();
    let mut library = MeshLibrary::new();
    let mut truth_library = MeshLibrary::new();
    let mut ids = Vec::new();
    // Per mesh: the truth mesh id of each meshlet.
    let mut truth_ids: Vec<Vec<u32>> = Vec::new();
    for mesh in &processed {
        ids.push(add_to_library(&mut library, mesh).expect("processed meshes are valid").levels.start);
        let level = &mesh.levels[0];
        let mut meshlet_ids = Vec::new();
        for meshlet in &level.meshlets {
            let range = meshlet.first_index as usize..(meshlet.first_index + meshlet.index_count) as usize;
            meshlet_ids.push(
                truth_library.add_mesh(&mesh.positions, &level.indices[range]).expect("a meshlet is whole triangles"),
            );
        }
        truth_ids.push(meshlet_ids);
    }
    let objects = placements();
    let meshlet_total: usize = objects.iter().map(|(mesh, _)| truth_ids[*mesh].len()).sum();
    let mut scene = GpuScene::new(device, library, objects.len() as u32)?;
    let mut truth = GpuScene::new(device, truth_library, meshlet_total as u32)?;
    let mut pair = 0;
    for (index, (mesh, world)) in objects.iter().enumerate() {
        let world = world.to_cols_array_2d();
        let shade = 120 + (index * 37 % 120) as u8;
        let color = pack_rgba8(shade, 255 - shade, 180, 255);
        scene.push_object(ObjectDesc { world, color, mesh: ids[*mesh], material: 0 })?;
        for &truth_mesh in &truth_ids[*mesh] {
            truth.push_object(ObjectDesc { world, color: object_color(pair), mesh: truth_mesh, material: 0 })?;
            pair += 1;
        }
    }
    scene.draw_all_objects();
    truth.draw_all_objects();
    Ok((scene.into_shared(), truth.into_shared()))
}
