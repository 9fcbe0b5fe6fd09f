//! The LOD chains the camera's GPU cull chooses levels from: the scene's `lod_entries` table
//! (GLSL twin: `lod_table.h`) and each slot's membership.
//!
//! A *chain* is the meshes of an entity's `ecs::Lod`, finest first, with each level's
//! simplification error, drawn with one material. Each distinct chain takes
//! [`MAX_GPU_LOD_LEVELS`] [`LodEntry`]s, from a first entry that a record naming it holds in
//! `reserved[0]` (its level count in `reserved[1]`; 0: no chain, the record's own range is
//! drawn). An entry holds the level's draw arguments *as drawn*: a level added while frames
//! run and not on the GPU yet draws the stand-in [`GpuScene::drawn_mesh`] names (a coarser
//! resident level, or the mesh's box), as the CPU path's records do, so both draw the same
//! range for the same level; a level with nothing on the GPU draws nothing.
//!
//! **Batches.** The GPU may choose any level of a chain, so every object of a chain holds a
//! place in the batch of each of its levels ([`BatchTable::hold`](crate::BatchTable)): each
//! level's run has room for all the chain's objects, and the entry names the level's batch.
//! The instance list has room for [`LOD_INSTANCE_ROOM`] places per slot (the record's own
//! place and one per level).
//!
//! **Skinned chains.** A skinned object's record keeps its rig's palette slice whatever level
//! is drawn: `mesh_skin` is parallel to the vertices, so each level's vertices (at the level's
//! vertex offset) read their own influences, and any skinned level is skinned right. A level
//! drawn by a rigid stand-in (the placeholder box of a level not on the GPU: its influences
//! are zeros, which would collapse it to a point) must not be skinned, nor a skinned level
//! drawn by a rigid record: while the levels as drawn are not all skinned or all rigid, the
//! chain's entries say [`LOD_RULE_RECORD`] and every view draws the record's level, the CPU's
//! pick (whose record is skinned only when its own drawn mesh is). The entries are written
//! again when a level arrives or leaves, so the chain is given back once every level draws
//! itself.
//!
//! **Growth.** The table grows without a cap: `lod_entries` holds [`LOD_CHAINS_AT_FIRST`]
//! chains at first; the chain past its room makes a buffer of twice the chains (or enough),
//! the whole table goes up into it with the next upload, the outgrown one is kept until its
//! frames end, and a graph drawing the scene follows ([`GpuScene::follow_growth`]) as after
//! the scene's other growths. Where the device has no memory for it, the chains past the
//! room are not given to the GPU (their objects draw the CPU's level), said once, and the
//! growth is tried again for a later chain.
//!
//! Chains longer than [`MAX_GPU_LOD_LEVELS`] are not given to the GPU: their objects draw the
//! level the CPU chose. Choosing among more levels would take a wider state word (3 bits of
//! level now) and, batched, a place per level and slot in `draw_instances` for every scene:
//! 16 levels would take it from 9 to 17 places per slot in each of its two runs, 72 MB to
//! 136 MB at a million objects.

use std::collections::HashMap;
use std::mem::{offset_of, size_of};

use super::GpuScene;
use crate::scene::{BatchKey, ObjectRecord};

/// Levels of a chain the GPU chooses from at most (`MAX_GPU_LOD_LEVELS` in `config.h`).
pub const MAX_GPU_LOD_LEVELS: u32 = 8;

/// Chains the scene's first `lod_entries` buffer holds (the table grows past it).
pub const LOD_CHAINS_AT_FIRST: u32 = 1024;

/// Places per slot the instance list `draw_instances` has in each list: the record's own
/// batch and one per level of its chain.
pub const LOD_INSTANCE_ROOM: u32 = MAX_GPU_LOD_LEVELS + 1;

