//! Latches: one-shot flags a thread waits on while it runs other jobs.

use super::sync::{AtomicBool, AtomicUsize, Ordering};

/// A one-shot flag: unset until the job it guards finishes.
///
/// Setting it never wakes anybody by itself; the setter calls
/// [`Sleep::notify_latch_set`](super::sleep::Sleep::notify_latch_set) afterwards, which wakes
/// a waiter that may be asleep (see `README.md`, "Why no wake-up is lost").
pub(crate) struct Latch {
    set: AtomicBool,
}

impl Latch {
    pub(crate) fn new() -> Latch {
        Latch { set: AtomicBool::new(false) }
    }

    /// Whether the latch is set. `Acquire` pairs with the `SeqCst` store in `set`, so the
    /// job's writes (its result) are visible once this returns true.
    #[inline]
    pub(crate) fn probe(&self) -> bool {
        self.set.load(Ordering::Acquire)
    }

    /// Sets the latch. The owner may free it the moment this store lands, so this is the last
    /// access to `this`. `SeqCst` orders the store before the setter's later load of the
    /// sleeper count (the Dekker pair described in `README.md`).
    #[inline]
    pub(crate) fn set(this: &Latch) {
        this.set.store(true, Ordering::SeqCst);
    }
}

/// Counts outstanding jobs of a scope; the scope's latch is set when it reaches zero.
pub(crate) struct CountLatch {
    pending: AtomicUsize,
    pub(crate) latch: Latch,
}

impl CountLatch {
    /// Starts at one: the scope body itself counts as a job until it returns.
    pub(crate) fn new() -> CountLatch {
        CountLatch { pending: AtomicUsize::new(1), latch: Latch::new() }
    }

    /// One more job. `Relaxed` is enough: the count is only ever raised by a thread that holds
    /// a pending job of this scope, so it cannot race with the final decrement.
    pub(crate) fn increment(&self) {
        self.pending.fetch_add(1, Ordering::Relaxed);
    }

    /// One job fewer; sets the latch on the last one. Returns true when it did. `AcqRel` makes
    /// every finished job's writes visible to whoever observes the count reach zero.
    pub(crate) fn decrement(&self) -> bool {
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            Latch::set(&self.latch);
            true
        } else {
            false
        }
    }
}
