//! The recomputation of an incremental pass: the moved nodes and their subtrees listed
//! breadth first, their matrices computed by the full pass's operations, and stored into
//! their `WorldTransform` rows.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use glam::Mat4;
use hecs::Entity;
use runtime::jobs::parallel_for_chunks;

use super::children::{is_marked, mark};
use super::fixes::FixSink;
use super::incremental::Tracking;
use super::places::{Place, RunIds};
use super::rows::{prefetch, SharedRows};
use super::{same_bits, HierarchyColumns, Link, NodeInput, Propagator, GRAIN, NONE};
use crate::transform::WorldTransform;

/// How many entries ahead the loops over scattered nodes ask for the cache line they will
/// need: a moved subtree's rows lie far from the next one's, so each would otherwise wait
/// on memory in turn.
const PREFETCH_DISTANCE: usize = 32;
/// `WorldTransform` columns an incremental pass borrows at once: one pass over the moved
/// list stores to this many runs.
const RUNS_PER_PASS: usize = 16;

/// The nodes an incremental pass recomputes, as flat arrays: each moved subtree breadth
/// first, so a parent's entry comes before its children's. Computing and storing walk these
/// arrays in order, so the loads of one node do not wait on those of the one before.
#[derive(Debug, Default)]
pub(super) struct MovedList {
    pub(super) nodes: Vec<u32>,
    /// Per entry: its parent's entry, or [`NONE`] for a subtree's top.
    parents: Vec<u32>,
    /// Entries of the subtrees' tops, ascending.
    tops: Vec<u32>,
    /// Per entry: the entity, copied from the node's inputs.
    entities: Vec<Entity>,
    /// Per entry: the new world matrix.
    worlds: Vec<Mat4>,
    /// Per entry: its node's row, from the places (unknown when that row holds another
    /// entity now).
    places: Vec<Place>,
    /// Per entry: 1 once stored into its row (else it is stored through its entity).
    stored: Vec<u8>,
}

impl Propagator {
    /// Lists the moved nodes and everything below them in `moved`, each subtree breadth
    /// first, shallowest top first, so a moved node below another moved node is listed once,
    /// in its ancestor's subtree. Marks every listed node in `recomputed`.
    pub(super) fn list_moved_subtrees(&mut self) {
        runtime::profile_zone!("hierarchy moved subtrees");
        let Propagator { inputs, links, tracking, .. } = self;
        let Tracking { dirty, recomputed, moved, children, structure, .. } = tracking;
        recomputed.clear();
        recomputed.resize(inputs.len().div_ceil(64), 0);
        if !structure.freed.is_empty() {
            // A node freed this frame (a despawned parent's child despawned too) is not
            // computed.
            dirty.retain(|&node| inputs[node as usize].entity != Entity::DANGLING);
        }
        dirty.sort_unstable_by_key(|&node| links[node as usize].depth);
        moved.nodes.clear();
        moved.parents.clear();
        moved.tops.clear();
        for &top in dirty.iter() {
            if is_marked(recomputed, top) {
                continue;
            }
            mark(recomputed, top);
            let mut head = moved.nodes.len();
            moved.tops.push(head as u32);
            moved.nodes.push(top);
            moved.parents.push(NONE);
            while let Some(&node) = moved.nodes.get(head) {
                head += 1;
                if !children.may_have_children(node) {
                    continue;
                }
                let parent = head as u32 - 1;
                for &child in children.built(node).iter().filter(|&&child| child != NONE) {
                    debug_assert!(!is_marked(recomputed, child), "the links form a forest: one visit per node");
                    mark(recomputed, child);
                    moved.nodes.push(child);
                    moved.parents.push(parent);
                }
                for child in children.added(node) {
                    debug_assert!(!is_marked(recomputed, child), "the links form a forest: one visit per node");
                    mark(recomputed, child);
                    moved.nodes.push(child);
                    moved.parents.push(parent);
                }
            }
        }
    }

