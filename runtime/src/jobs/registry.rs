//! The pool's shared state, its worker threads, guest slots for calling threads, and the
//! "help while waiting" loop.
//!
//! Every thread that submits jobs owns a LIFO deque while it does: workers for their whole
//! life, and threads outside the pool (the main thread, say) for the duration of a top-level
//! `scope`/`join`/`parallel_for`, through a *guest slot*. A thread that waits pops its own
//! newest job first, so recursion depth stays that of the task tree (a thread waiting on a
//! FIFO queue would start unrelated old jobs and could grow its stack without bound).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use parking_lot::Mutex;

use super::job::JobRef;
use super::latch::Latch;
use super::sleep::{Sleep, Sleeper};

/// Spin rounds a thread without work makes before it sleeps: long enough to catch the next
/// fine-grained batch a frame issues, short enough not to burn a core between frames.
const SPIN_ROUNDS: u32 = 64;
/// Of those rounds, how many only spin before starting to yield the core.
const PURE_SPIN_ROUNDS: u32 = 16;
/// Outside threads that can take part at once; more fall back to the shared injector.
const GUEST_SLOTS: usize = 16;

/// A deque an outside thread borrows while it takes part. Created once with the pool and
/// reused, so taking part allocates nothing.
struct GuestSlot {
    /// Whether a thread owns the slot; `Acquire`/`Release` hand the deque over.
    claimed: AtomicBool,
    /// The owner's end, parked here while no thread owns the slot.
    deque: Mutex<Option<Worker<JobRef>>>,
    stealer: Stealer<JobRef>,
}

/// State shared by a pool's workers and by every thread that submits to it.
pub(crate) struct Registry {
    /// Jobs pushed by outside threads without a guest slot, and batches thieves take.
    injector: Injector<JobRef>,
    /// One stealer per worker deque, indexed by worker index.
    stealers: Vec<Stealer<JobRef>>,
    guests: Vec<GuestSlot>,
    pub(crate) sleep: Sleep,
    terminate: AtomicBool,
}

/// Where a local deque is registered, so thieves can skip their own.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Worker(usize),
    Guest(usize),
}

/// A thread's own deque and pool: a worker's for its whole life, a guest's for one call.
pub(crate) struct LocalThread {
    deque: Worker<JobRef>,
    registry: Arc<Registry>,
    slot: Slot,
    rng: Cell<u32>,
}

thread_local! {
    /// The local deque of this thread, or null when it is not taking part in any pool now.
    static LOCAL_THREAD: Cell<*const LocalThread> = const { Cell::new(std::ptr::null()) };
}

impl Registry {
    /// Creates the registry and starts `worker_count` threads named `worker-1`, `worker-2`, ….
    pub(crate) fn spawn(worker_count: usize) -> std::io::Result<(Arc<Registry>, Vec<JoinHandle<()>>)> {
        let deques: Vec<Worker<JobRef>> = (0..worker_count).map(|_| Worker::new_lifo()).collect();
        let registry = Arc::new(Registry {
            injector: Injector::new(),
            stealers: deques.iter().map(Worker::stealer).collect(),
            guests: (0..GUEST_SLOTS)
                .map(|_| {
                    let deque = Worker::new_lifo();
                    GuestSlot {
                        claimed: AtomicBool::new(false),
                        stealer: deque.stealer(),
                        deque: Mutex::new(Some(deque)),
                    }
                })
                .collect(),
            sleep: Sleep::new(),
            terminate: AtomicBool::new(false),
        });
        let mut handles = Vec::with_capacity(worker_count);
        for (index, deque) in deques.into_iter().enumerate() {
            let local = LocalThread {
                deque,
                registry: Arc::clone(&registry),
                slot: Slot::Worker(index),
                rng: Cell::new(seed(index)),
            };
            let spawned =
                std::thread::Builder::new().name(format!("worker-{}", index + 1)).spawn(move || worker_main(local));
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(error) => {
                    registry.terminate();
                    for handle in handles {
                        let _ = handle.join();
                    }
                    return Err(error);
                }
            }
        }
        Ok((registry, handles))
    }

    /// Number of worker threads (calling threads are not counted).
    pub(crate) fn worker_count(&self) -> usize {
        self.stealers.len()
    }

    /// Asks the workers to exit once they are idle.
    pub(crate) fn terminate(&self) {
        self.terminate.store(true, Ordering::SeqCst);
        self.sleep.wake_all_workers();
    }

    /// Whether any queue holds a job. Used by the sleep protocol's re-check.
    fn has_work(&self) -> bool {
        !self.injector.is_empty()
            || self.stealers.iter().any(|stealer| !stealer.is_empty())
            || self.guests.iter().any(|guest| !guest.stealer.is_empty())
    }

    /// Steals one job from the injector, a worker or a guest, skipping `skip`.
    fn steal_any(&self, start: usize, skip: Option<Slot>) -> Option<JobRef> {
        loop {
            let mut retry = false;
            let mut take = |steal: Steal<JobRef>| match steal {
                Steal::Success(job) => Some(job),
                Steal::Retry => {
                    retry = true;
                    None
                }
                Steal::Empty => None,
            };
            if let Some(job) = take(self.injector.steal()) {
                return Some(job);
            }
            let workers = self.stealers.len();
            for offset in 0..workers {
                let victim = (start + offset) % workers;
                if skip != Some(Slot::Worker(victim)) {
                    if let Some(job) = take(self.stealers[victim].steal()) {
                        return Some(job);
                    }
                }
            }
            for (index, guest) in self.guests.iter().enumerate() {
                if skip == Some(Slot::Guest(index)) || !guest.claimed.load(Ordering::Relaxed) {
                    continue;
                }
                if let Some(job) = take(guest.stealer.steal()) {
                    return Some(job);
                }
            }
            if !retry {
                return None;
            }
        }
    }

    /// Claims a free guest slot and takes its deque out.
    fn claim_guest_slot(&self) -> Option<(usize, Worker<JobRef>)> {
        for (index, guest) in self.guests.iter().enumerate() {
            if guest.claimed.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                let deque = guest.deque.lock().take().expect("an unclaimed guest slot holds its deque");
                return Some((index, deque));
            }
        }
        None
    }

    /// Parks the deque back in its slot and frees the slot.
    fn release_guest_slot(&self, index: usize, deque: Worker<JobRef>) {
        *self.guests[index].deque.lock() = Some(deque);
        self.guests[index].claimed.store(false, Ordering::Release);
    }
}

