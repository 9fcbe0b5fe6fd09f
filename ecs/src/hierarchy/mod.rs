//! The transform hierarchy: who is whose parent, editing it safely, and the `Transform`-stage
//! system that turns local transforms into world matrices.
//!
//! A child names its parent with [`Parent`]; a parent lists its children, in the order they
//! were attached, with [`Children`]. Both are kept in step by [`set_parent`],
//! [`remove_parent`], [`despawn`] and [`despawn_recursive`]. World matrices depend on
//! [`Parent`] alone, so they stay right even if `Children` is left stale by a raw
//! `World::despawn`; [`children`] skips children that no longer exist.
//!
//! ```
//! use ecs::hierarchy::{self, HierarchyError};
//! use ecs::Transform;
//! let mut world = hecs::World::new();
//! let root = world.spawn((Transform::IDENTITY,));
//! let child = world.spawn((Transform::IDENTITY,));
//! hierarchy::set_parent(&mut world, child, root).unwrap();
//! assert_eq!(hierarchy::children(&world, root), vec![child]);
//! assert!(matches!(hierarchy::set_parent(&mut world, root, child), Err(HierarchyError::Cycle { .. })));
//! ```

mod commands;
mod propagate;

use std::fmt;

use hecs::{Entity, World};

pub use commands::HierarchyCommands;
pub use propagate::{
    hierarchy_system, HierarchyAccess, HierarchyColumns, HierarchyReport, PassKind, Propagator, HIERARCHY_SYSTEM,
};

/// The entity this one is placed relative to. Its [`WorldTransform`](crate::WorldTransform) is
/// the parent's world matrix times its own local [`Transform`](crate::Transform).
///
/// Set it with [`set_parent`] (which refuses cycles and keeps [`Children`] in order). When the
/// parent is despawned, the hierarchy system removes this component, so the child becomes a
/// root, and logs it once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Parent(pub Entity);

/// The children of an entity, in the order they were attached. Maintained by [`set_parent`]
/// and friends; a stale entry (a child despawned directly) is skipped by [`children`] and
/// dropped at the next edit of this list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Children(pub Vec<Entity>);

/// Why a hierarchy edit was refused. A refused edit leaves the hierarchy as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HierarchyError {
    /// The entity does not exist.
    NoSuchEntity(Entity),
    /// Attaching `child` under `parent` would make `child` its own ancestor.
    Cycle {
        /// The entity being attached.
        child: Entity,
        /// The parent it was to be attached to (a descendant of `child`, or `child` itself).
        parent: Entity,
    },
}

impl fmt::Display for HierarchyError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HierarchyError::NoSuchEntity(entity) => write!(formatter, "entity {entity:?} does not exist"),
            HierarchyError::Cycle { child, parent } => {
                write!(formatter, "cannot parent {child:?} to {parent:?}: {child:?} would become its own ancestor")
            }
        }
    }
}

impl std::error::Error for HierarchyError {}

/// Makes `parent` the parent of `child`, appending `child` to the parent's [`Children`].
///
/// Re-attaching to the current parent changes nothing (the child keeps its place in the
/// order). Moving a child removes it from its old parent's list.
///
/// # Errors
/// [`HierarchyError::NoSuchEntity`] when either entity is gone; [`HierarchyError::Cycle`] when
/// `parent` is `child` or one of its descendants (or the ancestors of `parent` already loop).
/// On error nothing changes.
pub fn set_parent(world: &mut World, child: Entity, parent: Entity) -> Result<(), HierarchyError> {
    for entity in [child, parent] {
        if !world.contains(entity) {
            return Err(HierarchyError::NoSuchEntity(entity));
        }
    }
    if would_cycle(world, child, parent) {
        return Err(HierarchyError::Cycle { child, parent });
    }
    let old_parent = parent_of(world, child);
    if old_parent == Some(parent) && children(world, parent).contains(&child) {
        return Ok(());
    }
    if let Some(old_parent) = old_parent {
        detach_from_list(world, old_parent, child);
    }
    world.insert_one(child, Parent(parent)).expect("child was checked to exist above");
    attach_to_list(world, parent, child);
    Ok(())
}

