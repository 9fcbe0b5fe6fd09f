//! Tracked frames: when the change log ([`runtime::changes`]) says which objects may have
//! changed, the stage refreshes only those and culls the rest through what it kept.
//!
//! A full frame (see `cull.rs`) walks every object in storage order. A **tracked frame**
//! runs when the last frame left complete columns and the log names every change since: no
//! "everything", no spawn, despawn or lost `Mesh` among the entities it lists. Then:
//!
//! 1. **Refresh**: the archetypes whose watched components were lent mutably (a system's
//!    `&mut WorldTransform` query) go through the full pass's own per-object code
//!    (`run_range`) over their rows; single entities (`get_mut`, a command) through
//!    [`refresh_entity`], the same arithmetic reached through the entity. Their slots' flag
//!    bits are updated and their words marked dirty.
//! 2. **Cull by words of 64 slots**: a word that is clean under an unchanged view keeps last
//!    frame's answer. Otherwise its bounds (the union of its finite drawable boxes, redone
//!    when dirty) are tested against the frustum first: a word clearly outside one plane
//!    rejects all its objects at once, without reading them. The rest are tested object by
//!    object exactly as the full pass does (same kernel on the same centre and half extent,
//!    the same distance and size tests), reusing verdicts cached under this view.
//!
//! The word test keeps a margin, so it rejects only words the per-object kernel would reject
//! too: a tracked frame gives the full frame's bits. Objects with levels of detail have their
//! level picked again in every word that is decided, so draws match the full pass as well.
//! A camera that only moves (no turn, no new projection) lets a word keep its side of the
//! frustum and its levels without the work while the camera stays within the word's slack
//! (`holds.rs`).
//!
//! **What must be true.** Everything that changes an object's inputs is in the log: systems
//! get components through `SystemContext`, engine code that writes through
//! `world_unchecked` records its writes (the Transform stage does), and `App::world_mut`
//! makes the next frame a full one. Tag moves made by the tags system change no input: it
//! records them as `Culled`/`Occluded` writes, which this stage does not watch, and its
//! columns take the tags it asked for.

use std::any::TypeId;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use ecs::{Aabb, Lod, Mesh, ShadowCaster, SkinnedPose, Transform, Visible, WorldTransform};
use glam::{Mat4, Vec3, Vec3A};
use runtime::changes::{ChangeCursor, ChangedSince};
use runtime::hecs::{Entity, World};

use super::cache::{CachedBounds, Verdict};
use super::cull::{prefetch_entry, run_range, PassInputs, PassOutputs, PassTotals, Segment, SlotFlag, GRAIN};
#[cfg(test)]
use super::holds::{clearly_inside, clearly_outside};
use super::holds::{
    nearest_plane_value, FrustumHold, FrustumShape, ObjectHold, WordLodHold, WordObjectHolds, WordSide, ROUNDING,
};
use super::result::{ObjectDraw, Visibility, EMPTY_BOX};
use crate::bits::{words_for, BITS_PER_WORD};
#[cfg(test)]
use crate::frustum::Frustum;
use crate::occlusion::stage::WordGroups;
use crate::occlusion::OccluderMeshes;
use crate::soa::AabbBlock;

/// Above this many single objects to refresh, the archetypes holding them are refreshed
/// whole instead (a lookup through the entity costs several archetype rows).
const ENTITY_REFRESH_LIMIT: usize = 2048;

/// Words per group of the occlusion step's first level (4096 slots).
pub(crate) const GROUP_WORDS: usize = 64;

/// Words per job of the word pass (16k slots).
const WORD_GRAIN: usize = 256;

/// The component types whose writes change what the stage computes for an object.
pub(crate) fn watched_types() -> [TypeId; 7] {
    [
        TypeId::of::<WorldTransform>(),
        TypeId::of::<Transform>(),
        TypeId::of::<Mesh>(),
        TypeId::of::<Visible>(),
        TypeId::of::<SkinnedPose>(),
        TypeId::of::<Lod>(),
        TypeId::of::<ShadowCaster>(),
    ]
}

/// What one word of 64 slots kept from the frame that last decided it.
#[derive(Clone, Copy, Debug)]
struct WordState {
    /// The bits of objects that passed frustum, distance and size (before occlusion).
    culled: u64,
    /// The view epoch `culled` and `rejects` were decided under (0: never).
    epoch: u32,
    /// Objects rejected by the frustum, the distance and the screen size.
    rejects: [u8; 3],
    /// A slot of the word was refreshed since: bounds and answer must be redone.
    dirty: bool,
    /// The slots refreshed since the word was decided.
    refreshed: u64,
    /// Refreshed slots whose verdict under this frame's view the refresh already found
    /// (`run_range` decides as it refreshes), and of those the visible ones: the word pass
    /// takes these bits instead of reading the slots' cache entries again.
    decided: u64,
    decided_visible: u64,
    /// The drawable objects when the word was decided.
    decided_drawable: u64,
    /// A draw of the word changed (a refreshed slot, or a level of detail) since the
    /// occluder bits were found.
    draws_changed: bool,
    /// How far the camera may move before one of the word's levels could change.
    lod_hold: WordLodHold,
    /// The word's side of the frustum, and how far the camera may move before it could
    /// change (`holds.rs`).
    frustum_hold: FrustumHold,
    /// Which of its objects keep their frustum verdict by their own holds (`holds.rs`).
    object_holds: WordObjectHolds,
}

impl Default for WordState {
    fn default() -> Self {
        WordState {
            culled: 0,
            epoch: 0,
            rejects: [0; 3],
            dirty: true,
            refreshed: 0,
            decided: 0,
            decided_visible: 0,
            decided_drawable: 0,
            draws_changed: false,
            lod_hold: WordLodHold::NONE,
            frustum_hold: FrustumHold::NONE,
            object_holds: WordObjectHolds::default(),
        }
    }
}

/// How far (in world units) the camera at `eye` may move before `hold`'s level could stop
/// holding, where `scaled` is the scaled distance the hold was just checked or made at:
/// negative (never skip) for no hold.
#[inline]
fn hold_slack(hold: &LodHold, eye: Vec3, distance: f32, scaled: f32, lod_scale: f32) -> f32 {
    let margin = (scaled - hold.above).min(hold.up_to - scaled) / lod_scale;
    let rounding = ROUNDING * (distance + hold.center.abs().max_element() + eye.abs().max_element());
    // `max(-inf)`: a NaN margin (no hold, or a NaN scale) holds nothing.
    (margin * (1.0 - 10.0 * ROUNDING) - rounding).max(f32::NEG_INFINITY)
}

/// Refreshed slots of one word whose flag bits are still to be written (see
/// [`TrackedState::add_flags`]).
struct FlagRun {
    word: usize,
    /// The slots of the run.
    refreshed: u64,
    /// Per column of [`FlagRun::KINDS`]: the run's slots that have the flag.
    ones: [u64; 6],
    /// The run's slots whose verdict the refresh found, and the visible ones of those.
    decided: u64,
    visible: u64,
    /// A slot of the run got a new draw: the word's occluder bits are found again.
    draws_changed: bool,
}

impl FlagRun {
    /// An empty run.
    const NONE: FlagRun =
        FlagRun { word: usize::MAX, refreshed: 0, ones: [0; 6], decided: 0, visible: 0, draws_changed: false };

    /// The flags of the word columns a refresh writes, in `flush_flags`' column order.
    const KINDS: [SlotFlag; 6] = [
        SlotFlag::Drawable,
        SlotFlag::Caster,
        SlotFlag::CulledTag,
        SlotFlag::OccludedTag,
        SlotFlag::NonFinite,
        SlotFlag::HasLod,
    ];
}

/// What one word's bounds are redone from when slots of it are refreshed: the union of the
/// finite drawable boxes of its *settled* slots (none refreshed since the last full frame),
/// kept, and the boxes of its *moved* slots, read again. A word whose movers are the same
/// frame after frame reads only their boxes instead of 64. The union of the same boxes, so
/// the same bounds as a union over the whole word (min and max do not depend on the order).
#[derive(Clone, Copy, Debug)]
struct SettledBounds {
    /// Slots refreshed since the last full frame.
    moved: u64,
    /// The union of the settled finite drawable boxes (`min > max` when there is none).
    min: Vec3A,
    max: Vec3A,
}

impl SettledBounds {
    /// No settled box.
    const NONE: SettledBounds = SettledBounds { moved: 0, min: Vec3A::INFINITY, max: Vec3A::NEG_INFINITY };

    /// The union of the boxes of `settled` (bits of word `index`), with `moved` recorded.
    fn of(bounds: &[Aabb], index: usize, settled: u64, moved: u64) -> SettledBounds {
        let (min, max) = raw_union(&bounds[index * BITS_PER_WORD..], settled);
        SettledBounds { moved, min, max }
    }

    /// Word `index`'s bounds: unbounded when it holds a non-finite drawable box, else the
    /// settled union with the moved slots' drawable boxes.
    fn word_bounds(&self, bounds: &[Aabb], index: usize, drawable: &[u64], forced: &[u64]) -> Aabb {
        if forced[index] & drawable[index] != 0 {
            return Aabb { min: Vec3::NEG_INFINITY, max: Vec3::INFINITY };
        }
        let (min, max) = raw_union(&bounds[index * BITS_PER_WORD..], drawable[index] & self.moved);
        finish_union(self.min.min(min), self.max.max(max))
    }
}

