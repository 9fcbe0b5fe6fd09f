//! [`CasterStore`]: the frame's shadow casters, kept by slot from one Visibility answer to the
//! next, so that a frame reads only the casters that moved, appeared or left.
//!
//! The store holds, per slot, the caster's world box as a centre and half extents (the form
//! the kernels read, made from the Visibility columns' box as the host's cull always made it),
//! and per word of 64 slots the union of its casters' boxes (what a light view tests first)
//! and the smallest reach of its casters along the sun (the cascades' depth). Each refresh
//! reads the Visibility stage's [`SlotChanges`](crate::visibility::SlotChanges) when the
//! answer follows the one the store last read; any other answer (the first, one after a frame
//! the store skipped, or one from another resource) rebuilds everything. A word the answer
//! names but whose casters kept their boxes and their membership (a level of detail or a
//! colour changed, say) is not counted as changed: no view needs to look at it again.

use ecs::Aabb;
use glam::{Vec3, Vec3A};

use crate::bits::{words_for, BITS_PER_WORD};
use crate::parallel::SharedMut;
use crate::soa::{AabbSlices, AabbSoa};
use crate::visibility::Visibility;

/// Slot words per job of a rebuild or of a long refresh.
const WORD_GRAIN: usize = 64;

/// A dirty list at least this long is refreshed on the job system.
const PARALLEL_DIRTY: usize = 256;

/// Slot words per group: a light view tests a group's union before its words'.
pub(super) const GROUP_WORDS: usize = 64;

/// How the last [`CasterStore::refresh`] found the casters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Refresh {
    /// Rebuilt from every slot: nothing kept from before may be trusted.
    #[default]
    Rebuilt,
    /// Only the words in [`CasterStore::dirty`] changed since the last refresh.
    Changed,
}

/// The shadow casters by slot (see the module docs).
#[derive(Clone, Debug, Default)]
pub(super) struct CasterStore {
    /// The Visibility answer the store describes (`AnswerRun` id), 0 for none.
    seen: u64,
    /// Bit `s % 64` of word `s / 64`: slot `s` holds a drawable shadow caster.
    words: Vec<u64>,
    /// Each caster slot's world box as centre and half extents; other slots hold stale or
    /// zero boxes, never read without a caster bit.
    boxes: AabbSoa,
    /// Per word: the union of its casters' boxes; an inverted box (`min > max`) without one,
    /// an unbounded one when a caster's box is not finite.
    unions: Vec<Aabb>,
    /// Per group of [`GROUP_WORDS`] words: the union of its words' unions.
    groups: Vec<Aabb>,
    /// Per word: the smallest reach of its casters along `reach_along` (infinite without
    /// one); kept only while `reach_along` is set.
    reach: Vec<f32>,
    /// The direction `reach` is kept for, by its bits.
    reach_along: Option<[u32; 3]>,
    /// The words whose casters changed in the last refresh, ascending.
    dirty: Vec<u32>,
    /// Per entry of `dirty` while it is redone: the caster slots whose boxes are read again
    /// (those the answer names, and new casters).
    reread: Vec<u64>,
    /// Per entry of `dirty` while it is redone: whether the word's casters changed (their
    /// membership, else their boxes, bit for bit); the entries left false are dropped.
    changed: Vec<bool>,
    /// The caster slots, ascending (rebuilt when a caster comes or goes).
    list: Vec<u32>,
}

/// An unbounded box: a word holding a non-finite caster box is never decided by its union.
const UNBOUNDED: Aabb = Aabb { min: Vec3::NEG_INFINITY, max: Vec3::INFINITY };

/// Lanes [`summarize`] works on at once.
const LANES: usize = 8;

