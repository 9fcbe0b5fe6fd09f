//! The mesh archetypes of a frame in storage order: the runs of objects the stage's passes
//! walk, and the job size they are split by.

use crate::bits::BITS_PER_WORD;
use crate::visibility::reads::CullColumns;
use ecs::Mesh;

/// Objects per job: whole words, large enough that a job's work dwarfs handing it out.
pub(crate) const GRAIN: usize = 16 * BITS_PER_WORD;

/// A run of objects that live in one archetype: objects `start .. start + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    /// Position of the archetype in `World::archetypes()`.
    pub archetype: usize,
    /// Index of the archetype's first object.
    pub start: usize,
    /// Objects in the archetype.
    pub len: usize,
}

/// Fills `segments` with the archetypes holding a [`Mesh`], in query order; returns the
/// object count.
pub(crate) fn list_segments(world: &CullColumns<'_>, segments: &mut Vec<Segment>) -> usize {
    segments.clear();
    let mut start = 0;
    for (position, archetype) in world.archetypes().enumerate() {
        let len = archetype.len() as usize;
        if len == 0 || !archetype.has::<Mesh>() {
            continue;
        }
        segments.push(Segment { archetype: position, start, len });
        start += len;
    }
    start
}
