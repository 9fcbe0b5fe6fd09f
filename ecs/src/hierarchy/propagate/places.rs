//! Where each node's row was last seen, so an incremental pass stores a matrix straight into
//! its `WorldTransform` column.
//!
//! A node is a persistent slot; its row is not: a despawn or an archetype move elsewhere in
//! its archetype (hecs fills the hole with the last row), a tag added by the Visibility stage,
//! all move rows without naming every entity they move. So a place is a hint, checked
//! against the archetype's entity ids (noted once per pass, [`RunIds`]) while the node's
//! matrix is computed. A node found elsewhere (a *stray*) is stored through its entity, and
//! its new place is found from the address of its `WorldTransform` among the columns'
//! address ranges.

use super::{is_node_archetype, ArchetypeRun, HierarchyColumns, NONE};
use crate::transform::WorldTransform;

/// The run and row where a node's `WorldTransform` was last seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Place {
    /// Index into [`Places::archetypes`], or [`NONE`] when not known.
    pub(super) run: u32,
    pub(super) row: u32,
}

impl Place {
    /// No place known: the node is stored through its entity.
    pub(super) const UNKNOWN: Place = Place { run: NONE, row: NONE };
}

/// The places of the nodes and the archetypes they index (see the module docs).
#[derive(Debug, Default)]
pub(super) struct Places {
    /// Per node.
    pub(super) of_node: Vec<Place>,
    /// The archetype (its position in `World::archetypes`) of each run.
    pub(super) archetypes: Vec<u32>,
    /// The run of each archetype position, or [`NONE`].
    run_of_archetype: Vec<u32>,
    /// Scratch of [`Places::locate`]: per `WorldTransform` column, its address range and the
    /// archetype's position, by address.
    columns: Vec<(usize, usize, u32)>,
    /// Per run: the entity ids of its archetype's rows, as noted by the current pass (stale
    /// after it, and noted again by the next).
    run_ids: Vec<RunIds>,
}

/// The entity ids of a run's rows, noted by a pass before it computes: a slice's address and
/// length, valid while the world it was read from is borrowed unchanged.
#[derive(Clone, Copy, Debug)]
pub(super) struct RunIds {
    first: *const u32,
    len: usize,
}

// SAFETY: only read through `RunIds::holds`, whose callers promise the archetype is unchanged
// since the ids were noted (the world is borrowed shared for the whole pass).
unsafe impl Send for RunIds {}
// SAFETY: as for `Send`: the ids are only read.
unsafe impl Sync for RunIds {}

impl RunIds {
    /// Whether row `row` holds entity id `id`.
    ///
    /// # Safety
    /// The world these ids were noted from must not have changed since.
    #[inline]
    pub(super) unsafe fn holds(&self, row: u32, id: u32) -> bool {
        // SAFETY: `row` is in bounds (checked first) of the ids slice noted from a world the
        // caller promises is unchanged, so still alive and unmoved.
        (row as usize) < self.len && unsafe { *self.first.add(row as usize) } == id
    }
}

impl Places {
    /// Places the nodes of a full pass, which are the rows of `runs` in order.
    pub(super) fn build(&mut self, runs: &[ArchetypeRun], nodes: usize) {
        self.archetypes.clear();
        self.run_of_archetype.clear();
        self.of_node.clear();
        self.of_node.reserve(nodes);
        for run in runs {
            let index = self.run_for(run.archetype as usize);
            self.of_node.extend((0..run.len).map(|row| Place { run: index, row }));
        }
        self.of_node.resize(nodes, Place::UNKNOWN);
    }

    /// The run of the archetype at `position`, added if new.
    #[inline]
    pub(super) fn run_for(&mut self, position: usize) -> u32 {
        if self.run_of_archetype.len() <= position {
            self.run_of_archetype.resize(position + 1, NONE);
        }
        if self.run_of_archetype[position] == NONE {
            self.run_of_archetype[position] = self.archetypes.len() as u32;
            self.archetypes.push(position as u32);
        }
        self.run_of_archetype[position]
    }

    /// Notes the entity ids of every run's rows for this pass (see [`Places::run_ids`]).
    pub(super) fn note_ids(&mut self, world: &HierarchyColumns<'_>) {
        self.run_ids.clear();
        for &position in &self.archetypes {
            let ids = world.archetype(position as usize).map_or(&[][..], |archetype| archetype.ids());
            self.run_ids.push(RunIds { first: ids.as_ptr(), len: ids.len() });
        }
    }

    /// The ids noted by [`Places::note_ids`], per run.
    #[inline]
    pub(super) fn run_ids(&self) -> &[RunIds] {
        &self.run_ids
    }

    /// Notes the address ranges of the node archetypes' `WorldTransform` columns, for
    /// [`Places::locate`]. The columns are borrowed only while their addresses are read.
    pub(super) fn note_columns(&mut self, world: &HierarchyColumns<'_>) {
        self.columns.clear();
        for (position, archetype) in world.archetypes().enumerate() {
            if !is_node_archetype(&archetype) {
                continue;
            }
            if let Some(column) = archetype.column::<WorldTransform>() {
                let range = column.as_ptr_range();
                self.columns.push((range.start as usize, range.end as usize, position as u32));
            }
        }
        self.columns.sort_unstable();
    }

    /// The place of the `WorldTransform` at `address`, found among the columns noted by
    /// [`Places::note_columns`] (unknown if none holds it).
    pub(super) fn locate(&mut self, address: usize) -> Place {
        let after = self.columns.partition_point(|&(start, _, _)| start <= address);
        let Some(&(start, end, position)) = after.checked_sub(1).and_then(|index| self.columns.get(index)) else {
            return Place::UNKNOWN;
        };
        if address >= end {
            return Place::UNKNOWN;
        }
        let row = ((address - start) / std::mem::size_of::<WorldTransform>()) as u32;
        Place { run: self.run_for(position as usize), row }
    }
}
