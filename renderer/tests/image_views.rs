//! Image-target views on both culling backends, on lavapipe with validation: a camera
//! rendering into a named image ([`CameraTarget::Image`], a "monitor") beside the window's
//! camera. The image, read back by a user's pass by its name, is the frame that camera draws
//! alone at the image's size (pixel-equal in linear bytes; sRGB-encoded, each texel decodes
//! to within one sRGB step of the direct render's byte), culled equals unculled, and the
//! truth of the monitor view finds nothing owning a pixel left out of its answer. A material
//! shows the monitor through its texture layer in the same frame; a monitor seeing its own
//! screen leaves the screen out (a cycle). Bad input: the camera despawned mid-run (no
//! crash, the view and its image go, a pass still reading it is dropped by name), a target of
//! zero size (refused by name, the window drawn), a user's pass reading an image no camera
//! renders (dropped by name, the frame drawn).

mod headless_app;
mod lit_cube;

use std::sync::{Arc, Mutex};

use culling::{CullingBackend, Visibility};
use ecs::{
    scene, BaseColor, Camera, CameraTarget, ImageFormat, ImageTarget, MaterialHandle, ResolvedViews, Transform,
    ViewError, ViewTarget,
};
use glam::Vec3;
use headless_app::{culling, headless_app_with, AppOptions, SKY};
use lit_cube::lit_cube;
use render_graph::readback::{ImageReadback, ReadbackPass};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::GpuDevice;
use renderer::truth::{check_view, ReferenceRenderer};
use renderer::{lock_capture, points, AddPasses, FrameInFlight, Material, MeshLibrary, RenderReport};

/// The clear colour.
const WIDTH: u32 = 96;
const HEIGHT: u32 = 64;
/// The monitor's side.
const SIDE: u32 = 48;
const MONITOR: &str = "monitor";

/// The window's eye and the monitor's, looking at the cubes from opposite sides.
fn eyes() -> [Transform; 2] {
    [scene::look_at(Vec3::new(1.0, 2.0, 9.0), Vec3::ZERO), scene::look_at(Vec3::new(-2.0, 4.0, -8.0), Vec3::ZERO)]
}

/// An app drawing a `width` x `height` window on the CPU backend, with the cubes and the
/// users' `passes`.
fn app(
    (device, backend): (&Arc<GpuDevice>, CullingBackend),
    (width, height): (u32, u32),
    culled: bool,
    passes: Vec<AddPasses>,
) -> (runtime::App, renderer::SharedCapture) {
    let (mut app, capture) = app_with((device, backend), (width, height), culled, passes, (lit_cube(), false));
    spawn_cubes(app.world_mut());
    (app, capture)
}

/// The cubes: a grid around the origin, and one behind the window's eye.
fn spawn_cubes(world: &mut runtime::hecs::World) {
    for x in [-3.0f32, -1.5, 0.0, 1.5, 3.0] {
        for z in [-1.5f32, 0.0, 1.5] {
            let place = Transform::from_translation(Vec3::new(x, (x + z) * 0.3, z));
            scene::spawn_mesh(world, scene::unit_cube_mesh(), place);
        }
    }
    // Behind the window's eye (outside its view), in the monitor's.
    scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform::from_translation(Vec3::new(0.0, 0.0, 12.0)));
}

/// [`app`] with the meshes and materials of `meshes`, shadows drawn when `shadows`, and no
/// objects.
fn app_with(
    (device, backend): (&Arc<GpuDevice>, CullingBackend),
    (width, height): (u32, u32),
    culled: bool,
    passes: Vec<AddPasses>,
    (meshes, shadows): (MeshLibrary, bool),
) -> (runtime::App, renderer::SharedCapture) {
    let options = AppOptions { shadows, passes, ..AppOptions::default() };
    let prepare = |app: &mut runtime::App| culling(app, culled);
    headless_app_with(device, backend, meshes, (width, height, 64), options, prepare)
}

/// A user's pass copying the image `name` to the host after the geometry, and its copy.
fn readback_of(name: &str) -> (AddPasses, Arc<Mutex<Option<ImageReadback>>>) {
    let copy = Arc::new(Mutex::new(None));
    let kept = Arc::clone(&copy);
    let name = name.to_owned();
    let add: AddPasses = Box::new(move |graph| {
        let (pass, readback) = ReadbackPass::following(&name);
        *kept.lock().expect("not poisoned") = Some(readback);
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, pass)
    });
    (add, copy)
}

