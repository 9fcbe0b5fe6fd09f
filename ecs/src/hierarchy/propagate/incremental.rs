//! The change-driven passes: skip a frame where nothing moved, and otherwise recompute only
//! the moved nodes and their descendants.
//!
//! The incremental pass keeps the link data of the last full pass (node of each id, parent
//! node, depth) and builds a children index (CSR) from it the first time it needs one. A moved
//! subtree's top reads its parent's matrix from the parent's `WorldTransform`: this system is
//! its only writer, so it holds the bits the last pass computed.
//!
//! It is sound only while no entity has been spawned, despawned or moved between archetypes
//! since that full pass, which the change log's structural entries tell; it also checks that
//! every node archetype still has the rows it had (and a `WorldTransform` column), and falls
//! back to the full pass on any doubt. Candidates are compared bit for bit with the
//! `Transform` the last pass used, so a query that lends `&mut Transform` without writing
//! costs a compare, not a recomputation. A changed `Parent` sends the frame to the full pass.

use std::any::TypeId;
use std::sync::atomic::Ordering;

use glam::Mat4;
use hecs::Entity;
use runtime::changes::{ChangeCursor, ChangedSince, Changes};
use runtime::jobs::parallel_for_chunks;
use runtime::Commands;

use super::rows::{prefetch, RunFinder, SharedRows};
use super::{
    is_node_archetype, same_bits, same_float_bits, HierarchyColumns, HierarchyReport, Link, NodeInput, PassKind,
    Propagator, GRAIN, NONE,
};
use crate::hierarchy::Parent;
use crate::transform::{Transform, WorldTransform};

/// The incremental pass runs while its candidates (rows of written archetypes plus written
/// entities) are at most this share (1 / N) of the nodes; above it the full pass, parallel
/// and streaming, is the cheaper one.
const INCREMENTAL_SHARE: usize = 8;
/// How many entries ahead the loops over scattered nodes ask for the cache line they will
/// need: a moved subtree's rows lie far from the next one's, so each would otherwise wait
/// on memory in turn.
const PREFETCH_DISTANCE: usize = 32;
/// `WorldTransform` columns an incremental pass borrows at once: one pass over the moved
/// list stores to this many runs.
const RUNS_PER_PASS: usize = 16;

/// What the change-driven passes keep between frames.
#[derive(Debug, Default)]
pub(super) struct Tracking {
    /// Structural entries only (no component types asked).
    structure_cursor: ChangeCursor,
    structure: ChangedSince,
    /// Writes of `Transform` or `Parent` (and structural entries again).
    inputs_cursor: ChangeCursor,
    inputs: ChangedSince,
    /// Children of node `n`: `child_nodes[child_start[n]..child_start[n + 1]]`, ascending.
    child_start: Vec<u32>,
    child_nodes: Vec<u32>,
    /// One bit per node: it has children (a small table that spares a leaf the look-up of
    /// its empty range).
    has_children: Vec<u64>,
    /// The children index matches the link data (cleared by every full pass).
    pub(super) children_built: bool,
    /// Nodes whose `Transform` bits changed, then ordered by depth.
    dirty: Vec<u32>,
    /// One bit per node: listed in `moved` this pass.
    recomputed: Vec<u64>,
    /// The nodes the pass recomputes.
    moved: MovedList,
}

/// The nodes an incremental pass recomputes, as flat arrays: each moved subtree breadth
/// first, so a parent's entry comes before its children's. Computing and storing walk these
/// arrays in order, so the loads of one node do not wait on those of the one before.
#[derive(Debug, Default)]
struct MovedList {
    nodes: Vec<u32>,
    /// Per entry: its parent's entry, or [`NONE`] for a subtree's top.
    parents: Vec<u32>,
    /// Entries of the subtrees' tops, ascending.
    tops: Vec<u32>,
    /// Per entry: the entity, copied from the node's inputs.
    entities: Vec<Entity>,
    /// Per entry: the new world matrix.
    worlds: Vec<Mat4>,
    /// Per entry: its node's run (filled while storing).
    run_of: Vec<u32>,
}

