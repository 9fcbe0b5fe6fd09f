//! The cached world boxes against every public way to move an object.
//!
//! Each test keeps objects still for a few frames (so their boxes come from the cache), moves
//! them by one means, runs one frame and checks the cull: an object moved from behind the
//! camera into view must be visible on that very frame (a stale box would hide it: the
//! false-hidden bug), one moved out of view must be culled, and every drawable object's
//! stored matrix and box must equal the ones computed afresh from its entity.

use ecs::{
    hierarchy, scene, Aabb, Camera, Lod, LodLevel, Mesh, Parent, RenderSettings, SkinnedPose, Transform, Visible,
    WorldTransform,
};
use glam::{Mat4, Quat, Vec3};
use runtime::hecs::{Entity, World};
use runtime::{App, Stage, System};

use super::Visibility;

/// In view: in front of the camera at the origin looking down -z.
const AHEAD: Vec3 = Vec3::new(0.0, 0.0, -10.0);
/// Out of view: behind the camera.
const BEHIND: Vec3 = Vec3::new(0.0, 0.0, 10.0);

/// An app with the stage, a camera at the origin looking down -z, and a few bystanders in
/// view so the moved objects share words with still ones.
fn still_app(threads: usize) -> App {
    let mut app = App::with_threads(threads);
    super::install(&mut app);
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::ZERO, Vec3::NEG_Z));
    for index in 0..100 {
        let position = Vec3::new(index as f32 % 10.0 - 5.0, index as f32 / 10.0 - 5.0, -30.0);
        scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(position));
    }
    app
}

/// Runs `frames` frames (at least 2: the first computes every box) and checks that the last
/// one reused the cache for every object.
fn settle(app: &mut App, frames: usize) {
    for _ in 0..frames {
        app.run_frame();
    }
    assert_eq!(app.resource::<Visibility>().stats().bounds_computed, 0, "a still frame computes no box");
}

fn is_visible(app: &App, entity: Entity) -> bool {
    let visibility = app.resource::<Visibility>();
    let index = visibility.objects().entities.iter().position(|&owner| owner == entity).expect("a mesh object");
    visibility.bits().is_visible(index)
}

/// Every drawable slot's stored matrix and box equal the ones computed from its entity now.
fn assert_columns_fresh(app: &App) {
    let visibility = app.resource::<Visibility>();
    let world = app.world();
    for (slot, &entity) in visibility.objects().entities.iter().enumerate() {
        if !visibility.is_drawable(slot) {
            continue;
        }
        let model = world.get::<&WorldTransform>(entity).expect("a drawable object has a WorldTransform").0;
        let mesh = *world.get::<&Mesh>(entity).expect("a drawable object has a Mesh");
        let fresh = mesh.bounds.transformed(&model);
        assert_eq!(visibility.objects().models[slot], model, "slot {slot}: the stored matrix is this frame's");
        assert_eq!(visibility.objects().bounds[slot], fresh, "slot {slot}: the stored box is this frame's");
    }
}

fn world_translation(world: &World, entity: Entity) -> Vec3 {
    world.get::<&WorldTransform>(entity).expect("a WorldTransform").0.w_axis.truncate()
}

#[test]
fn get_mut_on_transform_or_world_transform_is_seen_next_frame() {
    let mut app = still_app(2);
    let local = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(BEHIND));
    // An object with a world matrix only: the Transform stage never touches it.
    let placed =
        app.world_mut().spawn((WorldTransform(Mat4::from_translation(BEHIND)), scene::unit_cube_mesh(), Visible(true)));
    settle(&mut app, 3);
    assert!(!is_visible(&app, local) && !is_visible(&app, placed), "both start behind the camera");

    app.world_mut().get::<&mut Transform>(local).expect("a Transform").translation = AHEAD;
    app.world_mut().get::<&mut WorldTransform>(placed).expect("a WorldTransform").0 = Mat4::from_translation(AHEAD);
    app.run_frame();
    assert!(is_visible(&app, local), "a Transform set through World::get_mut is culled where it is now");
    assert!(is_visible(&app, placed), "a WorldTransform set through World::get_mut is culled where it is now");
    assert_eq!(app.resource::<Visibility>().stats().bounds_computed, 2, "only the two movers are computed");
    assert_columns_fresh(&app);

    app.world_mut().get::<&mut WorldTransform>(placed).expect("a WorldTransform").0 = Mat4::from_translation(BEHIND);
    app.run_frame();
    assert!(!is_visible(&app, placed), "moved back out of view, it is culled again");
    assert_columns_fresh(&app);
}