    /// Computes the world matrix of every listed node with the same operations as the full
    /// pass (`parent world * local.to_matrix()`), so the bits are the same, and checks its
    /// place against its row's entity id (a place that fails is left unknown). Subtrees are
    /// independent, so the list is split between subtrees across the job system. `false`
    /// when a subtree's top has a parent node without a `WorldTransform` to read (a change
    /// the log did not name).
    pub(super) fn compute_moved(&mut self, world: &HierarchyColumns<'_>) -> bool {
        runtime::profile_zone!("hierarchy moved matrices");
        let Propagator { inputs, links, tracking, .. } = self;
        let Tracking { moved, places, .. } = tracking;
        let count = moved.nodes.len();
        moved.worlds.resize(count, Mat4::IDENTITY);
        moved.entities.resize(count, Entity::DANGLING);
        moved.places.resize(count, Place::UNKNOWN);
        let missing = AtomicBool::new(false);
        places.note_ids(world);
        let list = ListInputs {
            world,
            inputs,
            links,
            places: &places.of_node,
            run_ids: places.run_ids(),
            nodes: &moved.nodes,
            parents: &moved.parents,
            missing: &missing,
        };
        let outputs =
            ListOutputs { worlds: &mut moved.worlds, entities: &mut moved.entities, places: &mut moved.places };
        compute_range(&list, &moved.tops, 0, outputs);
        !missing.load(Ordering::Relaxed)
    }

    /// Stores the computed matrices whose bits changed, in list order split across the job
    /// system, with the `WorldTransform` columns of up to [`RUNS_PER_PASS`] runs borrowed at
    /// once (more runs take more passes over the list). A node whose place is unknown (new,
    /// or not where its place said) is stored through its entity afterwards, and its place
    /// found again; one without a `WorldTransform` gets one through `fixes`. Records
    /// the recomputed entities' `WorldTransform` writes in the change log (all of them: one
    /// that kept its bits is a harmless extra for a reader).
    pub(super) fn write_moved(&mut self, world: &HierarchyColumns<'_>, fixes: &mut impl FixSink) {
        runtime::profile_zone!("hierarchy write moved");
        let Tracking { moved, places, .. } = &mut self.tracking;
        moved.stored.clear();
        moved.stored.resize(moved.nodes.len(), 0);
        let stored_count = AtomicUsize::new(0);
        for first_run in (0..places.archetypes.len()).step_by(RUNS_PER_PASS) {
            let pass_runs = &places.archetypes[first_run..(first_run + RUNS_PER_PASS).min(places.archetypes.len())];
            let mut columns: [Option<hecs::ArchetypeColumnMut<'_, WorldTransform>>; RUNS_PER_PASS] =
                [const { None }; RUNS_PER_PASS];
            let mut rows: [Option<SharedRows>; RUNS_PER_PASS] = [None; RUNS_PER_PASS];
            for ((column, rows), &position) in columns.iter_mut().zip(&mut rows).zip(pass_runs) {
                let archetype = world.archetype(position as usize).expect("archetypes are never removed");
                *column = archetype.column_mut::<WorldTransform>();
                *rows = column.as_mut().map(|column| SharedRows::new(column));
            }
            let (entries, worlds) = (&moved.places, &moved.worlds);
            let run_rows = |place: Place| place.run.wrapping_sub(first_run as u32) as usize;
            parallel_for_chunks(&mut moved.stored, GRAIN, |first, chunk| {
                let mut count = 0;
                for (offset, stored) in chunk.iter_mut().enumerate() {
                    let entry = first + offset;
                    if let Some(&ahead) = entries.get(entry + PREFETCH_DISTANCE) {
                        if let Some(&Some(rows)) = rows.get(run_rows(ahead)) {
                            // A stale place prefetches a useless line, nothing worse.
                            rows.prefetch(ahead.row as usize);
                        }
                    }
                    let place = entries[entry];
                    let Some(&Some(rows)) = rows.get(run_rows(place)) else {
                        continue;
                    };
                    // SAFETY: each list entry is a distinct node (a node is listed once), whose
                    // entity's row this is (its place was checked against the row's entity id
                    // while computing): no other job stores to it.
                    unsafe { rows.store(place.row as usize, worlds[entry]) };
                    *stored = 1;
                    count += 1;
                }
                stored_count.fetch_add(count, Ordering::Relaxed);
            });
            drop(columns);
        }
        let strays = stored_count.load(Ordering::Relaxed) < moved.nodes.len();
        if strays {
            self.write_strays(world, fixes);
        }
        world.record_entity_writes::<WorldTransform>(&self.tracking.moved.entities);
    }

    /// Stores the entries the row passes left through their entities, and notes where each
    /// was found (or gives it a `WorldTransform` through `fixes` when it has none).
    fn write_strays(&mut self, world: &HierarchyColumns<'_>, fixes: &mut impl FixSink) {
        runtime::profile_zone!("hierarchy write strays");
        let Tracking { moved, places, .. } = &mut self.tracking;
        places.note_columns(world);
        for (entry, _) in moved.stored.iter().enumerate().filter(|(_, &stored)| stored == 0) {
            let (entity, matrix) = (moved.entities[entry], moved.worlds[entry]);
            let address = match world.get_mut::<WorldTransform>(entity) {
                Ok(mut stored) => {
                    if !same_bits(&stored.0, &matrix) {
                        stored.0 = matrix;
                    }
                    &*stored as *const WorldTransform as usize
                }
                Err(_) => {
                    fixes.insert_world(entity, WorldTransform(matrix));
                    continue;
                }
            };
            places.of_node[moved.nodes[entry] as usize] = places.locate(address);
        }
    }
}

/// What [`compute_range`] reads.
struct ListInputs<'a> {
    world: &'a HierarchyColumns<'a>,
    inputs: &'a [NodeInput],
    links: &'a [Link],
    places: &'a [Place],
    /// Per run: its rows' entity ids, to check a place against.
    run_ids: &'a [RunIds],
    nodes: &'a [u32],
    parents: &'a [u32],
    /// Raised when a top's parent node has no `WorldTransform`.
    missing: &'a AtomicBool,
}