/// The monitor's target, sRGB-encoded.
fn monitor(width: u32, height: u32) -> CameraTarget {
    monitor_in(width, height, ImageFormat::Rgba8Srgb)
}

/// The monitor's target in `format`.
fn monitor_in(width: u32, height: u32, format: ImageFormat) -> CameraTarget {
    CameraTarget::Image(ImageTarget::new(MONITOR, width, height, format))
}

/// The frame camera `eye` draws alone into a `SIDE` x `SIDE` window.
fn alone(device: &Arc<GpuDevice>, eye: Transform) -> Vec<u8> {
    let (mut app, capture) = app((device, CullingBackend::Cpu), (SIDE, SIDE), true, Vec::new());
    scene::spawn_camera(app.world_mut(), Camera::default(), eye);
    app.run_frame();
    FrameInFlight::finish(&mut app);
    let capture = lock_capture(&capture);
    assert_eq!(capture.extent, (SIDE, SIDE));
    capture.pixels.clone()
}

/// sRGB-encoded `value` (0 to 1) decoded to linear.
fn srgb_to_linear(value: f32) -> f32 {
    if value <= 0.04045 {
        value / 12.92
    } else {
        ((value + 0.055) / 1.055).powf(2.4)
    }
}

/// Texels of `monitor` (sRGB-encoded RGBA8) whose colour channels do not decode to within one
/// sRGB step of `direct`'s (linear RGBA8) bytes; alpha is compared as it is.
fn off_by_more_than_a_step(monitor: &[u8], direct: &[u8]) -> usize {
    assert_eq!(monitor.len(), direct.len());
    let channel_fits = |encoded: u8, linear: u8| {
        let low = srgb_to_linear(f32::from(encoded.saturating_sub(1)) / 255.0) * 255.0 - 0.5;
        let high = srgb_to_linear(f32::from(encoded.saturating_add(1)) / 255.0) * 255.0 + 0.5;
        (low..=high).contains(&f32::from(linear))
    };
    monitor
        .chunks_exact(4)
        .zip(direct.chunks_exact(4))
        .filter(|(m, d)| !(m[..3].iter().zip(&d[..3]).all(|(&m, &d)| channel_fits(m, d)) && m[3] == d[3]))
        .count()
}

/// Pixels (RGBA8) that differ between `a` and `b`.
fn differing(a: &[u8], b: &[u8]) -> usize {
    assert_eq!(a.len(), b.len());
    a.chunks_exact(4).zip(b.chunks_exact(4)).filter(|(a, b)| a != b).count()
}

/// The monitor as `app`'s last frame left it.
fn read_monitor(copy: &Mutex<Option<ImageReadback>>) -> Vec<u8> {
    let copy = copy.lock().expect("not poisoned");
    let (extent, pixels) = copy.as_ref().expect("the pass was added").read().expect("a copy");
    assert_eq!((extent.width, extent.height), (SIDE, SIDE));
    pixels
}

/// Runs `frames` frames of the window's and the monitor's cameras; returns the app, the
/// monitor camera and the monitor as the last frame drew it.
fn monitor_app(
    (device, backend): (&Arc<GpuDevice>, CullingBackend),
    culled: bool,
    format: ImageFormat,
) -> (runtime::App, runtime::hecs::Entity, Vec<u8>) {
    let (add, copy) = readback_of(MONITOR);
    let (mut app, _capture) = app((device, backend), (WIDTH, HEIGHT), culled, vec![add]);
    let [window, monitor_eye] = eyes();
    scene::spawn_camera(app.world_mut(), Camera::default(), window);
    let camera = scene::spawn_camera(app.world_mut(), Camera { order: -1, ..Camera::default() }, monitor_eye);
    app.world_mut().insert_one(camera, monitor_in(SIDE, SIDE, format)).expect("a camera");
    for frame in 0..3 {
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
        assert!(report.dropped_passes.is_empty(), "frame {frame}: {:?}", report.dropped_passes);
    }
    let pixels = read_monitor(&copy);
    (app, camera, pixels)
}

#[test]
fn a_monitor_view_is_its_camera_drawn_alone_and_answers_for_itself() {
    check_monitor_view(CullingBackend::Cpu);
}

/// With GPU culling the monitor draws its own lists, made from the same answer.
#[test]
fn a_monitor_view_culled_on_the_gpu_backend_is_its_camera_drawn_alone() {
    check_monitor_view(CullingBackend::Gpu);
}

