//! Tests of the Visibility stage through a real `App`.

use ecs::{
    scene, Aabb, Camera, Culled, FrameContextExt, HostView, Lod, LodLevel, MaterialHandle, Mesh, MeshHandle,
    RenderSettings, ShadowCaster, SkinnedPose, Transform, Visible, WorldTransform,
};
use glam::{Mat4, Quat, Vec3};
use proptest::prelude::*;
use runtime::hecs::{Entity, World};
use runtime::App;

use super::Visibility;
use crate::frustum::Frustum;
use crate::size::{is_near_enough, max_distance_sq, ScreenSizeCull};
use crate::{lod::is_orthographic, AabbSoa, ShadowCull};

/// An app with the stage installed and a camera at `eye` looking at `target`.
fn app_with_camera(threads: usize, eye: Vec3, target: Vec3) -> (App, Entity) {
    let mut app = App::with_threads(threads);
    super::install(&mut app);
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(eye, target));
    (app, camera)
}

fn cube_at(world: &mut World, position: Vec3) -> Entity {
    scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform::from_translation(position))
}

/// The object index of `entity` this frame.
fn index_of(visibility: &Visibility, entity: Entity) -> usize {
    visibility.objects().entities.iter().position(|&other| other == entity).expect("the entity is a mesh object")
}

fn is_visible(app: &App, entity: Entity) -> bool {
    let visibility = app.resource::<Visibility>();
    visibility.bits().is_visible(index_of(&visibility, entity))
}

fn set_camera(app: &mut App, camera: Entity, transform: Transform) {
    *app.world_mut().get::<&mut Transform>(camera).expect("the camera has a Transform") = transform;
}

fn culled_count(world: &World) -> usize {
    world.query::<&Culled>().iter().count()
}

#[test]
fn culls_what_is_behind_and_lists_casters_first() {
    let (mut app, _) = app_with_camera(2, Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO);
    let ahead = cube_at(app.world_mut(), Vec3::ZERO);
    let behind = cube_at(app.world_mut(), Vec3::new(0.0, 0.0, 30.0));
    let caster = cube_at(app.world_mut(), Vec3::new(1.0, 0.0, 0.0));
    app.world_mut().insert_one(caster, ShadowCaster).expect("caster is alive");
    let hidden = cube_at(app.world_mut(), Vec3::new(-1.0, 0.0, 0.0));
    app.world_mut().insert_one(hidden, Visible(false)).expect("hidden is alive");
    app.run_frame();
    let visibility = app.resource::<Visibility>();
    let index = |entity| index_of(&visibility, entity) as u32;
    assert_eq!(visibility.len(), 4);
    assert_eq!(visibility.visible(), &{
        let mut expected = vec![index(ahead), index(caster)];
        expected.sort();
        expected
    });
    assert_eq!(visibility.casters(), &[index(caster)], "the caster leads the scene list");
    assert_eq!(visibility.scene().len(), 3, "the hidden mesh is in no list");
    assert!(!visibility.scene().contains(&index(hidden)));
    assert!(visibility.scene()[1..].windows(2).all(|pair| pair[0] < pair[1]), "non-casters in slot order");
    let stats = visibility.stats();
    assert_eq!((stats.objects, stats.drawable, stats.visible, stats.frustum_rejected), (4, 3, 2, 1));
    let object = index(behind) as usize;
    assert_eq!(visibility.objects().bounds[object].center(), Vec3::new(0.0, 0.0, 30.0));
    assert_eq!(visibility.objects().draws[object].material, MaterialHandle(0));
}

