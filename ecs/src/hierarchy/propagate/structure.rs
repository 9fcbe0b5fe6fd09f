//! Structural changes in an incremental pass: nodes that come and go, and links that change,
//! applied to the link data of the last full pass instead of rebuilding it.
//!
//! A node is a persistent slot: the full pass numbers the nodes in row order, and from then
//! on a node keeps its slot while its entity has a `Transform`, wherever its row moves. The
//! change log names every entity that was spawned, despawned or changed components, and
//! every entity whose `Transform` or `Parent` was written; each is looked up once:
//! - **gone** (despawned, or its `Transform` removed): its slot is freed (taken again from
//!   the next frame on, so nothing of this frame still names it), it leaves its parent's
//!   children, and its children are relinked;
//! - **new**: it takes a free slot (or a new one) and is linked and computed;
//! - **still there**: a new `Parent` relinks it, new `Transform` bits recompute it.
//!
//! Relinking follows the full pass's rules: a parent that is a node links the child to it,
//! one that was despawned makes the child an orphan (a root where it stands, its `Parent`
//! removed, logged once), one without a `Transform` places it as a root until that parent
//! becomes a node. A relinked node's depth is found by walking up to its root (a loop of
//! `Parent` links, which only a full pass cuts, sends the frame to one), and its subtree's
//! depths follow. Every relinked node is recomputed with its subtree.

use std::sync::atomic::{AtomicU32, Ordering};

use hecs::Entity;

use super::children::ChildIndex;
use super::depth::{parent_state, ParentState};
use super::fixes::FixSink;
use super::incremental::{same_transform, Tracking};
use super::places::Place;
use super::{HierarchyColumns, HierarchyReport, Link, NodeInput, Propagator, NONE};
use crate::hierarchy::Parent;
use crate::transform::{Transform, WorldTransform};

/// What the structural side of the incremental passes keeps between frames, and its lists
/// for the current one.
#[derive(Debug, Default)]
pub(super) struct Structure {
    /// Free slots, taken by new nodes.
    free: Vec<u32>,
    /// Slots freed this frame: free from the next one.
    pub(super) freed: Vec<u32>,
    /// Live nodes.
    pub(super) live: usize,
    /// Live nodes at each depth (the last entry is not zero).
    level_nodes: Vec<u32>,
    /// Nodes whose parent exists without a `Transform` (placed as roots meanwhile).
    unplaced: Vec<u32>,
    /// This frame: nodes whose `Parent` may point elsewhere (their link is resolved again).
    pub(super) relink: Vec<u32>,
    /// This frame: nodes whose parent node changed (their subtree's depths are redone).
    reparented: Vec<u32>,
    /// This frame: nodes whose parent was despawned.
    orphans: Vec<Orphan>,
    /// Scratch: the children of a removed node, then the nodes of a subtree walk.
    scratch: Vec<u32>,
}

/// A node whose parent was despawned, made a root where it stands.
#[derive(Clone, Copy, Debug)]
struct Orphan {
    node: u32,
    /// The despawned parent.
    parent: Entity,
    /// Its last world pose, its local `Transform` from now on (none when not finite).
    pose: Option<Transform>,
}

impl Structure {
    /// Empties this frame's lists.
    pub(super) fn begin_frame(&mut self) {
        self.relink.clear();
        self.reparented.clear();
        self.orphans.clear();
    }
}

impl Propagator {
    /// Builds what the incremental passes keep, from the link data of the full pass that
    /// just ran: the children index, the places, the depth counts, the free slots (none)
    /// and, when that pass placed some children as roots for want of a parent's
    /// `Transform`, those children.
    pub(super) fn prepare_tracking(&mut self, world: &HierarchyColumns<'_>) {
        let Propagator { inputs, links, runs, node_of_id, tracking, .. } = self;
        let Tracking { children, places, structure, .. } = tracking;
        children.build(links);
        places.build(runs, inputs.len());
        structure.free.clear();
        structure.freed.clear();
        structure.live = inputs.len();
        structure.level_nodes.clear();
        for link in links.iter() {
            if structure.level_nodes.len() <= link.depth as usize {
                structure.level_nodes.resize(link.depth as usize + 1, 0);
            }
            structure.level_nodes[link.depth as usize] += 1;
        }
        structure.unplaced.clear();
        if self.warned_parent_without_transform {
            for (node, (input, link)) in inputs.iter().zip(links.iter()).enumerate() {
                if input.parent.is_some()
                    && link.parent == NONE
                    && matches!(parent_state(world, node_of_id, inputs, input.parent), ParentState::Unplaced)
                {
                    structure.unplaced.push(node as u32);
                }
            }
        }
        tracking.ready = true;
    }

    /// The node of `entity` (this very entity, not an earlier one with its id), if it has one.
    fn node_of(&self, entity: Entity) -> Option<u32> {
        let node = self.node_of_id.get(entity.id() as usize)?.load(Ordering::Relaxed);
        self.inputs.get(node as usize).filter(|input| input.entity == entity).map(|_| node)
    }

