//! The pool's shared state, its worker threads, guest slots for calling threads, and the
//! "help while waiting" loop.
//!
//! Every thread that takes part in a pool owns a LIFO deque while it does: workers for their
//! whole life, and threads outside the pool (the main thread, an asset loader, …) for the
//! duration of a top-level `scope`/`join`/`parallel_for`, through a *guest slot*. A thread that
//! waits pops its own newest job first, so its stack depth stays that of the task tree. Guest
//! slots come in chunks and a new chunk is added when all are taken, so there is no limit on
//! how many outside threads take part at once and no fallback path (README, "Guests").

use std::cell::Cell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::frames::{Frames, Stolen};
use super::job::JobRef;
use super::latch::Latch;
use super::mailbox::Mailbox;
use super::sleep::{Sleep, Sleeper};
use super::sync::{
    self, job_thread_local, AtomicBool, AtomicPtr, AtomicUsize, CachePadded, Injector, Mutex, Ordering, Steal, Stealer,
    Worker,
};

/// How long a thread without work keeps looking (spinning, then yielding its core) before it
/// sleeps. A frame alternates parallel loops with serial stretches (an occluder pick, a gather,
/// a system's own code) of up to a few hundred microseconds; a worker that slept through one
/// makes the next loop wait for its wake-up, which on a loaded two-core machine costs more than
/// the loop saves (the 1M bench city: 2.07 ms a frame with a 64-round spin of about 50 µs,
/// 1.92 ms with 200 µs). Past it, an idle pool burns no core. Measured from the first yield.
const IDLE_SPIN: Duration = Duration::from_micros(250);
/// Rounds that only spin (1, 2, 4 ... 64 spin hints) before the thread starts to yield.
const PURE_SPIN_ROUNDS: u32 = 16;
/// Idle rounds after which a thread also steals join frames straight from their owners' frame
/// deques (a heavy barrier each), rather than waiting for an owner to promote one: long enough
/// for a running owner to reach its next `join`, short enough that an owner blocked inside `a`
/// (or in a long leaf) loses its pending `b` within microseconds. The models do it at once.
const HEAVY_STEAL_ROUND: u32 = if cfg!(loom) { 0 } else { PURE_SPIN_ROUNDS };
/// Guest slots per chunk. The models use one, so their second outside thread needs a new chunk.
const GUEST_CHUNK: usize = if cfg!(loom) { 1 } else { 16 };

/// A deque an outside thread borrows while it takes part. Created with its chunk and reused,
/// so taking part allocates nothing once a chunk exists.
pub(crate) struct GuestSlot {
    /// Whether a thread owns the slot; `Acquire`/`Release` hand the deque over.
    claimed: AtomicBool,
    /// The owner's end, parked here while no thread owns the slot. On a line of its own: thieves
    /// poll `claimed` and `stealer` all the time, and a lock on their line would take it from
    /// them twice per call (claim and release) and back again.
    deque: CachePadded<Mutex<Option<Worker<JobRef>>>>,
    stealer: Stealer<JobRef>,
    /// The owner's pending join frames; empty whenever the slot is free (joins nest).
    frames: Frames,
    /// Frames handed to the owner while it spins in a wait; closed whenever the slot is free.
    mailbox: Mailbox,
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
struct GuestChunk {
    slots: Box<[GuestSlot]>,
    /// Null, or the next chunk (published with `Release`, read with `Acquire`).
    next: AtomicPtr<GuestChunk>,
}

impl GuestChunk {
    fn new() -> GuestChunk {
        GuestChunk {
            slots: (0..GUEST_CHUNK).map(|_| GuestSlot::new()).collect(),
            next: AtomicPtr::new(std::ptr::null_mut()),
        }
    }
}

/// State shared by a pool's workers and by every thread that submits to it.
pub(crate) struct Registry {
    /// Jobs pushed by threads that do not take part in this pool (a `Scope` handle used from
    /// an unrelated thread) and jobs a leaving guest could not run; workers take batches.
    injector: Injector<JobRef>,
    /// One stealer per worker deque, indexed by worker index.
    stealers: Vec<Stealer<JobRef>>,
    /// Each worker's pending join frames, indexed by worker index.
    worker_frames: Box<[Frames]>,
    /// Each worker's mailbox, indexed by worker index.
    worker_mailboxes: Box<[Mailbox]>,
    /// Threads of this pool looking for work and finding none (spinning, or asleep). An owner
    /// that sees it non-zero at a `join` promotes its oldest frame (README, "Cheap joins").
    /// Padded: every `join` reads it, idle threads write it.
    hungry: CachePadded<AtomicUsize>,
    /// The first chunk of guest slots; more are chained behind it on demand.
    guests: GuestChunk,
    pub(crate) sleep: Sleep,
    terminate: AtomicBool,
}

/// Where a local deque is registered, so thieves can skip their own.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Worker(usize),
    /// The slot's address, used only as its identity.
    Guest(usize),
}