#[test]
fn a_system_writing_transform_is_seen_the_same_frame() {
    let mut app = still_app(2);
    let mover = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(BEHIND));
    settle(&mut app, 3);
    let mut frame = 0;
    let system = System::new("mover", move |ctx| {
        frame += 1;
        for transform in ctx.query::<&mut Transform>().with::<&Mesh>().iter() {
            // Ahead on odd frames, behind on even ones; the bystanders stay put.
            if transform.translation.z > 5.0 || transform.translation.z == AHEAD.z {
                transform.translation = if frame % 2 == 1 { AHEAD } else { BEHIND };
            }
        }
    })
    .writes::<Transform>()
    .before(ecs::HIERARCHY_SYSTEM);
    app.add_system(Stage::Transform, system);
    for frame in 1..=4 {
        app.run_frame();
        assert_eq!(is_visible(&app, mover), frame % 2 == 1, "frame {frame}: culled where the system put it");
        assert_columns_fresh(&app);
    }
}

#[test]
fn reparenting_moves_the_child_and_is_seen_next_frame() {
    let mut app = still_app(1);
    let behind = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(BEHIND));
    let ahead = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(AHEAD));
    let child = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(Vec3::Y));
    hierarchy::set_parent(app.world_mut(), child, behind).expect("no loop");
    settle(&mut app, 3);
    assert!(!is_visible(&app, child), "the child starts behind the camera with its parent");

    hierarchy::set_parent(app.world_mut(), child, ahead).expect("no loop");
    app.run_frame();
    assert_eq!(world_translation(app.world(), child), AHEAD + Vec3::Y, "propagated under the new parent");
    assert!(is_visible(&app, child), "a re-parented child is culled where its new parent puts it");
    assert_columns_fresh(&app);

    // Moving the parent moves the child, which nobody touched.
    app.world_mut().get::<&mut Transform>(ahead).expect("a Transform").translation = BEHIND;
    app.run_frame();
    assert!(!is_visible(&app, child), "the child follows its parent out of view");
    assert!(app.world().get::<&Parent>(child).is_ok(), "still parented");
    assert_columns_fresh(&app);
}

#[test]
fn a_new_entity_in_a_reused_slot_is_culled_where_it_is() {
    let mut app = still_app(2);
    let ahead = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(AHEAD));
    settle(&mut app, 3);
    let slot = {
        let visibility = app.resource::<Visibility>();
        visibility.objects().entities.iter().position(|&owner| owner == ahead).expect("a mesh object")
    };
    app.world_mut().despawn(ahead).expect("alive");
    app.run_frame();
    // Same matrix, other mesh box: the slot's old box must not be reused.
    let big = Mesh::new(ecs::MeshHandle(3), ecs::MaterialHandle(0), Aabb::new(Vec3::splat(-30.0), Vec3::splat(30.0)));
    let newcomer = scene::spawn_mesh(app.world_mut(), big, Transform::from_translation(AHEAD));
    // And one behind the camera, in the next free slot.
    let hidden = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(BEHIND));
    app.run_frame();
    let visibility = app.resource::<Visibility>();
    assert_eq!(visibility.objects().entities[slot], newcomer, "the freed slot is reused");
    assert_eq!(visibility.objects().bounds[slot], big.bounds.transformed(&Mat4::from_translation(AHEAD)));
    drop(visibility);
    assert!(is_visible(&app, newcomer), "the newcomer is visible");
    assert!(!is_visible(&app, hidden), "the one behind is culled");
    assert_columns_fresh(&app);
}

#[test]
fn a_new_mesh_box_or_visibility_is_seen_next_frame() {
    let mut app = still_app(2);
    // Behind the camera, but a box large enough would reach into view.
    let growing = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(BEHIND));
    let shown = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(AHEAD));
    app.world_mut().get::<&mut Visible>(shown).expect("a Visible").0 = false;
    settle(&mut app, 3);
    assert!(!is_visible(&app, growing) && !is_visible(&app, shown));

    app.world_mut().get::<&mut Mesh>(growing).expect("a Mesh").bounds =
        Aabb::new(Vec3::splat(-20.0), Vec3::splat(20.0));
    app.world_mut().get::<&mut Visible>(shown).expect("a Visible").0 = true;
    app.run_frame();
    assert!(is_visible(&app, growing), "a mesh box grown through World::get_mut is culled as it is now");
    assert!(is_visible(&app, shown), "an object shown again is culled where it is");
    assert_columns_fresh(&app);
}

