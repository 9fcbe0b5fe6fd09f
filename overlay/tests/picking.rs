//! Picking on lavapipe with validation: a pick at the pixel of a known object returns it on
//! both culling backends, the sky and bad input give `None` with a reason; a request answers
//! a frame later, never waiting, what the waiting pick answers; an object of a mesh added
//! while frames run is picked; in a split-screen frame each window view picks in its own
//! rectangle of the window, and an image-target view in its own image.

use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{
    scene, Camera, CameraRect, CameraTarget, ImageFormat, ImageTarget, ResolvedViews, Transform, ViewId, ViewTarget,
};
use glam::{Vec3, Vec4Swizzles};
use overlay::{PickMiss, Picking};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::{install_render, BitsReadback, MeshLibrary, MeshVertices, RenderMeshes, RenderSetup};
use runtime::hecs::Entity;

const WIDTH: u32 = 320;
const HEIGHT: u32 = 240;

/// An app drawing a `WIDTH` x `HEIGHT` window, culled by `backend`, with no camera nor object.
fn app_on(device: &Arc<GpuDevice>, backend: CullingBackend) -> runtime::App {
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
    app
}

/// Three cubes in a row in front of the camera, culled by `backend`; the cubes.
fn cubes(device: &Arc<GpuDevice>, backend: CullingBackend) -> (runtime::App, Vec<Entity>) {
    let mut app = app_on(device, backend);
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
    assert_eq!(outside, Err(PickMiss::OutsideView { pixel: (WIDTH, 0), rect: [0, 0, WIDTH, HEIGHT] }));
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
    pixel: (u32, u32),
) -> (Result<Entity, PickMiss>, u32, f64) {
    request_and_poll_in(app, picking, None, pixel)
}

/// [`request_and_poll`] in view `view` (`None`: the main view).
fn request_and_poll_in(
    app: &mut runtime::App,
    picking: &mut Picking,
    view: Option<ViewId>,
    (x, y): (u32, u32),
) -> (Result<Entity, PickMiss>, u32, f64) {
    let started = std::time::Instant::now();
    let request = |picking: &mut Picking, app: &runtime::App| match view {
        Some(view) => picking.request_view(app, view, x, y),
        None => picking.request(app, x, y),
    };
    request(picking, &*app).expect("nothing else is in flight");
    let request_ms = started.elapsed().as_secs_f64() * 1e3;
    assert_eq!(request(picking, &*app), Err(PickMiss::Pending), "one request at a time");
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
    assert_eq!(outside, Err(PickMiss::OutsideView { pixel: (WIDTH, 0), rect: [0, 0, WIDTH, HEIGHT] }));
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

/// Window pixels and cube places of the split-screen frame: the left and right views and the
/// image view each look at a cube of their own, far outside the others' sight.
const SPLIT_CUBES: [Vec3; 3] = [Vec3::new(-20.0, 0.0, 0.0), Vec3::new(20.0, 0.0, 0.0), Vec3::new(0.0, 20.0, 0.0)];
/// The image-target view's image.
const MONITOR: (u32, u32) = (96, 64);

/// A split-screen frame culled by `backend`: two cameras sharing the window (left and right
/// halves) and a third rendering into an image, each looking at its cube of
/// [`SPLIT_CUBES`]; the cubes and the three views.
fn split_screen(device: &Arc<GpuDevice>, backend: CullingBackend) -> (runtime::App, Vec<Entity>, [ViewId; 3]) {
    let mut app = app_on(device, backend);
    let eyes = SPLIT_CUBES.map(|cube| scene::look_at(cube + Vec3::new(0.0, 1.0, 8.0), cube));
    let rects = [CameraRect::new(0.0, 0.0, 0.5, 1.0), CameraRect::new(0.5, 0.0, 0.5, 1.0)];
    let mut cameras = Vec::new();
    for (order, eye) in eyes.into_iter().enumerate() {
        let camera = Camera { order: order as i32, ..Camera::default() };
        cameras.push(scene::spawn_camera(app.world_mut(), camera, eye));
    }
    for (&camera, rect) in cameras.iter().zip(rects) {
        app.world_mut().insert_one(camera, rect).expect("a camera");
    }
    let monitor = CameraTarget::Image(ImageTarget::new("monitor", MONITOR.0, MONITOR.1, ImageFormat::Rgba8Unorm));
    app.world_mut().insert_one(cameras[2], monitor).expect("a camera");
    let cubes = SPLIT_CUBES
        .iter()
        .map(|&place| scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(place)))
        .collect();
    app.run_frames(3);
    let views = app.resource::<ResolvedViews>();
    let ids: Vec<ViewId> =
        cameras.iter().map(|&camera| views.of_camera(camera).expect("each camera has a view").id).collect();
    drop(views);
    (app, cubes, ids.try_into().expect("three cameras"))
}

