//! What debug builds (so every test) check during a tracked frame's word pass: that every
//! shortcut it took (a verdict handed over by the refresh, a word's kept bounds, a held side
//! of the frustum, held levels, held object verdicts) gives what the full work would.
#![cfg(debug_assertions)]

use ecs::Aabb;

use super::unions::word_union;
use super::words::WordInputs;
use crate::visibility::cache::Verdict;
use crate::visibility::holds::{FrustumHold, WordSide};
use crate::visibility::reads::read_unborrowed;

/// Debug builds check that the verdicts a refresh handed to the word pass (`known`, the
/// visible ones `visible`, bits from slot `base`) are those cached under this view.
pub(super) fn check_decided(shared: &WordInputs<'_>, base: usize, mut known: u64, visible: u64) {
    while known != 0 {
        let offset = known.trailing_zeros() as usize;
        known &= known - 1;
        // SAFETY: this job's own slot, only read.
        let entry = unsafe { &*shared.cache.0.add(base + offset) };
        let expected = if visible >> offset & 1 == 1 { Verdict::Visible } else { Verdict::Frustum };
        assert_eq!(entry.verdict(shared.pass.view_epoch), Some(expected), "slot {}", base + offset);
    }
}

/// Debug builds (so every test) check that the bounds kept word by word are the union of
/// each word's boxes, as a full frame finds them. Skipped above 50k objects.
pub(super) fn check_word_bounds(word_bounds: &[Aabb], bounds: &[Aabb], drawable: &[u64], forced: &[u64]) {
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
pub(super) fn check_side_holds(shared: &WordInputs<'_>, index: usize, side: WordSide) {
    let inputs = shared.pass;
    let (found, _) = FrustumHold::decide(
        inputs.view.frustum(),
        shared.word_bounds(index),
        inputs.view.camera_position(),
        &shared.frustum_shape,
    );
    assert_eq!(found, side, "word {index}: its frustum hold kept a side the word is no longer on");
}

/// Debug builds check that a word whose levels were taken as held (`WordLodHold::covers`)
/// has every object of `members` (bits from slot `base`) inside its own hold.
pub(super) fn check_levels_hold(shared: &WordInputs<'_>, base: usize, mut members: u64) {
    let inputs = shared.pass;
    while members != 0 {
        let slot = base + members.trailing_zeros() as usize;
        members &= members - 1;
        // SAFETY: `slot` lies in this job's words; no other job touches it.
        let hold = unsafe { &*shared.lod_holds.0.add(slot) };
        let scaled = inputs.view.distance_sq(hold.center).sqrt() * inputs.lod_scale;
        assert!(hold.above < scaled && scaled <= hold.up_to, "slot {slot}: its word held a level that no longer holds");
        check_held_level(shared, slot);
    }
}

/// Debug builds check that object `slot`, whose level its hold kept, gets that level from a
/// pick through its entity. Skipped above 50k objects.
pub(super) fn check_held_level(shared: &WordInputs<'_>, slot: usize) {
    use ecs::{Lod, Mesh};
    if shared.entities.len() > 50_000 {
        return;
    }
    let inputs = shared.pass;
    let entity = shared.entities[slot];
    // SAFETY: the word pass runs in the Visibility system, which declares reads of both.
    let read = unsafe { (read_unborrowed::<Mesh>(inputs.world, entity), read_unborrowed::<Lod>(inputs.world, entity)) };
    let (Some(_), Some(lods)) = read else { return };
    // SAFETY: this job's own slot, only read.
    let (entry, draw) = unsafe { (&*shared.cache.0.add(slot), &*shared.draws.0.add(slot)) };
    let model = &shared.models[slot];
    let center = model.transform_point3(entry.local().center());
    let (picked, _) = inputs.levels.pick_with_hold(inputs.view, lods, model, entry.local(), draw.mesh, center);
    if let Some(picked) = picked {
        assert_eq!(picked, draw.mesh, "slot {slot}: its hold kept a level a pick changes");
    }
}

/// Debug builds check that the objects of `members` (bits from slot `base`) whose frustum
/// verdict was taken from their holds get that verdict from the kernel (`visible`: the kept
/// ones).
pub(super) fn check_object_holds(shared: &WordInputs<'_>, base: usize, mut members: u64, visible: u64) {
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