impl Propagator {
    /// One frame of propagation driven by `changes`, the app's change log: skips the frame
    /// when no `Transform` or `Parent` was lent mutably and nothing changed structurally,
    /// recomputes only the moved nodes and their descendants when only `Transform` values
    /// may have changed, and runs the full pass otherwise (see
    /// [`hierarchy_system`](crate::hierarchy::hierarchy_system)). Records the
    /// `WorldTransform`s it wrote through `world`, the system's view (whose log is `changes`);
    /// structural fixes go to `commands`. The result is bit-identical to a full pass over the
    /// same world.
    pub fn run_tracked(
        &mut self,
        world: &HierarchyColumns<'_>,
        changes: &Changes,
        commands: &mut Commands<'_>,
        report: &mut HierarchyReport,
    ) {
        let tracking = &mut self.tracking;
        changes.collect(&mut tracking.structure_cursor, &[], &mut tracking.structure);
        let inputs = [TypeId::of::<Transform>(), TypeId::of::<Parent>()];
        changes.collect(&mut tracking.inputs_cursor, &inputs, &mut tracking.inputs);
        report.orphans_this_frame = 0;
        let value_changes_only = self.linked && tracking.structure.is_empty() && !tracking.inputs.everything;
        if value_changes_only && tracking.inputs.is_empty() {
            report.last_pass = PassKind::Skipped;
            report.updated = 0;
            return;
        }
        if value_changes_only {
            if let Some(updated) = self.propagate_changes(world) {
                report.last_pass = PassKind::Incremental;
                report.updated = updated;
                return;
            }
        }
        self.full_pass(world, commands, report);
        self.record_full_pass(world);
    }

    /// The incremental pass; returns how many matrices it recomputed, or `None` when the
    /// frame needs the full pass (too many candidates, a changed `Parent`, rows that moved).
    fn propagate_changes(&mut self, world: &HierarchyColumns<'_>) -> Option<usize> {
        runtime::profile_zone!("hierarchy incremental");
        // Rows as at the last full pass; else (entities moved between archetypes, as the
        // Visibility stage's tags do, with the same nodes) nodes are found by entity id.
        let rows_match = self.runs_match(world);
        if !rows_match && !self.same_nodes(world) {
            return None;
        }
        let written_rows: usize = (world.archetypes().enumerate())
            .filter(|(position, archetype)| {
                is_node_archetype(archetype)
                    && self.tracking.inputs.archetypes.binary_search(&(*position as u32)).is_ok()
            })
            .map(|(_, archetype)| archetype.len() as usize)
            .sum();
        if written_rows + self.tracking.inputs.entities.len() > self.inputs.len() / INCREMENTAL_SHARE {
            return None;
        }
        let found = if rows_match { self.find_moved(world) } else { self.find_moved_by_id(world) };
        if !found {
            return None;
        }
        if self.tracking.dirty.is_empty() {
            return Some(0);
        }
        if !self.tracking.children_built {
            self.build_children();
        }
        self.list_moved_subtrees();
        self.compute_moved(world);
        if rows_match {
            self.write_moved(world);
        } else {
            self.write_moved_by_entity(world);
        }
        Some(self.tracking.moved.nodes.len())
    }

    /// Whether the nodes are those of the last full pass, wherever their rows are now: as
    /// many rows in node archetypes, each with a `WorldTransform` column (no node came or
    /// went: the caller saw no structural entry).
    fn same_nodes(&self, world: &HierarchyColumns<'_>) -> bool {
        let mut rows = 0usize;
        for archetype in world.archetypes().filter(|archetype| is_node_archetype(archetype)) {
            if !archetype.has::<WorldTransform>() {
                return false;
            }
            rows += archetype.len() as usize;
        }
        rows == self.inputs.len()
    }

    /// [`Propagator::find_moved`] for rows that moved since the last full pass: each row of a
    /// written archetype is found through its entity id. `false` when an id is not a node of
    /// the last full pass, or a `Parent` changed.
    fn find_moved_by_id(&mut self, world: &HierarchyColumns<'_>) -> bool {
        let Propagator { inputs, node_of_id, tracking, .. } = self;
        tracking.dirty.clear();
        for (position, archetype) in world.archetypes().enumerate() {
            if !is_node_archetype(&archetype) || tracking.inputs.archetypes.binary_search(&(position as u32)).is_err() {
                continue;
            }
            let transforms = archetype.column::<Transform>().expect("node archetypes have a Transform column");
            let parents = archetype.column::<Parent>();
            for (row, &id) in archetype.ids().iter().enumerate() {
                let node = node_of_id.get(id as usize).map_or(NONE, |node| node.load(Ordering::Relaxed)) as usize;
                let Some(input) = inputs.get_mut(node).filter(|input| input.entity.id() == id) else {
                    return false;
                };
                if parents.as_ref().map(|parents| parents[row].0) != input.parent {
                    return false;
                }
                if !same_transform(&transforms[row], &input.local) {
                    input.local = transforms[row];
                    tracking.dirty.push(node as u32);
                }
            }
        }
        self.find_moved_entities(world)
    }