fn check_monitor_view(backend: CullingBackend) {
    let Some(device) = gpu_test_context() else { return };
    let [window, monitor_eye] = eyes();
    let direct = alone(&device, monitor_eye);
    assert_ne!(direct, alone(&device, window), "the cameras see different pictures");
    // Linear bytes: pixel-equal to the camera drawn alone, culled or not.
    let (app, camera, culled) = monitor_app((&device, backend), true, ImageFormat::Rgba8Unorm);
    let (_, _, unculled) = monitor_app((&device, backend), false, ImageFormat::Rgba8Unorm);
    assert_eq!(culled, unculled, "culling changed the monitor's picture");
    assert_eq!(differing(&culled, &direct), 0, "the monitor is not its camera drawn alone");
    // sRGB-encoded: within one sRGB step of it.
    let (_, _, encoded) = monitor_app((&device, backend), true, ImageFormat::Rgba8Srgb);
    assert_eq!(off_by_more_than_a_step(&encoded, &direct), 0, "the sRGB monitor is not its camera drawn alone");
    // The truth of the monitor view against its own answer, the reference at the image's size.
    let views = app.resource::<ResolvedViews>();
    let view = views.of_camera(camera).expect("the monitor's view");
    assert!(matches!(&view.target, ViewTarget::Image(image) if &*image.name == MONITOR));
    assert_ne!(views.main(), Some(view.id), "an image view is never the main view");
    let visibility = app.resource::<Visibility>();
    let mut reference =
        ReferenceRenderer::with_device(Arc::clone(&device), SIDE, SIDE, 64, lit_cube(), SKY).expect("a reference");
    let checked =
        check_view(&mut reference, (&culled, (SIDE, SIDE)), [0, 0, SIDE, SIDE], app.world(), &visibility, view.id)
            .expect("the truth answers");
    assert_eq!(checked.truth.false_hidden, 0, "{:?}", checked.truth);
    assert_eq!(checked.differing_pixels, 0, "the monitor equals its view drawn unculled");
    assert!(checked.truth.objects_with_pixels > 0, "the monitor sees cubes");
    let main = visibility.for_view(views.main().expect("a main view")).expect("an answer");
    let own = visibility.for_view(view.id).expect("an answer");
    assert_ne!(main.visible(), own.visible(), "each view culled for itself");
    drop((views, visibility));
    assert_no_validation_messages(&device);
}

#[test]
fn a_monitor_camera_despawned_mid_run_takes_its_view_and_image_away() {
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        check_despawned_monitor(backend);
    }
}

fn check_despawned_monitor(backend: CullingBackend) {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, camera, _) = monitor_app((&device, backend), true, ImageFormat::Rgba8Srgb);
    app.world_mut().despawn(camera).expect("spawned");
    for frame in 0..2 {
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
        // The pass still reading the image is the users': dropped by name, the frame drawn.
        assert_eq!(report.dropped_passes.len(), 1, "frame {frame}: {:?}", report.dropped_passes);
        assert!(report.dropped_passes[0].contains(MONITOR), "{:?}", report.dropped_passes);
    }
    assert_eq!(app.resource::<ResolvedViews>().len(), 1, "the monitor's view is gone");
    assert_no_validation_messages(&device);
}

#[test]
fn a_zero_size_monitor_is_refused_by_name_and_the_window_drawn() {
    let Some(device) = gpu_test_context() else { return };
    let [window, monitor_eye] = eyes();
    let (mut app, capture) = app((&device, CullingBackend::Cpu), (SIDE, SIDE), true, Vec::new());
    scene::spawn_camera(app.world_mut(), Camera::default(), window);
    let camera = scene::spawn_camera(app.world_mut(), Camera { order: -1, ..Camera::default() }, monitor_eye);
    app.world_mut().insert_one(camera, monitor(0, SIDE)).expect("a camera");
    app.run_frame();
    FrameInFlight::finish(&mut app);
    let report = app.resource::<RenderReport>();
    assert!(report.error.is_none(), "{:?}", report.error);
    drop(report);
    let views = app.resource::<ResolvedViews>();
    assert_eq!(views.len(), 1, "the window's view alone");
    assert!(matches!(views.errors(), [ViewError::ZeroSizeImage { name, .. }] if &**name == MONITOR));
    drop(views);
    assert_eq!(lock_capture(&capture).pixels, alone(&device, window), "the window is drawn as without the monitor");
    assert_no_validation_messages(&device);
}

