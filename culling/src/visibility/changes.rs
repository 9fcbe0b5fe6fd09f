//! [`SlotChanges`]: which object slots the Visibility stage wrote this frame, so that a
//! renderer mirroring the columns (the GPU scene) touches only those.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::bits::{words_for, BITS_PER_WORD};

/// The slots whose columns changed in this frame's cull: a bit per slot, set when the slot's
/// world matrix, local box, draw (mesh, level of detail, material) or owner changed, or when
/// the slot was freed; and apart from those, the slots whose object *appeared* (became
/// drawable: a new entity in the slot, or one that gained what it needed to be drawn).
///
/// Written by the Visibility stage and reset at its start; read after it (the Render stage).
/// A renderer that applies each frame's changes to its own copy of the columns, and follows
/// [`Visibility::len`](crate::Visibility::len) for the slot count (slots past it are empty),
/// holds exactly the columns; a frame the stage skipped (a 0x0 viewport) changes nothing.
/// Slots the count drops are not listed: they are gone.
///
/// ```
/// use culling::Visibility;
/// use ecs::{scene, Camera, Transform};
/// use glam::Vec3;
/// let mut app = runtime::App::new();
/// culling::install(&mut app);
/// scene::spawn_camera(app.world_mut(), Camera::default(), Transform::from_translation(Vec3::new(0.0, 0.0, 10.0)));
/// let cube = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
/// app.run_frame();
/// assert_eq!(app.resource::<Visibility>().changes().slots().collect::<Vec<_>>(), vec![0], "the new cube");
/// app.run_frame();
/// assert_eq!(app.resource::<Visibility>().changes().count(), 0, "nothing moved");
/// ```
#[derive(Default)]
pub struct SlotChanges {
    /// Bit `s` of word `s / 64`: slot `s` changed. Atomic words: jobs owning different slots
    /// of one word set their bits at once (one `fetch_or` per run of a job's slots in a word).
    changed: Vec<AtomicU64>,
    /// Bit `s`: slot `s`'s object appeared this frame (also set in `changed`).
    appeared: Vec<AtomicU64>,
}

impl SlotChanges {
    /// Whether slot `slot` changed this frame.
    pub fn contains(&self, slot: usize) -> bool {
        self.changed.get(slot / BITS_PER_WORD).is_some_and(|word| word.load(Ordering::Relaxed) >> (slot % 64) & 1 == 1)
    }

    /// Whether slot `slot`'s object appeared this frame (a new owner, or newly drawable).
    pub fn appeared(&self, slot: usize) -> bool {
        self.appeared.get(slot / BITS_PER_WORD).is_some_and(|word| word.load(Ordering::Relaxed) >> (slot % 64) & 1 == 1)
    }

    /// The changed slots, ascending.
    pub fn slots(&self) -> impl Iterator<Item = u32> + '_ {
        set_bits(self.changed.iter().map(|word| word.load(Ordering::Relaxed)))
    }

    /// The slots whose object appeared, ascending.
    pub fn appeared_slots(&self) -> impl Iterator<Item = u32> + '_ {
        set_bits(self.appeared.iter().map(|word| word.load(Ordering::Relaxed)))
    }

    /// The changed bits as words (bit `s % 64` of word `s / 64` = slot `s`), for a renderer
    /// that splits them over jobs.
    pub fn word(&self, index: usize) -> u64 {
        self.changed.get(index).map_or(0, |word| word.load(Ordering::Relaxed))
    }

    /// Words of [`SlotChanges::word`] (64 slots each).
    pub fn word_count(&self) -> usize {
        self.changed.len()
    }

    /// How many slots changed.
    pub fn count(&self) -> usize {
        self.changed.iter().map(|word| word.load(Ordering::Relaxed).count_ones() as usize).sum()
    }

    /// Starts a frame of `slots` slots: nothing changed yet. Allocates only to grow.
    pub(crate) fn begin(&mut self, slots: usize) {
        let words = words_for(slots);
        for column in [&mut self.changed, &mut self.appeared] {
            column.truncate(words);
            column.iter_mut().for_each(|word| *word.get_mut() = 0);
            column.resize_with(words, AtomicU64::default);
        }
    }

    /// Marks the slots `bits` of word `word` changed (from any job).
    #[inline]
    pub(crate) fn mark_word(&self, word: usize, bits: u64) {
        if bits != 0 {
            self.changed[word].fetch_or(bits, Ordering::Relaxed);
        }
    }

    /// Marks slot `slot` changed (serial code).
    pub(crate) fn mark(&mut self, slot: usize) {
        *self.changed[slot / BITS_PER_WORD].get_mut() |= 1 << (slot % BITS_PER_WORD);
    }

    /// Marks slot `slot`'s object as appeared (and changed).
    pub(crate) fn mark_appeared(&mut self, slot: usize) {
        self.mark(slot);
        *self.appeared[slot / BITS_PER_WORD].get_mut() |= 1 << (slot % BITS_PER_WORD);
    }

    /// Appeared word `index` (0 past the end).
    pub(crate) fn appeared_word(&self, index: usize) -> u64 {
        self.appeared.get(index).map_or(0, |word| word.load(Ordering::Relaxed))
    }
}

