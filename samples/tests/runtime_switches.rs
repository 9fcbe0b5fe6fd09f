//! The overlay's runtime switches, on lavapipe with validation: apps made with shadows (one
//! with the fog and outline post-processes), their graphs built once. Switched off between
//! frames, the post-processes leave the picture of a frame made without them; shadows off
//! draw no shadow view and the wall's shadow leaves the picture; switched back on, the first
//! pictures return. The pass count stays
//! (no new graph).

// The renderer tests' lit cube, one definition for both crates' tests.
#[path = "../../renderer/tests/lit_cube/mod.rs"]
mod lit_cube;

use std::sync::Arc;

use culling::CullingBackend;
use ecs::{scene, Camera, DirectionalLight, ShadowCaster, ShadowSettings, Transform};
use glam::{Quat, Vec3};
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice, RenderGraph};
use renderer::{install_render, BitsReadback, RenderReport, RenderSetup};
use samples::frame_passes::{add_switched_frame_passes, BobClock, FramePassChoice, PostSwitch};

const WIDTH: u32 = 96;
const HEIGHT: u32 = 64;
const CAPACITY: u32 = 32;

/// A lit scene (a sun, a ground, a wall and cubes casting) with shadows, and the fog and
/// outline passes when `post` is given.
fn app(device: &Arc<GpuDevice>, post: Option<PostSwitch>) -> runtime::App {
    let clock = BobClock::default();
    let passes: Vec<renderer::AddPasses> = match post {
        Some(post) => {
            let choice = FramePassChoice { fog: true, outline: true, ..FramePassChoice::default() };
            vec![Box::new(move |graph: &mut RenderGraph| {
                add_switched_frame_passes(graph, &choice, CAPACITY, &clock, &post)
            })]
        }
        None => Vec::new(),
    };
    let setup = RenderSetup {
        shadows: true,
        backend: CullingBackend::Cpu,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: CAPACITY,
        meshes: lit_cube(),
        clear_color: [0.1, 0.2, 0.3, 1.0],
        bits: BitsReadback::None,
        passes,
    };
    let mut app = runtime::App::with_threads(1);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    ecs::install(&mut app);
    {
        let mut settings = app.resource_mut::<ShadowSettings>();
        settings.atlas_resolution = 1024;
        settings.cascade_resolution = 256;
        settings.max_distance = 40.0;
    }
    install_render(&mut app, setup).expect("a device is there");
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(1.0, 4.0, 10.0), Vec3::ZERO));
    // The sun shines towards the camera's side of the wall: its shadow lies in view.
    let sun = Quat::from_rotation_arc(Vec3::NEG_Z, Vec3::new(-0.4, -1.0, 0.6).normalize());
    app.world_mut().spawn((Transform::from_translation_rotation(Vec3::ZERO, sun), DirectionalLight::default()));
    let ground = Transform::from_translation(Vec3::new(0.0, -1.0, 0.0)).with_scale(Vec3::new(16.0, 0.2, 16.0));
    let wall = Transform::from_translation(Vec3::new(0.0, 0.5, 0.0)).with_scale(Vec3::new(6.0, 3.0, 0.3));
    for place in [ground, wall] {
        let entity = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), place);
        app.world_mut().insert_one(entity, ShadowCaster).expect("spawned");
    }
    app
}

/// Runs four frames (the last settles anything the first started) and returns the last's
/// `color` and the frame's pass count.
fn picture(app: &mut runtime::App) -> (Vec<u8>, usize) {
    app.run_frames(3);
    app.resource_mut::<renderer::Screenshots>().request(renderer::COLOR);
    app.run_frame();
    let report = app.resource::<RenderReport>();
    assert!(report.error.is_none(), "{:?}", report.error);
    let passes = report.passes.len();
    drop(report);
    (app.resource_mut::<renderer::Screenshots>().take().pop().expect("taken").rgba8, passes)
}

fn set_shadows(app: &mut runtime::App, on: bool) {
    app.resource_mut::<ShadowSettings>().enabled = on;
}

#[test]
fn post_processes_and_shadows_switch_between_frames_without_a_new_graph() {
    let Some(device) = gpu_test_context() else { return };
    let switch = PostSwitch::default();
    let mut switched = app(&device, Some(switch.clone()));
    let mut plain = app(&device, None);

    let (with_post, passes) = picture(&mut switched);
    let (without_post, _) = picture(&mut plain);
    assert_ne!(with_post, without_post, "fog and outline change the picture");
    switch.set(false);
    let (post_off, passes_off) = picture(&mut switched);
    assert_eq!(post_off, without_post, "switched off: the picture of a frame without them");
    assert_eq!(passes_off, passes, "the same graph");
    switch.set(true);
    assert_eq!(picture(&mut switched).0, with_post, "switched on again");

    let views = |app: &runtime::App| app.resource::<RenderReport>().shadows.views.len();
    assert!(views(&plain) > 0, "the sun's cascades are drawn");
    set_shadows(&mut plain, false);
    let (shadows_off, passes_off) = picture(&mut plain);
    assert_eq!(views(&plain), 0, "switched off: no shadow view drawn");
    let lit = shadows_off.iter().zip(&without_post).filter(|(off, on)| off != on).count();
    assert!(lit > 100, "the wall's shadow is gone: {lit} bytes differ");
    set_shadows(&mut plain, true);
    let (shadows_on, passes_on) = picture(&mut plain);
    assert!(views(&plain) > 0, "switched on again");
    assert_eq!(passes_off, passes_on, "the same graph");
    assert_eq!(shadows_on, without_post, "the picture of before");
    assert_no_validation_messages(&device);
}
