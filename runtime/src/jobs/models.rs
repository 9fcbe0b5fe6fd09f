//! Model checks of the job system's protocols with loom, on the real code: every atomic,
//! mutex, condition variable, deque and thread of `jobs` is loom's under `--cfg loom` (see
//! `sync.rs`), so loom explores the interleavings (and weak-memory outcomes) of the actual
//! `sleep`, `latch`, `registry`, `join` and `scope` code. A lost wake-up or a stranded job
//! shows up as a deadlock that loom reports.
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" cargo test -p runtime --release --lib models --target-dir target/loom
//! ```
//!
//! Each model is small (a pool of at most one worker, two outside threads) and bounded to three
//! preemptions (the guest model to one, which its events make enough), which is enough to reach
//! each of the faults these models were written against (README, "Model checking").

use std::sync::Arc;

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Condvar, Mutex};

use super::latch::CountLatch;
use super::local::LocalThread;
use super::JobSystem;

/// Checks `model` within 3 preemptions (`LOOM_MAX_PREEMPTIONS` overrides).
fn check(model: impl Fn() + Sync + Send + 'static) {
    check_within(3, model);
}

/// Checks `model` within `bound` preemptions (`LOOM_MAX_PREEMPTIONS` overrides). A model whose
/// fault needs fewer preemptions than 3, and that would take far longer at 3, says so here
/// (README, "Model checking").
fn check_within(bound: usize, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(bound);
    }
    builder.check(model);
}

/// A one-shot event a body blocks on with loom's own mutex and condition variable, the way a
/// game blocks on a channel or a GPU fence.
struct Event {
    done: Mutex<bool>,
    condvar: Condvar,
}

impl Event {
    fn new() -> Event {
        Event { done: Mutex::new(false), condvar: Condvar::new() }
    }
    fn set(&self) {
        *self.done.lock().unwrap() = true;
        self.condvar.notify_all();
    }
    fn wait(&self) {
        let mut done = self.done.lock().unwrap();
        while !*done {
            done = self.condvar.wait(done).unwrap();
        }
    }
}

/// Sleep/wake: a scope body blocks (not helping) on a job it spawned. The job sits on the
/// body's own deque, so only the pool's worker can run it: if the worker went to sleep without
/// seeing the push, both threads block forever and loom reports the deadlock.
/// Fault 3 (a local push unseen by a sleeping worker).
#[test]
fn body_may_block_on_its_own_spawned_job() {
    check(|| {
        let pool = JobSystem::new(2);
        let event = Event::new();
        pool.scope(|scope| {
            scope.spawn(|_| event.set());
            event.wait();
        });
    });
}

/// Latch set/probe: the worker runs the stolen half of a `join` while the owner may be
/// asleep waiting for its latch; the owner must wake and see the result.
#[test]
fn join_owner_wakes_when_its_stolen_half_finishes() {
    check(|| {
        let pool = JobSystem::new(2);
        let (left, right) = pool.join(|| 1, || 2);
        assert_eq!(left + right, 3);
    });
}

/// Frame deque, promotion and the heavy steal: `a` blocks (not helping) on `b`. `b` waits on
/// the caller's frame deque; the worker must get it, promoted to the caller's deque when the
/// worker was already hungry at the push, else stolen straight from the frame deque, or both
/// threads block forever and loom reports the deadlock.
#[test]
fn join_whose_first_half_blocks_on_the_second_completes() {
    check(|| {
        let pool = JobSystem::new(2);
        let event = Event::new();
        pool.join(|| event.wait(), || event.set());
    });
}

/// Frame deque ownership: the caller pops its frames back (the last one with a
/// compare-and-swap) while the worker steals them or the caller promotes the oldest; each half
/// runs exactly once, and its result reaches the caller.
#[test]
fn join_halves_run_exactly_once_under_steals_and_promotion() {
    check(|| {
        let pool = JobSystem::new(2);
        let runs = AtomicUsize::new(0);
        let count = || runs.fetch_add(1, Ordering::Relaxed) + 1;
        let ((first, second), third) = pool.join(|| pool.join(count, count), count);
        assert_eq!(runs.load(Ordering::Relaxed), 3, "a join half ran twice or never");
        let mut seen = [first, second, third];
        seen.sort_unstable();
        assert_eq!(seen, [1, 2, 3], "each half's own result came back");
    });
}