/// Which run of the Visibility stage wrote an answer: its own number, and the number of the
/// run that wrote the answer before it into the same resource, so a reader that kept what it
/// read of the earlier answer knows whether this one's [`SlotChanges`] lead from it. Numbers
/// come from one counter for the whole process and are never 0, so no two answers share one,
/// whichever resource they are in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AnswerRun {
    /// This answer's run.
    pub(crate) id: u64,
    /// The run of the answer before it in the same resource (0 for the first).
    pub(crate) previous: u64,
}

impl AnswerRun {
    /// A new run begins in the resource that holds this one.
    pub(crate) fn advance(&mut self) {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        self.previous = self.id;
        // Relaxed: only uniqueness is asked of the counter.
        self.id = NEXT.fetch_add(1, Ordering::Relaxed);
    }
}

/// Collects the bits a parallel pass marks, one word at a time: each job keeps the slot word
/// it is in and its bits, and hands them over when it moves to another word (storage order
/// mostly walks slots in runs, so one atomic per run instead of one per slot).
pub(crate) struct ChangeRun<'a> {
    target: &'a SlotChanges,
    word: usize,
    bits: u64,
    appeared: u64,
}

impl<'a> ChangeRun<'a> {
    pub(crate) fn new(target: &'a SlotChanges) -> ChangeRun<'a> {
        ChangeRun { target, word: usize::MAX, bits: 0, appeared: 0 }
    }

    /// Slot `slot` changed; `appeared` when its object became drawable.
    #[inline]
    pub(crate) fn mark(&mut self, slot: usize, appeared: bool) {
        let word = slot / BITS_PER_WORD;
        if word != self.word {
            self.flush();
            self.word = word;
        }
        let bit = 1u64 << (slot % BITS_PER_WORD);
        self.bits |= bit;
        self.appeared |= if appeared { bit } else { 0 };
    }

    /// Hands the collected bits over.
    pub(crate) fn flush(&mut self) {
        if self.bits != 0 {
            self.target.changed[self.word].fetch_or(self.bits, Ordering::Relaxed);
            self.bits = 0;
        }
        if self.appeared != 0 {
            self.target.appeared[self.word].fetch_or(self.appeared, Ordering::Relaxed);
            self.appeared = 0;
        }
    }
}

impl Drop for ChangeRun<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

impl Clone for SlotChanges {
    fn clone(&self) -> Self {
        SlotChanges {
            changed: self.changed.iter().map(|word| AtomicU64::new(word.load(Ordering::Relaxed))).collect(),
            appeared: self.appeared.iter().map(|word| AtomicU64::new(word.load(Ordering::Relaxed))).collect(),
        }
    }
}

impl std::fmt::Debug for SlotChanges {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("SlotChanges").field("changed", &self.count()).finish_non_exhaustive()
    }
}

/// The index of every set bit of `words`, ascending.
fn set_bits(words: impl Iterator<Item = u64>) -> impl Iterator<Item = u32> {
    words.enumerate().flat_map(|(index, mut word)| {
        std::iter::from_fn(move || {
            if word == 0 {
                return None;
            }
            let bit = word.trailing_zeros();
            word &= word - 1;
            Some(index as u32 * 64 + bit)
        })
    })
}