#[test]
fn a_raised_arm_outside_the_bind_box_stays_visible() {
    // The camera looks up at a point 3 m above the character; the bind box ends at 1 m.
    let (mut app, _) = app_with_camera(2, Vec3::new(0.0, 3.0, 4.0), Vec3::new(0.0, 3.0, 0.0));
    let mut mesh = Mesh::new(MeshHandle(1), MaterialHandle(1), Aabb::new(Vec3::splat(-0.3), Vec3::new(0.3, 1.0, 0.3)));
    mesh.skin_radius = 0.1;
    let bind_only = scene::spawn_mesh(app.world_mut(), mesh, Transform::IDENTITY);
    let posed = scene::spawn_mesh(app.world_mut(), mesh, Transform::IDENTITY);
    let arm_up = SkinnedPose {
        origin_min: Vec3::new(-0.3, 0.0, -0.1),
        origin_max: Vec3::new(0.3, 2.9, 0.1),
        max_bone_scale: 1.0,
    };
    app.world_mut().insert_one(posed, arm_up).expect("posed is alive");
    // A narrow view that sees only the hand: a 10° field of view.
    let narrow =
        Camera::new(ecs::Projection::PerspectiveInfiniteReverse { fov_y_radians: 10f32.to_radians(), near: 0.1 });
    let camera = app.world().query::<(Entity, &Camera)>().iter().next().map(|(entity, _)| entity).unwrap();
    *app.world_mut().get::<&mut Camera>(camera).unwrap() = narrow;
    app.run_frame();
    assert!(is_visible(&app, posed), "the raised hand is in view, so the posed mesh must be kept");
    assert!(!is_visible(&app, bind_only), "the bind box alone is out of this view");
    let visibility = app.resource::<Visibility>();
    assert!(visibility.objects().bounds[index_of(&visibility, posed)].max.y >= 3.0);
}

#[test]
fn tags_change_only_on_transitions() {
    let (mut app, camera) = app_with_camera(2, Vec3::ZERO, Vec3::NEG_Z);
    let ahead: Vec<Entity> =
        (0..100).map(|index| cube_at(app.world_mut(), Vec3::new(index as f32 * 0.1, 0.0, -10.0))).collect();
    let behind: Vec<Entity> =
        (0..50).map(|index| cube_at(app.world_mut(), Vec3::new(index as f32 * 0.1, 0.0, 10.0))).collect();
    app.run_frame();
    assert_eq!(culled_count(app.world()), 50, "the first frame tags what is behind");
    assert!(behind.iter().all(|&entity| app.world().satisfies::<&Culled>(entity)));
    assert_eq!(app.resource::<Visibility>().stats().tags_inserted, 50);

    // A still camera: no structural change at all.
    let layout = |world: &World| world.archetypes().map(|archetype| archetype.ids().to_vec()).collect::<Vec<_>>();
    let before = layout(app.world());
    let generation = app.world().archetypes_generation();
    for _ in 0..3 {
        app.run_frame();
        let stats = *app.resource::<Visibility>().stats();
        assert_eq!((stats.tags_inserted, stats.tags_removed), (0, 0), "a still camera changes no tag");
    }
    assert_eq!(layout(app.world()), before, "no entity moved between archetypes");
    assert_eq!(app.world().archetypes_generation(), generation);

    // Turn around: the tags swap, once.
    set_camera(&mut app, camera, scene::look_at(Vec3::ZERO, Vec3::Z));
    app.run_frame();
    let stats = *app.resource::<Visibility>().stats();
    assert_eq!((stats.tags_inserted, stats.tags_removed), (100, 50));
    assert!(stats.tag_apply_seconds > 0.0, "the tags system applied the batch");
    assert!(ahead.iter().all(|&entity| app.world().satisfies::<&Culled>(entity)));
    assert!(behind.iter().all(|&entity| !app.world().satisfies::<&Culled>(entity)));
    app.run_frame();
    let stats = *app.resource::<Visibility>().stats();
    assert_eq!((stats.tags_inserted, stats.tags_removed), (0, 0), "the next frame changes nothing");

    // Turn back.
    set_camera(&mut app, camera, scene::look_at(Vec3::ZERO, Vec3::NEG_Z));
    app.run_frame();
    assert_eq!(culled_count(app.world()), 50);
    assert!(behind.iter().all(|&entity| app.world().satisfies::<&Culled>(entity)));

    // Hiding a culled entity removes its tag: only drawable objects carry one.
    app.world_mut().insert_one(behind[0], Visible(false)).unwrap();
    app.run_frame();
    assert!(!app.world().satisfies::<&Culled>(behind[0]));
}

