//! What a tracked frame refreshes: from the change log's list of what changed since the last
//! frame, the archetypes written whole and the single entities, each with its slot, and the
//! entities that came (given the lowest free slots, then new ones past the count) or went
//! (their slots freed, the count dropping past the highest one left in use); or the answer
//! that this frame cannot be tracked (a count that does not add up, a refreshed object
//! without a slot).

use ecs::Mesh;
use runtime::changes::ChangedSince;
use runtime::hecs::Entity;

use crate::bits::BITS_PER_WORD;
use crate::visibility::reads::CullColumns;
use crate::visibility::segments::Segment;
use crate::visibility::slots::{ObjectSlots, SlotIndex};

/// Above this many single objects to refresh (or [`OBJECTS_PER_SINGLE`]th of the objects, if
/// more), the archetypes holding them are refreshed whole instead: a lookup through the
/// entity costs several archetype rows.
const ENTITY_REFRESH_LIMIT: usize = 2048;

/// Finding the archetypes of many single objects reads the id of every object (a few
/// instructions each), and a single object's refresh through its entity costs about as much
/// as 256 of those reads (about 1,500 instructions, measured): in a large world, thousands
/// of single objects are cheaper refreshed one by one than found by a scan of every id.
const OBJECTS_PER_SINGLE: usize = 256;

/// This frame's refresh lists, and what finding them keeps from frame to frame.
#[derive(Default)]
pub(super) struct RefreshPlan {
    /// Archetype segments to refresh this frame.
    pub(super) segments: Vec<Segment>,
    /// Single objects to refresh this frame (the newcomers among them).
    pub(super) entities: Vec<(u32, Entity)>,
    /// The newcomers of this frame with the slots they were given.
    pub(super) spawned: Vec<(u32, Entity)>,
    /// The slots freed this frame (their entity was despawned or lost its `Mesh`).
    pub(super) freed: Vec<u32>,
    /// Entity ids of this frame's newcomers (a bit per id): a row holding one may hold a new
    /// entity under an id the archetype's cached rows knew for another.
    reborn: Vec<u64>,
    /// Per segment of this frame: refresh it whole.
    segment_marks: Vec<bool>,
    /// Entity ids of many single objects to refresh (a bit per id), to find their archetypes.
    entity_marks: Vec<u64>,
    /// The slots of the rows of archetypes refreshed lately.
    segment_slots: SegmentSlots,
}

impl RefreshPlan {
    /// Empties this frame's lists.
    pub(super) fn clear(&mut self) {
        self.segments.clear();
        self.entities.clear();
        self.spawned.clear();
        self.freed.clear();
    }

    /// Whether this frame refreshes nothing (no archetype, no entity, no slot freed).
    pub(super) fn is_empty(&self) -> bool {
        self.segments.is_empty() && self.entities.is_empty() && self.spawned.is_empty() && self.freed.is_empty()
    }

    /// Slots may have changed hands (a full frame): forgets every archetype's slots.
    pub(super) fn forget_slots(&mut self) {
        self.segment_slots.clear();
    }

    /// Fills the lists from `changed`; false when the frame cannot be tracked: `objects` not
    /// the count the log accounts for, or a refreshed archetype holding an object without a
    /// slot. Gives the newcomers their slots and frees the slots of the entities
    /// that went (in `slots` and `index`, as the full walk would: newcomers first, so no slot
    /// freed this frame is taken again in it). Writes the refreshed archetypes' slots into
    /// `slots`' storage order (`objects` objects this frame).
    pub(super) fn find(
        &mut self,
        changed: &ChangedSince,
        world: &CullColumns<'_>,
        index: &mut SlotIndex,
        slots: &mut ObjectSlots,
        segments: &[Segment],
        objects: usize,
    ) -> bool {
        for &entity in &changed.entities {
            let meshed = world.contains(entity) && world.satisfies::<&Mesh>(entity);
            match (index.slot_of(entity), meshed) {
                (Some(slot), true) => self.entities.push((slot, entity)),
                (Some(slot), false) => self.freed.push(slot),
                (None, true) => self.spawned.push((0, entity)),
                (None, false) => {}
            }
        }
        // An entity named twice (spawned, then given a component) counts once. Newcomers take
        // their slots in the order of their ids, whatever the order of the log.
        self.freed.sort_unstable();
        self.freed.dedup();
        self.spawned.sort_unstable_by_key(|&(_, entity)| entity.id());
        self.spawned.dedup_by_key(|(_, entity)| *entity);
        if objects + self.freed.len() != slots.live() + self.spawned.len() {
            return false;
        }
        if !self.spawned.is_empty() {
            self.reborn.iter_mut().for_each(|word| *word = 0);
            for (slot, entity) in &mut self.spawned {
                *slot = slots.assign(index, *entity);
                self.entities.push((*slot, *entity));
                mark_id(&mut self.reborn, entity.id());
            }
            self.segment_slots.forget_ids(&self.reborn);
        }
        for &slot in &self.freed {
            slots.free(index, slot);
        }
        // The count ends one past the highest slot in use, as after a full frame; the freed
        // slots past it are gone.
        slots.drop_trailing_free();
        self.freed.retain(|&slot| (slot as usize) < slots.len());
        self.segment_marks.clear();
        self.segment_marks.resize(segments.len(), false);
        for &archetype in &changed.archetypes {
            if let Some(index) = segments.iter().position(|segment| segment.archetype == archetype as usize) {
                self.segment_marks[index] = true;
            }
        }
        if self.entities.len() > ENTITY_REFRESH_LIMIT.max(objects / OBJECTS_PER_SINGLE) {
            // Many single objects (a moving hierarchy's children): reaching each through its
            // entity costs more than refreshing the archetypes that hold them, found by one
            // scan of the ids.
            self.mark_archetypes_of_entities(world, segments);
            self.entities.clear();
        }
        for (segment, _) in segments.iter().zip(&self.segment_marks).filter(|(_, &marked)| marked) {
            if !self.segment_slots.look_up(world, segment, index, slots, objects) {
                return false;
            }
            self.segments.push(*segment);
        }
        true
    }

