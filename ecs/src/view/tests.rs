use glam::{Quat, Vec3};
use hecs::{Entity, World};
use runtime::{App, Stage, System};

use super::*;
use crate::camera::{Camera, Projection, ProjectionKind, Viewport};
use crate::hierarchy;
use crate::scene;
use crate::transform::Transform;

/// What the Visibility stage saw last frame.
#[derive(Default)]
struct Seen(Option<ResolvedView>);

fn app() -> App {
    let mut app = App::new();
    crate::install(&mut app);
    app.insert_resource(Seen::default());
    app.add_system(
        Stage::Visibility,
        System::new("record view", |ctx| {
            let view = ctx.frame_value::<ResolvedView>().map(|view| *view);
            ctx.resource_mut::<Seen>().0 = view;
        })
        .reads_frame::<ResolvedView>()
        .writes_resource::<Seen>(),
    );
    app
}

fn camera(order: i32, active: bool) -> Camera {
    Camera { order, active, ..Camera::default() }
}

fn spawn_camera_at(world: &mut World, order: i32, active: bool, x: f32) -> Entity {
    scene::spawn_camera(world, camera(order, active), Transform::from_translation(Vec3::new(x, 0.0, 0.0)))
}

/// Runs a frame and returns the view the Visibility stage saw.
fn frame(app: &mut App) -> Option<ResolvedView> {
    app.run_frame();
    app.resource::<Seen>().0
}

fn seen_camera(app: &mut App) -> Option<Entity> {
    frame(app).and_then(|view| view.camera)
}

#[test]
fn first_frame_takes_the_lowest_slot_active_camera() {
    let mut app = app();
    let world = app.world_mut();
    let _high = spawn_camera_at(world, 3, true, 0.0);
    let _inactive = spawn_camera_at(world, -5, false, 0.0);
    let low = spawn_camera_at(world, 1, true, 7.0);
    let view = frame(&mut app).expect("an active camera exists");
    assert_eq!(view.camera, Some(low), "lowest order among active cameras");
    assert_eq!(view.position, Vec3::new(7.0, 0.0, 0.0));
    assert_eq!(view.projection_kind, ProjectionKind::PerspectiveInfinite);
}

#[test]
fn held_camera_stays_held_without_rescanning() {
    let mut app = app();
    let held = spawn_camera_at(app.world_mut(), 0, true, 0.0);
    assert_eq!(seen_camera(&mut app), Some(held));
    let scans = app.resource::<CameraSelection>().scans();
    app.run_frames(5);
    assert_eq!(seen_camera(&mut app), Some(held));
    assert_eq!(app.resource::<CameraSelection>().scans(), scans, "a held camera needs no scan");
}

#[test]
fn lower_slot_activation_does_not_steal() {
    let mut app = app();
    let held = spawn_camera_at(app.world_mut(), 5, true, 0.0);
    let lower = spawn_camera_at(app.world_mut(), 0, false, 1.0);
    assert_eq!(seen_camera(&mut app), Some(held));
    app.world_mut().get::<&mut Camera>(lower).expect("alive").active = true;
    assert_eq!(seen_camera(&mut app), Some(held), "the held camera must not jump to a newly active lower slot");
}

#[test]
fn destroyed_camera_rescans() {
    let mut app = app();
    let held = spawn_camera_at(app.world_mut(), 0, true, 0.0);
    let other = spawn_camera_at(app.world_mut(), 9, true, 1.0);
    assert_eq!(seen_camera(&mut app), Some(held));
    app.world_mut().despawn(held).expect("alive");
    assert_eq!(seen_camera(&mut app), Some(other), "a destroyed camera gives way to the next active one");
}

#[test]
fn deactivated_or_unposed_camera_rescans() {
    let mut app = app();
    let first = spawn_camera_at(app.world_mut(), 0, true, 0.0);
    let second = spawn_camera_at(app.world_mut(), 1, true, 1.0);
    let third = spawn_camera_at(app.world_mut(), 2, true, 2.0);
    assert_eq!(seen_camera(&mut app), Some(first));
    app.world_mut().get::<&mut Camera>(first).expect("alive").active = false;
    assert_eq!(seen_camera(&mut app), Some(second), "deactivation releases the camera");
    app.world_mut().remove::<(Transform, crate::WorldTransform)>(second).expect("alive with a pose");
    assert_eq!(seen_camera(&mut app), Some(third), "losing the pose releases the camera");
}