/// A turn that changes more tags than the moves are warmed for: they go in row order, over
/// archetypes whose rows earlier moves shuffled, and every entity ends with the tag its answer
/// wants and every value it had.
#[test]
fn a_turn_of_thousands_of_moves_tags_every_entity_by_its_answer() {
    let (mut app, camera) = app_with_camera(2, Vec3::ZERO, Vec3::NEG_Z);
    let mut random = Random(5);
    let cubes: Vec<(Entity, Vec3)> = (0..12_000)
        .map(|index| {
            let angle = random.range(0.0, std::f32::consts::TAU);
            let position = Vec3::new(angle.cos() * 30.0, random.range(-2.0, 2.0), angle.sin() * 30.0);
            let entity = cube_at(app.world_mut(), position);
            // A few archetypes, so that moves leave and enter several.
            if index % 3 == 0 {
                app.world_mut().insert_one(entity, ShadowCaster).unwrap();
            }
            (entity, position)
        })
        .collect();
    let mut most_changes = 0;
    for yaw in [0.0f32, 180.0, 90.0, 270.0, 0.0] {
        let yaw = yaw.to_radians();
        set_camera(&mut app, camera, scene::look_at(Vec3::ZERO, Vec3::new(-yaw.sin(), 0.0, -yaw.cos())));
        app.run_frame();
        let stats = *app.resource::<Visibility>().stats();
        most_changes = most_changes.max(stats.tags_inserted + stats.tags_removed);
        let visibility = app.resource::<Visibility>();
        let world = app.world();
        for &(entity, position) in &cubes {
            let visible = visibility.bits().is_visible(index_of(&visibility, entity));
            assert_eq!(world.satisfies::<&Culled>(entity), !visible, "Culled is the frustum's answer");
            let transform = world.get::<&Transform>(entity).expect("the moves keep every component");
            assert_eq!(transform.translation, position);
        }
    }
    assert!(most_changes > 2 * super::tags::ORDER_BY_ROWS_FROM, "a turn moved {most_changes} entities");
}

/// What a renderer uploads per object: the record the slot's columns describe.
type Record = (Mat4, Aabb, crate::ObjectDraw);

fn records(visibility: &Visibility) -> Vec<Record> {
    let objects = visibility.objects();
    (0..objects.len()).map(|slot| (objects.models[slot], objects.bounds[slot], objects.draws[slot])).collect()
}

