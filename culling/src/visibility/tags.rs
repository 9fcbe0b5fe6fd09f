//! The `Culled` and `Occluded` tags, changed only on transitions and applied in one batch of
//! direct world calls right after the cull.
//!
//! A drawable object the cull rejected carries [`Culled`]; one the occlusion step hid carries
//! [`Occluded`] instead (it is in view); every other object carries neither. The pass
//! records which objects' entities carried each tag this frame (their archetype has it), so
//! finding the changes is one word operation per 64 objects: `want ^ tagged`. Only changed
//! entities are touched, so a still camera makes no structural change.
//!
//! **Why not one command per entity.** The cull runs as a shared system (`&World`), so it
//! could only queue per-entity commands: a recorded `insert_one` is a type-erased bundle
//! that looks its target archetype up afresh and allocates on apply, and a pair costs about
//! twice a direct call (see the `visibility_tags` benchmark group). Instead the cull writes
//! the changes into lists kept in the [`Visibility`] resource, and
//! [`visibility_tags_system`], an exclusive-world system that runs right after it in the same
//! stage, applies them with `World::insert_one` / `remove_one`, and `exchange_one` for an
//! entity trading one tag for the other (cached archetype edges, no allocation once the lists
//! have their capacity).
//!
//! **Which entities** ([`VisibilityTags`]): under the default policy every drawable mesh
//! entity; under `Marked` only those carrying [`VisibilityTagged`], found each frame by a
//! query over the marked archetypes alone (cost in marked entities, not in objects) and
//! turned into a word mask over the slots. `tagged` and `occluded_tag` always record the
//! tags entities really carry, so the unmarked entities' tags are removed by the same
//! `want ^ tagged` step when the policy or a marker changes, and a switch back to `All` tags
//! every entity on the next cull. Reading the marked set is one id lookup per marked entity
//! each frame (finding and recording took 57 µs with 1,000 of 100k marked in the
//! `visibility_turning` bench, against 125 µs for every entity plus hundreds of nanoseconds
//! per archetype move, thousands a frame, under `All`).

use std::any::TypeId;

use ecs::{Culled, Mesh, Occluded, VisibilityTagged, VisibilityTags};
use runtime::hecs::{Entity, World};
use runtime::System;

use super::result::Visibility;
use crate::bits::BITS_PER_WORD;

/// Name of the system [`visibility_tags_system`] returns.
pub const VISIBILITY_TAGS_SYSTEM: &str = "culling::visibility tags";

/// Tag changes found by the cull, waiting for [`visibility_tags_system`]. Lists keep their
/// capacity across frames.
///
/// An entity trading one tag for the other is listed once, in `occluded_to_culled` or
/// `culled_to_occluded`, and moves archetype once (`World::exchange_one`) instead of twice:
/// the common change of a moving camera, an occluded object leaving the view (309 of the 313
/// `Culled` insertions a frame in the 1M bench city's street).
#[derive(Clone, Debug, Default)]
pub(crate) struct TagChanges {
    insert_culled: Vec<Entity>,
    remove_culled: Vec<Entity>,
    insert_occluded: Vec<Entity>,
    remove_occluded: Vec<Entity>,
    occluded_to_culled: Vec<Entity>,
    culled_to_occluded: Vec<Entity>,
}

impl TagChanges {
    /// [insertions, removals, trades] of both tags; a trade counts as one of each as well.
    pub(crate) fn counts(&self) -> [usize; 3] {
        let traded = self.occluded_to_culled.len() + self.culled_to_occluded.len();
        [
            self.insert_culled.len() + self.insert_occluded.len() + traded,
            self.remove_culled.len() + self.remove_occluded.len() + traded,
            traded,
        ]
    }

    pub(crate) fn clear(&mut self) {
        self.insert_culled.clear();
        self.remove_culled.clear();
        self.insert_occluded.clear();
        self.remove_occluded.clear();
        self.occluded_to_culled.clear();
        self.culled_to_occluded.clear();
    }
}

