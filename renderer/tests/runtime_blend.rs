//! A blended material added while frames run to a renderer whose install-time library had
//! none, on lavapipe with validation: from the frame an object names it, the object is drawn
//! blended over what lies behind, the same picture as a renderer installed with that material,
//! on both culling backends.

use std::sync::Arc;

use culling::CullingBackend;
use ecs::{scene, Aabb, BaseColor, Camera, MaterialHandle, Mesh, MeshHandle, Transform};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::{install_render, BitsReadback, Material, MeshLibrary, RenderMeshes, RenderReport, RenderSetup};

const WIDTH: u32 = 48;
const HEIGHT: u32 = 32;

/// The blended material's id: after the plain one.
const GLASS: u32 = 1;

/// The pixel at the centre of the image.
fn centre(image: &[u8]) -> [u8; 4] {
    let at = ((HEIGHT / 2 * WIDTH + WIDTH / 2) * 4) as usize;
    image[at..at + 4].try_into().expect("four bytes")
}

/// Renders a red cube behind a half-clear white one for six frames; from frame 3 the white
/// cube names the blended material, which the library has from install (`installed`) or the
/// game adds then. Returns the images of frames 2 and 5.
fn render(device: &Arc<GpuDevice>, backend: CullingBackend, installed: bool) -> [Vec<u8>; 2] {
    let mut library = MeshLibrary::with_unit_cube();
    library.add_material(Material::default()).expect("plain");
    if installed {
        library.add_material(Material { blend: true, ..Material::default() }).expect("glass");
    }
    let setup = RenderSetup {
        shadows: false,
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: 8,
        meshes: library,
        clear_color: [0.0, 0.0, 0.0, 1.0],
        bits: BitsReadback::Wait,
        passes: Vec::new(),
    };
    let mut app = runtime::App::with_threads(1);
    install_render(&mut app, setup).expect("a device is there");
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO));
    let bounds = Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5));
    let cube = |material| Mesh::new(MeshHandle(0), MaterialHandle(material), bounds);
    let red = scene::spawn_mesh(app.world_mut(), cube(0), Transform::from_translation(Vec3::new(0.0, 0.0, -1.0)));
    app.world_mut().insert_one(red, BaseColor([1.0, 0.0, 0.0, 1.0])).expect("spawned");
    let front = Transform { scale: Vec3::splat(1.5), ..Transform::from_translation(Vec3::new(0.0, 0.0, 1.0)) };
    let white = scene::spawn_mesh(app.world_mut(), cube(0), front);
    app.world_mut().insert_one(white, BaseColor([1.0, 1.0, 1.0, 0.5])).expect("spawned");
    let mut images = Vec::new();
    for frame in 0..6 {
        if frame == 3 {
            if !installed {
                let added =
                    app.resource::<RenderMeshes>().add_material(Material { blend: true, ..Material::default() });
                assert_eq!(added, Ok(GLASS), "{backend:?}: the id after the plain material");
            }
            app.world_mut().get::<&mut Mesh>(white).expect("spawned").material = MaterialHandle(GLASS);
        }
        app.resource_mut::<renderer::Screenshots>().request(renderer::COLOR);
        app.run_frame();
        let error = app.resource::<RenderReport>().error.clone();
        assert!(error.is_none(), "{backend:?} frame {frame}: {error:?}");
        let image = app.resource_mut::<renderer::Screenshots>().take().pop().expect("taken").rgba8;
        if frame == 2 || frame == 5 {
            images.push(image);
        }
    }
    images.try_into().expect("two images")
}

#[test]
fn a_blended_material_added_at_run_time_draws_blended() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        let [opaque, added] = render(&device, backend, false);
        let [_, installed] = render(&device, backend, true);
        let [r, g, b, _] = centre(&opaque);
        assert!(r > 0 && r == g && g == b, "{backend:?}: the opaque white cube hides the red one: {r} {g} {b}");
        let [r, g, b, _] = centre(&added);
        assert!(r > g && g > 0 && g == b, "{backend:?}: the red cube shows through the added glass: {r} {g} {b}");
        assert!(added == installed, "{backend:?}: the same picture as a renderer installed with the glass");
    }
    assert_no_validation_messages(&device);
}
