//! Stress tests of the job system under legitimate but hostile use: more outside threads than
//! a pool has guest slots per chunk, scopes, joins and `parallel_for` mixed with nested spawns,
//! panics while siblings borrow the stack, bodies that block on work they spawned.
//!
//! Each test runs its workload on a separate thread and waits for it with a watchdog, so a
//! hang fails the test with a message instead of stalling CI. Each takes a few seconds at
//! most on two cores in a debug build.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use runtime::jobs::{self, JobSystem};

/// Generous: every workload here finishes in well under a tenth of this on two cores.
const WATCHDOG: Duration = Duration::from_secs(60);

/// The tests of this file run one at a time: each starts dozens of threads, and on two cores
/// several of them at once would measure the machine's overload rather than the job system.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs `work` on its own thread; fails the test if it has not finished within `WATCHDOG`.
/// A panic inside `work` fails the test with that panic.
fn with_watchdog(name: &str, work: impl FnOnce() + Send + 'static) {
    let _exclusive = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let (done, finished) = mpsc::channel();
    let handle = thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let outcome = panic::catch_unwind(AssertUnwindSafe(work));
            let _ = done.send(outcome.is_ok());
            if let Err(payload) = outcome {
                panic::resume_unwind(payload);
            }
        })
        .expect("spawn the workload thread");
    match finished.recv_timeout(WATCHDOG) {
        Ok(true) => handle.join().expect("the workload finished"),
        Ok(false) => {
            if let Err(payload) = handle.join() {
                panic::resume_unwind(payload);
            }
        }
        Err(_) => panic!("{name}: no progress within {WATCHDOG:?}: the job system hung"),
    }
}

/// Runs `body(thread_index)` on `count` outside threads started together.
fn on_outside_threads(count: usize, body: impl Fn(usize) + Send + Sync + 'static) {
    let body = Arc::new(body);
    let start = Arc::new(Barrier::new(count));
    let threads: Vec<_> = (0..count)
        .map(|index| {
            let (body, start) = (Arc::clone(&body), Arc::clone(&start));
            thread::Builder::new()
                .name(format!("outside-{index}"))
                .spawn(move || {
                    start.wait();
                    body(index);
                })
                .expect("spawn an outside thread")
        })
        .collect();
    for thread in threads {
        if let Err(payload) = thread.join() {
            panic::resume_unwind(payload);
        }
    }
}

/// Fault 1: two outside threads doing scopes and joins on one pool. A guest that stole a job
/// of another thread's scope could leave with that job's child on its deque, and the scope
/// never returned (it took about 13k joins to happen without choreography).
#[test]
fn outside_threads_mixing_scopes_and_joins_lose_no_job() {
    with_watchdog("scopes_and_joins", || {
        let pool = Arc::new(JobSystem::new(2));
        let total = Arc::new(AtomicUsize::new(0));
        let deadline = Instant::now() + Duration::from_millis(1500);
        let (pool_for_threads, total_for_threads) = (Arc::clone(&pool), Arc::clone(&total));
        on_outside_threads(2, move |index| {
            let pool = &pool_for_threads;
            let mut round = 0;
            while Instant::now() < deadline {
                round += 1;
                if (index + round) % 2 == 0 {
                    let count = AtomicUsize::new(0);
                    pool.scope(|scope| {
                        for _ in 0..4 {
                            scope.spawn(|scope| {
                                for _ in 0..2 {
                                    scope.spawn(|_| {
                                        count.fetch_add(1, Ordering::Relaxed);
                                    });
                                }
                            });
                        }
                    });
                    assert_eq!(count.load(Ordering::Relaxed), 8);
                } else {
                    for _ in 0..4 {
                        let (a, b) = pool.join(|| 1, || 2);
                        assert_eq!(a + b, 3);
                    }
                }
                total_for_threads.fetch_add(1, Ordering::Relaxed);
            }
        });
        assert!(total.load(Ordering::Relaxed) > 0);
    });
}