/// One level of a chain as the GPU cull reads it (GLSL twin: `LodEntry` of `lod_table.h`,
/// std430, 32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LodEntry {
    /// Indices of the level as drawn (0: nothing on the GPU to draw).
    pub index_count: u32,
    /// First index of the level as drawn.
    pub first_index: u32,
    /// Vertex offset of the level as drawn.
    pub vertex_offset: i32,
    /// The level's simplification error, mesh units; in a chain of the distance rule, the
    /// level's greatest distance ([`ecs::LodLevel::max_distance`]).
    pub error: f32,
    /// The batch of (the drawn mesh, the material) its objects join when batched.
    pub batch: u32,
    /// The mesh drawn.
    pub mesh: u32,
    /// How the chain's levels are chosen: [`LOD_RULE_ERROR`] or [`LOD_RULE_DISTANCE`].
    pub rule: u32,
    /// A distance chain's bias ([`ecs::Lod::bias`]), its bits (0 for an error chain).
    pub bias: u32,
}

/// [`LodEntry::rule`] of a chain chosen by its levels' errors (`lod_select.h`).
pub const LOD_RULE_ERROR: u32 = 0;

/// [`LodEntry::rule`] of a chain chosen by distance (`lod_distance.h`): only views flagged
/// [`CULL_LOD_DISTANCE`](crate::CULL_LOD_DISTANCE) choose its levels (the other window views
/// of a split-screen frame); the main view draws the record's level, the CPU's pick.
pub const LOD_RULE_DISTANCE: u32 = 1;

/// [`LodEntry::rule`] of a chain the GPU does not choose from for now: its levels as drawn are
/// not all skinned or all rigid (a skinned level drawn by its rigid placeholder box), so every
/// view draws the record's level, the CPU's pick (see the module docs).
pub const LOD_RULE_RECORD: u32 = 2;

const _: () = {
    assert!(size_of::<LodEntry>() == 32, "LodEntry must match its std430 twin in lod_table.h");
    assert!(offset_of!(LodEntry, error) == 12);
    assert!(offset_of!(LodEntry, batch) == 16);
};

/// Bytes of one chain's entries in `lod_entries`.
pub const LOD_CHAIN_BYTES: u64 = MAX_GPU_LOD_LEVELS as u64 * size_of::<LodEntry>() as u64;

/// Bytes of the scene's first `lod_entries` buffer.
pub const LOD_ENTRIES_BYTES: u64 = LOD_CHAINS_AT_FIRST as u64 * LOD_CHAIN_BYTES;

/// What names a chain: its level meshes and their errors' bits (a distance chain's greatest
/// distances), the rule and bias, and the material.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct ChainKey {
    meshes: [u32; MAX_GPU_LOD_LEVELS as usize],
    errors: [u32; MAX_GPU_LOD_LEVELS as usize],
    levels: u32,
    rule: u32,
    bias: u32,
    material: u32,
}

/// One chain: its key, the objects naming it and the batch each level's place is held in.
#[derive(Clone, Copy, Debug)]
struct Chain {
    key: ChainKey,
    members: u32,
    held: [Option<(BatchKey, u32)>; MAX_GPU_LOD_LEVELS as usize],
}

/// The scene's chains (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct LodTable {
    ids: HashMap<ChainKey, u32>,
    chains: Vec<Chain>,
    /// `MAX_GPU_LOD_LEVELS` per chain, in chain order.
    entries: Vec<LodEntry>,
    /// By slot: the chain its record names (`u32::MAX`: none).
    slot_chain: Vec<u32>,
    /// The entries changed since the last upload.
    dirty: bool,
    /// A chain of several levels was refused (too long, or a table the device could not
    /// grow): its objects draw the main view's level in every view, so a view whose levels are
    /// its own cannot be culled on the GPU (an image view then draws its CPU answer's lists).
    refused: bool,
    /// The room in chains the last growth that failed asked for: tried again only for more.
    failed_growth: Option<u32>,
}

const NO_CHAIN: u32 = u32::MAX;

impl LodTable {
    /// The entries, `MAX_GPU_LOD_LEVELS` per chain.
    pub(crate) fn entries(&self) -> &[LodEntry] {
        &self.entries
    }

    /// Whether the entries changed since [`LodTable::take_dirty`] last said so.
    pub(crate) fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    /// Marks the entries for upload again (an upload that failed, a new buffer).
    pub(crate) fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Chains in the table.
    pub(crate) fn len(&self) -> usize {
        self.chains.len()
    }
}

