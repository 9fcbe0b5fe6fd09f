//! Materials on the GPU path, on lavapipe with validation: a masked card's holes let the
//! object behind it show and keep it visible to two-phase Hi-Z culling (the depth prepass
//! discards them, so neither the depth nor the pyramid sees a surface there), while the same
//! card with opaque texels occludes it.

use std::sync::Arc;

use culling::CullingBackend;
use ecs::{scene, Aabb, BaseColor, Camera, MaterialHandle, Mesh, MeshHandle, Transform};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::{install_render, BitsReadback, Material, MeshLibrary, MeshVertices, RenderReport, RenderSetup};

/// The unit cube (mesh 0) and a unit card facing +z (mesh 1); texture 0 is one clear texel,
/// texture 1 one opaque texel; material 0 is plain (what `MaterialHandle(0)`, the cube's,
/// names), material 1 masks with texture 0, material 2 with texture 1.
fn library() -> MeshLibrary {
    let mut library = MeshLibrary::with_unit_cube();
    let positions = [[-0.5, -0.5, 0.0], [0.5, -0.5, 0.0], [0.5, 0.5, 0.0], [-0.5, 0.5, 0.0]];
    let vertices = MeshVertices {
        positions: &positions,
        normals: &[[0.0, 0.0, 1.0]; 4],
        uvs: &[[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]],
    };
    library.add_mesh_levels(vertices, &[(&[0, 1, 2, 0, 2, 3], &[])]).expect("the card");
    library.add_material(Material::default()).expect("plain");
    for alpha in [0, 255] {
        let texture = library.add_texture(1, vec![vec![255, 255, 255, alpha]]).expect("a texel");
        let material = Material { texture: Some(texture), alpha_cutoff: Some(0.5), ..Material::default() };
        library.add_material(material).expect("its texture is there");
    }
    library
}

/// Runs four frames of a red cube behind a card of material `card`; returns whether the
/// GPU's last bits keep the cube visible, and the last image.
fn cube_behind_card(device: &Arc<GpuDevice>, card: u32) -> (bool, Vec<u8>) {
    let setup = RenderSetup {
        backend: CullingBackend::Gpu,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: 48, height: 32 },
        capacity: 8,
        meshes: library(),
        clear_color: [0.0, 0.0, 0.0, 1.0],
        bits: BitsReadback::Wait,
        passes: Vec::new(),
    };
    let mut app = runtime::App::with_threads(1);
    install_render(&mut app, setup).expect("a device is there");
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO));
    let cube = scene::spawn_mesh(
        app.world_mut(),
        scene::unit_cube_mesh(),
        Transform::from_translation(Vec3::new(0.0, 0.0, -2.0)),
    );
    app.world_mut().insert_one(cube, BaseColor([1.0, 0.0, 0.0, 1.0])).expect("spawned");
    let bounds = Aabb::new(Vec3::new(-0.5, -0.5, 0.0), Vec3::new(0.5, 0.5, 0.0));
    let card_mesh = Mesh::new(MeshHandle(1), MaterialHandle(card), bounds);
    let place = Transform { scale: Vec3::splat(6.0), ..Transform::from_translation(Vec3::new(0.0, 0.0, 1.0)) };
    let card = scene::spawn_mesh(app.world_mut(), card_mesh, place);
    app.world_mut().insert_one(card, BaseColor([1.0, 1.0, 1.0, 1.0])).expect("spawned");
    for _ in 0..4 {
        app.resource_mut::<renderer::Screenshots>().request(renderer::COLOR);
        app.run_frame();
        assert!(app.resource::<RenderReport>().error.is_none(), "{:?}", app.resource::<RenderReport>().error);
    }
    let slot = app.resource::<culling::Visibility>().slot_of(cube).expect("the cube has a slot") as usize;
    let bits = app.resource::<RenderReport>().bits.clone();
    let visible = bits.get(slot / 64).is_some_and(|word| word >> (slot % 64) & 1 == 1);
    let image = app.resource_mut::<renderer::Screenshots>().take().pop().expect("taken").rgba8;
    (visible, image)
}

#[test]
fn a_masked_cards_holes_show_what_is_behind_and_keep_it_visible_to_hi_z() {
    let Some(device) = gpu_test_context() else { return };
    let red = |image: &[u8]| image.chunks_exact(4).filter(|texel| texel[0] > 100 && texel[1] < 40).count();
    let (visible, image) = cube_behind_card(&device, 1);
    assert!(visible, "the cube behind the holes is visible");
    let colours: std::collections::BTreeSet<&[u8]> = image.chunks_exact(4).collect();
    assert!(red(&image) > 4, "and drawn: {} red pixels of {}: {colours:?}", red(&image), image.len() / 4);
    let (visible, image) = cube_behind_card(&device, 2);
    assert!(!visible, "an opaque card occludes the cube");
    assert_eq!(red(&image), 0);
    assert_no_validation_messages(&device);
}