#[test]
fn a_turning_camera_changes_thousands_of_tags_but_only_the_records_of_movers() {
    let (mut app, camera) = app_with_camera(2, Vec3::ZERO, Vec3::NEG_Z);
    let mut random = Random(11);
    let mut entities = Vec::new();
    for index in 0..4000 {
        let angle = random.range(0.0, std::f32::consts::TAU);
        let radius = random.range(20.0, 60.0);
        let position = Vec3::new(angle.cos() * radius, random.range(-3.0, 3.0), angle.sin() * radius);
        let entity = cube_at(app.world_mut(), position);
        if index % 4 == 0 {
            let levels = vec![
                LodLevel { mesh: MeshHandle(10), max_distance: 30.0 },
                LodLevel { mesh: MeshHandle(11), max_distance: 1000.0 },
            ];
            app.world_mut().insert_one(entity, Lod { levels: levels.into(), bias: 1.0 }).unwrap();
        }
        entities.push(entity);
    }
    // Every 97th object walks towards the camera, some crossing their LOD hand-over.
    let movers: Vec<Entity> = entities.iter().copied().step_by(97).collect();
    app.run_frame();
    let slot_of = |app: &App| -> Vec<usize> {
        let visibility = app.resource::<Visibility>();
        entities.iter().map(|&entity| index_of(&visibility, entity)).collect()
    };
    let first_slots = slot_of(&app);
    let mut previous = records(&app.resource::<Visibility>());
    let (mut tag_changes, mut lod_changes) = (0, 0);
    for frame in 1..=36 {
        let yaw = (frame as f32 * 10.0).to_radians();
        set_camera(&mut app, camera, scene::look_at(Vec3::ZERO, Vec3::new(-yaw.sin(), 0.0, -yaw.cos())));
        for &mover in &movers {
            let mut transform = app.world_mut().get::<&mut Transform>(mover).unwrap();
            transform.translation *= 0.97;
        }
        app.run_frame();
        let visibility = app.resource::<Visibility>();
        tag_changes += visibility.stats().tags_inserted + visibility.stats().tags_removed;
        let current = records(&visibility);
        assert_eq!(current.len(), previous.len(), "no object came or went, so the slot count holds");
        let mut changed: Vec<usize> = (0..current.len()).filter(|&slot| current[slot] != previous[slot]).collect();
        let mut expected: Vec<usize> = movers.iter().map(|&mover| index_of(&visibility, mover)).collect();
        changed.sort_unstable();
        expected.sort_unstable();
        assert_eq!(changed, expected, "frame {frame}: only the movers' records change");
        lod_changes += expected.iter().filter(|&&slot| current[slot].2 != previous[slot].2).count();
        previous = current;
        drop(visibility);
        assert_eq!(slot_of(&app), first_slots, "frame {frame}: every entity keeps its slot");
    }
    assert!(tag_changes > 3000, "the turn must move thousands of entities between archetypes, saw {tag_changes}");
    assert!(lod_changes > 0, "some mover crossed its LOD hand-over");
}

#[test]
fn despawned_slots_are_reused_and_holes_stay_undrawable() {
    let (mut app, _) = app_with_camera(2, Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO);
    let cubes: Vec<Entity> = (0..5).map(|index| cube_at(app.world_mut(), Vec3::X * index as f32)).collect();
    app.run_frame();
    let slot_of_last = index_of(&app.resource::<Visibility>(), cubes[4]);
    let hole = index_of(&app.resource::<Visibility>(), cubes[1]);
    app.world_mut().despawn(cubes[1]).unwrap();
    app.run_frame();
    {
        let visibility = app.resource::<Visibility>();
        assert_eq!(visibility.len(), 5, "a hole below the highest slot keeps the count");
        assert_eq!(visibility.stats().objects, 4, "four mesh entities");
        assert_eq!(visibility.objects().entities[hole], Entity::DANGLING, "the freed slot has no owner");
        assert!(!visibility.is_drawable(hole) && !visibility.bits().is_visible(hole), "a hole is never drawn");
        assert_eq!(visibility.objects().draws[hole], crate::ObjectDraw::NONE);
        assert_eq!(index_of(&visibility, cubes[4]), slot_of_last, "the others keep their slots");
    }
    let newcomer = cube_at(app.world_mut(), Vec3::Y);
    app.run_frame();
    let visibility = app.resource::<Visibility>();
    assert_eq!(index_of(&visibility, newcomer), hole, "the lowest free slot is reused");
    assert!(visibility.bits().is_visible(hole));
}