#[test]
fn a_pass_reading_an_image_no_camera_renders_is_dropped_by_name() {
    let Some(device) = gpu_test_context() else { return };
    let [window, _] = eyes();
    let (add, _copy) = readback_of("no such monitor");
    let (mut app, capture) = app((&device, CullingBackend::Cpu), (SIDE, SIDE), true, vec![add]);
    scene::spawn_camera(app.world_mut(), Camera::default(), window);
    app.run_frame();
    FrameInFlight::finish(&mut app);
    let report = app.resource::<RenderReport>();
    assert!(report.error.is_none(), "{:?}", report.error);
    assert!(
        matches!(&report.dropped_passes[..], [dropped] if dropped.contains("no such monitor")),
        "{:?}",
        report.dropped_passes
    );
    drop(report);
    assert_eq!(lock_capture(&capture).pixels, alone(&device, window), "the frame is drawn");
    assert_no_validation_messages(&device);
}

/// The pixel at the middle of an RGBA8 image `SIDE` pixels wide.
fn middle(pixels: &[u8]) -> [u8; 3] {
    let at = ((SIDE / 2 * SIDE + SIDE / 2) * 4) as usize;
    [pixels[at], pixels[at + 1], pixels[at + 2]]
}

/// A material samples the monitor through its texture layer
/// ([`MeshLibrary::add_view_texture`]): the screen in the window shows what the monitor's
/// camera sees this frame (a red wall, then the sky once it turns), and the layer's grey before
/// any camera renders into it.
#[test]
fn a_material_shows_what_the_monitor_camera_sees_in_the_same_frame() {
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        check_material_shows_the_monitor(backend);
    }
}

fn check_material_shows_the_monitor(backend: CullingBackend) {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, capture) = screen_app((&device, backend), Vec::new());
    let world = app.world_mut();
    scene::spawn_camera(world, Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 8.0), Vec3::new(0.0, 0.0, 5.0)));
    let frame = |app: &mut runtime::App| {
        app.run_frame();
        FrameInFlight::finish(app);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{:?}", report.error);
        middle(&lock_capture(&capture).pixels)
    };
    let [red, green, blue] = frame(&mut app);
    assert!(
        red.abs_diff(green) <= 2 && green.abs_diff(blue) <= 2,
        "no camera yet: the layer's grey, {red} {green} {blue}"
    );
    let at_wall = scene::look_at(Vec3::new(0.0, 0.0, 14.0), Vec3::new(0.0, 0.0, 30.0));
    let camera = scene::spawn_camera(app.world_mut(), Camera { order: -1, ..Camera::default() }, at_wall);
    app.world_mut().insert_one(camera, monitor(SIDE, SIDE)).expect("a camera");
    let [red, green, blue] = frame(&mut app);
    assert!(u32::from(red) > 4 * u32::from(green.max(blue)).max(1), "the red wall on the screen: {red} {green} {blue}");
    // Turned to the sky above: the same frame's screen shows the sky's colour (blue over green
    // over red).
    *app.world_mut().get::<&mut Transform>(camera).expect("the camera") =
        scene::look_at(Vec3::new(0.0, 0.0, 14.0), Vec3::new(0.0, 100.0, 14.5));
    let [red, green, blue] = frame(&mut app);
    assert!(blue > green && green > red, "the sky on the screen: {red} {green} {blue}");
    assert_no_validation_messages(&device);
}

/// An app whose window looks at a screen (a cube at z = 5 whose material shows the monitor),
/// with a red wall behind the window's eye (from z = 20 to 40), and the users' `passes`.
fn screen_app(
    (device, backend): (&Arc<GpuDevice>, CullingBackend),
    passes: Vec<AddPasses>,
) -> (runtime::App, renderer::SharedCapture) {
    let mut meshes = lit_cube();
    // Material 0, the cubes', is untextured.
    meshes.add_material(Material::default()).expect("a material");
    let layer = meshes.add_view_texture(MONITOR).expect("a layer");
    let material = meshes.add_material(Material { texture: Some(layer), ..Material::default() }).expect("a material");
    let (mut app, capture) = app_with((device, backend), (SIDE, SIDE), true, passes, (meshes, false));
    let world = app.world_mut();
    let screen = ecs::Mesh { material: MaterialHandle(material), ..scene::unit_cube_mesh() };
    scene::spawn_mesh(world, screen, Transform::from_translation(Vec3::new(0.0, 0.0, 5.0)));
    let wall_place = Transform::from_translation(Vec3::new(0.0, 0.0, 30.0)).with_scale(Vec3::splat(20.0));
    let wall = scene::spawn_mesh(world, scene::unit_cube_mesh(), wall_place);
    world.insert_one(wall, BaseColor([1.0, 0.0, 0.0, 1.0])).expect("the wall");
    (app, capture)
}