/// State of the tracked path, kept by the Visibility system between frames.
#[derive(Default)]
pub(crate) struct TrackedState {
    /// Where the stage stands in the change log.
    pub cursor: ChangeCursor,
    /// What changed since the last frame (reused buffer).
    pub changed: ChangedSince,
    /// The columns and words describe the last frame completely.
    valid: bool,
    /// Per slot word: drawable objects whose box is not finite (packed by the full pass).
    pub forced: Vec<u64>,
    /// Per slot word: drawable objects with levels of detail (packed by the full pass).
    pub with_lod: Vec<u64>,
    words: Vec<WordState>,
    /// Per slot word: the union of its finite drawable boxes; an empty box for a word without
    /// drawable objects, an unbounded one for a word holding a non-finite box (never rejected).
    word_bounds: Vec<Aabb>,
    /// Per slot word: what its bounds are recomputed from (see [`SettledBounds`]).
    settled: Vec<SettledBounds>,
    /// Per group of [`GROUP_WORDS`] words: the union of their bounds (the occlusion step's
    /// first level).
    group_bounds: Vec<Aabb>,
    /// Per slot word: drawable objects whose drawn mesh has a registered occluder.
    occluder_bits: Vec<u64>,
    /// The `OccluderMeshes::generation` `occluder_bits` were found with.
    occluder_generation: Option<u64>,
    /// A bit per slot word whose [`WordState::draws_changed`] is set, found by the word jobs
    /// of this frame, so that [`TrackedState::update_occluder_bits`] visits only those words
    /// instead of reading every word's state again on one thread.
    draws_changed_words: Vec<AtomicU64>,
    /// Archetype segments to refresh this frame.
    refresh_segments: Vec<Segment>,
    /// Single objects to refresh this frame.
    refresh_entities: Vec<(u32, Entity)>,
    /// Per segment of this frame: refresh it whole.
    segment_marks: Vec<bool>,
    /// Entity ids of many single objects to refresh (a bit per id), to find their archetypes.
    entity_marks: Vec<u64>,
    /// The slots of the rows of archetypes refreshed lately.
    segment_slots: SegmentSlots,
    /// Per slot with levels of detail: where its pick holds (see [`LodHold`]).
    lod_holds: Vec<LodHold>,
    /// Per slot: where its frustum verdict holds (valid for its word's
    /// [`WordObjectHolds::members`] only).
    object_holds: Vec<ObjectHold>,
    /// The global LOD bias (bits) the holds were found under.
    lod_bias_bits: u32,
    /// The frustum's shape apart from the camera's position, for the words' frustum holds.
    frustum_shape: FrustumShape,
    /// Scratch of [`TrackedState::refresh`]: per slot word, the slots the archetype refresh
    /// wrote (all zero between frames), and the words with any.
    refresh_mask: Vec<u64>,
    refresh_words: Vec<u32>,
}

/// Figures of a tracked frame, for the stage's statistics.
#[derive(Default)]
pub(crate) struct TrackedTotals {
    pub drawable: usize,
    pub visible: usize,
    pub frustum_rejected: usize,
    pub distance_rejected: usize,
    pub size_rejected: usize,
    pub non_finite: usize,
    pub bounds_computed: usize,
}

impl TrackedState {
    /// The next frame must be a full one.
    pub(crate) fn invalidate(&mut self) {
        self.valid = false;
    }

    /// After a full frame over `words` slot words: the word bounds are computed and every
    /// word is decided afresh next time.
    pub(crate) fn after_full_frame(&mut self, words: usize, visibility: &Visibility) {
        // Slots may have changed hands: forget every archetype's, and every level's hold.
        self.segment_slots.clear();
        self.lod_holds.clear();
        self.lod_holds.resize(visibility.slots.len(), LodHold::NONE);
        self.object_holds.clear();
        self.object_holds.resize(visibility.slots.len(), ObjectHold::NONE);
        self.words.clear();
        self.words.resize(words, WordState { dirty: false, ..WordState::default() });
        self.word_bounds.resize(words, EMPTY_BOX);
        self.settled.clear();
        self.settled.resize(words, SettledBounds::NONE);
        self.valid = self.forced.len() >= words && self.with_lod.len() >= words;
        if self.valid {
            let (drawable, forced, bounds) =
                (&visibility.drawable[..], &self.forced[..], &visibility.objects.bounds[..]);
            let word_bounds = SharedMut(self.word_bounds.as_mut_ptr());
            runtime::jobs::parallel_for_chunks(&mut self.settled, WORD_GRAIN, |first, chunk| {
                for (offset, settled) in chunk.iter_mut().enumerate() {
                    let index = first + offset;
                    // No slot has moved yet: every finite drawable box is settled.
                    *settled = SettledBounds::of(bounds, index, drawable[index] & !forced[index], 0);
                    // SAFETY: word `index` lies in this job's chunk; no other job writes it.
                    unsafe { word_bounds.at(index).write(settled.word_bounds(bounds, index, drawable, forced)) };
                }
            });
            self.group_bounds.clear();
            let groups = self.word_bounds.chunks(GROUP_WORDS).zip(visibility.drawable.chunks(GROUP_WORDS));
            self.group_bounds.extend(groups.map(|(bounds, drawable)| group_union(bounds, drawable)));
        }
    }

    /// Whether this frame may be tracked, and if so what to refresh: false when the log says
    /// everything changed, or names an object that came, went or lost its `Mesh`.
    pub(crate) fn plan(
        &mut self,
        world: &World,
        visibility: &mut Visibility,
        segments: &[Segment],
        objects: usize,
    ) -> bool {
        runtime::profile_zone!("visibility plan");
        self.refresh_segments.clear();
        self.refresh_entities.clear();
        let words = crate::bits::words_for(visibility.slots.len());
        if !self.valid || self.changed.everything || self.words.len() != words || objects != visibility.slots.live() {
            return false;
        }
        for &entity in &self.changed.entities {
            let alive = world.contains(entity);
            match visibility.slots.slot_of(entity) {
                Some(slot) => {
                    if !alive || !world.satisfies::<&Mesh>(entity) {
                        return false;
                    }
                    self.refresh_entities.push((slot, entity));
                }
                None => {
                    if alive && world.satisfies::<&Mesh>(entity) {
                        return false;
                    }
                }
            }
        }
        self.segment_marks.clear();
        self.segment_marks.resize(segments.len(), false);
        for &archetype in &self.changed.archetypes {
            if let Some(index) = segments.iter().position(|segment| segment.archetype == archetype as usize) {
                self.segment_marks[index] = true;
            }
        }
        if self.refresh_entities.len() > ENTITY_REFRESH_LIMIT {
            // Many single objects (a moving hierarchy's children): reaching each through its
            // entity costs more than refreshing the archetypes that hold them, found by one
            // scan of the ids.
            self.mark_archetypes_of_entities(world, segments);
            self.refresh_entities.clear();
        }
        for (segment, _) in segments.iter().zip(&self.segment_marks).filter(|(_, &marked)| marked) {
            if !self.segment_slots.look_up(world, segment, &mut visibility.slots, objects) {
                return false;
            }
            self.refresh_segments.push(*segment);
        }
        true
    }

    /// Marks in `segment_marks` every segment holding one of `refresh_entities`.
    fn mark_archetypes_of_entities(&mut self, world: &World, segments: &[Segment]) {
        self.entity_marks.clear();
        for &(_, entity) in &self.refresh_entities {
            let id = entity.id() as usize;
            if self.entity_marks.len() <= id / BITS_PER_WORD {
                self.entity_marks.resize(id / BITS_PER_WORD + 1, 0);
            }
            self.entity_marks[id / BITS_PER_WORD] |= 1 << (id % BITS_PER_WORD);
        }
        let marks = &self.entity_marks;
        let marked = |id: u32| {
            let id = id as usize;
            marks.get(id / BITS_PER_WORD).is_some_and(|word| word >> (id % BITS_PER_WORD) & 1 == 1)
        };
        for (segment, segment_marked) in segments.iter().zip(self.segment_marks.iter_mut()) {
            if *segment_marked {
                continue;
            }
            let archetype = world.archetypes().nth(segment.archetype).expect("segments are listed from this world");
            *segment_marked = archetype.ids().iter().any(|&id| marked(id));
        }
    }