/// Bits, lists and columns of one run of a scene with `threads` threads.
fn snapshot(threads: usize) -> (Vec<u64>, Vec<u32>, Vec<u32>, usize, Vec<ObjectSummary>) {
    let (mut app, camera) = app_with_camera(threads, Vec3::new(3.0, 2.0, 5.0), Vec3::ZERO);
    app.resource_mut::<RenderSettings>().cull_max_distance = 60.0;
    app.resource_mut::<RenderSettings>().cull_min_pixels = 2.0;
    let mut random = Random(7);
    for index in 0..3000 {
        let position = Vec3::new(random.range(-80.0, 80.0), random.range(-5.0, 5.0), random.range(-80.0, 80.0));
        let mut mesh = scene::unit_cube_mesh();
        mesh.bounds = Aabb::from_center_half_extent(Vec3::ZERO, Vec3::splat(random.range(0.01, 2.0)));
        let entity = scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(position));
        if index % 3 == 0 {
            app.world_mut().insert_one(entity, ShadowCaster).unwrap();
        }
    }
    app.run_frame();
    set_camera(&mut app, camera, scene::look_at(Vec3::new(3.0, 2.0, 5.0), Vec3::new(10.0, 0.0, -3.0)));
    app.run_frame();
    let visibility = app.resource::<Visibility>();
    let summary = visibility
        .objects()
        .entities
        .iter()
        .zip(&visibility.objects().bounds)
        .map(|(&entity, bounds)| (entity, bounds.min.to_array(), bounds.max.to_array()))
        .collect();
    (
        visibility.bits().words().to_vec(),
        visibility.visible().to_vec(),
        visibility.scene().to_vec(),
        visibility.caster_count(),
        summary,
    )
}

type ObjectSummary = (Entity, [f32; 3], [f32; 3]);

#[test]
fn one_and_four_threads_give_the_same_answer() {
    let one = snapshot(1);
    let four = snapshot(4);
    assert!(!one.1.is_empty() && one.1.len() < 3000, "the scene must be partly visible");
    assert_eq!(one, four, "bits, lists and columns must not depend on the thread count");
}

#[test]
fn lod_hands_over_at_the_authored_distance() {
    let (mut app, camera) = app_with_camera(2, Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO);
    let entity = cube_at(app.world_mut(), Vec3::ZERO);
    let levels = vec![
        LodLevel { mesh: MeshHandle(10), max_distance: 10.0 },
        LodLevel { mesh: MeshHandle(11), max_distance: 30.0 },
    ];
    app.world_mut().insert_one(entity, Lod { levels: levels.into(), bias: 1.0 }).unwrap();
    // The default camera is 60° vertical: the reference field of view, scale 1.
    let mesh_at = |app: &mut App, distance: f32| {
        set_camera(app, camera, scene::look_at(Vec3::new(0.0, 0.0, distance), Vec3::ZERO));
        app.run_frame();
        let visibility = app.resource::<Visibility>();
        visibility.objects().draws[index_of(&visibility, entity)].mesh
    };
    assert_eq!(mesh_at(&mut app, 9.9), MeshHandle(10));
    assert_eq!(mesh_at(&mut app, 10.1), MeshHandle(11));
    assert_eq!(mesh_at(&mut app, 29.9), MeshHandle(11));
    assert_eq!(mesh_at(&mut app, 500.0), MeshHandle(11), "past the last level the last level draws");
    app.resource_mut::<RenderSettings>().lod_bias = 2.0;
    assert_eq!(mesh_at(&mut app, 15.0), MeshHandle(10), "a global bias of 2 doubles the ranges");
}