#[test]
fn archetype_moves_and_row_swaps_keep_boxes_right() {
    let mut app = still_app(2);
    let movers: Vec<Entity> = (0..20)
        .map(|index| {
            let position = BEHIND + Vec3::X * index as f32;
            scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(position))
        })
        .collect();
    settle(&mut app, 3);
    // Moving some into another archetype fills their rows with the archetype's last ones; in
    // the same frame every second one moves into view.
    for (index, &entity) in movers.iter().enumerate() {
        if index % 3 == 0 {
            app.world_mut().insert_one(entity, ecs::ShadowCaster).expect("alive");
        }
        if index % 2 == 0 {
            app.world_mut().get::<&mut Transform>(entity).expect("a Transform").translation =
                AHEAD + Vec3::X * index as f32 * 0.1;
        }
    }
    app.run_frame();
    for (index, &entity) in movers.iter().enumerate() {
        assert_eq!(is_visible(&app, entity), index % 2 == 0, "mover {index}");
    }
    assert_columns_fresh(&app);
    // And back: the entries written for the old rows must not be trusted again.
    for &entity in &movers {
        app.world_mut().remove_one::<ecs::ShadowCaster>(entity).ok();
        app.world_mut().get::<&mut Transform>(entity).expect("a Transform").translation = BEHIND;
    }
    app.run_frame();
    for (index, &entity) in movers.iter().enumerate() {
        assert!(!is_visible(&app, entity), "mover {index} is behind again");
    }
    assert_columns_fresh(&app);
}

#[test]
fn a_frame_without_a_view_forgets_nothing_it_needs() {
    let mut app = still_app(1);
    let mover = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(BEHIND));
    settle(&mut app, 3);
    let camera = app.world_mut().query_mut::<(Entity, &Camera)>().into_iter().next().expect("a camera").0;
    app.world_mut().despawn(camera).expect("the camera lives");
    app.run_frame();
    assert!(app.resource::<Visibility>().view().is_none(), "a frame without a camera has no view");
    app.world_mut().get::<&mut Transform>(mover).expect("a Transform").translation = AHEAD;
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::ZERO, Vec3::NEG_Z));
    app.run_frame();
    assert!(is_visible(&app, mover), "moved while there was no view, it is culled where it is");
    assert_columns_fresh(&app);
}