#[test]
fn host_view_overrides_for_one_frame_only() {
    let mut app = app();
    let scene_camera = spawn_camera_at(app.world_mut(), 0, true, 0.0);
    assert_eq!(seen_camera(&mut app), Some(scene_camera));
    let eye = Vec3::new(1.0, 2.0, 3.0);
    app.frame_context_mut().set_host_view(HostView::Free {
        camera: Camera::new(Projection::Orthographic { height: 4.0, near: 0.0, far: 100.0 }),
        position: eye,
        rotation: Quat::IDENTITY,
    });
    let free = frame(&mut app).expect("a free view is a view");
    assert_eq!(free.camera, None, "a free view names no scene camera");
    assert_eq!(free.position, eye);
    assert_eq!(free.projection_kind, ProjectionKind::Orthographic);
    assert!(app.frame_context().host_view().is_none(), "the host view is gone when its frame ends");
    assert_eq!(seen_camera(&mut app), Some(scene_camera), "the next frame renders through the scene camera again");
}

#[test]
fn host_free_view_needs_no_scene_camera() {
    let mut app = app();
    app.frame_context_mut().set_host_view(HostView::Free {
        camera: Camera::default(),
        position: Vec3::ZERO,
        rotation: Quat::IDENTITY,
    });
    assert!(frame(&mut app).is_some(), "an editor can open a scene without cameras");
    assert_eq!(app.resource::<CameraSelection>().gaps_reported(), 0, "no lookup ran");
}

#[test]
fn looking_through_an_inactive_camera() {
    let mut app = app();
    let active = spawn_camera_at(app.world_mut(), 0, true, 0.0);
    let inactive = spawn_camera_at(app.world_mut(), 1, false, 4.0);
    assert_eq!(seen_camera(&mut app), Some(active));
    app.frame_context_mut().set_host_view(HostView::Through(inactive));
    let view = frame(&mut app).expect("looking through a camera is a view");
    assert_eq!(view.camera, Some(inactive), "an inactive camera can be looked through");
    assert_eq!(view.position, Vec3::new(4.0, 0.0, 0.0));
    assert_eq!(seen_camera(&mut app), Some(active), "the held camera is untouched by a host's look-through");
}

#[test]
fn looking_through_a_non_camera_falls_back_to_the_active_one() {
    let mut app = app();
    let active = spawn_camera_at(app.world_mut(), 0, true, 0.0);
    let prop = app.world_mut().spawn((Transform::IDENTITY,));
    app.frame_context_mut().set_host_view(HostView::Through(prop));
    assert_eq!(seen_camera(&mut app), Some(active));
}

#[test]
fn world_replaced_rescans() {
    let mut app = app();
    let old = spawn_camera_at(app.world_mut(), 0, true, 0.0);
    assert_eq!(seen_camera(&mut app), Some(old));
    // In the new world the first entity gets the same id and generation as `old`: a stranger
    // holding the old handle. Only the epoch tells them apart.
    let mut replacement = World::new();
    let stranger = spawn_camera_at(&mut replacement, 10, true, 1.0);
    let lowest = spawn_camera_at(&mut replacement, 0, true, 2.0);
    assert_eq!(stranger, old, "the test needs the stranger to reuse the old handle");
    app.replace_world(replacement);
    assert_eq!(seen_camera(&mut app), Some(lowest), "a replaced world must be scanned afresh");
}

#[test]
fn no_camera_logs_once_per_gap_and_publishes_nothing() {
    let mut app = app();
    assert!(frame(&mut app).is_none(), "no camera, no view");
    app.run_frames(3);
    assert_eq!(app.resource::<CameraSelection>().gaps_reported(), 1, "one report for the whole gap");
    let camera = spawn_camera_at(app.world_mut(), 0, true, 0.0);
    assert!(frame(&mut app).is_some());
    app.world_mut().despawn(camera).expect("alive");
    app.run_frames(2);
    assert_eq!(app.resource::<CameraSelection>().gaps_reported(), 2, "a new gap, a new report");
}