    /// Runs a tracked frame (after [`TrackedState::plan`] said yes): refresh, then the word
    /// pass; leaves the pre-occlusion bits in `visibility.bits`.
    pub(crate) fn run(&mut self, inputs: &PassInputs<'_>, visibility: &mut Visibility) -> TrackedTotals {
        let mut totals = TrackedTotals::default();
        let slot_count = visibility.slots.len();
        {
            runtime::profile_zone!("visibility refresh");
            totals.bounds_computed = self.refresh(inputs, visibility);
        }
        runtime::profile_zone!("visibility words");
        self.frustum_shape.update(inputs.view.frustum(), inputs.view.camera_position());
        if inputs.lod_bias.to_bits() != self.lod_bias_bits || self.lod_holds.len() != slot_count {
            self.lod_bias_bits = inputs.lod_bias.to_bits();
            self.lod_holds.clear();
            self.lod_holds.resize(slot_count, LodHold::NONE);
            for word in &mut self.words {
                word.lod_hold = WordLodHold::NONE;
            }
        }
        let counters = WordCounters::default();
        // The jobs write each word's bits and flag its changed draws as they decide it: one
        // serial pass fewer over the word states each.
        visibility.bits.resize(slot_count);
        self.draws_changed_words.resize_with(self.words.len().div_ceil(BITS_PER_WORD), AtomicU64::default);
        self.draws_changed_words.iter_mut().for_each(|bits| *bits.get_mut() = 0);
        let draws_changed_words = &self.draws_changed_words;
        let Visibility { objects: columns, drawable, bits, changes, .. } = &mut *visibility;
        let bits_out = SharedMut(bits.words_mut().as_mut_ptr());
        let shared = WordInputs {
            pass: inputs,
            drawable,
            forced: &self.forced,
            with_lod: &self.with_lod,
            entities: &columns.entities,
            word_bounds: SharedMut(self.word_bounds.as_mut_ptr()),
            settled: SharedMut(self.settled.as_mut_ptr()),
            group_bounds: SharedMut(self.group_bounds.as_mut_ptr()),
            models: &columns.models,
            bounds: &columns.bounds,
            cache: SharedMut(columns.cache.as_mut_ptr()),
            draws: SharedMut(columns.draws.as_mut_ptr()),
            lod_holds: SharedMut(self.lod_holds.as_mut_ptr()),
            object_holds: SharedMut(self.object_holds.as_mut_ptr()),
            frustum_shape: self.frustum_shape,
            changes,
        };
        // Jobs take whole groups of words (the grain is a multiple of the group size), so each
        // redoes the bounds of its own refreshed words and then of their groups.
        const { assert!(WORD_GRAIN.is_multiple_of(GROUP_WORDS)) };
        runtime::jobs::parallel_for_chunks(&mut self.words, WORD_GRAIN, |first, chunk| {
            let mut local = TrackedTotals::default();
            let mut block = AabbBlock::new();
            let mut redone_groups = 0u64;
            let mut draws_changed = 0u64;
            let last = chunk.len().saturating_sub(1);
            for (offset, word) in chunk.iter_mut().enumerate() {
                let index = first + offset;
                if word.dirty {
                    // SAFETY: word `index` lies in this job's chunk.
                    unsafe { redo_word_bounds(&shared, index, word.refreshed) };
                    redone_groups |= 1 << (offset / GROUP_WORDS);
                }
                decide_word(&shared, index, word, &mut block, &mut local);
                // SAFETY: the bits have a word per word state, and word `index` is this job's.
                unsafe { *bits_out.at(index) = word.culled };
                draws_changed |= u64::from(word.draws_changed) << (index % BITS_PER_WORD);
                if index % BITS_PER_WORD == BITS_PER_WORD - 1 || offset == last {
                    if draws_changed != 0 {
                        draws_changed_words[index / BITS_PER_WORD].fetch_or(draws_changed, Ordering::Relaxed);
                    }
                    draws_changed = 0;
                }
            }
            while redone_groups != 0 {
                let group = first / GROUP_WORDS + redone_groups.trailing_zeros() as usize;
                redone_groups &= redone_groups - 1;
                // SAFETY: the group's words lie in this job's chunk, and only this job writes it.
                unsafe { redo_group_bounds(&shared, group, first + chunk.len()) };
            }
            counters.add(&local);
        });
        #[cfg(debug_assertions)]
        check_word_bounds(&self.word_bounds, &visibility.objects.bounds, &visibility.drawable, &self.forced);
        counters.into_totals(&mut totals);
        totals
    }

    /// Step 1: the written archetypes through `run_range`, the single entities through
    /// [`refresh_entity`]; updates the slots' flag bits and marks their words dirty. Returns
    /// how many boxes were computed.
    fn refresh(&mut self, inputs: &PassInputs<'_>, visibility: &mut Visibility) -> usize {
        let pass_totals = PassTotals::default();
        let objects = visibility.slots.storage().len();
        let outputs = PassOutputs::of(visibility, objects);
        for segment in &self.refresh_segments {
            let range = segment.start..segment.start + segment.len;
            runtime::jobs::parallel_for_ranges(range, GRAIN, |range| run_range(inputs, &outputs, &pass_totals, range));
        }
        let mut computed = pass_totals.bounds_computed.load(Ordering::Relaxed);
        // Gather the refreshed slots per word first, then write each word's flags once:
        // storage order need not follow slot order (tags reshuffle rows, and slots freed by
        // despawns are reused), and a run per change of word would then be a run per slot.
        let mut mask = std::mem::take(&mut self.refresh_mask);
        let mut words = std::mem::take(&mut self.refresh_words);
        mask.resize(words_for(visibility.slots.len()), 0);
        words.clear();
        for segment in &self.refresh_segments {
            for &slot in &visibility.slots.storage()[segment.start..segment.start + segment.len] {
                let (word, bit) = (slot as usize / BITS_PER_WORD, 1u64 << (slot as usize % BITS_PER_WORD));
                if mask[word] == 0 {
                    words.push(word as u32);
                }
                mask[word] |= bit;
            }
        }
        let mut run = FlagRun::NONE;
        for &word in &words {
            let word = word as usize;
            let mut bits = std::mem::take(&mut mask[word]);
            if bits.count_ones() <= DENSE_REFRESH {
                while bits != 0 {
                    let slot = word * BITS_PER_WORD + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let flag = visibility.slot_flags[slot];
                    self.add_flags(visibility, &mut run, slot, flag, true);
                }
            } else {
                self.add_word_flags(visibility, &mut run, word, bits);
            }
        }
        self.flush_flags(visibility, &run);
        self.refresh_mask = mask;
        self.refresh_words = words;
        for index in 0..self.refresh_entities.len() {
            let (slot, entity) = self.refresh_entities[index];
            let was_drawn = visibility.objects.draws[slot as usize] != ObjectDraw::NONE;
            let (flag, fresh) = refresh_entity(inputs, entity, slot as usize, visibility);
            if fresh || flag >> SlotFlag::DrawChanged as u8 & 1 == 1 {
                let drawn = visibility.objects.draws[slot as usize] != ObjectDraw::NONE;
                if drawn && !was_drawn {
                    visibility.changes.mark_appeared(slot as usize);
                } else {
                    visibility.changes.mark(slot as usize);
                }
            }
            computed += usize::from(fresh);
            self.set_flags(visibility, slot as usize, flag);
        }
        #[cfg(debug_assertions)]
        check_nothing_missed(inputs.world, visibility);
        computed
    }

    /// Writes a refreshed slot's flag bits into the word columns and marks its word dirty
    /// (a slot refreshed through its entity: its verdict is left to the word pass).
    fn set_flags(&mut self, visibility: &mut Visibility, slot: usize, flag: u8) {
        let mut run = FlagRun::NONE;
        self.add_flags(visibility, &mut run, slot, flag, false);
        self.flush_flags(visibility, &run);
    }

    /// Adds a refreshed slot's flag bits to `run`, writing the run out first when the slot
    /// lies in another word: an archetype's rows mostly hold slots of a few words in turn, so
    /// the word columns are written once per word instead of once per slot. `decided`: the
    /// flag's visible bit holds the slot's verdict under this frame's view (`run_range`).
    fn add_flags(&mut self, visibility: &mut Visibility, run: &mut FlagRun, slot: usize, flag: u8, decided: bool) {
        let (word, offset) = (slot / BITS_PER_WORD, slot % BITS_PER_WORD);
        let bit = 1u64 << offset;
        self.enter_run(visibility, run, word);
        run.refreshed |= bit;
        run.draws_changed |= flag >> SlotFlag::DrawChanged as u8 & 1 == 1;
        if decided {
            run.decided |= bit;
            run.visible |= u64::from(flag >> SlotFlag::Visible as u8 & 1) << offset;
        }
        for (ones, kind) in run.ones.iter_mut().zip(FlagRun::KINDS) {
            *ones |= u64::from(flag >> kind as u8 & 1) << offset;
        }
        self.void_level_holds(word, u64::from(flag >> SlotFlag::HasLod as u8 & 1) << offset);
    }

    /// Makes `run` the run of `word`, writing out the run of another word first.
    #[inline]
    fn enter_run(&mut self, visibility: &mut Visibility, run: &mut FlagRun, word: usize) {
        if word != run.word {
            self.flush_flags(visibility, run);
            *run = FlagRun { word, ..FlagRun::NONE };
        }
    }

    /// A refreshed slot's new centre voids its level's hold: the slots of `with_lod` (bits of
    /// `word`). Only objects with levels ever read theirs (one that gains levels is refreshed
    /// again then, and voided).
    #[inline]
    fn void_level_holds(&mut self, word: usize, mut with_lod: u64) {
        while with_lod != 0 {
            if let Some(hold) = self.lod_holds.get_mut(word * BITS_PER_WORD + with_lod.trailing_zeros() as usize) {
                *hold = LodHold::NONE;
            }
            with_lod &= with_lod - 1;
        }
    }

