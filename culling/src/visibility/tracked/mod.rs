//! Tracked frames: when the change log ([`runtime::changes`]) says which objects may have
//! changed, the stage refreshes only those and culls the rest through what it kept.
//!
//! A full frame (see `cull.rs`) walks every object in storage order. A **tracked frame**
//! runs when the last frame left complete columns and the log names every change since (no
//! "everything"). Then:
//!
//! 0. **Slots**: the entities that were despawned or lost their `Mesh` free their slots
//!    (their columns reset, as the full frame resets a freed slot's), and each newcomer
//!    takes the lowest slot that was free before this frame, or a new one past the count, and
//!    is refreshed like any single entity. The columns follow the count up, or down to one
//!    past the highest slot left in use, as a full frame's would. A game that spawns and
//!    despawns every frame stays on this path.
//! 1. **Refresh**: the archetypes whose watched components were lent mutably (a system's
//!    `&mut WorldTransform` query) go through the full pass's own per-object code
//!    (`run_range`) over their rows; single entities (`get_mut`, a command) through
//!    `refresh_entity_into`, the same arithmetic reached through the entity, in parallel when they are many. Their slots' flag
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
//! (`holds/`).
//!
//! **What must be true.** Everything that changes an object's inputs is in the log: systems
//! get components through `SystemContext` or their parameters, engine code that writes
//! columns through its `Columns` view records its writes (the Transform stage does), and
//! `App::world_mut` makes the next frame a full one. Tag moves made by the tags system change
//! no input: it records them as `Culled`/`Occluded` writes, which this stage does not watch,
//! and its columns take the tags it asked for.
//!
//! The files: `plan.rs` (what to refresh), `refresh.rs` and `flags.rs` (step 1), `words.rs`,
//! `decide.rs` and `objects.rs` (step 2), `unions.rs` (word and group bounds),
//! `occluders.rs` (which objects may occlude), `checks.rs` (what debug builds verify).

use std::any::TypeId;
use std::sync::atomic::{AtomicU32, Ordering};

use ecs::{Aabb, Lod, Mesh, ShadowCaster, SkinnedPose, Transform, Visible, WorldTransform};
use runtime::changes::{ChangeCursor, ChangedSince};

#[cfg(debug_assertions)]
mod checks;
mod decide;
mod flags;
mod objects;
mod occluders;
mod plan;
mod refresh;
pub(super) mod unions;
mod words;

#[cfg(debug_assertions)]
use checks::check_word_bounds;
use decide::{decide_word, word_levels_room};
use occluders::OccluderBits;
use plan::RefreshPlan;
use refresh::{refresh, RefreshScratch, TrackedColumns};
use unions::{group_union, SettledBounds};
use words::{redo_group_bounds, redo_word_bounds, WordCounters, WordInputs, WordState, DECIDE_GRAIN, WORD_GRAIN};
pub(crate) use words::{TrackedTotals, GROUP_WORDS};

use super::answer::Visibility;
use super::cull::PassInputs;
use super::holds::{move_rounding, FrustumShape, LodHold, ObjectHold, WordLodHold, WordPlanes};
use super::objects::EMPTY_BOX;
use super::reads::CullColumns;
use super::segments::Segment;
use super::slots::{ObjectSlots, SlotWork};
use crate::bits::BITS_PER_WORD;
use crate::occlusion::stage::WordGroups;
use crate::occlusion::OccluderMeshes;
use crate::parallel::SharedMut;
use crate::soa::AabbBlock;

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
    occluders: OccluderBits,
    /// What this frame refreshes.
    plan: RefreshPlan,
    refresh_scratch: RefreshScratch,
    /// Per slot with levels of detail: where its pick holds (see [`LodHold`]).
    lod_holds: Vec<LodHold>,
    /// Per slot: where its frustum verdict holds (valid for its word's
    /// `WordObjectHolds::members` only).
    object_holds: Vec<ObjectHold>,
    /// The level rule the holds were found under (a [`LevelsKey`] at the origin): the
    /// global bias, the distance rule's scale, the error rule's view and errors.
    hold_rule: Option<LevelsKey>,
    /// The frustum's shape apart from the camera's position, for the words' frustum holds.
    frustum_shape: FrustumShape,
    /// What the levels of detail were last picked from by the word pass (`None`: the next
    /// word pass under an answer on request must pick them).
    decided_levels: Option<LevelsKey>,
    /// Frames answered on request left the word pass out since it last ran: the objects
    /// refreshed meanwhile picked their levels under an older view.
    words_skipped: bool,
    /// Frames answered on request refreshed objects since the word pass last ran: their
    /// levels have no hold, so only a pass may leave them for a camera that moved.
    refreshed_since_words: bool,
    /// Where the eye was when the word pass last ran, and how far it may move from there
    /// before any level it left could change (the least room of every word's level hold,
    /// less the rounding of the moves; not positive: none).
    levels_anchor: glam::Vec3,
    levels_room: f32,
}