/// The chain a record names, from its columns.
fn chain_of(record: &ObjectRecord) -> u32 {
    if record.reserved[1] == 0 || record.index_count == 0 {
        NO_CHAIN
    } else {
        record.reserved[0] / MAX_GPU_LOD_LEVELS
    }
}

impl GpuScene {
    /// The record columns (`reserved`: first entry, level count) of the chain of `meshes`
    /// (finest first) with simplification errors `errors`, drawn with `material`, adding the
    /// chain to the table when new (growing it); `None` when the GPU does not choose its levels
    /// (one level, more than [`MAX_GPU_LOD_LEVELS`], lengths that differ, or a table the
    /// device has no memory to grow).
    pub fn lod_chain_columns(&mut self, meshes: &[u32], errors: &[f32], material: u32) -> Option<[u32; 2]> {
        self.chain_columns(meshes, errors, (LOD_RULE_ERROR, 0), material)
    }

    /// [`GpuScene::lod_chain_columns`] of a chain of the distance rule: `max_distances` each
    /// level's greatest distance ([`ecs::LodLevel::max_distance`]), `bias` the chain's
    /// ([`ecs::Lod::bias`]). The views flagged [`CULL_LOD_DISTANCE`](crate::CULL_LOD_DISTANCE)
    /// choose its levels; the others draw the record's.
    pub fn lod_distance_chain_columns(
        &mut self,
        meshes: &[u32],
        max_distances: &[f32],
        bias: f32,
        material: u32,
    ) -> Option<[u32; 2]> {
        self.chain_columns(meshes, max_distances, (LOD_RULE_DISTANCE, bias.to_bits()), material)
    }

    /// The record columns of a chain of `rule` (and bias bits) with `values` per level.
    fn chain_columns(&mut self, meshes: &[u32], errors: &[f32], rule: (u32, u32), material: u32) -> Option<[u32; 2]> {
        let levels = meshes.len();
        if levels < 2 {
            return None;
        }
        if levels > MAX_GPU_LOD_LEVELS as usize || errors.len() != levels {
            self.lod.refused = true;
            return None;
        }
        let mut key = ChainKey {
            meshes: [0; MAX_GPU_LOD_LEVELS as usize],
            errors: [0; MAX_GPU_LOD_LEVELS as usize],
            levels: levels as u32,
            rule: rule.0,
            bias: rule.1,
            material,
        };
        key.meshes[..levels].copy_from_slice(meshes);
        for (bits, error) in key.errors.iter_mut().zip(errors) {
            *bits = error.to_bits();
        }
        let id = match self.lod.ids.get(&key) {
            Some(&id) => id,
            None => {
                let id = self.lod.chains.len() as u32;
                if id >= self.lod_chain_room() && !self.grow_lod_table(id + 1) {
                    self.lod.refused = true;
                    return None;
                }
                self.lod.chains.push(Chain { key, members: 0, held: [None; MAX_GPU_LOD_LEVELS as usize] });
                self.lod.entries.resize(self.lod.entries.len() + MAX_GPU_LOD_LEVELS as usize, LodEntry::default());
                self.lod.ids.insert(key, id);
                self.refresh_chain(id);
                id
            }
        };
        Some([id * MAX_GPU_LOD_LEVELS, levels as u32])
    }

    /// Slot `slot`'s record became `record`: it leaves its old chain and joins the one the
    /// record names (each chain's objects hold a place in every level's batch).
    pub(super) fn note_lod_chain(&mut self, slot: u32, record: &ObjectRecord) {
        let index = slot as usize;
        if index >= self.lod.slot_chain.len() {
            if chain_of(record) == NO_CHAIN {
                return;
            }
            self.lod.slot_chain.resize(index + 1, NO_CHAIN);
        }
        let (old, new) = (self.lod.slot_chain[index], chain_of(record));
        if old == new {
            return;
        }
        self.lod.slot_chain[index] = new;
        if old != NO_CHAIN {
            self.move_members(old, -1);
        }
        if new != NO_CHAIN && (new as usize) < self.lod.chains.len() {
            self.move_members(new, 1);
        }
    }