/// The union of a word's caster boxes and, with `along` (a direction and its absolute value),
/// their smallest reach along it: the smallest `dot(p, direction)` over their points, written
/// exactly as the host's cascades have always computed it. `lanes` are the word's slots'
/// centres and half extents (x, y, z each), `casters` says which hold a caster. The union is
/// taken over `centre ± half` (what the kernels test), inverted without a caster, unbounded
/// when a caster's box is not finite; the reach skips non-finite values (every cull keeps
/// those boxes anyway) and is infinite without one. Every lane is visited without a branch,
/// [`LANES`] at a time, so that the loop compiles to vector code.
#[inline]
fn summarize(lanes: [&[f32]; 6], casters: u64, along: Option<(Vec3, Vec3)>) -> (Aabb, f32) {
    let count = lanes[0].len();
    debug_assert!(count <= BITS_PER_WORD && lanes.iter().all(|lane| lane.len() == count), "a word's lanes");
    let (direction, abs) = along.unwrap_or((Vec3::ZERO, Vec3::ZERO));
    let mut partial = Partial::EMPTY;
    let whole = count / LANES * LANES;
    for first in (0..whole).step_by(LANES) {
        for lane in 0..LANES {
            partial.add(&lanes, first + lane, lane, casters, (direction, abs));
        }
    }
    for slot in whole..count {
        partial.add(&lanes, slot, slot - whole, casters, (direction, abs));
    }
    let smallest = |values: &[f32; LANES]| values.iter().fold(f32::INFINITY, |least, &value| least.min(value));
    let largest = |values: &[f32; LANES]| values.iter().fold(f32::NEG_INFINITY, |most, &value| most.max(value));
    let union = if partial.finite.iter().all(|&finite| finite) {
        let [low, high] = [partial.low, partial.high];
        Aabb {
            min: Vec3::new(smallest(&low[0]), smallest(&low[1]), smallest(&low[2])),
            max: Vec3::new(largest(&high[0]), largest(&high[1]), largest(&high[2])),
        }
    } else {
        UNBOUNDED
    };
    (union, if along.is_some() { smallest(&partial.reach) } else { f32::INFINITY })
}

/// What [`summarize`] gathers, lane by lane.
struct Partial {
    low: [[f32; LANES]; 3],
    high: [[f32; LANES]; 3],
    reach: [f32; LANES],
    finite: [bool; LANES],
}

impl Partial {
    const EMPTY: Partial = Partial {
        low: [[f32::INFINITY; LANES]; 3],
        high: [[f32::NEG_INFINITY; LANES]; 3],
        reach: [f32::INFINITY; LANES],
        finite: [true; LANES],
    };

    /// Takes in slot `slot` of the word's `lanes` into lane `lane`, when `casters` holds it.
    #[inline(always)]
    fn add(&mut self, lanes: &[&[f32]; 6], slot: usize, lane: usize, casters: u64, (direction, abs): (Vec3, Vec3)) {
        let member = casters >> slot & 1 == 1;
        let [cx, cy, cz, hx, hy, hz] = lanes;
        let (centre, half) = ([cx[slot], cy[slot], cz[slot]], [hx[slot], hy[slot], hz[slot]]);
        for axis in 0..3 {
            let (min, max) = (centre[axis] - half[axis], centre[axis] + half[axis]);
            self.finite[lane] &= !member || (min.is_finite() && max.is_finite());
            self.low[axis][lane] = if member { self.low[axis][lane].min(min) } else { self.low[axis][lane] };
            self.high[axis][lane] = if member { self.high[axis][lane].max(max) } else { self.high[axis][lane] };
        }
        let value = centre[0] * direction.x + centre[1] * direction.y + centre[2] * direction.z
            - (half[0] * abs.x + half[1] * abs.y + half[2] * abs.z);
        self.reach[lane] = if member && value.is_finite() { self.reach[lane].min(value) } else { self.reach[lane] };
    }
}

/// The word's casters' boxes and derived values, written by one job (see
/// [`CasterStore::redo_word`]).
struct WordTargets {
    boxes: [SharedMut<f32>; 6],
    unions: SharedMut<Aabb>,
    reach: SharedMut<f32>,
}

/// Writes `value` to `target` and says whether it differed from what was there, bit for bit.
///
/// # Safety
/// `target` is valid for reads and writes, and no other thread touches it meanwhile.
#[inline(always)]
unsafe fn write_changed(target: *mut f32, value: f32) -> bool {
    // SAFETY: the caller's duty.
    unsafe {
        let differs = (*target).to_bits() != value.to_bits();
        *target = value;
        differs
    }
}

impl CasterStore {
    /// The caster slots as slot bits.
    #[inline]
    pub(super) fn words(&self) -> &[u64] {
        &self.words
    }

    /// The caster slots, ascending.
    #[inline]
    pub(super) fn list(&self) -> &[u32] {
        &self.list
    }

