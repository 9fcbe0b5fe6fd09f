//! Persistent object slots: every drawable entity keeps one index while it lives.
//!
//! A slot is the object index everywhere (the [`Visibility`](super::Visibility) columns and
//! bits, GPU object records, history, readback). hecs storage order is no identity: a tag
//! change moves an entity to another archetype. So each frame the Visibility system walks the
//! mesh archetypes in storage order and looks every entity up here:
//!
//! - an entity seen before keeps its slot (found through its id, checked against its
//!   generation, so a despawned entity whose id was reused does not inherit the slot);
//! - a new mesh entity takes the lowest free slot, or a new one past the end;
//! - a slot whose entity was not seen this frame (despawned, or its `Mesh` removed) is freed
//!   and may be reused from the next frame on; trailing free slots are dropped, so the slot
//!   count is one past the highest slot in use.
//!
//! The walk also records the slot of each object in storage order, which is how the hot
//! loops (which walk archetypes) write through the slot. A frame in which no mesh entity came
//! or went is one parallel lookup over storage order (id to slot through a dense table); only
//! frames with spawns or despawns add a serial pass. A tracked frame (`tracked/plan.rs`)
//! skips the walk: the change log names the entities that came and went, which
//! [`ObjectSlots::assign`] and [`ObjectSlots::free`] handle under the same rules (newcomers
//! first, so a slot freed this frame is not taken again in it). Nothing allocates once the
//! tables have their capacity.

use std::sync::atomic::{AtomicUsize, Ordering};

use runtime::hecs::Entity;

use super::reads::CullColumns;
use super::segments::{Segment, GRAIN};
use crate::bits::{words_for, BITS_PER_WORD};

/// Marks a free slot in `storage` and an entity id without a slot in [`SlotIndex`].
const NO_SLOT: u32 = u32::MAX;

/// Objects per job of the slot lookup: a lookup is a few nanoseconds, so jobs are large
/// (a 100k-object frame hands out about a dozen).
const LOOKUP_GRAIN: usize = 8 * GRAIN;

/// Which slot each entity owns: part of the stage's answer (`Visibility::slot_of`), kept up
/// to date by [`ObjectSlots::update`].
#[derive(Clone, Debug, Default)]
pub(crate) struct SlotIndex {
    /// Indexed by entity id (`Entity::id`): the entity holding each id's slot with the slot,
    /// so that one read both finds the slot and checks the generation;
    /// `(Entity::DANGLING, NO_SLOT)` when none.
    by_id: Vec<(Entity, u32)>,
}

impl SlotIndex {
    /// The slot `entity` owns, if it owns one (a despawned entity whose id was reused does not).
    pub(crate) fn slot_of(&self, entity: Entity) -> Option<u32> {
        self.by_id.get(entity.id() as usize).filter(|(owner, _)| *owner == entity).map(|&(_, slot)| slot)
    }
}

/// The slot table (see the module docs): the stage's working memory for handing out slots;
/// which slot an entity owns is the answer's [`SlotIndex`].
#[derive(Clone, Debug, Default)]
pub(crate) struct ObjectSlots {
    /// Owner of each slot; [`Entity::DANGLING`] for a free slot.
    entities: Vec<Entity>,
    /// Bit `s` set when slot `s` is in use.
    allocated: Vec<u64>,
    /// Bit `s` set when slot `s`'s entity was seen this frame.
    seen: Vec<u64>,
    /// No word before this one has a free bit (a search hint, never past a free bit).
    first_free_word: usize,
    /// The slot of each object in this frame's storage order.
    storage: Vec<u32>,
    /// Slots freed by the last [`ObjectSlots::update`] that lie below the new slot count.
    freed: Vec<u32>,
    /// Slots in use.
    live: usize,
}

/// The stage's per-slot working columns: the slot table, the pass's flag byte per slot, and
/// the tags each slot's entity carries (kept apart from the answer, `Visibility`).
#[derive(Clone, Debug, Default)]
pub(crate) struct SlotWork {
    /// The persistent slot of every mesh entity.
    pub(crate) slots: ObjectSlots,
    /// The pass's answers per slot, one byte each (scratch, packed into the slot words after
    /// the pass; see `cull::pack_slot_flags`).
    pub(crate) slot_flags: Vec<u8>,
    /// Bit `i` set when object `i`'s entity carried the `Culled` tag this frame.
    pub(crate) tagged: Vec<u64>,
    /// Bit `i` set when object `i`'s entity carried the `Occluded` tag this frame.
    pub(crate) occluded_tag: Vec<u64>,
}

/// The entity ids of `segment`'s archetype, row by row.
fn archetype_ids<'w>(world: &CullColumns<'w>, segment: &Segment) -> &'w [u32] {
    world.archetype(segment.archetype).expect("segments are listed in archetype order from this world").ids()
}

