//! A tracked frame's decision for one word of 64 slots: keep a clean word's answer under the
//! same view, reject a word clearly outside the frustum at once, take the levels of detail
//! its hold keeps or pick them again, else hand the objects to the per-object culls
//! (`objects.rs`).

#[cfg(debug_assertions)]
use super::checks::{check_decided, check_held_level, check_levels_hold, check_side_holds};
use super::objects::decide_objects;
use super::words::{TrackedTotals, WordInputs, WordState};
use crate::bits::BITS_PER_WORD;
use crate::soa::AabbBlock;
use crate::visibility::holds::{hold_slack, move_rounding, FrustumHold, WordLodHold, WordSide};
use crate::visibility::objects::ObjectDraw;
use crate::visibility::reads::read_unborrowed;
use ecs::{Lod, Mesh};

/// Decides word `index`: reuses a clean word's answer under the same view, rejects a word
/// clearly outside the frustum at once, else tests its objects one by one.
pub(super) fn decide_word(
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
        count_decided(local, word.culled, word.rejects);
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
    let side = if !keeps_answers && inputs.frustum_culling && forced == 0 && drawable != 0 {
        word_side(shared, index, word, secondary_culls)
    } else {
        WordSide::Straddles
    };
    let outside = side == WordSide::Outside;
    refresh_levels(shared, word, base, with_lod, outside && !shared.pick_outside);
    let previous = Previous { drawable: word.decided_drawable, culled: word.culled, rejects: word.rejects };
    let changed = word.refreshed | (previous.drawable ^ drawable);
    word.epoch = inputs.view_epoch;
    word.dirty = false;
    word.refreshed = 0;
    let (decided, decided_visible) = (std::mem::take(&mut word.decided), std::mem::take(&mut word.decided_visible));
    word.decided_drawable = drawable;
    if keeps_answers {
        let masks = ChangedMasks { drawable, forced, changed, decided, decided_visible };
        (word.culled, word.rejects) = decide_changed(shared, base, masks, previous, block, word);
        count_decided(local, word.culled, word.rejects);
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
    count_decided(local, culled, rejects);
}

/// Adds a decided word's visible objects and rejects to the totals.
#[inline(always)]
fn count_decided(local: &mut TrackedTotals, culled: u64, rejects: [u8; 3]) {
    local.visible += culled.count_ones() as usize;
    local.frustum_rejected += usize::from(rejects[0]);
    local.distance_rejected += usize::from(rejects[1]);
    local.size_rejected += usize::from(rejects[2]);
}

/// Which side of the frustum word `index` lies on: from its hold while the eye stays in its
/// slack, else tested (recording a new hold for a clean word under a steady frustum).
#[inline(always)]
fn word_side(shared: &WordInputs<'_>, index: usize, word: &mut WordState, secondary_culls: bool) -> WordSide {
    let eye = shared.pass.view.camera_position();
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
                FrustumHold::decide(shared.pass.view.frustum(), shared.word_bounds(index), eye, &shared.frustum_shape);
            word.frustum_hold = hold;
            side
        }
        // A turning camera, or a refreshed word: the plain tests, without the slack a hold
        // would need.
        None => {
            word.frustum_hold = FrustumHold::NONE;
            // Inside is only asked for when no other cull is on, as below.
            shared.planes.side(shared.word_bounds(index), !secondary_culls)
        }
    }
}

/// Voids the holds of the word's refreshed objects, then picks the levels of detail of its
/// other objects with levels under a new view (unless their word hold covers the eye, or the
/// word is outside the view).
#[inline(always)]
fn refresh_levels(shared: &WordInputs<'_>, word: &mut WordState, base: usize, with_lod: u64, outside: bool) {
    let inputs = shared.pass;
    let eye = inputs.view.camera_position();
    let to_pick = if shared.repick_refreshed { with_lod } else { with_lod & !word.refreshed };
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
}