    /// Every slot's box (read only at caster slots).
    #[inline]
    pub(super) fn boxes(&self) -> AabbSlices<'_> {
        self.boxes.slices()
    }

    /// Word `word`'s union of caster boxes.
    #[inline]
    pub(super) fn union(&self, word: usize) -> &Aabb {
        &self.unions[word]
    }

    /// Group `group`'s union of caster boxes (words `group * GROUP_WORDS ..`).
    #[inline]
    pub(super) fn group(&self, group: usize) -> &Aabb {
        &self.groups[group]
    }

    /// The words whose casters changed in the last refresh, ascending.
    #[inline]
    pub(super) fn dirty(&self) -> &[u32] {
        &self.dirty
    }

    /// The smallest reach of any caster along the direction of the last refresh (the caster
    /// nearest a sun shining that way); infinite without casters. Non-finite boxes are
    /// skipped (every cull keeps them anyway).
    pub(super) fn reach(&self) -> f32 {
        self.reach.iter().fold(f32::INFINITY, |reach, &word| reach.min(word))
    }

    /// Brings the store to `visibility`'s answer, keeping each word's reach along `reach_along`
    /// when given. Reads only the changed slots when the answer follows the one last read.
    pub(super) fn refresh(&mut self, visibility: &Visibility, reach_along: Option<Vec3>) -> Refresh {
        let run = visibility.run;
        let along = reach_along.map(|direction| direction.to_array().map(f32::to_bits));
        let turned = along != self.reach_along;
        self.reach_along = along;
        let refresh = if self.seen != 0 && run.id == self.seen {
            // The same answer again: nothing changed since.
            self.dirty.clear();
            Refresh::Changed
        } else if self.seen != 0 && run.previous == self.seen {
            self.follow(visibility);
            Refresh::Changed
        } else {
            self.rebuild(visibility);
            Refresh::Rebuilt
        };
        self.seen = run.id;
        if turned && refresh == Refresh::Changed {
            self.redo_reach();
        }
        refresh
    }

    /// Rebuilds every word from `visibility`.
    fn rebuild(&mut self, visibility: &Visibility) {
        let slots = visibility.len();
        let words = words_for(slots);
        self.words.clear();
        self.words
            .extend(visibility.drawable.iter().zip(&visibility.casters).map(|(drawable, caster)| drawable & caster));
        self.words.resize(words, 0);
        self.boxes.resize(slots);
        self.unions.clear();
        self.unions.resize(words, UNBOUNDED);
        self.reach.clear();
        self.reach.resize(words, f32::INFINITY);
        self.dirty.clear();
        self.dirty.extend(0..words as u32);
        self.reread.clear();
        self.reread.extend_from_slice(&self.words);
        self.changed.clear();
        self.changed.resize(words, true);
        self.redo_dirty(visibility);
        self.groups.clear();
        self.groups.resize(words.div_ceil(GROUP_WORDS), UNBOUNDED);
        self.redo_groups();
        self.rebuild_list();
    }

    /// Takes in the changes of the answer that follows the one the store describes: slots
    /// marked changed that hold or held a caster, and slots that became or stopped being
    /// casters (a `ShadowCaster` inserted or removed, shown or hidden).
    fn follow(&mut self, visibility: &Visibility) {
        let slots = visibility.len();
        let words = words_for(slots);
        let changes = visibility.changes();
        let mut membership = self.words.len() > words && self.words[words..].iter().any(|&word| word != 0);
        self.words.resize(words, 0);
        self.boxes.resize(slots);
        self.unions.resize(words, UNBOUNDED);
        self.reach.resize(words, f32::INFINITY);
        self.dirty.clear();
        self.reread.clear();
        self.changed.clear();
        for (index, (&drawable, &caster)) in visibility.drawable.iter().zip(&visibility.casters).enumerate() {
            let now = drawable & caster;
            let before = self.words[index];
            let named = changes.word(index);
            if named & (before | now) != 0 || before != now {
                membership |= before != now;
                self.words[index] = now;
                self.dirty.push(index as u32);
                self.reread.push((named | !before) & now);
                self.changed.push(before != now);
            }
        }
        // Words a shorter answer no longer holds had no drawable bits to compare with.
        if words > visibility.drawable.len() {
            for index in visibility.drawable.len()..words {
                if self.words[index] != 0 {
                    self.words[index] = 0;
                    self.dirty.push(index as u32);
                    self.reread.push(0);
                    self.changed.push(true);
                    membership = true;
                }
            }
        }
        self.groups.resize(words.div_ceil(GROUP_WORDS), UNBOUNDED);
        if !self.dirty.is_empty() {
            self.redo_dirty(visibility);
            // Only the words whose casters changed are news to the views.
            let mut entry = 0;
            let changed = &self.changed;
            self.dirty.retain(|_| {
                entry += 1;
                changed[entry - 1]
            });
            self.redo_groups();
        }
        if membership {
            self.rebuild_list();
        }
    }

    /// The unions of the groups holding a dirty word (the list is ascending, so each group's
    /// words come together).
    fn redo_groups(&mut self) {
        let mut last = usize::MAX;
        for &word in &self.dirty {
            let group = word as usize / GROUP_WORDS;
            if group == last {
                continue;
            }
            last = group;
            let words = &self.unions[group * GROUP_WORDS..((group + 1) * GROUP_WORDS).min(self.unions.len())];
            let (mut min, mut max) = (Vec3A::INFINITY, Vec3A::NEG_INFINITY);
            for union in words {
                min = min.min(Vec3A::from(union.min));
                max = max.max(Vec3A::from(union.max));
            }
            self.groups[group] = Aabb { min: min.into(), max: max.into() };
        }
    }

    fn rebuild_list(&mut self) {
        self.list.clear();
        for (index, &word) in self.words.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                self.list.push((index * BITS_PER_WORD) as u32 + word.trailing_zeros());
                word &= word - 1;
            }
        }
    }

    /// Redoes the dirty words: their casters' boxes, their unions and (when kept) their reach,
    /// and sets each entry of `changed` whose word's boxes changed. On the job system when
    /// they are many.
    fn redo_dirty(&mut self, visibility: &Visibility) {
        let bounds = &visibility.objects.bounds[..];
        let along = self.reach_along.map(|bits| Vec3::from_array(bits.map(f32::from_bits)));
        let targets = WordTargets {
            boxes: [
                SharedMut(self.boxes.center_x.as_mut_ptr()),
                SharedMut(self.boxes.center_y.as_mut_ptr()),
                SharedMut(self.boxes.center_z.as_mut_ptr()),
                SharedMut(self.boxes.half_x.as_mut_ptr()),
                SharedMut(self.boxes.half_y.as_mut_ptr()),
                SharedMut(self.boxes.half_z.as_mut_ptr()),
            ],
            unions: SharedMut(self.unions.as_mut_ptr()),
            reach: SharedMut(self.reach.as_mut_ptr()),
        };
        let (words, dirty) = (&self.words[..], &self.dirty[..]);
        debug_assert_eq!(self.changed.len(), dirty.len(), "a changed flag per dirty word");
        debug_assert_eq!(self.reread.len(), dirty.len(), "slots to read again per dirty word");
        let reread = &self.reread[..];
        let changed = SharedMut(self.changed.as_mut_ptr());
        let slots = self.boxes.center_x.len();
        let redo = |entry: usize| {
            let word = dirty[entry] as usize;
            // SAFETY: entry `entry` is this call's alone (one call per entry), in range.
            let known = unsafe { *changed.at(entry) };
            // SAFETY: each dirty word is listed once, and its slots, union and reach belong to
            // it alone; the arrays hold `slots` boxes and a union and reach per word.
            let moved =
                unsafe { Self::redo_word(&targets, bounds, slots, (words[word], reread[entry]), word, !known, along) };
            // SAFETY: as for the read above.
            unsafe { *changed.at(entry) = known || moved };
        };
        if dirty.len() >= PARALLEL_DIRTY {
            let _job_label = runtime::profiling::job_label("shadow casters job");
            runtime::jobs::parallel_for_ranges(0..dirty.len(), WORD_GRAIN, |range| range.for_each(redo));
        } else {
            (0..dirty.len()).for_each(redo);
        }
    }

    /// Redoes word `word` (its caster bits and the casters among them to read again,
    /// `(casters, reread)`): those casters' centres and half extents from the Visibility
    /// column `bounds`, then the word's union and, with `along`, its reach. With `compare`,
    /// the union and reach are left as they are when no box read changed, bit for bit (the
    /// casters are the ones they were: the caller knows). Returns whether a box changed (true
    /// without `compare`).
    ///
    /// # Safety
    /// No other thread reads or writes word `word`'s slots, union or reach meanwhile, and the
    /// targets hold `slots` boxes and a union and reach for word `word`.
    unsafe fn redo_word(
        targets: &WordTargets,
        bounds: &[Aabb],
        slots: usize,
        (casters, reread): (u64, u64),
        word: usize,
        compare: bool,
        along: Option<Vec3>,
    ) -> bool {
        let first = word * BITS_PER_WORD;
        let mut differs = false;
        let mut members = reread;
        while members != 0 {
            let slot = first + members.trailing_zeros() as usize;
            members &= members - 1;
            debug_assert!(slot < slots, "caster slot {slot} past the {slots} slots");
            let aabb = &bounds[slot];
            let (center, half) = (aabb.center(), aabb.half_extent());
            for (axis, value) in [center.x, center.y, center.z, half.x, half.y, half.z].into_iter().enumerate() {
                // SAFETY: the caller's duty: slot `slot` is word `word`'s, and in range.
                differs |= unsafe { write_changed(targets.boxes[axis].at(slot), value) };
            }
        }
        if compare && !differs {
            return false;
        }
        let count = BITS_PER_WORD.min(slots - first);
        // SAFETY: the caller's duty: the word's slots are in range and this call's alone, and
        // nothing writes them while these slices live.
        let lanes =
            targets.boxes.each_ref().map(|column| unsafe { std::slice::from_raw_parts(column.at(first), count) });
        let (union, reach) = summarize(lanes, casters, along.map(|direction| (direction, direction.abs())));
        // SAFETY: the caller's duty: the union and reach of word `word` are this call's.
        unsafe {
            *targets.unions.at(word) = union;
            *targets.reach.at(word) = reach;
        }
        true
    }

    /// Every word's reach along the kept direction, or none.
    fn redo_reach(&mut self) {
        self.reach.clear();
        self.reach.resize(self.words.len(), f32::INFINITY);
        let Some(bits) = self.reach_along else { return };
        let direction = Vec3::from_array(bits.map(f32::from_bits));
        let along = Some((direction, direction.abs()));
        let boxes = self.boxes.slices();
        let words = &self.words[..];
        runtime::jobs::parallel_for_chunks(&mut self.reach, WORD_GRAIN, |first, chunk| {
            for (offset, reach) in chunk.iter_mut().enumerate() {
                let word = first + offset;
                let slots = word * BITS_PER_WORD..((word + 1) * BITS_PER_WORD).min(boxes.len());
                let sub = boxes.sub(slots);
                let ([cx, cy, cz], [hx, hy, hz]) = (sub.center, sub.half);
                *reach = summarize([cx, cy, cz, hx, hy, hz], words[word], along).1;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The word's reach is the smallest of its casters' own, bit for bit, skipping the
        /// non-finite ones; its union holds every caster's box, or is unbounded when one is not
        /// finite; a lane without a caster counts for nothing.
        #[test]
        fn a_word_summary_is_its_casters(
            boxes in prop::collection::vec((prop::array::uniform3(-1e3f32..1e3), prop::array::uniform3(0.0f32..50.0)), 1..=64),
            casters in any::<u64>(),
            broken in prop::option::of(0usize..64),
            direction in prop::array::uniform3(-1.0f32..1.0),
        ) {
            let mut soa = AabbSoa::default();
            for (index, (centre, half)) in boxes.iter().enumerate() {
                let centre = if broken == Some(index) { [f32::NAN, 0.0, 0.0] } else { *centre };
                soa.push(&Aabb::from_center_half_extent(Vec3::from(centre), Vec3::from(*half)));
            }
            let slices = soa.slices();
            let ([cx, cy, cz], [hx, hy, hz]) = (slices.center, slices.half);
            let direction = Vec3::from(direction);
            let (union, reach) = summarize([cx, cy, cz, hx, hy, hz], casters, Some((direction, direction.abs())));
            let members: Vec<usize> = (0..boxes.len()).filter(|&index| casters >> index & 1 == 1).collect();
            let expected = members
                .iter()
                .map(|&index| {
                    cx[index] * direction.x + cy[index] * direction.y + cz[index] * direction.z
                        - (hx[index] * direction.x.abs() + hy[index] * direction.y.abs() + hz[index] * direction.z.abs())
                })
                .filter(|value| value.is_finite())
                .fold(f32::INFINITY, f32::min);
            prop_assert_eq!(reach.to_bits(), expected.to_bits());
            if members.iter().any(|&index| broken == Some(index)) {
                prop_assert_eq!(union, UNBOUNDED);
            } else if members.is_empty() {
                prop_assert!(union.min.x > union.max.x, "inverted without a caster: {:?}", union);
            } else {
                for &index in &members {
                    let (centre, half) = (Vec3::new(cx[index], cy[index], cz[index]), Vec3::new(hx[index], hy[index], hz[index]));
                    prop_assert!((centre - half).cmpge(union.min).all() && (centre + half).cmple(union.max).all());
                }
            }
        }
    }
}