    /// [`TrackedState::add_flags`] for the refreshed slots `bits` of `word` at once, their
    /// verdicts found by the refresh: the flag bytes are turned into bit columns eight at a
    /// time (`flag_columns`) rather than bit by bit.
    fn add_word_flags(&mut self, visibility: &mut Visibility, run: &mut FlagRun, word: usize, bits: u64) {
        self.enter_run(visibility, run, word);
        let start = word * BITS_PER_WORD;
        let flags = &visibility.slot_flags[start..(start + BITS_PER_WORD).min(visibility.slot_flags.len())];
        let columns = flag_columns(flags);
        run.refreshed |= bits;
        run.decided |= bits;
        run.visible |= columns[SlotFlag::Visible as usize] & bits;
        run.draws_changed |= columns[SlotFlag::DrawChanged as usize] & bits != 0;
        for (ones, kind) in run.ones.iter_mut().zip(FlagRun::KINDS) {
            *ones |= columns[kind as usize] & bits;
        }
        self.void_level_holds(word, columns[SlotFlag::HasLod as usize] & bits);
    }

    /// Writes `run`'s bits into its word's columns and marks the word dirty.
    fn flush_flags(&mut self, visibility: &mut Visibility, run: &FlagRun) {
        if run.refreshed == 0 {
            return;
        }
        let word = run.word;
        let columns = [
            &mut visibility.drawable[word],
            &mut visibility.casters[word],
            &mut visibility.tagged[word],
            &mut visibility.occluded_tag[word],
            &mut self.forced[word],
            &mut self.with_lod[word],
        ];
        for (column, ones) in columns.into_iter().zip(run.ones) {
            *column = (*column & !run.refreshed) | ones;
        }
        let state = &mut self.words[word];
        state.dirty = true;
        state.draws_changed |= run.draws_changed;
        state.refreshed |= run.refreshed;
        // A slot refreshed again (through its entity) is decided by the word pass.
        state.decided = (state.decided & !run.refreshed) | run.decided;
        state.decided_visible = (state.decided_visible & !run.refreshed) | run.visible;
    }

    /// Finds, per slot word, the drawable objects whose drawn mesh has an occluder in
    /// `meshes`, for the occlusion step to pick its occluders from without visiting every
    /// visible object: for every word after a full frame or a change of the registry, else
    /// only for the words refreshed this frame and those where a level of detail changed a
    /// draw.
    pub(crate) fn update_occluder_bits(&mut self, visibility: &Visibility, meshes: &OccluderMeshes, full_frame: bool) {
        if !self.valid {
            return;
        }
        runtime::profile_zone!("visibility occluder bits");
        let words = self.words.len();
        let (drawable, draws) = (&visibility.drawable[..], &visibility.objects.draws[..]);
        let bits_of = |word: usize| {
            let mut members = drawable[word];
            let mut bits = 0u64;
            // Neighbouring slots mostly draw the same mesh: one registry lookup per run.
            let mut last: Option<(ecs::MeshHandle, bool)> = None;
            while members != 0 {
                let offset = members.trailing_zeros() as usize;
                members &= members - 1;
                let mesh = draws[word * BITS_PER_WORD + offset].mesh;
                let occludes = match last {
                    Some((seen, occludes)) if seen == mesh => occludes,
                    _ => meshes.get(mesh).is_some(),
                };
                last = Some((mesh, occludes));
                bits |= u64::from(occludes) << offset;
            }
            bits
        };
        if full_frame || self.occluder_generation != Some(meshes.generation()) || self.occluder_bits.len() != words {
            self.occluder_bits.resize(words, 0);
            runtime::jobs::parallel_for_chunks(&mut self.occluder_bits, WORD_GRAIN, |first, chunk| {
                for (offset, bits) in chunk.iter_mut().enumerate() {
                    *bits = bits_of(first + offset);
                }
            });
            self.occluder_generation = Some(meshes.generation());
        } else {
            // Refreshed slots with a new draw, and levels of detail that changed one, mark
            // their word (`SlotFlag::DrawChanged`, `pick_levels`); this frame's word jobs
            // listed the marked words (`draws_changed_words`, a tracked frame's).
            for (index, marked) in self.draws_changed_words.iter_mut().enumerate() {
                let mut marked = std::mem::take(marked.get_mut());
                while marked != 0 {
                    let word = index * BITS_PER_WORD + marked.trailing_zeros() as usize;
                    marked &= marked - 1;
                    self.words[word].draws_changed = false;
                    self.occluder_bits[word] = bits_of(word);
                }
            }
        }
    }

    /// The occluder bits were not kept up to date this frame (occlusion off or no
    /// registry): the next [`TrackedState::update_occluder_bits`] finds them all again.
    pub(crate) fn forget_occluder_bits(&mut self) {
        self.occluder_generation = None;
    }

    /// What the occlusion step may use of the words: their bounds, and their occluder bits
    /// when `with_occluders` (after [`TrackedState::update_occluder_bits`] this frame).
    pub(crate) fn groups(&self, with_occluders: bool) -> WordGroups<'_> {
        if !self.valid {
            return WordGroups::default();
        }
        let occluders = if with_occluders { &self.occluder_bits[..] } else { &[] };
        WordGroups { occluders, bounds: &self.word_bounds, groups: &self.group_bounds }
    }
}

/// One slot's entries of the per-object columns.
struct SlotEntries<'a> {
    model: &'a mut Mat4,
    bounds: &'a mut Aabb,
    draw: &'a mut ObjectDraw,
    cache: &'a mut CachedBounds,
}

/// The slots of the rows of the archetypes a tracked frame refreshes, kept with the entity
/// ids they were found for: an archetype whose rows hold the same ids as last time (a mover
/// archetype, frame after frame) copies its slots instead of looking every entity up, and
/// one whose rows changed in places (tags moved some objects in or out) looks up only the
/// rows whose id changed.
///
/// Ids are compared without generations: a despawned entity's id reused by a newcomer would
/// look the same, but a spawn or despawn makes a full frame, which clears this.
#[derive(Default)]
struct SegmentSlots {
    /// (archetype position, its ids, their slots).
    entries: Vec<(usize, Vec<u32>, Vec<u32>)>,
}

impl SegmentSlots {
    fn clear(&mut self) {
        self.entries.clear();
    }

    /// Records `segment`'s slots in `slots`' storage order; false when a row has no slot.
    fn look_up(
        &mut self,
        world: &World,
        segment: &Segment,
        slots: &mut super::slots::ObjectSlots,
        objects: usize,
    ) -> bool {
        let archetype = world.archetypes().nth(segment.archetype).expect("segments are listed from this world");
        let ids = archetype.ids();
        let entry = match self.entries.iter().position(|(position, _, _)| *position == segment.archetype) {
            Some(index) => &mut self.entries[index],
            None => {
                self.entries.push((segment.archetype, Vec::new(), Vec::new()));
                self.entries.last_mut().expect("pushed")
            }
        };
        if entry.1 == ids {
            slots.set_segment(segment, &entry.2, objects);
            return true;
        }
        // Rows whose id did not change keep the slot found for them last time.
        if !slots.look_up_segment(world, segment, objects, &entry.1, &entry.2) {
            entry.1.clear();
            return false;
        }
        entry.1.clear();
        entry.1.extend_from_slice(ids);
        entry.2.clear();
        entry.2.extend_from_slice(&slots.storage()[segment.start..segment.start + segment.len]);
        true
    }
}

/// Refreshes slot `slot`'s columns from `entity` (see [`refresh_entity_into`]).
fn refresh_entity(inputs: &PassInputs<'_>, entity: Entity, slot: usize, visibility: &mut Visibility) -> (u8, bool) {
    let columns = &mut visibility.objects;
    let entries = SlotEntries {
        model: &mut columns.models[slot],
        bounds: &mut columns.bounds[slot],
        draw: &mut columns.draws[slot],
        cache: &mut columns.cache[slot],
    };
    refresh_entity_into(inputs.world, entity, entries, Some(inputs))
}