/// Latch set/probe without the pool: two jobs of a scope finish on two threads; the latch is
/// set exactly once, by the last one, and whoever sees it set sees both jobs' writes.
#[test]
fn count_latch_is_set_once_after_every_write() {
    check(|| {
        let latch = Arc::new(CountLatch::new());
        let writes = Arc::new(AtomicUsize::new(0));
        let sets = Arc::new(AtomicUsize::new(0));
        latch.increment();
        let thread = {
            let (latch, writes, sets) = (Arc::clone(&latch), Arc::clone(&writes), Arc::clone(&sets));
            loom::thread::spawn(move || {
                writes.fetch_add(1, Ordering::Relaxed);
                if latch.decrement() {
                    sets.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        writes.fetch_add(1, Ordering::Relaxed);
        if latch.decrement() {
            sets.fetch_add(1, Ordering::Relaxed);
        }
        if latch.latch.probe() {
            assert_eq!(writes.load(Ordering::Relaxed), 2, "a set latch publishes every job's writes");
        }
        thread.join().unwrap();
        assert!(latch.latch.probe());
        assert_eq!(sets.load(Ordering::Relaxed), 1, "exactly one decrement sets the latch");
    });
}

/// Guest slot lifecycle (claim, push, steal, release): thread A's scope job J1 spawns J2; an
/// outside thread B, waiting for its own scope's job K, steals J1 and runs it, so J2 lands on
/// B's deque. K then ends, B's scope with it, and B leaves: J2 must still run, or A's scope
/// never returns. Fault 1.
///
/// Events steer the threads into that window by blocking, which loom does not count as a
/// preemption: both bodies wait until K has started, so only the worker can run K; A spawns J1
/// only then and waits until it has run, so only B can run J1; J1 waits for K, so K (and B's
/// scope) can end while J2 is on B's deque. One preemption (from the worker, right after it
/// sets B's latch, to B) then lets B leave before anyone takes J2.
#[test]
fn leaving_guest_hands_over_jobs_it_holds_for_others() {
    // One preemption is what the fault needs (above); at 2 the model runs for over ten minutes.
    check_within(1, || {
        let pool = Arc::new(JobSystem::new(2));
        let ran = Arc::new(AtomicUsize::new(0));
        let [k_started, j1_ran, k_done] = [(); 3].map(|()| Arc::new(Event::new()));
        let other = {
            let pool = Arc::clone(&pool);
            let (k_started, j1_ran, k_done) = (Arc::clone(&k_started), Arc::clone(&j1_ran), Arc::clone(&k_done));
            loom::thread::spawn(move || {
                pool.scope(|scope| {
                    scope.spawn(|_| {
                        k_started.set();
                        j1_ran.wait();
                        k_done.set();
                    });
                    k_started.wait();
                });
            })
        };
        pool.scope(|scope| {
            let (ran, j1_ran, k_done) = (&ran, &j1_ran, &k_done);
            k_started.wait();
            scope.spawn(move |scope| {
                scope.spawn(move |_| {
                    ran.fetch_add(1, Ordering::Relaxed);
                });
                j1_ran.set();
                k_done.wait();
            });
            j1_ran.wait();
        });
        assert_eq!(ran.load(Ordering::Relaxed), 1);
        other.join().unwrap();
    });
}

/// Guest slots never run out (the models have one slot per chunk, so the second thread needs a
/// new chunk): every outside caller takes part with a deque of its own in *this* pool, so its
/// stack depth is bounded by its task tree and free functions inside resolve to this pool.
/// Faults 2 (the caller past the slot count waited on the injector) and 4 (and resolved free
/// functions to the global pool).
#[test]
fn every_outside_caller_gets_a_deque_in_its_pool() {
    check(|| {
        let pool = Arc::new(JobSystem::new(1));
        let inside = |pool: &JobSystem| {
            pool.scope(|scope| {
                assert!(LocalThread::current_in(&pool.registry).is_some(), "a caller without a deque");
                scope.spawn(|_| assert!(LocalThread::current_in(&pool.registry).is_some()));
            });
        };
        let other = {
            let pool = Arc::clone(&pool);
            loom::thread::spawn(move || inside(&pool))
        };
        inside(&pool);
        other.join().unwrap();
    });
}
