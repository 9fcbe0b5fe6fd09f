//! Picking on lavapipe with validation: a pick at the pixel of a known object returns it on
//! both culling backends, the sky and bad input give `None` with a reason; a request answers
//! a frame later, never waiting, what the waiting pick answers; an object of a mesh added
//! while frames run is picked.

use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{scene, Camera, Transform};
use glam::{Vec3, Vec4Swizzles};
use overlay::{PickMiss, Picking};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::{install_render, BitsReadback, MeshLibrary, MeshVertices, RenderMeshes, RenderSetup};
use runtime::hecs::Entity;

const WIDTH: u32 = 320;
const HEIGHT: u32 = 240;

/// Three cubes in a row in front of the camera, culled by `backend`; the cubes.
fn cubes(device: &Arc<GpuDevice>, backend: CullingBackend) -> (runtime::App, Vec<Entity>) {
    let setup = RenderSetup {
        shadows: false,
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: 8,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.2, 0.4, 0.6, 1.0],
        bits: BitsReadback::Wait,
        passes: Vec::new(),
    };
    let mut app = runtime::App::with_threads(1);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    install_render(&mut app, setup).expect("a device is there");
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 8.0), Vec3::ZERO));
    let cubes = (0..3)
        .map(|index| {
            let place = Transform::from_translation(Vec3::new(index as f32 * 2.0 - 2.0, 0.0, 0.0));
            scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), place)
        })
        .collect();
    app.run_frames(3);
    (app, cubes)
}

/// The pixel `point` projects to in the main view (rows from the top).
fn pixel_of(app: &runtime::App, point: Vec3) -> (u32, u32) {
    let visibility = app.resource::<Visibility>();
    let view = visibility.view().expect("a view");
    let clip = view.view_projection * point.extend(1.0);
    let ndc = clip.xy() / clip.w;
    let x = (0.5 + 0.5 * ndc.x) * WIDTH as f32;
    let y = (0.5 - 0.5 * ndc.y) * HEIGHT as f32;
    (x as u32, y as u32)
}

fn picks(backend: CullingBackend) {
    let Some(device) = gpu_test_context() else { return };
    let (app, cubes) = cubes(&device, backend);
    let mut picking = Picking::new(Some(Arc::clone(&device)), MeshLibrary::with_unit_cube());
    for (index, &cube) in cubes.iter().enumerate() {
        let (x, y) = pixel_of(&app, Vec3::new(index as f32 * 2.0 - 2.0, 0.0, 0.0));
        let started = std::time::Instant::now();
        assert_eq!(picking.at(&app, x, y), Ok(cube), "cube {index} at ({x}, {y}) ({backend:?})");
        if index == 2 {
            println!("pick ({backend:?}): {:.3} ms, waited for", started.elapsed().as_secs_f64() * 1e3);
        }
    }
    assert_eq!(picking.at(&app, 2, 2), Err(PickMiss::Sky), "the corner shows the sky");
    let outside = picking.at(&app, WIDTH, 0);
    assert_eq!(outside, Err(PickMiss::OutsideView { pixel: (WIDTH, 0), size: (WIDTH, HEIGHT) }));
    let mut without_device = Picking::new(None, MeshLibrary::with_unit_cube());
    assert!(matches!(without_device.at(&app, 10, 10), Err(PickMiss::NoDevice(_))));
    assert_no_validation_messages(&device);
}

#[test]
fn a_pick_returns_the_object_at_its_pixel_with_gpu_culling() {
    picks(CullingBackend::Gpu);
}

#[test]
fn a_pick_returns_the_object_at_its_pixel_with_cpu_culling() {
    picks(CullingBackend::Cpu);
}

/// Requests the pixel, runs frames until the answer comes (polled before each, never
/// waiting); the answer, the frames it took and the CPU milliseconds of the request.
fn request_and_poll(
    app: &mut runtime::App,
    picking: &mut Picking,
    (x, y): (u32, u32),
) -> (Result<Entity, PickMiss>, u32, f64) {
    let started = std::time::Instant::now();
    picking.request(app, x, y).expect("nothing else is in flight");
    let request_ms = started.elapsed().as_secs_f64() * 1e3;
    assert_eq!(picking.request(app, x, y), Err(PickMiss::Pending), "one request at a time");
    for frames in 0..8 {
        let started = std::time::Instant::now();
        let polled = picking.poll();
        assert!(started.elapsed().as_secs_f64() < 0.05, "a poll does not wait");
        if let Some(answer) = polled {
            assert!(!picking.is_pending());
            return (answer, frames, request_ms);
        }
        app.run_frame();
    }
    panic!("no answer to ({x}, {y}) in 8 frames");
}