/// Everything a level of detail depends on apart from the object: the camera's position,
/// the distance rule's scale and bias, the error rule's view and the errors' generation. A
/// camera that only turns keeps it.
///
/// The position is the camera's own (its transform's), not the eye the cull rebuilds from
/// the view matrix, which a turn moves by a rounding error: a turn alone keeps the levels
/// picked for the eye of the last word pass, and differs from a fresh pick only for an
/// object within that rounding error of a hand-over.
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct LevelsKey {
    position: [u32; 3],
    lod_scale: u32,
    lod_bias: u32,
    error_view: crate::lod_error::LodErrorView,
    generation: u32,
}

impl LevelsKey {
    /// The key of the pass's level rule for a camera at `position`.
    pub(crate) fn of(inputs: &PassInputs<'_>, position: glam::Vec3) -> LevelsKey {
        LevelsKey {
            position: position.to_array().map(f32::to_bits),
            lod_scale: inputs.lod_scale.to_bits(),
            lod_bias: inputs.lod_bias.to_bits(),
            error_view: inputs.levels.error_view,
            generation: inputs.levels.errors.map_or(0, ecs::LodErrors::generation),
        }
    }
}

impl TrackedState {
    /// The next frame must be a full one.
    pub(crate) fn invalidate(&mut self) {
        self.valid = false;
    }

