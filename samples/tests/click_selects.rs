//! An injected click selects: winit's window events (Alt pressed, the cursor moved to a known
//! cube's pixel, the left button pressed) go through the window loop's pointer handling
//! (`samples::window::pointer`), whose pick request and poll select the entity in the
//! overlay, as the window does between its frames. Headless on lavapipe with validation: the
//! pointer path needs no display, the pick a device.

use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{scene, Camera, Transform};
use glam::{Vec3, Vec4Swizzles};
use overlay::{Overlay, Picking};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::vk;
use renderer::{install_render, BitsReadback, MeshLibrary, RenderSetup};
use samples::window::pointer::{poll_pick, request_pick, Pointer, PointerAction};
use winit::dpi::PhysicalPosition;
use winit::event::{DeviceId, ElementState, Modifiers, MouseButton, WindowEvent};
use winit::keyboard::ModifiersState;

const WIDTH: u32 = 320;
const HEIGHT: u32 = 240;

/// The window's pixel (rows from the top) `point` projects to in the main view.
fn pixel_of(app: &runtime::App, point: Vec3) -> (f64, f64) {
    let visibility = app.resource::<Visibility>();
    let clip = visibility.view().expect("a view").view_projection * point.extend(1.0);
    let ndc = clip.xy() / clip.w;
    (f64::from((0.5 + 0.5 * ndc.x) * WIDTH as f32), f64::from((0.5 - 0.5 * ndc.y) * HEIGHT as f32))
}

/// Feeds `events` to the pointer as the window loop does, requesting a pick where it asks;
/// then runs frames, polling before each as the window does, until the pick is answered.
/// Returns the frames it took.
fn click(app: &mut runtime::App, picking: &mut Picking, overlay: &mut Overlay, events: &[WindowEvent]) -> usize {
    let mut pointer = Pointer::default();
    let mut picks = 0;
    for event in events {
        if let PointerAction::Pick { x, y } = pointer.on_event(event) {
            request_pick(picking, app, x, y);
            picks += 1;
        }
    }
    assert_eq!(picks, 1, "one Alt + click, one pick");
    for frames in 0..4 {
        if poll_pick(picking, overlay) {
            return frames;
        }
        app.run_frame();
    }
    panic!("no answer after 4 frames");
}

/// Alt down, the cursor to (`x`, `y`), a left click.
fn alt_click(x: f64, y: f64) -> Vec<WindowEvent> {
    let device_id = DeviceId::dummy();
    vec![
        WindowEvent::ModifiersChanged(Modifiers::from(ModifiersState::ALT)),
        WindowEvent::CursorMoved { device_id, position: PhysicalPosition::new(x, y) },
        WindowEvent::MouseInput { device_id, state: ElementState::Pressed, button: MouseButton::Left },
        WindowEvent::MouseInput { device_id, state: ElementState::Released, button: MouseButton::Left },
    ]
}

#[test]
fn an_injected_alt_click_selects_the_entity_under_the_cursor() {
    let Some(device) = gpu_test_context() else { return };
    let setup = RenderSetup {
        shadows: false,
        backend: CullingBackend::Cpu,
        device: Some(Arc::clone(&device)),
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
    let places = [Vec3::new(-2.0, 0.0, 0.0), Vec3::new(2.0, 0.0, 0.0)];
    let cubes: Vec<_> = places
        .iter()
        .map(|&place| scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(place)))
        .collect();
    app.run_frames(3);
    let mut picking = Picking::new(Some(Arc::clone(&device)), MeshLibrary::with_unit_cube());
    let mut overlay = Overlay::new(false);
    for (&place, &cube) in places.iter().zip(&cubes) {
        let (x, y) = pixel_of(&app, place);
        let frames = click(&mut app, &mut picking, &mut overlay, &alt_click(x, y));
        assert_eq!(overlay.selected(), Some(cube), "the click at ({x:.0}, {y:.0}) selects the cube there");
        assert!(overlay.is_open(), "a selection opens the overlay to show it");
        assert!(frames <= 2, "answered {frames} frames after the click");
    }
    // A click on the sky clears the selection; a click without Alt picks nothing.
    click(&mut app, &mut picking, &mut overlay, &alt_click(3.0, 3.0));
    assert_eq!(overlay.selected(), None);
    let mut pointer = Pointer::default();
    let (x, y) = pixel_of(&app, places[0]);
    let plain = &alt_click(x, y)[1..];
    assert!(plain.iter().all(|event| !matches!(pointer.on_event(event), PointerAction::Pick { .. })));
    assert_no_validation_messages(&device);
}
