//! Where the source scope of a resource's first barrier in a frame comes from: the previous
//! occupant of aliased memory, last frame's use of the same memory, the history copy, or an
//! imported resource's tracked state.

use super::alias::AliasPlan;
use crate::compile::{CompiledGraph, GraphDecl, Origin, Residency, SyncState};

/// Where the source scope of a resource's first barrier in a frame comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EntrySource {
    /// The previous occupant of aliased memory, earlier in the same frame.
    SameFrame(SyncState),
    /// The last use of the same memory in the previous frame (none in the first frame).
    PreviousFrame(SyncState),
    /// Last frame's version of a double-buffered resource: keeps its contents.
    HistoryPrevious(SyncState),
    /// An imported resource: its tracked state.
    Imported,
}

/// Decides where each resource's entry barrier takes its source from.
pub(super) fn entry_sources(
    decl: &GraphDecl,
    graph: &CompiledGraph,
    alias: &AliasPlan,
    alias_resources: &[u32],
) -> Vec<EntrySource> {
    let final_state = |resource: usize| graph.barriers.final_state[resource].unwrap_or(SyncState::NONE);
    let mut entry: Vec<EntrySource> = (0..decl.resource_count())
        .map(|resource| match (graph.resources[resource].residency, decl.resources[resource].origin) {
            (Residency::Imported, _) => EntrySource::Imported,
            (Residency::HistoryPrevious, Origin::History { of }) => {
                EntrySource::HistoryPrevious(final_state(of as usize))
            }
            _ => EntrySource::PreviousFrame(SyncState::NONE),
        })
        .collect();
    // A double-buffered resource's current copy was last frame's previous copy.
    for (index, declared) in decl.resources.iter().enumerate() {
        if let (Origin::History { of }, Residency::HistoryPrevious) =
            (declared.origin, graph.resources[index].residency)
        {
            entry[of as usize] = EntrySource::PreviousFrame(final_state(index));
        }
    }
    // Aliased memory: each occupant waits for every occupant before it (a smaller one in
    // between covers only part of the memory, so the earlier ones' last accesses to the rest
    // must be waited for too); the first waits for every occupant of the previous frame.
    for block in &alias.blocks {
        let occupants: Vec<usize> = block.occupants.iter().map(|&item| alias_resources[item] as usize).collect();
        let mut before = SyncState::NONE;
        let all = occupants.iter().fold(SyncState::NONE, |union, &resource| joined(union, final_state(resource)));
        for (position, &resource) in occupants.iter().enumerate() {
            entry[resource] = if position == 0 {
                let last = final_state(*occupants.last().expect("a block has an occupant"));
                EntrySource::PreviousFrame(SyncState { layout: last.layout, ..all })
            } else {
                before = joined(before, final_state(occupants[position - 1]));
                EntrySource::SameFrame(SyncState { layout: final_state(occupants[position - 1]).layout, ..before })
            };
        }
    }
    entry
}

/// The stages and accesses of `a` and `b` together (the layout `b`'s).
fn joined(a: SyncState, b: SyncState) -> SyncState {
    SyncState { stages: a.stages | b.stages, access: a.access | b.access, layout: b.layout }
}
