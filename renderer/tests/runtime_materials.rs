//! Materials added, replaced and removed while the game runs, on lavapipe with validation:
//! a world starts with one material; a few frames in, forty materials are added (the GPU
//! table grows past its first size) and then an alpha-masked one, named in the same frame by
//! a new cube whose colour's alpha is under the cutoff (so it draws as a hole); later the
//! material is replaced by an opaque one under the same id (the cube shows), masked again
//! (a hole again), then removed while the cube still names it (the cube draws with the
//! default material, opaque). Every frame,
//! serial and pipelined, GPU and CPU culling: the truth finds nothing hidden that shows and
//! the same picture as with culling off, and bad ids are named errors.

mod lit_cube;

use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{scene, Aabb, BaseColor, Camera, MaterialHandle, Mesh, MeshHandle, Transform};
use glam::Vec3;
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::truth::{check_frame, ReferenceRenderer};
use renderer::{
    install_render_to, lock_capture, BitsReadback, FrameInFlight, HeadlessTarget, Material, MaterialError, MeshLibrary,
    RenderMeshes, RenderReport, RenderSetup, SharedCapture,
};

const WIDTH: u32 = 64;
const HEIGHT: u32 = 48;
const SKY: [f32; 4] = [0.1, 0.2, 0.3, 1.0];
/// The frame the materials are added and the masked cube spawned in.
const ADDED: u64 = 2;
/// The frame its material is replaced by an opaque one.
const REPLACED: u64 = 6;
/// The frame its material is masked again.
const REMASKED: u64 = 9;
/// The frame its material is removed.
const REMOVED: u64 = 12;
const FRAMES: u64 = 16;
/// Materials added before the masked one: the table outgrows its first entry.
const FILLERS: u32 = 40;

/// The lit cube with one opaque material.
fn library() -> MeshLibrary {
    let mut library = lit_cube();
    library.add_material(Material::default()).expect("a plain material");
    library
}

fn app(device: &Arc<GpuDevice>, backend: CullingBackend, pipelined: bool) -> (runtime::App, SharedCapture) {
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: 16,
        meshes: library(),
        clear_color: SKY,
        bits: BitsReadback::Wait,
        passes: Vec::new(),
        shadows: false,
    };
    let mut app = runtime::App::with_threads(2);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    ecs::install(&mut app);
    app.resource_mut::<ecs::RenderSettings>().pipelined_frames = pipelined;
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 2.0, 6.0), Vec3::ZERO));
    for x in [-2.5f32, 2.5] {
        let mesh = Mesh::new(MeshHandle(0), MaterialHandle(0), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
        scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(Vec3::new(x, 0.0, -1.0)));
    }
    (app, capture)
}

/// Runs the frames, checking each; returns the objects with pixels, frame by frame.
fn run(device: &Arc<GpuDevice>, backend: CullingBackend, pipelined: bool) -> Vec<usize> {
    let (mut app, capture) = app(device, backend, pipelined);
    let mut reference =
        ReferenceRenderer::with_device(Arc::clone(device), WIDTH, HEIGHT, 16, library(), SKY).expect("a reference");
    let materials = app.resource::<RenderMeshes>().clone();
    let mut masked = None;
    let mut shown = Vec::new();
    let mut material_bytes = 0;
    for frame in 0..FRAMES {
        let label = format!("{backend:?} pipelined {pipelined} frame {frame}");
        if frame == ADDED {
            for filler in 0..FILLERS {
                let material = Material { double_sided: filler % 2 == 0, ..Material::default() };
                let id = materials.add_material(material).expect("a valid material");
                assert_eq!(reference.add_material(material), Ok(id));
            }
            let material = Material { alpha_cutoff: Some(0.5), ..Material::default() };
            let id = materials.add_material(material).expect("a valid material");
            assert_eq!(id, 1 + FILLERS, "{label}: ids follow the install-time table");
            assert_eq!(reference.add_material(material), Ok(id));
            let mesh = Mesh::new(MeshHandle(0), MaterialHandle(id), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
            let entity =
                scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(Vec3::new(0.0, 0.0, -1.0)));
            // Alpha under the cutoff: a hole while the material masks.
            app.world_mut().insert_one(entity, BaseColor::from_rgba8([230, 120, 40, 64])).expect("spawned");
            masked = Some(id);
        }
        if frame == REPLACED {
            let id = masked.expect("added");
            let opaque = Material { double_sided: true, ..Material::default() };
            materials.replace_material(id, opaque).expect("a known material");
            reference.replace_material(id, opaque).expect("the same material");
        }
        if frame == REMASKED {
            let id = masked.expect("added");
            let material = Material { alpha_cutoff: Some(0.5), ..Material::default() };
            materials.replace_material(id, material).expect("a known material");
            reference.replace_material(id, material).expect("the same material");
        }
        if frame == REMOVED {
            let id = masked.expect("added");
            assert_eq!(materials.remove_material(id), Ok(()));
            reference.remove_material(id).expect("the same material");
            assert_eq!(materials.remove_material(id), Err(MaterialError::Removed(id)), "{label}");
            assert_eq!(materials.replace_material(id, Material::default()), Err(MaterialError::Removed(id)));
            assert_eq!(materials.remove_material(9999), Err(MaterialError::Unknown(9999)), "{label}");
            let bad = Material { texture: Some(7), ..Material::default() };
            assert!(matches!(materials.add_material(bad), Err(MaterialError::Invalid(_))), "{label}");
        }
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let capture = lock_capture(&capture);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{label}: {:?}", report.error);
        material_bytes += report.upload.material_bytes;
        let (world, visibility) = (app.world(), app.resource::<Visibility>());
        let checked =
            check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None).expect("the truth answers");
        assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
        assert_eq!(checked.differing_pixels, 0, "{label}: culling changed the picture");
        shown.push(checked.truth.objects_with_pixels);
    }
    assert!(material_bytes >= u64::from(FILLERS + 1) * 16, "{backend:?} pipelined {pipelined}: {material_bytes}");
    assert_no_validation_messages(device);
    shown
}

#[test]
fn materials_added_replaced_and_removed_while_frames_run_draw_at_once() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        for pipelined in [false, true] {
            let shown = run(&device, backend, pipelined);
            let label = format!("{backend:?} pipelined {pipelined}: {shown:?}");
            for (frame, &objects) in shown.iter().enumerate() {
                let frame = frame as u64;
                // The masked cube is a hole until replaced, and again once masked again, until
                // its material is removed (it then draws with the default, opaque).
                let hole = (ADDED..REPLACED).contains(&frame) || (REMASKED..REMOVED).contains(&frame);
                let expected = if frame < ADDED || hole { 2 } else { 3 };
                assert_eq!(objects, expected, "{label}: frame {frame}");
            }
        }
    }
}