/// Refreshes one object's column entries through its entity, with the same arithmetic as
/// `run_range`, the level of detail under `view` included (the verdict is left to the word
/// pass). Returns its flag byte (without the visible bit) and whether its box was computed.
fn refresh_entity_into(
    world: &World,
    entity: Entity,
    entries: SlotEntries<'_>,
    view: Option<&PassInputs<'_>>,
) -> (u8, bool) {
    let Ok(object) = world.entity(entity) else {
        return (0, false);
    };
    let mut flag = 0u8;
    for (present, kind) in [
        (object.has::<ShadowCaster>(), SlotFlag::Caster),
        (object.has::<ecs::Culled>(), SlotFlag::CulledTag),
        (object.has::<ecs::Occluded>(), SlotFlag::OccludedTag),
    ] {
        flag |= u8::from(present) << kind as u8;
    }
    let source = object.get::<&Mesh>().and_then(|mesh| {
        let shown = object.get::<&Visible>().is_none_or(|shown| shown.0);
        if !(shown && mesh.is_drawable()) {
            return None;
        }
        let model = match (object.get::<&WorldTransform>(), object.get::<&Transform>()) {
            (Some(world), _) => world.0,
            (None, Some(local)) => local.to_matrix(),
            (None, None) => return None,
        };
        let local = match object.get::<&SkinnedPose>() {
            Some(pose) => mesh.local_bounds(Some(&pose)),
            None => mesh.bounds,
        };
        Some((model, local, ObjectDraw { mesh: mesh.mesh, material: mesh.material }))
    });
    let Some((model, local_box, draw)) = source else {
        *entries.model = Mat4::IDENTITY;
        *entries.bounds = EMPTY_BOX;
        let draw_changed = *entries.draw != ObjectDraw::NONE;
        *entries.draw = ObjectDraw::NONE;
        *entries.cache = CachedBounds::EMPTY;
        return (flag | u8::from(draw_changed) << SlotFlag::DrawChanged as u8, false);
    };
    flag |= 1 << SlotFlag::Drawable as u8;
    let lods = object.get::<&Lod>();
    flag |= u8::from(lods.is_some()) << SlotFlag::HasLod as u8;
    let mut draw = draw;
    if let (Some(lods), Some(inputs)) = (lods, view) {
        // As `draw_of`: the level the world centre's distance picks.
        let center = model.transform_point3(local_box.center());
        if let Some(level) = lods.select(inputs.view.distance_sq(center).sqrt(), inputs.lod_scale, inputs.lod_bias) {
            draw.mesh = level;
        }
    }
    if *entries.draw != draw {
        *entries.draw = draw;
        flag |= 1 << SlotFlag::DrawChanged as u8;
    }
    let (finite, fresh) = match entries.cache.lookup(entries.model, &model, &local_box) {
        Some(finite) => (finite, false),
        None => {
            let (center, half) = local_box.transformed_center_half(&model);
            let finite = super::cull::is_finite_object(&model, center, half);
            *entries.model = model;
            *entries.cache = CachedBounds::new(local_box, finite);
            *entries.bounds = Aabb { min: center - half, max: center + half };
            (finite, true)
        }
    };
    flag |= u8::from(!finite) << SlotFlag::NonFinite as u8;
    (flag, fresh)
}

/// Words with more refreshed slots than this have their flags turned into bit columns at
/// once ([`flag_columns`]); fewer are added slot by slot.
const DENSE_REFRESH: u32 = 8;

/// The eight bit columns of up to 64 flag bytes: bit `j` of column `k` is bit `k` of
/// `flags[j]`. Eight bytes at a time: masking bit `k` of each byte and multiplying by
/// `0x0102_0408_1020_4080` gathers those eight bits, without carries, into the top byte.
fn flag_columns(flags: &[u8]) -> [u64; 8] {
    let mut columns = [0u64; 8];
    for (chunk_index, chunk) in flags.chunks(8).enumerate() {
        let mut bytes = [0u8; 8];
        bytes[..chunk.len()].copy_from_slice(chunk);
        let lanes = u64::from_le_bytes(bytes);
        for (kind, column) in columns.iter_mut().enumerate() {
            let gathered = ((lanes >> kind) & 0x0101_0101_0101_0101).wrapping_mul(0x0102_0408_1020_4080) >> 56;
            *column |= gathered << (8 * chunk_index);
        }
    }
    columns
}

/// Debug builds (so every test) check what a tracked frame relies on: after the refresh,
/// every drawable object's columns come from its current matrix and box, and its flag bits
/// match its archetype. A failure is a write the change log did not see, which would be a
/// stale box (false-hidden) in a release build. Skipped above 50k objects to bound its cost.
#[cfg(debug_assertions)]
fn check_nothing_missed(world: &World, visibility: &Visibility) {
    if visibility.slots.len() > 50_000 {
        return;
    }
    let mut query = world.query::<runtime::hecs::Entity>().with::<&Mesh>();
    for entity in query.iter() {
        let slot = visibility.slots.slot_of(entity).expect("a tracked frame has no new mesh entity");
        let slot_index = slot as usize;
        let columns = &visibility.objects;
        let (mut model, mut bounds) = (columns.models[slot_index], columns.bounds[slot_index]);
        let (mut draw, mut cache) = (columns.draws[slot_index], columns.cache[slot_index]);
        let entries = SlotEntries { model: &mut model, bounds: &mut bounds, draw: &mut draw, cache: &mut cache };
        let (flag, fresh) = refresh_entity_into(world, entity, entries, None);
        let (word, bit) = (slot as usize / BITS_PER_WORD, 1u64 << (slot as usize % BITS_PER_WORD));
        let drawable = visibility.drawable[word] & bit != 0;
        assert!(
            !fresh && drawable == (flag >> SlotFlag::Drawable as u8 & 1 == 1),
            "the change log missed a change of entity {entity:?} (slot {slot}): its box or drawability is stale"
        );
        let caster = visibility.casters[word] & bit != 0;
        assert_eq!(
            caster,
            flag >> SlotFlag::Caster as u8 & 1 == 1,
            "the change log missed a ShadowCaster change of {entity:?}"
        );
    }
}

/// A column shared by the word jobs, each writing only the slots of its own words.
struct SharedMut<T>(*mut T);

// SAFETY: jobs write through the pointer only at the slots of their own disjoint word ranges,
// and the column outlives the parallel call.
unsafe impl<T> Sync for SharedMut<T> {}

impl<T> SharedMut<T> {
    /// The entry at `index` (a method, so closures capture the whole wrapper, not its field).
    #[inline(always)]
    fn at(&self, index: usize) -> *mut T {
        self.0.wrapping_add(index)
    }
}

/// What every word job reads.
struct WordInputs<'a> {
    pass: &'a PassInputs<'a>,
    drawable: &'a [u64],
    forced: &'a [u64],
    with_lod: &'a [u64],
    entities: &'a [Entity],
    /// Per word and per group, redone by the job that owns them for its refreshed words.
    word_bounds: SharedMut<Aabb>,
    settled: SharedMut<SettledBounds>,
    group_bounds: SharedMut<Aabb>,
    models: &'a [Mat4],
    bounds: &'a [Aabb],
    cache: SharedMut<CachedBounds>,
    draws: SharedMut<ObjectDraw>,
    lod_holds: SharedMut<LodHold>,
    object_holds: SharedMut<ObjectHold>,
    frustum_shape: FrustumShape,
    /// Where a level of detail that changes a draw marks its slot.
    changes: &'a super::changes::SlotChanges,
}

/// Totals summed over word jobs.
#[derive(Default)]
struct WordCounters([AtomicUsize; 6]);

impl WordCounters {
    fn add(&self, local: &TrackedTotals) {
        let values = [
            local.drawable,
            local.visible,
            local.frustum_rejected,
            local.distance_rejected,
            local.size_rejected,
            local.non_finite,
        ];
        for (counter, value) in self.0.iter().zip(values) {
            counter.fetch_add(value, Ordering::Relaxed);
        }
    }

    fn into_totals(self, totals: &mut TrackedTotals) {
        let [drawable, visible, frustum, distance, size, non_finite] = self.0.map(AtomicUsize::into_inner);
        totals.drawable = drawable;
        totals.visible = visible;
        totals.frustum_rejected = frustum;
        totals.distance_rejected = distance;
        totals.size_rejected = size;
        totals.non_finite = non_finite;
    }
}

impl WordInputs<'_> {
    /// Word `index`'s bounds, as redone for this frame (a word job reads only its own words).
    #[inline]
    fn word_bounds(&self, index: usize) -> &Aabb {
        // SAFETY: written only by the job owning word `index`, before it reads them here.
        unsafe { &*self.word_bounds.at(index) }
    }
}

/// Redoes the bounds of word `index`, some of whose slots (`refreshed`) were refreshed: a
/// slot moved for the first time since the full frame joins the moved ones, and the settled
/// union is found again without it (see [`SettledBounds`]).
///
/// # Safety
/// Word `index` belongs to the calling job: no other thread reads or writes its entries of
/// `settled` and `word_bounds` meanwhile.
unsafe fn redo_word_bounds(shared: &WordInputs<'_>, index: usize, refreshed: u64) {
    let (bounds, drawable, forced) = (shared.bounds, shared.drawable, shared.forced);
    // SAFETY: the caller owns word `index`.
    let settled = unsafe { &mut *shared.settled.at(index) };
    if refreshed & !settled.moved != 0 {
        let moved = settled.moved | refreshed;
        *settled = SettledBounds::of(bounds, index, drawable[index] & !forced[index] & !moved, moved);
    }
    // SAFETY: as above.
    unsafe { shared.word_bounds.at(index).write(settled.word_bounds(bounds, index, drawable, forced)) };
}

/// Redoes the bounds of `group` (of [`GROUP_WORDS`] words, the last one clipped to `end`)
/// from its words' bounds.
///
/// # Safety
/// Every word of the group and the group itself belong to the calling job.
unsafe fn redo_group_bounds(shared: &WordInputs<'_>, group: usize, end: usize) {
    let range = group * GROUP_WORDS..((group + 1) * GROUP_WORDS).min(end);
    // SAFETY: the caller owns these words; their bounds are written, and read only here.
    let words = unsafe { std::slice::from_raw_parts(shared.word_bounds.at(range.start), range.len()) };
    // SAFETY: the caller owns the group.
    unsafe { shared.group_bounds.at(group).write(group_union(words, &shared.drawable[range])) };
}