    /// Applies what the change log named (`tracking.changed.entities`): each entity is
    /// removed, added or updated as it stands now. `false` when the log cannot vouch for
    /// what it saw (an entity id held by two living entities).
    pub(super) fn apply_named(&mut self, world: &HierarchyColumns<'_>) -> bool {
        let named = std::mem::take(&mut self.tracking.changed.entities);
        let mut vouched = true;
        for &entity in &named {
            let now = world.entity(entity).ok().and_then(|components| {
                let local = *components.get::<Transform>()?;
                Some((local, components.get::<Parent>().map(|parent| parent.0), components.has::<WorldTransform>()))
            });
            match (self.node_of(entity), now) {
                (Some(node), None) => self.remove_node(node),
                (None, None) => {}
                (Some(node), Some((local, parent, has_world))) => {
                    let (input, tracking) = (&mut self.inputs[node as usize], &mut self.tracking);
                    if input.parent != parent {
                        input.parent = parent;
                        tracking.structure.relink.push(node);
                    }
                    // A node that lost its `WorldTransform` is recomputed, which gives it one.
                    if !same_transform(&local, &input.local) || !has_world {
                        input.local = local;
                        tracking.dirty.push(node);
                    }
                }
                (None, Some((local, parent, _))) => {
                    if !self.add_node(world, NodeInput { local, parent, entity }) {
                        vouched = false;
                        break;
                    }
                }
            }
        }
        self.tracking.changed.entities = named;
        vouched
    }

    /// Gives `input`'s entity a slot; `false` when its id is held by another living entity.
    fn add_node(&mut self, world: &HierarchyColumns<'_>, input: NodeInput) -> bool {
        let id = input.entity.id() as usize;
        if self.node_of_id.len() <= id {
            self.node_of_id.resize_with((id + 1).next_power_of_two(), || AtomicU32::new(NONE));
        }
        let held = self.node_of_id[id].load(Ordering::Relaxed);
        if let Some(earlier) = self.inputs.get(held as usize).map(|input| input.entity).filter(|e| e.id() == id as u32)
        {
            // An earlier entity of this id, despawned before the log's entries began.
            if world.contains(earlier) {
                return false;
            }
            self.remove_node(held);
        }
        let node = match self.tracking.structure.free.pop() {
            Some(node) => node,
            None => {
                self.inputs.push(NodeInput::default());
                self.links.push(Link { parent: NONE, depth: 0 });
                self.tracking.places.of_node.push(Place::UNKNOWN);
                self.tracking.children.cover(self.inputs.len());
                self.inputs.len() as u32 - 1
            }
        };
        let structure = &mut self.tracking.structure;
        self.inputs[node as usize] = input;
        self.links[node as usize] = Link { parent: NONE, depth: 0 };
        self.tracking.places.of_node[node as usize] = Place::UNKNOWN;
        self.node_of_id[id].store(node, Ordering::Relaxed);
        structure.live += 1;
        if structure.level_nodes.is_empty() {
            structure.level_nodes.push(0);
        }
        structure.level_nodes[0] += 1;
        if input.parent.is_some() {
            structure.relink.push(node);
        }
        self.tracking.dirty.push(node);
        true
    }

    /// Frees `node`'s slot: it leaves its parent's children, and its children lose their
    /// parent node (they are relinked and recomputed).
    fn remove_node(&mut self, node: u32) {
        let Propagator { inputs, links, node_of_id, tracking, .. } = self;
        let Tracking { children, places, structure, dirty, .. } = tracking;
        let Link { parent, depth } = links[node as usize];
        if parent != NONE {
            children.unlink(node, parent);
        }
        structure.scratch.clear();
        children.for_each(node, |child| structure.scratch.push(child));
        for &child in &structure.scratch {
            children.unlink(child, node);
            links[child as usize].parent = NONE;
            structure.reparented.push(child);
            structure.relink.push(child);
            dirty.push(child);
        }
        structure.level_nodes[depth as usize] -= 1;
        structure.live -= 1;
        let id = inputs[node as usize].entity.id() as usize;
        if node_of_id[id].load(Ordering::Relaxed) == node {
            node_of_id[id].store(NONE, Ordering::Relaxed);
        }
        inputs[node as usize] = NodeInput::default();
        links[node as usize] = Link { parent: NONE, depth: 0 };
        places.of_node[node as usize] = Place::UNKNOWN;
        structure.freed.push(node);
    }