    /// After a full frame over `words` slot words: the word bounds are computed and every
    /// word is decided afresh next time.
    pub(crate) fn after_full_frame(&mut self, words: usize, visibility: &Visibility, slots: &ObjectSlots) {
        // Slots may have changed hands: forget every archetype's, and every level's hold.
        self.plan.forget_slots();
        self.lod_holds.clear();
        self.lod_holds.resize(slots.len(), LodHold::NONE);
        self.object_holds.clear();
        self.object_holds.resize(slots.len(), ObjectHold::NONE);
        self.words.clear();
        self.words.resize(words, WordState { dirty: false, ..WordState::default() });
        self.word_bounds.resize(words, EMPTY_BOX);
        self.settled.clear();
        self.settled.resize(words, SettledBounds::NONE);
        self.decided_levels = None;
        self.words_skipped = false;
        self.refreshed_since_words = false;
        self.levels_room = f32::NEG_INFINITY;
        self.valid = self.forced.len() >= words && self.with_lod.len() >= words;
        if self.valid {
            let (drawable, forced, bounds) =
                (&visibility.drawable[..], &self.forced[..], &visibility.objects.bounds[..]);
            let word_bounds = SharedMut(self.word_bounds.as_mut_ptr());
            let _job_label = runtime::profiling::job_label("visibility word bounds job");
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
    /// Whether this frame may be tracked, and if so what to refresh (see `plan.rs`): false
    /// when the log says everything changed or misses a change. On a tracked frame the
    /// newcomers already have their slots, the leavers' slots are free, and the columns fit
    /// the new slot count.
    pub(crate) fn plan(
        &mut self,
        world: &CullColumns<'_>,
        visibility: &mut Visibility,
        work: &mut SlotWork,
        segments: &[Segment],
        objects: usize,
    ) -> bool {
        runtime::profile_zone!("visibility plan");
        self.plan.clear();
        let slot_count = work.slots.len();
        if !self.valid || self.changed.everything || self.words.len() != crate::bits::words_for(slot_count) {
            return false;
        }
        if !self.plan.find(&self.changed, world, &mut visibility.index, &mut work.slots, segments, objects) {
            return false;
        }
        if work.slots.len() != slot_count {
            self.resize(visibility, work);
        }
        true
    }

    /// Fits every per-slot and per-word column to a slot count a tracked frame changed:
    /// slots newcomers took past the old count get the values of an empty slot in words never
    /// decided (the refresh and the word pass fill them); slots dropped past the highest one
    /// in use are cut off, and the last word, if they shared it, is decided again.
    fn resize(&mut self, visibility: &mut Visibility, work: &mut SlotWork) {
        let slot_count = work.slots.len();
        let words = crate::bits::words_for(slot_count);
        let tail = slot_count % BITS_PER_WORD;
        // The bits of a cut word that still name slots.
        let kept = if tail == 0 { u64::MAX } else { (1u64 << tail) - 1 };
        visibility.objects.resize(slot_count);
        // Nothing was marked yet this frame; the dropped slots are gone, not changed.
        visibility.changes.begin(slot_count);
        for column in [
            &mut visibility.drawable,
            &mut visibility.casters,
            &mut work.tagged,
            &mut work.occluded_tag,
            &mut self.forced,
            &mut self.with_lod,
            &mut self.occluders.bits,
        ] {
            column.resize(words, 0);
            if let Some(last) = column.last_mut() {
                *last &= kept;
            }
        }
        work.slot_flags.resize(slot_count, 0);
        self.words.resize(words, WordState::default());
        if let Some(last) = self.words.last_mut() {
            // A word that lost slots: its bounds are found again without them (as if they
            // had moved), and its objects decided again.
            if !kept != 0 {
                last.dirty = true;
                last.refreshed |= !kept;
            }
        }
        self.word_bounds.resize(words, EMPTY_BOX);
        self.settled.resize(words, SettledBounds::NONE);
        self.group_bounds.resize(words.div_ceil(GROUP_WORDS), EMPTY_BOX);
        self.lod_holds.resize(slot_count, LodHold::NONE);
        self.object_holds.resize(slot_count, ObjectHold::NONE);
    }

    /// Runs a tracked frame (after [`TrackedState::plan`] said yes): refresh, then the word
    /// pass; leaves the pre-occlusion bits in `visibility.bits`. Returns the totals and
    /// whether the word pass ran.
    ///
    /// A frame answered on request (`on_request`: the camera's position) leaves the word
    /// pass out (so the bits are not this frame's) unless a level of detail could change:
    /// objects with levels exist, the camera's position or the level rule changed since
    /// the pass last ran ([`LevelsKey`]), and the move may take a level past a hand-over
    /// (see [`TrackedState::levels_held`]). A turning camera, a still one, a camera creeping
    /// within its levels' room and a still world then cost only the refresh of what changed.
    /// The words the refresh marked stay marked, and the next word pass decides them; it
    /// picks the levels of every word, in view or not, since a turn may bring any word into
    /// view without a pass.
    pub(crate) fn run(
        &mut self,
        inputs: &PassInputs<'_>,
        visibility: &mut Visibility,
        work: &mut SlotWork,
        on_request: Option<glam::Vec3>,
    ) -> (TrackedTotals, bool) {
        let mut totals = TrackedTotals::default();
        let slot_count = work.slots.len();
        {
            runtime::profile_zone!("visibility refresh");
            let tracked = TrackedColumns {
                forced: &mut self.forced,
                with_lod: &mut self.with_lod,
                words: &mut self.words,
                lod_holds: &mut self.lod_holds,
            };
            totals.bounds_computed = refresh(&self.plan, &mut self.refresh_scratch, tracked, inputs, visibility, work);
        }
        let levels = on_request.map(|position| LevelsKey::of(inputs, position));
        let levels_move = self.decided_levels != levels && self.with_lod.iter().any(|&word| word != 0);
        let refreshed = !self.plan.is_empty();
        if on_request.is_some() && (!levels_move || self.levels_held(levels, inputs.view.camera_position(), refreshed))
        {
            self.words_skipped = true;
            self.refreshed_since_words |= refreshed;
            return (totals, false);
        }
        self.decided_levels = levels;
        self.refreshed_since_words = false;
        let repick_refreshed = std::mem::take(&mut self.words_skipped);
        runtime::profile_zone!("visibility words");
        self.frustum_shape.update(inputs.view.frustum(), inputs.view.camera_position());
        // A level's hold is found under one rule: another voids them all.
        let hold_rule = Some(LevelsKey::of(inputs, glam::Vec3::ZERO));
        if hold_rule != self.hold_rule || self.lod_holds.len() != slot_count {
            self.hold_rule = hold_rule;
            self.lod_holds.clear();
            self.lod_holds.resize(slot_count, LodHold::NONE);
            for word in &mut self.words {
                word.lod_hold = WordLodHold::NONE;
            }
        }
        let counters = WordCounters::default();
        let eye = inputs.view.camera_position();
        // The least room of the words' levels, as f32 bits (a room is not negative).
        let levels_room = AtomicU32::new(f32::INFINITY.to_bits());
        // The jobs write each word's bits and flag its changed draws as they decide it: one
        // serial pass fewer over the word states each.
        visibility.bits.resize(slot_count);
        self.occluders.begin_frame(self.words.len());
        let draws_changed_words = &self.occluders.draws_changed_words;
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
            repick_refreshed,
            pick_outside: on_request.is_some(),
            planes: WordPlanes::of(inputs.view.frustum()),
            changes,
        };
        // Jobs take whole groups of words (the grain is a multiple of the group size), so each
        // redoes the bounds of its own refreshed words and then of their groups.
        const { assert!(DECIDE_GRAIN.is_multiple_of(GROUP_WORDS)) };
        let _job_label = runtime::profiling::job_label("visibility decide words job");
        runtime::jobs::parallel_for_chunks(&mut self.words, DECIDE_GRAIN, |first, chunk| {
            let mut local = TrackedTotals::default();
            let mut room = f32::INFINITY;
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
                room = room.min(word_levels_room(&shared, index, word, eye));
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
            // `max`: a NaN room is none.
            levels_room.fetch_min(room.max(0.0).to_bits(), Ordering::Relaxed);
        });
        #[cfg(debug_assertions)]
        check_word_bounds(&self.word_bounds, &visibility.objects.bounds, &visibility.drawable, &self.forced);
        counters.into_totals(&mut totals);
        self.levels_anchor = eye;
        self.levels_room = f32::from_bits(levels_room.into_inner());
        (totals, true)
    }

    /// Whether every level the last word pass left is still the pick for an eye at `eye`, so
    /// a frame answered on request may leave the pass out although the camera moved: the
    /// level rule is the pass's (only the camera's position changed), no object was
    /// refreshed since (a refreshed object's level has no hold), and the eye stayed within
    /// the pass's room of where the pass had it (each word's level hold bounds how far the
    /// eye may go before one of its levels could change: `holds/lod.rs`).
    fn levels_held(&self, levels: Option<LevelsKey>, eye: glam::Vec3, refreshed: bool) -> bool {
        let (Some(decided), Some(now)) = (self.decided_levels, levels) else { return false };
        let same_rule = LevelsKey { position: now.position, ..decided } == now;
        let anchor = self.levels_anchor;
        same_rule
            && !refreshed
            && !self.refreshed_since_words
            && eye.distance(anchor) + move_rounding(eye, anchor) < self.levels_room
    }

    /// Finds, per slot word, the drawable objects whose drawn mesh has an occluder in
    /// `meshes` (see `occluders.rs`).
    pub(crate) fn update_occluder_bits(&mut self, visibility: &Visibility, meshes: &OccluderMeshes, full_frame: bool) {
        if self.valid {
            self.occluders.update(&mut self.words, visibility, meshes, full_frame);
        }
    }

    /// The occluder bits were not kept up to date this frame (occlusion off or no
    /// registry): the next [`TrackedState::update_occluder_bits`] finds them all again.
    pub(crate) fn forget_occluder_bits(&mut self) {
        self.occluders.forget();
    }

    /// What the occlusion step may use of the words: their bounds, and their occluder bits
    /// when `with_occluders` (after [`TrackedState::update_occluder_bits`] this frame).
    pub(crate) fn groups(&self, with_occluders: bool) -> WordGroups<'_> {
        if !self.valid {
            return WordGroups::default();
        }
        let occluders = if with_occluders { &self.occluders.bits[..] } else { &[] };
        WordGroups { occluders, bounds: &self.word_bounds, groups: &self.group_bounds }
    }
}
