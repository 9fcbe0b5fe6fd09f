//! Where the propagation sends its structural fixes: a raw hecs buffer for
//! [`Propagator::run`](super::Propagator::run), a system's [`Commands`] for the system (so
//! each fix is recorded in the change log for its entity, not as "anything may have changed").

use hecs::Entity;
use runtime::Commands;

use crate::hierarchy::Parent;
use crate::transform::{Transform, WorldTransform};

/// Receives the structural fixes of a pass, applied by the caller after it.
pub(super) trait FixSink {
    /// Gives `entity` the `WorldTransform` it lacks.
    fn insert_world(&mut self, entity: Entity, world: WorldTransform);
    /// Sets the local `Transform` of an orphan to its last world pose.
    fn set_pose(&mut self, entity: Entity, pose: Transform);
    /// Removes the dangling `Parent` of an orphan.
    fn remove_parent(&mut self, entity: Entity);
}

impl FixSink for hecs::CommandBuffer {
    fn insert_world(&mut self, entity: Entity, world: WorldTransform) {
        self.insert_one(entity, world);
    }

    fn set_pose(&mut self, entity: Entity, pose: Transform) {
        self.insert_one(entity, pose);
    }

    fn remove_parent(&mut self, entity: Entity) {
        self.remove_one::<Parent>(entity);
    }
}

impl FixSink for Commands<'_> {
    fn insert_world(&mut self, entity: Entity, world: WorldTransform) {
        self.insert_one(entity, world);
    }

    fn set_pose(&mut self, entity: Entity, pose: Transform) {
        self.insert_one(entity, pose);
    }

    fn remove_parent(&mut self, entity: Entity) {
        self.remove_one::<Parent>(entity);
    }
}
