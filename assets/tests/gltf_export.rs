//! The glTF writer against the importer: what `assets::gltf_export` writes loads back with the
//! same triangles (positions, normals, texture coordinates), the same node transforms and the
//! same base colours.

use assets::gltf_export::{write_glb, ExportMesh, GlbWriter};
use assets::{load_gltf_bytes, ProcessOptions};
use ecs::Transform;
use glam::{Quat, Vec3};

/// A mesh's vertex attributes and triangles.
struct Triangles {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    uvs: Vec<[f32; 2]>,
    indices: Vec<u32>,
}

/// A box of `size` with flat faces: 24 vertices (normals and texture coordinates per face).
fn flat_box(size: [f32; 3]) -> Triangles {
    let (mut positions, mut normals, mut uvs, mut indices) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let half = Vec3::from(size) * 0.5;
    for axis in 0..3 {
        for sign in [-1.0_f32, 1.0] {
            let normal = Vec3::from_array(std::array::from_fn(|index| if index == axis { sign } else { 0.0 }));
            // Two axes along the face, ordered so that the corners run counter-clockwise seen
            // from outside.
            let (along, across) = (
                Vec3::from_array(std::array::from_fn(|index| f32::from(u8::from(index == (axis + 1) % 3)))),
                Vec3::from_array(std::array::from_fn(|index| f32::from(u8::from(index == (axis + 2) % 3)))),
            );
            let across = across * sign;
            let first = positions.len() as u32;
            for (u, v) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                positions.push(((normal + along * u + across * v) * half).to_array());
                normals.push(normal.to_array());
                uvs.push([(u + 1.0) * 0.5, (v + 1.0) * 0.5]);
            }
            indices.extend([first, first + 1, first + 2, first, first + 2, first + 3]);
        }
    }
    Triangles { positions, normals, uvs, indices }
}

/// Each triangle as its three (position, normal, uv) corners, starting at its smallest corner
/// (the winding kept), the list sorted: equal for two meshes of the same triangles whatever
/// the order of their vertices and triangles.
fn triangles(positions: &[[f32; 3]], normals: &[[f32; 3]], uvs: &[[f32; 2]], indices: &[u32]) -> Vec<[[u32; 8]; 3]> {
    let corner = |index: u32| {
        let index = index as usize;
        let mut out = [0_u32; 8];
        let values = positions[index].iter().chain(&normals[index]).chain(&uvs[index]);
        for (slot, value) in out.iter_mut().zip(values) {
            *slot = value.to_bits();
        }
        out
    };
    let mut out: Vec<[[u32; 8]; 3]> = indices
        .chunks_exact(3)
        .map(|triangle| {
            let corners = [corner(triangle[0]), corner(triangle[1]), corner(triangle[2])];
            let start = (0..3).min_by_key(|&index| corners[index]).expect("three corners");
            [corners[start], corners[(start + 1) % 3], corners[(start + 2) % 3]]
        })
        .collect();
    out.sort_unstable();
    out
}

#[test]
fn a_written_scene_loads_back_with_its_triangles_transforms_and_colours() {
    let Triangles { positions, normals, uvs, indices } = flat_box([1.0, 2.0, 3.0]);
    let Triangles { positions: small, normals: small_normals, indices: small_indices, .. } = flat_box([0.5; 3]);
    let mut writer = GlbWriter::new();
    let green = writer.add_material([0.1, 0.8, 0.2, 1.0]);
    let blue = writer.add_material([0.1, 0.2, 0.9, 1.0]);
    let textured = writer.add_mesh(ExportMesh {
        positions: &positions,
        normals: &normals,
        uvs: &uvs,
        indices: &indices,
        material: Some(green),
    });
    let plain = writer.add_mesh(ExportMesh {
        positions: &small,
        normals: &small_normals,
        uvs: &[],
        indices: &small_indices,
        material: Some(blue),
    });
    let places = [
        (textured, Transform::from_translation(Vec3::new(1.0, 2.0, 3.0))),
        (
            plain,
            Transform {
                translation: Vec3::new(-4.0, 0.5, 2.0),
                rotation: Quat::from_rotation_y(0.7),
                scale: Vec3::new(2.0, 1.0, 3.0),
            },
        ),
        (textured, Transform::from_translation(Vec3::new(10.0, 0.0, 0.0))),
    ];
    for &(mesh, transform) in &places {
        writer.add_node(mesh, transform);
    }
    let scene = load_gltf_bytes(&writer.to_glb(), None, &ProcessOptions::default()).expect("the file loads");

    assert_eq!(scene.meshes.len(), 2);
    let loaded = &scene.meshes[0];
    assert_eq!(loaded.positions.len(), positions.len(), "no vertex lost or welded");
    assert_eq!(
        triangles(&loaded.positions, &loaded.normals, &loaded.uvs, &loaded.levels[0].indices),
        triangles(&positions, &normals, &uvs, &indices)
    );
    let loaded = &scene.meshes[1];
    assert!(loaded.uvs.is_empty(), "no texture coordinates were written");
    let no_uvs = vec![[0.0; 2]; small.len()];
    assert_eq!(
        triangles(&loaded.positions, &loaded.normals, &no_uvs, &loaded.levels[0].indices),
        triangles(&small, &small_normals, &no_uvs, &small_indices)
    );
    assert_eq!(loaded.bounds_min, [-0.25; 3]);
    assert_eq!(loaded.bounds_max, [0.25; 3]);

    assert_eq!(scene.nodes.len(), places.len());
    for (node, &(mesh, transform)) in scene.nodes.iter().zip(&places) {
        assert_eq!(node.parent, None);
        assert_eq!(node.meshes, vec![mesh as usize]);
        assert!(node.transform.translation.abs_diff_eq(transform.translation, 1e-6));
        assert!(node.transform.rotation.abs_diff_eq(transform.rotation, 1e-6));
        assert!(node.transform.scale.abs_diff_eq(transform.scale, 1e-6));
    }
    let colors: Vec<[f32; 4]> = scene.colors.iter().map(|color| color.0).collect();
    assert_eq!(colors, vec![[0.1, 0.8, 0.2, 1.0], [0.1, 0.2, 0.9, 1.0]]);
}

#[test]
fn write_glb_is_the_writer_in_one_call_and_an_empty_scene_loads() {
    let Triangles { positions, indices, .. } = flat_box([1.0, 1.0, 1.0]);
    let mesh = ExportMesh { positions: &positions, normals: &[], uvs: &[], indices: &indices, material: None };
    let nodes = [(0, Transform::IDENTITY), (0, Transform::from_translation(Vec3::Y))];
    let bytes = write_glb(&[], &[mesh], &nodes);
    let mut writer = GlbWriter::new();
    writer.add_mesh(mesh);
    for (mesh, transform) in nodes {
        writer.add_node(mesh, transform);
    }
    assert_eq!(bytes, writer.to_glb());
    let scene = load_gltf_bytes(&bytes, None, &ProcessOptions::default()).expect("the file loads");
    assert_eq!(scene.nodes.len(), 2);
    assert_eq!(scene.meshes[0].levels[0].triangle_count(), 12);

    let empty = load_gltf_bytes(&GlbWriter::new().to_glb(), None, &ProcessOptions::default()).expect("it loads");
    assert!(empty.meshes.is_empty() && empty.nodes.is_empty());
}