/// A small deterministic generator (xorshift64) of floats in `[0, 1)`.
pub(super) fn uniform(seed: u64) -> impl FnMut() -> f32 {
    let mut random = seed;
    move || {
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        (random >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// One frame of the same objects and camera in a fresh app (nothing cached): its bits, its
/// draws and its statistics, by slot (slots follow spawn order in both apps).
pub(super) fn fresh_answer(
    objects: &[(Mat4, Mesh, Option<Lod>)],
    camera: Transform,
    settings: RenderSettings,
) -> Answer {
    let mut app = App::with_threads(1);
    super::install(&mut app);
    app.insert_resource(settings);
    scene::spawn_camera(app.world_mut(), Camera::default(), camera);
    spawn_objects(app.world_mut(), objects);
    app.run_frame();
    answer(&app)
}

/// Spawns a drawable entity for each of `objects` (world matrix, mesh, levels of detail), in
/// order; returns their entities.
pub(super) fn spawn_objects(world: &mut World, objects: &[(Mat4, Mesh, Option<Lod>)]) -> Vec<Entity> {
    objects
        .iter()
        .map(|(model, mesh, lod)| {
            let entity = world.spawn((WorldTransform(*model), *mesh, Visible(true)));
            if let Some(lod) = lod {
                world.insert_one(entity, lod.clone()).expect("alive");
            }
            entity
        })
        .collect()
}

/// What the stage decided, by slot.
pub(super) struct Answer {
    pub(super) bits: Vec<u64>,
    pub(super) draws: Vec<super::ObjectDraw>,
    pub(super) rejected: [usize; 4],
}

pub(super) fn answer(app: &App) -> Answer {
    let visibility = app.resource::<Visibility>();
    let stats = visibility.stats();
    Answer {
        bits: visibility.bits().words().to_vec(),
        draws: visibility.objects().draws.clone(),
        rejected: [stats.visible, stats.frustum_rejected, stats.distance_rejected, stats.size_rejected],
    }
}

#[test]
fn cached_boxes_and_verdicts_give_the_answer_of_a_fresh_cull_frame_after_frame() {
    let mut next = uniform(0x2545_f491_4f6c_dd1d_u64);
    let levels = vec![
        LodLevel { mesh: ecs::MeshHandle(1), max_distance: 20.0 },
        LodLevel { mesh: ecs::MeshHandle(2), max_distance: 60.0 },
    ];
    let mut objects: Vec<(Mat4, Mesh, Option<Lod>)> = (0..600)
        .map(|index| {
            let position = Vec3::new(next() * 200.0 - 100.0, next() * 10.0 - 5.0, next() * 200.0 - 100.0);
            let size = 0.1 + next() * 3.0;
            let lod = (index % 3 == 0).then(|| Lod { levels: levels.clone().into(), bias: 1.0 });
            (
                Mat4::from_scale_rotation_translation(Vec3::splat(size), Quat::IDENTITY, position),
                scene::unit_cube_mesh(),
                lod,
            )
        })
        .collect();
    let settings = RenderSettings { cull_max_distance: 80.0, cull_min_pixels: 4.0, ..RenderSettings::default() };
    let mut app = App::with_threads(2);
    super::install(&mut app);
    app.insert_resource(settings);
    let mut camera_transform = scene::look_at(Vec3::new(0.0, 2.0, 0.0), Vec3::new(0.0, 2.0, -1.0));
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), camera_transform);
    let entities = spawn_objects(app.world_mut(), &objects);
    for frame in 0..24 {
        // Frames 0-5 still; then the camera turns every third frame and some objects move
        // every second frame, so every mix of cached and fresh boxes and verdicts occurs.
        if frame > 5 && frame % 3 == 0 {
            camera_transform = scene::look_at(
                Vec3::new(0.0, 2.0, 0.0),
                Vec3::new((frame as f32 * 0.4).sin(), 2.0, -(frame as f32 * 0.4).cos()),
            );
            *app.world_mut().get::<&mut Transform>(camera).expect("a camera") = camera_transform;
        }
        if frame > 5 && frame % 2 == 0 {
            for (index, (model, _, _)) in objects.iter_mut().enumerate().filter(|(index, _)| index % 7 == frame % 7) {
                model.w_axis.x += if index % 2 == 0 { 15.0 } else { -15.0 };
                app.world_mut().get::<&mut WorldTransform>(entities[index]).expect("alive").0 = *model;
            }
        }
        app.run_frame();
        let fresh = fresh_answer(&objects, camera_transform, settings);
        let ours = answer(&app);
        assert_eq!(ours.bits, fresh.bits, "frame {frame}: the cached stage's bits are a fresh cull's");
        assert_eq!(ours.rejected, fresh.rejected, "frame {frame}: visible and rejected counts as a fresh cull's");
        assert!(ours.draws == fresh.draws, "frame {frame}: the cached stage's draws are a fresh cull's");
    }
}

#[test]
fn a_new_skinned_pose_is_seen_next_frame() {
    let mut app = still_app(2);
    let mut mesh = scene::unit_cube_mesh();
    mesh.skin_radius = 0.1;
    let rest = SkinnedPose { origin_min: Vec3::splat(-0.4), origin_max: Vec3::splat(0.4), max_bone_scale: 1.0 };
    let character = scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(BEHIND));
    app.world_mut().insert_one(character, rest).expect("alive");
    settle(&mut app, 3);
    assert!(!is_visible(&app, character), "at rest the character is behind the camera");
    // An arm reaching 25 m forward, past the camera and into view.
    app.world_mut().get::<&mut SkinnedPose>(character).expect("a pose").origin_min.z = -25.0;
    app.run_frame();
    assert!(is_visible(&app, character), "the posed box this frame reaches into view");
    assert_eq!(app.resource::<Visibility>().stats().bounds_computed, 1, "only the posed mesh is computed");
}
