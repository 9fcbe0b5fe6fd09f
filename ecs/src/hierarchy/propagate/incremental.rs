//! The change-driven passes: skip a frame where nothing moved, and otherwise recompute only
//! what changed: the moved, new and relinked nodes and their descendants.
//!
//! The incremental pass keeps the link data of the last full pass (node of each id, inputs,
//! parent node, depth) and builds from it, the first time it runs after that pass, a
//! children index (`children.rs`), the rows where the nodes' matrices live (`places.rs`) and
//! the depth counts. From then on it keeps them in step with the world through the change
//! log: entities spawned, despawned or given or stripped of components, and written
//! `Transform`s or `Parent`s (`structure.rs`). A moved subtree's top reads its parent's
//! matrix from the parent's `WorldTransform`: this system is its only writer, so it holds
//! the bits the last pass computed.
//!
//! Candidates are compared bit for bit with the `Transform` the last pass used, so a query
//! that lends `&mut Transform` without writing costs a compare, not a recomputation. The
//! full pass runs instead when the log says anything may have changed (`App::world_mut`, a
//! replaced world, an exclusive system that does not report its changes), when the
//! candidates are more than a quarter of the nodes ([`INCREMENTAL_SHARE`]), and on any doubt (a row
//! whose entity the last pass did not know, a loop of `Parent` links, which only the full
//! pass cuts).

use std::any::TypeId;
use std::sync::atomic::Ordering;

use runtime::changes::{ChangeCursor, ChangedSince, Changes};
use runtime::Commands;

use super::children::ChildIndex;
use super::moved::MovedList;
use super::places::Places;
use super::structure::Structure;
use super::{is_node_archetype, same_float_bits, HierarchyColumns, HierarchyReport, PassKind, Propagator, NONE};
use crate::hierarchy::Parent;
use crate::transform::Transform;

/// The incremental pass runs while its candidates (the rows of written archetypes, and
/// [`NAMED_WEIGHT`] for each entity the log names) are at most this share (1 / N) of the
/// nodes; above it the full pass, parallel and streaming, is the cheaper one or close to it.
/// Measured on two threads in a world of 160k nodes, the two cost the same at about 40% of
/// the nodes written through queries, or 20% of them spawned or despawned; a quarter keeps
/// clear of both, and of a machine with more threads, where the full pass gains more.
pub(in crate::hierarchy) const INCREMENTAL_SHARE: usize = 4;
/// What an entity named by the log costs the incremental pass, in written rows: a look-up
/// through the entity, often a relink and a slot, against a row read in order.
pub(in crate::hierarchy) const NAMED_WEIGHT: usize = 2;

/// What the change-driven passes keep between frames.
#[derive(Debug, Default)]
pub(super) struct Tracking {
    /// Where the system stands in the change log, for writes of `Transform` or `Parent` and
    /// structural entries.
    cursor: ChangeCursor,
    /// What changed since the last look.
    pub(super) changed: ChangedSince,
    /// The state below matches the link data (cleared by every full pass).
    pub(super) ready: bool,
    pub(super) children: ChildIndex,
    pub(super) places: Places,
    pub(super) structure: Structure,
    /// Nodes to recompute with their subtrees (may repeat), then ordered by depth.
    pub(super) dirty: Vec<u32>,
    /// One bit per node: listed in `moved` this pass.
    pub(super) recomputed: Vec<u64>,
    /// The nodes the pass recomputes.
    pub(super) moved: MovedList,
}

