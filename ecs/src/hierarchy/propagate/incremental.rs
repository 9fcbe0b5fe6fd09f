//! The change-driven passes: skip a frame where nothing moved, and otherwise recompute only
//! the moved nodes and their descendants.
//!
//! The incremental pass keeps the link data of the last full pass (node of each id, parent
//! node, depth, the matrix of every node) and builds a children index (CSR) from it the first
//! time it needs one. It is sound only while no entity has been spawned, despawned or moved
//! between archetypes since that full pass, which the change log's structural entries tell;
//! it also checks that every node archetype still has the rows it had, and falls back to the
//! full pass on any doubt. Candidates are compared bit for bit with the `Transform` the last
//! pass used, so a query that lends `&mut Transform` without writing costs a compare, not a
//! recomputation. A changed `Parent` sends the frame to the full pass.

use std::any::TypeId;
use std::sync::atomic::Ordering;

use hecs::{Entity, World};
use runtime::changes::{ChangeCursor, ChangedSince, Changes};
use runtime::Commands;

use super::{is_node_archetype, same_bits, HierarchyReport, PassKind, Propagator, NONE};
use crate::hierarchy::Parent;
use crate::transform::{Transform, WorldTransform};

/// The incremental pass runs while its candidates (rows of written archetypes plus written
/// entities) are at most this share (1 / N) of the nodes; above it the full pass, parallel
/// and streaming, is the cheaper one.
const INCREMENTAL_SHARE: usize = 8;

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
    /// The children index matches the link data (cleared by every full pass).
    pub(super) children_built: bool,
    /// Nodes whose `Transform` bits changed, then ordered by depth.
    dirty: Vec<u32>,
    /// One bit per node: recomputed this pass.
    recomputed: Vec<u64>,
    /// Breadth-first queue over one moved subtree.
    queue: Vec<u32>,
    /// Entities whose `WorldTransform` this pass changed, for the change log.
    written: Vec<Entity>,
}