/// Fault 2: more outside callers than one chunk of guest slots (16), each splitting 200k
/// single-index jobs. A caller past the slot count that waited on the shared FIFO queue and
/// started its oldest jobs would grow its stack with the number of jobs, until the process
/// aborts with a stack overflow.
#[test]
fn more_outside_callers_than_guest_slots_keep_bounded_stacks() {
    with_watchdog("many_callers", || {
        let pool = Arc::new(JobSystem::new(2));
        on_outside_threads(20, move |_| {
            let hits = AtomicUsize::new(0);
            pool.parallel_for(0..200_000, 1, |_| {
                hits.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(hits.load(Ordering::Relaxed), 200_000);
        });
    });
}

/// Fault 4: inside `pool.scope`, free functions resolve to `pool` for every outside caller,
/// also past the first chunk of guest slots (not to the global pool). All 40
/// callers are inside their scopes at once.
#[test]
fn free_functions_resolve_to_the_callers_pool_for_every_caller() {
    with_watchdog("right_pool", || {
        let callers = 40;
        // One more thread than the global pool, so resolving to the wrong pool shows.
        let pool = Arc::new(JobSystem::new(JobSystem::global().threads() + 1));
        let inside = Arc::new(Barrier::new(callers));
        on_outside_threads(callers, move |_| {
            let pool = &pool;
            pool.scope(|scope| {
                inside.wait();
                assert_eq!(jobs::current_threads(), pool.threads(), "scope body resolved another pool");
                scope.spawn(|_| assert_eq!(jobs::current_threads(), pool.threads()));
                let counter = AtomicUsize::new(0);
                jobs::parallel_for(0..1000, 10, |i| {
                    assert_eq!(jobs::current_threads(), pool.threads());
                    counter.fetch_add(i, Ordering::Relaxed);
                });
                assert_eq!(counter.into_inner(), 499_500);
            });
        });
    });
}

/// Many outside threads (more than the slot count) mixing every entry point with nested
/// spawns, on a pool smaller than the number of callers.
#[test]
fn many_outside_threads_mix_every_entry_point() {
    with_watchdog("mix", || {
        let pool = Arc::new(JobSystem::new(2));
        let total = Arc::new(AtomicUsize::new(0));
        let (pool_for_threads, total_for_threads) = (Arc::clone(&pool), Arc::clone(&total));
        on_outside_threads(24, move |index| {
            let pool = &pool_for_threads;
            for round in 0..40 {
                let count = AtomicUsize::new(0);
                match (index + round) % 3 {
                    0 => pool.scope(|scope| {
                        for _ in 0..8 {
                            scope.spawn(|scope| {
                                count.fetch_add(1, Ordering::Relaxed);
                                scope.spawn(|_| {
                                    jobs::join(
                                        || count.fetch_add(1, Ordering::Relaxed),
                                        || count.fetch_add(1, Ordering::Relaxed),
                                    );
                                });
                            });
                        }
                    }),
                    1 => {
                        pool.join(
                            || {
                                jobs::parallel_for(0..16, 1, |_| {
                                    count.fetch_add(1, Ordering::Relaxed);
                                })
                            },
                            || {
                                jobs::scope(|scope| {
                                    scope.spawn(|_| {
                                        count.fetch_add(8, Ordering::Relaxed);
                                    })
                                })
                            },
                        );
                    }
                    _ => pool.parallel_for(0..24, 1, |_| {
                        count.fetch_add(1, Ordering::Relaxed);
                    }),
                }
                assert_eq!(count.load(Ordering::Relaxed), 24);
                total_for_threads.fetch_add(1, Ordering::Relaxed);
            }
        });
        assert_eq!(total.load(Ordering::Relaxed), 24 * 40);
    });
}

/// Panics injected while siblings borrow stack data, from many outside threads at once: every
/// sibling finishes (writes its slot of the borrowed array) before the panic reaches the
/// caller, and the pool keeps working afterwards.
#[test]
fn panics_wait_for_siblings_borrowing_the_stack() {
    with_watchdog("panics", || {
        let pool = Arc::new(JobSystem::new(2));
        let pool_for_threads = Arc::clone(&pool);
        on_outside_threads(20, move |index| {
            let pool = &pool_for_threads;
            for round in 0..20 {
                let mut written = [0u32; 16];
                let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                    pool.scope(|scope| {
                        for (slot, value) in written.iter_mut().enumerate() {
                            scope.spawn(move |_| {
                                if slot == (index + round) % 16 {
                                    panic!("injected");
                                }
                                thread::yield_now();
                                *value = 1;
                            });
                        }
                    })
                }));
                assert!(outcome.is_err(), "the injected panic reaches the caller");
                assert_eq!(written.iter().sum::<u32>(), 15, "every sibling finished before the panic was raised");
                let join_panic = panic::catch_unwind(AssertUnwindSafe(|| {
                    pool.join(|| written[0] += 1, || panic!("right side"));
                }));
                assert!(join_panic.is_err());
            }
            let (a, b) = pool.join(|| 20, || 22);
            assert_eq!(a + b, 42, "the pool works after the panics");
        });
    });
}

