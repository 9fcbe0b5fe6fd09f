//! The pending `b` halves of a thread's `join`s: a fixed-size Chase–Lev deque whose owner side
//! has no fence (README, "Cheap joins").
//!
//! A `join` pushes its `b` here and, in the common case, pops it back and runs it inline. The
//! owner pays plain stores and loads for that; the store-load ordering Chase–Lev needs between
//! the owner's pop and a thief's steal comes from the asymmetric barrier (`barrier.rs`): the
//! owner's side is `light`, the thief's `heavy` (a process-wide `membarrier`, microseconds).
//! Thieves therefore steal from here only as a last resort (an owner blocked inside `a`, or
//! one inside a long leaf); normally the owner *promotes* its oldest frame when it sees a
//! hungry thread, into a spinning thread's mailbox or onto its own ordinary deque, where
//! thieves take it cheaply.
//!
//! Entries are pointers to the header of a frame's job on the owner's stack (`JobHeader`,
//! the job's first field): a frame stays live until it is popped back by the owner or
//! executed, so a thief reads the header only after its compare-and-swap on `top` has made
//! the entry its own.

use super::barrier;
use super::job::{JobHeader, JobRef};
use super::sync::{AtomicPtr, AtomicUsize, CachePadded, Ordering};

/// Frames per thread: the nesting depth of `join`s whose `b` can be published this way.
/// Deeper joins fall back to the ordinary deque (`join.rs`), so this bounds nothing else.
const CAPACITY: usize = if cfg!(loom) { 4 } else { 256 };

/// A thread's pending join frames. `top` only grows (thieves and promotion take the oldest);
/// `bottom` is written by the owner alone. Each index gets its own cache line, so a thief
/// polling for work does not take the owner's hot line away on every `join`.
pub(crate) struct Frames {
    /// Index of the oldest frame; advanced by compare-and-swap.
    top: CachePadded<AtomicUsize>,
    /// One past the newest frame; stored by the owner only.
    bottom: CachePadded<AtomicUsize>,
    slots: [AtomicPtr<JobHeader>; CAPACITY],
    /// How many frames may be pending: `CAPACITY` where the light barrier is a compiler fence
    /// (`barrier::is_asymmetric`, asked once when the deque is made, after `barrier::init`),
    /// else 0, so `push` always declines and joins use the ordinary deque. Frames are only
    /// worth it with the asymmetric barrier, and their owner side can then use it without
    /// loading the process-wide mode on every `join`. The model checker always uses them.
    limit: usize,
    /// The owner's bound for `bottom`: `top + limit` for a `top` it read earlier. `top` only
    /// grows, so a stale bound is only too cautious, and `push` reads `top` again only when
    /// it reaches the bound: most pushes touch no line a thief writes. Owner-only, so a plain
    /// std atomic (not the model's: no other thread ever reads it).
    end: std::sync::atomic::AtomicUsize,
}

/// What a thief's attempt got.
pub(crate) enum Stolen {
    Empty,
    /// Lost a race for the entry; try again.
    Retry,
    Success(JobRef),
}

