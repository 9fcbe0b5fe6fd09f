//! The change-driven passes: every public way to move a node is seen in the frame it happens,
//! with matrices bit-identical to a fresh full pass, and static nodes are left alone.

use std::any::TypeId;
use std::sync::{Arc, Mutex};

use glam::{Quat, Vec3};
use hecs::{Entity, With, World};
use proptest::prelude::*;
use runtime::changes::{ChangeCursor, ChangedSince};
use runtime::{App, Stage, System};

use super::*;
use crate::scene;
use crate::transform::{Transform, WorldTransform};

/// Marks the nodes the test systems move through a filtered query.
pub(super) struct Mover;

pub(super) type MoverQuery<'a> = With<&'a mut Transform, &'a Mover>;

pub(super) fn app() -> App {
    let mut app = App::new();
    crate::install(&mut app);
    app
}

pub(super) fn report(app: &App) -> HierarchyReport {
    *app.resource::<HierarchyReport>()
}

/// Every node's world matrix as bits, by entity.
pub(super) fn snapshot(world: &World) -> Vec<(Entity, [u32; 16])> {
    let mut query = world.query::<(Entity, &WorldTransform)>().with::<&Transform>();
    let mut rows: Vec<_> =
        query.iter().map(|(entity, matrix)| (entity, matrix.0.to_cols_array().map(f32::to_bits))).collect();
    rows.sort_unstable_by_key(|(entity, _)| entity.to_bits());
    rows
}

/// Runs a fresh full pass over the app's world and checks it wrote the same bits the app's
/// hierarchy system left there.
pub(super) fn assert_matches_full_pass(app: &App, what: &str) {
    let before = snapshot(app.world());
    let (mut fresh, mut commands, mut report) =
        (Propagator::default(), hecs::CommandBuffer::new(), HierarchyReport::default());
    fresh.run(app.world(), &mut commands, &mut report);
    let after = snapshot(app.world());
    assert_eq!(before.len(), after.len(), "{what}: every node has a WorldTransform");
    let first_difference = before.iter().zip(&after).find(|(left, right)| left != right);
    assert_eq!(first_difference, None, "{what}: the matrices must equal a fresh full pass bit for bit");
}

pub(super) fn translation(world: &World, entity: Entity) -> Vec3 {
    world.get::<&WorldTransform>(entity).expect("a node").0.w_axis.truncate()
}

fn world_bits(world: &World, entity: Entity) -> [u32; 16] {
    world.get::<&WorldTransform>(entity).expect("a node").0.to_cols_array().map(f32::to_bits)
}

/// A forest of 40 trees of 7 nodes (1 + 2 + 4) whose every tenth root carries [`Mover`].
fn forest_with_movers(app: &mut App) -> (scene::Forest, Vec<Entity>) {
    let forest = scene::spawn_forest(app.world_mut(), 40, &[2, 2], scene::unit_cube_mesh());
    let movers: Vec<Entity> = forest.roots.iter().copied().step_by(10).collect();
    for &mover in &movers {
        app.world_mut().insert_one(mover, Mover).expect("just spawned");
    }
    (forest, movers)
}

fn add_driver(app: &mut App) {
    app.add_system(
        Stage::Input,
        System::new("drive", |ctx| {
            for transform in ctx.query::<MoverQuery>().iter() {
                transform.translation.x += 1.0;
                transform.rotation *= Quat::from_rotation_y(0.25);
            }
        })
        .query::<MoverQuery>(),
    );
}

/// The nodes of the subtree under `root`, from `Children`.
pub(super) fn subtree(world: &World, root: Entity) -> Vec<Entity> {
    let mut nodes = vec![root];
    let mut next = 0;
    while let Some(&node) = nodes.get(next) {
        next += 1;
        nodes.extend(children(world, node));
    }
    nodes
}

#[test]
fn a_filtered_query_moves_its_roots_and_their_static_children_follow() {
    let mut app = app();
    let (forest, movers) = forest_with_movers(&mut app);
    add_driver(&mut app);
    app.run_frames(2);
    let grandchild = *subtree(app.world(), movers[1]).last().expect("a tree of 7");
    let before = translation(app.world(), grandchild);
    app.run_frame();
    let report = report(&app);
    assert_eq!(report.last_pass, PassKind::Incremental, "only Transform values changed");
    assert_eq!(report.updated, movers.len() * 7, "the moved roots and their subtrees, nothing else");
    assert_eq!(report.nodes, forest.entities.len());
    assert_ne!(translation(app.world(), grandchild), before, "a static grandchild follows its moving root");
    assert_matches_full_pass(&app, "after a filtered-query move");
}

