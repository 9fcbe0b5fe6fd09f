//! Loading glTF scenes into the ECS: the three container forms, the hierarchy, colours,
//! cameras, LOD levels and occluders.

mod common;

use assets::{load_gltf, load_gltf_bytes, BaseColor, ProcessOptions};
use culling::occlusion::OccluderMeshes;
use ecs::{Camera, Lod, Mesh, Parent, Projection, Transform};
use glam::Vec3;
use hecs::World;
use meshes::MeshLibrary;
use serde_json::json;

#[test]
fn embedded_external_and_binary_files_load_alike() {
    let folder = common::scratch("forms");
    let data = common::buffer();
    std::fs::write(folder.join("scene data.bin"), &data).unwrap();
    let external = common::document(json!({ "byteLength": data.len(), "uri": "scene%20data.bin" }));
    std::fs::write(folder.join("external.gltf"), serde_json::to_vec(&external).unwrap()).unwrap();
    std::fs::write(folder.join("embedded.gltf"), common::embedded_gltf()).unwrap();
    std::fs::write(folder.join("binary.glb"), common::glb()).unwrap();
    let options = ProcessOptions::default();
    let scenes: Vec<_> = ["external.gltf", "embedded.gltf", "binary.glb"]
        .iter()
        .map(|name| load_gltf(&folder.join(name), &options).unwrap_or_else(|error| panic!("{name}: {error}")))
        .collect();
    for scene in &scenes {
        assert_eq!(scene.meshes.len(), 2, "the cube and the quad; the point primitive is skipped");
        assert_eq!(scene.skipped_primitives, 1);
        assert_eq!(scene.triangle_count(), 14);
        assert_eq!(scene.nodes.len(), 4);
        assert_eq!(scene.meshes, scenes[0].meshes, "every form gives the same meshes");
        assert!(scene.timings.total() >= scene.timings.process);
    }
    std::fs::remove_dir_all(&folder).unwrap();
}

#[test]
fn nodes_become_entities_with_hierarchy_colours_cameras_lods_and_occluders() {
    let scene = load_gltf_bytes(&common::glb(), None, &ProcessOptions::default()).unwrap();
    let mut world = World::new();
    let mut library = MeshLibrary::new();
    let mut occluders = OccluderMeshes::new();
    let spawned = scene.spawn(&mut world, &mut library, &mut occluders).unwrap();
    assert_eq!(spawned.nodes.len(), 4);
    let root = spawned.nodes[0];
    assert!(world.get::<&Parent>(root).is_err(), "the root has no parent");
    for &child in &spawned.nodes[1..] {
        assert_eq!(world.get::<&Parent>(child).unwrap().0, root, "children hang under the root");
    }
    assert_eq!(world.get::<&Transform>(root).unwrap().translation, Vec3::new(0.0, 0.0, -5.0));
    assert_eq!(world.get::<&Transform>(spawned.nodes[2]).unwrap().scale, Vec3::splat(2.0));

    let cube = spawned.nodes[1];
    assert_eq!(*world.get::<&BaseColor>(cube).unwrap(), BaseColor([1.0, 0.0, 0.0, 1.0]));
    assert_eq!(world.get::<&BaseColor>(spawned.nodes[2]).unwrap().to_rgba8(), [255; 4], "no material is white");
    let mesh = *world.get::<&Mesh>(cube).unwrap();
    assert_eq!(mesh.bounds.max, Vec3::splat(0.5));
    assert_eq!(library.triangle_count(mesh.mesh.0), 12);
    let lod = world.get::<&Lod>(cube).unwrap();
    assert_eq!(lod.levels[0].mesh, mesh.mesh, "the finest level is the Mesh's mesh");
    assert_eq!(lod.bias, 1.0);
    assert_eq!(world.get::<&Lod>(spawned.nodes[2]).unwrap().bias, 2.0, "a node scaled 2x holds levels 2x further");

    assert_eq!(spawned.occluders, 1, "the closed cube gets an occluder, the open quad none");
    assert!(occluders.get(mesh.mesh).is_some());
    let quad_mesh = world.get::<&Mesh>(spawned.nodes[2]).unwrap().mesh;
    assert!(occluders.get(quad_mesh).is_none());

    assert_eq!(spawned.cameras, vec![spawned.nodes[3]]);
    let camera = *world.get::<&Camera>(spawned.nodes[3]).unwrap();
    assert_eq!(camera.projection, Projection::PerspectiveInfiniteReverse { fov_y_radians: 0.8, near: 0.1 });
}

#[test]
fn a_node_with_several_primitives_gets_a_child_per_primitive() {
    let data = common::buffer();
    let mut document = common::document(json!({ "byteLength": data.len() }));
    document["meshes"][1]["primitives"][1] = json!({ "attributes": { "POSITION": 0 }, "indices": 1 });
    let scene = load_gltf_bytes(&common::glb_from(&document, &data), None, &ProcessOptions::default()).unwrap();
    let mut world = World::new();
    let spawned = scene.spawn(&mut world, &mut MeshLibrary::new(), &mut OccluderMeshes::new()).unwrap();
    assert_eq!(spawned.drawables.len(), 3);
    let quad_node = spawned.nodes[2];
    assert!(world.get::<&Mesh>(quad_node).is_err(), "the node itself holds no mesh");
    let children: Vec<_> = spawned.drawables[1..].to_vec();
    for child in children {
        assert_eq!(world.get::<&Parent>(child).unwrap().0, quad_node);
    }
}