/// Detaches `child` from its parent, making it a root. Returns the parent it had, if any.
///
/// # Errors
/// [`HierarchyError::NoSuchEntity`] when `child` is gone.
pub fn remove_parent(world: &mut World, child: Entity) -> Result<Option<Entity>, HierarchyError> {
    if !world.contains(child) {
        return Err(HierarchyError::NoSuchEntity(child));
    }
    let Ok(Parent(parent)) = world.remove_one::<Parent>(child) else {
        return Ok(None);
    };
    detach_from_list(world, parent, child);
    Ok(Some(parent))
}

/// The parent of `entity`, if it has one.
pub fn parent_of(world: &World, entity: Entity) -> Option<Entity> {
    world.get::<&Parent>(entity).ok().map(|parent| parent.0)
}

/// The living children of `entity`, in attachment order.
pub fn children(world: &World, entity: Entity) -> Vec<Entity> {
    match world.get::<&Children>(entity) {
        Ok(list) => list.0.iter().copied().filter(|child| world.contains(*child)).collect(),
        Err(_) => Vec::new(),
    }
}

/// Despawns `entity`; its children become roots and it leaves its parent's list.
///
/// # Errors
/// [`HierarchyError::NoSuchEntity`] when `entity` is gone.
pub fn despawn(world: &mut World, entity: Entity) -> Result<(), HierarchyError> {
    if !world.contains(entity) {
        return Err(HierarchyError::NoSuchEntity(entity));
    }
    if let Some(parent) = parent_of(world, entity) {
        detach_from_list(world, parent, entity);
    }
    for child in children(world, entity) {
        if parent_of(world, child) == Some(entity) {
            // The child exists (children() filters) and has a Parent: removal cannot fail.
            let _ = world.remove_one::<Parent>(child);
        }
    }
    world.despawn(entity).map_err(|_| HierarchyError::NoSuchEntity(entity))
}

/// Despawns `entity` and, through [`Children`], every descendant. Returns how many entities
/// were despawned.
///
/// # Errors
/// [`HierarchyError::NoSuchEntity`] when `entity` is gone.
pub fn despawn_recursive(world: &mut World, entity: Entity) -> Result<usize, HierarchyError> {
    if !world.contains(entity) {
        return Err(HierarchyError::NoSuchEntity(entity));
    }
    if let Some(parent) = parent_of(world, entity) {
        detach_from_list(world, parent, entity);
    }
    let mut pending = vec![entity];
    let mut despawned = 0;
    while let Some(next) = pending.pop() {
        let is_own_child = |world: &World, child: Entity| parent_of(world, child) == Some(next);
        let own: Vec<Entity> = children(world, next).into_iter().filter(|child| is_own_child(world, *child)).collect();
        pending.extend(own);
        if world.despawn(next).is_ok() {
            despawned += 1;
        }
    }
    Ok(despawned)
}

/// Whether `parent` is `child` or has `child` among its ancestors. An ancestor chain that
/// loops on its own (made by inserting [`Parent`] directly) also counts, so the edit is refused
/// rather than joined to a broken chain.
fn would_cycle(world: &World, child: Entity, parent: Entity) -> bool {
    let mut current = parent;
    // A chain longer than the number of entities must revisit one: it loops.
    for _ in 0..=world.len() {
        if current == child {
            return true;
        }
        match parent_of(world, current) {
            Some(next) => current = next,
            None => return false,
        }
    }
    true
}

fn attach_to_list(world: &mut World, parent: Entity, child: Entity) {
    if let Ok(mut list) = world.get::<&mut Children>(parent) {
        list.0.retain(|entry| *entry != child && world.contains(*entry));
        list.0.push(child);
        return;
    }
    world.insert_one(parent, Children(vec![child])).expect("parent was checked to exist by the caller");
}

fn detach_from_list(world: &World, parent: Entity, child: Entity) {
    if let Ok(mut list) = world.get::<&mut Children>(parent) {
        list.0.retain(|entry| *entry != child && world.contains(*entry));
    }
}

#[cfg(test)]
mod change_tests;
#[cfg(test)]
mod structure_tests;
#[cfg(test)]
mod tests;
