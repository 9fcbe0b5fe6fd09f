use glam::{Mat4, Quat, Vec3};
use hecs::{Entity, World};
use proptest::prelude::*;
use runtime::App;

use super::*;
use crate::scene;
use crate::transform::{Transform, WorldTransform};

fn app() -> App {
    let mut app = App::new();
    crate::install(&mut app);
    app
}

fn world_of(world: &World, entity: Entity) -> Mat4 {
    world.get::<&WorldTransform>(entity).expect("every node has a WorldTransform").0
}

/// Parent world × local, by walking up the `Parent` links: the reference.
fn brute_force(world: &World, entity: Entity) -> Mat4 {
    let local = world.get::<&Transform>(entity).expect("a node").to_matrix();
    match parent_of(world, entity) {
        Some(parent) => brute_force(world, parent) * local,
        None => local,
    }
}

fn assert_close(actual: Mat4, expected: Mat4, what: &str) {
    let scale = expected.to_cols_array().iter().fold(1.0f32, |most, value| most.max(value.abs()));
    assert!(actual.abs_diff_eq(expected, 1e-5 * scale), "{what}: expected {expected:?}, got {actual:?}");
}

fn arbitrary_transform() -> impl Strategy<Value = Transform> {
    (prop::array::uniform3(-10.0f32..10.0), prop::array::uniform3(-3.2f32..3.2), prop::array::uniform3(0.25f32..2.0))
        .prop_map(|(translation, angles, scale)| Transform {
            translation: Vec3::from(translation),
            rotation: Quat::from_euler(glam::EulerRot::XYZ, angles[0], angles[1], angles[2]),
            scale: Vec3::from(scale),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random trees: node i's parent is some earlier node or none; entities are spawned in a
    /// shuffled order so storage order and hierarchy order disagree.
    #[test]
    fn propagation_equals_brute_force(
        nodes in prop::collection::vec((arbitrary_transform(), any::<prop::sample::Index>(), any::<bool>()), 1..120),
        spawn_rotation in 0usize..120,
    ) {
        let mut app = app();
        let count = nodes.len();
        let mut entities = vec![None; count];
        for step in 0..count {
            let index = (step + spawn_rotation) % count;
            entities[index] = Some(app.world_mut().spawn((nodes[index].0,)));
        }
        let entities: Vec<Entity> = entities.into_iter().map(|entity| entity.expect("all spawned")).collect();
        for (index, (_, pick, is_root)) in nodes.iter().enumerate() {
            if index > 0 && !is_root {
                let parent = entities[pick.index(index)];
                set_parent(app.world_mut(), entities[index], parent).expect("an earlier node is never a descendant");
            }
        }
        app.run_frame();
        for (index, &entity) in entities.iter().enumerate() {
            assert_close(world_of(app.world(), entity), brute_force(app.world(), entity), &format!("node {index}"));
        }
    }
}

#[test]
fn any_depth_is_composed() {
    // 5: parallel depth and sort; 20: parallel depth, serial sort; 60: both serial.
    for length in [5, 20, 60] {
        let mut app = app();
        let link = Transform::from_translation(Vec3::X).with_scale(Vec3::splat(1.01));
        let links = vec![link; length];
        let chain = scene::spawn_chain(app.world_mut(), None, &links, scene::unit_cube_mesh());
        app.run_frame();
        assert_eq!(app.resource::<HierarchyReport>().levels, length);
        for (depth, &entity) in chain.iter().enumerate() {
            let what = format!("link {depth} of {length}");
            assert_close(world_of(app.world(), entity), brute_force(app.world(), entity), &what);
        }
    }
}

#[test]
fn a_reused_id_is_not_mistaken_for_the_despawned_parent() {
    let mut app = app();
    let parent = app.world_mut().spawn((Transform::from_translation(Vec3::splat(100.0)),));
    let child = app.world_mut().spawn((Transform::from_translation(Vec3::X),));
    set_parent(app.world_mut(), child, parent).expect("valid");
    app.run_frame();
    app.world_mut().despawn(parent).expect("alive");
    let stranger = app.world_mut().spawn((Transform::from_translation(Vec3::splat(-50.0)),));
    assert_eq!(stranger.id(), parent.id(), "the test needs the id to be reused");
    app.run_frame();
    let stands = Vec3::new(101.0, 100.0, 100.0);
    assert_eq!(
        world_of(app.world(), child).w_axis.truncate(),
        stands,
        "the child stays where it stood, not at the stranger"
    );
    assert_eq!(parent_of(app.world(), child), None);
}

#[test]
fn reparenting_moves_the_child_with_its_new_parent() {
    let mut app = app();
    let world = app.world_mut();
    let left = world.spawn((Transform::from_translation(Vec3::new(-10.0, 0.0, 0.0)),));
    let right = world.spawn((Transform::from_translation(Vec3::new(10.0, 0.0, 0.0)),));
    let first = world.spawn((Transform::from_translation(Vec3::Y),));
    let second = world.spawn((Transform::from_translation(Vec3::Z),));
    set_parent(world, first, left).expect("valid");
    set_parent(world, second, left).expect("valid");
    app.run_frame();
    assert_eq!(world_of(app.world(), first).w_axis.truncate(), Vec3::new(-10.0, 1.0, 0.0));

    set_parent(app.world_mut(), first, right).expect("valid");
    app.run_frame();
    assert_eq!(world_of(app.world(), first).w_axis.truncate(), Vec3::new(10.0, 1.0, 0.0));
    assert_eq!(children(app.world(), left), vec![second], "moved child must leave the old list");
    assert_eq!(children(app.world(), right), vec![first]);

    // Re-attaching keeps the order; a new child goes last.
    set_parent(app.world_mut(), second, right).expect("valid");
    set_parent(app.world_mut(), first, right).expect("valid");
    assert_eq!(children(app.world(), right), vec![first, second], "attachment order must be stable");

    assert_eq!(remove_parent(app.world_mut(), first), Ok(Some(right)));
    app.run_frame();
    assert_eq!(world_of(app.world(), first).w_axis.truncate(), Vec3::Y, "a root's world is its local");
}

#[test]
fn despawned_parent_makes_its_child_a_root_where_it_stands_once() {
    let mut app = app();
    let world = app.world_mut();
    let parent = world.spawn((Transform::from_translation(Vec3::splat(5.0)),));
    let child = world.spawn((Transform::from_translation(Vec3::X),));
    let grandchild = world.spawn((Transform::from_translation(Vec3::Y),));
    set_parent(world, child, parent).expect("valid");
    set_parent(world, grandchild, child).expect("valid");
    app.run_frame();
    app.world_mut().despawn(parent).expect("alive");
    app.run_frame();
    let stands = Vec3::new(6.0, 5.0, 5.0);
    assert_eq!(world_of(app.world(), child).w_axis.truncate(), stands, "the orphan keeps its world pose, no jump");
    assert_eq!(world_of(app.world(), grandchild).w_axis.truncate(), stands + Vec3::Y, "its subtree follows it");
    assert_eq!(app.resource::<HierarchyReport>().orphans_this_frame, 1, "reported in the frame it happened");
    app.run_frames(2);
    assert_eq!(world_of(app.world(), child).w_axis.truncate(), stands, "and stays there");
    assert_eq!(app.world().get::<&Transform>(child).expect("alive").translation, stands, "its local is the pose");
    assert_eq!(parent_of(app.world(), child), None, "its dangling Parent is removed");
    let report = *app.resource::<HierarchyReport>();
    assert_eq!((report.orphans_detached, report.orphans_this_frame), (1, 0), "reported exactly once over three frames");
}

#[test]
fn despawn_helpers_keep_the_hierarchy_consistent() {
    let mut world = World::new();
    let forest = scene::spawn_forest(&mut world, 2, &[3, 2], scene::unit_cube_mesh());
    let root = forest.roots[0];
    let middle = children(&world, root)[1];
    let orphans = children(&world, middle);
    despawn(&mut world, middle).expect("alive");
    assert_eq!(children(&world, root).len(), 2, "despawned child leaves its parent's list");
    for orphan in orphans {
        assert_eq!(parent_of(&world, orphan), None, "children of a despawned entity become roots");
    }
    assert_eq!(despawn_recursive(&mut world, forest.roots[1]), Ok(10));
    assert_eq!(world.len(), 20 - 1 - 10, "one despawned, then a whole tree of ten");
    assert_eq!(despawn(&mut world, middle), Err(HierarchyError::NoSuchEntity(middle)));
}

#[test]
fn making_an_entity_its_own_ancestor_is_refused() {
    let mut world = World::new();
    let chain = scene::spawn_chain(&mut world, None, &[Transform::IDENTITY; 3], scene::unit_cube_mesh());
    let before: Vec<(Option<Entity>, Vec<Entity>)> =
        chain.iter().map(|&entity| (parent_of(&world, entity), children(&world, entity))).collect();

    let error = set_parent(&mut world, chain[0], chain[2]).expect_err("grandchild cannot become the parent");
    assert_eq!(error, HierarchyError::Cycle { child: chain[0], parent: chain[2] });
    assert!(error.to_string().contains("its own ancestor"), "message: {error}");
    assert!(matches!(set_parent(&mut world, chain[1], chain[1]), Err(HierarchyError::Cycle { .. })));

    let after: Vec<(Option<Entity>, Vec<Entity>)> =
        chain.iter().map(|&entity| (parent_of(&world, entity), children(&world, entity))).collect();
    assert_eq!(before, after, "a refused edit must leave the hierarchy as it was");
}

#[test]
fn loops_inserted_directly_are_cut_not_hung() {
    let mut app = app();
    let world = app.world_mut();
    let first = world.spawn((Transform::from_translation(Vec3::X),));
    let second = world.spawn((Transform::from_translation(Vec3::Y),));
    world.insert_one(first, Parent(second)).expect("alive");
    world.insert_one(second, Parent(first)).expect("alive");
    app.run_frame();
    let report = *app.resource::<HierarchyReport>();
    assert_eq!(report.cycles_cut, 1, "one loop, cut once");
    assert_eq!(report.levels, 2);
    assert!(world_of(app.world(), first).is_finite() && world_of(app.world(), second).is_finite());
}

#[test]
fn missing_world_transform_is_added_with_this_frames_value() {
    let mut app = app();
    let parent = app.world_mut().spawn((Transform::from_translation(Vec3::X),));
    let child = app.world_mut().spawn((Transform::from_translation(Vec3::Y),));
    set_parent(app.world_mut(), child, parent).expect("valid");
    app.run_frame();
    assert_eq!(world_of(app.world(), child).w_axis.truncate(), Vec3::new(1.0, 1.0, 0.0));
}

#[test]
fn results_are_identical_on_one_and_four_threads() {
    let run = |threads: usize| -> Vec<[f32; 16]> {
        let mut app = App::with_threads(threads);
        crate::install(&mut app);
        // 2,000 roots x 10 nodes: levels of 2k, 6k and 12k matrices, several jobs each.
        let forest = scene::spawn_forest(app.world_mut(), 2000, &[3, 2], scene::unit_cube_mesh());
        app.run_frame();
        forest.entities.iter().map(|&entity| world_of(app.world(), entity).to_cols_array()).collect()
    };
    let single = run(1);
    let parallel = run(4);
    assert_eq!(single.len(), 20_000);
    let first_difference = single.iter().zip(&parallel).position(|(a, b)| a.map(f32::to_bits) != b.map(f32::to_bits));
    assert_eq!(first_difference, None, "world matrices must be bit-identical on 1 and 4 threads");
}

#[test]
fn hierarchy_edits_through_commands_apply_in_order_at_stage_end() {
    use runtime::{Stage, System};
    let mut app = app();
    let root = app.world_mut().spawn((Transform::from_translation(Vec3::X),));
    let spawned = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = std::sync::Arc::clone(&spawned);
    app.add_system(
        Stage::Input,
        System::new("edit", move |ctx| match ctx.time.frame_index {
            0 => {
                let child = ctx.commands.spawn((Transform::from_translation(Vec3::Y),));
                let grandchild = ctx.commands.spawn((Transform::from_translation(Vec3::Z),));
                ctx.commands.set_parent(child, root);
                ctx.commands.set_parent(grandchild, child);
                record.lock().expect("not poisoned").extend([child, grandchild]);
            }
            1 => {
                let child = record.lock().expect("not poisoned")[0];
                ctx.commands.remove_parent(child);
            }
            2 => ctx.commands.despawn_recursive(record.lock().expect("not poisoned")[0]),
            _ => {}
        })
        .spawns(),
    );
    app.run_frame();
    let (child, grandchild) = {
        let spawned = spawned.lock().expect("not poisoned");
        (spawned[0], spawned[1])
    };
    assert_eq!(children(app.world(), root), vec![child]);
    assert_eq!(world_of(app.world(), grandchild).w_axis.truncate(), Vec3::new(1.0, 1.0, 1.0), "placed this frame");
    app.run_frame();
    assert_eq!(parent_of(app.world(), child), None, "remove_parent made it a root");
    assert_eq!(world_of(app.world(), grandchild).w_axis.truncate(), Vec3::new(0.0, 1.0, 1.0));
    app.run_frame();
    assert!(!app.world().contains(child) && !app.world().contains(grandchild), "despawn_recursive took the subtree");
    assert!(app.world().contains(root));
}
