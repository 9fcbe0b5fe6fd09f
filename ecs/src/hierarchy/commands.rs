//! Hierarchy edits through a system's [`Commands`]: applied in order with its other commands
//! when the stage ends, with the same rules as the direct functions.

use hecs::Entity;
use runtime::Commands;

use super::{despawn_recursive, remove_parent, set_parent};

/// Hierarchy edits recorded in a system's [`Commands`]; each runs the function of the same name
/// in [`hierarchy`](crate::hierarchy) when the stage ends. An edit that fails there (an entity
/// gone by then, a loop) changes nothing and is logged as a warning naming the entities.
///
/// A plain [`Commands::despawn`] of a parent keeps its children where they stand: the
/// hierarchy system makes them roots at their last world pose and counts them in
/// [`HierarchyReport::orphans_this_frame`](crate::HierarchyReport).
///
/// ```
/// use ecs::{HierarchyCommands, Transform};
/// use glam::Vec3;
/// use runtime::{Stage, System};
/// let mut app = runtime::App::new();
/// ecs::install(&mut app);
/// app.add_system(
///     Stage::Input,
///     System::new("build a turret", |ctx| {
///         if ctx.time.frame_index == 0 {
///             let base = ctx.commands.spawn((Transform::from_translation(Vec3::X),));
///             let barrel = ctx.commands.spawn((Transform::from_translation(Vec3::Y),));
///             ctx.commands.set_parent(barrel, base);
///         }
///     })
///     .spawns(),
/// );
/// app.run_frame();
/// let mut query = app.world().query::<(&ecs::Parent, &ecs::WorldTransform)>();
/// let (_, world) = query.iter().next().expect("the barrel has a parent");
/// assert_eq!(world.translation(), Vec3::new(1.0, 1.0, 0.0));
/// ```
pub trait HierarchyCommands {
    /// Makes `parent` the parent of `child` (see [`set_parent`]).
    fn set_parent(&mut self, child: Entity, parent: Entity);
    /// Detaches `child` from its parent, making it a root (see [`remove_parent`]).
    fn remove_parent(&mut self, child: Entity);
    /// Despawns `entity` and every descendant (see [`despawn_recursive`]).
    fn despawn_recursive(&mut self, entity: Entity);
}

impl HierarchyCommands for Commands<'_> {
    // Each reports the entities it changed, so the change log records them rather than
    // "anything may have changed" (see `runtime::Commands::queue_reporting`).
    fn set_parent(&mut self, child: Entity, parent: Entity) {
        self.queue_reporting(move |world, changed| {
            let old_parent = super::parent_of(world, child);
            match set_parent(world, child, parent) {
                Ok(()) => changed.extend([child, parent].into_iter().chain(old_parent)),
                Err(error) => log::warn!("command set_parent({child:?}, {parent:?}) not applied: {error}"),
            }
        });
    }

    fn remove_parent(&mut self, child: Entity) {
        self.queue_reporting(move |world, changed| match remove_parent(world, child) {
            Ok(old_parent) => changed.extend([child].into_iter().chain(old_parent)),
            Err(error) => log::warn!("command remove_parent({child:?}) not applied: {error}"),
        });
    }

    fn despawn_recursive(&mut self, entity: Entity) {
        self.queue_reporting(move |world, changed| {
            // The subtree as it stands, and the parent whose list loses `entity`.
            changed.extend(super::parent_of(world, entity));
            let mut pending = vec![entity];
            while let Some(next) = pending.pop() {
                changed.push(next);
                pending.extend(super::children(world, next));
            }
            if let Err(error) = despawn_recursive(world, entity) {
                log::warn!("command despawn_recursive({entity:?}) not applied: {error}");
            }
        });
    }
}