    /// [`Propagator::write_moved`] for rows that moved since the last full pass: each matrix
    /// is stored through its entity (the moved set is small: at most a share of the nodes).
    fn write_moved_by_entity(&mut self, world: &HierarchyColumns<'_>) {
        runtime::profile_zone!("hierarchy write moved by entity");
        let moved = &self.tracking.moved;
        for (&entity, matrix) in moved.entities.iter().zip(&moved.worlds) {
            if let Ok(mut stored) = world.get_mut::<WorldTransform>(entity) {
                if !same_bits(&stored.0, matrix) {
                    stored.0 = *matrix;
                }
            }
        }
        world.record_entity_writes::<WorldTransform>(&moved.entities);
    }

    /// Whether the node archetypes are those of the last full pass, with as many rows, and
    /// all have a `WorldTransform` column (so every parent's matrix can be read).
    fn runs_match(&self, world: &HierarchyColumns<'_>) -> bool {
        let mut runs = self.runs.iter();
        for (position, archetype) in world.archetypes().enumerate() {
            if !is_node_archetype(&archetype) {
                continue;
            }
            match runs.next() {
                Some(run)
                    if run.archetype == position as u32
                        && run.len == archetype.len()
                        && run.has_world
                        && archetype.has::<WorldTransform>() => {}
                _ => return false,
            }
        }
        runs.next().is_none()
    }

    /// Fills `dirty` with the candidates whose `Transform` bits changed (updating their
    /// inputs); `false` when a candidate's `Parent` changed or a candidate is unknown.
    fn find_moved(&mut self, world: &HierarchyColumns<'_>) -> bool {
        let Propagator { inputs, runs, tracking, .. } = self;
        tracking.dirty.clear();
        let archetypes = world.archetypes().filter(|archetype| is_node_archetype(archetype));
        for (archetype, run) in archetypes.zip(runs.iter()) {
            if tracking.inputs.archetypes.binary_search(&run.archetype).is_err() {
                continue;
            }
            let transforms = archetype.column::<Transform>().expect("node archetypes have a Transform column");
            let parents = archetype.column::<Parent>();
            let start = run.start as usize;
            for (row, input) in inputs[start..start + run.len as usize].iter_mut().enumerate() {
                if parents.as_ref().map(|parents| parents[row].0) != input.parent {
                    return false;
                }
                if !same_transform(&transforms[row], &input.local) {
                    input.local = transforms[row];
                    tracking.dirty.push((start + row) as u32);
                }
            }
        }
        self.find_moved_entities(world)
    }

    /// The single-entity candidates of [`Propagator::find_moved`] (by id, whatever the rows).
    fn find_moved_entities(&mut self, world: &HierarchyColumns<'_>) -> bool {
        let Propagator { inputs, node_of_id, tracking, .. } = self;
        for &entity in &tracking.inputs.entities {
            let Ok(entity_ref) = world.entity(entity) else {
                // Despawned without a structural entry: the log cannot vouch for the links.
                return false;
            };
            let known = node_of_id.get(entity.id() as usize).map(|node| node.load(Ordering::Relaxed) as usize);
            let node = known.filter(|&node| inputs.get(node).is_some_and(|input| input.entity == entity));
            let (node, local) = match (node, entity_ref.get::<Transform>()) {
                (Some(node), Some(local)) => (node, local),
                // Not a node at the last full pass, nor now: nothing to place.
                (None, None) => continue,
                // Became or stopped being a node without a structural entry: no vouching.
                _ => return false,
            };
            let input = &mut inputs[node];
            if entity_ref.get::<Parent>().map(|parent| parent.0) != input.parent {
                return false;
            }
            if !same_transform(&local, &input.local) {
                input.local = *local;
                tracking.dirty.push(node as u32);
            }
        }
        true
    }

