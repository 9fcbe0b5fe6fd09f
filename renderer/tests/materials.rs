//! Materials on lavapipe with validation: a masked card's holes let the object behind it
//! show and keep it visible to two-phase Hi-Z culling (the depth prepass discards them, so
//! neither the depth nor the pyramid sees a surface there), while the same card with opaque
//! texels occludes it; a blended card tints what lies behind, hides nothing on either
//! backend and blends farthest first whatever the slots; double-sided materials show their
//! back faces (meshlet cone culling included); nearest sampling keeps texels hard.

use std::sync::Arc;

use culling::CullingBackend;
use ecs::{scene, Aabb, BaseColor, Camera, MaterialHandle, Mesh, MeshHandle, Transform};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::{install_render, BitsReadback, Material, MeshLibrary, MeshVertices, RenderReport, RenderSetup};

/// Material 3 of [`library`]: blended, no texture (the alpha is the object's colour's).
const BLENDED: u32 = 3;
/// Material 4: double-sided, opaque.
const DOUBLE_SIDED: u32 = 4;

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
    library.add_material(Material { blend: true, ..Material::default() }).expect("blended");
    library.add_material(Material { double_sided: true, ..Material::default() }).expect("double-sided");
    library
}

/// One object of [`render`]: mesh 0 (the cube) or 1 (the card), its material, colour and place.
#[derive(Clone, Copy)]
struct Object {
    mesh: u32,
    material: u32,
    color: [f32; 4],
    place: Transform,
}

/// Renders `objects` in spawn order (so in slot order) for four frames with the camera at
/// `eye` looking at the origin; returns the last image and whether each object's last bit
/// (the GPU's, or the CPU's answer) says it is visible.
fn render(device: &Arc<GpuDevice>, backend: CullingBackend, eye: Vec3, objects: &[Object]) -> (Vec<u8>, Vec<bool>) {
    let setup = RenderSetup {
        shadows: false,
        backend,
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
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(eye, Vec3::ZERO));
    let entities: Vec<_> = objects
        .iter()
        .map(|object| {
            let bounds = match object.mesh {
                0 => Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)),
                _ => Aabb::new(Vec3::new(-0.5, -0.5, 0.0), Vec3::new(0.5, 0.5, 0.0)),
            };
            let mesh = Mesh::new(MeshHandle(object.mesh), MaterialHandle(object.material), bounds);
            let entity = scene::spawn_mesh(app.world_mut(), mesh, object.place);
            app.world_mut().insert_one(entity, BaseColor(object.color)).expect("spawned");
            entity
        })
        .collect();
    for _ in 0..4 {
        app.resource_mut::<renderer::Screenshots>().request(renderer::COLOR);
        app.run_frame();
        assert!(app.resource::<RenderReport>().error.is_none(), "{:?}", app.resource::<RenderReport>().error);
    }
    let image = app.resource_mut::<renderer::Screenshots>().take().pop().expect("taken").rgba8;
    let visibility = app.resource::<culling::Visibility>();
    let bits = app.resource::<RenderReport>().bits.clone();
    let visible = entities
        .iter()
        .map(|&entity| {
            let slot = visibility.slot_of(entity).expect("a slot") as usize;
            match backend {
                CullingBackend::Cpu => visibility.bits().is_visible(slot),
                _ => bits.get(slot / 64).is_some_and(|word| word >> (slot % 64) & 1 == 1),
            }
        })
        .collect();
    (image, visible)
}

/// A card of `material` and `color` facing +z at depth `z`, six units wide (it fills the view
/// from z = 5).
fn card(material: u32, color: [f32; 4], z: f32) -> Object {
    let place = Transform { scale: Vec3::splat(6.0), ..Transform::from_translation(Vec3::new(0.0, 0.0, z)) };
    Object { mesh: 1, material, color, place }
}

fn red_cube_at(z: f32) -> Object {
    Object {
        mesh: 0,
        material: 0,
        color: [1.0, 0.0, 0.0, 1.0],
        place: Transform::from_translation(Vec3::new(0.0, 0.0, z)),
    }
}

/// The pixel at the centre of a 48x32 image.
fn centre(image: &[u8]) -> [u8; 4] {
    let at = (16 * 48 + 24) * 4;
    image[at..at + 4].try_into().expect("four bytes")
}

