//! A tracked frame's refresh: the archetypes the change log names as written go through the
//! full pass's own per-object code (`run_range`) over their rows, single entities (newcomers
//! included) through [`refresh_entity_into`] (the same arithmetic reached through the
//! entity), freed slots become undrawable holes; their flag bits go into the word columns and
//! their words are marked for the word pass.

use std::sync::atomic::Ordering;

use ecs::{Aabb, Lod, Mesh, ShadowCaster, SkinnedPose, Transform, Visible, WorldTransform};
use glam::Mat4;
use runtime::hecs::Entity;

use super::flags::{FlagWriter, DENSE_REFRESH};
use super::plan::RefreshPlan;
use super::words::WordState;
use crate::bits::{words_for, BITS_PER_WORD};
use crate::parallel::SharedMut;
use crate::visibility::answer::Visibility;
use crate::visibility::cache::CachedBounds;
use crate::visibility::cull::{is_finite_object, run_range, PassInputs, PassOutputs, PassTotals, SlotFlag};
use crate::visibility::holds::LodHold;
use crate::visibility::objects::{ObjectColumns, ObjectDraw, EMPTY_BOX};
use crate::visibility::reads::{read_unborrowed, CullColumns};
use crate::visibility::segments::GRAIN;
use crate::visibility::slots::SlotWork;

/// Scratch of [`refresh`]: per slot word, the slots the archetype refresh wrote (all zero
/// between frames), and the words with any; the single entities to refresh, each once, and
/// what refreshing each gave.
#[derive(Default)]
pub(super) struct RefreshScratch {
    mask: Vec<u64>,
    words: Vec<u32>,
    singles: Vec<(u32, Entity)>,
    outcomes: Vec<Outcome>,
}

/// What refreshing one single entity gave: its flag byte, whether its box was computed, and
/// whether its slot was drawn before.
#[derive(Clone, Copy, Default)]
struct Outcome {
    flag: u8,
    fresh: bool,
    was_drawn: bool,
}

/// From this many single entities on, they are refreshed in parallel.
const PARALLEL_SINGLES: usize = 256;

/// Single entities per job of the parallel refresh.
const SINGLES_GRAIN: usize = 128;

/// The tracked state a refresh writes besides the answer and the slot columns.
pub(super) struct TrackedColumns<'a> {
    /// Per slot word: drawable objects whose box is not finite.
    pub(super) forced: &'a mut [u64],
    /// Per slot word: drawable objects with levels of detail.
    pub(super) with_lod: &'a mut [u64],
    pub(super) words: &'a mut [WordState],
    pub(super) lod_holds: &'a mut [LodHold],
}

/// Refreshes what `plan` lists: the written archetypes through `run_range`, the single
/// entities through [`refresh_entity_into`]; updates the slots' flag bits and marks their words
/// dirty. Returns how many boxes were computed.
pub(super) fn refresh(
    plan: &RefreshPlan,
    scratch: &mut RefreshScratch,
    tracked: TrackedColumns<'_>,
    inputs: &PassInputs<'_>,
    visibility: &mut Visibility,
    work: &mut SlotWork,
) -> usize {
    for &(slot, entity) in &plan.spawned {
        visibility.objects.entities[slot as usize] = entity;
    }
    let mut computed = refresh_segments(plan, inputs, visibility, work);
    let RefreshScratch { mask, words, singles, outcomes } = scratch;
    mark_segment_words(plan, work, mask, words);
    let Visibility { objects: columns, drawable, casters, changes, .. } = &mut *visibility;
    let SlotWork { slot_flags, tagged, occluded_tag, .. } = &mut *work;
    let TrackedColumns { forced, with_lod, words: word_states, lod_holds } = tracked;
    let flag_columns = [&mut drawable[..], &mut casters[..], &mut tagged[..], &mut occluded_tag[..], forced, with_lod];
    let mut writer = FlagWriter::new(flag_columns, word_states, lod_holds);
    // A freed slot becomes an undrawable hole, as a full frame leaves it.
    for &slot in &plan.freed {
        let slot = slot as usize;
        let was_drawn = columns.draws[slot] != ObjectDraw::NONE;
        columns.reset(slot);
        columns.entities[slot] = Entity::DANGLING;
        changes.mark(slot);
        writer.set(slot, u8::from(was_drawn) << SlotFlag::DrawChanged as u8);
    }
    write_segment_flags(words, mask, slot_flags, &mut writer);
    writer.flush();
    pick_singles(plan, mask, singles);
    refresh_singles(singles, outcomes, columns, inputs);
    for (&(slot, _), outcome) in singles.iter().zip(outcomes.iter()) {
        let slot = slot as usize;
        if outcome.fresh || outcome.flag >> SlotFlag::DrawChanged as u8 & 1 == 1 {
            let drawn = columns.draws[slot] != ObjectDraw::NONE;
            if drawn && !outcome.was_drawn {
                changes.mark_appeared(slot);
            } else {
                changes.mark(slot);
            }
        }
        computed += usize::from(outcome.fresh);
        writer.set(slot, outcome.flag);
    }
    #[cfg(debug_assertions)]
    check_nothing_missed(inputs.world, visibility);
    computed
}