impl Propagator {
    /// One frame of propagation driven by `changes`, the app's change log: skips the frame
    /// when nothing it reads changed, recomputes only what changed when the log names it, and
    /// runs the full pass otherwise (see
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
        let inputs = [TypeId::of::<Transform>(), TypeId::of::<Parent>()];
        changes.collect(&mut tracking.cursor, &inputs, &mut tracking.changed);
        report.orphans_this_frame = 0;
        let trackable = self.linked && !tracking.changed.everything;
        if trackable && tracking.changed.is_empty() {
            report.last_pass = PassKind::Skipped;
            report.updated = 0;
            return;
        }
        if trackable {
            if let Some(updated) = self.propagate_changes(world, commands, report) {
                report.last_pass = PassKind::Incremental;
                report.updated = updated;
                return;
            }
        }
        self.full_pass(world, commands, report);
        self.record_full_pass(world);
    }

    /// The incremental pass; returns how many matrices it recomputed, or `None` when the
    /// frame needs the full pass (too many candidates, or a change the log cannot vouch
    /// for). Falling back leaves nothing half done that the full pass would not redo: fixes
    /// and report counts are sent only once the pass is sure to finish.
    fn propagate_changes(
        &mut self,
        world: &HierarchyColumns<'_>,
        fixes: &mut Commands<'_>,
        report: &mut HierarchyReport,
    ) -> Option<usize> {
        runtime::profile_zone!("hierarchy incremental");
        if !self.tracking.ready {
            self.prepare_tracking(world);
        }
        let tracking = &mut self.tracking;
        let written_rows: usize = (tracking.changed.archetypes.iter())
            .filter_map(|&position| world.archetype(position as usize))
            .filter(is_node_archetype)
            .map(|archetype| archetype.len() as usize)
            .sum();
        let candidates = written_rows + NAMED_WEIGHT * tracking.changed.entities.len();
        if candidates > tracking.structure.live / INCREMENTAL_SHARE {
            return None;
        }
        tracking.dirty.clear();
        tracking.structure.begin_frame();
        if !self.apply_named(world) || !self.find_written_rows(world) {
            return None;
        }
        let structural = !self.tracking.changed.entities.is_empty() || !self.tracking.structure.relink.is_empty();
        if structural {
            self.resolve_links(world);
            if !self.redo_depths() {
                return None;
            }
            self.place_orphans(world);
        }
        let updated = if self.tracking.dirty.is_empty() {
            0
        } else {
            self.list_moved_subtrees();
            if !self.compute_moved(world) {
                return None;
            }
            self.write_moved(world, fixes);
            self.tracking.moved.nodes.len()
        };
        if structural {
            self.finish_structure(fixes, report);
        }
        Some(updated)
    }

    /// Reads the rows of the node archetypes where a `Transform` or `Parent` was lent
    /// mutably: a new `Parent` relinks the node, new `Transform` bits make it dirty. `false`
    /// when a row holds an entity that is no node.
    fn find_written_rows(&mut self, world: &HierarchyColumns<'_>) -> bool {
        let Propagator { inputs, node_of_id, tracking, .. } = self;
        let Tracking { changed, structure, dirty, .. } = tracking;
        for &position in &changed.archetypes {
            let Some(archetype) = world.archetype(position as usize).filter(is_node_archetype) else {
                continue;
            };
            let transforms = archetype.column::<Transform>().expect("node archetypes have a Transform column");
            let parents = archetype.column::<Parent>();
            // The rows of an archetype are mostly consecutive nodes (a full pass numbers them
            // so): the node after the last one found is tried before the id's table entry.
            let mut node = NONE;
            for (row, &id) in archetype.ids().iter().enumerate() {
                let next = node.wrapping_add(1);
                node = match inputs.get(next as usize) {
                    Some(input) if input.entity.id() == id => next,
                    _ => node_of_id.get(id as usize).map_or(NONE, |node| node.load(Ordering::Relaxed)),
                };
                let Some(input) = inputs.get_mut(node as usize).filter(|input| input.entity.id() == id) else {
                    return false;
                };
                let parent = parents.as_ref().map(|parents| parents[row].0);
                if parent != input.parent {
                    input.parent = parent;
                    structure.relink.push(node);
                }
                if !same_transform(&transforms[row], &input.local) {
                    input.local = transforms[row];
                    dirty.push(node);
                }
            }
        }
        true
    }
}

/// Whether two transforms hold the same bits (see [`same_bits`](super::same_bits)).
pub(super) fn same_transform(left: &Transform, right: &Transform) -> bool {
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