#[test]
fn non_finite_objects_and_views_are_kept_and_counted() {
    let (mut app, _) = app_with_camera(2, Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO);
    let nan_matrix =
        app.world_mut().spawn((WorldTransform(Mat4::from_cols_array(&[f32::NAN; 16])), scene::unit_cube_mesh()));
    let mut infinite = scene::unit_cube_mesh();
    infinite.bounds = Aabb::new(Vec3::splat(-1.0), Vec3::new(1.0, f32::INFINITY, 1.0));
    let behind_infinite =
        scene::spawn_mesh(app.world_mut(), infinite, Transform::from_translation(Vec3::new(0.0, 0.0, 50.0)));
    let behind = cube_at(app.world_mut(), Vec3::new(0.0, 0.0, 50.0));
    app.resource_mut::<RenderSettings>().cull_max_distance = 5.0;
    app.run_frame();
    assert!(is_visible(&app, nan_matrix), "a NaN world matrix is never culled");
    assert!(is_visible(&app, behind_infinite), "an infinite box is never culled");
    assert!(!is_visible(&app, behind));
    assert_eq!(app.resource::<Visibility>().stats().non_finite, 2);

    // A NaN free view keeps everything.
    let camera = Camera::default();
    app.frame_context_mut().set_host_view(HostView::Free { camera, position: Vec3::NAN, rotation: Quat::IDENTITY });
    app.run_frame();
    let visibility = app.resource::<Visibility>();
    assert_eq!(visibility.visible().len(), 3, "a non-finite view culls nothing");
    assert_eq!(visibility.stats().non_finite, 3);
}

#[test]
fn no_camera_and_empty_scenes_give_empty_answers() {
    let mut app = App::with_threads(2);
    super::install(&mut app);
    app.run_frame();
    assert!(app.resource::<Visibility>().is_empty(), "an empty world");
    let entity = cube_at(app.world_mut(), Vec3::ZERO);
    app.run_frame();
    let visibility = app.resource::<Visibility>();
    assert!(visibility.is_empty() && visibility.view().is_none(), "no camera: nothing visible");
    assert_eq!(visibility.stats().objects, 1);
    drop(visibility);
    assert!(!app.world().satisfies::<&Culled>(entity), "no view decides no tag");
    scene::spawn_camera(app.world_mut(), Camera::default(), Transform::from_translation(Vec3::new(0.0, 0.0, 5.0)));
    app.run_frame();
    assert_eq!(app.resource::<Visibility>().visible().len(), 1);
    let (mut empty, _) = app_with_camera(1, Vec3::ZERO, Vec3::NEG_Z);
    empty.run_frame();
    let visibility = empty.resource::<Visibility>();
    assert!(visibility.is_empty() && visibility.view().is_some());
    assert_eq!(visibility.bits().len(), 0);
}

#[test]
fn shadow_casters_cull_against_light_views() {
    let (mut app, _) = app_with_camera(2, Vec3::new(0.0, 5.0, 30.0), Vec3::ZERO);
    let near = cube_at(app.world_mut(), Vec3::ZERO);
    let far = cube_at(app.world_mut(), Vec3::new(40.0, 0.0, 0.0));
    for entity in [near, far] {
        app.world_mut().insert_one(entity, ShadowCaster).unwrap();
    }
    cube_at(app.world_mut(), Vec3::new(1.0, 0.0, 0.0));
    app.run_frame();
    let light = Mat4::look_at_rh(Vec3::new(0.0, 50.0, 0.0), Vec3::ZERO, Vec3::NEG_Z);
    let cascade = Mat4::orthographic_rh(-10.0, 10.0, -10.0, 10.0, 100.0, 0.1) * light;
    let visibility = app.resource::<Visibility>();
    let (mut shadows, mut scratch) = (ShadowCull::default(), AabbSoa::default());
    let stats = visibility.cull_shadow_casters(&mut shadows, &[cascade], &mut scratch);
    assert_eq!(stats.tested, 2, "only the casters are tested");
    let kept: Vec<Entity> = shadows
        .bits(0)
        .iter_visible()
        .map(|caster| visibility.objects().entities[visibility.casters()[caster] as usize])
        .collect();
    assert_eq!(kept, vec![near]);
}

/// Deterministic xorshift numbers.
pub(super) struct Random(pub(super) u64);

impl Random {
    pub(super) fn range(&mut self, low: f32, high: f32) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        low + (high - low) * ((self.0 >> 40) as f32 / (1u64 << 24) as f32)
    }
}