    /// Marks in `segment_marks` every segment holding one of `entities`.
    fn mark_archetypes_of_entities(&mut self, world: &CullColumns<'_>, segments: &[Segment]) {
        self.entity_marks.clear();
        for &(_, entity) in &self.entities {
            mark_id(&mut self.entity_marks, entity.id());
        }
        let marked = |id: u32| id_marked(&self.entity_marks, id);
        for (segment, segment_marked) in segments.iter().zip(self.segment_marks.iter_mut()) {
            if *segment_marked {
                continue;
            }
            let archetype = world.archetype(segment.archetype).expect("segments are listed from this world");
            *segment_marked = archetype.ids().iter().any(|&id| marked(id));
        }
    }
}

/// Sets entity id `id`'s bit in `marks` (a bit per id), growing it to hold the id.
fn mark_id(marks: &mut Vec<u64>, id: u32) {
    let id = id as usize;
    if marks.len() <= id / BITS_PER_WORD {
        marks.resize(id / BITS_PER_WORD + 1, 0);
    }
    marks[id / BITS_PER_WORD] |= 1 << (id % BITS_PER_WORD);
}

/// Whether entity id `id`'s bit is set in `marks` (ids past its end are not).
fn id_marked(marks: &[u64], id: u32) -> bool {
    let id = id as usize;
    marks.get(id / BITS_PER_WORD).is_some_and(|word| word >> (id % BITS_PER_WORD) & 1 == 1)
}

/// The slots of the rows of the archetypes a tracked frame refreshes, kept with the entity
/// ids they were found for: an archetype whose rows hold the same ids as last time (a mover
/// archetype, frame after frame) copies its slots instead of looking every entity up, and
/// one whose rows changed in places (tags moved some objects in or out) looks up only the
/// rows whose id changed.
///
/// Ids are compared without generations: a despawned entity's id reused by a newcomer would
/// look the same, so a tracked frame with newcomers forgets the rows holding their ids first
/// (`forget_ids`), and a full frame forgets everything.
#[derive(Default)]
struct SegmentSlots {
    /// (archetype position, its ids, their slots).
    entries: Vec<(usize, Vec<u32>, Vec<u32>)>,
}

impl SegmentSlots {
    fn clear(&mut self) {
        self.entries.clear();
    }

    /// Forgets the rows holding one of the ids marked in `reborn` (a bit per id): a newcomer
    /// may hold such an id in a row that held another entity under it.
    fn forget_ids(&mut self, reborn: &[u64]) {
        for (_, ids, _) in &mut self.entries {
            for id in ids.iter_mut().filter(|id| id_marked(reborn, **id)) {
                *id = u32::MAX;
            }
        }
    }

    /// Records `segment`'s slots in `slots`' storage order; false when a row has no slot.
    fn look_up(
        &mut self,
        world: &CullColumns<'_>,
        segment: &Segment,
        index: &SlotIndex,
        slots: &mut ObjectSlots,
        objects: usize,
    ) -> bool {
        let archetype = world.archetype(segment.archetype).expect("segments are listed from this world");
        let ids = archetype.ids();
        let entry = match self.entries.iter().position(|(position, _, _)| *position == segment.archetype) {
            Some(index) => &mut self.entries[index],
            None => {
                self.entries.push((segment.archetype, Vec::new(), Vec::new()));
                self.entries.last_mut().expect("pushed")
            }
        };
        if entry.1 == ids {
            slots.set_segment(segment, &entry.2, objects);
            return true;
        }
        // Rows whose id did not change keep the slot found for them last time.
        if !slots.look_up_segment(index, world, segment, objects, &entry.1, &entry.2) {
            entry.1.clear();
            return false;
        }
        entry.1.clear();
        entry.1.extend_from_slice(ids);
        entry.2.clear();
        entry.2.extend_from_slice(&slots.storage()[segment.start..segment.start + segment.len]);
        true
    }
}