fn seed(index: usize) -> u32 {
    (index as u32).wrapping_mul(2_654_435_761).wrapping_add(1) | 1
}

impl LocalThread {
    /// The local state of the current thread, or null.
    #[inline]
    pub(crate) fn current() -> *const LocalThread {
        LOCAL_THREAD.with(Cell::get)
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Pushes onto this thread's own deque (LIFO for the owner, FIFO for thieves).
    #[inline]
    fn push(&self, job: JobRef) {
        self.deque.push(job);
        self.registry.sleep.notify_local_work();
    }

    /// Pops the newest job of this thread's own deque.
    #[inline]
    pub(crate) fn pop_local(&self) -> Option<JobRef> {
        self.deque.pop()
    }

    fn next_random(&self) -> usize {
        // xorshift32: cheap victim selection; quality is irrelevant here.
        let mut state = self.rng.get();
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        self.rng.set(state);
        state as usize
    }

    /// Own deque first, then a batch from the injector, then other threads' deques.
    fn find_work(&self) -> Option<JobRef> {
        if let Some(job) = self.deque.pop() {
            return Some(job);
        }
        loop {
            match self.registry.injector.steal_batch_and_pop(&self.deque) {
                Steal::Success(job) => return Some(job),
                Steal::Retry => continue,
                Steal::Empty => break,
            }
        }
        let start = self.next_random() % self.registry.stealers.len().max(1);
        self.registry.steal_any(start, Some(self.slot))
    }
}

/// Who is submitting or waiting: a thread with a local deque in this pool, or (when every
/// guest slot is taken) a thread that uses the shared injector.
#[derive(Clone, Copy)]
pub(crate) enum Participant<'a> {
    Local(&'a LocalThread),
    Outside(&'a Registry),
}

impl<'a> Participant<'a> {
    /// Runs `body` as a participant of `registry`: the current thread's local deque when it
    /// has one in this pool, else a guest slot claimed for the duration of `body`.
    pub(crate) fn with<R>(registry: &Arc<Registry>, body: impl FnOnce(Participant<'_>) -> R) -> R {
        let current = LocalThread::current();
        // SAFETY: a non-null pointer was set by `worker_main` or by a guest below, on this
        // thread, to a LocalThread on this thread's stack that outlives the pointer's use.
        if let Some(local) = unsafe { current.as_ref() } {
            if Arc::ptr_eq(&local.registry, registry) {
                return body(Participant::Local(local));
            }
        }
        let Some((slot_index, deque)) = registry.claim_guest_slot() else {
            return body(Participant::Outside(registry));
        };
        // A thread's first steal registers it with crossbeam's epoch collector (a one-time
        // allocation): do it on the thread's first visit, not inside some later frame.
        thread_local! {
            static REGISTERED: Cell<bool> = const { Cell::new(false) };
        }
        if !REGISTERED.with(|registered| registered.replace(true)) {
            let _ = deque.stealer().steal();
        }
        /// Hands the deque back and restores the thread's previous role, also on unwind.
        struct Leave {
            guest: Option<LocalThread>,
            index: usize,
            previous: *const LocalThread,
        }
        impl Drop for Leave {
            fn drop(&mut self) {
                LOCAL_THREAD.with(|cell| cell.set(self.previous));
                let guest = self.guest.take().expect("the guest is present until the slot is released");
                debug_assert!(guest.deque.is_empty(), "a guest leaves the pool with jobs still queued");
                guest.registry.release_guest_slot(self.index, guest.deque);
            }
        }
        let guest = LocalThread {
            deque,
            registry: Arc::clone(registry),
            slot: Slot::Guest(slot_index),
            rng: Cell::new(seed(slot_index + 7)),
        };
        let mut leave = Leave { guest: Some(guest), index: slot_index, previous: std::ptr::null() };
        let guest = leave.guest.as_ref().expect("just stored");
        leave.previous = LOCAL_THREAD.with(|cell| cell.replace(guest));
        body(Participant::Local(guest))
    }

    /// The current thread's participant role without claiming a guest slot: for pushes made
    /// from inside a job or scope body (which already took part), or from an unrelated thread.
    pub(crate) fn current_or_outside(registry: &'a Registry) -> Participant<'a> {
        let current = LocalThread::current();
        // SAFETY: as in `with`: the pointer is this thread's live LocalThread or null.
        match unsafe { current.as_ref() } {
            Some(local) if std::ptr::eq(Arc::as_ptr(&local.registry), registry) => Participant::Local(local),
            _ => Participant::Outside(registry),
        }
    }

    /// Makes `job` available to the pool.
    #[inline]
    pub(crate) fn push(&self, job: JobRef) {
        match self {
            Participant::Local(local) => local.push(job),
            Participant::Outside(registry) => {
                registry.injector.push(job);
                registry.sleep.notify_injected_work();
            }
        }
    }

    fn registry(&self) -> &Registry {
        match self {
            Participant::Local(local) => &local.registry,
            Participant::Outside(registry) => registry,
        }
    }

    fn find_work(&self) -> Option<JobRef> {
        match self {
            Participant::Local(local) => local.find_work(),
            Participant::Outside(registry) => registry.steal_any(0, None),
        }
    }

    /// Runs other jobs until `latch` is set, sleeping when there is nothing to do.
    pub(crate) fn wait_until(&self, latch: &Latch) {
        let mut idle_rounds = 0;
        while !latch.probe() {
            if let Some(job) = self.find_work() {
                // SAFETY: every JobRef in the queues is live until executed, and taking it
                // out of a queue means it runs exactly once, here.
                unsafe { job.execute() };
                idle_rounds = 0;
            } else if idle_rounds < SPIN_ROUNDS {
                idle_back_off(idle_rounds);
                idle_rounds += 1;
            } else {
                let registry = self.registry();
                registry.sleep.sleep_unless(Sleeper::Waiter, || latch.probe() || registry.has_work());
                idle_rounds = 0;
            }
        }
    }
}

fn idle_back_off(round: u32) {
    if round < PURE_SPIN_ROUNDS {
        for _ in 0..(1u32 << round.min(6)) {
            std::hint::spin_loop();
        }
    } else {
        std::thread::yield_now();
    }
}

/// Makes a new worker do its one-time allocations now rather than inside the first frame that
/// needs them: crossbeam registers a thread with its epoch collector on its first steal, and
/// parking_lot allocates a thread's parking data on its first sleep. Steady-state frames then
/// allocate nothing (see `tests/steady_state_allocation.rs`).
fn warm_thread_state(local: &LocalThread) {
    // Stealing from our own, empty deque registers this thread with the epoch collector.
    let _ = local.deque.stealer().steal();
    // A one-nanosecond timed wait parks the thread once.
    let mutex = parking_lot::Mutex::new(());
    parking_lot::Condvar::new().wait_for(&mut mutex.lock(), std::time::Duration::from_nanos(1));
}

/// A worker's life: find work, run it, spin a little, sleep; exit on terminate.
fn worker_main(local: LocalThread) {
    LOCAL_THREAD.with(|cell| cell.set(&local));
    crate::profiling::name_current_thread();
    warm_thread_state(&local);
    let registry = Arc::clone(&local.registry);
    let mut idle_rounds = 0;
    loop {
        if let Some(job) = local.find_work() {
            // SAFETY: see `Participant::wait_until`.
            unsafe { job.execute() };
            idle_rounds = 0;
            continue;
        }
        if registry.terminate.load(Ordering::Acquire) {
            break;
        }
        if idle_rounds < SPIN_ROUNDS {
            idle_back_off(idle_rounds);
            idle_rounds += 1;
        } else {
            registry
                .sleep
                .sleep_unless(Sleeper::Worker, || registry.terminate.load(Ordering::SeqCst) || registry.has_work());
            idle_rounds = 0;
        }
    }
    LOCAL_THREAD.with(|cell| cell.set(std::ptr::null()));
}