/// Fault 3: a body that blocks (not helping) on a job it spawned. The job sits on the body's
/// own deque; a worker that went to sleep without seeing the push left it there for seconds or
/// forever (about 1 in 20k–100k iterations). The delay before each spawn varies so that the
/// worker is caught at every point of going to sleep.
#[test]
fn bodies_may_block_on_their_own_spawned_jobs() {
    with_watchdog("blocking_bodies", || {
        let pool = JobSystem::new(2);
        // Up to 20k iterations or 3 s, whichever comes first; each one fails the test if its
        // job is not picked up within 2 s (the fault left it there for seconds, or forever).
        let deadline = Instant::now() + Duration::from_secs(3);
        let mut iteration = 0u64;
        while iteration < 20_000 && Instant::now() < deadline {
            iteration += 1;
            let spin = (iteration * 7919) % 4000;
            for _ in 0..spin {
                std::hint::spin_loop();
            }
            if iteration.is_multiple_of(64) {
                // Let the worker reach real sleep now and then.
                thread::sleep(Duration::from_micros(50));
            }
            let (send, receive) = mpsc::channel();
            if iteration.is_multiple_of(2) {
                pool.scope(|scope| {
                    scope.spawn(move |_| send.send(()).expect("the body waits"));
                    receive
                        .recv_timeout(Duration::from_secs(2))
                        .unwrap_or_else(|_| panic!("iteration {iteration}: the spawned job was not picked up"));
                });
            } else {
                pool.join(
                    move || {
                        receive
                            .recv_timeout(Duration::from_secs(2))
                            .unwrap_or_else(|_| panic!("iteration {iteration}: the joined job was not picked up"))
                    },
                    move || send.send(()).expect("the other side waits"),
                );
            }
        }
    });
}

/// A job that blocks on work it spawned itself, inside a scope, from many outside threads at
/// once: blocking holds a thread, and the pool must still make progress as long as some
/// thread is free.
#[test]
fn nested_jobs_block_on_their_children_while_others_help() {
    with_watchdog("nested_blocking", || {
        let pool = Arc::new(JobSystem::new(3));
        let pool_for_threads = Arc::clone(&pool);
        on_outside_threads(4, move |_| {
            let pool = &pool_for_threads;
            for _ in 0..200 {
                pool.scope(|scope| {
                    scope.spawn(|scope| {
                        let (send, receive) = mpsc::channel();
                        scope.spawn(move |_| send.send(7u32).expect("the parent waits"));
                        assert_eq!(receive.recv_timeout(Duration::from_secs(5)), Ok(7));
                    });
                });
            }
        });
    });
}

/// Join halves that block on each other (a channel, not helping) complete whatever the pool was
/// doing when `join` was called: `b` waits on the joining thread's frame deque, unpublished
/// unless a thread was idle, so a thread that becomes free later must take it from there. Three
/// shapes: `a` waits on `b` with an idle worker (`b` is promoted at once); `a` waits on `b`
/// while the only worker is busy (it steals `b` from the frame deque once it is free); and an
/// inner `a` waits on an outer `b`, the oldest of several pending frames.
#[test]
fn join_halves_may_block_on_each_other() {
    with_watchdog("join_blocking_halves", || {
        let pool = JobSystem::new(2);
        let wait = |receive: mpsc::Receiver<u32>, what: &str| {
            receive.recv_timeout(Duration::from_secs(5)).unwrap_or_else(|_| panic!("{what}: b was never run"))
        };
        for iteration in 0..2_000u32 {
            let (send, receive) = mpsc::channel();
            let (a, ()) = pool.join(|| wait(receive, "idle worker"), move || send.send(iteration).expect("a waits"));
            assert_eq!(a, iteration);

            // Keep the worker busy for a while so that nobody is hungry when `join` pushes `b`.
            let (send, receive) = mpsc::channel();
            let busy = (iteration % 50) as u64;
            pool.scope(|scope| {
                scope.spawn(move |_| thread::sleep(Duration::from_micros(busy)));
                let (a, ()) =
                    jobs::join(|| wait(receive, "busy worker"), move || send.send(iteration).expect("a waits"));
                assert_eq!(a, iteration);
            });

            let (send, receive) = mpsc::channel();
            let ((inner, ()), ()) = pool.join(
                || jobs::join(|| wait(receive, "outer b"), || ()),
                move || send.send(iteration).expect("the inner a waits"),
            );
            assert_eq!(inner, iteration);
        }
    });
}

