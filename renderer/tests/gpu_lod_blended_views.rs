//! Translucent objects of a GPU-culled split-screen frame draw each window view's own levels
//! (`blended_levels.comp`), on lavapipe with validation: two cameras, each near one group of
//! cubes and far from the other, so each view picks other levels of the same translucent
//! objects. With chains of the distance rule and of the error rule, every view's rectangle
//! equals the unculled reference drawn at the levels the CPU picked for that view (the truth
//! draws each view's levels, translucent objects included), and nothing owning a pixel was
//! left out of its bits. On the CPU backend the blended pass draws each view's objects at the
//! levels of that view's host list, and every rectangle equals the same truth.

use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::ViewTarget;
use ecs::{scene, Aabb, Camera, CameraRect, Lod, LodLevel, MaterialHandle, Mesh, MeshHandle, ResolvedViews, Transform};
use glam::Vec3;
use meshes::{Material, MeshVertices, UNIT_CUBE_INDICES, UNIT_CUBE_POSITIONS};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::truth::{check_gpu_view, check_view, ReferenceRenderer};
use renderer::{
    install_render_to, lock_capture, BitsReadback, FrameInFlight, HeadlessTarget, MeshLibrary, RenderReport,
    RenderSetup,
};

const SKY: [f32; 4] = [0.1, 0.2, 0.3, 1.0];
const WIDTH: u32 = 128;
const HEIGHT: u32 = 64;
const FRAMES: u64 = 3;
/// The translucent material (the library's second).
const GLASS: u32 = 1;

/// The unit cube (mesh 0) and a chain of three levels of it (meshes 1-3: the whole cube, four
/// faces, two faces), with `errors` (the error rule) or none (the distance rule); an opaque
/// material and a blended one.
fn library(errors: Option<[f32; 3]>) -> MeshLibrary {
    let mut library = MeshLibrary::with_unit_cube();
    let normals = [[0.0, 0.0, 1.0]; 8];
    let vertices = MeshVertices { positions: &UNIT_CUBE_POSITIONS, normals: &normals, uvs: &[] };
    let levels = [&UNIT_CUBE_INDICES[..36], &UNIT_CUBE_INDICES[..24], &UNIT_CUBE_INDICES[..12]];
    let levels: Vec<(&[u32], &[meshes::Meshlet])> = levels.iter().map(|indices| (*indices, &[][..])).collect();
    let chain = library.add_mesh_levels(vertices, &levels).expect("a chain");
    if let Some(errors) = errors {
        library.set_level_errors(chain, &errors).expect("errors of the whole chain");
    }
    assert_eq!(library.add_material(Material::default()).expect("an opaque material"), 0);
    let glass = library.add_material(Material { blend: true, double_sided: true, ..Material::default() });
    assert_eq!(glass.expect("a blended material"), GLASS);
    library
}

/// The app on `backend`, with two groups of cubes of the chain 10 m apart, two of every three
/// translucent.
fn app(
    device: &Arc<GpuDevice>,
    errors: Option<[f32; 3]>,
    backend: CullingBackend,
) -> (runtime::App, renderer::SharedCapture) {
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: 64,
        meshes: library(errors),
        clear_color: SKY,
        bits: BitsReadback::Wait,
        passes: Vec::new(),
        shadows: false,
    };
    let mut app = runtime::App::with_threads(2);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    ecs::install(&mut app);
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    let bounds = Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5));
    let distances = if errors.is_some() { [f32::INFINITY; 3] } else { [8.0, 16.0, f32::INFINITY] };
    let levels: Arc<[LodLevel]> = distances
        .iter()
        .enumerate()
        .map(|(level, &max_distance)| LodLevel { mesh: MeshHandle(level as u32 + 1), max_distance })
        .collect();
    for group in [-5.0f32, 5.0] {
        for index in 0..6u32 {
            let place = Vec3::new(group + (index % 3) as f32 * 1.8 - 1.8, 0.0, (index / 3) as f32 * 1.8);
            let mut transform = Transform::from_translation(place);
            transform.rotation = glam::Quat::from_rotation_y(0.5 + index as f32 * 0.4);
            let material = MaterialHandle(if index % 3 == 0 { 0 } else { GLASS });
            let entity = scene::spawn_mesh(app.world_mut(), Mesh::new(MeshHandle(1), material, bounds), transform);
            let lod = Lod { levels: Arc::clone(&levels), bias: 1.0 };
            let alpha = if material.0 == GLASS { 0.5 } else { 1.0 };
            let color = ecs::BaseColor([0.2 + 0.1 * index as f32, 0.8, 0.3, alpha]);
            app.world_mut().insert(entity, (lod, color)).expect("spawned");
        }
    }
    (app, capture)
}