    /// Builds the children index from the links of the last full pass: counts per parent,
    /// an inclusive prefix sum (each entry the end of its list), then a reverse fill that
    /// walks each end back to its start and keeps children in ascending node order.
    fn build_children(&mut self) {
        runtime::profile_zone!("hierarchy children index");
        let Propagator { links, tracking, .. } = self;
        let nodes = links.len();
        tracking.child_start.clear();
        tracking.child_start.resize(nodes + 1, 0);
        tracking.has_children.clear();
        tracking.has_children.resize(nodes.div_ceil(64), 0);
        for link in links.iter().filter(|link| link.parent != NONE) {
            tracking.child_start[link.parent as usize] += 1;
            mark(&mut tracking.has_children, link.parent);
        }
        let mut running = 0;
        for entry in &mut tracking.child_start {
            running += *entry;
            *entry = running;
        }
        tracking.child_nodes.clear();
        tracking.child_nodes.resize(running as usize, NONE);
        for (node, link) in links.iter().enumerate().rev().filter(|(_, link)| link.parent != NONE) {
            let cursor = &mut tracking.child_start[link.parent as usize];
            *cursor -= 1;
            tracking.child_nodes[*cursor as usize] = node as u32;
        }
        tracking.children_built = true;
    }

    /// Lists the moved nodes and everything below them in `moved`, each subtree breadth
    /// first, shallowest top first, so a moved node below another moved node is listed once,
    /// in its ancestor's subtree. Marks every listed node in `recomputed`.
    fn list_moved_subtrees(&mut self) {
        runtime::profile_zone!("hierarchy moved subtrees");
        let Propagator { inputs, links, tracking, .. } = self;
        let Tracking { dirty, recomputed, moved, child_start, child_nodes, has_children, .. } = tracking;
        recomputed.clear();
        recomputed.resize(inputs.len().div_ceil(64), 0);
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
                if !is_marked(has_children, node) {
                    continue;
                }
                let children =
                    &child_nodes[child_start[node as usize] as usize..child_start[node as usize + 1] as usize];
                for &child in children {
                    debug_assert!(!is_marked(recomputed, child), "the links form a forest: one visit per node");
                    mark(recomputed, child);
                    moved.nodes.push(child);
                    moved.parents.push(head as u32 - 1);
                }
            }
        }
    }

    /// Computes the world matrix of every listed node with the same operations as the full
    /// pass (`parent world * local.to_matrix()`), so the bits are the same. Subtrees are
    /// independent, so the list is split between subtrees across the job system.
    fn compute_moved(&mut self, world: &HierarchyColumns<'_>) {
        runtime::profile_zone!("hierarchy moved matrices");
        let Propagator { inputs, links, tracking, .. } = self;
        let moved = &mut tracking.moved;
        let count = moved.nodes.len();
        moved.worlds.resize(count, Mat4::IDENTITY);
        moved.entities.resize(count, Entity::DANGLING);
        let list = ListInputs { world, inputs, links, nodes: &moved.nodes, parents: &moved.parents };
        compute_range(&list, &moved.tops, 0, &mut moved.worlds, &mut moved.entities);
    }

    /// Stores the computed matrices whose bits changed, in list order split across the job
    /// system, with the `WorldTransform` columns of up to [`RUNS_PER_PASS`] runs borrowed at
    /// once (more runs take more passes over the list), and records the recomputed entities'
    /// `WorldTransform` writes in `changes` (all of them: one that kept its bits is a harmless
    /// extra for a reader).
    fn write_moved(&mut self, world: &HierarchyColumns<'_>) {
        runtime::profile_zone!("hierarchy write moved");
        let Propagator { runs, tracking, .. } = self;
        let moved = &mut tracking.moved;
        moved.run_of.resize(moved.nodes.len(), NONE);
        let mut archetypes = world.archetypes().filter(|archetype| is_node_archetype(archetype));
        for first_run in (0..runs.len()).step_by(RUNS_PER_PASS) {
            let pass_runs = &runs[first_run..(first_run + RUNS_PER_PASS).min(runs.len())];
            let mut columns: [Option<hecs::ArchetypeColumnMut<'_, WorldTransform>>; RUNS_PER_PASS] =
                [const { None }; RUNS_PER_PASS];
            let mut rows = [None; RUNS_PER_PASS];
            for ((column, rows), archetype) in
                columns.iter_mut().zip(&mut rows).zip(archetypes.by_ref().take(pass_runs.len()))
            {
                *column = archetype.column_mut::<WorldTransform>();
                *rows = column.as_mut().map(|column| SharedRows::new(column));
            }
            let (nodes, worlds) = (&moved.nodes, &moved.worlds);
            parallel_for_chunks(&mut moved.run_of, GRAIN, |first, chunk| {
                let mut finder = RunFinder::new(runs);
                for (offset, run_of) in chunk.iter_mut().enumerate() {
                    let entry = first + offset;
                    if let Some(&ahead) = nodes.get(entry + PREFETCH_DISTANCE) {
                        let run = finder.peek(ahead);
                        if let Some(rows) =
                            run.checked_sub(first_run).and_then(|slot| rows.get(slot)).copied().flatten()
                        {
                            // A wrong guess of the run prefetches a useless line, nothing worse.
                            rows.prefetch(ahead.wrapping_sub(runs[run].start) as usize);
                        }
                    }
                    let node = nodes[entry];
                    let run = finder.find(node);
                    *run_of = run as u32;
                    let Some(rows) = run.checked_sub(first_run).and_then(|slot| rows.get(slot)).copied().flatten()
                    else {
                        continue;
                    };
                    // SAFETY: each list entry is a distinct node (a node is listed once), so a
                    // distinct row of its run: no other job stores to it.
                    unsafe { rows.store((node - runs[run].start) as usize, worlds[entry]) };
                }
            });
            drop(columns);
        }
        world.record_entity_writes::<WorldTransform>(&moved.entities);
    }
}

