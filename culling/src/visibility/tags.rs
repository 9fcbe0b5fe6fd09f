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
//! the changes into lists kept in a resource of their own ([`TagChanges`]), and
//! [`visibility_tags_system`], an exclusive-world system that runs right after it in the same
//! stage, applies them with `World::insert_one` / `remove_one`, and `exchange_one` for an
//! entity trading one tag for the other (cached archetype edges, no allocation once the lists
//! have their capacity).
//!
//! **Where the time goes.** The search runs beside the gather of the `visible` and `scene`
//! lists (the system joins the two over disjoint borrows of the resource, [`TagColumns`]).
//! A move is a handful of cache misses on entities scattered over the world: its location,
//! its rows, the row moved into its place. So before the first move the system reads every
//! moving entity's location in a pass of its own (independent loads, many misses in flight)
//! and then asks for their matrix and mesh rows (1M bench city, a few hundred moves a frame:
//! 0.16-0.17 -> 0.11-0.12 ms). Past a few thousand moves the warmed lines would be evicted
//! before their move, so the moves go in row order instead, one descending sweep per
//! archetype. Even so a hecs move costs a few hundred nanoseconds a move when its rows are
//! scattered (340 ns a move in the 1M city with `--tags all`, which flips 60k tags a frame on
//! average over its rooftop stretch) and about 140 ns when they are consecutive (a
//! five-column archetype of 1M entities emptied from its end): a camera that changes 100k
//! objects' tags in a frame pays tens of milliseconds for the moves alone. A game that wants
//! the tags on few entities marks them ([`VisibilityTags::Marked`]).
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

use ecs::{Culled, Mesh, Occluded, VisibilityTagged, VisibilityTags, WorldTransform};
use runtime::hecs::{Entity, World};
use runtime::{ResMut, System};

use super::answer::Visibility;
use super::reads::CullColumns;
use super::slots::SlotIndex;
use crate::bits::BITS_PER_WORD;
use crate::prefetch::prefetch_entry;

/// Name of the system [`visibility_tags_system`] returns.
pub const VISIBILITY_TAGS_SYSTEM: &str = "culling::visibility tags";

/// Tag changes found by the cull, waiting for [`visibility_tags_system`]: a resource of its
/// own, the hand-over between the two systems ([`install`](crate::install) adds it). Lists
/// keep their capacity across frames.
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
    /// Scratch of [`TagChanges::order_by_rows`]: a list's entities by their rows' addresses.
    by_row: Vec<(usize, Entity)>,
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

    /// How many entities the lists hold (an entity is in at most one of them).
    fn len(&self) -> usize {
        self.insert_culled.len()
            + self.remove_culled.len()
            + self.insert_occluded.len()
            + self.remove_occluded.len()
            + self.occluded_to_culled.len()
            + self.culled_to_occluded.len()
    }

    /// Every entity of every list (an entity is in at most one of them).
    fn entities(&self) -> impl Iterator<Item = &Entity> {
        [
            &self.insert_culled,
            &self.remove_culled,
            &self.insert_occluded,
            &self.remove_occluded,
            &self.occluded_to_culled,
            &self.culled_to_occluded,
        ]
        .into_iter()
        .flatten()
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

/// The columns that finding the tag changes reads (of the [`Visibility`] answer) and writes
/// (the stage's tag columns), borrowed apart from the rest, so that the lists the gather
/// writes are built at the same time (`jobs::join` in the system).
pub(crate) struct TagColumns<'a> {
    /// The objects still visible after occlusion, a bit per slot.
    pub visible: &'a [u64],
    pub drawable: &'a [u64],
    /// This frame's occluded objects (empty without occlusion).
    pub occluded: &'a [u64],
    pub entities: &'a [Entity],
    pub index: &'a SlotIndex,
    /// The tags the entities carry, updated to what they will carry.
    pub tagged: &'a mut [u64],
    pub occluded_tag: &'a mut [u64],
    /// Scratch: the slots of the marked entities (under `Marked`).
    pub tag_marked: &'a mut Vec<u64>,
    pub changes: &'a mut TagChanges,
}