/// Every leaf of many join trees runs exactly once, whatever mix of inline runs, promotions and
/// steals from frame deques happened: trees on pools of two to four threads, from the pool's
/// own caller and from outside threads at once, with leaves of uneven cost so that threads go
/// hungry at every depth. Also a chain of joins deeper than a frame deque holds (the rest go
/// through the ordinary deque).
#[test]
fn join_trees_run_every_leaf_exactly_once() {
    fn tree(leaves: &[AtomicUsize], first: usize, count: usize) {
        if count == 1 {
            if first.is_multiple_of(7) {
                for _ in 0..(first % 500) {
                    std::hint::spin_loop();
                }
            }
            leaves[first].fetch_add(1, Ordering::Relaxed);
            return;
        }
        let half = count / 2;
        jobs::join(|| tree(leaves, first, half), || tree(leaves, first + half, count - half));
    }
    fn chain(leaves: &[AtomicUsize], depth: usize) {
        if depth == 0 {
            return;
        }
        jobs::join(|| chain(leaves, depth - 1), || leaves[depth - 1].fetch_add(1, Ordering::Relaxed));
    }
    with_watchdog("join_trees_exactly_once", || {
        for threads in 2..=4 {
            let pool = Arc::new(JobSystem::new(threads));
            let pool_for_threads = Arc::clone(&pool);
            on_outside_threads(3, move |index| {
                let leaves: Vec<AtomicUsize> = (0..1000 + index * 37).map(|_| AtomicUsize::new(0)).collect();
                for round in 1..=100 {
                    pool_for_threads.install(|| tree(&leaves, 0, leaves.len()));
                    assert!(
                        leaves.iter().all(|leaf| leaf.load(Ordering::Relaxed) == round),
                        "{threads} threads, round {round}: a leaf ran twice or never"
                    );
                }
            });
            let links: Vec<AtomicUsize> = (0..1000).map(|_| AtomicUsize::new(0)).collect();
            pool.install(|| chain(&links, links.len()));
            assert!(links.iter().all(|link| link.load(Ordering::Relaxed) == 1), "a deep chain lost or repeated a b");
        }
    });
}

/// A stolen `join` half tells its owner's pool when it is done, and that pool is the pool the
/// executing thread takes part in at that moment (a `StackJob` does not record it). Pools nest
/// here: each half of a join on `outer` runs a join on `inner`, so threads switch pools inside
/// jobs, and the stolen outer half ends after its owner has gone to sleep waiting for it (the
/// pause). Were the latch announced to the wrong pool's sleepers, the owner would sleep on
/// and the watchdog would fail the test.
#[test]
fn stolen_halves_wake_their_owner_across_nested_pools() {
    with_watchdog("nested_pool_wake_ups", || {
        let outer = JobSystem::new(2);
        let inner = JobSystem::new(2);
        let inner_tree = |pause: Duration| {
            let (left, right) = inner.join(
                || 1,
                || {
                    thread::sleep(pause);
                    2
                },
            );
            left + right
        };
        for iteration in 0..20u64 {
            // Long enough that the owner finishes `a`, spins and goes to sleep first, even
            // when its yields take long on a loaded machine.
            let pause = Duration::from_millis(10 + iteration % 5 * 5);
            let (a, b) = outer.join(
                || inner_tree(Duration::ZERO),
                || {
                    thread::sleep(pause);
                    inner_tree(pause)
                },
            );
            assert_eq!((a, b), (3, 3));
            // And the other way round: the owner's `a` is the slow one.
            let (a, b) = outer.join(
                || {
                    thread::sleep(pause);
                    inner_tree(pause)
                },
                || inner_tree(Duration::ZERO),
            );
            assert_eq!((a, b), (3, 3));
        }
    });
}
