//! Job system tests: volume, nesting, panics, edge ranges, small pools, concurrent callers.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::*;

#[test]
fn one_million_tiny_jobs_each_run_once() {
    let pool = JobSystem::new(4);
    let hits: Vec<AtomicUsize> = (0..1_000_000).map(|_| AtomicUsize::new(0)).collect();
    pool.parallel_for(0..hits.len(), 1, |index| {
        hits[index].fetch_add(1, Ordering::Relaxed);
    });
    assert!(hits.iter().all(|hit| hit.load(Ordering::Relaxed) == 1), "every index must run exactly once");
}

#[test]
fn one_hundred_thousand_spawns_in_one_scope() {
    let pool = JobSystem::new(3);
    let counter = AtomicUsize::new(0);
    pool.scope(|scope| {
        for _ in 0..100_000 {
            scope.spawn(|_| {
                counter.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    assert_eq!(counter.load(Ordering::Relaxed), 100_000);
}

fn nested(depth: usize, counter: &AtomicUsize) {
    if depth == 0 {
        counter.fetch_add(1, Ordering::Relaxed);
        return;
    }
    scope(|outer| {
        outer.spawn(|_| nested(depth - 1, counter));
        outer.spawn(|_| {
            join(|| nested(depth - 1, counter), || parallel_for(0..3, 1, |_| nested(0, counter)));
        });
    });
}

#[test]
fn nesting_eight_levels_does_not_deadlock() {
    for threads in [1, 2, 4] {
        let pool = JobSystem::new(threads);
        let counter = AtomicUsize::new(0);
        pool.install(|| nested(8, &counter));
        // leaves(d) = 2 * leaves(d-1) + 3, leaves(0) = 1.
        let expected = (0..8).fold(1usize, |leaves, _| 2 * leaves + 3);
        assert_eq!(counter.load(Ordering::Relaxed), expected, "threads = {threads}");
    }
}

#[test]
fn panic_reaches_caller_after_siblings_finish_and_pool_is_reusable() {
    let pool = JobSystem::new(4);
    let finished = AtomicUsize::new(0);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.scope(|scope| {
            for index in 0..64 {
                let finished = &finished;
                scope.spawn(move |_| {
                    if index == 7 {
                        panic!("job 7 failed");
                    }
                    std::thread::sleep(std::time::Duration::from_micros(200));
                    finished.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
    }));
    let payload = outcome.expect_err("the job's panic must reach the caller");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"job 7 failed"));
    assert_eq!(finished.load(Ordering::SeqCst), 63, "siblings must have finished before the panic is re-raised");

    let join_outcome = panic::catch_unwind(AssertUnwindSafe(|| pool.join(|| 1, || panic!("right side"))));
    assert!(join_outcome.is_err(), "a panic in join's second closure reaches the caller");
    let for_outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.parallel_for(0..1000, 10, |index| assert!(index != 500, "index 500"));
    }));
    assert!(for_outcome.is_err(), "a panic in parallel_for reaches the caller");

    let sum = AtomicUsize::new(0);
    pool.parallel_for(0..10_000, 64, |index| {
        sum.fetch_add(index, Ordering::Relaxed);
    });
    assert_eq!(sum.load(Ordering::Relaxed), (0..10_000).sum::<usize>(), "the pool must stay usable after panics");
}

/// When both halves of a `join` panic, the caller gets `a`'s panic, and only after `b` has
/// finished: taken back and run by the caller (one thread), or run elsewhere (`a` waits long
/// enough for an idle worker to take `b`).
#[test]
fn join_whose_halves_both_panic_raises_the_first_after_the_second_finished() {
    for (threads, a_sleeps) in [(1, 0), (2, 0), (2, 2_000)] {
        let pool = JobSystem::new(threads);
        let b_finished = AtomicUsize::new(0);
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            pool.join(
                || {
                    std::thread::sleep(std::time::Duration::from_micros(a_sleeps));
                    panic!("first half")
                },
                || {
                    b_finished.fetch_add(1, Ordering::SeqCst);
                    panic!("second half")
                },
            )
        }));
        let payload = outcome.expect_err("both halves panicked");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"first half"), "{threads} threads: a's panic wins");
        assert_eq!(b_finished.load(Ordering::SeqCst), 1, "{threads} threads: b ran once, before the panic");
    }
}

