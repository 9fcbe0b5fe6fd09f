//! What the threads of a pool did, counted as it happens: jobs taken from a queue, steals,
//! sleeps and the time spent asleep. Each worker counts into its own cache line (only it
//! writes there, so a count is an uncontended add); calling threads (guests) share one. The
//! counts are plain statistics: they order nothing, so they are relaxed std atomics, outside
//! the model checker's view.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::sync::CachePadded;

/// Totals of a pool's counters since it started (see [`JobSystem::counters`](super::JobSystem::counters)).
///
/// Subtract two readings for a frame's figures: [`JobCounters::since`].
///
/// ```
/// let pool = runtime::JobSystem::new(2);
/// let before = pool.counters();
/// pool.parallel_for(0..10_000, 100, |_| {});
/// let frame = pool.counters().since(&before);
/// // Every steal is a job run; how many there are depends on who was free.
/// assert!(frame.steals <= frame.jobs);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobCounters {
    /// Jobs a thread took from a queue (its own deque or join frames, the injector, another
    /// thread's deque) and ran. The half of a `join` its caller runs in place is not a job here.
    pub jobs: u64,
    /// Of those, jobs taken from another thread (its deque, its join frames or its mailbox).
    pub steals: u64,
    /// Times a thread found nothing to do after spinning and went to sleep (counted as it
    /// falls asleep).
    pub sleeps: u64,
    /// Time spent asleep, all threads together, nanoseconds (a sleep's time is counted when
    /// the thread wakes, so a thread asleep now adds nothing yet).
    pub asleep_nanos: u64,
}

impl JobCounters {
    /// The counts between `earlier` and `self` (a later reading of the same pool).
    pub fn since(&self, earlier: &JobCounters) -> JobCounters {
        JobCounters {
            jobs: self.jobs.saturating_sub(earlier.jobs),
            steals: self.steals.saturating_sub(earlier.steals),
            sleeps: self.sleeps.saturating_sub(earlier.sleeps),
            asleep_nanos: self.asleep_nanos.saturating_sub(earlier.asleep_nanos),
        }
    }

    /// Time spent asleep, all threads together.
    pub fn asleep(&self) -> Duration {
        Duration::from_nanos(self.asleep_nanos)
    }
}

/// One thread's (or the guests') counts.
#[derive(Default)]
pub(super) struct ThreadCounters {
    jobs: AtomicU64,
    steals: AtomicU64,
    sleeps: AtomicU64,
    asleep_nanos: AtomicU64,
}

impl ThreadCounters {
    pub(super) fn job_run(&self) {
        self.jobs.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn stolen(&self) {
        self.steals.fetch_add(1, Ordering::Relaxed);
    }

    /// Runs `sleep`, counting it as it starts and the time it took once it ends.
    pub(super) fn asleep(&self, sleep: impl FnOnce()) {
        self.sleeps.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        sleep();
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.asleep_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    fn add_to(&self, total: &mut JobCounters) {
        total.jobs += self.jobs.load(Ordering::Relaxed);
        total.steals += self.steals.load(Ordering::Relaxed);
        total.sleeps += self.sleeps.load(Ordering::Relaxed);
        total.asleep_nanos += self.asleep_nanos.load(Ordering::Relaxed);
    }
}

/// A pool's counters: one per worker, then one the guests share.
pub(super) struct PoolCounters {
    threads: Box<[CachePadded<ThreadCounters>]>,
}

impl PoolCounters {
    pub(super) fn new(workers: usize) -> PoolCounters {
        PoolCounters { threads: (0..=workers).map(|_| CachePadded::new(ThreadCounters::default())).collect() }
    }

    /// Worker `index`'s counters.
    pub(super) fn worker(&self, index: usize) -> &ThreadCounters {
        &self.threads[index]
    }

    /// The counters every guest thread shares.
    pub(super) fn guests(&self) -> &ThreadCounters {
        self.threads.last().expect("the guests' counters are always there")
    }

    pub(super) fn total(&self) -> JobCounters {
        let mut total = JobCounters::default();
        for thread in self.threads.iter() {
            thread.add_to(&mut total);
        }
        total
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::time::{Duration, Instant};

    use crate::JobSystem;

    #[test]
    fn every_spawned_job_is_counted_once_and_idle_workers_count_their_sleeps() {
        let pool = JobSystem::new(2);
        let before = pool.counters();
        pool.scope(|scope| {
            for _ in 0..64 {
                scope.spawn(|_| std::hint::black_box(()));
            }
        });
        let after = pool.counters().since(&before);
        assert_eq!(after.jobs, 64, "{after:?}");
        assert!(after.steals <= after.jobs, "{after:?}");
        // The worker spins for a while, then sleeps: its sleep is counted as it starts.
        let deadline = Instant::now() + Duration::from_secs(10);
        while pool.counters().since(&before).sleeps == 0 {
            assert!(Instant::now() < deadline, "the idle worker never slept");
            std::thread::sleep(Duration::from_millis(5));
        }
        let zero = JobSystem::new(1).counters();
        assert_eq!(zero, super::JobCounters::default(), "a one-thread pool has run nothing");
    }
}