impl Frames {
    pub(crate) fn new() -> Frames {
        Frames {
            top: CachePadded::new(AtomicUsize::new(0)),
            bottom: CachePadded::new(AtomicUsize::new(0)),
            slots: std::array::from_fn(|_| AtomicPtr::new(std::ptr::null_mut())),
            limit: if cfg!(loom) || barrier::is_asymmetric() { CAPACITY } else { 0 },
            end: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// The owner's light barrier (`barrier::light`) after a push or before a pop: only reached
    /// once `push` has succeeded, which it does only in the asymmetric mode (`limit`).
    #[inline(always)]
    pub(crate) fn light_barrier(&self) {
        barrier::light_asymmetric();
    }

    #[inline]
    fn slot(&self, index: usize) -> &AtomicPtr<JobHeader> {
        &self.slots[index % CAPACITY]
    }

    /// Owner: publishes `job` (the header of a job on the owner's stack) and returns its index, or
    /// `None` when the deque is full (always, without the asymmetric barrier: `limit`). No
    /// fence: see the module docs.
    #[inline]
    pub(crate) fn push(&self, job: &JobHeader) -> Option<usize> {
        let bottom = self.bottom.load(Ordering::Relaxed);
        if bottom >= self.end.load(std::sync::atomic::Ordering::Relaxed) && !self.extend_end(bottom) {
            return None;
        }
        self.slot(bottom).store(job as *const JobHeader as *mut JobHeader, Ordering::Relaxed);
        // Release: a thief that reads the new bottom with Acquire sees the slot.
        self.bottom.store(bottom + 1, Ordering::Release);
        Some(bottom)
    }

    /// Owner: reads `top` again to move `end`; whether `bottom` is below it now. Acquire: the
    /// slots below the new `top` were taken by compare-and-swap, and their thieves' reads of
    /// them happen before this owner stores into them again.
    #[cold]
    fn extend_end(&self, bottom: usize) -> bool {
        let end = self.top.load(Ordering::Acquire) + self.limit;
        self.end.store(end, std::sync::atomic::Ordering::Relaxed);
        bottom < end
    }

    /// Owner: takes the newest frame back, if nobody took it. The Chase–Lev `take` with the
    /// owner's fence replaced by the light barrier.
    #[inline]
    fn take_newest(&self) -> Option<*mut JobHeader> {
        let bottom = self.bottom.load(Ordering::Relaxed);
        // `top` only grows, so a stale value that says "empty" is right; it also keeps
        // `bottom - 1` from wrapping below.
        if bottom <= self.top.load(Ordering::Relaxed) {
            return None;
        }
        let newest = bottom - 1;
        self.bottom.store(newest, Ordering::Relaxed);
        self.light_barrier();
        let top = self.top.load(Ordering::Relaxed);
        if top < newest {
            return Some(self.slot(newest).load(Ordering::Relaxed));
        }
        let taken = if top == newest {
            // The last frame: a thief may be taking it too; `top` decides.
            self.top.compare_exchange(top, top + 1, Ordering::SeqCst, Ordering::Relaxed).is_ok()
        } else {
            false
        };
        self.bottom.store(newest + 1, Ordering::Relaxed);
        taken.then(|| self.slot(newest).load(Ordering::Relaxed))
    }

    /// Owner: takes back the frame pushed at `index` if no other thread took it. The caller
    /// has seen the frame's job unfinished, so the owner did not run it itself while it
    /// waited (`pop` runs a frame it takes to the end before the waiting `join` goes on). So
    /// `bottom` is `index + 1` while the frame is here (joins nest), or more once a thief took
    /// a newer frame of a nested `join` (thieves take the oldest first, so this one is gone
    /// too). Either way it is stored without being read first, which keeps the owner's loads
    /// of `bottom` from forming one chain through every `join` of a recursion (each load
    /// waiting on the last store).
    #[inline]
    pub(crate) fn pop_if(&self, index: usize) -> bool {
        #[cfg(debug_assertions)]
        let bottom = self.bottom.load(Ordering::Relaxed);
        self.bottom.store(index, Ordering::Relaxed);
        self.light_barrier();
        let top = self.top.load(Ordering::Relaxed);
        #[cfg(debug_assertions)]
        assert!(bottom == index + 1 || top > index, "a frame above an unfinished one was not stolen");
        if top < index {
            return true;
        }
        self.pop_contended(index, top)
    }

    /// `pop_if` when the frame is the last one (a thief may race for it) or is gone.
    #[cold]
    fn pop_contended(&self, index: usize, top: usize) -> bool {
        let taken =
            top == index && self.top.compare_exchange(top, top + 1, Ordering::SeqCst, Ordering::Relaxed).is_ok();
        // The deque is empty now: `bottom` goes back to `top`, past every frame taken (above
        // `index + 1` when a thief took a frame of a nested `join`). While it was below, a
        // thief saw no frame.
        self.bottom.store((index + 1).max(top), Ordering::Relaxed);
        taken
    }

    /// Owner: the newest frame, to run while waiting (an enclosing `join`'s `b`).
    pub(crate) fn pop(&self) -> Option<JobRef> {
        // SAFETY: an entry the owner took is a live, unexecuted frame (module docs).
        self.take_newest().map(|job| unsafe { JobRef::from_header(job) })
    }

    /// Owner: takes the oldest frame to hand it to its ordinary deque (promotion). Only the
    /// owner moves `bottom`, so no barrier is needed; a thief may win the entry instead.
    /// Returns the frame's header: the caller hands it to a mailbox or makes it a `JobRef`.
    pub(crate) fn take_oldest(&self) -> Option<*const JobHeader> {
        let top = self.top.load(Ordering::Acquire);
        if top >= self.bottom.load(Ordering::Relaxed) {
            return None;
        }
        let job = self.slot(top).load(Ordering::Relaxed);
        // The swap makes the entry ours; its frame is live and unexecuted.
        self.top.compare_exchange(top, top + 1, Ordering::SeqCst, Ordering::Relaxed).ok().map(|_| job.cast_const())
    }

    /// Whether a frame seems pending (no barrier: a hint, or part of the sleep re-check,
    /// which makes its own heavy barrier first).
    #[inline]
    pub(crate) fn looks_empty(&self) -> bool {
        self.top.load(Ordering::Acquire) >= self.bottom.load(Ordering::Acquire)
    }

    /// Thief: takes the oldest frame. Costs a heavy barrier when a frame seems pending, so
    /// callers try every cheaper source first.
    pub(crate) fn steal(&self) -> Stolen {
        if self.looks_empty() {
            return Stolen::Empty;
        }
        let top = self.top.load(Ordering::Acquire);
        // Pairs with the owner's light barrier in `take_newest` (module docs, barrier.rs).
        barrier::heavy();
        let bottom = self.bottom.load(Ordering::Acquire);
        if top >= bottom {
            return Stolen::Empty;
        }
        let job = self.slot(top).load(Ordering::Relaxed);
        match self.top.compare_exchange(top, top + 1, Ordering::SeqCst, Ordering::Relaxed) {
            // SAFETY: the swap made the entry ours: its frame is live until we execute it.
            Ok(_) => Stolen::Success(unsafe { JobRef::from_header(job) }),
            Err(_) => Stolen::Retry,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::jobs::job::StackJob;

    /// A frame deque that takes frames, or none where the barrier is not asymmetric: joins
    /// then use no frame deque at all.
    fn frame_deque() -> Option<Frames> {
        barrier::init();
        let frames = Frames::new();
        (frames.limit != 0).then_some(frames)
    }

    /// A thief takes both frames of a nested `join` (the oldest first), and the owner's pops
    /// find both gone: the deque must then be empty and consistent, so that the owner's next
    /// frame can be stolen again (a frame published below `top` would be lost to thieves, and
    /// an owner waiting for it would hang).
    #[test]
    fn a_frame_pushed_after_both_frames_of_a_nested_join_were_stolen_is_stealable() {
        let Some(frames) = frame_deque() else { return };
        // Never executed: the frame deque only moves pointers to their headers.
        let (outer, inner, next) = (StackJob::new(|| ()), StackJob::new(|| ()), StackJob::new(|| ()));
        let outer_index = frames.push(outer.header()).expect("room");
        let inner_index = frames.push(inner.header()).expect("room");
        for _ in 0..2 {
            assert!(matches!(frames.steal(), Stolen::Success(_)), "the thief takes the oldest frame");
        }
        assert!(!frames.pop_if(inner_index), "the inner frame was stolen");
        assert!(!frames.pop_if(outer_index), "the outer frame was stolen");
        assert!(frames.looks_empty());
        let next_index = frames.push(next.header()).expect("room");
        assert!(matches!(frames.steal(), Stolen::Success(_)), "the next frame is published where thieves look");
        assert!(!frames.pop_if(next_index));
        assert!(frames.looks_empty());
    }

    /// Frames nobody took come back to their owner, the last one through the compare-and-swap.
    #[test]
    fn frames_nobody_took_are_popped_back() {
        let Some(frames) = frame_deque() else { return };
        let (outer, inner) = (StackJob::new(|| ()), StackJob::new(|| ()));
        let outer_index = frames.push(outer.header()).expect("room");
        let inner_index = frames.push(inner.header()).expect("room");
        assert!(frames.pop_if(inner_index));
        assert!(frames.pop_if(outer_index));
        assert!(frames.looks_empty());
        assert!(matches!(frames.steal(), Stolen::Empty));
    }
}
