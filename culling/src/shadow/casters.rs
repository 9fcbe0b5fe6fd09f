//! [`CasterStore`]: the frame's shadow casters, kept by slot from one Visibility answer to the
//! next, so that a frame reads only the casters that moved, appeared or left.
//!
//! The store holds, per slot, the caster's world box as a centre and half extents (the form
//! the kernels read, made from the Visibility columns' box as the host's cull always made it),
//! and per word of 64 slots the union of its casters' boxes (what a light view tests first)
//! and the smallest reach of its casters along the sun (the cascades' depth). Each refresh
//! reads the Visibility stage's [`SlotChanges`](crate::visibility::SlotChanges) when the
//! answer follows the one the store last read; any other answer (the first, one after a frame
//! the store skipped, or one from another resource) rebuilds everything.

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
    /// The caster slots, ascending (rebuilt when a caster comes or goes).
    list: Vec<u32>,
}

/// The reach of one caster box along `direction`: the smallest `dot(p, direction)` over its
/// points, written exactly as the host's cascades have always computed it.
#[inline]
fn box_reach(boxes: &AabbSlices<'_>, index: usize, direction: Vec3, abs: Vec3) -> f32 {
    let ([cx, cy, cz], [hx, hy, hz]) = (boxes.center, boxes.half);
    cx[index] * direction.x + cy[index] * direction.y + cz[index] * direction.z
        - (hx[index] * abs.x + hy[index] * abs.y + hz[index] * abs.z)
}

/// An unbounded box: a word holding a non-finite caster box is never decided by its union.
const UNBOUNDED: Aabb = Aabb { min: Vec3::NEG_INFINITY, max: Vec3::INFINITY };

/// The union of the boxes of `members` (bits over `bounds`): inverted without a member,
/// unbounded when a member's box is not finite.
fn union_of(bounds: &[Aabb], mut members: u64) -> Aabb {
    let (mut min, mut max) = (Vec3A::INFINITY, Vec3A::NEG_INFINITY);
    while members != 0 {
        let aabb = &bounds[members.trailing_zeros() as usize];
        members &= members - 1;
        if !(aabb.min.is_finite() && aabb.max.is_finite()) {
            return UNBOUNDED;
        }
        min = min.min(Vec3A::from(aabb.min));
        max = max.max(Vec3A::from(aabb.max));
    }
    Aabb { min: min.into(), max: max.into() }
}

/// The word's casters' boxes and derived values, written by one job (see
/// [`CasterStore::redo_word`]).
struct WordTargets {
    boxes: [SharedMut<f32>; 6],
    unions: SharedMut<Aabb>,
    reach: SharedMut<f32>,
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
        self.redo_dirty(visibility, true);
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
        for (index, (&drawable, &caster)) in visibility.drawable.iter().zip(&visibility.casters).enumerate() {
            let now = drawable & caster;
            let before = self.words[index];
            let touched = changes.word(index) & (before | now) | (before ^ now);
            if touched != 0 {
                membership |= before != now;
                self.words[index] = now;
                self.dirty.push(index as u32);
            }
        }
        // Words a shorter answer no longer holds had no drawable bits to compare with.
        if words > visibility.drawable.len() {
            for index in visibility.drawable.len()..words {
                if self.words[index] != 0 {
                    self.words[index] = 0;
                    self.dirty.push(index as u32);
                    membership = true;
                }
            }
        }
        self.groups.resize(words.div_ceil(GROUP_WORDS), UNBOUNDED);
        if !self.dirty.is_empty() {
            self.redo_dirty(visibility, true);
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

    /// Redoes the dirty words: with `boxes`, their casters' boxes and unions; and their reach
    /// when it is kept. On the job system when they are many.
    fn redo_dirty(&mut self, visibility: &Visibility, boxes: bool) {
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
        let slots = self.boxes.center_x.len();
        let redo = |word: usize| {
            // SAFETY: each dirty word is listed once, and its slots, union and reach belong
            // to it alone; the arrays hold `slots` boxes and a union and reach per word.
            unsafe { Self::redo_word(&targets, bounds, slots, words[word], word, boxes, along) };
        };
        if dirty.len() >= PARALLEL_DIRTY {
            let _job_label = runtime::profiling::job_label("shadow casters job");
            runtime::jobs::parallel_for_ranges(0..dirty.len(), WORD_GRAIN, |range| {
                dirty[range].iter().for_each(|&word| redo(word as usize));
            });
        } else {
            dirty.iter().for_each(|&word| redo(word as usize));
        }
    }

    /// Redoes word `word` (its caster bits `casters`): with `boxes`, each caster's centre and
    /// half extents from the Visibility column `bounds` and the word's union; with `along`,
    /// the word's reach.
    ///
    /// # Safety
    /// No other thread reads or writes word `word`'s slots, union or reach meanwhile, and the
    /// targets hold `slots` boxes and a union and reach for word `word`.
    unsafe fn redo_word(
        targets: &WordTargets,
        bounds: &[Aabb],
        slots: usize,
        casters: u64,
        word: usize,
        boxes: bool,
        along: Option<Vec3>,
    ) {
        let first = word * BITS_PER_WORD;
        if boxes {
            let mut members = casters;
            while members != 0 {
                let slot = first + members.trailing_zeros() as usize;
                members &= members - 1;
                debug_assert!(slot < slots, "caster slot {slot} past the {slots} slots");
                let aabb = &bounds[slot];
                let (center, half) = (aabb.center(), aabb.half_extent());
                for (axis, value) in [center.x, center.y, center.z, half.x, half.y, half.z].into_iter().enumerate() {
                    // SAFETY: the caller's duty: slot `slot` is word `word`'s, and in range.
                    unsafe { *targets.boxes[axis].at(slot) = value };
                }
            }
            // SAFETY: the caller's duty: the union of word `word` is this call's.
            unsafe { *targets.unions.at(word) = union_of(&bounds[first..], casters) };
        }
        let Some(direction) = along else { return };
        let abs = direction.abs();
        let mut reach = f32::INFINITY;
        let mut members = casters;
        while members != 0 {
            let slot = first + members.trailing_zeros() as usize;
            members &= members - 1;
            // SAFETY: the caller's duty: slot `slot` is this word's, written above or before.
            let value = unsafe {
                let read = |axis: usize| *targets.boxes[axis].at(slot);
                read(0) * direction.x + read(1) * direction.y + read(2) * direction.z
                    - (read(3) * abs.x + read(4) * abs.y + read(5) * abs.z)
            };
            if value.is_finite() {
                reach = reach.min(value);
            }
        }
        // SAFETY: the caller's duty: the reach of word `word` is this call's.
        unsafe { *targets.reach.at(word) = reach };
    }

    /// Every word's reach along the kept direction, or none.
    fn redo_reach(&mut self) {
        self.reach.clear();
        self.reach.resize(self.words.len(), f32::INFINITY);
        let Some(bits) = self.reach_along else { return };
        let direction = Vec3::from_array(bits.map(f32::from_bits));
        let abs = direction.abs();
        let boxes = self.boxes.slices();
        let words = &self.words[..];
        runtime::jobs::parallel_for_chunks(&mut self.reach, WORD_GRAIN, |first, chunk| {
            for (offset, reach) in chunk.iter_mut().enumerate() {
                let word = first + offset;
                let mut members = words[word];
                while members != 0 {
                    let slot = word * BITS_PER_WORD + members.trailing_zeros() as usize;
                    members &= members - 1;
                    let value = box_reach(&boxes, slot, direction, abs);
                    if value.is_finite() {
                        *reach = reach.min(value);
                    }
                }
            }
        });
    }
}
