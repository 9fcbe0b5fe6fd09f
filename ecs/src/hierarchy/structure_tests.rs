//! The incremental pass under structural change: spawns, despawns, re-parenting, component
//! inserts and removals and archetype moves are applied to its link data frame after frame,
//! with matrices bit-identical to a fresh full pass, the full pass only where the log says
//! anything may have changed or the changes are too many, and every changed matrix logged.

use std::any::TypeId;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use glam::Vec3;
use hecs::{Entity, World};
use proptest::prelude::*;
use proptest::sample::Index;
use runtime::changes::{ChangeCursor, ChangedSince};
use runtime::{App, Stage, System};

use super::change_tests::{
    app, arbitrary_transform, assert_matches_full_pass, report, snapshot, subtree, translation, Mover, MoverQuery,
};
use super::propagate::{INCREMENTAL_SHARE, NAMED_WEIGHT};
use super::*;
use crate::scene;
use crate::transform::{Transform, WorldTransform};

/// A tag moved by commands: an archetype move the log names.
struct Tag;

/// A tag moved by an exclusive system that logs it only as a write of its own type, as the
/// Visibility stage's tags are: rows move, and the log names no structural change.
struct Quiet;

/// Runs a fresh full pass over the app's world and checks that the app's report counts the
/// same nodes and levels.
fn assert_counts_match_full_pass(app: &App, what: &str) {
    let (mut fresh, mut commands, mut fresh_report) =
        (Propagator::default(), hecs::CommandBuffer::new(), HierarchyReport::default());
    fresh.run(app.world(), &mut commands, &mut fresh_report);
    let ours = report(app);
    assert_eq!((ours.nodes, ours.levels), (fresh_report.nodes, fresh_report.levels), "{what}: nodes and levels");
}

/// One frame's worth of random edits, resolved against the world before the frame.
#[derive(Clone, Debug)]
enum Edit {
    /// Every `Mover` moves by this much through a filtered query.
    Drive(f32),
    /// A node's `Transform` is set through `get_mut`.
    Place(Index, Transform),
    /// A node's `Transform` is set through `App::world_mut` (the log says "everything").
    PlaceDirectly(Index, Transform),
    /// A node is re-parented under another through `HierarchyCommands`.
    Adopt(Index, Index),
    /// A node is made a root through `HierarchyCommands::remove_parent`.
    Detach(Index),
    /// A node is despawned through commands (its children become orphans).
    Despawn(Index),
    /// A node and its subtree are despawned through `HierarchyCommands`.
    DespawnRecursive(Index),
    /// A node is spawned, under another or as a root, with or without a `WorldTransform`.
    Spawn(Transform, Option<Index>, bool),
    /// A node gains the [`Tag`] through commands (an archetype move).
    Tag(Index),
    /// A node loses the [`Tag`] through commands.
    Untag(Index),
    /// A node loses its `Transform` (it stops being a node; its children wait as roots).
    DropTransform(Index),
    /// An entity without a `Transform` gets one back.
    GiveTransform(Index, Transform),
    /// A node loses its `WorldTransform` (the hierarchy gives it one again).
    DropWorld(Index),
    /// A node's `Parent` is set, directly, to a despawned entity (it becomes an orphan).
    Orphan(Index),
    /// A node gains or loses [`Quiet`] through the exclusive system that does not name it.
    Quiet(Index),
}

fn arbitrary_edit() -> impl Strategy<Value = Edit> {
    let index = any::<Index>;
    prop_oneof![
        2 => (-1.0f32..1.0).prop_map(Edit::Drive),
        2 => (index(), arbitrary_transform()).prop_map(|(node, local)| Edit::Place(node, local)),
        1 => (index(), arbitrary_transform()).prop_map(|(node, local)| Edit::PlaceDirectly(node, local)),
        2 => (index(), index()).prop_map(|(child, parent)| Edit::Adopt(child, parent)),
        1 => index().prop_map(Edit::Detach),
        2 => index().prop_map(Edit::Despawn),
        1 => index().prop_map(Edit::DespawnRecursive),
        3 => (arbitrary_transform(), prop::option::of(index()), any::<bool>())
            .prop_map(|(local, parent, with_world)| Edit::Spawn(local, parent, with_world)),
        2 => index().prop_map(Edit::Tag),
        1 => index().prop_map(Edit::Untag),
        1 => index().prop_map(Edit::DropTransform),
        1 => (index(), arbitrary_transform()).prop_map(|(entity, local)| Edit::GiveTransform(entity, local)),
        1 => index().prop_map(Edit::DropWorld),
        1 => index().prop_map(Edit::Orphan),
        2 => index().prop_map(Edit::Quiet),
    ]
}