/// Finds this frame's tag changes of both tags and stores them in `columns.changes` for
/// [`visibility_tags_system`]; returns [inserted, removed, traded] (see [`TagChanges::counts`]).
///
/// The pass recorded which objects' entities carried each tag this frame; `policy` says
/// which entities are to carry them (`world` is read for the marked ones).
pub(crate) fn record_tag_changes(
    columns: TagColumns<'_>,
    world: &CullColumns<'_>,
    policy: VisibilityTags,
) -> [usize; 3] {
    runtime::profile_zone!("visibility tags");
    let TagColumns { visible, drawable, occluded, entities, index, tagged, occluded_tag, tag_marked, changes } =
        columns;
    changes.clear();
    let marked_only = policy == VisibilityTags::Marked;
    if marked_only {
        let marked = mark_tagged_slots(tag_marked, index, visible.len(), world);
        // Nothing marked and no tag left to remove: no change, and the tag columns stay
        // clear, so the words need not be visited (the city's case: a million objects, none
        // of them tagged).
        if marked == 0 && all_clear(tagged) && all_clear(occluded_tag) {
            return [0; 3];
        }
    }
    let all = [u64::MAX; SCAN_BLOCK];
    let words = visible.len();
    for block in (0..words).step_by(SCAN_BLOCK) {
        let block = block..(block + SCAN_BLOCK).min(words);
        let covered = if marked_only { &tag_marked[block.clone()] } else { &all[..block.len()] };
        let words = WordTags {
            visible: &visible[block.clone()],
            drawable: &drawable[block.clone()],
            // Without occlusion this frame the column is empty: nothing is occluded.
            occluded: occluded.get(block.start..block.end.min(occluded.len())).unwrap_or(&[]),
            covered,
        };
        let (tagged, occluded_tag) = (&mut tagged[block.clone()], &mut occluded_tag[block.clone()]);
        let mut differ = [0u64; SCAN_BLOCK];
        if !block_changes(&words, tagged, occluded_tag, &mut differ) {
            continue;
        }
        // The changed objects' entities are scattered reads: all asked for before the first.
        for (offset, &bits) in differ[..block.len()].iter().enumerate() {
            prefetch_entities(entities, block.start + offset, bits);
        }
        for offset in 0..block.len() {
            let (want_culled, occluded) = words.wanted(offset);
            let now = (tagged[offset], occluded_tag[offset]);
            record_word_changes(entities, changes, block.start + offset, (want_culled, occluded), now);
            // What the tags will be once `visibility_tags_system` applied the changes: a
            // tracked frame (see `tracked/`) starts from these instead of reading archetypes.
            tagged[offset] = want_culled;
            occluded_tag[offset] = occluded;
        }
    }
    changes.counts()
}

/// Words whose tag changes are looked for together: a block in which no object's wanted tags
/// differ from those it carries is skipped after one branch-free pass over its columns.
const SCAN_BLOCK: usize = 16;

/// The columns of one block of words that say which tags its objects are to carry.
struct WordTags<'a> {
    visible: &'a [u64],
    drawable: &'a [u64],
    /// Shorter than the block (even empty) where the occluded column ends: 0 past its end.
    occluded: &'a [u64],
    /// The objects the policy covers.
    covered: &'a [u64],
}

impl WordTags<'_> {
    /// The tags the objects of word `offset` of the block are to carry, as (`Culled`,
    /// `Occluded`) bits.
    #[inline(always)]
    fn wanted(&self, offset: usize) -> (u64, u64) {
        let occluded = self.occluded.get(offset).copied().unwrap_or(0);
        wanted_tags(self.drawable[offset], self.visible[offset], occluded, self.covered[offset])
    }
}

/// Whether some object of the block `words` wants other tags than it carries (the test the
/// record makes per object, OR-folded over the block without a branch, so it vectorizes),
/// with the differing objects per word in `differ`. A camera moving through a city changes a
/// few hundred objects' tags a frame in a million: most blocks have none.
#[inline]
fn block_changes(words: &WordTags<'_>, tagged: &[u64], occluded_tag: &[u64], differ: &mut [u64; SCAN_BLOCK]) -> bool {
    let mut occluded = [0u64; SCAN_BLOCK];
    occluded[..words.occluded.len()].copy_from_slice(words.occluded);
    let mut any = 0;
    for index in 0..words.visible.len() {
        let (want_culled, occluded) =
            wanted_tags(words.drawable[index], words.visible[index], occluded[index], words.covered[index]);
        differ[index] = (want_culled ^ tagged[index]) | (occluded ^ occluded_tag[index]);
        any |= differ[index];
    }
    any != 0
}