/// Runs four frames of a red cube behind a card of material `card`; returns whether the
/// GPU's last bits keep the cube visible, and the last image.
fn cube_behind_card(device: &Arc<GpuDevice>, card: u32) -> (bool, Vec<u8>) {
    let setup = RenderSetup {
        shadows: false,
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

#[test]
fn a_blended_card_tints_what_is_behind_and_hides_it_from_neither_backend() {
    let Some(device) = gpu_test_context() else { return };
    let objects = [red_cube_at(-2.0), card(BLENDED, [1.0, 1.0, 1.0, 0.5], 1.0)];
    let mut images = Vec::new();
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        let (image, visible) = render(&device, backend, Vec3::new(0.0, 0.0, 5.0), &objects);
        assert_eq!(visible, [true, true], "{backend:?}: a translucent card occludes nothing");
        let [r, g, b, _] = centre(&image);
        // White at half alpha over red: red stays high, green and blue come up from zero.
        assert!(r > 180 && g > 40 && g < 180 && b == g, "{backend:?}: the cube shows through tinted: {r} {g} {b}");
        let pure_red = image.chunks_exact(4).filter(|texel| texel[0] > 100 && texel[1] < 20).count();
        assert_eq!(pure_red, 0, "{backend:?}: the card covers the whole view, so nothing is untinted red");
        images.push(image);
    }
    assert!(images[0] == images[1], "both backends draw the same picture");
    assert_no_validation_messages(&device);
}

#[test]
fn blended_objects_draw_farthest_first_whatever_their_slots() {
    let Some(device) = gpu_test_context() else { return };
    let far = card(BLENDED, [0.0, 1.0, 0.0, 0.5], -1.0);
    let near = card(BLENDED, [0.0, 0.0, 1.0, 0.5], 1.0);
    let eye = Vec3::new(0.0, 0.0, 5.0);
    let (far_first, _) = render(&device, CullingBackend::Gpu, eye, &[far, near]);
    let (near_first, _) = render(&device, CullingBackend::Gpu, eye, &[near, far]);
    assert!(far_first == near_first, "the order comes from depth, not from slots");
    let [_, g, b, _] = centre(&far_first);
    // Blue over (green over black): blue keeps half, green a quarter.
    assert!(b > g + 10, "the near card is blended last: green {g} blue {b}");
    let (from_behind, _) = render(&device, CullingBackend::Cpu, -eye, &[near, far]);
    let [_, g, b, _] = centre(&from_behind);
    assert_eq!((g, b), (0, 0), "one-sided cards seen from behind draw nothing: green {g} blue {b}");
    assert_no_validation_messages(&device);
}

#[test]
fn double_sided_materials_draw_their_back_faces() {
    let Some(device) = gpu_test_context() else { return };
    let behind = Vec3::new(0.0, 0.0, -5.0);
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        let (image, visible) = render(&device, backend, behind, &[card(0, [1.0, 1.0, 1.0, 1.0], 0.0)]);
        assert_eq!(centre(&image), [0, 0, 0, 255], "{backend:?}: a one-sided card's back face is culled");
        assert_eq!(visible, [true]);
        let (image, _) = render(&device, backend, behind, &[card(DOUBLE_SIDED, [1.0, 1.0, 1.0, 1.0], 0.0)]);
        let [r, g, b, _] = centre(&image);
        assert!(r > 50 && r == g && g == b, "{backend:?}: a double-sided card shows its back: {r} {g} {b}");
        // A red cube behind the double-sided card (seen from -z) is hidden by it: the card is
        // in the depth like any opaque surface.
        let objects = [card(DOUBLE_SIDED, [1.0, 1.0, 1.0, 1.0], -1.0), red_cube_at(2.0)];
        let (image, _) = render(&device, backend, behind, &objects);
        assert!(image.chunks_exact(4).all(|texel| texel[1] == texel[0]), "{backend:?}: no red shows through");
    }
    assert_no_validation_messages(&device);
}