/// A thread's own deque and pool: a worker's for its whole life, a guest's for one call.
pub(crate) struct LocalThread {
    deque: Worker<JobRef>,
    /// Pending `b` halves of this thread's joins, in the registry (a worker's entry or the
    /// guest slot's), which outlives this struct: it holds the registry.
    frames: *const Frames,
    /// This thread's mailbox, in the registry beside `frames`.
    mailbox: *const Mailbox,
    registry: Arc<Registry>,
    slot: Slot,
    rng: Cell<u32>,
}

// SAFETY: `frames` and `mailbox` point into the registry that the struct's own `Arc` keeps
// alive, and `Frames` and `Mailbox` are `Sync`; everything else is `Send` already.
unsafe impl Send for LocalThread {}

job_thread_local! {
    /// The local deque of this thread, or null when it is not taking part in any pool now.
    static LOCAL_THREAD: Cell<*const LocalThread> = Cell::new(std::ptr::null());
}

impl Registry {
    /// Creates the registry and starts `worker_count` threads named `worker-1`, `worker-2`, ….
    pub(crate) fn spawn(worker_count: usize) -> std::io::Result<(Arc<Registry>, Vec<sync::thread::JoinHandle<()>>)> {
        super::barrier::init();
        let deques: Vec<Worker<JobRef>> = (0..worker_count).map(|_| Worker::new_lifo()).collect();
        let registry = Arc::new(Registry {
            injector: Injector::new(),
            stealers: deques.iter().map(Worker::stealer).collect(),
            worker_frames: (0..worker_count).map(|_| Frames::new()).collect(),
            worker_mailboxes: (0..worker_count).map(|_| Mailbox::new()).collect(),
            hungry: CachePadded::new(AtomicUsize::new(0)),
            guests: GuestChunk::new(),
            sleep: Sleep::new(),
            terminate: AtomicBool::new(false),
        });
        let mut handles = Vec::with_capacity(worker_count);
        for (index, deque) in deques.into_iter().enumerate() {
            let local = LocalThread {
                deque,
                frames: &registry.worker_frames[index],
                mailbox: &registry.worker_mailboxes[index],
                registry: Arc::clone(&registry),
                slot: Slot::Worker(index),
                rng: Cell::new(seed(index)),
            };
            let spawned =
                sync::thread::Builder::new().name(format!("worker-{}", index + 1)).spawn(move || worker_main(local));
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

    /// Every guest chunk, first to last.
    fn guest_chunks(&self) -> impl Iterator<Item = &GuestChunk> {
        std::iter::successors(Some(&self.guests), |chunk| {
            // SAFETY: a non-null `next` points to a chunk that lives as long as the registry.
            unsafe { chunk.next.load(Ordering::Acquire).as_ref() }
        })
    }

    /// Whether any queue, frame deque or mailbox holds a job. Used by the sleep protocol's
    /// re-check.
    fn has_work(&self) -> bool {
        !self.injector.is_empty()
            || self.stealers.iter().any(|stealer| !stealer.is_empty())
            || self.worker_frames.iter().any(|frames| !frames.looks_empty())
            || self.worker_mailboxes.iter().any(Mailbox::holds_frame)
            || self.guest_chunks().any(|chunk| {
                chunk.slots.iter().any(|guest| {
                    !guest.stealer.is_empty() || !guest.frames.looks_empty() || guest.mailbox.holds_frame()
                })
            })
    }

    /// The mailboxes of the other threads taking part (workers, then claimed guest slots),
    /// skipping `skip`.
    fn other_mailboxes(&self, skip: Slot) -> impl Iterator<Item = &Mailbox> {
        let workers = self
            .worker_mailboxes
            .iter()
            .enumerate()
            .filter(move |&(index, _)| skip != Slot::Worker(index))
            .map(|(_, mailbox)| mailbox);
        let guests = self.guest_chunks().flat_map(|chunk| chunk.slots.iter()).filter(move |guest| {
            skip != Slot::Guest(*guest as *const GuestSlot as usize) && guest.claimed.load(Ordering::Relaxed)
        });
        workers.chain(guests.map(|guest| &guest.mailbox))
    }

    /// A frame delivered to another thread's mailbox that is still waiting there: that thread
    /// lost its core, since it spins on its mailbox until it sleeps. The last resort, with the
    /// heavy steals.
    fn take_delivered(&self, skip: Slot) -> Option<JobRef> {
        self.other_mailboxes(skip).find_map(Mailbox::take)
    }

    /// Pushes a job from a thread that has no deque in this pool, and wakes a sleeper.
    pub(crate) fn inject(&self, job: JobRef) {
        self.injector.push(job);
        self.sleep.notify_injected_work();
    }

    /// Steals one join frame straight from another thread's frame deque, skipping `skip`: the
    /// costly last resort (a heavy barrier per attempt) for frames nobody promoted.
    fn steal_frame(&self, start: usize, skip: Slot) -> Option<JobRef> {
        loop {
            let mut retry = false;
            let mut take = |stolen: Stolen| match stolen {
                Stolen::Success(job) => Some(job),
                Stolen::Retry => {
                    retry = true;
                    None
                }
                Stolen::Empty => None,
            };
            let workers = self.worker_frames.len();
            for offset in 0..workers {
                let victim = (start + offset) % workers;
                if skip != Slot::Worker(victim) {
                    if let Some(job) = take(self.worker_frames[victim].steal()) {
                        return Some(job);
                    }
                }
            }
            for chunk in self.guest_chunks() {
                for guest in chunk.slots.iter() {
                    // An unclaimed slot has no frames: its owner's joins all returned.
                    if skip == Slot::Guest(guest as *const GuestSlot as usize) || !guest.claimed.load(Ordering::Relaxed)
                    {
                        continue;
                    }
                    if let Some(job) = take(guest.frames.steal()) {
                        return Some(job);
                    }
                }
            }
            if !retry {
                return None;
            }
        }
    }

    /// Steals one job from the injector, a worker or a guest, skipping `skip`.
    fn steal_any(&self, start: usize, skip: Slot) -> Option<JobRef> {
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
                if skip != Slot::Worker(victim) {
                    if let Some(job) = take(self.stealers[victim].steal()) {
                        return Some(job);
                    }
                }
            }
            for chunk in self.guest_chunks() {
                for guest in chunk.slots.iter() {
                    // An unclaimed slot is empty: its last owner handed leftovers to the
                    // injector before releasing it (`release_guest_slot`).
                    if skip == Slot::Guest(guest as *const GuestSlot as usize) || !guest.claimed.load(Ordering::Relaxed)
                    {
                        continue;
                    }
                    if let Some(job) = take(guest.stealer.steal()) {
                        return Some(job);
                    }
                }
            }
            if !retry {
                return None;
            }
        }
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

fn seed(index: usize) -> u32 {
    (index as u32).wrapping_mul(2_654_435_761).wrapping_add(1) | 1
}

impl LocalThread {
    /// The local state of the current thread, or null.
    #[inline]
    pub(crate) fn current() -> *const LocalThread {
        LOCAL_THREAD.with(Cell::get)
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
                        registry.sleep.sleep_unless(Sleeper::Waiter, || latch.probe() || registry.has_work());
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
        // SAFETY: every JobRef in the queues and mailboxes is live until executed, and taking
        // it out of one means it runs exactly once, here.
        unsafe { job.execute() };
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
            LOCAL_THREAD.with(|cell| cell.set(self.previous));
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
    leave.previous = LOCAL_THREAD.with(|cell| cell.replace(guest));
    body(guest)
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

/// Counts a thread in `Registry::hungry` while it finds no work, and out again when it finds
/// some or stops looking (also on unwind).
struct Hunger<'a> {
    registry: &'a Registry,
    counted: bool,
}

impl<'a> Hunger<'a> {
    fn new(registry: &'a Registry) -> Hunger<'a> {
        Hunger { registry, counted: false }
    }

    /// Found nothing: owners should promote a frame. `SeqCst`, and always before the thread
    /// sleeps: a `join` skips the sleeper check when it reads no hungry thread, so this
    /// increment is the sleeper's half of that Dekker pair (README, "Cheap joins").
    #[inline]
    fn starving(&mut self) {
        if !self.counted {
            self.counted = true;
            self.registry.hungry.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[inline]
    fn fed(&mut self) {
        if self.counted {
            self.counted = false;
            self.registry.hungry.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Hunger<'_> {
    fn drop(&mut self) {
        self.fed();
    }
}

/// What a round of backing off ended with.
enum Spun {
    /// A frame was delivered to the thread's mailbox (now closed again).
    Delivered(JobRef),
    /// Look for work again.
    Again,
    /// Done spinning: close the mailbox and sleep.
    Sleep,
}

/// A thread's search for work while it finds none: spin, then yield the core until
/// [`IDLE_SPIN`] has passed, then sleep. The models sleep at once: spinning adds
/// interleavings, not protocol steps.
struct IdleRounds {
    rounds: u32,
    /// When the thread began to yield (read only past the pure spin, so a thread that finds
    /// work within it never reads the clock).
    yielding_since: Option<Instant>,
}

impl IdleRounds {
    const fn new() -> IdleRounds {
        IdleRounds { rounds: 0, yielding_since: None }
    }

    /// The thread found work (or woke up): the next idle spell starts from the beginning.
    #[inline]
    fn reset(&mut self) {
        self.rounds = 0;
        self.yielding_since = None;
    }

    /// Whether this round also steals join frames straight from their owners
    /// ([`HEAVY_STEAL_ROUND`]).
    #[inline]
    fn heavy_steal(&self) -> bool {
        self.rounds >= HEAVY_STEAL_ROUND
    }

    /// Backs off for one round with `mailbox` open, watching it (and `stop`, a waiter's
    /// latch) between spin hints: a frame delivered there is returned at once.
    fn back_off(&mut self, mailbox: &Mailbox, stop: impl Fn() -> bool) -> Spun {
        if cfg!(loom) {
            // The models sleep at once, but still open the mailbox for the owner to race with.
            mailbox.open();
            return Spun::Sleep;
        }
        mailbox.open();
        let round = self.rounds;
        self.rounds = round.saturating_add(1);
        if round < PURE_SPIN_ROUNDS {
            for _ in 0..(1u32 << round.min(6)) {
                if let Some(job) = mailbox.take() {
                    return Spun::Delivered(job);
                }
                if stop() {
                    return Spun::Again;
                }
                sync::thread::spin_loop();
            }
            return Spun::Again;
        }
        let since = *self.yielding_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= IDLE_SPIN {
            return Spun::Sleep;
        }
        sync::thread::yield_now();
        mailbox.take().map_or(Spun::Again, Spun::Delivered)
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
fn worker_main(local: LocalThread) {
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
                        registry.sleep.sleep_unless(Sleeper::Worker, || {
                            registry.terminate.load(Ordering::SeqCst) || registry.has_work()
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