#[test]
fn a_large_incremental_pass_split_across_threads_equals_the_full_pass() {
    for threads in [1, 4] {
        let mut app = App::with_threads(threads);
        crate::install(&mut app);
        // 6,000 trees of 10 nodes, every tenth root moving: 6,000 matrices a frame, enough for
        // the list to be split between jobs, yet few enough candidates for the incremental pass.
        let forest = scene::spawn_forest(app.world_mut(), 6000, &[3, 2], scene::unit_cube_mesh());
        for &root in forest.roots.iter().step_by(10) {
            app.world_mut().insert_one(root, Mover).expect("just spawned");
        }
        add_driver(&mut app);
        app.run_frames(3);
        let report = report(&app);
        assert_eq!((report.last_pass, report.updated), (PassKind::Incremental, 6000), "on {threads} threads");
        assert_matches_full_pass(&app, &format!("a large incremental pass on {threads} threads"));
    }
}

#[test]
fn moved_nodes_spread_over_more_archetypes_than_one_store_pass_covers_are_all_written() {
    let mut app = app();
    let forest = scene::spawn_forest(app.world_mut(), 40, &[2, 2], scene::unit_cube_mesh());
    // Twenty tag types spread the nodes over more than RUNS_PER_PASS archetypes.
    for (index, &entity) in forest.entities.iter().enumerate() {
        let world = app.world_mut();
        let tagged = match index % 20 {
            0 => world.insert_one(entity, 0u8),
            1 => world.insert_one(entity, 0u16),
            2 => world.insert_one(entity, 0u32),
            3 => world.insert_one(entity, 0u64),
            4 => world.insert_one(entity, 0i8),
            5 => world.insert_one(entity, 0i16),
            6 => world.insert_one(entity, 0i32),
            7 => world.insert_one(entity, 0i64),
            8 => world.insert_one(entity, 0f32),
            9 => world.insert_one(entity, 0f64),
            10 => world.insert_one(entity, 'a'),
            11 => world.insert_one(entity, false),
            12 => world.insert_one(entity, [0u8; 1]),
            13 => world.insert_one(entity, [0u8; 2]),
            14 => world.insert_one(entity, [0u8; 3]),
            15 => world.insert_one(entity, [0u8; 4]),
            16 => world.insert_one(entity, [0u8; 5]),
            17 => world.insert_one(entity, [0u8; 6]),
            18 => world.insert_one(entity, [0u8; 7]),
            _ => world.insert_one(entity, [0u8; 8]),
        };
        tagged.expect("just spawned");
    }
    for &root in forest.roots.iter().step_by(4) {
        app.world_mut().insert_one(root, Mover).expect("just spawned");
    }
    add_driver(&mut app);
    app.run_frames(3);
    let archetypes = app.world().archetypes().filter(|archetype| !archetype.is_empty() && archetype.has::<Transform>());
    assert!(archetypes.count() > 2 * 16, "the test needs nodes in many archetypes");
    assert_eq!((report(&app).last_pass, report(&app).updated), (PassKind::Incremental, 10 * 7));
    assert_matches_full_pass(&app, "moved nodes in many archetypes");
}

#[test]
fn get_mut_in_a_system_is_seen_in_the_same_frame() {
    let mut app = app();
    let (forest, _) = forest_with_movers(&mut app);
    let child = children(app.world(), forest.roots[3])[1];
    let grandchild = children(app.world(), child)[0];
    app.add_system(
        Stage::Input,
        System::new("nudge", move |ctx| {
            if ctx.time.frame_index >= 2 {
                ctx.get_mut::<Transform>(child).expect("alive").translation.y += 0.5;
            }
        })
        .writes::<Transform>(),
    );
    app.run_frames(2);
    let before = translation(app.world(), grandchild);
    app.run_frame();
    assert_eq!(report(&app).last_pass, PassKind::Incremental);
    assert_eq!(report(&app).updated, 3, "the child and its two children");
    assert_ne!(translation(app.world(), grandchild), before);
    assert_matches_full_pass(&app, "after get_mut");
}

