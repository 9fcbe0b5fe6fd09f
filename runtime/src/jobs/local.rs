//! A thread's part in a pool: its own deque, join frames and mailbox ([`LocalThread`]), the
//! order in which it looks for work, the "help while waiting" loop of a thread whose job
//! waits on a latch, and a worker's life.

use std::cell::Cell;
use std::sync::Arc;

use super::frames::Frames;
use super::idle::{Hunger, IdleRounds, Spun};
use super::job::JobRef;
use super::latch::Latch;
use super::mailbox::Mailbox;
use super::registry::{Registry, Slot};
use super::sleep::Sleeper;
use super::sync::{job_thread_local, Ordering, Steal, Worker};

/// A thread's own deque and pool: a worker's for its whole life, a guest's for one call.
pub(crate) struct LocalThread {
    pub(super) deque: Worker<JobRef>,
    /// Pending `b` halves of this thread's joins, in the registry (a worker's entry or the
    /// guest slot's), which outlives this struct: it holds the registry.
    pub(super) frames: *const Frames,
    /// This thread's mailbox, in the registry beside `frames`.
    pub(super) mailbox: *const Mailbox,
    pub(super) registry: Arc<Registry>,
    pub(super) slot: Slot,
    pub(super) rng: Cell<u32>,
}

// SAFETY: `frames` and `mailbox` point into the registry that the struct's own `Arc` keeps
// alive, and `Frames` and `Mailbox` are `Sync`; everything else is `Send` already.
unsafe impl Send for LocalThread {}

job_thread_local! {
    /// The local deque of this thread, or null when it is not taking part in any pool now.
    static LOCAL_THREAD: Cell<*const LocalThread> = Cell::new(std::ptr::null());
}

/// A thread's first random state for picking victims (odd, so xorshift never sticks at zero).
pub(super) fn seed(index: usize) -> u32 {
    (index as u32).wrapping_mul(2_654_435_761).wrapping_add(1) | 1
}

impl LocalThread {
    /// The local state of the current thread, or null.
    #[inline]
    pub(crate) fn current() -> *const LocalThread {
        LOCAL_THREAD.with(Cell::get)
    }

    /// Makes `local` the current thread's local state (null: none) and returns the previous
    /// one, for a guest that takes part for one call.
    #[inline]
    pub(super) fn replace_current(local: *const LocalThread) -> *const LocalThread {
        LOCAL_THREAD.with(|cell| cell.replace(local))
    }