/// What [`compute_range`] writes, per list entry of its range.
struct ListOutputs<'a> {
    worlds: &'a mut [Mat4],
    entities: &'a mut [Entity],
    places: &'a mut [Place],
}

/// Computes the matrices of list entries `first..first + outputs.worlds.len()`, whole
/// subtrees whose tops (entry indices) are `tops`, and copies their entities and their
/// places, those whose row holds another entity made unknown. Large ranges are halved at a
/// subtree boundary and run in parallel.
///
/// A subtree's top reads its parent's matrix from the parent's `WorldTransform`, which holds
/// exactly what the last pass computed for it; every other node reads its parent's from the
/// list (an earlier entry of the same subtree, so of the same range).
fn compute_range(list: &ListInputs<'_>, tops: &[u32], first: usize, outputs: ListOutputs<'_>) {
    let ListOutputs { worlds, entities, places } = outputs;
    if worlds.len() > 2 * GRAIN && tops.len() > 1 {
        let middle = tops.partition_point(|&top| (top as usize) < first + worlds.len() / 2).clamp(1, tops.len() - 1);
        let split = tops[middle] as usize - first;
        let (left_worlds, right_worlds) = worlds.split_at_mut(split);
        let (left_entities, right_entities) = entities.split_at_mut(split);
        let (left_places, right_places) = places.split_at_mut(split);
        let left = ListOutputs { worlds: left_worlds, entities: left_entities, places: left_places };
        let right = ListOutputs { worlds: right_worlds, entities: right_entities, places: right_places };
        runtime::jobs::join(
            || compute_range(list, &tops[..middle], first, left),
            || compute_range(list, &tops[middle..], first + split, right),
        );
        return;
    }
    for offset in 0..worlds.len() {
        let entry = first + offset;
        if let Some(&ahead) = list.nodes.get(entry + PREFETCH_DISTANCE) {
            prefetch(list.inputs, ahead as usize);
            prefetch(list.places, ahead as usize);
        }
        let node = list.nodes[entry] as usize;
        let input = &list.inputs[node];
        let local = input.local.to_matrix();
        let parent_entry = list.parents[entry];
        worlds[offset] = if parent_entry != NONE {
            debug_assert!(parent_entry as usize >= first, "a subtree lies within one range");
            worlds[parent_entry as usize - first] * local
        } else if list.links[node].parent == NONE {
            local
        } else {
            let parent = input.parent.expect("a node linked to a parent node has a Parent");
            match list.world.get::<WorldTransform>(parent) {
                Ok(parent_world) => parent_world.0 * local,
                Err(_) => {
                    list.missing.store(true, Ordering::Relaxed);
                    local
                }
            }
        };
        entities[offset] = input.entity;
        let place = list.places[node];
        let run_ids = list.run_ids.get(place.run as usize);
        // SAFETY: the ids were noted from `list.world`, borrowed unchanged for the whole pass.
        let holds = run_ids.is_some_and(|ids| unsafe { ids.holds(place.row, input.entity.id()) });
        places[offset] = if holds { place } else { Place::UNKNOWN };
    }
}