/// Decides word `index`: reuses a clean word's answer under the same view, rejects a word
/// clearly outside the frustum at once, else tests its objects one by one.
fn decide_word(
    shared: &WordInputs<'_>,
    index: usize,
    word: &mut WordState,
    block: &mut AabbBlock,
    local: &mut TrackedTotals,
) {
    let inputs = shared.pass;
    let drawable = shared.drawable[index];
    let forced = shared.forced[index] & drawable;
    local.drawable += drawable.count_ones() as usize;
    local.non_finite += forced.count_ones() as usize;
    if !word.dirty && word.epoch == inputs.view_epoch {
        local.visible += word.culled.count_ones() as usize;
        local.frustum_rejected += usize::from(word.rejects[0]);
        local.distance_rejected += usize::from(word.rejects[1]);
        local.size_rejected += usize::from(word.rejects[2]);
        return;
    }
    let base = index * BITS_PER_WORD;
    let with_lod = shared.with_lod[index] & drawable;
    // Under the view this word was last decided in, every level still stands; and refreshed
    // objects picked theirs under this view when they were refreshed.
    // A word wholly outside the view draws nothing, whatever its levels: they are picked
    // when it comes near the view again (see `ObjectColumns::draws`).
    let secondary_culls = inputs.view.has_secondary_culls();
    // Under the same view with only the frustum on, a word's other objects keep their answer
    // (a rejected one was rejected by the frustum): only the refreshed ones are decided,
    // and the word's side of the frustum is not asked.
    let same_view = word.epoch == inputs.view_epoch;
    let keeps_answers = same_view && !secondary_culls && word.rejects[1] == 0 && word.rejects[2] == 0;
    let eye = inputs.view.camera_position();
    let side = if !keeps_answers && inputs.frustum_culling && forced == 0 && drawable != 0 {
        // The hold of a dirty word was found for bounds it may no longer have.
        let held = if word.dirty { None } else { word.frustum_hold.side_at(eye, &shared.frustum_shape) };
        match held {
            Some(side) => {
                #[cfg(debug_assertions)]
                check_side_holds(shared, index, side);
                side
            }
            // A hold is made for a clean word under a steady frustum: a word refreshed every
            // frame would never keep one.
            None if shared.frustum_shape.steady && !word.dirty => {
                let (side, hold) =
                    FrustumHold::decide(inputs.view.frustum(), shared.word_bounds(index), eye, &shared.frustum_shape);
                word.frustum_hold = hold;
                side
            }
            // A turning camera, or a refreshed word: the plain tests, without the slack a hold
            // would need.
            None => {
                word.frustum_hold = FrustumHold::NONE;
                // Inside is only asked for when no other cull is on, as below.
                WordSide::of(inputs.view.frustum(), shared.word_bounds(index), !secondary_culls)
            }
        }
    } else {
        WordSide::Straddles
    };
    let outside = side == WordSide::Outside;
    let to_pick = with_lod & !word.refreshed;
    // A refreshed object's own hold was voided: it is checked alone until it holds again.
    word.lod_hold.members &= !word.refreshed;
    // A refreshed object's frustum verdict was found for a box it may no longer have.
    word.object_holds.members &= !word.refreshed;
    if to_pick != 0 && word.epoch != inputs.view_epoch && !outside {
        if word.lod_hold.covers(to_pick, eye, inputs.lod_scale) {
            #[cfg(debug_assertions)]
            check_levels_hold(shared, base, to_pick);
        } else {
            let (changed, slack) = pick_levels(shared, base, to_pick);
            word.draws_changed |= changed;
            word.lod_hold =
                WordLodHold { anchor: eye, slack, scale_bits: inputs.lod_scale.to_bits(), members: to_pick };
        }
    }
    let (previous_drawable, previous_culled, previous_rejects) = (word.decided_drawable, word.culled, word.rejects);
    let changed = word.refreshed | (previous_drawable ^ drawable);
    word.epoch = inputs.view_epoch;
    word.dirty = false;
    word.refreshed = 0;
    let (decided, decided_visible) = (std::mem::take(&mut word.decided), std::mem::take(&mut word.decided_visible));
    word.decided_drawable = drawable;
    if keeps_answers {
        let kept = previous_culled & !changed;
        let kept_rejected = (previous_drawable & !changed & !previous_culled).count_ones() as u8;
        debug_assert_eq!(
            u32::from(previous_rejects[0]),
            (previous_drawable & !previous_culled).count_ones(),
            "with only the frustum on, every drawable object not kept was rejected by it"
        );
        // Slots the refresh decided under this view: a reject can only be the frustum's.
        let known = drawable & changed & decided;
        let known_visible = known & decided_visible;
        let known_rejected = (known & !known_visible).count_ones() as u8;
        #[cfg(debug_assertions)]
        check_decided(shared, base, known, known_visible);
        let holds = &mut word.object_holds;
        let (culled, rejects) = decide_objects(shared, base, drawable & changed & !known, forced, block, holds);
        let rejects = [kept_rejected + known_rejected + rejects[0], rejects[1], rejects[2]];
        (word.culled, word.rejects) = (kept | known_visible | culled, rejects);
        local.visible += word.culled.count_ones() as usize;
        local.frustum_rejected += usize::from(word.rejects[0]);
        local.distance_rejected += usize::from(word.rejects[1]);
        local.size_rejected += usize::from(word.rejects[2]);
        return;
    }
    if drawable == 0 {
        (word.culled, word.rejects) = (0, [0; 3]);
        return;
    }
    if outside {
        (word.culled, word.rejects) = (0, [drawable.count_ones() as u8, 0, 0]);
        local.frustum_rejected += drawable.count_ones() as usize;
        return;
    }
    if !secondary_culls && (!inputs.frustum_culling || side == WordSide::Inside) {
        // Every box of the word is inside every plane, and no other cull is on.
        (word.culled, word.rejects) = (drawable, [0; 3]);
        local.visible += drawable.count_ones() as usize;
        return;
    }
    let (culled, rejects) = decide_objects(shared, base, drawable, forced, block, &mut word.object_holds);
    (word.culled, word.rejects) = (culled, rejects);
    local.visible += culled.count_ones() as usize;
    local.frustum_rejected += usize::from(rejects[0]);
    local.distance_rejected += usize::from(rejects[1]);
    local.size_rejected += usize::from(rejects[2]);
}

/// Debug builds check that the verdicts a refresh handed to the word pass (`known`, the
/// visible ones `visible`, bits from slot `base`) are those cached under this view.
#[cfg(debug_assertions)]
fn check_decided(shared: &WordInputs<'_>, base: usize, mut known: u64, visible: u64) {
    while known != 0 {
        let offset = known.trailing_zeros() as usize;
        known &= known - 1;
        // SAFETY: this job's own slot, only read.
        let entry = unsafe { &*shared.cache.0.add(base + offset) };
        let expected = if visible >> offset & 1 == 1 { Verdict::Visible } else { Verdict::Frustum };
        assert_eq!(entry.verdict(shared.pass.view_epoch), Some(expected), "slot {}", base + offset);
    }
}

/// The union of the bounds of the words with drawable objects (`drawable`, one word each;
/// an unbounded word makes the group unbounded).
fn group_union(words: &[Aabb], drawable: &[u64]) -> Aabb {
    let (mut min, mut max) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for (word, _) in words.iter().zip(drawable).filter(|(_, &drawable)| drawable != 0) {
        min = min.min(word.min);
        max = max.max(word.max);
    }
    if min.x > max.x {
        return EMPTY_BOX;
    }
    Aabb { min, max }
}

/// Word `index`'s bounds: the union of its finite drawable boxes, unbounded when it holds a
/// non-finite one (the reference the kept bounds are checked against).
#[cfg(debug_assertions)]
fn word_union(bounds: &[Aabb], index: usize, drawable: &[u64], forced: &[u64]) -> Aabb {
    let forced = forced[index] & drawable[index];
    if forced != 0 {
        return Aabb { min: Vec3::NEG_INFINITY, max: Vec3::INFINITY };
    }
    union_of(&bounds[index * BITS_PER_WORD..], drawable[index])
}

/// The union of the boxes of `members` (bits over `boxes`), or an empty box.
#[cfg(any(test, debug_assertions))]
fn union_of(boxes: &[Aabb], members: u64) -> Aabb {
    let (min, max) = raw_union(boxes, members);
    finish_union(min, max)
}

/// The minimum and maximum corners over the boxes of `members` (bits over `boxes`); `min >
/// max` when there is none.
#[inline]
fn raw_union(boxes: &[Aabb], mut members: u64) -> (Vec3A, Vec3A) {
    let (mut min, mut max) = (Vec3A::INFINITY, Vec3A::NEG_INFINITY);
    if members == u64::MAX && boxes.len() >= BITS_PER_WORD {
        // A full word (the usual case): a straight loop in SIMD registers, no bit walking.
        for aabb in &boxes[..BITS_PER_WORD] {
            min = min.min(Vec3A::from(aabb.min));
            max = max.max(Vec3A::from(aabb.max));
        }
        return (min, max);
    }
    while members != 0 {
        let offset = members.trailing_zeros() as usize;
        members &= members - 1;
        min = min.min(Vec3A::from(boxes[offset].min));
        max = max.max(Vec3A::from(boxes[offset].max));
    }
    (min, max)
}