/// The written archetypes' rows through the full pass's `run_range`; returns how many boxes
/// were computed.
#[inline]
fn refresh_segments(
    plan: &RefreshPlan,
    inputs: &PassInputs<'_>,
    visibility: &mut Visibility,
    work: &mut SlotWork,
) -> usize {
    let pass_totals = PassTotals::default();
    let objects = work.slots.storage().len();
    let outputs = PassOutputs::of(visibility, work, objects);
    let _refresh_label = runtime::profiling::job_label("visibility refresh job");
    for segment in &plan.segments {
        let range = segment.start..segment.start + segment.len;
        runtime::jobs::parallel_for_ranges(range, GRAIN, |range| run_range(inputs, &outputs, &pass_totals, range));
    }
    pass_totals.bounds_computed.load(Ordering::Relaxed)
}

/// Gathers the refreshed archetypes' slots per word (`mask`, and `words` listing the words
/// with any), so each word's flags are written once: storage order need not follow slot
/// order (tags reshuffle rows, and slots freed by despawns are reused), and a run per change
/// of word would then be a run per slot.
#[inline]
fn mark_segment_words(plan: &RefreshPlan, work: &SlotWork, mask: &mut Vec<u64>, words: &mut Vec<u32>) {
    mask.resize(words_for(work.slots.len()), 0);
    words.clear();
    for segment in &plan.segments {
        for &slot in &work.slots.storage()[segment.start..segment.start + segment.len] {
            let (word, bit) = (slot as usize / BITS_PER_WORD, 1u64 << (slot as usize % BITS_PER_WORD));
            if mask[word] == 0 {
                words.push(word as u32);
            }
            mask[word] |= bit;
        }
    }
}

/// Writes the flag bytes of the slots marked in `mask` (clearing it), word by word: slot by
/// slot in a sparse word, the whole word at once in a dense one.
#[inline]
fn write_segment_flags(words: &[u32], mask: &mut [u64], slot_flags: &[u8], writer: &mut FlagWriter<'_>) {
    for &word in words {
        let word = word as usize;
        let mut bits = std::mem::take(&mut mask[word]);
        if bits.count_ones() <= DENSE_REFRESH {
            while bits != 0 {
                let slot = word * BITS_PER_WORD + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                writer.add(slot, slot_flags[slot], true);
            }
        } else {
            let start = word * BITS_PER_WORD;
            writer.add_word(word, bits, &slot_flags[start..(start + BITS_PER_WORD).min(slot_flags.len())]);
        }
    }
}

/// The single entities to refresh, each once (the log may name one twice, and one in a
/// refreshed archetype is done already); `mask` is all zero again after.
#[inline]
fn pick_singles(plan: &RefreshPlan, mask: &mut [u64], singles: &mut Vec<(u32, Entity)>) {
    singles.clear();
    for &(slot, entity) in &plan.entities {
        let (word, bit) = (slot as usize / BITS_PER_WORD, 1u64 << (slot as usize % BITS_PER_WORD));
        if mask[word] & bit == 0 {
            mask[word] |= bit;
            singles.push((slot, entity));
        }
    }
    for &(slot, _) in singles.iter() {
        mask[slot as usize / BITS_PER_WORD] = 0;
    }
}