#[test]
fn a_move_through_app_world_mut_is_seen_by_a_full_pass() {
    let mut app = app();
    let (forest, _) = forest_with_movers(&mut app);
    app.run_frames(2);
    let child = children(app.world(), forest.roots[5])[0];
    app.world_mut().get::<&mut Transform>(child).expect("alive").translation.z += 4.0;
    app.run_frame();
    assert_eq!(report(&app).last_pass, PassKind::Full, "a lent world may have changed anything");
    assert_matches_full_pass(&app, "after world_mut");
    app.run_frame();
    assert_eq!(report(&app).last_pass, PassKind::Skipped, "and the frame after, nothing moved");
}

#[test]
fn reparenting_through_hierarchy_commands_moves_the_child_with_its_new_parent() {
    let mut app = app();
    let (forest, _) = forest_with_movers(&mut app);
    let child = children(app.world(), forest.roots[0])[0];
    let new_parent = forest.roots[7];
    app.add_system(
        Stage::Input,
        System::new("adopt", move |ctx| {
            if ctx.time.frame_index == 2 {
                ctx.commands.set_parent(child, new_parent);
            }
        }),
    );
    app.run_frames(3);
    assert_eq!(parent_of(app.world(), child), Some(new_parent));
    let local = app.world().get::<&Transform>(child).expect("alive").translation;
    let parent_world = app.world().get::<&WorldTransform>(new_parent).expect("a node").0;
    assert!(
        translation(app.world(), child).abs_diff_eq(parent_world.transform_point3(local), 1e-4),
        "the child sits under its new parent in the frame it was re-parented"
    );
    assert_matches_full_pass(&app, "after re-parenting");
}

#[test]
fn a_despawned_node_whose_id_is_reused_by_a_new_node_is_placed_afresh() {
    let mut app = app();
    let (forest, _) = forest_with_movers(&mut app);
    let leaf = *forest.entities.last().expect("a forest");
    let new_parent = forest.roots[2];
    let spawned = Arc::new(Mutex::new(None));
    let record = Arc::clone(&spawned);
    app.add_system(
        Stage::Input,
        System::new("replace", move |ctx| match ctx.time.frame_index {
            2 => ctx.commands.despawn(leaf),
            3 => {
                let entity = ctx.commands.spawn((Transform::from_translation(Vec3::new(0.0, 7.0, 0.0)),));
                ctx.commands.set_parent(entity, new_parent);
                *record.lock().expect("not poisoned") = Some(entity);
            }
            _ => {}
        })
        .spawns(),
    );
    app.run_frames(4);
    let entity = spawned.lock().expect("not poisoned").expect("spawned in frame 3");
    assert_eq!(entity.id(), leaf.id(), "the test needs the id to be reused");
    let parent_world = app.world().get::<&WorldTransform>(new_parent).expect("a node").0;
    assert_eq!(translation(app.world(), entity), parent_world.transform_point3(Vec3::new(0.0, 7.0, 0.0)));
    assert_matches_full_pass(&app, "after despawn and spawn in the same slot");
    // The next frame applies the WorldTransform given to the newcomer; the one after is still.
    app.run_frames(2);
    assert_eq!(report(&app).last_pass, PassKind::Skipped);
}

#[test]
fn static_nodes_are_neither_recomputed_nor_reported_written() {
    let mut app = app();
    let (forest, movers) = forest_with_movers(&mut app);
    add_driver(&mut app);
    app.run_frames(2);
    let moved: Vec<Entity> = movers.iter().flat_map(|&mover| subtree(app.world(), mover)).collect();
    let still: Vec<Entity> = forest.entities.iter().copied().filter(|entity| !moved.contains(entity)).collect();
    let still_before: Vec<[u32; 16]> = still.iter().map(|&entity| world_bits(app.world(), entity)).collect();
    let (mut cursor, mut changed) = (ChangeCursor::default(), ChangedSince::default());
    let types = [TypeId::of::<WorldTransform>()];
    app.changes().collect(&mut cursor, &types, &mut changed);
    app.run_frame();
    app.changes().collect(&mut cursor, &types, &mut changed);
    assert!(!changed.everything, "the hierarchy system no longer reports that anything may have changed");
    assert!(changed.archetypes.is_empty(), "an incremental pass records entities, not archetypes");
    let mut written = changed.entities.clone();
    written.sort_unstable_by_key(|entity| entity.to_bits());
    let mut expected = moved.clone();
    expected.sort_unstable_by_key(|entity| entity.to_bits());
    assert_eq!(written, expected, "exactly the moved subtrees are reported written");
    let still_after: Vec<[u32; 16]> = still.iter().map(|&entity| world_bits(app.world(), entity)).collect();
    assert_eq!(still_before, still_after, "a static child of a static parent keeps its bits");
}

