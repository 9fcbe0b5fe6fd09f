//! Guest slots: the deques threads outside a pool borrow while they take part.
//!
//! Every thread that takes part in a pool owns a LIFO deque while it does: workers for their
//! whole life, and threads outside the pool (the main thread, an asset loader, …) for the
//! duration of a top-level `scope`/`join`/`parallel_for`, through a *guest slot*. A thread that
//! waits pops its own newest job first, so its stack depth stays that of the task tree. Guest
//! slots come in chunks and a new chunk is added when all are taken, so there is no limit on
//! how many outside threads take part at once and no fallback path (README, "Guests").

use std::cell::Cell;
use std::sync::Arc;

use super::frames::Frames;
use super::job::JobRef;
use super::local::{seed, LocalThread};
use super::mailbox::Mailbox;
use super::registry::{Registry, Slot};
use super::sync::{AtomicBool, AtomicPtr, CachePadded, Mutex, Ordering, Stealer, Worker};

/// Guest slots per chunk. The models use one, so their second outside thread needs a new chunk.
const GUEST_CHUNK: usize = if cfg!(loom) { 1 } else { 16 };

/// A deque an outside thread borrows while it takes part. Created with its chunk and reused,
/// so taking part allocates nothing once a chunk exists.
pub(crate) struct GuestSlot {
    /// Whether a thread owns the slot; `Acquire`/`Release` hand the deque over.
    pub(super) claimed: AtomicBool,
    /// The owner's end, parked here while no thread owns the slot. On a line of its own: thieves
    /// poll `claimed` and `stealer` all the time, and a lock on their line would take it from
    /// them twice per call (claim and release) and back again.
    deque: CachePadded<Mutex<Option<Worker<JobRef>>>>,
    pub(super) stealer: Stealer<JobRef>,
    /// The owner's pending join frames; empty whenever the slot is free (joins nest).
    pub(super) frames: Frames,
    /// Frames handed to the owner while it spins in a wait; closed whenever the slot is free.
    pub(super) mailbox: Mailbox,
}

impl GuestSlot {
    fn new() -> GuestSlot {
        let deque = Worker::new_lifo();
        GuestSlot {
            claimed: AtomicBool::new(false),
            stealer: deque.stealer(),
            deque: CachePadded::new(Mutex::new(Some(deque))),
            frames: Frames::new(),
            mailbox: Mailbox::new(),
        }
    }
}

/// `GUEST_CHUNK` slots and the next chunk. Chunks are only ever appended, and freed with the
/// registry, so a `&GuestChunk` stays valid as long as the registry.
pub(super) struct GuestChunk {
    pub(super) slots: Box<[GuestSlot]>,
    /// Null, or the next chunk (published with `Release`, read with `Acquire`).
    pub(super) next: AtomicPtr<GuestChunk>,
}

impl GuestChunk {
    pub(super) fn new() -> GuestChunk {
        GuestChunk {
            slots: (0..GUEST_CHUNK).map(|_| GuestSlot::new()).collect(),
            next: AtomicPtr::new(std::ptr::null_mut()),
        }
    }
}

impl Registry {
    /// Every guest chunk, first to last.
    pub(super) fn guest_chunks(&self) -> impl Iterator<Item = &GuestChunk> {
        std::iter::successors(Some(&self.guests), |chunk| {
            // SAFETY: a non-null `next` points to a chunk that lives as long as the registry.
            unsafe { chunk.next.load(Ordering::Acquire).as_ref() }
        })
    }

    /// Claims a free guest slot and takes its deque out, adding a chunk when all are taken.
    fn claim_guest_slot(&self) -> (&GuestSlot, Worker<JobRef>) {
        let claim = |guest: &GuestSlot| {
            guest.claimed.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok()
        };
        let mut last = &self.guests;
        for chunk in self.guest_chunks() {
            if let Some(guest) = chunk.slots.iter().find(|guest| claim(guest)) {
                let deque = guest.deque.lock().take().expect("an unclaimed guest slot holds its deque");
                return (guest, deque);
            }
            last = chunk;
        }
        // Every slot is taken: append a chunk whose first slot is ours before anyone sees it.
        let fresh = Box::into_raw(Box::new(GuestChunk::new()));
        // SAFETY: `fresh` is a live, unpublished allocation.
        let guest = unsafe { &(*fresh).slots[0] };
        guest.claimed.store(true, Ordering::Relaxed);
        loop {
            match last.next.compare_exchange(std::ptr::null_mut(), fresh, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                // SAFETY: a non-null `next` is a chunk that lives as long as the registry.
                Err(next) => last = unsafe { &*next },
            }
        }
        let deque = guest.deque.lock().take().expect("a new guest slot holds its deque");
        (guest, deque)
    }