/// What [`compute_range`] reads.
struct ListInputs<'a> {
    world: &'a HierarchyColumns<'a>,
    inputs: &'a [NodeInput],
    links: &'a [Link],
    nodes: &'a [u32],
    parents: &'a [u32],
}

/// Computes the matrices of list entries `first..first + worlds.len()`, whole subtrees whose
/// tops (entry indices) are `tops`, into `worlds`, and copies their entities into `entities`.
/// Large ranges are halved at a subtree boundary and run in parallel.
///
/// A subtree's top reads its parent's matrix from the parent's `WorldTransform`, which holds
/// exactly what the last pass computed for it; every other node reads its parent's from the
/// list (an earlier entry of the same subtree, so of the same range).
fn compute_range(list: &ListInputs<'_>, tops: &[u32], first: usize, worlds: &mut [Mat4], entities: &mut [Entity]) {
    if worlds.len() > 2 * GRAIN && tops.len() > 1 {
        let middle = tops.partition_point(|&top| (top as usize) < first + worlds.len() / 2).clamp(1, tops.len() - 1);
        let split = tops[middle] as usize - first;
        let (left_worlds, right_worlds) = worlds.split_at_mut(split);
        let (left_entities, right_entities) = entities.split_at_mut(split);
        runtime::jobs::join(
            || compute_range(list, &tops[..middle], first, left_worlds, left_entities),
            || compute_range(list, &tops[middle..], first + split, right_worlds, right_entities),
        );
        return;
    }
    for offset in 0..worlds.len() {
        let entry = first + offset;
        if let Some(&ahead) = list.nodes.get(entry + PREFETCH_DISTANCE) {
            prefetch(list.inputs, ahead as usize);
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
            let parent_world = list.world.get::<WorldTransform>(parent).expect("a parent node has a WorldTransform");
            parent_world.0 * local
        };
        entities[offset] = input.entity;
    }
}

/// Whether two transforms hold the same bits (see [`same_bits`]).
fn same_transform(left: &Transform, right: &Transform) -> bool {
    let floats = |transform: &Transform| {
        let (translation, rotation, scale) = (transform.translation, transform.rotation, transform.scale);
        [
            translation.x,
            translation.y,
            translation.z,
            rotation.x,
            rotation.y,
            rotation.z,
            rotation.w,
            scale.x,
            scale.y,
            scale.z,
        ]
    };
    same_float_bits(&floats(left), &floats(right))
}

fn is_marked(bits: &[u64], node: u32) -> bool {
    bits[node as usize / 64] & (1 << (node % 64)) != 0
}

fn mark(bits: &mut [u64], node: u32) {
    bits[node as usize / 64] |= 1 << (node % 64);
}