/// An edit resolved to entities, for the `act` system.
#[derive(Clone, Copy, Debug)]
enum Action {
    Place(Entity, Transform),
    Adopt(Entity, Entity),
    Detach(Entity),
    Despawn(Entity),
    DespawnRecursive(Entity),
    Spawn(Transform, Option<Entity>, bool),
    Tag(Entity),
    Untag(Entity),
    DropTransform(Entity),
    GiveTransform(Entity, Transform),
    DropWorld(Entity),
    Orphan(Entity, Entity),
}

/// What the systems of the test app do this frame, and what they spawned.
#[derive(Default)]
struct Plan {
    drive: Option<f32>,
    actions: Vec<Action>,
    quiet: Vec<Entity>,
    spawned: Vec<Entity>,
}

/// What the probes around the hierarchy system saw this frame.
#[derive(Default)]
struct Seen {
    /// Before it: the log said "everything", or named more candidates than the incremental
    /// pass takes on.
    expect_full: bool,
    /// After it: the log said "everything" about `WorldTransform`.
    logged_everything: bool,
    /// After it: the entities whose `WorldTransform` the log says was written or which
    /// changed structurally, and the ids in the archetypes it says were written.
    logged: HashSet<Entity>,
    logged_ids: HashSet<u32>,
}

fn add_systems(app: &mut App, plan: Arc<Mutex<Plan>>, seen: Arc<Mutex<Seen>>) {
    let actor_plan = Arc::clone(&plan);
    app.add_system(
        Stage::Input,
        System::new("act", move |ctx| {
            let mut plan = actor_plan.lock().expect("not poisoned");
            let plan = &mut *plan;
            if let Some(step) = plan.drive.take() {
                for transform in ctx.query::<MoverQuery>().iter() {
                    transform.translation.y += step;
                }
            }
            for action in plan.actions.drain(..) {
                match action {
                    Action::Place(entity, local) => {
                        if let Ok(mut stored) = ctx.get_mut::<Transform>(entity) {
                            *stored = local;
                        }
                    }
                    Action::Adopt(child, parent) => ctx.commands.set_parent(child, parent),
                    Action::Detach(child) => ctx.commands.remove_parent(child),
                    Action::Despawn(entity) => ctx.commands.despawn(entity),
                    Action::DespawnRecursive(entity) => ctx.commands.despawn_recursive(entity),
                    Action::Spawn(local, parent, with_world) => {
                        let entity = if with_world {
                            ctx.commands.spawn((local, WorldTransform::from(local)))
                        } else {
                            ctx.commands.spawn((local,))
                        };
                        if let Some(parent) = parent {
                            ctx.commands.set_parent(entity, parent);
                        }
                        plan.spawned.push(entity);
                    }
                    Action::Tag(entity) => ctx.commands.insert_one(entity, Tag),
                    Action::Untag(entity) => ctx.commands.remove_one::<Tag>(entity),
                    Action::DropTransform(entity) => ctx.commands.remove_one::<Transform>(entity),
                    Action::GiveTransform(entity, local) => ctx.commands.insert_one(entity, local),
                    Action::DropWorld(entity) => ctx.commands.remove_one::<WorldTransform>(entity),
                    Action::Orphan(entity, gone) => ctx.commands.insert_one(entity, Parent(gone)),
                }
            }
        })
        .query::<MoverQuery>()
        .writes::<Transform>()
        .spawns(),
    );
    app.add_system(
        Stage::Render,
        System::new_exclusive("quiet tags", move |ctx| {
            let mut plan = plan.lock().expect("not poisoned");
            for &entity in &plan.quiet {
                if ctx.world.get::<&Quiet>(entity).is_ok() {
                    ctx.world.remove_one::<Quiet>(entity).expect("it has the tag");
                } else {
                    let _ = ctx.world.insert_one(entity, Quiet);
                }
            }
            ctx.changes().record_entity_writes(TypeId::of::<Quiet>(), &plan.quiet);
            plan.quiet.clear();
        })
        .reports_own_changes(),
    );
    let before = Arc::clone(&seen);
    let (mut cursor, mut changed) = (ChangeCursor::default(), ChangedSince::default());
    app.add_system(
        Stage::Transform,
        System::new_exclusive("probe inputs", move |ctx| {
            ctx.changes().collect(&mut cursor, &[TypeId::of::<Transform>(), TypeId::of::<Parent>()], &mut changed);
            let nodes = ctx.try_resource::<HierarchyReport>().expect("installed").nodes;
            let archetypes: Vec<_> = ctx.world.archetypes().collect();
            let written: usize = (changed.archetypes.iter())
                .map(|&position| archetypes[position as usize])
                .filter(|archetype| !archetype.is_empty() && archetype.has::<Transform>())
                .map(|archetype| archetype.len() as usize)
                .sum();
            before.lock().expect("not poisoned").expect_full =
                changed.everything || written + NAMED_WEIGHT * changed.entities.len() > nodes / INCREMENTAL_SHARE;
        })
        .reports_own_changes()
        .before(HIERARCHY_SYSTEM),
    );
    let (mut cursor, mut changed) = (ChangeCursor::default(), ChangedSince::default());
    app.add_system(
        Stage::Transform,
        System::new_exclusive("probe writes", move |ctx| {
            ctx.changes().collect(&mut cursor, &[TypeId::of::<WorldTransform>()], &mut changed);
            let mut seen = seen.lock().expect("not poisoned");
            seen.logged_everything = changed.everything;
            seen.logged = changed.entities.iter().copied().collect();
            let archetypes: Vec<_> = ctx.world.archetypes().collect();
            seen.logged_ids =
                changed.archetypes.iter().flat_map(|&position| archetypes[position as usize].ids()).copied().collect();
        })
        .reports_own_changes()
        .after(HIERARCHY_SYSTEM),
    );
}

