use glam::{Quat, Vec3};
use hecs::Entity;
use runtime::App;

use super::*;
use crate::camera::Camera;
use crate::scene;
use crate::target::ImageFormat;
use crate::transform::Transform;
use crate::view::{FrameContextExt, HostView};

fn app() -> App {
    let mut app = App::new();
    crate::install(&mut app);
    app
}

fn spawn(app: &mut App, order: i32) -> Entity {
    let camera = Camera { order, ..Camera::default() };
    scene::spawn_camera(app.world_mut(), camera, Transform::from_translation(Vec3::new(order as f32, 0.0, 0.0)))
}

fn image(name: &str, width: u32, height: u32) -> CameraTarget {
    CameraTarget::Image(ImageTarget::new(name, width, height, ImageFormat::Rgba8Srgb))
}

/// Runs a frame; the cameras of the views in render order, and the main view's camera.
fn frame(app: &mut App) -> (Vec<Option<Entity>>, Option<Entity>) {
    app.run_frame();
    let views = app.resource::<ResolvedViews>();
    for (index, view) in views.views().iter().enumerate() {
        assert_eq!(view.id, ViewId(index as u32), "ids are render-order indices");
    }
    (views.views().iter().map(FrameView::camera).collect(), views.main_view().and_then(FrameView::camera))
}

#[test]
fn views_follow_order_then_entity_id() {
    let mut app = app();
    let late = spawn(&mut app, 2);
    let first = spawn(&mut app, -1);
    let tie_a = spawn(&mut app, 0);
    let tie_b = spawn(&mut app, 0);
    let (cameras, main) = frame(&mut app);
    let (low_tie, high_tie) = if tie_a.id() < tie_b.id() { (tie_a, tie_b) } else { (tie_b, tie_a) };
    assert_eq!(cameras, [Some(first), Some(low_tie), Some(high_tie), Some(late)]);
    assert_eq!(main, Some(first), "the main view is the lowest-slot camera, as before");
    assert_eq!(app.resource::<ResolvedViews>().main(), Some(ViewId(0)));
}

#[test]
fn held_main_camera_keeps_its_slot_among_the_views() {
    let mut app = app();
    let held = spawn(&mut app, 5);
    assert_eq!(frame(&mut app).1, Some(held));
    let lower = spawn(&mut app, 0);
    let (cameras, main) = frame(&mut app);
    assert_eq!(cameras, [Some(lower), Some(held)], "render order is by order");
    assert_eq!(main, Some(held), "the held camera stays the main view");
    assert_eq!(app.resource::<ResolvedViews>().main(), Some(ViewId(1)));
}

#[test]
fn refused_image_targets_skip_only_their_view() {
    let mut app = app();
    let main = spawn(&mut app, 0);
    let empty = spawn(&mut app, 1);
    let unnamed = spawn(&mut app, 2);
    let monitor = spawn(&mut app, 3);
    let copy = spawn(&mut app, 4);
    let world = app.world_mut();
    world.insert_one(empty, image("mirror", 0, 64)).unwrap();
    world.insert_one(unnamed, image("", 64, 64)).unwrap();
    world.insert_one(monitor, image("monitor", 256, 128)).unwrap();
    world.insert_one(copy, image("monitor", 32, 32)).unwrap();
    let (cameras, main_camera) = frame(&mut app);
    assert_eq!(cameras, [Some(main), Some(monitor)]);
    assert_eq!(main_camera, Some(main));
    let views = app.resource::<ResolvedViews>();
    let monitor_view = views.of_camera(monitor).expect("the monitor is drawn");
    assert_eq!(monitor_view.view.viewport, Viewport::new(256, 128), "an image view is projected for its image");
    assert!(matches!(&monitor_view.target, ViewTarget::Image(image) if &*image.name == "monitor"));
    let errors = views.errors();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors.contains(&ViewError::ZeroSizeImage { camera: empty, name: "mirror".into() }));
    assert!(errors.contains(&ViewError::UnnamedImage { camera: unnamed }));
    assert!(errors.contains(&ViewError::SharedImage { camera: copy, kept_by: monitor, name: "monitor".into() }));
}

#[test]
fn an_image_camera_is_never_the_main_view() {
    let mut app = app();
    let monitor = spawn(&mut app, -3);
    app.world_mut().insert_one(monitor, image("monitor", 64, 64)).unwrap();
    let (cameras, main) = frame(&mut app);
    assert_eq!((cameras, main), (vec![Some(monitor)], None), "no window camera: no main view");
    let window = spawn(&mut app, 7);
    let (cameras, main) = frame(&mut app);
    assert_eq!(cameras, [Some(monitor), Some(window)]);
    assert_eq!(main, Some(window));
}

#[test]
fn despawned_and_deactivated_cameras_lose_their_view_next_frame() {
    let mut app = app();
    let main = spawn(&mut app, 0);
    let second = spawn(&mut app, 1);
    let third = spawn(&mut app, 2);
    assert_eq!(frame(&mut app).0.len(), 3);
    app.world_mut().despawn(second).unwrap();
    app.world_mut().get::<&mut Camera>(third).unwrap().active = false;
    assert_eq!(frame(&mut app).0, [Some(main)]);
}

#[test]
fn a_host_view_replaces_the_main_view_in_its_slot() {
    let mut app = app();
    let main = spawn(&mut app, 1);
    let other = spawn(&mut app, 3);
    assert_eq!(frame(&mut app).1, Some(main));
    let free = HostView::Free { camera: Camera::default(), position: Vec3::Y, rotation: Quat::IDENTITY };
    app.frame_context_mut().set_host_view(free);
    let (cameras, main_camera) = frame(&mut app);
    assert_eq!(cameras, [None, Some(other)], "the host's view stands where the held camera was");
    assert_eq!(main_camera, None);
    app.frame_context_mut().set_host_view(HostView::Through(other));
    let (cameras, main_camera) = frame(&mut app);
    assert_eq!((cameras, main_camera), (vec![Some(other)], Some(other)), "looked through once, not twice");
}

#[test]
fn split_screen_rectangles_give_each_view_its_half() {
    let mut app = app();
    let left = spawn(&mut app, 0);
    let right = spawn(&mut app, 1);
    app.world_mut().insert_one(left, CameraRect::new(0.0, 0.0, 0.5, 1.0)).unwrap();
    app.world_mut().insert_one(right, CameraRect::new(0.5, 0.0, 0.5, 1.0)).unwrap();
    app.insert_resource(Viewport::new(800, 600));
    app.run_frame();
    let views = app.resource::<ResolvedViews>();
    let rects: Vec<_> = views.views().iter().map(|view| view.target.clone()).collect();
    assert_eq!(
        rects,
        [
            ViewTarget::Window(PixelRect { x: 0, y: 0, width: 400, height: 600 }),
            ViewTarget::Window(PixelRect { x: 400, y: 0, width: 400, height: 600 })
        ]
    );
    assert_eq!(
        views.main_view().unwrap().view.viewport,
        Viewport::new(400, 600),
        "the main view is projected for its half"
    );
}
