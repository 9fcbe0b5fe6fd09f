//! Idle threads sleep on condition variables; pushes and latch sets wake them.
//! `README.md` in this folder argues why no wake-up can be lost.

use super::barrier;
use super::sync::{fence, AtomicUsize, Condvar, Mutex, Ordering};

/// Who is going to sleep: an idle worker waits for work; a waiter (a thread blocked in
/// `join` or `scope`) waits for its latch or for work it could help with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Sleeper {
    Worker,
    Waiter,
}

/// The sleep/wake state shared by every thread of a pool.
pub(crate) struct Sleep {
    mutex: Mutex<()>,
    workers_cv: Condvar,
    waiters_cv: Condvar,
    /// Workers between "announced I sleep" and "woke up". Read after every push.
    sleeping_workers: AtomicUsize,
    /// Waiters between "announced I sleep" and "woke up". Read after every push and latch set.
    sleeping_waiters: AtomicUsize,
    /// Of the sleeping workers, how many a waker has notified and that have not run yet; at
    /// most `sleeping_workers`, changed only under the mutex. A push wakes a worker only when
    /// some sleeping worker is not already on its way, so while a notified worker takes its
    /// time to wake (a loaded machine), later pushes do not lock the mutex again.
    notified_workers: AtomicUsize,
    /// The same for waiters (`notify_all` notifies every one of them).
    notified_waiters: AtomicUsize,
}

impl Sleep {
    pub(crate) fn new() -> Sleep {
        Sleep {
            mutex: Mutex::new(()),
            workers_cv: Condvar::new(),
            waiters_cv: Condvar::new(),
            sleeping_workers: AtomicUsize::new(0),
            sleeping_waiters: AtomicUsize::new(0),
            notified_workers: AtomicUsize::new(0),
            notified_waiters: AtomicUsize::new(0),
        }
    }

    /// Sleeps unless `should_wake` already holds. `should_wake` runs after this thread is
    /// counted as a sleeper and while the mutex is held, so a concurrent push or latch set
    /// either is seen by it, or sees the count and notifies after the wait has begun.
    pub(crate) fn sleep_unless(&self, who: Sleeper, should_wake: impl Fn() -> bool) {
        let (counter, notified, condvar) = match who {
            Sleeper::Worker => (&self.sleeping_workers, &self.notified_workers, &self.workers_cv),
            Sleeper::Waiter => (&self.sleeping_waiters, &self.notified_waiters, &self.waiters_cv),
        };
        let mut guard = self.mutex.lock();
        // SeqCst increment + heavy barrier, then read queues/latch: one half of the Dekker pair
        // whose other half is "publish, barrier, read the counter" in the notify functions. The
        // heavy barrier also stands in for the light one a local push makes (README).
        counter.fetch_add(1, Ordering::SeqCst);
        barrier::heavy();
        if !should_wake() {
            condvar.wait(&mut guard);
        }
        // Whoever wakes takes one notification with it (perhaps another sleeper's, after a
        // spurious wake-up: then a later push notifies once more than needed, never less).
        if notified.load(Ordering::Relaxed) > 0 {
            notified.fetch_sub(1, Ordering::Relaxed);
        }
        counter.fetch_sub(1, Ordering::SeqCst);
    }

    /// Sleepers of one kind that no waker has notified yet. Read after the publishing
    /// barrier: `sleeping` is the Dekker read; `notified` can only make the answer smaller when
    /// a waker has already notified the sleeper, which then re-checks every queue on waking.
    #[inline]
    fn unnotified(sleeping: &AtomicUsize, notified: &AtomicUsize) -> bool {
        sleeping.load(Ordering::SeqCst) > notified.load(Ordering::Relaxed)
    }

    /// After a job was pushed onto the pusher's *own* deque: wakes one sleeping worker, and
    /// any sleeping waiter (a waiter sleeps only when there was no work at all, so this is
    /// rare and lets it help).
    ///
    /// This is the hot path of every `join`, so its side of the Dekker pair is the *light*
    /// barrier: a compiler fence where the sleeper's heavy barrier is a process-wide
    /// `membarrier`, a real fence elsewhere (README, "Local pushes: an asymmetric fence").
    /// A sleeper can therefore never miss the job, even when the pusher then blocks on it.
    #[inline]
    pub(crate) fn notify_local_work(&self) {
        barrier::light();
        self.notify_sleepers();
    }

    /// After a job was pushed onto the shared injector: like `notify_local_work`, but with the
    /// fence, since no particular thread is bound to run an injected job.
    #[inline]
    pub(crate) fn notify_injected_work(&self) {
        fence(Ordering::SeqCst);
        self.notify_sleepers();
    }

    /// Whether some sleeper of either kind is asleep un-notified: the waker's read of the
    /// counts (as in `notify_sleepers`), for a caller that has made the publishing barrier and
    /// only needs to know whether a notification is due.
    #[inline]
    pub(crate) fn has_unnotified_sleepers(&self) -> bool {
        Sleep::unnotified(&self.sleeping_workers, &self.notified_workers)
            || Sleep::unnotified(&self.sleeping_waiters, &self.notified_waiters)
    }

    /// The waker's read of the counts, after its barrier: wakes one worker and every waiter
    /// when some of them sleep un-notified.
    #[inline]
    fn notify_sleepers(&self) {
        let workers = Sleep::unnotified(&self.sleeping_workers, &self.notified_workers);
        let waiters = Sleep::unnotified(&self.sleeping_waiters, &self.notified_waiters);
        if workers || waiters {
            self.notify(workers, waiters);
        }
    }

    #[cold]
    fn notify(&self, workers: bool, waiters: bool) {
        // Holding the mutex means each sleeper is either before its check (and will see the
        // job) or inside `wait` (and gets this notification).
        let _guard = self.mutex.lock();
        if workers {
            self.notify_workers_locked();
        }
        if waiters {
            self.notify_waiters_locked();
        }
    }

    /// Under the mutex: notifies one sleeping worker not yet notified, if any.
    fn notify_workers_locked(&self) {
        let sleeping = self.sleeping_workers.load(Ordering::Relaxed);
        if sleeping > self.notified_workers.load(Ordering::Relaxed) {
            self.notified_workers.fetch_add(1, Ordering::Relaxed);
            self.workers_cv.notify_one();
        }
    }

    /// Under the mutex: notifies every sleeping waiter.
    fn notify_waiters_locked(&self) {
        let sleeping = self.sleeping_waiters.load(Ordering::Relaxed);
        if sleeping > self.notified_waiters.load(Ordering::Relaxed) {
            self.notified_waiters.store(sleeping, Ordering::Relaxed);
            self.waiters_cv.notify_all();
        }
    }

    /// After a latch was set: wakes the sleeping waiters (the owner is among them, if asleep).
    #[inline]
    pub(crate) fn notify_latch_set(&self) {
        fence(Ordering::SeqCst);
        if Sleep::unnotified(&self.sleeping_waiters, &self.notified_waiters) {
            let _guard = self.mutex.lock();
            self.notify_waiters_locked();
        }
    }

    /// At shutdown: wakes every worker so it can see the terminate flag.
    pub(crate) fn wake_all_workers(&self) {
        let _guard = self.mutex.lock();
        self.workers_cv.notify_all();
    }
}