/// Resolves `edits` against the world as it stands: `nodes` are the living entities with a
/// `Transform`, `bare` the living ones without, `gone` the despawned ones.
fn resolve(app: &mut App, plan: &mut Plan, edits: &[Edit], gone: &[Entity]) {
    let sorted = |mut entities: Vec<Entity>| {
        entities.sort_unstable_by_key(|entity| entity.to_bits());
        entities
    };
    let nodes = sorted(app.world().query::<Entity>().with::<&Transform>().iter().collect());
    let bare = sorted(app.world().query::<Entity>().without::<&Transform>().iter().collect());
    for edit in edits {
        if nodes.is_empty() {
            break;
        }
        let action = match edit {
            Edit::Drive(step) => {
                plan.drive = Some(*step);
                continue;
            }
            Edit::PlaceDirectly(node, local) => {
                *app.world_mut().get::<&mut Transform>(*node.get(&nodes)).expect("alive") = *local;
                continue;
            }
            Edit::Quiet(node) => {
                plan.quiet.push(*node.get(&nodes));
                continue;
            }
            Edit::GiveTransform(entity, local) => match bare.is_empty() {
                true => continue,
                false => Action::GiveTransform(*entity.get(&bare), *local),
            },
            Edit::Orphan(node) => match gone.last() {
                Some(&gone) => Action::Orphan(*node.get(&nodes), gone),
                None => continue,
            },
            Edit::Place(node, local) => Action::Place(*node.get(&nodes), *local),
            Edit::Adopt(child, parent) => Action::Adopt(*child.get(&nodes), *parent.get(&nodes)),
            Edit::Detach(node) => Action::Detach(*node.get(&nodes)),
            Edit::Despawn(node) => Action::Despawn(*node.get(&nodes)),
            Edit::DespawnRecursive(node) => Action::DespawnRecursive(*node.get(&nodes)),
            Edit::Spawn(local, parent, with_world) => {
                Action::Spawn(*local, parent.map(|parent| *parent.get(&nodes)), *with_world)
            }
            Edit::Tag(node) => Action::Tag(*node.get(&nodes)),
            Edit::Untag(node) => Action::Untag(*node.get(&nodes)),
            Edit::DropTransform(node) => Action::DropTransform(*node.get(&nodes)),
            Edit::DropWorld(node) => Action::DropWorld(*node.get(&nodes)),
        };
        plan.actions.push(action);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Random forests, then frames of random structural and value edits through every means a
    /// game has: after each frame the matrices equal a fresh full pass bit for bit, the node
    /// and level counts match it, the full pass ran exactly when the log said "everything"
    /// or named too many candidates, and every matrix that changed was logged.
    #[test]
    fn structural_changes_keep_the_incremental_pass_equal_to_the_full_pass(
        roots in 8usize..60,
        branching in prop::collection::vec(1usize..4, 0..3),
        movers in prop::collection::vec(any::<Index>(), 0..4),
        frames in prop::collection::vec(prop::collection::vec(arbitrary_edit(), 0..6), 1..10),
    ) {
        let mut app = app();
        let forest = scene::spawn_forest(app.world_mut(), roots, &branching, scene::unit_cube_mesh());
        for mover in &movers {
            app.world_mut().insert_one(*mover.get(&forest.entities), Mover).expect("just spawned");
        }
        let (plan, seen) = (Arc::new(Mutex::new(Plan::default())), Arc::new(Mutex::new(Seen::default())));
        add_systems(&mut app, Arc::clone(&plan), Arc::clone(&seen));
        app.run_frames(2);
        let mut spawned: Vec<Entity> = forest.entities.clone();
        let mut before: HashMap<Entity, [u32; 16]> = snapshot(app.world()).into_iter().collect();
        for (frame, edits) in frames.iter().enumerate() {
            let gone: Vec<Entity> = spawned.iter().copied().filter(|&entity| !app.world().contains(entity)).collect();
            resolve(&mut app, &mut plan.lock().expect("not poisoned"), edits, &gone);
            app.run_frame();
            spawned.append(&mut plan.lock().expect("not poisoned").spawned);
            let what = format!("frame {frame} after {edits:?}");
            assert_matches_full_pass(&app, &what);
            assert_counts_match_full_pass(&app, &what);
            let seen = seen.lock().expect("not poisoned");
            prop_assert_eq!(report(&app).last_pass == PassKind::Full, seen.expect_full, "{}: the pass taken", what);
            let after: HashMap<Entity, [u32; 16]> = snapshot(app.world()).into_iter().collect();
            for (entity, bits) in &after {
                if before.get(entity) != Some(bits) {
                    let logged = seen.logged_everything
                        || seen.logged.contains(entity)
                        || seen.logged_ids.contains(&entity.id());
                    prop_assert!(logged, "{}: {:?}'s new matrix was not logged", what, entity);
                }
            }
            before = after;
        }
    }
}

/// A forest of 40 trees of 7 nodes (1 + 2 + 4): 280 nodes.
fn forest(app: &mut App) -> scene::Forest {
    scene::spawn_forest(app.world_mut(), 40, &[2, 2], scene::unit_cube_mesh())
}

#[test]
fn spawning_and_despawning_every_frame_keeps_the_pass_incremental() {
    let mut app = app();
    let forest = forest(&mut app);
    let parent = forest.roots[3];
    let fired = Arc::new(Mutex::new(std::collections::VecDeque::new()));
    let system_fired = Arc::clone(&fired);
    app.add_system(
        Stage::Input,
        System::new("fire", move |ctx| {
            let mut fired = system_fired.lock().expect("not poisoned");
            if fired.len() >= 6 {
                for _ in 0..2 {
                    ctx.commands.despawn(fired.pop_front().expect("six fired"));
                }
            }
            let step = ctx.time.frame_index as f32;
            // One root spawned whole, one child spawned without a WorldTransform.
            let local = Transform::from_translation(Vec3::new(step, 1.0, 0.0));
            fired.push_back(ctx.commands.spawn((local, WorldTransform::from(local))));
            let child = ctx.commands.spawn((Transform::from_translation(Vec3::new(0.0, step, 2.0)),));
            ctx.commands.set_parent(child, parent);
            fired.push_back(child);
        })
        .spawns(),
    );
    app.run_frames(2);
    for frame in 0..8 {
        app.run_frame();
        let report = report(&app);
        assert_eq!(report.last_pass, PassKind::Incremental, "frame {frame}: two spawns and two despawns");
        assert_eq!(report.updated, 2, "frame {frame}: the two new nodes, nothing else");
        assert_matches_full_pass(&app, &format!("frame {frame}"));
        assert_counts_match_full_pass(&app, &format!("frame {frame}"));
    }
    let newest = *fired.lock().expect("not poisoned").back().expect("fired");
    let parent_world = app.world().get::<&WorldTransform>(parent).expect("a node").0;
    let local = app.world().get::<&Transform>(newest).expect("alive").translation;
    assert_eq!(translation(app.world(), newest), parent_world.transform_point3(local), "placed under its parent");
}

#[test]
fn a_subtree_moved_under_another_tree_is_relinked_and_deepens_the_levels() {
    let mut app = app();
    let forest = forest(&mut app);
    let (moving, leaf) = (forest.roots[0], *subtree(app.world(), forest.roots[9]).last().expect("a tree"));
    app.add_system(
        Stage::Input,
        System::new("adopt", move |ctx| {
            if ctx.time.frame_index == 2 {
                ctx.commands.set_parent(moving, leaf);
            }
        }),
    );
    app.run_frames(3);
    let report = report(&app);
    assert_eq!((report.last_pass, report.updated), (PassKind::Incremental, 7), "the moved tree only");
    assert_eq!((report.nodes, report.levels), (280, 6), "a tree of three levels under a leaf of depth 2");
    assert_matches_full_pass(&app, "after the move");
    app.run_frames(2);
    assert_eq!(super::change_tests::report(&app).last_pass, PassKind::Skipped);
}

#[test]
fn a_despawned_parent_orphans_its_children_in_an_incremental_pass() {
    let mut app = app();
    let forest = forest(&mut app);
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
    let report = report(&app);
    assert_eq!(report.last_pass, PassKind::Incremental);
    assert_eq!((report.orphans_this_frame, report.orphans_detached), (2, 2));
    for (&orphan, &stood) in orphans.iter().zip(&stands) {
        assert_eq!(parent_of(app.world(), orphan), None, "its Parent was removed");
        assert!(translation(app.world(), orphan).abs_diff_eq(stood, 1e-4), "no jump");
    }
    assert_matches_full_pass(&app, "after orphaning");
    app.run_frame();
    assert_eq!(super::change_tests::report(&app).orphans_this_frame, 0, "each orphan is detached once");
    app.run_frame();
    assert_eq!(super::change_tests::report(&app).last_pass, PassKind::Skipped);
}

#[test]
fn children_of_a_parent_without_transform_wait_as_roots_and_follow_it_again() {
    let mut app = app();
    let forest = forest(&mut app);
    let parent = children(app.world(), forest.roots[5])[1];
    let kids = children(app.world(), parent);
    let step = Arc::new(Mutex::new(0));
    let system_step = Arc::clone(&step);
    app.add_system(
        Stage::Input,
        System::new("strip", move |ctx| match std::mem::take(&mut *system_step.lock().expect("not poisoned")) {
            1 => ctx.commands.remove_one::<Transform>(parent),
            2 => ctx.commands.insert_one(parent, Transform::from_translation(Vec3::new(0.0, 5.0, 0.0))),
            _ => {}
        }),
    );
    app.run_frames(2);
    *step.lock().expect("not poisoned") = 1;
    app.run_frame();
    assert_eq!(report(&app).last_pass, PassKind::Incremental);
    for &kid in &kids {
        let local = app.world().get::<&Transform>(kid).expect("alive").translation;
        assert_eq!(translation(app.world(), kid), local, "placed as a root");
    }
    assert_matches_full_pass(&app, "parent without Transform");
    assert_counts_match_full_pass(&app, "parent without Transform");
    *step.lock().expect("not poisoned") = 2;
    app.run_frame();
    assert_eq!(report(&app).last_pass, PassKind::Incremental);
    let parent_world = app.world().get::<&WorldTransform>(parent).expect("given one again").0;
    for &kid in &kids {
        let local = app.world().get::<&Transform>(kid).expect("alive").translation;
        assert!(translation(app.world(), kid).abs_diff_eq(parent_world.transform_point3(local), 1e-5));
    }
    assert_matches_full_pass(&app, "parent with a Transform again");
    assert_counts_match_full_pass(&app, "parent with a Transform again");
}

#[test]
fn changes_to_more_than_the_incremental_share_of_the_nodes_run_the_full_pass() {
    let mut app = app();
    forest(&mut app);
    let count = Arc::new(Mutex::new(0));
    let system_count = Arc::clone(&count);
    app.add_system(
        Stage::Input,
        System::new("burst", move |ctx| {
            for index in 0..std::mem::take(&mut *system_count.lock().expect("not poisoned")) {
                ctx.commands.spawn((Transform::from_translation(Vec3::splat(index as f32)),));
            }
        })
        .spawns(),
    );
    app.run_frames(2);
    // Each spawn is one entity named by the log.
    let share = 280 / INCREMENTAL_SHARE / NAMED_WEIGHT;
    for (burst, pass) in [(share, PassKind::Incremental), (share + 1, PassKind::Full)] {
        *count.lock().expect("not poisoned") = burst;
        app.run_frame();
        assert_eq!(report(&app).last_pass, pass, "{burst} spawns among {} nodes", report(&app).nodes);
        assert_matches_full_pass(&app, &format!("{burst} spawns"));
    }
}

/// The node count of `world` (entities with a `Transform`).
fn nodes(world: &World) -> usize {
    world.query::<&Transform>().iter().count()
}

#[test]
fn a_recursive_despawn_and_archetype_moves_leave_no_node_behind() {
    let mut app = app();
    let forest = forest(&mut app);
    let (doomed, tagged) = (forest.roots[7], forest.roots[8]);
    app.add_system(
        Stage::Input,
        System::new("clear", move |ctx| {
            if ctx.time.frame_index == 2 {
                ctx.commands.despawn_recursive(doomed);
                ctx.commands.insert_one(tagged, Tag);
                ctx.commands.insert_one(tagged, Transform::from_translation(Vec3::Y));
            }
        }),
    );
    app.run_frames(3);
    let report = report(&app);
    assert_eq!(report.last_pass, PassKind::Incremental);
    assert_eq!(report.nodes, nodes(app.world()));
    assert_eq!(report.updated, 7, "the moved tree; the despawned one needs nothing");
    assert_matches_full_pass(&app, "after a recursive despawn and a tag");
}

#[test]
fn a_loop_made_by_a_raw_parent_is_cut_by_a_full_pass_and_later_frames_stay_incremental() {
    let mut app = app();
    let forest = forest(&mut app);
    let (root, child) = (forest.roots[2], children(app.world(), forest.roots[2])[0]);
    app.add_system(
        Stage::Input,
        System::new("loop", move |ctx| match ctx.time.frame_index {
            // Past `set_parent`, which refuses loops.
            2 => ctx.commands.insert_one(root, Parent(child)),
            4 => {
                ctx.commands.spawn((Transform::IDENTITY,));
            }
            _ => {}
        })
        .spawns(),
    );
    app.run_frames(3);
    assert_eq!((report(&app).last_pass, report(&app).cycles_cut), (PassKind::Full, 1), "only the full pass cuts");
    assert_matches_full_pass(&app, "after the loop was cut");
    app.run_frames(2);
    assert_eq!(report(&app).last_pass, PassKind::Incremental, "a spawn away from the loop");
    assert_eq!(report(&app).cycles_cut, 1, "the cut stays");
    assert_matches_full_pass(&app, "a spawn away from the loop");
}
