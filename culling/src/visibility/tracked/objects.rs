//! The per-object culls of one word in a tracked frame, as the full pass does them: verdicts
//! held since an earlier view or cached under this one, else the SIMD kernel on the word's
//! boxes, then distance and screen size.

use glam::Vec3;

#[cfg(debug_assertions)]
use super::checks::check_object_holds;
use super::words::WordInputs;
use crate::bits::BITS_PER_WORD;
use crate::prefetch::prefetch_entry;
use crate::soa::AabbBlock;
use crate::visibility::cache::Verdict;
use crate::visibility::cull::{frustum_bits, secondary_culls_of};
use crate::visibility::holds::{nearest_plane_value, ObjectHold, WordObjectHolds};

/// The per-object culls of one word, as the full pass does them: verdicts held since an
/// earlier view (`holds`, frustum only) or cached under this view, else the kernel on the
/// word's boxes, then distance and screen size. Returns the surviving bits and the rejection
/// counts, and makes holds for the kernel's new verdicts when no other cull is on.
pub(super) fn decide_objects(
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
    let inside = frustum_bits(inputs, block, &pushed);
    let mut visible = (inside | forced) & fresh;
    rejects[0] += (fresh & !visible).count_ones() as u8;
    let survivors = if secondary_culls { visible & !forced } else { 0 };
    let (too_far, too_small) = secondary_culls_of(inputs.view, survivors, |offset| &shared.bounds[base + offset]);
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