/// Finds this frame's tag changes of both tags and stores them in `visibility` for
/// [`visibility_tags_system`]; returns [inserted, removed, traded] (see [`TagChanges::counts`]).
///
/// The pass recorded which objects' entities carried each tag this frame; `policy` says
/// which entities are to carry them (`world` is read for the marked ones).
pub(crate) fn record_tag_changes(visibility: &mut Visibility, world: &World, policy: VisibilityTags) -> [usize; 3] {
    runtime::profile_zone!("visibility tags");
    let mut changes = std::mem::take(&mut visibility.tag_changes);
    changes.clear();
    let marked_only = policy == VisibilityTags::Marked;
    if marked_only {
        let marked = mark_tagged_slots(visibility, world);
        // Nothing marked and no tag left to remove: no change, and the tag columns stay
        // clear, so the words need not be visited (the city's case: a million objects, none
        // of them tagged).
        if marked == 0 && all_clear(&visibility.tagged) && all_clear(&visibility.occluded_tag) {
            visibility.tag_changes = changes;
            return [0; 3];
        }
    }
    let words = visibility.bits.words().len();
    for block in (0..words).step_by(SCAN_BLOCK) {
        let block = block..(block + SCAN_BLOCK).min(words);
        let mut differ = [0u64; SCAN_BLOCK];
        if !block_changes(visibility, block.clone(), marked_only, &mut differ) {
            continue;
        }
        // The changed objects' entities are scattered reads: all asked for before the first.
        for (offset, &bits) in differ[..block.len()].iter().enumerate() {
            prefetch_entities(visibility, block.start + offset, bits);
        }
        for word_index in block {
            record_word_changes(visibility, &mut changes, word_index, marked_only);
        }
    }
    let counts = changes.counts();
    visibility.tag_changes = changes;
    counts
}

/// Words whose tag changes are looked for together: a block in which no object's wanted tags
/// differ from those it carries is skipped after one branch-free pass over its columns.
const SCAN_BLOCK: usize = 16;

/// Whether some object of the words `block` wants other tags than it carries (the test
/// `record_word_changes` makes per object, OR-folded over the block without a branch, so it
/// vectorizes). A camera moving through a city changes a few hundred objects' tags a frame in
/// a million: most blocks have none.
#[inline]
fn block_changes(
    visibility: &Visibility,
    block: std::ops::Range<usize>,
    marked_only: bool,
    differ: &mut [u64; SCAN_BLOCK],
) -> bool {
    let visible = &visibility.bits.words()[block.clone()];
    let drawable = &visibility.drawable[block.clone()];
    let (tagged, occluded_tag) = (&visibility.tagged[block.clone()], &visibility.occluded_tag[block.clone()]);
    // Without occlusion this frame the column is empty: nothing is occluded (words past its
    // end read as 0, as in `record_word_changes`).
    let mut occluded = [0u64; SCAN_BLOCK];
    if let Some(words) = visibility.occluded.get(block.start..block.end.min(visibility.occluded.len())) {
        occluded[..words.len()].copy_from_slice(words);
    }
    let all = [u64::MAX; SCAN_BLOCK];
    let covered = if marked_only { &visibility.tag_marked[block.clone()] } else { &all[..block.len()] };
    let mut any = 0;
    for index in 0..block.len() {
        let (want_culled, occluded) = wanted_tags(drawable[index], visible[index], occluded[index], covered[index]);
        differ[index] = (want_culled ^ tagged[index]) | (occluded ^ occluded_tag[index]);
        any |= differ[index];
    }
    any != 0
}

/// Asks for the entities of the objects `members` of word `word_index` (a hint).
#[inline]
fn prefetch_entities(visibility: &Visibility, word_index: usize, mut members: u64) {
    while members != 0 {
        let slot = word_index * BITS_PER_WORD + members.trailing_zeros() as usize;
        members &= members - 1;
        super::cull::prefetch_entry(visibility.objects.entities.as_ptr(), slot);
    }
}

