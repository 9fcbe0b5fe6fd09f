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

// ---- The tag policies (`RenderSettings::visibility_tags`) against the dense answer. ----

use culling::occlusion::{OccluderMesh, OccluderMeshes};
use culling::{Aabb, ObjectState};
use ecs::{MaterialHandle, Mesh, MeshHandle, Occluded, RenderSettings, VisibilityTagged, VisibilityTags};
use runtime::hecs::Entity;
use runtime::{Stage, System};
use std::sync::{Arc, Mutex};

/// Mesh 1: a wall 16 wide and 10 high whose occluder is its own box.
const WALL: MeshHandle = MeshHandle(1);

/// A camera 1 m up at the origin, a wall 6 m ahead of heading 0 (so what is behind it is
/// occluded), and a grid of cubes around it, every third one carrying `VisibilityTagged`.
/// Returns the app, the camera and the cubes.
fn grid_app(policy: VisibilityTags) -> (App, Entity, Vec<Entity>) {
    let mut app = App::with_threads(2);
    culling::install(&mut app);
    app.resource_mut::<RenderSettings>().visibility_tags = policy;
    let wall_box = Aabb::new(Vec3::new(-8.0, -1.0, -0.5), Vec3::new(8.0, 9.0, 0.5));
    let mut occluders = OccluderMeshes::new();
    occluders.insert(WALL, OccluderMesh::from_box(&wall_box).expect("a valid wall"));
    app.insert_resource(occluders);
    let world = app.world_mut();
    let camera = scene::spawn_camera(world, Camera::default(), heading(0.0));
    // The camera turns from a system, as a game would, so the change log keeps frames tracked.
    app.insert_resource(Heading(None));
    app.add_system(
        Stage::Input,
        System::new("turn", move |ctx| {
            if let Some(degrees) = ctx.resource_mut::<Heading>().0.take() {
                *ctx.get_mut::<Transform>(camera).expect("the camera lives") = heading(degrees);
            }
        })
        .writes::<Transform>()
        .writes_resource::<Heading>(),
    );
    let world = app.world_mut();
    scene::spawn_mesh(
        world,
        Mesh::new(WALL, MaterialHandle(0), wall_box),
        Transform::from_translation(Vec3::new(0.0, 0.0, -6.0)),
    );
    let mut cubes = Vec::new();
    for x in -10..=10 {
        for z in -10..=10 {
            if (-2..=2).contains(&x) && (-2..=2).contains(&z) || z == -3 {
                continue; // room for the camera, and the wall's row
            }
            let at = Transform::from_translation(Vec3::new(x as f32 * 2.0, 0.0, z as f32 * 2.0));
            let cube = scene::spawn_mesh(world, scene::unit_cube_mesh(), at);
            if cubes.len() % 3 == 0 {
                world.insert_one(cube, VisibilityTagged).expect("alive");
            }
            cubes.push(cube);
        }
    }
    (app, camera, cubes)
}

fn heading(degrees: f32) -> Transform {
    Transform::from_translation_rotation(Vec3::new(0.0, 1.0, 0.0), glam::Quat::from_rotation_y(degrees.to_radians()))
}

/// The heading the camera takes at the next frame's Input stage.
struct Heading(Option<f32>);

fn turn(app: &mut App, _camera: Entity, degrees: f32) {
    app.resource_mut::<Heading>().0 = Some(degrees);
}

/// What the tags of `entities` say, counted: (culled, occluded, tagged without a marker).
#[derive(Debug, Default, PartialEq)]
struct TagCounts {
    culled: usize,
    occluded: usize,
    unmarked_tagged: usize,
}

