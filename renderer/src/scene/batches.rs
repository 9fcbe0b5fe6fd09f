//! Instanced batching: the objects that draw the same (mesh, level of detail, material) share
//! one instanced indirect command ([`BatchTable`]), and this frame's host list grouped that
//! way ([`BatchTable::group`]).
//!
//! A batch is named by its *id*, a small dense number the table hands out when the first
//! object of a new (mesh, level, material) appears and takes back when the last one leaves
//! (the lowest free id is reused first, so the ids stay below the number of distinct triples
//! ever alive at once). The level is the record's index range, so the key is exactly what one
//! command draws: the mesh's `first_index`, `index_count` and `vertex_offset`, with the mesh
//! and the material.
//!
//! Each batch owns a *run* of the instance list (`draw_instances`): `room` entries from its
//! `base`, room = the objects of that batch, so every object that could be drawn in one
//! phase has a place. A GPU cull appends a kept object's slot to its batch's run (an atomic
//! add on the command's `instanceCount`); the command's `firstInstance` is the base, and the
//! vertex shader reads the slot at `draw_instances[gl_InstanceIndex]`.
//!
//! Cost: [`BatchTable::set`] is O(1) (a hash look-up when the key changes); the runs are laid
//! out again, O(batches), at most once per frame and only when a room changed
//! ([`BatchTable::layout`]); nothing allocates once the table has seen its largest scene.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::scene::{DrawCommand, ObjectRecord};

/// The id of a slot that is in no batch (an empty record).
pub const NO_BATCH: u32 = u32::MAX;

/// What one instanced command draws: the mesh, its level (the index range of the record) and
/// the material.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BatchKey {
    /// The mesh id.
    pub mesh: u32,
    /// First index of the level's range.
    pub first_index: u32,
    /// Indices of the level's range.
    pub index_count: u32,
    /// Vertex offset of the level.
    pub vertex_offset: i32,
    /// The material id.
    pub material: u32,
}

impl BatchKey {
    /// The key of `record`, `None` for an empty record (never drawn, so in no batch).
    pub fn of(record: &ObjectRecord) -> Option<BatchKey> {
        (!record.is_empty()).then_some(BatchKey {
            mesh: record.mesh,
            first_index: record.first_index,
            index_count: record.index_count,
            vertex_offset: record.vertex_offset,
            material: record.material,
        })
    }
}

/// One batch id's state.
#[derive(Clone, Copy, Debug)]
struct Batch {
    key: BatchKey,
    /// Objects in the batch (the room of its run); 0 for a free id.
    members: u32,
    /// First entry of its run in the instance list (valid after [`BatchTable::layout`]).
    base: u32,
}

/// The batches of the scene's objects, kept up to date slot by slot (see the module docs).
#[derive(Debug, Default)]
pub struct BatchTable {
    /// By slot: its batch id, or [`NO_BATCH`].
    slot_batch: Vec<u32>,
    ids: HashMap<BatchKey, u32>,
    /// By id: the batch, below `batches.len()` (ids at or past it are free).
    batches: Vec<Batch>,
    /// Free ids below `batches.len()`, lowest first.
    free: BinaryHeap<Reverse<u32>>,
    /// A room changed since the runs were laid out.
    layout_dirty: bool,
    /// Slots whose id changed since [`BatchTable::take_changed`], each once.
    changed: Vec<u32>,
    changed_bits: Vec<u64>,
    /// Every slot's id must go to the GPU (a new table on the device).
    all_changed: bool,
    /// Scratch of [`BatchTable::group`]: instances per id, then the next free place.
    group_counts: Vec<u32>,
}

impl BatchTable {
    /// An empty table.
    pub fn new() -> BatchTable {
        BatchTable::default()
    }

    /// Puts slot `slot` in the batch of `record` (none for an empty record), leaving its old
    /// batch. O(1) when the key is unchanged.
    pub fn set(&mut self, slot: u32, record: &ObjectRecord) {
        let index = slot as usize;
        if index >= self.slot_batch.len() {
            if record.is_empty() {
                return;
            }
            self.slot_batch.resize(index + 1, NO_BATCH);
        }
        let old = self.slot_batch[index];
        let key = BatchKey::of(record);
        if old != NO_BATCH && key.is_some_and(|key| self.batches[old as usize].key == key) {
            return;
        }
        if old != NO_BATCH {
            self.leave(old);
        }
        let new = key.map_or(NO_BATCH, |key| self.join(key));
        self.slot_batch[index] = new;
        if new != old {
            self.note_changed(slot);
        }
    }