impl ObjectSlots {
    /// Number of slots: one past the highest slot in use.
    pub(crate) fn len(&self) -> usize {
        self.entities.len()
    }

    /// Slots in use.
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// Owner of each slot ([`Entity::DANGLING`] when free).
    pub(crate) fn entities(&self) -> &[Entity] {
        &self.entities
    }

    /// The slot of each object of this frame, in storage order (segment by segment).
    pub(crate) fn storage(&self) -> &[u32] {
        &self.storage
    }

    /// Records `slots` as the slots of `segment`'s objects in storage order (sized to
    /// `objects`), as found by [`ObjectSlots::look_up_segment`] for the same entities.
    pub(crate) fn set_segment(&mut self, segment: &Segment, slots: &[u32], objects: usize) {
        self.storage.resize(objects, NO_SLOT);
        self.storage[segment.start..segment.start + segment.len].copy_from_slice(slots);
    }

    /// For a tracked frame (every newcomer already given its slot): records the slots of
    /// `segment`'s objects in storage order (sized to `objects`); false when one of them owns
    /// no slot. A row holding the id it held when the segment's slots were last found
    /// (`previous_ids[row]`, ids without generations: the caller forgets the rows of ids
    /// reborn since) takes its slot then (`previous_slots[row]`) without a lookup: tags moving a few
    /// objects in or out of an archetype change a few rows (hecs fills a hole with the last
    /// row), and each lookup is two scattered reads.
    pub(crate) fn look_up_segment(
        &mut self,
        index: &SlotIndex,
        world: &CullColumns<'_>,
        segment: &Segment,
        objects: usize,
        previous_ids: &[u32],
        previous_slots: &[u32],
    ) -> bool {
        self.storage.resize(objects, NO_SLOT);
        let ids = archetype_ids(world, segment);
        for (row, &id) in ids.iter().enumerate() {
            if previous_ids.get(row) == Some(&id) {
                self.storage[segment.start + row] = previous_slots[row];
                continue;
            }
            // SAFETY: as in `look_up`: an archetype's ids name live entities.
            let entity = unsafe { world.find_entity_from_id(id) };
            match index.slot_of(entity) {
                Some(slot) => self.storage[segment.start + row] = slot,
                None => return false,
            }
        }
        true
    }

    /// Slots freed this frame (by [`ObjectSlots::update`] or [`ObjectSlots::free`]) that are
    /// still below [`ObjectSlots::len`]: their columns must be reset to the undrawable values.
    pub(crate) fn freed(&self) -> &[u32] {
        &self.freed
    }

    /// Starts a frame: no slot freed yet.
    pub(crate) fn begin_frame(&mut self) {
        self.freed.clear();
    }

    /// Frees `slot` (its entity was despawned or lost its `Mesh`), outside the frame's full
    /// walk. The slot stays below [`ObjectSlots::len`] as a hole until
    /// [`ObjectSlots::drop_trailing_free`].
    pub(crate) fn free(&mut self, index: &mut SlotIndex, slot: u32) {
        let slot = slot as usize;
        let (word, bit) = (slot / BITS_PER_WORD, 1u64 << (slot % BITS_PER_WORD));
        if self.allocated[word] & bit == 0 {
            return;
        }
        self.allocated[word] &= !bit;
        self.live -= 1;
        self.first_free_word = self.first_free_word.min(word);
        self.release_owner(index, slot);
    }

    /// Assigns this frame's slots to the entities of `segments` (the mesh archetypes in
    /// storage order, listed from `world`, `objects` in all), frees the slots of entities no
    /// longer seen and records each object's slot in storage order.
    ///
    /// The steady state (no mesh entity spawned or despawned) is one parallel gather: each
    /// job looks its objects up through their ids, with no hashing and no allocation. Only
    /// when an entity is new or a slot went unseen does a serial pass assign and free slots.
    pub(crate) fn update(
        &mut self,
        index: &mut SlotIndex,
        world: &CullColumns<'_>,
        segments: &[Segment],
        objects: usize,
    ) {
        runtime::profile_zone!("visibility slots");
        self.storage.clear();
        self.storage.resize(objects, NO_SLOT);
        let matched = self.look_up(index, world, segments);
        // Matched slots are distinct (each is owned by its own entity), so `live` matches
        // mean every slot in use was seen.
        if matched != objects || matched != self.live {
            self.assign_and_free(index, world, segments);
        }
    }