/// Runs the split-screen frames and checks each view against the truth; returns whether some
/// translucent object was drawn at another level in each view.
fn check_views(device: &Arc<GpuDevice>, errors: Option<[f32; 3]>, backend: CullingBackend) -> bool {
    let (mut app, capture) = app(device, errors, backend);
    // Each eye nearer one group than the other, both groups in both views.
    let left = scene::look_at(Vec3::new(-15.0, 3.0, 9.0), Vec3::ZERO);
    let right = scene::look_at(Vec3::new(15.0, 3.0, 9.0), Vec3::ZERO);
    let first = scene::spawn_camera(app.world_mut(), Camera::default(), left);
    let second = scene::spawn_camera(app.world_mut(), Camera { order: 1, ..Camera::default() }, right);
    app.world_mut().insert_one(first, CameraRect::new(0.0, 0.0, 0.5, 1.0)).expect("a camera");
    app.world_mut().insert_one(second, CameraRect::new(0.5, 0.0, 0.5, 1.0)).expect("a camera");
    let mut reference =
        ReferenceRenderer::with_device(Arc::clone(device), WIDTH, HEIGHT, 64, library(errors), SKY).expect("reference");
    let mut differ = false;
    for frame in 0..FRAMES {
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
        let views = app.resource::<ResolvedViews>();
        let visibility = app.resource::<Visibility>();
        assert_eq!(views.len(), 2);
        let mut view_levels = Vec::new();
        for view in views.views() {
            let ViewTarget::Window(rect) = &view.target else { panic!("window views") };
            let rect = [rect.x, rect.y, rect.width, rect.height];
            let index = usize::from(views.main() != Some(view.id));
            let capture = lock_capture(&capture);
            let image = (&capture.pixels[..], capture.extent);
            let answers = (app.world(), &*visibility);
            let checked = match backend {
                CullingBackend::Gpu => check_gpu_view(&mut reference, image, rect, answers, (view.id, index), &report),
                _ => check_view(&mut reference, image, rect, answers.0, answers.1, view.id),
            };
            let checked = checked.expect("the truth answers");
            let label = format!("{backend:?}, errors {errors:?}, frame {frame} view {}", view.id.0);
            assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
            assert_eq!(checked.differing_pixels, 0, "{label}: the view's levels differ from the CPU's");
            let answer = visibility.for_view(view.id).expect("an answer");
            let draws = &visibility.objects().draws;
            let translucent = |slot: u32| draws[slot as usize].material.0 == GLASS;
            let mut levels: Vec<_> = answer
                .visible()
                .iter()
                .enumerate()
                .filter(|&(_, &slot)| translucent(slot))
                .map(|(at, &slot)| (slot, answer.draw(at)))
                .collect();
            levels.sort_by_key(|(slot, _)| *slot);
            view_levels.push(levels);
        }
        differ |= view_levels[0]
            .iter()
            .any(|(slot, mesh)| view_levels[1].iter().any(|(other, other_mesh)| other == slot && other_mesh != mesh));
    }
    drop(app);
    differ
}

#[test]
fn translucent_objects_draw_each_window_views_distance_levels_on_the_gpu() {
    let Some(device) = gpu_test_context() else { return };
    assert!(check_views(&device, None, CullingBackend::Gpu), "the views pick other levels of some translucent object");
    assert_no_validation_messages(&device);
}

#[test]
fn translucent_objects_draw_each_window_views_error_levels_on_the_gpu() {
    let Some(device) = gpu_test_context() else { return };
    assert!(
        check_views(&device, Some([0.0, 0.25, 0.35]), CullingBackend::Gpu),
        "the views pick other levels of some translucent object"
    );
    assert_no_validation_messages(&device);
}

#[test]
fn translucent_objects_draw_each_window_views_levels_on_the_cpu_backend() {
    let Some(device) = gpu_test_context() else { return };
    for errors in [None, Some([0.0, 0.25, 0.35])] {
        let differ = check_views(&device, errors, CullingBackend::Cpu);
        assert!(differ, "errors {errors:?}: the views pick other levels of some translucent object");
    }
    assert_no_validation_messages(&device);
}