    /// Adds `count` places to the batch of `key` without a slot, for levels of detail the GPU
    /// may choose (`lod_table.rs`: each object of a chain holds a place in the batch of every
    /// level it may draw, so every run has room for all of them). Returns the batch id, kept
    /// while any place is held.
    pub(crate) fn hold(&mut self, key: BatchKey, count: u32) -> u32 {
        self.join_n(key, count)
    }

    /// Gives back `count` places [`BatchTable::hold`] took in batch `id`.
    pub(crate) fn release(&mut self, id: u32, count: u32) {
        if count > 0 {
            self.leave_n(id, count);
        }
    }

    fn join(&mut self, key: BatchKey) -> u32 {
        self.join_n(key, 1)
    }

    fn join_n(&mut self, key: BatchKey, count: u32) -> u32 {
        self.layout_dirty = true;
        if let Some(&id) = self.ids.get(&key) {
            self.batches[id as usize].members += count;
            return id;
        }
        let batch = Batch { key, members: count, base: 0 };
        let id = match self.free.pop() {
            Some(Reverse(id)) => {
                self.batches[id as usize] = batch;
                id
            }
            None => {
                self.batches.push(batch);
                self.batches.len() as u32 - 1
            }
        };
        self.ids.insert(key, id);
        id
    }

    fn leave(&mut self, id: u32) {
        self.leave_n(id, 1);
    }

    fn leave_n(&mut self, id: u32, count: u32) {
        self.layout_dirty = true;
        let batch = &mut self.batches[id as usize];
        batch.members -= count;
        if batch.members > 0 {
            return;
        }
        self.ids.remove(&batch.key);
        if id as usize + 1 < self.batches.len() {
            self.free.push(Reverse(id));
            return;
        }
        // The highest id: the table shrinks past every free id at its end.
        self.batches.pop();
        while self.batches.last().is_some_and(|batch| batch.members == 0) {
            self.batches.pop();
        }
        let len = self.batches.len() as u32;
        if self.free.iter().any(|&Reverse(free)| free >= len) {
            self.free.retain(|&Reverse(free)| free < len);
        }
    }

    fn note_changed(&mut self, slot: u32) {
        let word = slot as usize / 64;
        if word >= self.changed_bits.len() {
            self.changed_bits.resize(word + 1, 0);
        }
        let bit = 1u64 << (slot % 64);
        if self.changed_bits[word] & bit == 0 {
            self.changed_bits[word] |= bit;
            self.changed.push(slot);
        }
    }

    /// The batch id of slot `slot` ([`NO_BATCH`] for an empty or unknown slot).
    #[inline]
    pub fn batch_of(&self, slot: u32) -> u32 {
        self.slot_batch.get(slot as usize).copied().unwrap_or(NO_BATCH)
    }

    /// One past the highest id in use: the commands of a list of batches (free ids below it
    /// are commands that draw nothing).
    pub fn len(&self) -> u32 {
        self.batches.len() as u32
    }

    /// Whether no object is in a batch.
    pub fn is_empty(&self) -> bool {
        self.batches.is_empty()
    }

    /// Batches in use (distinct keys).
    pub fn batches_in_use(&self) -> u32 {
        self.ids.len() as u32
    }

    /// The key of batch `id` and its members (`None` for a free id).
    pub fn batch(&self, id: u32) -> Option<(BatchKey, u32)> {
        self.batches.get(id as usize).filter(|batch| batch.members > 0).map(|batch| (batch.key, batch.members))
    }

    /// Lays out the runs (each batch's base, in id order) when a room changed since the last
    /// layout; returns the entries of the instance list the runs fill (the objects in
    /// batches).
    pub fn layout(&mut self) -> u32 {
        let mut next = 0;
        for batch in &mut self.batches {
            batch.base = next;
            next += batch.members;
        }
        self.layout_dirty = false;
        next
    }

    /// Whether a room changed since the last [`BatchTable::layout`].
    pub fn layout_changed(&self) -> bool {
        self.layout_dirty
    }

    /// The run of batch `id`: (base, room), after [`BatchTable::layout`].
    pub fn run(&self, id: u32) -> (u32, u32) {
        self.batches.get(id as usize).map_or((0, 0), |batch| (batch.base, batch.members))
    }