/// Records the tag changes of word `word_index` in `changes` and sets the word's tag columns
/// to what the tags will be once they are applied.
fn record_word_changes(visibility: &mut Visibility, changes: &mut TagChanges, word_index: usize, marked_only: bool) {
    let covered = if marked_only { visibility.tag_marked[word_index] } else { u64::MAX };
    let (want_culled, occluded) = wanted_tags(
        visibility.drawable[word_index],
        visibility.bits.words()[word_index],
        visibility.occluded.get(word_index).copied().unwrap_or(0),
        covered,
    );
    let (culled_now, occluded_now) = (visibility.tagged[word_index], visibility.occluded_tag[word_index]);
    // Objects that carry exactly one tag and want exactly the other trade it in one move.
    let one_tag = culled_now ^ occluded_now;
    let to_culled = one_tag & occluded_now & want_culled & !occluded;
    let to_occluded = one_tag & culled_now & occluded & !want_culled;
    push_entities(visibility, word_index, to_culled, &mut changes.occluded_to_culled);
    push_entities(visibility, word_index, to_occluded, &mut changes.culled_to_occluded);
    let others = !(to_culled | to_occluded);
    let (want, now) = (want_culled & others, culled_now & others);
    push_changes(visibility, word_index, want, now, |entity, insert| {
        if insert { &mut changes.insert_culled } else { &mut changes.remove_culled }.push(entity);
    });
    let (want, now) = (occluded & others, occluded_now & others);
    push_changes(visibility, word_index, want, now, |entity, insert| {
        if insert { &mut changes.insert_occluded } else { &mut changes.remove_occluded }.push(entity);
    });
    // What the tags will be once `visibility_tags_system` applied the changes: a tracked
    // frame (see `tracked.rs`) starts from these instead of reading archetypes.
    visibility.tagged[word_index] = want_culled;
    visibility.occluded_tag[word_index] = occluded;
}

/// The tags a word's objects are to carry, as (`Culled`, `Occluded`) bits, from its drawable,
/// visible and occluded bits and those of the objects the policy covers.
#[inline(always)]
fn wanted_tags(drawable: u64, visible: u64, occluded: u64, covered: u64) -> (u64, u64) {
    let occluded = occluded & covered;
    // An occluded object is in view, so it carries `Occluded`, not `Culled`.
    (drawable & !visible & !occluded & covered, occluded)
}

/// Whether every word of `words` is zero.
fn all_clear(words: &[u64]) -> bool {
    // OR-folded in blocks, which vectorizes, rather than stopping at the first set word.
    words.chunks(64).all(|block| block.iter().fold(0, |any, &word| any | word) == 0)
}

/// Sets `visibility.tag_marked` to the slots of the mesh entities carrying
/// [`VisibilityTagged`] (sized to the slot words; no allocation within its capacity), and
/// returns how many there are.
fn mark_tagged_slots(visibility: &mut Visibility, world: &World) -> usize {
    let words = visibility.bits.words().len();
    let Visibility { tag_marked, slots, .. } = visibility;
    tag_marked.clear();
    tag_marked.resize(words, 0);
    let mut marked = 0;
    for entity in world.query::<Entity>().with::<(&Mesh, &VisibilityTagged)>().iter() {
        // Every live mesh entity owns a slot after this frame's pass; the check only guards
        // against a slot past the words.
        if let Some(slot) = slots.slot_of(entity).map(|slot| slot as usize).filter(|&slot| slot < words * BITS_PER_WORD)
        {
            tag_marked[slot / BITS_PER_WORD] |= 1 << (slot % BITS_PER_WORD);
            marked += 1;
        }
    }
    marked
}