#[test]
fn meshlet_cone_culling_leaves_double_sided_objects_alone() {
    use renderer::{add_cluster_culled_scene_passes, ClusterReadbacks, GpuScene, ObjectDesc, ScenePassOptions};
    let Some(device) = gpu_test_context() else { return };
    let view = glam::Mat4::perspective_infinite_reverse_rh(1.0, 1.5, 0.1)
        * glam::Mat4::look_at_rh(Vec3::new(0.0, 0.0, -5.0), Vec3::ZERO, Vec3::Y);
    let world = glam::Mat4::from_scale(Vec3::splat(6.0)).to_cols_array_2d();
    let mut lit = Vec::new();
    for material in [0, DOUBLE_SIDED] {
        let mut scene = GpuScene::new(&device, library(), 4).expect("a scene");
        scene
            .push_object(ObjectDesc { world, color: renderer::pack_rgba8(255, 255, 255, 255), mesh: 1, material })
            .expect("room");
        let scene = scene.into_shared();
        let mut graph = render_graph::RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 48, height: 32 })
            .expect("a graph");
        graph.set_param(renderer::FrameView::from_view_projection(view));
        let readbacks = ClusterReadbacks { color: true, verdicts: false, early_depth: false };
        let frame = add_cluster_culled_scene_passes(
            &mut graph,
            &scene,
            &ScenePassOptions::default(),
            Default::default(),
            readbacks,
        )
        .expect("the cluster frame");
        graph.execute_frame().expect("a frame");
        graph.wait_idle().expect("idle");
        let image = frame.color.expect("asked for").read().expect("read").to_vec();
        lit.push(centre(&image)[0] > 0);
    }
    assert_eq!(
        lit,
        [false, true],
        "the one-sided card's meshlet is cone-culled from behind, the double-sided one drawn"
    );
    assert_no_validation_messages(&device);
}

#[test]
fn nearest_materials_keep_magnified_texels_hard() {
    let Some(device) = gpu_test_context() else { return };
    let distinct = |nearest: bool| {
        let mut library = MeshLibrary::with_unit_cube();
        let positions = [[-0.5, -0.5, 0.0], [0.5, -0.5, 0.0], [0.5, 0.5, 0.0], [-0.5, 0.5, 0.0]];
        let uvs = [[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]];
        let vertices = MeshVertices { positions: &positions, normals: &[[0.0, 0.0, 1.0]; 4], uvs: &uvs };
        library.add_mesh_levels(vertices, &[(&[0, 1, 2, 0, 2, 3], &[])]).expect("the card");
        // A 2x2 checker of red and blue, with its 1x1 mip.
        let checker = [255, 0, 0, 255, 0, 0, 255, 255, 0, 0, 255, 255, 255, 0, 0, 255].to_vec();
        let texture = library.add_texture(2, vec![checker, vec![128, 0, 128, 255]]).expect("a texture");
        let material = Material { texture: Some(texture), nearest, ..Material::default() };
        library.add_material(material).expect("plain");
        let mut scene = renderer::GpuScene::new(&device, library, 4).expect("a scene");
        let world = glam::Mat4::from_scale(Vec3::splat(4.0)).to_cols_array_2d();
        let color = renderer::pack_rgba8(255, 255, 255, 255);
        scene.push_object(renderer::ObjectDesc { world, color, mesh: 1, material: 0 }).expect("room");
        let view = glam::Mat4::perspective_infinite_reverse_rh(1.0, 1.5, 0.1)
            * glam::Mat4::look_at_rh(Vec3::new(0.0, 0.0, 2.0), Vec3::ZERO, Vec3::Y);
        scene.draw_all_objects();
        let scene = scene.into_shared();
        let mut graph = render_graph::RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 48, height: 32 })
            .expect("a graph");
        graph.set_param(renderer::FrameView::from_view_projection(view));
        let readback = renderer::add_scene_passes(&mut graph, &scene, &renderer::ScenePassOptions::default())
            .expect("the frame")
            .expect("a readback");
        graph.execute_frame().expect("a frame");
        graph.wait_idle().expect("idle");
        let image = readback.read().expect("read").to_vec();
        let colours: std::collections::BTreeSet<&[u8]> = image.chunks_exact(4).collect();
        colours.len()
    };
    assert_eq!(distinct(true), 2, "nearest: the card is red and blue texels only (it fills the view)");
    assert!(distinct(false) > 8, "trilinear filtering blends them");
    assert_no_validation_messages(&device);
}