    /// Writes the slot of every object whose entity already owns one into `storage` (the
    /// others keep [`NO_SLOT`]), in parallel; returns how many were found.
    fn look_up(&mut self, index: &SlotIndex, world: &CullColumns<'_>, segments: &[Segment]) -> usize {
        let (by_id, storage) = (&index.by_id[..], &mut self.storage);
        let matched = AtomicUsize::new(0);
        let _job_label = runtime::profiling::job_label("visibility gather slots job");
        runtime::jobs::parallel_for_chunks(storage, LOOKUP_GRAIN, |first, chunk| {
            let mut found = 0;
            let mut segment_index = segments.partition_point(|segment| segment.start + segment.len <= first);
            let mut segment = segments[segment_index];
            let mut ids = archetype_ids(world, &segment);
            for (index, slot_out) in (first..).zip(chunk.iter_mut()) {
                while index >= segment.start + segment.len {
                    segment_index += 1;
                    segment = segments[segment_index];
                    ids = archetype_ids(world, &segment);
                }
                let id = ids[index - segment.start];
                // SAFETY: every id of an archetype's rows names a live entity, and the world
                // is borrowed shared, so none can be despawned meanwhile.
                let entity = unsafe { world.find_entity_from_id(id) };
                if let Some(&(owner, slot)) = by_id.get(id as usize).filter(|(owner, _)| *owner == entity) {
                    debug_assert_ne!(owner, Entity::DANGLING, "a live entity is never the dangling one");
                    *slot_out = slot;
                    found += 1;
                }
            }
            matched.fetch_add(found, Ordering::Relaxed);
        });
        // Relaxed: read after every job joined.
        matched.load(Ordering::Relaxed)
    }

    /// The serial part of a frame where entities came or went: gives each object without a
    /// slot the lowest free one (in storage order), then frees the slots nobody claimed.
    fn assign_and_free(&mut self, index: &mut SlotIndex, world: &CullColumns<'_>, segments: &[Segment]) {
        runtime::profile_zone!("visibility slot changes");
        self.seen.clear();
        self.seen.resize(self.allocated.len(), 0);
        for &slot in &self.storage {
            if slot != NO_SLOT {
                self.seen[slot as usize / BITS_PER_WORD] |= 1 << (slot as usize % BITS_PER_WORD);
            }
        }
        for segment in segments {
            let ids = archetype_ids(world, segment);
            for (row, &id) in ids.iter().enumerate() {
                if self.storage[segment.start + row] != NO_SLOT {
                    continue;
                }
                // SAFETY: as in `look_up`.
                let entity = unsafe { world.find_entity_from_id(id) };
                let slot = self.assign(index, entity);
                self.seen[slot as usize / BITS_PER_WORD] |= 1 << (slot as usize % BITS_PER_WORD);
                self.storage[segment.start + row] = slot;
            }
        }
        self.free_unseen(index);
    }

    /// Gives `entity` the lowest free slot (or a new one) and returns it: for the full walk's
    /// new entities, and for the newcomers a tracked frame's change log names.
    pub(crate) fn assign(&mut self, index: &mut SlotIndex, entity: Entity) -> u32 {
        let words = self.allocated.len();
        while self.first_free_word < words && self.allocated[self.first_free_word] == u64::MAX {
            self.first_free_word += 1;
        }
        // Bits at and past `len` are always clear, so the lowest clear bit is either a hole
        // below `len` or exactly `len`.
        let slot = if self.first_free_word < words {
            self.first_free_word * BITS_PER_WORD + (!self.allocated[self.first_free_word]).trailing_zeros() as usize
        } else {
            self.entities.len()
        };
        if slot == self.entities.len() {
            self.entities.push(entity);
            let words = words_for(self.entities.len());
            self.allocated.resize(words, 0);
            self.seen.resize(words, 0);
        } else {
            debug_assert_eq!(self.entities[slot], Entity::DANGLING, "slot {slot} is free");
            self.entities[slot] = entity;
        }
        self.allocated[slot / BITS_PER_WORD] |= 1 << (slot % BITS_PER_WORD);
        self.live += 1;
        let id = entity.id() as usize;
        if id >= index.by_id.len() {
            index.by_id.resize(id + 1, (Entity::DANGLING, NO_SLOT));
        }
        index.by_id[id] = (entity, slot as u32);
        slot as u32
    }

    /// Frees every allocated slot not seen this frame and drops trailing free slots.
    fn free_unseen(&mut self, index: &mut SlotIndex) {
        for word_index in 0..self.allocated.len() {
            let mut unseen = self.allocated[word_index] & !self.seen[word_index];
            if unseen == 0 {
                continue;
            }
            self.allocated[word_index] &= !unseen;
            self.live -= unseen.count_ones() as usize;
            self.first_free_word = self.first_free_word.min(word_index);
            while unseen != 0 {
                let slot = word_index * BITS_PER_WORD + unseen.trailing_zeros() as usize;
                unseen &= unseen - 1;
                self.release_owner(index, slot);
            }
        }
        self.drop_trailing_free();
    }