/// Asks for the entities of the objects `members` of word `word_index` (a hint).
#[inline]
fn prefetch_entities(entities: &[Entity], word_index: usize, mut members: u64) {
    while members != 0 {
        let slot = word_index * BITS_PER_WORD + members.trailing_zeros() as usize;
        members &= members - 1;
        prefetch_entry(entities.as_ptr(), slot);
    }
}

/// Records in `changes` the tag changes of word `word_index`, whose objects are to carry the
/// tags `want` and carry `now` (both as (`Culled`, `Occluded`) bits).
fn record_word_changes(
    entities: &[Entity],
    changes: &mut TagChanges,
    word_index: usize,
    (want_culled, occluded): (u64, u64),
    (culled_now, occluded_now): (u64, u64),
) {
    // Objects that carry exactly one tag and want exactly the other trade it in one move.
    let one_tag = culled_now ^ occluded_now;
    let to_culled = one_tag & occluded_now & want_culled & !occluded;
    let to_occluded = one_tag & culled_now & occluded & !want_culled;
    let word_entities = &entities[word_index * BITS_PER_WORD..];
    push_entities(word_entities, to_culled, &mut changes.occluded_to_culled);
    push_entities(word_entities, to_occluded, &mut changes.culled_to_occluded);
    let others = !(to_culled | to_occluded);
    let (want, now) = (want_culled & others, culled_now & others);
    push_changes(word_entities, want, now, |entity, insert| {
        if insert { &mut changes.insert_culled } else { &mut changes.remove_culled }.push(entity);
    });
    let (want, now) = (occluded & others, occluded_now & others);
    push_changes(word_entities, want, now, |entity, insert| {
        if insert { &mut changes.insert_occluded } else { &mut changes.remove_occluded }.push(entity);
    });
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

/// Sets `tag_marked` to the slots (of `words` slot words) of the mesh entities carrying
/// [`VisibilityTagged`] (no allocation within its capacity), and returns how many there are.
fn mark_tagged_slots(tag_marked: &mut Vec<u64>, index: &SlotIndex, words: usize, world: &CullColumns<'_>) -> usize {
    tag_marked.clear();
    tag_marked.resize(words, 0);
    let mut marked = 0;
    for entity in world.query::<Entity>().with::<(&Mesh, &VisibilityTagged)>().iter() {
        // Every live mesh entity owns a slot after this frame's pass; the check only guards
        // against a slot past the words.
        if let Some(slot) = index.slot_of(entity).map(|slot| slot as usize).filter(|&slot| slot < words * BITS_PER_WORD)
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
pub(crate) fn record_tags_cleared(changes: &mut TagChanges, world: &CullColumns<'_>) -> usize {
    changes.clear();
    changes.remove_culled.extend(world.query::<Entity>().with::<&Culled>().iter());
    changes.remove_occluded.extend(world.query::<Entity>().with::<&Occluded>().iter());
    changes.counts()[1]
}

/// Appends the entities of the objects `members` of a word to `out` (`entities` from the
/// word's first slot on).
fn push_entities(entities: &[Entity], mut members: u64, out: &mut Vec<Entity>) {
    while members != 0 {
        out.push(entities[members.trailing_zeros() as usize]);
        members &= members - 1;
    }
}

/// Calls `change(entity, insert)` for each object of a word (`entities` from its first slot
/// on) whose tag state `tagged` differs from `want`.
fn push_changes(entities: &[Entity], want: u64, tagged: u64, mut change: impl FnMut(Entity, bool)) {
    let mut changed = want ^ tagged;
    while changed != 0 {
        let offset = changed.trailing_zeros() as usize;
        changed &= changed - 1;
        change(entities[offset], want >> offset & 1 == 1);
    }
}

/// Asks for the cache lines a move reads first, for every entity to move: its location and
/// the rows of the columns every drawable entity has (its world matrix and mesh). The
/// entities are scattered over the world, and one move at a time would wait on each miss in
/// turn. The locations are read in a pass of their own (independent loads, so the processor
/// keeps many misses in flight), then the rows are asked for from the locations now cached.
fn warm_rows(world: &World, changes: &TagChanges) {
    let mut live = 0usize;
    for &entity in changes.entities() {
        live += usize::from(world.contains(entity));
    }
    std::hint::black_box(live);
    for &entity in changes.entities() {
        // SAFETY: only addresses are taken (for a prefetch hint); nothing is read through
        // them, and the caller holds the world exclusively.
        if let Ok(matrix) = unsafe { world.get_unchecked::<&WorldTransform>(entity) } {
            prefetch_entry(matrix as *const WorldTransform, 0);
        }
        // SAFETY: as above.
        if let Ok(mesh) = unsafe { world.get_unchecked::<&Mesh>(entity) } {
            prefetch_entry(mesh as *const Mesh, 0);
        }
    }
}

/// From how many changes a frame the moves go in row order ([`TagChanges::order_by_rows`])
/// instead of being warmed ([`warm_rows`]): past about this many, the rows warmed for the
/// first moves (two cache lines each, half a megabyte here) are evicted before their move.
pub(crate) const ORDER_BY_ROWS_FROM: usize = 4096;

impl TagChanges {
    /// Orders each list by where its entities' rows lie, last row first, so that the moves
    /// of a frame with many changes read each archetype's columns in one descending sweep
    /// instead of at random (1M city with `--tags all`, frames of 60k moves on average:
    /// 395 -> 340 ns a move). The address of an entity's [`WorldTransform`] stands for its
    /// archetype and row, as every drawable entity has one. The order found before the first
    /// move holds for all of them: a move appends to its target archetype, which leaves the
    /// rows there in place (a growth moves them all together), and fills the row it empties
    /// from its source's last row, where no entity still to move lies (they lie below the
    /// row the sweep is at). No allocation within the scratch's capacity.
    fn order_by_rows(&mut self, world: &World) {
        let Self {
            insert_culled,
            remove_culled,
            insert_occluded,
            remove_occluded,
            occluded_to_culled,
            culled_to_occluded,
            by_row,
        } = self;
        for list in
            [insert_culled, remove_culled, insert_occluded, remove_occluded, occluded_to_culled, culled_to_occluded]
        {
            by_row.clear();
            by_row.extend(list.iter().map(|&entity| {
                // SAFETY: only the address is taken, nothing is read through it, and the
                // caller holds the world exclusively. An entity gone or without a matrix
                // sorts last: its move fails or costs what it costs, in any order.
                let row = unsafe { world.get_unchecked::<&WorldTransform>(entity) }
                    .map_or(0, |matrix| matrix as *const WorldTransform as usize);
                (row, entity)
            }));
            by_row.sort_unstable_by_key(|&(row, _)| std::cmp::Reverse(row));
            for (entity, &(_, ordered)) in list.iter_mut().zip(by_row.iter()) {
                *entity = ordered;
            }
        }
    }
}

/// The exclusive-world system that applies the tag changes the Visibility system found, with
/// direct world calls, right after it in [`Stage::Visibility`](runtime::Stage). Installed by
/// [`install`](crate::install); it records how long the moves took in
/// [`VisibilityStats::tag_apply_seconds`](crate::VisibilityStats).
pub fn visibility_tags_system() -> System {
    type Params = (Option<ResMut<'static, TagChanges>>, Option<ResMut<'static, Visibility>>);
    System::exclusive_with_params::<Params>(VISIBILITY_TAGS_SYSTEM, |ctx, params| {
        runtime::profile_zone!("visibility tag apply");
        let (Some(mut changes), Some(mut visibility)) = params else {
            return;
        };
        let started = std::time::Instant::now();
        let changes = &mut *changes;
        if changes.len() > ORDER_BY_ROWS_FROM {
            changes.order_by_rows(ctx.world);
        } else {
            warm_rows(ctx.world, changes);
        }
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
        changes.clear();
        visibility.stats.tag_apply_seconds = started.elapsed().as_secs_f64();
    })
    .reports_own_changes()
}