/// The box of a [`raw_union`]: an empty box when it had no member.
#[inline]
fn finish_union(min: Vec3A, max: Vec3A) -> Aabb {
    if min.x > max.x {
        return EMPTY_BOX;
    }
    Aabb { min: min.into(), max: max.into() }
}

/// Debug builds (so every test) check that the bounds kept word by word are the union of
/// each word's boxes, as a full frame finds them. Skipped above 50k objects.
#[cfg(debug_assertions)]
fn check_word_bounds(word_bounds: &[Aabb], bounds: &[Aabb], drawable: &[u64], forced: &[u64]) {
    if bounds.len() > 50_000 {
        return;
    }
    for (index, kept) in word_bounds.iter().enumerate() {
        let fresh = word_union(bounds, index, drawable, forced);
        // `==`, not bits: a union in another order may differ in the sign of a zero only.
        assert!(kept.min == fresh.min && kept.max == fresh.max, "word {index}: kept bounds {kept:?}, fresh {fresh:?}");
    }
}

/// Debug builds check that a word whose side of the frustum was taken from its hold is on
/// that side still.
#[cfg(debug_assertions)]
fn check_side_holds(shared: &WordInputs<'_>, index: usize, side: WordSide) {
    let inputs = shared.pass;
    let (found, _) = FrustumHold::decide(
        inputs.view.frustum(),
        shared.word_bounds(index),
        inputs.view.camera_position(),
        &shared.frustum_shape,
    );
    assert_eq!(found, side, "word {index}: its frustum hold kept a side the word is no longer on");
}

/// Where an object's level of detail holds: the centre its distance is measured from and
/// the range of `distance * lod_scale` over which the level picked last stays the pick (the
/// first level whose `max_distance * bias` is at least the scaled distance). A camera moving
/// a little changes no level, so most objects cost a distance instead of two component
/// lookups. Voided when the object is refreshed or the global bias changes.
#[derive(Clone, Copy, Debug)]
struct LodHold {
    center: Vec3,
    /// The pick holds while `above < scaled <= up_to`.
    above: f32,
    up_to: f32,
}

impl LodHold {
    /// No hold: the level must be picked through the entity.
    const NONE: LodHold = LodHold { center: Vec3::ZERO, above: f32::INFINITY, up_to: f32::NEG_INFINITY };
}

/// Picks the level of detail of each object of `members` (bits from slot `base`) for this
/// view, exactly as the full pass does: from the object's hold when the scaled distance lies
/// in it, else through its entity (which records a new hold).
fn pick_levels(shared: &WordInputs<'_>, base: usize, mut members: u64) -> (bool, f32) {
    let inputs = shared.pass;
    let eye = inputs.view.camera_position();
    let mut changed = false;
    let mut slack = f32::INFINITY;
    while members != 0 {
        let slot = base + members.trailing_zeros() as usize;
        members &= members - 1;
        // SAFETY: `slot` lies in this job's words; no other job touches it.
        let hold = unsafe { &mut *shared.lod_holds.0.add(slot) };
        let distance = inputs.view.distance_sq(hold.center).sqrt();
        let scaled = distance * inputs.lod_scale;
        if hold.above < scaled && scaled <= hold.up_to {
            slack = slack.min(hold_slack(hold, eye, distance, scaled, inputs.lod_scale));
            continue;
        }
        // Until it holds again, the word holds nothing.
        slack = f32::NEG_INFINITY;
        let Ok(object) = inputs.world.entity(shared.entities[slot]) else {
            continue;
        };
        let (Some(mesh), Some(lods)) = (object.get::<&Mesh>(), object.get::<&Lod>()) else {
            continue;
        };
        // SAFETY: as above.
        let (entry, draw) = unsafe { (&*shared.cache.0.add(slot), &mut *shared.draws.0.add(slot)) };
        let center = shared.models[slot].transform_point3(entry.local().center());
        let mut picked = ObjectDraw { mesh: mesh.mesh, material: mesh.material };
        let distance = inputs.view.distance_sq(center).sqrt();
        if let Some(level) = lods.select(distance, inputs.lod_scale, inputs.lod_bias) {
            picked.mesh = level;
        }
        *hold = hold_of(&lods, center, distance * inputs.lod_scale, inputs.lod_bias);
        if *draw != picked {
            *draw = picked;
            changed = true;
            shared.changes.mark_word(slot / BITS_PER_WORD, 1 << (slot % BITS_PER_WORD));
        }
    }
    (changed, slack)
}

/// Debug builds check that a word whose levels were taken as held (`WordLodHold::covers`)
/// has every object of `members` (bits from slot `base`) inside its own hold.
#[cfg(debug_assertions)]
fn check_levels_hold(shared: &WordInputs<'_>, base: usize, mut members: u64) {
    let inputs = shared.pass;
    while members != 0 {
        let slot = base + members.trailing_zeros() as usize;
        members &= members - 1;
        // SAFETY: `slot` lies in this job's words; no other job touches it.
        let hold = unsafe { &*shared.lod_holds.0.add(slot) };
        let scaled = inputs.view.distance_sq(hold.center).sqrt() * inputs.lod_scale;
        assert!(hold.above < scaled && scaled <= hold.up_to, "slot {slot}: its word held a level that no longer holds");
    }
}

/// The hold of the level `ecs::lod::select_level` picks at `scaled` (as `Lod::select` calls
/// it: bias `lods.bias * global_bias`, each level's `max_distance * bias`); none for a NaN.
fn hold_of(lods: &Lod, center: Vec3, scaled: f32, global_bias: f32) -> LodHold {
    let bias = lods.bias * global_bias;
    if scaled.is_nan() || bias.is_nan() || lods.levels.is_empty() {
        return LodHold::NONE;
    }
    let mut above = f32::NEG_INFINITY;
    for level in &lods.levels {
        let threshold = level.max_distance * bias;
        if scaled <= threshold {
            return LodHold { center, above, up_to: threshold };
        }
        above = above.max(threshold);
    }
    // Past every level: the last holds for any farther distance.
    LodHold { center, above, up_to: f32::INFINITY }
}

/// The per-object culls of one word, as the full pass does them: verdicts held since an
/// earlier view (`holds`, frustum only) or cached under this view, else the kernel on the
/// word's boxes, then distance and screen size. Returns the surviving bits and the rejection
/// counts, and makes holds for the kernel's new verdicts when no other cull is on.
fn decide_objects(
    shared: &WordInputs<'_>,
    base: usize,
    drawable: u64,
    forced: u64,
    block: &mut AabbBlock,
    holds: &mut WordObjectHolds,
) -> (u64, [u8; 3]) {
    let inputs = shared.pass;
    let shape = &shared.frustum_shape;
    let eye = inputs.view.camera_position();
    let secondary_culls = inputs.view.has_secondary_culls();
    // Holds stand for the kernel's verdict alone, under a shape they were made in.
    let holding = inputs.frustum_culling && !secondary_culls && shape.steady;
    let mut held = if holding { holds.members_under(shape) & drawable & !forced } else { 0 };
    block.clear();
    let mut pushed = [0u8; BITS_PER_WORD];
    let mut nearest = [0.0f32; BITS_PER_WORD];
    let (mut reused_visible, mut fresh) = (0u64, 0u64);
    let mut rejects = [0u8; 3];
    // The objects the kernel may have to decide: those without a hold, and (below) those
    // whose hold breaks. Their entries and models are asked for before any is read, and the
    // holds' lines before the holds are, so that the word's cache misses overlap instead of
    // following one another.
    let mut members = drawable & !held;
    prefetch_decisions(shared, base, members);
    let mut bits = held;
    while bits != 0 {
        let offset = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        prefetch_entry(shared.object_holds.0, base + offset);
    }
    let mut bits = held;
    while bits != 0 {
        let offset = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        // SAFETY: this job's own slot.
        if unsafe { (*shared.object_holds.at(base + offset)).holds_at(eye, shape) } {
            if holds.visible >> offset & 1 == 1 {
                reused_visible |= 1 << offset;
            } else {
                rejects[0] += 1;
            }
        } else {
            held &= !(1 << offset);
            members |= 1 << offset;
            prefetch_decisions(shared, base, 1 << offset);
        }
    }
    while members != 0 {
        let offset = members.trailing_zeros() as usize;
        members &= members - 1;
        let slot = base + offset;
        // SAFETY: this job's own slot.
        let entry = unsafe { &*shared.cache.0.add(slot) };
        if let Some(verdict) = entry.verdict(inputs.view_epoch) {
            match verdict {
                Verdict::Visible => reused_visible |= 1 << offset,
                Verdict::Frustum => rejects[0] += 1,
                Verdict::Distance => rejects[1] += 1,
                Verdict::Size => rejects[2] += 1,
            }
            continue;
        }
        fresh |= 1 << offset;
        let (center, half) = entry.local().transformed_center_half(&shared.models[slot]);
        if holding {
            nearest[block.len()] = nearest_plane_value(inputs.view.frustum(), center, half);
        }
        pushed[block.len()] = offset as u8;
        block.push_center_half(center, half);
    }
    let inside = super::cull::frustum_bits(inputs, block, &pushed);
    let mut visible = (inside | forced) & fresh;
    rejects[0] += (fresh & !visible).count_ones() as u8;
    let survivors = if secondary_culls { visible & !forced } else { 0 };
    let (too_far, too_small) =
        super::cull::secondary_culls_of(inputs.view, survivors, |offset| &shared.bounds[base + offset]);
    rejects[1] += too_far.count_ones() as u8;
    rejects[2] += too_small.count_ones() as u8;
    visible &= !(too_far | too_small);
    let mut decided = fresh;
    while decided != 0 {
        let offset = decided.trailing_zeros() as usize;
        decided &= decided - 1;
        let verdict = Verdict::of(1u64 << offset, visible, too_far, too_small);
        // SAFETY: this job's own slot.
        unsafe { (*shared.cache.0.add(base + offset)).set_verdict(inputs.view_epoch, verdict) };
    }
    if holding {
        // Holds for the new verdicts; a verdict too close to call holds nothing.
        let slices = block.slices();
        for (lane, &offset) in pushed[..block.len()].iter().enumerate() {
            let bit = 1u64 << offset;
            if forced & bit != 0 {
                continue;
            }
            let center = Vec3::new(slices.center[0][lane], slices.center[1][lane], slices.center[2][lane]);
            let half = Vec3::new(slices.half[0][lane], slices.half[1][lane], slices.half[2][lane]);
            let hold = ObjectHold::of(visible & bit != 0, nearest[lane], center, half, eye, shape);
            // SAFETY: this job's own slot.
            unsafe { shared.object_holds.at(base + usize::from(offset)).write(hold) };
            if hold.holds_at(eye, shape) {
                held |= bit;
            }
        }
        #[cfg(debug_assertions)]
        check_object_holds(shared, base, held & !fresh, holds.visible);
        // The word's other objects (not asked about here) keep theirs.
        let others = holds.members_under(shape) & !drawable;
        let visible = (holds.visible & (others | (held & !fresh))) | (visible & held & fresh);
        *holds = WordObjectHolds { members: others | held, visible, shape: shape.epoch };
    } else {
        holds.members = 0;
    }
    (visible | reused_visible, rejects)
}

