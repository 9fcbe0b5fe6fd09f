//! The `Culled` tag, changed only on transitions, applied in one batch of direct world
//! calls when the Visibility stage ends.
//!
//! A drawable object the cull rejected carries [`Culled`]; every other object (visible, or
//! not drawable at all) carries none. The pass records which objects' entities carried the
//! tag this frame (their archetype has it), so finding the changes is one word operation per
//! 64 objects: `want = drawable & !visible`, `changed = want ^ tagged`. Only changed
//! entities are touched, so a still camera makes no structural change.
//!
//! **Why not one command per entity.** A system holds `&World`, so structural changes go
//! through the stage's command buffer. A recorded `insert_one` is a type-erased bundle:
//! applying it looks the target archetype up afresh and allocates for each entity, and a
//! pair costs about twice a direct call (see the `visibility_tags` benchmark group). Instead
//! the system writes the frame's changes into a [`TagQueue`] component on one helper entity
//! of the world and queues a single command, the function [`apply_tag_queue`], which
//! applies them with `World::insert_one` / `remove_one` (cached archetype edges, no
//! allocation). A function item has no captures, so queuing it allocates nothing either.
//!
//! The helper entity holds only a [`TagQueue`]; it is spawned (reserved and filled through
//! the command buffer) on the first frame of a world, and that frame's changes take the
//! per-entity command path.

use ecs::Culled;
use runtime::hecs::{CommandBuffer, Entity, World};

use super::result::Visibility;

/// The `Culled` changes of the frame, waiting for the end of the Visibility stage; a
/// component of one helper entity per world.
///
/// Its lists keep their capacity across frames. After the stage it also tells how long
/// the last batch took to apply ([`TagQueue::apply_seconds`]).
#[derive(Debug, Default)]
pub struct TagQueue {
    insert: Vec<Entity>,
    remove: Vec<Entity>,
    applied: usize,
    apply_seconds: f64,
}

impl TagQueue {
    /// Seconds the last batch of tag changes took to apply (the archetype moves).
    pub fn apply_seconds(&self) -> f64 {
        self.apply_seconds
    }

    /// Number of tag changes in the last batch applied.
    pub fn applied(&self) -> usize {
        self.applied
    }

    /// The queue of `world`, if the Visibility stage has created one.
    pub fn of(world: &World) -> Option<runtime::hecs::Ref<'_, TagQueue>> {
        let mut query = world.query::<(Entity, &TagQueue)>();
        let entity = query.iter().next().map(|(entity, _)| entity)?;
        drop(query);
        world.get::<&TagQueue>(entity).ok()
    }
}

/// Where the system keeps its helper entity.
#[derive(Debug, Default)]
pub(crate) struct TagQueueSlot {
    entity: Option<Entity>,
}

/// Finds this frame's tag changes and arranges for them to be applied at the end of the
/// stage; returns (inserted, removed).
pub(crate) fn record_tag_changes(
    visibility: &Visibility,
    world: &World,
    commands: &mut CommandBuffer,
    slot: &mut TagQueueSlot,
) -> (usize, usize) {
    runtime::profile_zone!("visibility tags");
    let queue_entity = slot.entity.filter(|&entity| world.satisfies::<&TagQueue>(entity));
    let Some(queue_entity) = queue_entity else {
        // First frame of this world: create the queue, and send this frame's changes one
        // command per entity.
        let entity = world.reserve_entity();
        commands.insert_one(entity, TagQueue::default());
        slot.entity = Some(entity);
        let mut counts = (0, 0);
        for_each_change(visibility, |entity, insert| {
            if insert {
                commands.insert_one(entity, Culled);
                counts.0 += 1;
            } else {
                commands.remove_one::<Culled>(entity);
                counts.1 += 1;
            }
        });
        return counts;
    };
    let mut queue =
        world.get::<&mut TagQueue>(queue_entity).expect("the queue entity was checked to hold a TagQueue just above");
    let TagQueue { insert, remove, .. } = &mut *queue;
    insert.clear();
    remove.clear();
    for_each_change(visibility, |entity, tag| if tag { insert.push(entity) } else { remove.push(entity) });
    let counts = (insert.len(), remove.len());
    if counts != (0, 0) {
        commands.queue(apply_tag_queue);
    }
    counts
}

/// Calls `change(entity, insert)` for every object whose tag changes this frame, in object
/// order.
fn for_each_change(visibility: &Visibility, mut change: impl FnMut(Entity, bool)) {
    for (word_index, &visible) in visibility.bits.words().iter().enumerate() {
        // Issue 6: an occluded object is in view, so it carries `Occluded`, not `Culled`.
        let occluded = visibility.occluded.get(word_index).copied().unwrap_or(0);
        let want = visibility.drawable[word_index] & !visible & !occluded;
        let mut changed = want ^ visibility.tagged[word_index];
        while changed != 0 {
            let offset = changed.trailing_zeros() as usize;
            changed &= changed - 1;
            change(visibility.objects.entities[word_index * 64 + offset], want >> offset & 1 == 1);
        }
    }
}

/// Applies the world's [`TagQueue`] with direct world calls, keeping the lists' capacity.
/// Run by the stage's command buffer when the Visibility stage ends.
fn apply_tag_queue(world: &mut World) {
    runtime::profile_zone!("visibility tag apply");
    let started = std::time::Instant::now();
    let queue_entity = world.query_mut::<(Entity, &TagQueue)>().into_iter().next().map(|(entity, _)| entity);
    let Some(queue_entity) = queue_entity else {
        return;
    };
    let take = |world: &mut World| {
        let mut queue = world.get::<&mut TagQueue>(queue_entity).expect("found just above");
        (std::mem::take(&mut queue.insert), std::mem::take(&mut queue.remove))
    };
    let (insert, remove) = take(world);
    for &entity in &insert {
        // An entity despawned since the cull has nothing to tag.
        let _ = world.insert_one(entity, Culled);
    }
    for &entity in &remove {
        // Likewise; and a tag removed by someone else is already gone.
        let _ = world.remove_one::<Culled>(entity);
    }
    let mut queue = world.get::<&mut TagQueue>(queue_entity).expect("the tag moves do not touch the queue entity");
    queue.applied = insert.len() + remove.len();
    queue.insert = insert;
    queue.remove = remove;
    queue.apply_seconds = started.elapsed().as_secs_f64();
}