/// The rectangle of the window (or of its image) view `view` is drawn in: left, top, width,
/// height.
fn rect_of(app: &runtime::App, view: ViewId) -> [u32; 4] {
    let views = app.resource::<ResolvedViews>();
    match &views.get(view).expect("listed").target {
        ViewTarget::Window(rect) => [rect.x, rect.y, rect.width, rect.height],
        ViewTarget::Image(image) => [0, 0, image.width, image.height],
    }
}

/// The pixel `point` projects to in view `view` (rows from the top, in its rectangle).
fn pixel_in(app: &runtime::App, view: ViewId, point: Vec3) -> (u32, u32) {
    let [left, top, width, height] = rect_of(app, view);
    let visibility = app.resource::<Visibility>();
    let clip = visibility.for_view(view).expect("answered").view().view_projection * point.extend(1.0);
    let ndc = clip.xy() / clip.w;
    (left + ((0.5 + 0.5 * ndc.x) * width as f32) as u32, top + ((0.5 - 0.5 * ndc.y) * height as f32) as u32)
}

fn picks_in_views(backend: CullingBackend) {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, cubes, views) = split_screen(&device, backend);
    let [left, right, monitor] = views;
    assert_eq!(rect_of(&app, left), [0, 0, WIDTH / 2, HEIGHT], "the left half");
    assert_eq!(rect_of(&app, right), [WIDTH / 2, 0, WIDTH / 2, HEIGHT], "the right half");
    let mut picking = Picking::new(Some(Arc::clone(&device)), MeshLibrary::with_unit_cube());
    for (index, &view) in views.iter().enumerate() {
        let pixel = pixel_in(&app, view, SPLIT_CUBES[index]);
        let picked = picking.at_view(&app, view, pixel.0, pixel.1);
        assert_eq!(picked, Ok(cubes[index]), "view {view:?} at {pixel:?} ({backend:?})");
    }
    // The window's pixels: the right cube is at the right half's centre, where the right
    // view drawn over the whole window would show sky.
    let (x, y) = pixel_in(&app, right, SPLIT_CUBES[1]);
    assert!(x > WIDTH / 2 + WIDTH / 8, "the right cube at ({x}, {y}) is in the right half");
    assert_eq!(overlay::window_view_at(&app, x, y), Some(right), "the view under the pixel");
    let main_pick = pixel_in(&app, left, SPLIT_CUBES[0]);
    assert_eq!(picking.at(&app, main_pick.0, main_pick.1), Ok(cubes[0]), "the main view is the left one");
    assert_eq!(overlay::window_view_at(&app, main_pick.0, main_pick.1), Some(left));
    assert_eq!(picking.at_view(&app, right, WIDTH - 2, 2), Err(PickMiss::Sky), "the right view's corner");
    let outside = picking.at_view(&app, right, main_pick.0, main_pick.1);
    let right_rect = [WIDTH / 2, 0, WIDTH / 2, HEIGHT];
    assert_eq!(outside, Err(PickMiss::OutsideView { pixel: main_pick, rect: right_rect }), "a left pixel");
    let past_image = picking.at_view(&app, monitor, MONITOR.0, 0);
    assert_eq!(past_image, Err(PickMiss::OutsideView { pixel: (MONITOR.0, 0), rect: [0, 0, MONITOR.0, MONITOR.1] }));
    assert_eq!(picking.at_view(&app, ViewId(9), 1, 1), Err(PickMiss::UnknownView(ViewId(9))));
    // A request in another view answers what the waiting pick does.
    let (answer, frames, _) = request_and_poll_in(&mut app, &mut picking, Some(right), (x, y));
    assert_eq!(answer, Ok(cubes[1]), "requested in the right view ({backend:?}), answered after {frames} frames");
    let (answer, ..) = request_and_poll_in(&mut app, &mut picking, Some(right), main_pick);
    assert_eq!(answer, Err(PickMiss::OutsideView { pixel: main_pick, rect: right_rect }));
    assert_no_validation_messages(&device);
}

#[test]
fn each_view_of_a_split_screen_frame_picks_in_its_own_rectangle_gpu_culled() {
    picks_in_views(CullingBackend::Gpu);
}

#[test]
fn each_view_of_a_split_screen_frame_picks_in_its_own_rectangle_cpu_culled() {
    picks_in_views(CullingBackend::Cpu);
}