    /// Resolves the links of the nodes listed in `relink` (and, when anything was named,
    /// of the nodes waiting for a parent's `Transform`), moving each between children lists
    /// and marking it for recomputation when its parent node changed. Orphans are listed
    /// with the pose they take. Warns once when children are placed as roots for want of a
    /// parent's `Transform`.
    pub(super) fn resolve_links(&mut self, world: &HierarchyColumns<'_>) {
        let Propagator { inputs, links, node_of_id, tracking, warned_parent_without_transform, .. } = self;
        let Tracking { children, structure, dirty, changed, .. } = tracking;
        if !changed.entities.is_empty() {
            structure.relink.append(&mut structure.unplaced);
        }
        structure.relink.sort_unstable();
        structure.relink.dedup();
        for &node in &structure.relink {
            let input = &inputs[node as usize];
            if input.entity == Entity::DANGLING {
                continue;
            }
            let target = match parent_state(world, node_of_id, inputs, input.parent) {
                ParentState::Root => NONE,
                ParentState::Node(parent) => parent,
                ParentState::Gone => {
                    let parent = input.parent.expect("a node whose parent is gone has a Parent");
                    structure.orphans.push(Orphan { node, parent, pose: None });
                    dirty.push(node);
                    NONE
                }
                ParentState::Unplaced => {
                    structure.unplaced.push(node);
                    NONE
                }
            };
            let link = &mut links[node as usize];
            if target != link.parent {
                if link.parent != NONE {
                    children.unlink(node, link.parent);
                }
                if target != NONE {
                    children.link(node, target);
                }
                link.parent = target;
                structure.reparented.push(node);
                dirty.push(node);
            }
        }
        let unplaced = !structure.unplaced.is_empty();
        if unplaced && !*warned_parent_without_transform {
            log::warn!("some parents have no Transform; their children are placed as roots");
        }
        *warned_parent_without_transform = unplaced;
    }

    /// Finds the depth of every reparented node by walking up to its root, and redoes the
    /// depths of its subtree. `false` when a walk does not reach a root: the links loop.
    pub(super) fn redo_depths(&mut self) -> bool {
        let Propagator { inputs, links, tracking, .. } = self;
        let Tracking { children, structure, .. } = tracking;
        let Structure { reparented, level_nodes, scratch, live, .. } = structure;
        reparented.sort_unstable();
        reparented.dedup();
        for &node in reparented.iter() {
            if inputs[node as usize].entity == Entity::DANGLING {
                continue;
            }
            let mut depth = 0u32;
            let mut above = links[node as usize].parent;
            while above != NONE {
                depth += 1;
                if depth as usize > *live {
                    return false;
                }
                above = links[above as usize].parent;
            }
            set_depth(links, level_nodes, node, depth);
            scratch.clear();
            scratch.push(node);
            while let Some(parent) = scratch.pop() {
                let below = links[parent as usize].depth + 1;
                subtree_children(children, parent, |child| {
                    set_depth(links, level_nodes, child, below);
                    scratch.push(child);
                });
            }
        }
        true
    }

    /// Gives each orphan its last world pose as its local `Transform` (when that pose is
    /// finite), as the full pass does, so it does not jump. Its inputs say what the fixes
    /// will leave: that pose and no `Parent`.
    pub(super) fn place_orphans(&mut self, world: &HierarchyColumns<'_>) {
        let Propagator { inputs, tracking, .. } = self;
        for orphan in &mut tracking.structure.orphans {
            let input = &mut inputs[orphan.node as usize];
            let last = world.get::<WorldTransform>(input.entity).ok().map(|last| last.0);
            orphan.pose = last.filter(|last| last.is_finite()).map(Transform::from_matrix);
            if let Some(pose) = orphan.pose {
                input.local = pose;
            }
            input.parent = None;
        }
    }

    /// Ends a pass that changed structure: sends the orphans' fixes and counts them (once the
    /// pass can no longer fall back to a full pass, which would detach them again), frees
    /// this frame's slots, and reports the node and level counts.
    pub(super) fn finish_structure(&mut self, fixes: &mut impl FixSink, report: &mut HierarchyReport) {
        let structure = &mut self.tracking.structure;
        for orphan in &structure.orphans {
            let entity = self.inputs[orphan.node as usize].entity;
            log::warn!(
                "entity {entity:?} lost its parent {:?} (despawned); it is a root where it stands from now on",
                orphan.parent
            );
            if let Some(pose) = orphan.pose {
                fixes.set_pose(entity, pose);
            }
            fixes.remove_parent(entity);
            report.orphans_detached += 1;
            report.orphans_this_frame += 1;
        }
        structure.free.append(&mut structure.freed);
        structure.unplaced.sort_unstable();
        structure.unplaced.dedup();
        while structure.level_nodes.last() == Some(&0) {
            structure.level_nodes.pop();
        }
        report.nodes = structure.live;
        report.levels = structure.level_nodes.len();
    }
}

/// Calls `visit` with each child of `parent` (a wrapper that keeps the borrow of the index
/// apart from the tables the caller writes).
#[inline]
fn subtree_children(children: &ChildIndex, parent: u32, visit: impl FnMut(u32)) {
    if children.may_have_children(parent) {
        children.for_each(parent, visit);
    }
}

/// Moves `node` to depth `depth` in `links` and in the depth counts.
fn set_depth(links: &mut [Link], level_nodes: &mut Vec<u32>, node: u32, depth: u32) {
    let link = &mut links[node as usize];
    level_nodes[link.depth as usize] -= 1;
    if level_nodes.len() <= depth as usize {
        level_nodes.resize(depth as usize + 1, 0);
    }
    level_nodes[depth as usize] += 1;
    link.depth = depth;
}