#[test]
fn a_frame_where_nothing_moved_is_skipped_and_writes_nothing() {
    let mut app = app();
    forest_with_movers(&mut app);
    app.run_frames(2);
    let (mut cursor, mut changed) = (ChangeCursor::default(), ChangedSince::default());
    let types = [TypeId::of::<WorldTransform>(), TypeId::of::<u64>()];
    app.changes().collect(&mut cursor, &types, &mut changed);
    app.run_frame();
    app.changes().collect(&mut cursor, &types, &mut changed);
    assert_eq!(report(&app).last_pass, PassKind::Skipped);
    assert_eq!(report(&app).updated, 0);
    assert!(changed.is_empty(), "nothing written and nothing structural: {changed:?}");
}

#[test]
fn a_query_that_lends_without_writing_costs_a_compare_and_a_wide_one_runs_the_full_pass() {
    let mut app = app();
    forest_with_movers(&mut app);
    app.add_system(
        Stage::Input,
        System::new("look", |ctx| {
            let mut query = ctx.query::<MoverQuery>();
            assert!(query.iter().count() > 0, "the movers are found");
        })
        .query::<MoverQuery>(),
    );
    app.run_frames(3);
    assert_eq!((report(&app).last_pass, report(&app).updated), (PassKind::Incremental, 0));
    app.add_system(
        Stage::Input,
        System::new("everyone", |ctx| {
            for transform in ctx.query::<&mut Transform>().iter() {
                transform.scale *= 1.0;
            }
        })
        .query::<&mut Transform>(),
    );
    app.run_frame();
    assert_eq!(report(&app).last_pass, PassKind::Full, "every node a candidate: the full pass is cheaper");
    assert_matches_full_pass(&app, "after a wide query");
}

#[test]
fn a_despawned_parent_still_orphans_its_children_where_they_stand() {
    let mut app = app();
    let (forest, _) = forest_with_movers(&mut app);
    let parent = children(app.world(), forest.roots[4])[0];
    let orphans = children(app.world(), parent);
    app.add_system(
        Stage::Input,
        System::new("cut", move |ctx| {
            if ctx.time.frame_index == 2 {
                ctx.commands.despawn(parent);
            }
        }),
    );
    app.run_frames(2);
    let stands: Vec<Vec3> = orphans.iter().map(|&orphan| translation(app.world(), orphan)).collect();
    app.run_frame();
    assert_eq!(report(&app).orphans_this_frame, orphans.len());
    for (&orphan, &stood) in orphans.iter().zip(&stands) {
        assert_eq!(parent_of(app.world(), orphan), None);
        assert!(translation(app.world(), orphan).abs_diff_eq(stood, 1e-4), "no jump");
    }
    app.run_frames(2);
    assert_eq!(report(&app).last_pass, PassKind::Skipped);
    assert_matches_full_pass(&app, "after orphaning");
}

/// One frame's worth of random edits, applied by the `act` system (or, for `world_mut`,
/// before the frame).
#[derive(Clone, Debug)]
enum Edit {
    /// Every `Mover` moves by this much through a filtered query.
    Drive(f32),
    /// A node's `Transform` is set through `get_mut`.
    Place(prop::sample::Index, Transform),
    /// A node's `Transform` is set through `App::world_mut`.
    PlaceDirectly(prop::sample::Index, Transform),
    /// A node is re-parented under another through `HierarchyCommands`.
    Adopt(prop::sample::Index, prop::sample::Index),
    /// A node is despawned through commands (its children become roots).
    Despawn(prop::sample::Index),
    /// A node is spawned under another through commands.
    Spawn(Transform, prop::sample::Index),
}