/// Checks every entity of `entities` against the frame's answer: `state_of` agrees with the
/// lists (`visible`, `is_occluded`, `scene`), and an entity the policy covers carries exactly
/// the tag its state calls for, one it does not cover carries none. Returns the counts.
fn assert_tags_truthful(app: &App, entities: &[Entity]) -> TagCounts {
    let policy = app.resource::<RenderSettings>().visibility_tags;
    let visibility = app.resource::<Visibility>();
    let world = app.world();
    let mut counts = TagCounts::default();
    for &entity in entities {
        let state = visibility.state_of(entity).expect("every cube had a cull");
        let slot = visibility.objects().entities.iter().position(|&owner| owner == entity).expect("owns a slot");
        let expected = if visibility.visible().contains(&(slot as u32)) {
            ObjectState::Visible
        } else if !visibility.scene().contains(&(slot as u32)) {
            ObjectState::NotDrawable
        } else if visibility.is_occluded(slot) {
            ObjectState::Occluded
        } else {
            ObjectState::Culled
        };
        assert_eq!(state, expected, "state_of agrees with the lists for {entity:?}");
        let marked = world.satisfies::<&VisibilityTagged>(entity);
        let covered = policy == VisibilityTags::All || marked;
        let (culled, occluded) = (world.satisfies::<&Culled>(entity), world.satisfies::<&Occluded>(entity));
        assert_eq!(
            culled,
            covered && state == ObjectState::Culled,
            "Culled on {entity:?} ({state:?}, {policy:?}, marked {marked})"
        );
        assert_eq!(
            occluded,
            covered && state == ObjectState::Occluded,
            "Occluded on {entity:?} ({state:?}, {policy:?}, marked {marked})"
        );
        counts.culled += usize::from(state == ObjectState::Culled);
        counts.occluded += usize::from(state == ObjectState::Occluded);
        counts.unmarked_tagged += usize::from(!marked && (culled || occluded));
    }
    counts
}

#[test]
fn tags_follow_the_dense_answer_under_both_policies_while_the_camera_turns() {
    for policy in [VisibilityTags::All, VisibilityTags::Marked] {
        let (mut app, camera, cubes) = grid_app(policy);
        let (mut changes, mut tracked, mut occluded_frames) = (0, 0, 0);
        for frame in 0..40 {
            turn(&mut app, camera, frame as f32 * 10.0);
            app.run_frame();
            let counts = assert_tags_truthful(&app, &cubes);
            assert!(counts.culled > 0, "{policy:?} frame {frame}: something is behind the camera");
            if policy == VisibilityTags::Marked {
                assert_eq!(counts.unmarked_tagged, 0, "no unmarked entity is tagged under Marked");
            }
            occluded_frames += usize::from(counts.occluded > 0);
            let stats = *app.resource::<Visibility>().stats();
            changes += stats.tags_inserted + stats.tags_removed;
            tracked += usize::from(stats.tracked);
        }
        assert!(occluded_frames > 0, "{policy:?}: the wall hid something in some frame");
        assert!(tracked > 0, "{policy:?}: tracked frames were checked too");
        assert!(changes > 0, "{policy:?}: tags changed as the camera turned");
    }
}

#[test]
fn the_opt_in_policy_moves_only_marked_entities() {
    let count_changes = |policy| {
        let (mut app, camera, _) = grid_app(policy);
        (0..36)
            .map(|frame| {
                turn(&mut app, camera, frame as f32 * 10.0);
                app.run_frame();
                let stats = *app.resource::<Visibility>().stats();
                stats.tags_inserted + stats.tags_removed
            })
            .sum::<usize>()
    };
    let (all, marked) = (count_changes(VisibilityTags::All), count_changes(VisibilityTags::Marked));
    // A third of the cubes are marked (the wall is not).
    assert!(marked > 0 && marked * 2 < all, "marked-only changes {marked} against {all} for every entity");
}