/// Refreshes each single entity into `outcomes`. Each writes only its own slot's entries, so
/// many are refreshed in parallel (a hierarchy's moved children are hundreds a frame, each a
/// few component lookups); their flags then go into the word columns in order.
#[inline]
fn refresh_singles(
    singles: &[(u32, Entity)],
    outcomes: &mut Vec<Outcome>,
    columns: &mut ObjectColumns,
    inputs: &PassInputs<'_>,
) {
    outcomes.clear();
    outcomes.resize(singles.len(), Outcome::default());
    let (models, bounds, draws, cache) = (
        SharedMut(columns.models.as_mut_ptr()),
        SharedMut(columns.bounds.as_mut_ptr()),
        SharedMut(columns.draws.as_mut_ptr()),
        SharedMut(columns.cache.as_mut_ptr()),
    );
    let refresh_one = |&(slot, entity): &(u32, Entity)| {
        let slot = slot as usize;
        // SAFETY: every slot of `singles` is distinct and below the columns' length, so no
        // two calls touch the same entries, and nothing else touches them meanwhile.
        let entries = unsafe {
            SlotEntries {
                model: &mut *models.at(slot),
                bounds: &mut *bounds.at(slot),
                draw: &mut *draws.at(slot),
                cache: &mut *cache.at(slot),
            }
        };
        let was_drawn = *entries.draw != ObjectDraw::NONE;
        // SAFETY: this runs in the Visibility system, which declares reads of what it reads.
        let (flag, fresh) = unsafe { refresh_entity_into(inputs.world, entity, entries, Some(inputs)) };
        Outcome { flag, fresh, was_drawn }
    };
    if singles.len() >= PARALLEL_SINGLES {
        let _label = runtime::profiling::job_label("visibility refresh entities job");
        runtime::jobs::parallel_for_chunks(outcomes, SINGLES_GRAIN, |first, chunk| {
            for (outcome, single) in chunk.iter_mut().zip(&singles[first..]) {
                *outcome = refresh_one(single);
            }
        });
    } else {
        for (outcome, single) in outcomes.iter_mut().zip(singles.iter()) {
            *outcome = refresh_one(single);
        }
    }
}

/// One slot's entries of the per-object columns.
struct SlotEntries<'a> {
    model: &'a mut Mat4,
    bounds: &'a mut Aabb,
    draw: &'a mut ObjectDraw,
    cache: &'a mut CachedBounds,
}

/// Refreshes one object's column entries through its entity, with the same arithmetic as
/// `run_range`, the level of detail under `view` included (the verdict is left to the word
/// pass). Returns its flag byte (without the visible bit) and whether its box was computed.
///
/// # Safety
/// As [`read_unborrowed`]: no one writes the entity's components meanwhile.
unsafe fn refresh_entity_into(
    world: &CullColumns<'_>,
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
    // SAFETY: the caller's duty: no one writes these components meanwhile.
    let (mesh, shown, matrix, transform, pose, lods) = unsafe {
        (
            read_unborrowed::<Mesh>(world, entity),
            read_unborrowed::<Visible>(world, entity),
            read_unborrowed::<WorldTransform>(world, entity),
            read_unborrowed::<Transform>(world, entity),
            read_unborrowed::<SkinnedPose>(world, entity),
            read_unborrowed::<Lod>(world, entity),
        )
    };
    let source = mesh.and_then(|mesh| {
        if !(shown.is_none_or(|shown| shown.0) && mesh.is_drawable()) {
            return None;
        }
        let model = match (matrix, transform) {
            (Some(world), _) => world.0,
            (None, Some(local)) => local.to_matrix(),
            (None, None) => return None,
        };
        let local = match pose {
            Some(pose) => mesh.local_bounds(Some(pose)),
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
    flag |= u8::from(lods.is_some()) << SlotFlag::HasLod as u8;
    let mut draw = draw;
    if let (Some(lods), Some(inputs)) = (lods, view) {
        // As `draw_of`: the level the rule picks, the slot's drawn mesh its state.
        if let Some(level) = inputs.levels.pick(inputs.view, lods, &model, &local_box, entries.draw.mesh) {
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
            let finite = is_finite_object(&model, center, half);
            *entries.model = model;
            *entries.cache = CachedBounds::new(local_box, finite);
            *entries.bounds = Aabb { min: center - half, max: center + half };
            (finite, true)
        }
    };
    flag |= u8::from(!finite) << SlotFlag::NonFinite as u8;
    (flag, fresh)
}

/// Debug builds (so every test) check what a tracked frame relies on: after the refresh,
/// every drawable object's columns come from its current matrix and box, and its flag bits
/// match its archetype. A failure is a write the change log did not see, which would be a
/// stale box (false-hidden) in a release build. Skipped above 50k objects to bound its cost.
#[cfg(debug_assertions)]
fn check_nothing_missed(world: &CullColumns<'_>, visibility: &Visibility) {
    if visibility.len() > 50_000 {
        return;
    }
    let mut query = world.query::<runtime::hecs::Entity>().with::<&Mesh>();
    for entity in query.iter() {
        let slot = visibility.index.slot_of(entity).expect("a tracked frame gives every newcomer its slot first");
        let slot_index = slot as usize;
        let columns = &visibility.objects;
        let (mut model, mut bounds) = (columns.models[slot_index], columns.bounds[slot_index]);
        let (mut draw, mut cache) = (columns.draws[slot_index], columns.cache[slot_index]);
        let entries = SlotEntries { model: &mut model, bounds: &mut bounds, draw: &mut draw, cache: &mut cache };
        // SAFETY: as in `refresh`: inside the Visibility system.
        let (flag, fresh) = unsafe { refresh_entity_into(world, entity, entries, None) };
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