    /// Hands jobs left on the guest's deque to the injector, parks the deque and frees the slot.
    ///
    /// A guest's own jobs are all done when it leaves, but while it waited it may have run a
    /// job of somebody else's scope that spawned more onto this deque. Those belong to that
    /// scope; left here they would never run, because thieves skip unclaimed slots.
    fn release_guest_slot(&self, guest: &GuestSlot, deque: Worker<JobRef>) {
        let mut handed_over = false;
        while let Some(job) = deque.pop() {
            self.injector.push(job);
            handed_over = true;
        }
        if handed_over {
            self.sleep.notify_injected_work();
        }
        debug_assert!(guest.frames.looks_empty(), "a leaving guest's joins have all returned");
        debug_assert!(!guest.mailbox.is_open() && !guest.mailbox.holds_frame(), "a leaving guest's mailbox is closed");
        *guest.deque.lock() = Some(deque);
        guest.claimed.store(false, Ordering::Release);
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let mut next = self.guests.next.load(Ordering::Acquire);
        while !next.is_null() {
            // SAFETY: every chained chunk came from `Box::into_raw` in `claim_guest_slot` and
            // is freed exactly once, here, when nobody can reach the registry any more.
            let chunk = unsafe { Box::from_raw(next) };
            next = chunk.next.load(Ordering::Acquire);
        }
    }
}

/// Runs `body` with the current thread's local deque in `registry`: its own when it already
/// takes part (a worker, or a guest inside an enclosing call), else a guest slot claimed for
/// the duration of `body`. Every thread that waits therefore has a deque of its own, whatever
/// the number of outside threads, and free functions inside `body` resolve to `registry`.
pub(crate) fn with_local<R>(registry: &Arc<Registry>, body: impl FnOnce(&LocalThread) -> R) -> R {
    if let Some(local) = LocalThread::current_in(registry) {
        return body(local);
    }
    let (slot, deque) = registry.claim_guest_slot();
    debug_assert!(slot.frames.looks_empty(), "a free guest slot holds no join frames");
    // A thread's first steal registers it with crossbeam's epoch collector (a one-time
    // allocation): do it on the thread's first visit, not inside some later frame.
    #[cfg(not(loom))]
    {
        use super::sync::job_thread_local;
        job_thread_local! {
            static REGISTERED: Cell<bool> = Cell::new(false);
        }
        if !REGISTERED.with(|registered| registered.replace(true)) {
            let _ = deque.stealer().steal();
        }
    }
    /// Hands the deque back and restores the thread's previous role, also on unwind.
    struct Leave<'a> {
        guest: Option<LocalThread>,
        slot: &'a GuestSlot,
        previous: *const LocalThread,
    }
    impl Drop for Leave<'_> {
        fn drop(&mut self) {
            LocalThread::replace_current(self.previous);
            let guest = self.guest.take().expect("the guest is present until the slot is released");
            guest.registry.release_guest_slot(self.slot, guest.deque);
        }
    }
    let guest = LocalThread {
        deque,
        frames: &slot.frames,
        mailbox: &slot.mailbox,
        registry: Arc::clone(registry),
        slot: Slot::Guest(slot as *const GuestSlot as usize),
        rng: Cell::new(seed(slot as *const GuestSlot as usize >> 4)),
    };
    let mut leave = Leave { guest: Some(guest), slot, previous: std::ptr::null() };
    let guest = leave.guest.as_ref().expect("just stored");
    leave.previous = LocalThread::replace_current(guest);
    body(guest)
}