#[test]
fn switching_the_policy_at_run_time_removes_and_restores_tags() {
    let (mut app, camera, cubes) = grid_app(VisibilityTags::All);
    turn(&mut app, camera, 90.0);
    app.run_frames(2);
    assert!(assert_tags_truthful(&app, &cubes).unmarked_tagged > 0, "under All unmarked entities carry tags");

    app.resource_mut::<RenderSettings>().visibility_tags = VisibilityTags::Marked;
    app.run_frame();
    let counts = assert_tags_truthful(&app, &cubes);
    assert_eq!(counts.unmarked_tagged, 0, "switching to Marked removes the unmarked entities' tags at the next cull");
    assert!(counts.culled > 0);

    // Turn while opted in, so the unmarked entities' answers move on without tags.
    turn(&mut app, camera, 200.0);
    app.run_frame();
    assert_tags_truthful(&app, &cubes);

    app.resource_mut::<RenderSettings>().visibility_tags = VisibilityTags::All;
    app.run_frame();
    let counts = assert_tags_truthful(&app, &cubes);
    assert!(counts.unmarked_tagged > 0, "switching back tags every entity truthfully at the next cull");
}

#[test]
fn markers_added_and_removed_at_run_time_take_effect_at_the_next_cull() {
    let (mut app, camera, cubes) = grid_app(VisibilityTags::Marked);
    turn(&mut app, camera, 180.0); // looking +Z: the cubes at negative z are culled
    app.run_frames(2);
    assert_tags_truthful(&app, &cubes);
    let behind = cubes
        .iter()
        .copied()
        .find(|&cube| {
            !app.world().satisfies::<&VisibilityTagged>(cube)
                && app.resource::<Visibility>().state_of(cube) == Some(ObjectState::Culled)
        })
        .expect("an unmarked culled cube");
    assert!(!app.world().satisfies::<&Culled>(behind), "unmarked: no tag, though culled");

    // Through commands from a system (the frame stays tracked), then directly.
    let edit: Arc<Mutex<Option<bool>>> = Arc::new(Mutex::new(None));
    let system_edit = edit.clone();
    app.add_system(
        Stage::Input,
        System::new("mark", move |ctx| match system_edit.lock().expect("not poisoned").take() {
            Some(true) => ctx.commands.insert_one(behind, VisibilityTagged),
            Some(false) => ctx.commands.remove_one::<VisibilityTagged>(behind),
            None => {}
        }),
    );
    *edit.lock().expect("not poisoned") = Some(true);
    app.run_frame();
    assert!(app.world().satisfies::<&Culled>(behind), "marked by a command: tagged at the same frame's cull");
    assert_tags_truthful(&app, &cubes);
    *edit.lock().expect("not poisoned") = Some(false);
    app.run_frame();
    assert!(!app.world().satisfies::<&Culled>(behind), "unmarked by a command: the tag goes");
    assert_tags_truthful(&app, &cubes);

    app.world_mut().insert_one(behind, VisibilityTagged).expect("alive");
    app.run_frame();
    assert!(app.world().satisfies::<&Culled>(behind), "marked directly");
    app.world_mut().remove_one::<VisibilityTagged>(behind).expect("marked");
    app.run_frame();
    assert!(!app.world().satisfies::<&Culled>(behind), "unmarked directly");
    assert_tags_truthful(&app, &cubes);
}

