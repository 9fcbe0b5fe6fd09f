//! The children index of the incremental passes: the children of every node, kept in step
//! with the links as nodes come, go and change parent.
//!
//! It is built from the links of a full pass as flat lists (one range of a shared array per
//! parent, children in ascending node order), which is what the moved-subtree walk reads
//! frame after frame. A structural change does not rebuild it: a child that leaves its parent
//! leaves a hole ([`NONE`]) in the built list, and a child linked since the build joins its
//! parent's *added* list, a doubly linked list threaded through three per-node arrays, so
//! leaving one costs no search. Every linked node is in exactly one place: the built list of
//! its parent while it keeps the parent it had at the build, else its parent's added list.

use super::{Link, NONE};

/// The children of every node (see the module docs).
#[derive(Debug, Default)]
pub(super) struct ChildIndex {
    /// Children of node `n` at the build: `built[built_start[n]..built_start[n + 1]]`,
    /// ascending, with [`NONE`] where a child has left since.
    built_start: Vec<u32>,
    built: Vec<u32>,
    /// Per node: the first child it gained since the build, or [`NONE`].
    added_first: Vec<u32>,
    /// Per node in an added list: the next and the previous sibling there, or [`NONE`].
    added_next: Vec<u32>,
    added_prev: Vec<u32>,
    /// One bit per node: it sits in its parent's added list, not in the built list.
    in_added: Vec<u64>,
    /// One bit per node: it may have children (set when it gains one, cleared by a build).
    /// A leaf, the common case, is passed over without reading its lists.
    has_children: Vec<u64>,
    /// One bit per node: its added list may not be empty (so a parent that gained no child
    /// since the build does not read the added lists' head, a cache miss of its own).
    has_added: Vec<u64>,
}

impl ChildIndex {
    /// Builds the index from `links` (one per node; a node without a parent has [`NONE`]):
    /// counts per parent, an inclusive prefix sum (each entry the end of its list), then a
    /// reverse fill that walks each end back to its start and keeps children in ascending
    /// node order.
    pub(super) fn build(&mut self, links: &[Link]) {
        runtime::profile_zone!("hierarchy children index");
        let nodes = links.len();
        self.built_start.clear();
        self.built_start.resize(nodes + 1, 0);
        self.has_children.clear();
        self.has_children.resize(nodes.div_ceil(64), 0);
        for link in links.iter().filter(|link| link.parent != NONE) {
            self.built_start[link.parent as usize] += 1;
            mark(&mut self.has_children, link.parent);
        }
        let mut running = 0;
        for entry in &mut self.built_start {
            running += *entry;
            *entry = running;
        }
        self.built.clear();
        self.built.resize(running as usize, NONE);
        for (node, link) in links.iter().enumerate().rev().filter(|(_, link)| link.parent != NONE) {
            let cursor = &mut self.built_start[link.parent as usize];
            *cursor -= 1;
            self.built[*cursor as usize] = node as u32;
        }
        self.added_first.clear();
        self.added_next.clear();
        self.added_prev.clear();
        self.in_added.clear();
        self.has_added.clear();
        self.cover(nodes);
    }

    /// Makes the per-node tables cover `nodes` nodes (new nodes have no children).
    pub(super) fn cover(&mut self, nodes: usize) {
        if self.added_first.len() < nodes {
            self.added_first.resize(nodes, NONE);
            self.added_next.resize(nodes, NONE);
            self.added_prev.resize(nodes, NONE);
        }
        let words = nodes.div_ceil(64);
        if self.in_added.len() < words {
            self.in_added.resize(words, 0);
            self.has_children.resize(words, 0);
            self.has_added.resize(words, 0);
        }
    }

    /// Whether `node` may have children (false only when it has none).
    #[inline]
    pub(super) fn may_have_children(&self, node: u32) -> bool {
        is_marked(&self.has_children, node)
    }

    /// The children `node` had at the build, with [`NONE`] for those that left since.
    #[inline]
    pub(super) fn built(&self, node: u32) -> &[u32] {
        match self.built_start.get(node as usize..node as usize + 2) {
            Some(range) => &self.built[range[0] as usize..range[1] as usize],
            None => &[],
        }
    }