    /// The current thread's local state if it takes part in `registry` right now.
    #[inline]
    pub(crate) fn current_in(registry: &Registry) -> Option<&LocalThread> {
        // SAFETY: a non-null pointer was set by `worker_main` or by a guest in `with_local`,
        // on this thread, to a LocalThread that outlives the pointer's use.
        let local = unsafe { LocalThread::current().as_ref() }?;
        std::ptr::eq(Arc::as_ptr(&local.registry), registry).then_some(local)
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// This thread's pending join frames.
    #[inline]
    pub(crate) fn frames(&self) -> &Frames {
        // SAFETY: the frames live in the registry (see the field), which `self` keeps alive.
        unsafe { &*self.frames }
    }

    /// After pushing a join frame: whether some thread of the pool is idle (spinning or
    /// asleep). The light barrier first makes this one load the pusher's half of the sleep
    /// protocol's Dekker pair, since every sleeper counts itself hungry before it sleeps.
    #[inline]
    pub(crate) fn hungry_threads_after_push(&self) -> bool {
        self.frames().light_barrier();
        self.registry.hungry.load(Ordering::SeqCst) != 0
    }

    /// Some thread is idle: wake a sleeper if there is one, and hand this thread's oldest
    /// pending join frame to its ordinary deque, where an idle thread takes it without a heavy
    /// barrier. At most one promoted frame waits there at a time, so a pool whose idle threads
    /// are slow to wake is not flooded with small pieces.
    ///
    /// Inline, the common case of a hungry pool costs a few loads: no sleeper is un-notified
    /// and a promoted frame still waits (its thief is on its way, or has no core yet on a
    /// loaded machine), so every `join` meanwhile has nothing to do. Only called after a push
    /// onto the frame deque, so the barrier before the sleeper counts is the frame deque's
    /// light one (a compiler fence; `Frames::limit`): the same order as `notify_local_work`,
    /// without its load of the barrier mode.
    #[inline]
    pub(crate) fn feed_hungry_threads(&self) {
        self.frames().light_barrier();
        if self.registry.sleep.has_unnotified_sleepers() || self.deque.is_empty() {
            self.wake_and_promote();
        }
    }

    /// `feed_hungry_threads` when there is something to do.
    #[cold]
    #[inline(never)]
    fn wake_and_promote(&self) {
        self.registry.sleep.notify_local_work();
        if !self.deque.is_empty() {
            return;
        }
        // A spinning thread takes the frame from its mailbox (README, "Hand-offs to a spinning
        // thread"); without one, or when it stopped spinning meanwhile, the frame goes onto
        // this thread's deque for whoever looks first.
        if let Some(header) = self.frames().take_oldest() {
            let open = self.registry.other_mailboxes(self.slot).find(|mailbox| mailbox.is_open());
            if !open.is_some_and(|mailbox| mailbox.deliver(header)) {
                // SAFETY: taken from the frame deque, so a live, pending frame now ours alone.
                self.push(unsafe { JobRef::from_header(header) });
            }
        }
    }

    /// This thread's mailbox.
    #[inline]
    fn mailbox(&self) -> &Mailbox {
        // SAFETY: the mailbox lives in the registry (see the field), which `self` keeps alive.
        unsafe { &*self.mailbox }
    }

    /// Pushes onto this thread's own deque (LIFO for the owner, FIFO for thieves).
    #[inline]
    pub(crate) fn push(&self, job: JobRef) {
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

    /// Own deque first, then own join frames (an enclosing join's `b`: it had to run anyway),
    /// then a batch from the injector, then other threads' deques, and with `heavy` other
    /// threads' join frames (a heavy barrier each, so only after some idle rounds).
    fn find_work(&self, heavy: bool) -> Option<JobRef> {
        if let Some(job) = self.deque.pop() {
            return Some(job);
        }
        if let Some(job) = self.frames().pop() {
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
        let stolen = self.registry.steal_any(start, self.slot).or_else(|| {
            heavy
                .then(|| {
                    self.registry.steal_frame(start, self.slot).or_else(|| self.registry.take_delivered(self.slot))
                })
                .flatten()
        });
        if stolen.is_some() {
            crate::profiling::job_stolen();
            self.registry.counters_of(self.slot).stolen();
        }
        stolen
    }

    /// Runs other jobs until `latch` is set, sleeping when there is nothing to do.
    pub(crate) fn wait_until(&self, latch: &Latch) {
        let mut idle = IdleRounds::new();
        let mut hunger = Hunger::new(&self.registry);
        while !latch.probe() {
            let mut found = self.find_work(idle.heavy_steal());
            if found.is_none() {
                hunger.starving();
                found = self.idle_round(
                    &mut idle,
                    || latch.probe(),
                    || {
                        let registry = &self.registry;
                        crate::profile_zone!("idle: waiting for a job to finish");
                        registry.counters_of(self.slot).asleep(|| {
                            registry.sleep.sleep_unless(Sleeper::Waiter, || latch.probe() || registry.has_work())
                        });
                    },
                );
            }
            if let Some(job) = found {
                self.run_found(job, &mut hunger);
                idle.reset();
            }
        }
        // A frame handed over in the last moments goes where any thread finds it.
        if let Some(job) = self.mailbox().close() {
            self.push(job);
        }
    }

    /// One idle round, after `find_work` found nothing: back off with the mailbox open
    /// (leaving early when `stop` holds), and once the spin is over close the mailbox and
    /// `sleep`. Returns a frame delivered to the mailbox meanwhile; None means look again.
    fn idle_round(&self, idle: &mut IdleRounds, stop: impl Fn() -> bool, sleep: impl FnOnce()) -> Option<JobRef> {
        match idle.back_off(self.mailbox(), stop) {
            Spun::Delivered(job) => Some(job),
            Spun::Again => None,
            Spun::Sleep => {
                let delivered = self.mailbox().close();
                if delivered.is_none() {
                    sleep();
                    idle.reset();
                }
                delivered
            }
        }
    }

    /// Runs a job this idle thread found, which ends its hunger. A frame delivered to its
    /// mailbox meanwhile goes onto its deque, where any thread finds it.
    fn run_found(&self, job: JobRef, hunger: &mut Hunger<'_>) {
        if let Some(delivered) = self.mailbox().close() {
            self.push(delivered);
        }
        hunger.fed();
        self.registry.counters_of(self.slot).job_run();
        // SAFETY: every JobRef in the queues and mailboxes is live until executed, and taking
        // it out of one means it runs exactly once, here.
        unsafe { job.execute() };
    }
}

/// Makes `job` available to the pool from whichever thread is calling: onto its own deque
/// when it takes part in `registry`, else onto the injector.
#[inline]
pub(crate) fn push_from_current(registry: &Registry, job: JobRef) {
    match LocalThread::current_in(registry) {
        Some(local) => local.push(job),
        None => registry.inject(job),
    }
}

/// Makes a new worker do its one-time allocations now rather than inside the first frame that
/// needs them: crossbeam registers a thread with its epoch collector on its first steal, and
/// parking_lot allocates a thread's parking data on its first sleep. Steady-state frames then
/// allocate nothing (see `tests/steady_state_allocation.rs`).
#[cfg(not(loom))]
fn warm_thread_state(local: &LocalThread) {
    // Stealing from our own, empty deque registers this thread with the epoch collector.
    let _ = local.deque.stealer().steal();
    // A one-nanosecond timed wait parks the thread once.
    let mutex = parking_lot::Mutex::new(());
    parking_lot::Condvar::new().wait_for(&mut mutex.lock(), std::time::Duration::from_nanos(1));
}

/// A worker's life: find work, run it, spin a little, sleep; exit on terminate.
pub(super) fn worker_main(local: LocalThread) {
    LOCAL_THREAD.with(|cell| cell.set(&local));
    crate::profiling::name_current_thread();
    #[cfg(not(loom))]
    warm_thread_state(&local);
    let registry = Arc::clone(&local.registry);
    let mut idle = IdleRounds::new();
    let mut hunger = Hunger::new(&registry);
    loop {
        let mut found = local.find_work(idle.heavy_steal());
        if found.is_none() {
            hunger.starving();
            if registry.terminate.load(Ordering::Acquire) {
                // Nothing is left to run at shutdown; a frame still in the mailbox would be.
                found = local.mailbox().close();
                if found.is_none() {
                    break;
                }
            } else {
                found = local.idle_round(
                    &mut idle,
                    || false,
                    || {
                        #[cfg(feature = "profile")]
                        let _zone = crate::profiling::sleep_zone();
                        registry.counters_of(local.slot).asleep(|| {
                            registry.sleep.sleep_unless(Sleeper::Worker, || {
                                registry.terminate.load(Ordering::SeqCst) || registry.has_work()
                            })
                        });
                    },
                );
            }
        }
        if let Some(job) = found {
            local.run_found(job, &mut hunger);
            idle.reset();
        }
    }
    LOCAL_THREAD.with(|cell| cell.set(std::ptr::null()));
}