#[test]
fn empty_ranges_and_slices_call_nothing() {
    let pool = JobSystem::new(2);
    let calls = AtomicUsize::new(0);
    pool.parallel_for(5..5, 16, |_| {
        calls.fetch_add(1, Ordering::Relaxed);
    });
    pool.parallel_for_ranges(0..0, 16, |_| {
        calls.fetch_add(1, Ordering::Relaxed);
    });
    let mut empty: [u8; 0] = [];
    pool.parallel_for_chunks(&mut empty, 16, |_, _| {
        calls.fetch_add(1, Ordering::Relaxed);
    });
    pool.scope(|_| {});
    assert_eq!(calls.load(Ordering::Relaxed), 0);
}

#[test]
fn grain_larger_than_range_runs_one_chunk() {
    let pool = JobSystem::new(4);
    let ranges = parking_lot::Mutex::new(Vec::new());
    pool.parallel_for_ranges(3..10, 1000, |range| ranges.lock().push(range));
    assert_eq!(*ranges.lock(), vec![3..10]);
    let calls = AtomicUsize::new(0);
    pool.parallel_for(0..10, 0, |_| {
        calls.fetch_add(1, Ordering::Relaxed);
    });
    assert_eq!(calls.load(Ordering::Relaxed), 10, "grain 0 is treated as 1");
}

#[test]
fn sub_ranges_start_on_grain_multiples() {
    let pool = JobSystem::new(4);
    let ranges = parking_lot::Mutex::new(Vec::new());
    pool.parallel_for_ranges(64..1000, 128, |range| ranges.lock().push(range));
    let mut ranges = ranges.into_inner();
    ranges.sort_by_key(|range| range.start);
    let mut expected_start = 64;
    for range in &ranges {
        assert_eq!(range.start, expected_start, "ranges must tile the input without gaps");
        assert_eq!((range.start - 64) % 128, 0, "each range starts at start + k * grain");
        assert!(range.len() <= 128);
        expected_start = range.end;
    }
    assert_eq!(expected_start, 1000);
}

#[test]
fn chunks_cover_the_slice_with_correct_indices() {
    let pool = JobSystem::new(3);
    let mut values = vec![0usize; 10_007];
    pool.parallel_for_chunks(&mut values, 100, |first, chunk| {
        for (offset, value) in chunk.iter_mut().enumerate() {
            *value = first + offset;
        }
    });
    assert!(values.iter().enumerate().all(|(index, value)| index == *value));
}

#[test]
fn one_thread_pool_runs_everything_on_the_caller() {
    let pool = JobSystem::new(1);
    assert_eq!(pool.threads(), 1);
    let caller = std::thread::current().id();
    let foreign = AtomicUsize::new(0);
    pool.parallel_for(0..1000, 7, |_| {
        if std::thread::current().id() != caller {
            foreign.fetch_add(1, Ordering::Relaxed);
        }
    });
    let (left, right) = pool.join(|| 1, || 2);
    assert_eq!((left, right), (1, 2));
    assert_eq!(foreign.load(Ordering::Relaxed), 0, "a 1-thread pool has no workers");
}

#[test]
fn two_outside_threads_submit_at_once() {
    let pool = Arc::new(JobSystem::new(3));
    let handles: Vec<_> = (0..2)
        .map(|thread_index| {
            let pool = Arc::clone(&pool);
            std::thread::spawn(move || {
                let mut results = Vec::new();
                for round in 0..50 {
                    let total = AtomicUsize::new(0);
                    pool.parallel_for(0..5000, 16, |index| {
                        total.fetch_add(index + thread_index + round, Ordering::Relaxed);
                    });
                    results.push(total.into_inner());
                }
                results
            })
        })
        .collect();
    for (thread_index, handle) in handles.into_iter().enumerate() {
        let results = handle.join().expect("submitting thread must not panic");
        for (round, total) in results.into_iter().enumerate() {
            let expected: usize = (0..5000).map(|index| index + thread_index + round).sum();
            assert_eq!(total, expected, "thread {thread_index} round {round}");
        }
    }
}

#[test]
fn workers_are_named() {
    let pool = JobSystem::new(4);
    let names = parking_lot::Mutex::new(std::collections::BTreeSet::new());
    // Enough slow work that the workers pick some of it up.
    pool.parallel_for(0..256, 1, |_| {
        std::thread::sleep(std::time::Duration::from_micros(100));
        if let Some(name) = std::thread::current().name() {
            names.lock().insert(name.to_string());
        }
    });
    let names = names.into_inner();
    assert!(names.iter().any(|name| name.starts_with("worker-")), "expected worker-N threads, got {names:?}");
}

