//! Tags never describe a view the frame did not have: a frame without a view removes them, a
//! 0x0 viewport leaves everything as it was.

use culling::Visibility;
use ecs::{scene, Camera, CameraSelection, Culled, NoViewReason, Transform, Viewport};
use glam::Vec3;
use runtime::App;

/// A camera at +10 Z looking down -Z, a cube in front of it and one behind it.
fn app() -> (App, runtime::hecs::Entity, runtime::hecs::Entity, runtime::hecs::Entity) {
    let mut app = App::with_threads(2);
    culling::install(&mut app);
    let world = app.world_mut();
    let camera = scene::spawn_camera(world, Camera::default(), Transform::from_translation(Vec3::new(0.0, 0.0, 10.0)));
    let seen = scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform::IDENTITY);
    let behind =
        scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform::from_translation(Vec3::new(0.0, 0.0, 20.0)));
    (app, camera, seen, behind)
}

fn culled(app: &App, entity: runtime::hecs::Entity) -> bool {
    app.world().get::<&Culled>(entity).is_ok()
}

#[test]
fn a_frame_without_a_view_removes_every_tag_and_says_why() {
    let (mut app, camera, seen, behind) = app();
    app.run_frame();
    assert!(culled(&app, behind) && !culled(&app, seen), "the cube behind the camera is culled");

    // The followed target's position became NaN, and the camera with it.
    app.world_mut().get::<&mut Transform>(camera).expect("alive").translation = Vec3::NAN;
    app.run_frame();
    assert_eq!(
        app.resource::<CameraSelection>().no_view_reason(),
        Some(NoViewReason::CameraWithoutFinitePose(camera)),
        "the resolver names the camera and the reason"
    );
    assert!(app.resource::<Visibility>().view().is_none(), "no view this frame");
    assert!(!culled(&app, behind), "with no view, no tag may claim the object is hidden");

    app.world_mut().get::<&mut Transform>(camera).expect("alive").translation = Vec3::new(0.0, 0.0, 10.0);
    app.run_frame();
    assert!(culled(&app, behind), "the next cull tags it again");
    assert_eq!(app.resource::<CameraSelection>().no_view_reason(), None);
}

#[test]
fn a_zero_viewport_renders_nothing_and_leaves_culling_unchanged() {
    let (mut app, camera, seen, behind) = app();
    app.run_frame();
    let before = app.resource::<Visibility>().visible().to_vec();
    *app.resource_mut::<Viewport>() = Viewport { width: 0, height: 0 };
    // Even a camera turned around does not change the answer while minimised.
    app.world_mut().get::<&mut Transform>(camera).expect("alive").rotation =
        glam::Quat::from_rotation_y(std::f32::consts::PI);
    app.run_frames(2);
    assert_eq!(app.resource::<Visibility>().visible(), &before[..], "the last answer is kept");
    assert!(culled(&app, behind) && !culled(&app, seen), "and so are the tags");
    *app.resource_mut::<Viewport>() = Viewport { width: 640, height: 480 };
    app.run_frame();
    assert!(culled(&app, seen) && !culled(&app, behind), "with an area again, culling resumes from the new pose");
}

#[test]
fn a_camera_with_its_own_zero_viewport_leaves_culling_unchanged_whatever_the_global_size() {
    let (mut app, camera, seen, behind) = app();
    app.run_frame();
    app.world_mut().insert_one(camera, ecs::CameraViewport(Viewport { width: 0, height: 0 })).expect("alive");
    app.world_mut().get::<&mut Transform>(camera).expect("alive").rotation =
        glam::Quat::from_rotation_y(std::f32::consts::PI);
    app.run_frame();
    assert!(culled(&app, behind) && !culled(&app, seen), "the camera's own 0x0 size wins over the global one");
    app.world_mut().insert_one(camera, ecs::CameraViewport(Viewport { width: 320, height: 200 })).expect("alive");
    app.run_frame();
    assert_eq!(
        app.resource::<Visibility>().view().map(|view| view.viewport),
        Some(Viewport { width: 320, height: 200 })
    );
    assert!(culled(&app, seen) && !culled(&app, behind), "culled with the camera's own size");
}
