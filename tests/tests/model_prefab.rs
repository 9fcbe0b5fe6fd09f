//! A game's use of a glTF model as a prefab, written as a user would: load the repo's
//! textured, masked scene once, add it to the library once, spawn it 1,000 times beside a
//! plain-colour cube, draw headless with CPU and GPU culling and check with `renderer::truth`,
//! frame after frame, that culling hid nothing that shows. Lavapipe with validation.

use std::path::Path;
use std::sync::Arc;

use assets::{load_gltf, spawn_model, ProcessOptions};
use culling::occlusion::OccluderMeshes;
use culling::{CullingBackend, Visibility};
use ecs::{scene, BaseColor, Camera, MaterialHandle, Transform};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::truth::{check_frame, ReferenceRenderer};
use renderer::{install_render_to, lock_capture, BitsReadback, HeadlessTarget, MeshLibrary, RenderReport, RenderSetup};

const WIDTH: u32 = 160;
const HEIGHT: u32 = 96;
const SKY: [f32; 4] = [0.5, 0.7, 0.9, 1.0];
const SPAWNS: usize = 1000;

#[test]
fn a_model_spawned_a_thousand_times_adds_its_meshes_once_and_culling_hides_nothing_that_shows() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        spawn_and_check(&device, backend);
    }
    assert_no_validation_messages(&device);
}

/// The scene of the test drawn and checked with `backend`.
fn spawn_and_check(device: &Arc<GpuDevice>, backend: CullingBackend) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/tests/data/gltfpack/scene.glb");
    let loaded = load_gltf(&file, &ProcessOptions::default()).expect("the repo's scene loads");
    let mut library = MeshLibrary::new();
    let cube = library.add_unit_cube();
    let mut occluders = OccluderMeshes::new();
    let model = loaded.add_model(&mut library, &mut occluders).expect("the model goes in the library");
    let (meshes, materials, textures) = (library.len(), library.materials().len(), library.textures().len());
    assert!(materials > 0 && textures > 0, "the scene's materials and textures are in the library");

    let mut app = runtime::App::with_threads(2);
    let mut drawables = Vec::new();
    for index in 0..SPAWNS {
        let place = Vec3::new((index % 40) as f32 * 3.0 - 60.0, 0.0, -((index / 40) as f32) * 3.0);
        let spawned = spawn_model(app.world_mut(), &model, Transform::from_translation(place));
        // The file's camera comes with each spawn: the game looks through its own.
        for camera in spawned.cameras {
            app.world_mut().remove_one::<Camera>(camera).expect("a camera node");
        }
        drawables.extend(spawned.drawables);
    }
    // A plain-colour cube: plain whatever the glTF put at material 0.
    let mut plain = scene::unit_cube_mesh();
    (plain.mesh, plain.material) = (ecs::MeshHandle(cube), MaterialHandle::PLAIN);
    let plain = scene::spawn_mesh(app.world_mut(), plain, Transform::from_translation(Vec3::new(0.0, 1.0, 6.0)));
    app.world_mut().insert_one(plain, BaseColor([1.0, 0.2, 0.1, 1.0])).expect("spawned");
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 12.0, 16.0), Vec3::ZERO));

    // The meshes are the model's, shared: spawning touched no library.
    let model_meshes: Vec<u32> = model.meshes().iter().flat_map(|mesh| mesh.levels.clone()).collect();
    assert_eq!(meshes, 1 + model_meshes.len(), "the library holds the cube and the model's meshes once");
    assert_eq!(drawables.len(), SPAWNS * model.meshes().len(), "every spawn draws every mesh of the model");
    let mut named: Vec<u32> =
        drawables.iter().map(|&entity| app.world().get::<&ecs::Mesh>(entity).expect("a mesh").mesh.0).collect();
    named.sort_unstable();
    named.dedup();
    assert!(named.iter().all(|mesh| model_meshes.contains(mesh)), "the spawns name the model's meshes: {named:?}");
    assert_eq!((library.materials().len(), library.textures().len()), (materials, textures));

    let capacity = (drawables.len() + 64) as u32;
    let setup = RenderSetup {
        shadows: false,
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity,
        meshes: library.clone(),
        clear_color: SKY,
        // The truth needs each GPU-culled frame's own answer.
        bits: if backend == CullingBackend::Gpu { BitsReadback::Wait } else { BitsReadback::None },
        passes: Vec::new(),
    };
    app.insert_resource(occluders);
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    let mut reference =
        ReferenceRenderer::with_device(Arc::clone(device), WIDTH, HEIGHT, capacity, library, SKY).expect("a reference");
    for frame in 0..4 {
        app.run_frame();
        let capture = lock_capture(&capture);
        let (world, visibility) = (app.world(), app.resource::<Visibility>());
        let report = app.resource::<RenderReport>();
        let checked =
            check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None).expect("the truth answers");
        assert_eq!(checked.truth.false_hidden, 0, "{backend:?} frame {frame}: {:?}", checked.truth);
        assert_eq!(checked.differing_pixels, 0, "{backend:?} frame {frame}: culling changed the picture");
        assert!(
            checked.truth.objects_with_pixels > 100,
            "{backend:?} frame {frame}: many models show: {:?}",
            checked.truth
        );
        let slot = visibility.slot_of(plain).expect("the cube has a slot") as usize;
        let red = capture.pixels.chunks_exact(4).filter(|pixel| pixel[0] > 150 && pixel[1] < 90).count();
        assert!(
            red > 20,
            "{backend:?} frame {frame}: the plain cube is drawn in its own colour ({red} pixels, slot {slot})"
        );
    }
}