    /// Takes slot `slot` from its entity (whose allocation bit the caller cleared): the index
    /// forgets it, unless its id already names a newer owner, and the slot is reported freed.
    fn release_owner(&mut self, index: &mut SlotIndex, slot: usize) {
        let entity = std::mem::replace(&mut self.entities[slot], Entity::DANGLING);
        if index.by_id.get(entity.id() as usize) == Some(&(entity, slot as u32)) {
            index.by_id[entity.id() as usize] = (Entity::DANGLING, NO_SLOT);
        }
        self.freed.push(slot as u32);
    }

    /// Drops the free slots past the highest one in use, so that the count is one past it
    /// again; freed slots past the new count are no longer reported.
    pub(crate) fn drop_trailing_free(&mut self) {
        let mut len = self.entities.len();
        while len > 0 && self.allocated[(len - 1) / BITS_PER_WORD] >> ((len - 1) % BITS_PER_WORD) & 1 == 0 {
            len -= 1;
        }
        self.entities.truncate(len);
        self.allocated.truncate(words_for(len));
        self.first_free_word = self.first_free_word.min(self.allocated.len());
        self.freed.retain(|&slot| (slot as usize) < len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::visibility::segments::list_segments;
    use ecs::{scene, Transform};
    use runtime::hecs::World;

    /// A slot table with its index, as the stage keeps them.
    #[derive(Default)]
    struct Table {
        slots: ObjectSlots,
        index: SlotIndex,
    }

    fn update(table: &mut Table, world: &World) {
        let world = &runtime::Columns::whole(world);
        table.slots.begin_frame();
        let mut segments = Vec::new();
        let objects = list_segments(world, &mut segments);
        table.slots.update(&mut table.index, world, &segments, objects);
    }

    fn slot_of(table: &Table, entity: Entity) -> usize {
        let slot = table.slots.entities().iter().position(|&owner| owner == entity).expect("the entity owns a slot");
        assert_eq!(table.index.slot_of(entity), Some(slot as u32), "the index agrees with the table");
        slot
    }

    #[test]
    fn slots_survive_archetype_moves_and_are_reused_after_despawn() {
        let mut world = World::new();
        let entities: Vec<Entity> =
            (0..100).map(|_| scene::spawn_mesh(&mut world, scene::unit_cube_mesh(), Transform::IDENTITY)).collect();
        let mut table = Table::default();
        update(&mut table, &world);
        let before: Vec<usize> = entities.iter().map(|&entity| slot_of(&table, entity)).collect();
        for &entity in entities.iter().step_by(3) {
            world.insert_one(entity, ecs::Culled).expect("the entity lives");
        }
        update(&mut table, &world);
        let after: Vec<usize> = entities.iter().map(|&entity| slot_of(&table, entity)).collect();
        assert_eq!(before, after, "an archetype move keeps the slot");
        assert!(table.slots.freed().is_empty(), "nobody left");

        world.despawn(entities[10]).expect("the entity lives");
        world.despawn(entities[99]).expect("the entity lives");
        update(&mut table, &world);
        assert_eq!(table.slots.freed(), &[before[10] as u32], "the trailing slot is dropped, the hole is reported");
        assert_eq!(table.slots.len(), 99, "trailing free slots are dropped");
        let newcomer = scene::spawn_mesh(&mut world, scene::unit_cube_mesh(), Transform::IDENTITY);
        update(&mut table, &world);
        assert_eq!(slot_of(&table, newcomer), before[10], "the lowest free slot is reused");
        let storage_slots: std::collections::HashSet<u32> = table.slots.storage().iter().copied().collect();
        assert_eq!(storage_slots.len(), 99, "each object has its own slot");
    }

    #[test]
    fn a_reused_entity_id_gets_a_fresh_slot() {
        let mut world = World::new();
        let first = scene::spawn_mesh(&mut world, scene::unit_cube_mesh(), Transform::IDENTITY);
        let keep = scene::spawn_mesh(&mut world, scene::unit_cube_mesh(), Transform::IDENTITY);
        let mut table = Table::default();
        update(&mut table, &world);
        world.despawn(first).expect("the entity lives");
        let second = scene::spawn_mesh(&mut world, scene::unit_cube_mesh(), Transform::IDENTITY);
        assert_eq!(second.id(), first.id(), "hecs reuses the id");
        update(&mut table, &world);
        assert_eq!(table.slots.entities().len(), 3, "the newcomer may not inherit the slot in the same frame");
        assert_eq!(table.slots.entities()[0], Entity::DANGLING, "the despawned entity's slot is free");
        assert_eq!(table.slots.entities()[1], keep);
        assert_eq!(table.slots.entities()[2], second);
        assert_eq!(table.slots.freed(), &[0]);
    }
}