fn requests(backend: CullingBackend) {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, cubes) = cubes(&device, backend);
    let mut waiting = Picking::new(Some(Arc::clone(&device)), MeshLibrary::with_unit_cube());
    let mut requesting = Picking::new(Some(Arc::clone(&device)), MeshLibrary::with_unit_cube());
    assert_eq!(requesting.poll(), None, "nothing asked, nothing answered");
    let mut pixels: Vec<(u32, u32)> =
        (0..cubes.len()).map(|index| pixel_of(&app, Vec3::new(index as f32 * 2.0 - 2.0, 0.0, 0.0))).collect();
    pixels.push((2, 2));
    let mut latencies = Vec::new();
    for (index, &pixel) in pixels.iter().enumerate() {
        let expected = waiting.at(&app, pixel.0, pixel.1);
        let (answer, frames, request_ms) = request_and_poll(&mut app, &mut requesting, pixel);
        match cubes.get(index) {
            Some(&cube) => assert_eq!(answer, Ok(cube), "cube {index} at {pixel:?} ({backend:?})"),
            None => assert_eq!(answer, Err(PickMiss::Sky), "the sky at {pixel:?} ({backend:?})"),
        }
        assert_eq!(answer, expected, "the request answers what the waiting pick does");
        assert!(frames <= 2, "answered {frames} frames after the request");
        println!("request ({backend:?}) at {pixel:?}: {request_ms:.3} ms CPU to ask, answered after {frames} frames");
        latencies.push(frames);
    }
    // Bad input is answered by the next poll, without drawing.
    let outside = request_and_poll(&mut app, &mut requesting, (WIDTH, 0)).0;
    assert_eq!(outside, Err(PickMiss::OutsideView { pixel: (WIDTH, 0), size: (WIDTH, HEIGHT) }));
    let mut without_device = Picking::new(None, MeshLibrary::with_unit_cube());
    assert!(matches!(request_and_poll(&mut app, &mut without_device, (10, 10)), (Err(PickMiss::NoDevice(_)), 0, _)));
    println!("request latency ({backend:?}): {latencies:?} frames");
    assert_no_validation_messages(&device);
}

#[test]
fn a_request_answers_a_frame_later_what_the_waiting_pick_answers_gpu_culled() {
    requests(CullingBackend::Gpu);
}

#[test]
fn a_request_answers_a_frame_later_what_the_waiting_pick_answers_cpu_culled() {
    requests(CullingBackend::Cpu);
}

#[test]
fn a_pick_finds_an_object_of_a_mesh_added_while_frames_run() {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, cubes) = cubes(&device, CullingBackend::Gpu);
    let mut picking = Picking::new(Some(Arc::clone(&device)), MeshLibrary::with_unit_cube());
    // The id renderer is made with the installed meshes at the first pick.
    let (x, y) = pixel_of(&app, Vec3::ZERO);
    assert_eq!(picking.at(&app, x, y), Ok(cubes[1]), "the middle cube before the addition");
    let sphere = scene::uv_sphere(16);
    let vertices = MeshVertices { positions: &sphere.positions, normals: &sphere.normals, uvs: &[] };
    let ids = app.resource::<RenderMeshes>().add_mesh_levels(vertices, &[(&sphere.indices, &[])]).expect("added");
    let mesh =
        ecs::Mesh::new(ecs::MeshHandle(ids.start), ecs::MaterialHandle(0), ecs::Aabb::new(-Vec3::ONE, Vec3::ONE));
    let above = Vec3::new(0.0, 2.0, 0.0);
    let ball = scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(above));
    app.run_frames(3);
    let (x, y) = pixel_of(&app, above);
    assert_eq!(picking.at(&app, x, y), Ok(ball), "the added mesh's object at ({x}, {y})");
    let (x, y) = pixel_of(&app, Vec3::ZERO);
    assert_eq!(picking.at(&app, x, y), Ok(cubes[1]), "the middle cube after it");
    assert_no_validation_messages(&device);
}

#[test]
fn no_view_no_pick() {
    let mut app = runtime::App::with_threads(1);
    culling::install(&mut app);
    app.run_frame();
    let mut picking = Picking::new(None, MeshLibrary::with_unit_cube());
    assert_eq!(picking.at(&app, 0, 0), Err(PickMiss::NoView));
}