/// Asks for the cache entries and models of `members` (bits from slot `base`), which
/// `decide_objects` reads for each: a hint with no effect on any result.
#[inline(always)]
fn prefetch_decisions(shared: &WordInputs<'_>, base: usize, mut members: u64) {
    while members != 0 {
        let offset = members.trailing_zeros() as usize;
        members &= members - 1;
        prefetch_entry(shared.cache.0, base + offset);
        prefetch_entry(shared.models.as_ptr(), base + offset);
    }
}

/// Debug builds check that the objects of `members` (bits from slot `base`) whose frustum
/// verdict was taken from their holds get that verdict from the kernel (`visible`: the kept
/// ones).
#[cfg(debug_assertions)]
fn check_object_holds(shared: &WordInputs<'_>, base: usize, mut members: u64, visible: u64) {
    let inputs = shared.pass;
    while members != 0 {
        let offset = members.trailing_zeros() as usize;
        members &= members - 1;
        // SAFETY: this job's own slot.
        let entry = unsafe { &*shared.cache.0.add(base + offset) };
        let (center, half) = entry.local().transformed_center_half(&shared.models[base + offset]);
        let kept = crate::frustum::aabb_lane(inputs.view.frustum().lanes(), center, half).visible;
        assert_eq!(
            kept,
            visible >> offset & 1 == 1,
            "slot {}: its hold kept a verdict the kernel changed",
            base + offset
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::Kernel;
    use proptest::prelude::*;

    /// A reversed-Z perspective frustum at `eye` looking along `yaw`/`pitch`.
    fn frustum(eye: Vec3, yaw: f32, pitch: f32) -> Frustum {
        let direction = Vec3::new(yaw.sin() * pitch.cos(), pitch.sin(), -yaw.cos() * pitch.cos());
        let view = Mat4::look_to_rh(eye, direction, Vec3::Y);
        let projection = Mat4::perspective_infinite_reverse_rh(1.0, 16.0 / 9.0, 0.1);
        Frustum::from_view_projection(projection * view)
    }

    proptest! {
        /// The word test rejects a word only when the kernel rejects every box in it.
        #[test]
        fn words_clearly_outside_or_inside_agree_with_the_kernel_on_every_box(
            eye in prop::array::uniform3(-50.0f32..50.0),
            yaw in -3.2f32..3.2,
            pitch in -1.5f32..1.5,
            cluster in prop::array::uniform3(-200.0f32..200.0),
            boxes in prop::collection::vec((prop::array::uniform3(-20.0f32..20.0), prop::array::uniform3(0.0f32..6.0)), 1..64),
        ) {
            let frustum = frustum(Vec3::from(eye), yaw, pitch);
            let mut block = AabbBlock::new();
            let mut world_boxes = Vec::new();
            for (offset, half) in &boxes {
                let center = Vec3::from(cluster) + Vec3::from(*offset);
                let half = Vec3::from(*half);
                block.push_center_half(center, half);
                world_boxes.push(Aabb { min: center - half, max: center + half });
            }
            let members = if boxes.len() == 64 { u64::MAX } else { (1u64 << boxes.len()) - 1 };
            let bounds = union_of(&world_boxes, members);
            let mut bits = [0u64];
            Kernel::Scalar.cull_aabbs(&frustum, block.slices(), &mut bits);
            if clearly_outside(&frustum, &bounds) {
                prop_assert_eq!(bits[0], 0, "the kernel keeps a box of a word the word test rejected");
            }
            if clearly_inside(&frustum, &bounds) {
                prop_assert_eq!(bits[0], members, "the kernel rejects a box of a word the word test kept whole");
            }
        }
    }

    proptest! {
        /// A full word's straight loop gives the union the bit walk gives.
        #[test]
        fn a_full_word_union_is_the_union_of_its_boxes(
            boxes in prop::collection::vec((prop::array::uniform3(-1e4f32..1e4), prop::array::uniform3(0.0f32..50.0)), 64),
        ) {
            let boxes: Vec<Aabb> = boxes
                .iter()
                .map(|(center, half)| Aabb { min: Vec3::from(*center) - Vec3::from(*half), max: Vec3::from(*center) + Vec3::from(*half) })
                .collect();
            let walked = boxes.iter().skip(1).fold(boxes[0], |union, aabb| Aabb { min: union.min.min(aabb.min), max: union.max.max(aabb.max) });
            prop_assert_eq!(union_of(&boxes, u64::MAX), walked);
            prop_assert_eq!(union_of(&boxes, u64::MAX >> 1), union_of(&boxes[..63], u64::MAX >> 1));
        }
    }

    proptest! {
        /// Inside a level's hold, `select_level` picks that level again.
        #[test]
        fn a_level_holds_exactly_where_select_picks_it_again(
            max_distances in prop::collection::vec(0.0f32..500.0, 1..6),
            bias in 0.25f32..4.0,
            global_bias in 0.5f32..2.0,
            first in 0.0f32..3000.0,
            second in 0.0f32..3000.0,
        ) {
            let levels = max_distances
                .iter()
                .enumerate()
                .map(|(index, &max_distance)| ecs::LodLevel { mesh: ecs::MeshHandle(index as u32), max_distance })
                .collect();
            let lods = Lod { levels, bias };
            let hold = hold_of(&lods, Vec3::ZERO, first, global_bias);
            let pick = |scaled: f32| lods.select(scaled, 1.0, global_bias);
            prop_assert!(hold.above < first && first <= hold.up_to, "a pick holds where it was made");
            if hold.above < second && second <= hold.up_to {
                prop_assert_eq!(pick(second), pick(first));
            }
        }
    }

    proptest! {
        #[test]
        fn flag_columns_are_the_bits_of_each_byte(flags in proptest::collection::vec(any::<u8>(), 0..=64)) {
            let columns = flag_columns(&flags);
            for (kind, column) in columns.iter().enumerate() {
                let expected = flags.iter().enumerate().fold(0u64, |column, (index, &flag)| column | u64::from(flag >> kind & 1) << index);
                prop_assert_eq!(*column, expected, "column {}", kind);
            }
        }
    }

    #[test]
    fn a_word_touching_a_plane_is_not_outside_and_one_well_past_it_is() {
        let frustum = frustum(Vec3::ZERO, 0.0, 0.0);
        // Looking down -z from the origin: the near plane is at z = -0.1.
        let behind = Aabb { min: Vec3::new(-1.0, -1.0, 5.0), max: Vec3::new(1.0, 1.0, 6.0) };
        assert!(clearly_outside(&frustum, &behind));
        let touching = Aabb { min: Vec3::new(-1.0, -1.0, -0.1), max: Vec3::new(1.0, 1.0, 6.0) };
        assert!(!clearly_outside(&frustum, &touching));
        assert!(!clearly_outside(&Frustum::from_view_projection(Mat4::NAN), &behind), "no planes: nothing is outside");
        let ahead = Aabb { min: Vec3::new(-1.0, -1.0, -20.0), max: Vec3::new(1.0, 1.0, -10.0) };
        assert!(clearly_inside(&frustum, &ahead) && !clearly_inside(&frustum, &touching));
        assert!(!clearly_inside(&Frustum::from_view_projection(Mat4::NAN), &ahead), "no planes: nothing is sure");
    }
}