    /// Adds one member to chain `id` (`step` 1) or takes one away (-1), holding or releasing
    /// its place in each level's batch.
    fn move_members(&mut self, id: u32, step: i32) {
        let chain = &mut self.lod.chains[id as usize];
        chain.members = chain.members.saturating_add_signed(step);
        let chain = *chain;
        for level in 0..chain.key.levels as usize {
            let Some((key, batch)) = chain.held[level] else { continue };
            if step > 0 {
                let held = self.batching.table.hold(key, 1);
                let entry = &mut self.lod.entries[(id * MAX_GPU_LOD_LEVELS) as usize + level];
                if held != batch || entry.batch != held {
                    entry.batch = held;
                    self.lod.dirty = true;
                }
                self.lod.chains[id as usize].held[level] = Some((key, held));
            } else {
                self.batching.table.release(batch, 1);
            }
        }
    }

    /// Writes chain `id`'s entries from what the GPU holds of each level now, moving its
    /// members' places to the batches of levels whose drawn mesh changed.
    fn refresh_chain(&mut self, id: u32) {
        let chain = self.lod.chains[id as usize];
        let rule = if self.chain_skins_apart(&chain.key) { LOD_RULE_RECORD } else { chain.key.rule };
        for level in 0..chain.key.levels as usize {
            let mesh = chain.key.meshes[level];
            let drawn = self.drawn_mesh(mesh);
            let record = drawn.and_then(|drawn| self.record_for(drawn, [0.0; 3], [0.0; 3], 0, chain.key.material).ok());
            let batch_key = record.as_ref().and_then(BatchKey::of);
            let held = chain.held[level];
            let mut batch = crate::scene::NO_BATCH;
            if held.map(|(key, _)| key) != batch_key || held.is_none() {
                if let Some((_, old)) = held {
                    self.batching.table.release(old, chain.members);
                }
                let now = batch_key.map(|key| {
                    let id = if chain.members > 0 { self.batching.table.hold(key, chain.members) } else { NO_HELD };
                    (key, id)
                });
                self.lod.chains[id as usize].held[level] = now;
                batch = now.map_or(crate::scene::NO_BATCH, |(_, id)| id);
            } else if let Some((_, id)) = held {
                batch = id;
            }
            let record = record.unwrap_or(ObjectRecord::EMPTY);
            let entry = LodEntry {
                index_count: if batch_key.is_some() { record.index_count } else { 0 },
                first_index: record.first_index,
                vertex_offset: record.vertex_offset,
                error: f32::from_bits(chain.key.errors[level]),
                batch,
                mesh: record.mesh,
                rule,
                bias: chain.key.bias,
            };
            let stored = &mut self.lod.entries[(id * MAX_GPU_LOD_LEVELS) as usize + level];
            if *stored != entry {
                // The cluster tables hold the pairs of each level's mesh as drawn.
                let moved = stored.mesh != entry.mesh;
                *stored = entry;
                self.lod.dirty = true;
                if moved {
                    self.note_cluster_change();
                }
            }
        }
    }

    /// Whether the levels of chain `key` as drawn now are some skinned and some rigid (a
    /// skinned level drawn by its placeholder box): the GPU must not choose among them.
    fn chain_skins_apart(&self, key: &ChainKey) -> bool {
        if !self.has_skinned_meshes() {
            return false;
        }
        let mut skinned = key.meshes[..key.levels as usize]
            .iter()
            .filter_map(|&mesh| self.drawn_mesh(mesh))
            .map(|drawn| super::mesh_is_skinned(self.meshes(), drawn));
        let Some(first) = skinned.next() else { return false };
        skinned.any(|other| other != first)
    }

    /// Writes every chain's entries again (a level of a mesh arrived or left the GPU, a mesh
    /// or a material was replaced).
    pub(crate) fn refresh_lod_chains(&mut self) {
        for id in 0..self.lod.chains.len() as u32 {
            self.refresh_chain(id);
        }
    }

    /// The chains' entries, [`MAX_GPU_LOD_LEVELS`] per chain, as the next upload writes them.
    pub fn lod_entries(&self) -> &[LodEntry] {
        self.lod.entries()
    }
}

/// The batch of a level whose chain has no member yet: taken with its first member.
const NO_HELD: u32 = crate::scene::NO_BATCH;