pub(super) fn arbitrary_transform() -> impl Strategy<Value = Transform> {
    (prop::array::uniform3(-10.0f32..10.0), -3.2f32..3.2, 0.25f32..2.0).prop_map(|(translation, angle, scale)| {
        Transform {
            translation: Vec3::from(translation),
            rotation: Quat::from_rotation_y(angle),
            scale: Vec3::splat(scale),
        }
    })
}

fn arbitrary_edit() -> impl Strategy<Value = Edit> {
    let index = any::<prop::sample::Index>;
    prop_oneof![
        3 => (-1.0f32..1.0).prop_map(Edit::Drive),
        3 => (index(), arbitrary_transform()).prop_map(|(node, transform)| Edit::Place(node, transform)),
        1 => (index(), arbitrary_transform()).prop_map(|(node, transform)| Edit::PlaceDirectly(node, transform)),
        1 => (index(), index()).prop_map(|(child, parent)| Edit::Adopt(child, parent)),
        1 => index().prop_map(Edit::Despawn),
        1 => (arbitrary_transform(), index()).prop_map(|(transform, parent)| Edit::Spawn(transform, parent)),
    ]
}

/// What the `act` system does this frame, resolved to entities, and what it spawned.
#[derive(Default)]
struct Plan {
    drive: Option<f32>,
    place: Vec<(Entity, Transform)>,
    adopt: Vec<(Entity, Entity)>,
    despawn: Vec<Entity>,
    spawn: Vec<(Transform, Entity)>,
    spawned: Vec<Entity>,
}