impl Propagator {
    /// One frame of propagation driven by `changes`, the app's change log: skips the frame
    /// when no `Transform` or `Parent` was lent mutably and nothing changed structurally,
    /// recomputes only the moved nodes and their descendants when only `Transform` values
    /// may have changed, and runs the full pass otherwise (see the [module docs](super)).
    /// Records the `WorldTransform`s it wrote in `changes`; structural fixes go to
    /// `commands`. The result is bit-identical to a full pass over the same world.
    pub fn run_tracked(
        &mut self,
        world: &World,
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
            if let Some(updated) = self.propagate_changes(world, changes) {
                report.last_pass = PassKind::Incremental;
                report.updated = updated;
                return;
            }
        }
        self.full_pass(world, commands, report);
        self.record_full_pass(changes);
    }

    /// The incremental pass; returns how many matrices it recomputed, or `None` when the
    /// frame needs the full pass (too many candidates, a changed `Parent`, rows that moved).
    fn propagate_changes(&mut self, world: &World, changes: &Changes) -> Option<usize> {
        runtime::profile_zone!("hierarchy incremental");
        if !self.runs_match(world) {
            return None;
        }
        let written_rows: usize = (self.runs.iter())
            .filter(|run| self.tracking.inputs.archetypes.binary_search(&run.archetype).is_ok())
            .map(|run| run.len as usize)
            .sum();
        if written_rows + self.tracking.inputs.entities.len() > self.inputs.len() / INCREMENTAL_SHARE {
            return None;
        }
        if !self.find_moved(world) {
            return None;
        }
        if self.tracking.dirty.is_empty() {
            return Some(0);
        }
        if !self.tracking.children_built {
            self.build_children();
        }
        let recomputed = self.recompute_moved();
        self.write_moved(world, changes);
        Some(recomputed)
    }

    /// Whether the node archetypes are those of the last full pass, with as many rows.
    fn runs_match(&self, world: &World) -> bool {
        let mut runs = self.runs.iter();
        for (position, archetype) in world.archetypes().enumerate() {
            if !is_node_archetype(archetype) {
                continue;
            }
            match runs.next() {
                Some(run)
                    if run.archetype == position as u32
                        && run.len == archetype.len()
                        && run.has_world == archetype.has::<WorldTransform>() => {}
                _ => return false,
            }
        }
        runs.next().is_none()
    }

    /// Fills `dirty` with the candidates whose `Transform` bits changed (updating their
    /// inputs); `false` when a candidate's `Parent` changed or a candidate is unknown.
    fn find_moved(&mut self, world: &World) -> bool {
        let Propagator { inputs, runs, node_of_id, tracking, .. } = self;
        tracking.dirty.clear();
        let archetypes = world.archetypes().filter(|archetype| is_node_archetype(archetype));
        for (archetype, run) in archetypes.zip(runs.iter()) {
            if tracking.inputs.archetypes.binary_search(&run.archetype).is_err() {
                continue;
            }
            let transforms = archetype.get::<&Transform>().expect("node archetypes have a Transform column");
            let parents = archetype.get::<&Parent>();
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
        for &entity in &tracking.inputs.entities {
            let Ok(entity_ref) = world.entity(entity) else {
                // Despawned without a structural entry: the log cannot vouch for the links.
                return false;
            };
            let known = node_of_id.get(entity.id() as usize).map(|node| node.load(Ordering::Relaxed) as usize);
            let node = known.filter(|&node| inputs.get(node).is_some_and(|input| input.id == entity.id()));
            let (Some(node), Some(local)) = (node, entity_ref.get::<&Transform>()) else {
                if entity_ref.has::<Transform>() {
                    return false;
                }
                // Not a node before or now: nothing to place.
                continue;
            };
            let input = &mut inputs[node];
            if entity_ref.get::<&Parent>().map(|parent| parent.0) != input.parent {
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
        for link in links.iter().filter(|link| link.parent != NONE) {
            tracking.child_start[link.parent as usize] += 1;
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

    /// Recomputes the moved nodes and everything below them, shallowest first, so a moved
    /// node below another moved node is done once, after its ancestor. Each matrix comes from
    /// the same operations as in the full pass (`parent world * local.to_matrix()`), so the
    /// bits are the same. Marks every recomputed node in `recomputed`; returns the count.
    fn recompute_moved(&mut self) -> usize {
        runtime::profile_zone!("hierarchy moved subtrees");
        let Propagator { inputs, links, position_of_node, worlds, tracking, .. } = self;
        let Tracking { dirty, recomputed, queue, child_start, child_nodes, .. } = tracking;
        recomputed.clear();
        recomputed.resize(inputs.len().div_ceil(64), 0);
        dirty.sort_unstable_by_key(|&node| links[node as usize].depth);
        let position = |node: u32| position_of_node[node as usize].load(Ordering::Relaxed) as usize;
        let mut count = 0;
        for &top in dirty.iter() {
            if is_marked(recomputed, top) {
                continue;
            }
            mark(recomputed, top);
            queue.clear();
            queue.push(top);
            let mut head = 0;
            while let Some(&node) = queue.get(head) {
                head += 1;
                let local = inputs[node as usize].local.to_matrix();
                let parent = links[node as usize].parent;
                worlds[position(node)] = if parent == NONE { local } else { worlds[position(parent)] * local };
                count += 1;
                let children =
                    &child_nodes[child_start[node as usize] as usize..child_start[node as usize + 1] as usize];
                for &child in children {
                    debug_assert!(!is_marked(recomputed, child), "the links form a forest: one visit per node");
                    mark(recomputed, child);
                    queue.push(child);
                }
            }
        }
        count
    }

    /// Stores the recomputed matrices whose bits changed, run by run in row order, and
    /// records those entities' `WorldTransform` writes in `changes`.
    fn write_moved(&mut self, world: &World, changes: &Changes) {
        runtime::profile_zone!("hierarchy write moved");
        let Propagator { runs, position_of_node, worlds, tracking, .. } = self;
        tracking.written.clear();
        let archetypes = world.archetypes().filter(|archetype| is_node_archetype(archetype));
        for (archetype, run) in archetypes.zip(runs.iter()) {
            let (start, end) = (run.start as usize, (run.start + run.len) as usize);
            let words = start / 64..end.div_ceil(64);
            if tracking.recomputed[words.clone()].iter().all(|&word| word == 0) {
                continue;
            }
            let Some(mut column) = archetype.get::<&mut WorldTransform>() else {
                continue;
            };
            let ids = archetype.ids();
            for word_index in words {
                let mut bits = tracking.recomputed[word_index] & range_mask(word_index * 64, start, end);
                while bits != 0 {
                    let node = word_index * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let matrix = worlds[position_of_node[node].load(Ordering::Relaxed) as usize];
                    let row = node - start;
                    if same_bits(&column[row].0, &matrix) {
                        continue;
                    }
                    column[row].0 = matrix;
                    // SAFETY: `ids` are the rows of a live archetype of `world`, which is
                    // borrowed for this whole call, so each id is a live entity's.
                    let entity = unsafe { world.find_entity_from_id(ids[row]) };
                    tracking.written.push(entity);
                }
            }
        }
        changes.record_entity_writes(TypeId::of::<WorldTransform>(), &tracking.written);
    }
}

/// Whether two transforms hold the same bits (see [`same_bits`]).
fn same_transform(left: &Transform, right: &Transform) -> bool {
    let bits = |transform: &Transform| {
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
        .map(f32::to_bits)
    };
    bits(left) == bits(right)
}

fn is_marked(bits: &[u64], node: u32) -> bool {
    bits[node as usize / 64] & (1 << (node % 64)) != 0
}

fn mark(bits: &mut [u64], node: u32) {
    bits[node as usize / 64] |= 1 << (node % 64);
}

/// The bits of the word starting at node `word_start` that fall in nodes `start..end`.
fn range_mask(word_start: usize, start: usize, end: usize) -> u64 {
    let from = start.saturating_sub(word_start).min(64);
    let to = end.saturating_sub(word_start).min(64);
    if from >= to {
        return 0;
    }
    let below_to = if to == 64 { u64::MAX } else { (1u64 << to) - 1 };
    below_to & (u64::MAX << from)
}