    /// The children `node` gained since the build.
    #[inline]
    pub(super) fn added(&self, node: u32) -> AddedChildren<'_> {
        let first = if is_marked(&self.has_added, node) { self.added_first[node as usize] } else { NONE };
        AddedChildren { next: &self.added_next, child: first }
    }

    /// Calls `visit` with each child of `node`: those of the build that stayed, then those
    /// it gained since.
    #[inline]
    pub(super) fn for_each(&self, node: u32, mut visit: impl FnMut(u32)) {
        for &child in self.built(node) {
            if child != NONE {
                visit(child);
            }
        }
        for child in self.added(node) {
            visit(child);
        }
    }

    /// Lists `child` among the children of `parent` (it must be in no list).
    pub(super) fn link(&mut self, child: u32, parent: u32) {
        let first = self.added_first[parent as usize];
        self.added_next[child as usize] = first;
        self.added_prev[child as usize] = NONE;
        if first != NONE {
            self.added_prev[first as usize] = child;
        }
        self.added_first[parent as usize] = child;
        mark(&mut self.in_added, child);
        mark(&mut self.has_children, parent);
        mark(&mut self.has_added, parent);
    }

    /// Takes `child` out of the children of `parent`, its parent until now.
    pub(super) fn unlink(&mut self, child: u32, parent: u32) {
        if is_marked(&self.in_added, child) {
            let (next, prev) = (self.added_next[child as usize], self.added_prev[child as usize]);
            if prev == NONE {
                self.added_first[parent as usize] = next;
            } else {
                self.added_next[prev as usize] = next;
            }
            if next != NONE {
                self.added_prev[next as usize] = prev;
            }
            unmark(&mut self.in_added, child);
            return;
        }
        let range = self.built_start[parent as usize] as usize..self.built_start[parent as usize + 1] as usize;
        let slot = self.built[range].iter().position(|&listed| listed == child);
        let slot = slot.expect("a child in no added list is in its parent's built list");
        self.built[self.built_start[parent as usize] as usize + slot] = NONE;
    }
}

/// The children a node gained since the build, from its added list.
pub(super) struct AddedChildren<'a> {
    next: &'a [u32],
    child: u32,
}

impl Iterator for AddedChildren<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        let child = self.child;
        if child == NONE {
            return None;
        }
        self.child = self.next[child as usize];
        Some(child)
    }
}

/// Whether `node`'s bit is set in `bits`.
#[inline]
pub(super) fn is_marked(bits: &[u64], node: u32) -> bool {
    bits[node as usize / 64] & (1 << (node % 64)) != 0
}

/// Sets `node`'s bit in `bits`.
#[inline]
pub(super) fn mark(bits: &mut [u64], node: u32) {
    bits[node as usize / 64] |= 1 << (node % 64);
}

fn unmark(bits: &mut [u64], node: u32) {
    bits[node as usize / 64] &= !(1 << (node % 64));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn children(index: &ChildIndex, node: u32) -> Vec<u32> {
        let mut listed = Vec::new();
        index.for_each(node, |child| listed.push(child));
        listed.sort_unstable();
        listed
    }

    #[test]
    fn children_follow_links_as_they_change() {
        let link = |parent| Link { parent, depth: 0 };
        // 0 <- 1, 0 <- 2, 2 <- 3, 4 alone.
        let links = [link(NONE), link(0), link(0), link(2), link(NONE)];
        let mut index = ChildIndex::default();
        index.build(&links);
        assert_eq!((children(&index, 0), children(&index, 2)), (vec![1, 2], vec![3]));
        assert!(!index.may_have_children(4));
        index.cover(6);
        index.unlink(1, 0);
        index.link(1, 4);
        index.link(5, 4);
        index.unlink(3, 2);
        index.link(3, 0);
        assert_eq!((children(&index, 0), children(&index, 4)), (vec![2, 3], vec![1, 5]));
        assert!(children(&index, 2).is_empty());
        index.unlink(5, 4);
        index.unlink(1, 4);
        index.link(1, 0);
        assert_eq!((children(&index, 0), children(&index, 4)), (vec![1, 2, 3], vec![]));
    }
}