/// How far the eye may move from `eye` before a level of word `index`'s drawable objects
/// with levels could change: its level hold's room left, less the rounding of the move;
/// none (negative infinity) where the hold does not cover every such object; infinite for a
/// word without levels.
#[inline(always)]
pub(super) fn word_levels_room(shared: &WordInputs<'_>, index: usize, word: &WordState, eye: glam::Vec3) -> f32 {
    let with_lod = shared.with_lod[index] & shared.drawable[index];
    if with_lod == 0 {
        return f32::INFINITY;
    }
    let hold = &word.lod_hold;
    if with_lod & !hold.members != 0 || hold.scale_bits != shared.pass.lod_scale.to_bits() {
        return f32::NEG_INFINITY;
    }
    // `max(-inf)`: a NaN room is none.
    (hold.slack - eye.distance(hold.anchor) - move_rounding(eye, hold.anchor)).max(f32::NEG_INFINITY)
}

/// A word's answer as last decided.
#[derive(Clone, Copy)]
struct Previous {
    drawable: u64,
    culled: u64,
    rejects: [u8; 3],
}

/// A word's objects this frame: drawable, forced (non-finite), changed since its last
/// decision, and those the refresh decided under this view (and of them, the visible).
#[derive(Clone, Copy)]
struct ChangedMasks {
    drawable: u64,
    forced: u64,
    changed: u64,
    decided: u64,
    decided_visible: u64,
}

/// The answer of a word under the same view with only the frustum on: its unchanged objects
/// keep theirs, the refresh's decisions stand, and only the other changed objects are
/// tested. Returns the visible bits and the rejects.
#[inline(always)]
fn decide_changed(
    shared: &WordInputs<'_>,
    base: usize,
    ChangedMasks { drawable, forced, changed, decided, decided_visible }: ChangedMasks,
    previous: Previous,
    block: &mut AabbBlock,
    word: &mut WordState,
) -> (u64, [u8; 3]) {
    let kept = previous.culled & !changed;
    let kept_rejected = (previous.drawable & !changed & !previous.culled).count_ones() as u8;
    debug_assert_eq!(
        u32::from(previous.rejects[0]),
        (previous.drawable & !previous.culled).count_ones(),
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
    (kept | known_visible | culled, rejects)
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
            #[cfg(debug_assertions)]
            check_held_level(shared, slot);
            slack = slack.min(hold_slack(hold, eye, distance, scaled, inputs.lod_scale));
            continue;
        }
        let entity = shared.entities[slot];
        // SAFETY: the word pass runs in the Visibility system, which declares reads of both.
        let read =
            unsafe { (read_unborrowed::<Mesh>(inputs.world, entity), read_unborrowed::<Lod>(inputs.world, entity)) };
        let (Some(mesh), Some(lods)) = read else {
            // Without its levels the object holds nothing, and its word neither.
            slack = f32::NEG_INFINITY;
            continue;
        };
        // SAFETY: as above.
        let (entry, draw) = unsafe { (&*shared.cache.0.add(slot), &mut *shared.draws.0.add(slot)) };
        let model = &shared.models[slot];
        let center = model.transform_point3(entry.local().center());
        let mut picked = ObjectDraw { mesh: mesh.mesh, material: mesh.material };
        let (level, new_hold) =
            inputs.levels.pick_with_hold(inputs.view, lods, model, entry.local(), draw.mesh, center);
        if let Some(level) = level {
            picked.mesh = level;
        }
        *hold = new_hold;
        // A fresh hold holds from here: the word keeps the room it leaves.
        let distance = inputs.view.distance_sq(hold.center).sqrt();
        slack = slack.min(hold_slack(hold, eye, distance, distance * inputs.lod_scale, inputs.lod_scale));
        if *draw != picked {
            *draw = picked;
            changed = true;
            shared.changes.mark_word(slot / BITS_PER_WORD, 1 << (slot % BITS_PER_WORD));
        }
    }
    (changed, slack)
}
