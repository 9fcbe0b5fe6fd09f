//! The links and levels of a full pass: each node's parent node and depth (in parallel up
//! to [`HOP_LIMIT`] links, then a serial walk that cuts loops), and the stable counting sort
//! of the nodes by depth that orders the matrix computation level by level.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use hecs::Entity;
use runtime::jobs::parallel_for_chunks;

use super::{
    HierarchyColumns, HierarchyReport, Link, NodeInput, Propagator, DEPTH_ON_STACK, DEPTH_UNKNOWN, GRAIN, HOP_LIMIT,
    NONE, PARALLEL_LEVELS, SORT_CHUNK,
};

/// What a node's `Parent` points at this frame.
pub(super) enum ParentState {
    /// No `Parent`: a root.
    Root,
    /// The parent's node.
    Node(u32),
    /// The parent entity no longer exists.
    Gone,
    /// The parent exists but has no `Transform`.
    Unplaced,
}

/// Flags the parallel link pass raises for the serial follow-ups.
#[derive(Default)]
pub(super) struct LinkFlags {
    pub(super) parent_gone: AtomicBool,
    pub(super) parent_unplaced: AtomicBool,
    pub(super) too_deep: AtomicBool,
    pub(super) deepest: AtomicU32,
}

impl Propagator {
    /// Links nodes to parent nodes and finds the depth of every node within [`HOP_LIMIT`]
    /// links of a root, in parallel.
    pub(super) fn link(&mut self, world: &HierarchyColumns<'_>) -> LinkFlags {
        runtime::profile_zone!("hierarchy link");
        let flags = LinkFlags::default();
        let (inputs, node_of_id) = (&self.inputs, &self.node_of_id);
        self.links.resize(inputs.len(), Link { parent: NONE, depth: DEPTH_UNKNOWN });
        parallel_for_chunks(&mut self.links, GRAIN, |first, chunk| {
            let (mut gone, mut unplaced, mut too_deep, mut deepest) = (false, false, false, 0);
            for (offset, link) in chunk.iter_mut().enumerate() {
                link.parent = match parent_state(world, node_of_id, inputs, inputs[first + offset].parent) {
                    ParentState::Root => NONE,
                    ParentState::Node(parent) => parent,
                    ParentState::Gone => {
                        gone = true;
                        NONE
                    }
                    ParentState::Unplaced => {
                        unplaced = true;
                        NONE
                    }
                };
                let mut hops = 0;
                let mut above = link.parent;
                while above != NONE && hops < HOP_LIMIT {
                    hops += 1;
                    above = match parent_state(world, node_of_id, inputs, inputs[above as usize].parent) {
                        ParentState::Node(parent) => parent,
                        _ => NONE,
                    };
                }
                if above == NONE {
                    link.depth = hops;
                    deepest = deepest.max(hops);
                } else {
                    link.depth = DEPTH_UNKNOWN;
                    too_deep = true;
                }
            }
            for (flag, raised) in
                [(&flags.parent_gone, gone), (&flags.parent_unplaced, unplaced), (&flags.too_deep, too_deep)]
            {
                if raised {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            flags.deepest.fetch_max(deepest, Ordering::Relaxed);
        });
        flags
    }

    /// Serial memoised depth walk for the nodes the parallel pass left; cuts loops. Returns
    /// the deepest depth it assigned.
    pub(super) fn finish_depths(&mut self, report: &mut HierarchyReport) -> u32 {
        runtime::profile_zone!("hierarchy deep links");
        let mut deepest = 0;
        for start in 0..self.links.len() as u32 {
            let mut current = start;
            while self.links[current as usize].depth == DEPTH_UNKNOWN {
                self.links[current as usize].depth = DEPTH_ON_STACK;
                self.walk.push(current);
                let parent = self.links[current as usize].parent;
                if parent == NONE {
                    break;
                }
                current = parent;
            }
            // Unwind from the highest ancestor reached down to `start`.
            while let Some(node) = self.walk.pop() {
                let parent = self.links[node as usize].parent;
                let depth = if parent == NONE {
                    0
                } else if self.links[parent as usize].depth == DEPTH_ON_STACK {
                    // The parent is still being walked: the links loop. Cut the loop here.
                    log::error!(
                        "Parent links through entity id {} form a loop; it is placed as a root (hierarchy::set_parent refuses loops)",
                        self.inputs[node as usize].entity.id()
                    );
                    self.links[node as usize].parent = NONE;
                    report.cycles_cut += 1;
                    0
                } else {
                    self.links[parent as usize].depth + 1
                };
                self.links[node as usize].depth = depth;
                deepest = deepest.max(depth);
            }
        }
        deepest
    }

    /// Stable counting sort of the nodes by depth into `order` / `position_of_node`.
    pub(super) fn sort_by_depth(&mut self, levels: usize) {
        runtime::profile_zone!("hierarchy sort");
        let count = self.links.len();
        if self.order.len() < count {
            self.order.resize_with(count, || AtomicU32::new(NONE));
            self.position_of_node.resize_with(count, || AtomicU32::new(NONE));
        }
        self.level_start.clear();
        self.level_start.resize(levels + 1, 0);
        if levels > PARALLEL_LEVELS {
            self.sort_serially(levels);
            return;
        }
        let chunks = count.div_ceil(SORT_CHUNK);
        self.chunk_cursors.clear();
        self.chunk_cursors.resize(chunks, [0; PARALLEL_LEVELS]);
        let links = &self.links;
        let chunk_nodes = |chunk: usize| chunk * SORT_CHUNK..((chunk + 1) * SORT_CHUNK).min(count);
        parallel_for_chunks(&mut self.chunk_cursors, 1, |first, rows| {
            for (offset, row) in rows.iter_mut().enumerate() {
                for link in &links[chunk_nodes(first + offset)] {
                    row[link.depth as usize] += 1;
                }
            }
        });
        // Positions: level-major, then chunk, then node order within the chunk.
        let mut running = 0;
        for level in 0..levels {
            self.level_start[level] = running;
            for row in &mut self.chunk_cursors {
                let level_count = row[level];
                row[level] = running;
                running += level_count;
            }
        }
        self.level_start[levels] = running;
        let (order, position_of_node) = (&self.order, &self.position_of_node);
        parallel_for_chunks(&mut self.chunk_cursors, 1, |first, rows| {
            for (offset, cursor) in rows.iter_mut().enumerate() {
                for node in chunk_nodes(first + offset) {
                    let level = links[node].depth as usize;
                    let position = cursor[level];
                    cursor[level] += 1;
                    position_of_node[node].store(position, Ordering::Relaxed);
                    order[position as usize].store(node as u32, Ordering::Relaxed);
                }
            }
        });
    }

    fn sort_serially(&mut self, levels: usize) {
        for link in &self.links {
            self.level_start[link.depth as usize + 1] += 1;
        }
        for level in 0..levels {
            self.level_start[level + 1] += self.level_start[level];
        }
        // `walk` doubles as the fill cursor of each level.
        self.walk.clear();
        self.walk.extend_from_slice(&self.level_start[..levels]);
        for (node, link) in self.links.iter().enumerate() {
            let position = self.walk[link.depth as usize];
            self.walk[link.depth as usize] += 1;
            self.order[position as usize].store(node as u32, Ordering::Relaxed);
            self.position_of_node[node].store(position, Ordering::Relaxed);
        }
        self.walk.clear();
    }
}

/// What `parent` points at: a node of this frame, a despawned entity, or one without a
/// `Transform`. A table entry counts only if its node has the same id and the parent handle
/// is alive (so a reused id with a newer generation is not mistaken for the parent).
pub(super) fn parent_state(
    world: &HierarchyColumns<'_>,
    node_of_id: &[AtomicU32],
    inputs: &[NodeInput],
    parent: Option<Entity>,
) -> ParentState {
    let Some(parent) = parent else {
        return ParentState::Root;
    };
    if !world.contains(parent) {
        return ParentState::Gone;
    }
    let node = node_of_id.get(parent.id() as usize).map_or(NONE, |node| node.load(Ordering::Relaxed));
    match inputs.get(node as usize) {
        Some(input) if input.entity == parent => ParentState::Node(node),
        _ => ParentState::Unplaced,
    }
}