/// The brute-force reference of one object: may it be visible?
pub(super) fn reference_keeps(view: &ecs::ResolvedView, settings: &RenderSettings, height: f32, world: &Aabb) -> bool {
    let frustum = Frustum::from_view_projection(view.projection * view.view);
    if !frustum.may_intersect_aabb(world) {
        return false;
    }
    let center = world.center();
    let eye = view.view.inverse().w_axis.truncate();
    if !is_near_enough(center.distance_squared(eye), max_distance_sq(settings.cull_max_distance)) {
        return false;
    }
    let depth = -view.view.row(2).dot(center.extend(1.0));
    let size = ScreenSizeCull::new(
        view.projection.y_axis.y,
        height,
        settings.cull_min_pixels,
        is_orthographic(&view.projection),
    );
    size.keeps(world.half_extent().length_squared(), depth)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn stage_bits_equal_a_brute_force_reference(
        seed in 1u64..u64::MAX,
        count in 0usize..300,
        yaw in -3.2f32..3.2,
        pitch in -1.2f32..1.2,
        max_distance in prop_oneof![Just(0.0f32), 5.0f32..80.0],
        min_pixels in prop_oneof![Just(0.0f32), 0.5f32..20.0],
        projection in 0usize..3,
    ) {
        let mut app = App::with_threads(2);
        super::install(&mut app);
        let camera = match projection {
            0 => Camera::default(),
            1 => Camera::new(ecs::Projection::PerspectiveReverse { fov_y_radians: 0.9, near: 0.2, far: 60.0 }),
            _ => Camera::new(ecs::Projection::Orthographic { height: 30.0, near: 0.1, far: 100.0 }),
        };
        let rotation = Quat::from_euler(glam::EulerRot::YXZ, yaw, pitch, 0.0);
        scene::spawn_camera(app.world_mut(), camera, Transform::from_translation_rotation(Vec3::new(1.0, 2.0, 3.0), rotation));
        *app.resource_mut::<RenderSettings>() = RenderSettings { cull_max_distance: max_distance, cull_min_pixels: min_pixels, ..RenderSettings::default() };
        let mut random = Random(seed);
        for index in 0..count {
            let position = Vec3::new(random.range(-60.0, 60.0), random.range(-20.0, 20.0), random.range(-60.0, 60.0));
            let rotation = Quat::from_euler(glam::EulerRot::XYZ, random.range(-3.0, 3.0), random.range(-3.0, 3.0), 0.0);
            let scale = Vec3::new(random.range(0.1, 3.0), random.range(0.1, 3.0), random.range(0.1, 3.0));
            let mut mesh = scene::unit_cube_mesh();
            let half = Vec3::new(random.range(0.01, 2.0), random.range(0.01, 2.0), random.range(0.01, 2.0));
            mesh.bounds = Aabb::from_center_half_extent(Vec3::splat(random.range(-1.0, 1.0)), half);
            let entity = scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation_rotation(position, rotation).with_scale(scale));
            if index % 5 == 0 {
                app.world_mut().insert_one(entity, ShadowCaster).unwrap();
            }
        }
        app.run_frame();
        let visibility = app.resource::<Visibility>();
        let view = *visibility.view().expect("a camera exists");
        let height = app.resource::<ecs::Viewport>().height as f32;
        let settings = *app.resource::<RenderSettings>();
        prop_assert_eq!(visibility.len(), count);
        for index in 0..count {
            let entity = visibility.objects().entities[index];
            let mesh = *app.world().get::<&Mesh>(entity).unwrap();
            let model = app.world().get::<&WorldTransform>(entity).unwrap().0;
            let world = mesh.bounds.transformed(&model);
            prop_assert_eq!(visibility.objects().bounds[index], world);
            prop_assert_eq!(
                visibility.bits().is_visible(index),
                reference_keeps(&view, &settings, height, &world),
                "object {} with box {:?}", index, world
            );
        }
    }
}
