//! A thread's mailbox: while it spins idle, an owner promoting a join frame hands the frame
//! straight to it (README, "Hand-offs to a spinning thread").
//!
//! Through the ordinary deque a promoted frame costs the thief a poll of every queue, the
//! deque's fence and compare-and-swap and a read of the deque's buffer, each a cache line the
//! owner wrote, before it reads the job itself. Through the mailbox it costs one line: the
//! thief spins on its own mailbox, and the owner's compare-and-swap writes the frame there.
//!
//! The state word is `CLOSED`, `OPEN` (the owner spins and takes frames) or the address of a
//! delivered frame's [`JobHeader`]. Only the mailbox's thread moves it from `CLOSED` to
//! `OPEN`; a promoting owner moves it from `OPEN` to a frame; whoever takes the frame moves it
//! to `CLOSED` by compare-and-swap, so each frame runs once: normally the mailbox's thread, or
//! another thread that found the frame waiting long after delivery (its thread lost its core).

use super::job::{JobHeader, JobRef};
use super::sync::{AtomicUsize, CachePadded, Ordering};

/// Not taking frames.
const CLOSED: usize = 0;
/// Spinning idle, ready to take a frame.
const OPEN: usize = 1;

/// One thread's mailbox; on a line of its own, since its thread spins on it.
pub(crate) struct Mailbox {
    state: CachePadded<AtomicUsize>,
}

impl Mailbox {
    pub(crate) fn new() -> Mailbox {
        Mailbox { state: CachePadded::new(AtomicUsize::new(CLOSED)) }
    }

    /// The mailbox's thread, idle: ready to take a frame. Nothing but this thread moves the
    /// state away from `CLOSED`, so a plain store is enough once it reads `CLOSED`.
    #[inline]
    pub(crate) fn open(&self) {
        if self.state.load(Ordering::Relaxed) == CLOSED {
            self.state.store(OPEN, Ordering::Relaxed);
        }
    }

    /// The frame delivered here, if any, leaving the mailbox closed. `Acquire` pairs with the
    /// delivery's `Release`, which follows the owner's writes of the frame.
    #[inline]
    pub(crate) fn take(&self) -> Option<JobRef> {
        let state = self.state.load(Ordering::Relaxed);
        if state <= OPEN {
            return None;
        }
        self.state.compare_exchange(state, CLOSED, Ordering::Acquire, Ordering::Relaxed).ok()?;
        // SAFETY: a delivered state is the header of a claimed, pending frame (`deliver`), and
        // the compare-and-swap made it ours alone.
        Some(unsafe { JobRef::from_header(state as *const JobHeader) })
    }

    /// The mailbox's thread stops taking frames; returns a frame delivered meanwhile, which
    /// the caller must run or pass on.
    #[inline]
    pub(crate) fn close(&self) -> Option<JobRef> {
        match self.state.compare_exchange(OPEN, CLOSED, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) | Err(CLOSED) => None,
            Err(_) => self.take(),
        }
    }

    /// Whether the mailbox's thread is spinning, ready to take a frame.
    #[inline]
    pub(crate) fn is_open(&self) -> bool {
        self.state.load(Ordering::Relaxed) == OPEN
    }

    /// Another thread hands over `header`, a frame it claimed (taken from its frame deque),
    /// if the mailbox is still open; false when it is not, and the frame stays the caller's.
    pub(crate) fn deliver(&self, header: *const JobHeader) -> bool {
        self.state.compare_exchange(OPEN, header as usize, Ordering::Release, Ordering::Relaxed).is_ok()
    }

    /// Whether a frame waits here.
    pub(crate) fn holds_frame(&self) -> bool {
        self.state.load(Ordering::Relaxed) > OPEN
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::jobs::job::StackJob;

    #[test]
    fn a_frame_reaches_an_open_mailbox_once() {
        let mailbox = Mailbox::new();
        let job = StackJob::new(|| ());
        assert!(!mailbox.deliver(job.header()), "a closed mailbox takes nothing");
        mailbox.open();
        assert!(mailbox.is_open());
        assert!(mailbox.deliver(job.header()));
        assert!(!mailbox.deliver(job.header()), "one frame at a time");
        assert!(mailbox.holds_frame());
        let taken = mailbox.take().expect("the delivered frame");
        // SAFETY: never executed; the reference only names the job.
        assert!(taken == unsafe { job.as_job_ref() });
        assert!(mailbox.take().is_none(), "taken once");
        assert!(mailbox.close().is_none());
    }

    #[test]
    fn closing_returns_a_frame_delivered_meanwhile() {
        let mailbox = Mailbox::new();
        let job = StackJob::new(|| ());
        mailbox.open();
        assert!(mailbox.close().is_none(), "nothing delivered");
        assert!(!mailbox.deliver(job.header()), "closed again");
        mailbox.open();
        assert!(mailbox.deliver(job.header()));
        assert!(mailbox.close().is_some(), "the delivered frame comes back to the closer");
        assert!(!mailbox.is_open() && !mailbox.holds_frame());
    }
}