fn add_actor(app: &mut App, plan: Arc<Mutex<Plan>>) {
    app.add_system(
        Stage::Input,
        System::new("act", move |ctx| {
            let mut plan = plan.lock().expect("not poisoned");
            let plan = &mut *plan;
            if let Some(step) = plan.drive.take() {
                for transform in ctx.query::<MoverQuery>().iter() {
                    transform.translation.y += step;
                }
            }
            for (entity, transform) in plan.place.drain(..) {
                if let Ok(mut local) = ctx.get_mut::<Transform>(entity) {
                    *local = transform;
                }
            }
            for (child, parent) in plan.adopt.drain(..) {
                ctx.commands.set_parent(child, parent);
            }
            for entity in plan.despawn.drain(..) {
                ctx.commands.despawn(entity);
            }
            for (transform, parent) in plan.spawn.drain(..) {
                let entity = ctx.commands.spawn((transform,));
                ctx.commands.set_parent(entity, parent);
                plan.spawned.push(entity);
            }
        })
        .query::<MoverQuery>()
        .writes::<Transform>()
        .spawns(),
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random forests, then frames of random edits through every public means: after each
    /// frame the matrices equal a fresh full pass bit for bit.
    #[test]
    fn change_driven_passes_equal_the_full_pass(
        roots in 4usize..20,
        branching in prop::collection::vec(1usize..4, 0..3),
        movers in prop::collection::vec(any::<prop::sample::Index>(), 0..3),
        frames in prop::collection::vec(prop::collection::vec(arbitrary_edit(), 0..3), 1..8),
    ) {
        let mut app = app();
        let forest = scene::spawn_forest(app.world_mut(), roots, &branching, scene::unit_cube_mesh());
        let mut nodes = forest.entities.clone();
        for mover in &movers {
            app.world_mut().insert_one(*mover.get(&nodes), Mover).expect("just spawned");
        }
        let plan = Arc::new(Mutex::new(Plan::default()));
        add_actor(&mut app, Arc::clone(&plan));
        app.run_frames(2);
        for (frame, edits) in frames.iter().enumerate() {
            nodes.retain(|&node| app.world().contains(node));
            {
                let mut plan = plan.lock().expect("not poisoned");
                for edit in edits {
                    if nodes.is_empty() {
                        break;
                    }
                    match edit {
                        Edit::Drive(step) => plan.drive = Some(*step),
                        Edit::Place(node, transform) => plan.place.push((*node.get(&nodes), *transform)),
                        Edit::PlaceDirectly(node, transform) => {
                            *app.world_mut().get::<&mut Transform>(*node.get(&nodes)).expect("alive") = *transform;
                        }
                        Edit::Adopt(child, parent) => plan.adopt.push((*child.get(&nodes), *parent.get(&nodes))),
                        Edit::Despawn(node) => plan.despawn.push(*node.get(&nodes)),
                        Edit::Spawn(transform, parent) => plan.spawn.push((*transform, *parent.get(&nodes))),
                    }
                }
            }
            app.run_frame();
            nodes.append(&mut plan.lock().expect("not poisoned").spawned);
            assert_matches_full_pass(&app, &format!("frame {frame} after {edits:?}"));
        }
    }
}

#[test]
fn hierarchy_commands_log_the_entities_they_change_not_everything() {
    let mut app = app();
    let world = app.world_mut();
    let (old_parent, new_parent) = (world.spawn((Transform::IDENTITY,)), world.spawn((Transform::IDENTITY,)));
    let child = world.spawn((Transform::IDENTITY,));
    set_parent(world, child, old_parent).expect("alive");
    let step = Arc::new(Mutex::new(0u32));
    let system_step = step.clone();
    app.add_system(
        Stage::Input,
        System::new("edit", move |ctx| match std::mem::take(&mut *system_step.lock().expect("not poisoned")) {
            1 => ctx.commands.set_parent(child, new_parent),
            2 => ctx.commands.remove_parent(child),
            3 => ctx.commands.despawn_recursive(new_parent),
            _ => {}
        }),
    );
    let (mut cursor, mut changed) = (ChangeCursor::default(), ChangedSince::default());
    app.run_frames(2);
    app.changes().collect(&mut cursor, &[], &mut changed);
    for (value, expected) in [(1, vec![child, new_parent, old_parent]), (2, vec![child, new_parent])] {
        *step.lock().expect("not poisoned") = value;
        app.run_frame();
        app.changes().collect(&mut cursor, &[], &mut changed);
        assert!(!changed.everything, "step {value}: a hierarchy command names what it changed");
        for entity in expected {
            assert!(changed.entities.contains(&entity), "step {value}: {entity:?} is logged");
        }
    }
    set_parent(app.world_mut(), child, new_parent).expect("alive");
    app.run_frame();
    app.changes().collect(&mut cursor, &[], &mut changed);
    *step.lock().expect("not poisoned") = 3;
    app.run_frame();
    app.changes().collect(&mut cursor, &[], &mut changed);
    assert!(!changed.everything);
    assert!(
        changed.entities.contains(&new_parent) && changed.entities.contains(&child),
        "the despawned subtree is logged"
    );
    assert!(!app.world().contains(child) && !app.world().contains(new_parent));
}

/// A tag-like marker moved between archetypes every frame, as the Visibility stage's tags do.
struct Tagged;

#[test]
fn nodes_moved_between_archetypes_by_a_tag_system_keep_frames_incremental() {
    let mut app = app();
    let (forest, _) = forest_with_movers(&mut app);
    add_driver(&mut app);
    // An exclusive system that tags and untags a changing half of the nodes each frame,
    // logging its writes under the tag's type (which the hierarchy does not read).
    let nodes = forest.entities.clone();
    let mut frame = 0usize;
    app.add_system(
        Stage::Render,
        System::new_exclusive("tags", move |ctx| {
            frame += 1;
            let mut touched = Vec::new();
            for (index, &entity) in nodes.iter().enumerate() {
                let tag = (index + frame).is_multiple_of(3);
                let has = ctx.world.get::<&Tagged>(entity).is_ok();
                if tag && !has {
                    ctx.world.insert_one(entity, Tagged).expect("alive");
                    touched.push(entity);
                } else if !tag && has {
                    ctx.world.remove_one::<Tagged>(entity).expect("tagged");
                    touched.push(entity);
                }
            }
            ctx.changes().record_entity_writes(TypeId::of::<Tagged>(), &touched);
        })
        .reports_own_changes(),
    );
    app.run_frames(3);
    for frame in 0..6 {
        app.run_frame();
        assert_eq!(report(&app).last_pass, PassKind::Incremental, "frame {frame}: rows moved, the nodes did not");
        assert_matches_full_pass(&app, &format!("frame {frame}"));
    }
}
