//! The occlusion step inside the Visibility stage: a wall hides what is behind it, the
//! `Occluded` tag follows transitions only, and the settings switch turns it off.

use culling::occlusion::{OccluderMesh, OccluderMeshes};
use culling::{Aabb, Visibility};
use ecs::{scene, Camera, Culled, MaterialHandle, Mesh, MeshHandle, Occluded, RenderSettings, Transform};
use glam::Vec3;
use runtime::hecs::Entity;
use runtime::App;

/// Mesh 1: a wall 20 wide, 20 high, 1 deep, whose occluder is its own box.
const WALL: MeshHandle = MeshHandle(1);

fn city() -> (App, Entity, Entity, Entity) {
    let mut app = App::new();
    culling::install(&mut app);
    let wall_box = Aabb::new(Vec3::new(-10.0, -10.0, -0.5), Vec3::new(10.0, 10.0, 0.5));
    let mut occluders = OccluderMeshes::new();
    occluders.insert(WALL, OccluderMesh::from_box(&wall_box).expect("a valid wall"));
    app.insert_resource(occluders);
    let world = app.world_mut();
    let camera = scene::spawn_camera(world, Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO));
    let wall = Mesh::new(WALL, MaterialHandle(0), wall_box);
    scene::spawn_mesh(world, wall, Transform::from_translation(Vec3::new(0.0, 0.0, -10.0)));
    let hidden =
        scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform::from_translation(Vec3::new(0.0, 0.0, -30.0)));
    let seen = scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform::from_translation(Vec3::new(0.0, 0.0, 0.0)));
    (app, camera, hidden, seen)
}

fn has<T: runtime::hecs::Component>(app: &App, entity: Entity) -> bool {
    app.world().satisfies::<&T>(entity)
}

#[test]
fn a_wall_occludes_in_the_stage_and_tags_change_on_transitions_only() {
    let (mut app, camera, hidden, seen) = city();
    app.run_frame();
    {
        let visibility = app.resource::<Visibility>();
        assert_eq!(visibility.stats().occluded, 1, "the cube behind the wall is occluded");
        assert_eq!(visibility.visible().len(), 2, "the wall and the cube before it are visible");
        assert_eq!(visibility.stats().visible, 2);
    }
    assert!(has::<Occluded>(&app, hidden) && !has::<Culled>(&app, hidden), "occluded, not culled");
    assert!(!has::<Occluded>(&app, seen));

    // A still camera: the same answer, and no structural change.
    let archetypes_before = app.world().archetypes().len();
    app.run_frame();
    assert_eq!(app.resource::<Visibility>().stats().occluded, 1);
    assert!(has::<Occluded>(&app, hidden));
    assert_eq!(app.world().archetypes().len(), archetypes_before);

    // Step aside: the cube comes into view and loses the tag.
    *app.world_mut().get::<&mut Transform>(camera).expect("camera") =
        scene::look_at(Vec3::new(40.0, 0.0, 10.0), Vec3::new(0.0, 0.0, -30.0));
    app.run_frame();
    assert_eq!(app.resource::<Visibility>().stats().occluded, 0, "from the side nothing is hidden");
    assert!(!has::<Occluded>(&app, hidden), "the tag goes when the cube is seen again");
}

#[test]
fn the_settings_switch_and_a_missing_resource_turn_occlusion_off() {
    let (mut app, _, hidden, _) = city();
    app.run_frame();
    assert!(has::<Occluded>(&app, hidden));
    app.resource_mut::<RenderSettings>().occlusion_culling = false;
    app.run_frame();
    assert_eq!(app.resource::<Visibility>().stats().occluded, 0);
    assert_eq!(app.resource::<Visibility>().visible().len(), 3, "everything in the frustum is drawn");
    assert!(!has::<Occluded>(&app, hidden), "turning occlusion off removes the tag");

    let (mut bare, _, hidden, _) = city();
    bare.resources_mut().remove::<OccluderMeshes>();
    bare.run_frame();
    assert_eq!(bare.resource::<Visibility>().stats().occluded, 0, "no occluder registry, no occlusion");
    assert!(!has::<Occluded>(&bare, hidden));
}

#[test]
fn occluder_selection_follows_the_settings() {
    // The wall (12 triangles, more than a viewport height across) is chosen by default.
    let (mut app, _, hidden, _) = city();
    app.run_frame();
    assert!(has::<Occluded>(&app, hidden), "the default settings choose the wall");

    // A size threshold above the wall's projected size: no occluder, nothing occluded.
    app.resource_mut::<RenderSettings>().occluder_min_screen_size = 3.0;
    app.run_frame();
    assert_eq!(app.resource::<Visibility>().stats().occluded, 0, "the wall is below the size threshold");
    assert!(!has::<Occluded>(&app, hidden));
    app.resource_mut::<RenderSettings>().occluder_min_screen_size = 1.0;
    app.run_frame();
    assert_eq!(app.resource::<Visibility>().stats().occluded, 1, "the wall reaches a threshold of 1.0");

    // A triangle budget one short of the wall's 12: nothing drawn; exactly 12: drawn.
    app.resource_mut::<RenderSettings>().occluder_triangle_budget = 11;
    app.run_frame();
    assert_eq!(app.resource::<Visibility>().stats().occluded, 0, "12 triangles exceed a budget of 11");
    app.resource_mut::<RenderSettings>().occluder_triangle_budget = 12;
    app.run_frame();
    assert_eq!(app.resource::<Visibility>().stats().occluded, 1, "12 triangles fit a budget of 12");
    assert!(has::<Occluded>(&app, hidden));
}

#[test]
fn the_buffer_shape_does_not_change_what_the_wall_hides() {
    for follow in [true, false] {
        let (mut app, _, hidden, seen) = city();
        app.resource_mut::<RenderSettings>().occlusion_buffer_follows_viewport = follow;
        *app.resource_mut::<ecs::Viewport>() = ecs::Viewport { width: 1920, height: 1080 };
        app.run_frame();
        assert!(has::<Occluded>(&app, hidden), "following the viewport: {follow}");
        assert!(!has::<Occluded>(&app, seen), "following the viewport: {follow}");
    }
}
