//! The pool's shared state: the injector, every worker's deque, frame deque and mailbox, the
//! count of hungry threads, the guest slots (`guests.rs`) and the sleep state; its worker
//! threads are started here and run `local.rs`'s loop. Thieves look for work through it:
//! ordinary steals (`steal_any`), and the costly last resorts for join frames nobody
//! promoted (`steal_frame`, `take_delivered`; README, "Cheap joins").

use std::cell::Cell;
use std::sync::Arc;

use super::counters::{PoolCounters, ThreadCounters};
use super::frames::{Frames, Stolen};
use super::guests::{GuestChunk, GuestSlot};
use super::job::JobRef;
use super::local::{seed, worker_main, LocalThread};
use super::mailbox::Mailbox;
use super::sleep::Sleep;
use super::sync::{self, AtomicBool, AtomicUsize, CachePadded, Injector, Ordering, Steal, Stealer, Worker};

/// State shared by a pool's workers and by every thread that submits to it.
pub(crate) struct Registry {
    /// Jobs pushed by threads that do not take part in this pool (a `Scope` handle used from
    /// an unrelated thread) and jobs a leaving guest could not run; workers take batches.
    pub(super) injector: Injector<JobRef>,
    /// One stealer per worker deque, indexed by worker index.
    pub(super) stealers: Vec<Stealer<JobRef>>,
    /// Each worker's pending join frames, indexed by worker index.
    pub(super) worker_frames: Box<[Frames]>,
    /// Each worker's mailbox, indexed by worker index.
    pub(super) worker_mailboxes: Box<[Mailbox]>,
    /// Threads of this pool looking for work and finding none (spinning, or asleep). An owner
    /// that sees it non-zero at a `join` promotes its oldest frame (README, "Cheap joins").
    /// Padded: every `join` reads it, idle threads write it.
    pub(super) hungry: CachePadded<AtomicUsize>,
    /// The first chunk of guest slots; more are chained behind it on demand.
    pub(super) guests: GuestChunk,
    pub(crate) sleep: Sleep,
    pub(super) terminate: AtomicBool,
    /// What each thread did (jobs, steals, sleeps), for [`super::JobSystem::counters`].
    pub(super) counters: PoolCounters,
}

/// Where a local deque is registered, so thieves can skip their own.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    Worker(usize),
    /// The slot's address, used only as its identity.
    Guest(usize),
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
            counters: PoolCounters::new(worker_count),
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

    /// The counters `slot`'s thread counts into.
    pub(super) fn counters_of(&self, slot: Slot) -> &ThreadCounters {
        match slot {
            Slot::Worker(index) => self.counters.worker(index),
            Slot::Guest(_) => self.counters.guests(),
        }
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

    /// Whether any queue, frame deque or mailbox holds a job. Used by the sleep protocol's
    /// re-check.
    pub(super) fn has_work(&self) -> bool {
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
    pub(super) fn other_mailboxes(&self, skip: Slot) -> impl Iterator<Item = &Mailbox> {
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
    pub(super) fn take_delivered(&self, skip: Slot) -> Option<JobRef> {
        self.other_mailboxes(skip).find_map(Mailbox::take)
    }

    /// Pushes a job from a thread that has no deque in this pool, and wakes a sleeper.
    pub(crate) fn inject(&self, job: JobRef) {
        self.injector.push(job);
        self.sleep.notify_injected_work();
    }

    /// Steals one join frame straight from another thread's frame deque, skipping `skip`: the
    /// costly last resort (a heavy barrier per attempt) for frames nobody promoted.
    pub(super) fn steal_frame(&self, start: usize, skip: Slot) -> Option<JobRef> {
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
    pub(super) fn steal_any(&self, start: usize, skip: Slot) -> Option<JobRef> {
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
}