#[test]
fn parented_camera_sees_from_where_the_rig_puts_it() {
    let mut app = app();
    let rig = app.world_mut().spawn((Transform::from_translation(Vec3::new(0.0, 10.0, 0.0)),));
    let camera = spawn_camera_at(app.world_mut(), 0, true, 1.0);
    hierarchy::set_parent(app.world_mut(), camera, rig).expect("valid");
    let view = frame(&mut app).expect("camera exists");
    assert_eq!(view.position, Vec3::new(1.0, 10.0, 0.0), "this frame's world pose, not the local one");
}

#[test]
fn view_matrices_agree_with_the_pose() {
    let mut app = app();
    let eye = Vec3::new(0.0, 5.0, 10.0);
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(eye, Vec3::ZERO));
    app.insert_resource(Viewport::new(0, 0));
    let view = frame(&mut app).expect("camera exists");
    assert!(view.view.transform_point3(eye).length() < 1e-4, "the eye is the view-space origin");
    let target = view.view.transform_point3(Vec3::ZERO);
    assert!(target.z < 0.0 && target.x.abs() < 1e-4, "the target lies ahead, down -Z: {target}");
    assert!(view.view_projection.is_finite(), "a zero-size viewport must not give NaN");
    assert_eq!(view.view_projection, view.projection * view.view);
}

#[test]
fn input_stage_system_can_publish_the_host_view() {
    let mut app = app();
    let active = spawn_camera_at(app.world_mut(), 0, true, 0.0);
    let preview = spawn_camera_at(app.world_mut(), 1, false, 3.0);
    app.add_system(
        Stage::Input,
        System::new("editor preview", move |ctx| {
            // Offer a view on even frames only.
            if ctx.time.frame_index % 2 == 0 {
                ctx.publish(HostView::Through(preview));
            }
        })
        .writes_frame::<HostView>(),
    );
    assert_eq!(seen_camera(&mut app), Some(preview), "frame 0 offers the preview");
    assert_eq!(seen_camera(&mut app), Some(active), "frame 1 offers nothing");
    assert_eq!(seen_camera(&mut app), Some(preview), "frame 2 offers it again");
}

/// A follow camera: a target moves in `Input`, a `Transform`-stage system added after
/// [`crate::install`] places the camera beside it, ordered before the hierarchy.
#[test]
fn a_follow_camera_ordered_before_the_hierarchy_is_never_a_frame_late() {
    struct Target;
    let mut app = app();
    let target = app.world_mut().spawn((Target, Transform::IDENTITY));
    let camera = spawn_camera_at(app.world_mut(), 0, true, 0.0);
    app.add_system(
        Stage::Input,
        System::new("move target", move |ctx| {
            let x = ctx.time.frame_index as f32;
            ctx.get_mut::<Transform>(target).expect("target lives").translation = Vec3::new(x, 0.0, 0.0);
        })
        .writes::<Transform>(),
    );
    app.add_system(
        Stage::Transform,
        System::new("follow", move |ctx| {
            let x = ctx.get::<Transform>(target).expect("target lives").translation.x;
            ctx.get_mut::<Transform>(camera).expect("camera lives").translation = Vec3::new(x, 0.0, 5.0);
        })
        .writes::<Transform>()
        .before(crate::HIERARCHY_SYSTEM),
    );
    for frame_index in 0..10 {
        let view = frame(&mut app).expect("the camera is active");
        assert_eq!(view.position, Vec3::new(frame_index as f32, 0.0, 5.0), "frame {frame_index}: the view lags");
    }
}

#[test]
fn a_frame_without_a_view_says_why() {
    let mut app = app();
    let reason = |app: &App| app.resource::<CameraSelection>().no_view_reason();
    assert!(frame(&mut app).is_none());
    assert_eq!(reason(&app), Some(NoViewReason::NoCamera));
    let camera = spawn_camera_at(app.world_mut(), 0, false, 0.0);
    assert!(frame(&mut app).is_none());
    assert_eq!(reason(&app), Some(NoViewReason::NoActiveCamera));
    app.world_mut().get::<&mut Camera>(camera).expect("alive").active = true;
    app.world_mut().get::<&mut Transform>(camera).expect("alive").translation = Vec3::new(f32::NAN, 0.0, 0.0);
    assert!(frame(&mut app).is_none());
    assert_eq!(reason(&app), Some(NoViewReason::CameraWithoutFinitePose(camera)));
    app.world_mut().get::<&mut Transform>(camera).expect("alive").translation = Vec3::ZERO;
    assert!(frame(&mut app).is_some());
    assert_eq!(reason(&app), None);
}