    /// The command of batch `id` before any instance is appended: its key's index range,
    /// no instances, `firstInstance` its base plus `offset` (the list's part of the instance
    /// buffer). A free id gives a command that draws nothing.
    #[inline]
    pub fn template(&self, id: u32, offset: u32) -> DrawCommand {
        match self.batches.get(id as usize) {
            Some(batch) if batch.members > 0 => DrawCommand {
                index_count: batch.key.index_count,
                instance_count: 0,
                first_index: batch.key.first_index,
                vertex_offset: batch.key.vertex_offset,
                first_instance: offset + batch.base,
            },
            _ => DrawCommand::default(),
        }
    }

    /// Marks every slot's id for the GPU (a device table made afresh).
    pub fn mark_all_changed(&mut self) {
        self.all_changed = true;
    }

    /// Hands the slots whose id changed since the last call to `take` (each once, `(slot,
    /// id)`), below `count`; every slot below `count` after [`BatchTable::mark_all_changed`].
    /// Returns how many were handed.
    pub fn take_changed(&mut self, count: u32, mut take: impl FnMut(u32, u32)) -> u32 {
        let mut handed = 0;
        if self.all_changed {
            for slot in 0..count {
                take(slot, self.batch_of(slot));
            }
            handed = count;
        } else {
            for &slot in &self.changed {
                if slot < count {
                    take(slot, self.batch_of(slot));
                    handed += 1;
                }
            }
        }
        for &slot in &self.changed {
            self.changed_bits[slot as usize / 64] = 0;
        }
        self.changed.clear();
        self.all_changed = false;
        handed
    }

    /// Slots whose id waits for the GPU (all of them after [`BatchTable::mark_all_changed`]:
    /// `None`).
    pub fn changed_count(&self) -> Option<usize> {
        (!self.all_changed).then_some(self.changed.len())
    }

    /// Groups the host's list `objects` by batch: appends one command per batch with a listed
    /// object (in id order, `firstInstance` the start of its instances) to `commands` and the
    /// listed slots to `instances`, batch after batch, each batch's slots in list order.
    /// Slots in no batch (empty records) are left out: they draw nothing. O(listed + batches).
    pub fn group(
        &mut self,
        objects: impl Iterator<Item = u32> + Clone,
        commands: &mut Vec<DrawCommand>,
        instances: &mut Vec<u32>,
    ) {
        let batches = self.batches.len();
        self.group_counts.clear();
        self.group_counts.resize(batches, 0);
        for object in objects.clone() {
            let id = self.batch_of(object);
            if id != NO_BATCH {
                self.group_counts[id as usize] += 1;
            }
        }
        let first = instances.len() as u32;
        let mut next = first;
        for (id, count) in self.group_counts.iter_mut().enumerate() {
            let members = *count;
            *count = next;
            if members == 0 {
                continue;
            }
            let key = self.batches[id].key;
            commands.push(DrawCommand {
                index_count: key.index_count,
                instance_count: members,
                first_index: key.first_index,
                vertex_offset: key.vertex_offset,
                first_instance: next,
            });
            next += members;
        }
        instances.resize(next as usize, 0);
        for object in objects {
            let id = self.batch_of(object);
            if id != NO_BATCH {
                let place = &mut self.group_counts[id as usize];
                instances[*place as usize] = object;
                *place += 1;
            }
        }
    }
}

#[cfg(test)]
#[path = "batches_tests.rs"]
mod tests;

/// The scene's batching state: the table, the switch, and this frame's host instances.
#[derive(Debug)]
pub(crate) struct Batching {
    /// The batches of the scene's records, kept slot by slot.
    pub(crate) table: BatchTable,
    /// Whether frames batch their draws ([`crate::GpuScene::set_batch_draws`]; default on).
    pub(crate) enabled: bool,
    /// Whether this frame's list is instanced (its commands' instances are read through
    /// `draw_instances`): set with the host's list, or by the GPU frame's batch pass.
    pub(crate) list_instanced: bool,
    /// The host list's instances, when it is instanced.
    pub(crate) instances: Vec<u32>,
}

impl Default for Batching {
    fn default() -> Self {
        Batching { table: BatchTable::new(), enabled: true, list_instanced: false, instances: Vec::new() }
    }
}