#[test]
fn spawns_and_despawns_under_the_opt_in_policy_keep_tags_truthful() {
    let (mut app, camera, mut cubes) = grid_app(VisibilityTags::Marked);
    app.run_frame();
    let behind = Transform::from_translation(Vec3::new(0.0, 0.0, 30.0));
    let marked = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), behind);
    app.world_mut().insert_one(marked, VisibilityTagged).expect("alive");
    let unmarked = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), behind);
    let hidden = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), behind);
    app.world_mut().insert(hidden, (ecs::Visible(false), VisibilityTagged)).expect("alive");
    assert_eq!(app.resource::<Visibility>().state_of(marked), None, "no answer before its first cull");
    assert_eq!(app.resource::<Visibility>().state_of(camera), None, "the camera is no mesh entity");
    app.run_frame();
    assert_eq!(app.resource::<Visibility>().state_of(hidden), Some(ObjectState::NotDrawable));
    assert!(!app.world().satisfies::<&Culled>(hidden), "an undrawable entity is never tagged, marked or not");
    assert!(app.world().satisfies::<&Culled>(marked), "a new marked entity is tagged at its first cull");
    assert_eq!(app.resource::<Visibility>().state_of(unmarked), Some(ObjectState::Culled));
    assert!(!app.world().satisfies::<&Culled>(unmarked));
    cubes.extend([marked, unmarked, hidden]);
    assert_tags_truthful(&app, &cubes);

    // Despawn a marked and an unmarked cube; slots are reused by the next spawns.
    let gone = [cubes.remove(0), cubes.remove(0)];
    for entity in gone {
        app.world_mut().despawn(entity).expect("alive");
    }
    let reborn = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), behind);
    app.world_mut().insert_one(reborn, VisibilityTagged).expect("alive");
    cubes.push(reborn);
    turn(&mut app, camera, 180.0);
    app.run_frame();
    for entity in gone {
        assert_eq!(app.resource::<Visibility>().state_of(entity), None, "a despawned entity has no answer");
    }
    assert_eq!(app.resource::<Visibility>().state_of(reborn), Some(ObjectState::Visible), "now ahead of the camera");
    assert!(!app.world().satisfies::<&Culled>(reborn));
    assert_tags_truthful(&app, &cubes);
}

/// The common change of a moving camera, an occluded object leaving the view, trades
/// `Occluded` for `Culled` in one archetype move, and back again; a game that removes the old
/// tag (a command from its own system) in the frame of the trade still finds the new one.
#[test]
fn an_object_trading_one_tag_for_the_other_carries_exactly_the_new_one() {
    let (mut app, camera, cubes) = grid_app(VisibilityTags::All);
    app.run_frame();
    let carries = |app: &App, entity: Entity| {
        (app.world().satisfies::<&Culled>(entity), app.world().satisfies::<&Occluded>(entity))
    };
    let hidden: Vec<Entity> = cubes.iter().copied().filter(|&cube| carries(&app, cube) == (false, true)).collect();
    assert!(hidden.len() >= 2, "the wall hides cubes at heading 0, saw {}", hidden.len());

    // Turn around: the hidden cubes are behind the camera now, then in front of the wall again.
    turn(&mut app, camera, 180.0);
    app.run_frame();
    let stats = *app.resource::<Visibility>().stats();
    assert!(stats.tracked, "the turn came from a system: a tracked frame");
    assert!(stats.tags_traded >= hidden.len(), "one move each: {stats:?}");
    assert!(stats.tags_inserted >= stats.tags_traded && stats.tags_removed >= stats.tags_traded, "a trade is both");
    assert!(hidden.iter().all(|&cube| carries(&app, cube) == (true, false)), "Occluded traded for Culled");
    assert_tags_truthful(&app, &cubes);
    turn(&mut app, camera, 0.0);
    app.run_frame();
    assert!(app.resource::<Visibility>().stats().tags_traded >= hidden.len());
    assert!(hidden.iter().all(|&cube| carries(&app, cube) == (false, true)), "Culled traded for Occluded");
    assert_tags_truthful(&app, &cubes);

    // A game strips `Occluded` from the first hidden cube in the frame the camera turns away.
    let strip: Arc<Mutex<Option<Entity>>> = Arc::new(Mutex::new(None));
    let system_strip = strip.clone();
    app.add_system(
        Stage::Input,
        System::new("strip", move |ctx| {
            if let Some(cube) = system_strip.lock().expect("not poisoned").take() {
                ctx.commands.remove_one::<Occluded>(cube);
            }
        }),
    );
    *strip.lock().expect("not poisoned") = Some(hidden[0]);
    turn(&mut app, camera, 180.0);
    app.run_frame();
    assert!(strip.lock().expect("not poisoned").is_none(), "the strip ran");
    assert_eq!(carries(&app, hidden[0]), (true, false), "the new tag is given though the old one was gone");
    assert_tags_truthful(&app, &cubes);
}