/// A monitor camera that sees its own screen: the screen is left out of its view (a cycle,
/// said once by the image's name), so the monitor shows the red wall behind the screen, and
/// every frame is drawn.
#[test]
fn a_monitor_seeing_its_own_screen_leaves_the_screen_out_of_its_view() {
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        check_own_screen_left_out(backend);
    }
}

/// [`a_monitor_seeing_its_own_screen_leaves_the_screen_out_of_its_view`] on `backend` (on the
/// GPU, the monitor's own cull leaves the screen's slot out).
fn check_own_screen_left_out(backend: CullingBackend) {
    let Some(device) = gpu_test_context() else { return };
    let (add, copy) = readback_of(MONITOR);
    let (mut app, _capture) = screen_app((&device, backend), vec![add]);
    let world = app.world_mut();
    scene::spawn_camera(world, Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 8.0), Vec3::new(0.0, 0.0, 5.0)));
    // In front of the screen, looking through it at the wall.
    let through = scene::look_at(Vec3::new(0.0, 0.0, 2.0), Vec3::new(0.0, 0.0, 30.0));
    let camera = scene::spawn_camera(world, Camera { order: -1, ..Camera::default() }, through);
    world.insert_one(camera, monitor(SIDE, SIDE)).expect("a camera");
    for frame in 0..3 {
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
        assert!(report.dropped_passes.is_empty(), "frame {frame}: {:?}", report.dropped_passes);
        if backend == CullingBackend::Gpu {
            // The GPU culled the monitor, the screen's slot left out (counted with the
            // frustum's rejects) and never drawn.
            let own = report.image_views.iter().find(|own| &*own.name == MONITOR).expect("culled on the GPU");
            assert!(own.stats.frustum_rejected > 0, "frame {frame}: {:?}", own.stats);
        }
        drop(report);
        let [red, green, blue] = middle(&read_monitor(&copy));
        // sRGB-encoded: the wall's red is still far above the other channels.
        assert!(
            u32::from(red) > 2 * u32::from(green.max(blue)).max(1),
            "{backend:?} frame {frame}: the wall, not the screen: {red} {green} {blue}"
        );
    }
    assert_no_validation_messages(&device);
}

/// In a frame with shadows the monitor is lit with the frame's lights and atlas: a monitor
/// through the window camera's own eye shows the window's frame, sun shadows and all, on both
/// backends.
#[test]
fn a_monitor_in_a_frame_with_shadows_is_lit_as_the_frame() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        let (add, copy) = readback_of(MONITOR);
        let (mut app, capture) = app_with((&device, backend), (SIDE, SIDE), true, vec![add], (lit_cube(), true));
        spawn_cubes(app.world_mut());
        let ground = Transform::from_translation(Vec3::new(0.0, -1.5, 0.0)).with_scale(Vec3::new(30.0, 1.0, 30.0));
        scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), ground);
        let sun = Transform::from_translation_rotation(
            Vec3::ZERO,
            glam::Quat::from_rotation_arc(Vec3::NEG_Z, Vec3::new(-0.4, -1.0, -0.3).normalize()),
        );
        app.world_mut().spawn((sun, ecs::DirectionalLight::default()));
        let [window, _] = eyes();
        scene::spawn_camera(app.world_mut(), Camera::default(), window);
        let camera = scene::spawn_camera(app.world_mut(), Camera { order: -1, ..Camera::default() }, window);
        app.world_mut().insert_one(camera, monitor_in(SIDE, SIDE, ImageFormat::Rgba8Unorm)).expect("a camera");
        for frame in 0..3 {
            app.run_frame();
            FrameInFlight::finish(&mut app);
            let report = app.resource::<RenderReport>();
            assert!(report.error.is_none(), "{backend:?} frame {frame}: {:?}", report.error);
            assert!(!report.shadows.views.is_empty(), "{backend:?}: the sun casts");
            let drawn = report.passes.iter().any(|pass| pass.name == "image view monitor");
            assert!(drawn, "{backend:?} frame {frame}: the monitor's passes");
            let shown = lock_capture(&capture).pixels.clone();
            let differ = differing(&read_monitor(&copy), &shown);
            assert_eq!(differ, 0, "{backend:?} frame {frame}: the monitor is the window's frame");
        }
    }
    assert_no_validation_messages(&device);
}