/// Records the removal of every `Culled` and `Occluded` tag in `world`, for a frame without a
/// view: with no cull to back them, tags would describe an old view, so every object counts
/// as visible (as before its first cull). Returns how many removals were recorded.
pub(crate) fn record_tags_cleared(visibility: &mut Visibility, world: &World) -> usize {
    let changes = &mut visibility.tag_changes;
    changes.clear();
    changes.remove_culled.extend(world.query::<Entity>().with::<&Culled>().iter());
    changes.remove_occluded.extend(world.query::<Entity>().with::<&Occluded>().iter());
    changes.counts()[1]
}

/// Appends the entities of the objects `members` of word `word_index` to `out`.
fn push_entities(visibility: &Visibility, word_index: usize, mut members: u64, out: &mut Vec<Entity>) {
    while members != 0 {
        out.push(visibility.objects.entities[word_index * BITS_PER_WORD + members.trailing_zeros() as usize]);
        members &= members - 1;
    }
}

/// Calls `change(entity, insert)` for each object of word `word_index` whose tag state
/// `tagged` differs from `want`.
fn push_changes(
    visibility: &Visibility,
    word_index: usize,
    want: u64,
    tagged: u64,
    mut change: impl FnMut(Entity, bool),
) {
    let mut changed = want ^ tagged;
    while changed != 0 {
        let offset = changed.trailing_zeros() as usize;
        changed &= changed - 1;
        change(visibility.objects.entities[word_index * BITS_PER_WORD + offset], want >> offset & 1 == 1);
    }
}

/// The exclusive-world system that applies the tag changes the Visibility system found, with
/// direct world calls, right after it in [`Stage::Visibility`](runtime::Stage). Installed by
/// [`install`](crate::install); it records how long the moves took in
/// [`VisibilityStats::tag_apply_seconds`](crate::VisibilityStats).
pub fn visibility_tags_system() -> System {
    System::new_exclusive(VISIBILITY_TAGS_SYSTEM, |ctx| {
        runtime::profile_zone!("visibility tag apply");
        let Some(mut visibility) = ctx.try_resource_mut::<Visibility>() else {
            return;
        };
        let started = std::time::Instant::now();
        let changes = &visibility.tag_changes;
        // An entity despawned since the cull has nothing to tag, and a tag someone else
        // removed is already gone: both results are ignored on purpose.
        for &entity in &changes.insert_culled {
            let _ = ctx.world.insert_one(entity, Culled);
        }
        for &entity in &changes.remove_culled {
            let _ = ctx.world.remove_one::<Culled>(entity);
        }
        for &entity in &changes.insert_occluded {
            let _ = ctx.world.insert_one(entity, Occluded);
        }
        for &entity in &changes.remove_occluded {
            let _ = ctx.world.remove_one::<Occluded>(entity);
        }
        // A trade whose old tag someone else removed meanwhile still gives the new one.
        for &entity in &changes.occluded_to_culled {
            if ctx.world.exchange_one::<Occluded, _>(entity, Culled).is_err() {
                let _ = ctx.world.insert_one(entity, Culled);
            }
        }
        for &entity in &changes.culled_to_occluded {
            if ctx.world.exchange_one::<Culled, _>(entity, Occluded).is_err() {
                let _ = ctx.world.insert_one(entity, Occluded);
            }
        }
        // Tag moves change no component value: they are logged as writes of the tag types,
        // which the caches over objects do not watch.
        let log = ctx.changes();
        let traded = || changes.occluded_to_culled.iter().chain(&changes.culled_to_occluded);
        log.record_entity_writes(
            TypeId::of::<Culled>(),
            changes.insert_culled.iter().chain(&changes.remove_culled).chain(traded()),
        );
        log.record_entity_writes(
            TypeId::of::<Occluded>(),
            changes.insert_occluded.iter().chain(&changes.remove_occluded).chain(traded()),
        );
        visibility.tag_changes.clear();
        visibility.stats.tag_apply_seconds = started.elapsed().as_secs_f64();
    })
    .reports_own_changes()
}
