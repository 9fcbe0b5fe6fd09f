//! "Freeze and explain": the overlay keeps the selection's explanation and the culling
//! counters of the frame it was switched on while the world and the camera change, and shows
//! live answers again once it is switched off. CPU only (no renderer: the overlay reads the
//! Visibility stage's answer).

use culling::{Reason, Visibility};
use ecs::{scene, Camera, RenderSettings, Transform};
use glam::Vec3;
use overlay::{Overlay, Switches};
use runtime::hecs::Entity;
use runtime::App;

/// A camera looking at a cube at the origin, with two more cubes beside it.
fn app() -> (App, Entity, Entity) {
    let mut app = App::with_threads(1);
    culling::install(&mut app);
    let world = app.world_mut();
    let camera = scene::spawn_camera(world, Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO));
    let cube = scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform::IDENTITY);
    for x in [-3.0, 3.0] {
        scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform::from_translation(Vec3::new(x, 0.0, 0.0)));
    }
    app.run_frames(2);
    (app, camera, cube)
}

/// Runs a frame and updates the overlay after it, enough times for a rebuild of its panels.
fn frames(app: &mut App, overlay: &mut Overlay) {
    for _ in 0..=overlay::REBUILD_PERIOD {
        app.run_frame();
        overlay.update(app, &Switches::default());
    }
}

fn live_reason(app: &App, cube: Entity) -> Reason {
    let settings = app.resource::<RenderSettings>();
    app.resource::<Visibility>().explain(app.world(), &settings, cube).reason
}

#[test]
fn freeze_and_explain_keeps_the_frame_it_was_switched_on_until_switched_off() {
    let (mut app, camera, cube) = app();
    let mut overlay = Overlay::new(true);
    overlay.select(Some(cube));
    frames(&mut app, &mut overlay);
    let shown = |overlay: &Overlay| overlay.snapshot().selection.as_ref().expect("selected").explanation.reason;
    assert_eq!(shown(&overlay), Reason::Visible);
    assert_eq!(overlay.snapshot().main.visible, 3);
    assert!(!overlay.explain_frozen());

    overlay.freeze_explain(true);
    assert!(overlay.explain_frozen(), "on from the call");
    app.run_frame();
    overlay.update(&app, &Switches::default());
    let held = overlay.snapshot().held.clone().expect("held at once, without waiting for a rebuild");
    assert_eq!(held.frame, app.last_frame_index().expect("frames ran"));
    assert_eq!(held.selection.as_ref().map(|selection| selection.explanation.reason), Some(Reason::Visible));

    // The camera turns away and a cube is added: the live answer changes, the overlay's not.
    *app.world_mut().get::<&mut Transform>(camera).expect("the camera") =
        scene::look_at(Vec3::new(0.0, 0.0, 10.0), Vec3::new(0.0, 0.0, 30.0));
    scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(Vec3::new(0.0, 0.0, 20.0)));
    frames(&mut app, &mut overlay);
    assert!(matches!(live_reason(&app, cube), Reason::OffFrustum { .. }), "{:?}", live_reason(&app, cube));
    assert_eq!(app.resource::<Visibility>().stats().objects, 4);
    assert_eq!(shown(&overlay), Reason::Visible, "the held explanation");
    assert_eq!(overlay.snapshot().main, held.main, "the held counters");
    assert_eq!(overlay.snapshot().main.objects, 3);
    assert_eq!(overlay.snapshot().held.as_ref(), Some(&held));

    overlay.freeze_explain(false);
    assert!(!overlay.explain_frozen());
    app.run_frame();
    overlay.update(&app, &Switches::default());
    assert!(overlay.snapshot().held.is_none());
    assert!(matches!(shown(&overlay), Reason::OffFrustum { .. }), "live again: {:?}", shown(&overlay));
    assert_eq!(overlay.snapshot().main.objects, 4);
}