#[test]
fn idle_workers_sleep_and_wake_for_new_work() {
    let pool = JobSystem::new(2);
    // Let the worker go to sleep, then submit: it must still take part (no lost wake-up).
    for _ in 0..20 {
        std::thread::sleep(std::time::Duration::from_millis(2));
        let counter = AtomicUsize::new(0);
        pool.parallel_for(0..64, 1, |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(counter.load(Ordering::Relaxed), 64);
    }
}

#[test]
fn join_returns_both_results_and_borrows() {
    let data = [1u64, 2, 3, 4, 5, 6];
    let (left, right) = join(|| data[..3].iter().sum::<u64>(), || data[3..].iter().sum::<u64>());
    assert_eq!((left, right), (6, 15));
}

/// A value that counts how many of its kind are alive.
struct Counted(Arc<AtomicUsize>);

impl Counted {
    fn new(alive: &Arc<AtomicUsize>) -> Counted {
        alive.fetch_add(1, Ordering::SeqCst);
        Counted(Arc::clone(alive))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A join tree whose halves own a capture each and return an owned value; the leaf numbered
/// `panicking_leaf` panics instead.
fn owning_tree(alive: &Arc<AtomicUsize>, depth: u32, leaf: usize, panicking_leaf: usize) -> Counted {
    if depth == 0 {
        assert!(leaf != panicking_leaf, "leaf {leaf} panics");
        return Counted::new(alive);
    }
    let (left_capture, right_capture) = (Counted::new(alive), Counted::new(alive));
    let (left, right) = join(
        move || {
            let _owned = left_capture;
            owning_tree(alive, depth - 1, 2 * leaf, panicking_leaf)
        },
        move || {
            let _owned = right_capture;
            owning_tree(alive, depth - 1, 2 * leaf + 1, panicking_leaf)
        },
    );
    drop((left, right));
    Counted::new(alive)
}

/// `join` keeps no "taken" flag for its second half's closure or "pending" tag for its result
/// (`job.rs`): each is used exactly once on every path. So every capture and every result is
/// dropped exactly once, whether a half ran inline or on another thread and whether either
/// half panicked: a leak leaves values alive, a double drop under-counts (or crashes).
#[test]
fn join_drops_every_capture_and_result_exactly_once() {
    const DEPTH: u32 = 10;
    let pool = JobSystem::new(4);
    let alive = Arc::new(AtomicUsize::new(0));
    // No panic; the first `a` of every level; the last `b` of every level; one in between.
    for panicking_leaf in [usize::MAX, 0, (1 << DEPTH) - 1, 613] {
        for _ in 0..20 {
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                pool.install(|| drop(owning_tree(&alive, DEPTH, 0, panicking_leaf)));
            }));
            assert_eq!(outcome.is_err(), panicking_leaf != usize::MAX, "only the chosen leaf panics");
            assert_eq!(alive.load(Ordering::SeqCst), 0, "a capture or result leaked or dropped twice");
        }
    }
}

#[test]
fn install_routes_free_functions_to_that_pool() {
    let pool = JobSystem::new(3);
    assert_eq!(pool.install(current_threads), 3);
}

/// Idle workers must sleep in the kernel, not spin: after a quiet spell every `worker-N`
/// thread of the pool is in state `S` (sleeping) in `/proc`.
#[cfg(target_os = "linux")]
#[test]
fn idle_workers_burn_no_core() {
    let pool = JobSystem::new(3);
    pool.parallel_for(0..1000, 1, |_| std::hint::black_box(()));
    let mut states = Vec::new();
    // Workers spin briefly before sleeping; give them ample time on a loaded machine.
    for _ in 0..100 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        states = worker_thread_states();
        if states.len() >= 2 && states.iter().all(|state| *state == 'S') {
            return;
        }
    }
    panic!("idle workers should be sleeping (state S), saw {states:?}");
}

#[cfg(target_os = "linux")]
fn worker_thread_states() -> Vec<char> {
    let mut states = Vec::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return states };
    for task in tasks.flatten() {
        let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !name.starts_with("worker-") {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        // Format: "pid (comm) S ...": the state follows the closing parenthesis.
        if let Some(state) = stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next()) {
            states.push(state);
        }
    }
    states
}