impl GpuScene {
    /// Sets the camera's side of the level-of-detail rule and its eye, as the Visibility stage
    /// used them this frame (their exact bits): the GPU cull then chooses the level of every
    /// object whose record names a chain. `None`: every record's own level is drawn.
    /// `every_object`: the CPU re-picked every object's level this frame (a full pass), so the
    /// GPU keeps every object's level as its state; else only those the frustum keeps (a
    /// tracked frame re-picks what is in view).
    pub fn set_lod_view(&mut self, view: Option<(culling::LodErrorView, glam::Vec3)>, every_object: bool) {
        self.lod_view = view;
        self.lod_every_object = every_object;
    }

    /// Whether this frame's CPU pass re-picked every object's level (see
    /// [`GpuScene::set_lod_view`]).
    pub fn lod_every_object(&self) -> bool {
        self.lod_every_object
    }

    /// The view [`GpuScene::set_lod_view`] set.
    pub fn lod_view(&self) -> Option<(culling::LodErrorView, glam::Vec3)> {
        self.lod_view
    }

    /// Whether a GPU-culled frame batches its lists: batching is on and the batches fit the
    /// lists' room (the scene's capacity). Levels of detail add batches; a scene of more
    /// batches than slots draws one command per object instead, the same image.
    pub fn batches_fit(&self) -> bool {
        self.batch_draws() && self.batches().len() <= self.capacity
    }

    /// The chains' entries for the upload when they changed since the last one (`None`
    /// otherwise); an upload that fails gives them back with [`GpuScene::lod_upload_failed`].
    pub(crate) fn lod_entries_to_upload(&mut self) -> Option<&[LodEntry]> {
        self.lod.take_dirty().then(|| self.lod.entries())
    }

    /// The upload of the chains' entries failed: the next frame tries again.
    pub(crate) fn lod_upload_failed(&mut self) {
        self.lod.mark_dirty();
    }

    /// Chains the GPU chooses levels for.
    pub fn lod_chain_count(&self) -> usize {
        self.lod.len()
    }

    /// Whether a chain of several levels was ever refused (longer than
    /// [`MAX_GPU_LOD_LEVELS`], or past a table the device could not grow): its objects draw
    /// the main view's level in every view.
    pub fn lod_chains_refused(&self) -> bool {
        self.lod.refused
    }

    /// Notes a chain of several levels not given to the GPU by its caller (longer than
    /// [`MAX_GPU_LOD_LEVELS`]): see [`GpuScene::lod_chains_refused`].
    pub(crate) fn refuse_lod_chain(&mut self) {
        self.lod.refused = true;
    }

    /// Chains the scene's `lod_entries` buffer holds now (it grows with the table).
    pub fn lod_chain_room(&self) -> u32 {
        u32::try_from(self.lod_buffer.size() / LOD_CHAIN_BYTES).unwrap_or(u32::MAX)
    }

    /// Makes room in `lod_entries` for `chains` chains: a new buffer of twice the room or
    /// more, the whole table uploaded into it next, the outgrown one kept until its frames
    /// end. False when the device has no memory for it (said once).
    fn grow_lod_table(&mut self, chains: u32) -> bool {
        if self.lod.failed_growth.is_some_and(|failed| chains <= failed) {
            return false;
        }
        let room = self.lod_chain_room().saturating_mul(2).max(chains);
        match super::growth::object_buffer(&self.device, crate::names::LOD_ENTRIES, room, LOD_CHAIN_BYTES) {
            Ok(buffer) => {
                let outgrown = std::mem::replace(&mut self.lod_buffer, buffer);
                self.retired.push(super::growth::Retired::new(self.last_reader(), outgrown));
                self.generation += 1;
                self.lod.dirty = true;
                log::info!("the LOD chain table grew to {room} chains");
                true
            }
            Err(error) => {
                if self.lod.failed_growth.is_none() {
                    log::warn!(
                        "the LOD chain table cannot grow to {room} chains ({error}): the objects of later chains \
                         draw the level the CPU chose"
                    );
                }
                self.lod.failed_growth = Some(chains);
                false
            }
        }
    }
}
