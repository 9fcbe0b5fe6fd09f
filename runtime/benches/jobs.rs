//! Job system against rayon, case by case, each pair in one criterion group.
//!
//! Both pools get the same parallelism: ours is `JobSystem::global()` (workers plus the calling
//! thread), rayon's is its global pool (one thread per core, the caller blocks).
//! Run with `cargo bench -p runtime` (add `-- --quick` for a fast pass).

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rayon::prelude::*;
use runtime::jobs::{self, JobSystem};

const ITEMS: usize = 1 << 20;
/// Items per job for our `parallel_for` family; rayon splits adaptively on its own.
const GRAIN: usize = 16 * 1024;
const GRAIN_HEAVY: usize = 1024;

#[inline]
fn trivial(value: &mut f32) {
    *value = *value * 1.0001 + 0.5;
}

/// About 100 ns of dependent floating-point work per item on current x86 cores. Not inlined,
/// so both pools run exactly the same machine code per item: inlined, the loop's shape (and
/// how much the CPU overlaps neighbouring items) would differ between the two callers and the
/// comparison would measure code generation rather than scheduling.
#[inline(never)]
fn about_100ns(value: &mut f32) {
    let mut accumulator = black_box(*value);
    for _ in 0..75 {
        accumulator = accumulator * 0.999_97 + 0.001;
    }
    *value = accumulator;
}

fn parallel_for_trivial(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("parallel_for_1M_f32_trivial");
    group.throughput(Throughput::Elements(ITEMS as u64));
    let mut data = vec![1.0f32; ITEMS];
    let pool = JobSystem::global();
    group.bench_function(BenchmarkId::new("ours", "chunks_16k"), |bench| {
        bench.iter(|| pool.parallel_for_chunks(&mut data, GRAIN, |_, chunk| chunk.iter_mut().for_each(trivial)))
    });
    group.bench_function(BenchmarkId::new("rayon", "par_iter_mut"), |bench| {
        bench.iter(|| data.par_iter_mut().for_each(trivial))
    });
    group.bench_function(BenchmarkId::new("rayon", "par_chunks_mut_16k"), |bench| {
        bench.iter(|| data.par_chunks_mut(GRAIN).for_each(|chunk| chunk.iter_mut().for_each(trivial)))
    });
    group.bench_function(BenchmarkId::new("serial", "one_thread"), |bench| {
        bench.iter(|| data.iter_mut().for_each(trivial))
    });
    group.finish();
}

fn parallel_for_heavy(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("parallel_for_1M_f32_100ns");
    group.sample_size(10);
    group.throughput(Throughput::Elements(ITEMS as u64));
    let mut data = vec![1.0f32; ITEMS];
    let pool = JobSystem::global();
    group.bench_function(BenchmarkId::new("ours", "chunks_1k"), |bench| {
        bench.iter(|| {
            pool.parallel_for_chunks(&mut data, GRAIN_HEAVY, |_, chunk| chunk.iter_mut().for_each(about_100ns))
        })
    });
    group.bench_function(BenchmarkId::new("rayon", "par_iter_mut"), |bench| {
        bench.iter(|| data.par_iter_mut().for_each(about_100ns))
    });
    group.finish();
}

fn join_tree_ours(leaves: usize) -> usize {
    if leaves <= 1 {
        return black_box(1);
    }
    let half = leaves / 2;
    let (left, right) = jobs::join(|| join_tree_ours(half), || join_tree_ours(leaves - half));
    left + right
}

fn join_tree_rayon(leaves: usize) -> usize {
    if leaves <= 1 {
        return black_box(1);
    }
    let half = leaves / 2;
    let (left, right) = rayon::join(|| join_tree_rayon(half), || join_tree_rayon(leaves - half));
    left + right
}

fn join_tree_chili(leaves: usize, scope: &mut chili::Scope<'_>) -> usize {
    if leaves <= 1 {
        return black_box(1);
    }
    let half = leaves / 2;
    let (left, right) = scope.join(|scope| join_tree_chili(half, scope), |scope| join_tree_chili(leaves - half, scope));
    left + right
}

fn join_tree_serial(leaves: usize) -> usize {
    if leaves <= 1 {
        return black_box(1);
    }
    let half = leaves / 2;
    let (left, right) = (join_tree_serial(half), join_tree_serial(leaves - half));
    left + right
}

/// `join_tree_serial` with both recursive calls kept: the compiler turns the second call of
/// `join_tree_serial` into a loop (it adds its result to an accumulator), which no `join` can
/// do for its `b`, whose closure borrows the caller's frame. Not the goal's baseline; it shows
/// how much of the gap to `serial` is that one call.
fn join_tree_serial_two_calls(leaves: usize) -> usize {
    if leaves <= 1 {
        return black_box(1);
    }
    let half = leaves / 2;
    join_tree_serial_two_calls(half) + black_box(join_tree_serial_two_calls(leaves - half))
}

/// About 30 ns of dependent floating-point work (a third of `about_100ns`), returned so the
/// tree sums it.
#[inline(never)]
fn about_30ns() -> usize {
    let mut accumulator = black_box(1.0f32);
    for _ in 0..25 {
        accumulator = accumulator * 0.999_97 + 0.001;
    }
    usize::from(accumulator > 0.0)
}

fn join_tree_30ns_ours(leaves: usize) -> usize {
    if leaves <= 1 {
        return about_30ns();
    }
    let half = leaves / 2;
    let (left, right) = jobs::join(|| join_tree_30ns_ours(half), || join_tree_30ns_ours(leaves - half));
    left + right
}

fn join_tree_30ns_rayon(leaves: usize) -> usize {
    if leaves <= 1 {
        return about_30ns();
    }
    let half = leaves / 2;
    let (left, right) = rayon::join(|| join_tree_30ns_rayon(half), || join_tree_30ns_rayon(leaves - half));
    left + right
}

fn join_tree_30ns_serial(leaves: usize) -> usize {
    if leaves <= 1 {
        return about_30ns();
    }
    let half = leaves / 2;
    let (left, right) = (join_tree_30ns_serial(half), join_tree_30ns_serial(leaves - half));
    left + right
}

/// `iterations` serial trees on this thread and as many on a second, started together: the
/// slower thread's time, from the moment both are ready.
fn serial_tree_on_two_threads(leaves: usize, iterations: u64) -> Duration {
    let ready = Barrier::new(2);
    let run = || {
        ready.wait();
        let started = Instant::now();
        for _ in 0..iterations {
            assert_eq!(join_tree_serial(black_box(leaves)), leaves);
        }
        started.elapsed()
    };
    std::thread::scope(|scope| {
        let other = scope.spawn(run);
        let here = run();
        here.max(other.join().expect("the serial tree does not panic"))
    })
}

/// Fine-grained `join`: a recursive sum over 1,024 trivial leaves, against the same recursion
/// without `join`; the bar is the heartbeat-scheduled `chili` in the same run.
fn join_tree_small(criterion: &mut Criterion) {
    const LEAVES: usize = 1024;
    let mut group = criterion.benchmark_group("join_tree_1024_leaves");
    group.throughput(Throughput::Elements(LEAVES as u64));
    let pool = JobSystem::global();
    group.bench_function("ours", |bench| bench.iter(|| pool.install(|| assert_eq!(join_tree_ours(LEAVES), LEAVES))));
    group.bench_function("rayon", |bench| bench.iter(|| assert_eq!(join_tree_rayon(LEAVES), LEAVES)));
    {
        // The heartbeat-scheduled baseline, one thread per core as ours (a worker and the
        // caller, plus its heartbeat thread). Its scope is made once (making one takes the
        // pool's lock), and the pool is dropped after its row, so its heartbeat thread does
        // not wake up through the rows that follow.
        let chili_pool = chili::ThreadPool::new();
        let mut chili_scope = chili_pool.scope();
        group.bench_function("chili", |bench| {
            bench.iter(|| assert_eq!(join_tree_chili(black_box(LEAVES), &mut chili_scope), LEAVES))
        });
    }
    group.bench_function("serial", |bench| bench.iter(|| assert_eq!(join_tree_serial(black_box(LEAVES)), LEAVES)));
    group.bench_function("serial_two_calls", |bench| {
        bench.iter(|| assert_eq!(join_tree_serial_two_calls(black_box(LEAVES)), LEAVES))
    });
    // The cost of `join` itself, without any parallelism to hide it.
    let one_thread = JobSystem::new(1);
    group.bench_function("ours_1_thread", |bench| {
        bench.iter(|| one_thread.install(|| assert_eq!(join_tree_ours(LEAVES), LEAVES)))
    });
    // What the machine gives two threads at once: the serial tree on two threads together,
    // each its own copy, timed per tree on the slower one. Equal to `serial` where the two
    // cores run independently and nothing else slows them; above it where they share a
    // physical core or the host's neighbours take some of it (1.0-1.6x `serial` on the shared
    // two-core machine), and a tree split over both threads is slowed the same way.
    group.bench_function("serial_on_two_threads_at_once", |bench| {
        bench.iter_custom(|iterations| serial_tree_on_two_threads(LEAVES, iterations))
    });
    // What `ours` pays to enter the pool from outside and leave it, with no work inside: the
    // fixed part of the `ours` row that no `join` causes.
    group.bench_function("install_only", |bench| bench.iter(|| pool.install(|| black_box(LEAVES))));
    // The tree from a thread already in the pool, as a system calls `join`: one `install`
    // around all the iterations, so it measures the joins alone.
    group.bench_function("ours_inside_pool", |bench| {
        bench.iter_custom(|iterations| {
            pool.install(|| {
                let started = Instant::now();
                for _ in 0..iterations {
                    assert_eq!(join_tree_ours(black_box(LEAVES)), LEAVES);
                }
                started.elapsed()
            })
        })
    });
    group.finish();

    let mut group = criterion.benchmark_group("join_tree_1024_leaves_30ns");
    group.throughput(Throughput::Elements(LEAVES as u64));
    group.bench_function("ours", |bench| {
        bench.iter(|| pool.install(|| assert_eq!(join_tree_30ns_ours(LEAVES), LEAVES)))
    });
    group.bench_function("rayon", |bench| bench.iter(|| assert_eq!(join_tree_30ns_rayon(LEAVES), LEAVES)));
    group.bench_function("serial", |bench| bench.iter(|| assert_eq!(join_tree_30ns_serial(black_box(LEAVES)), LEAVES)));
    group.finish();
}

fn join_tree(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("join_tree_1M_leaves");
    group.sample_size(10);
    group.throughput(Throughput::Elements(ITEMS as u64));
    let pool = JobSystem::global();
    group.bench_function("ours", |bench| bench.iter(|| pool.install(|| assert_eq!(join_tree_ours(ITEMS), ITEMS))));
    group.bench_function("rayon", |bench| bench.iter(|| assert_eq!(join_tree_rayon(ITEMS), ITEMS)));
    group.bench_function("serial", |bench| bench.iter(|| assert_eq!(join_tree_serial(black_box(ITEMS)), ITEMS)));
    group.finish();
}

fn scope_spawn(criterion: &mut Criterion) {
    const JOBS: usize = 100_000;
    let mut group = criterion.benchmark_group("scope_100k_empty_jobs");
    group.sample_size(20);
    group.throughput(Throughput::Elements(JOBS as u64));
    let pool = JobSystem::global();
    let counter = AtomicUsize::new(0);
    group.bench_function("ours", |bench| {
        bench.iter(|| {
            pool.scope(|scope| {
                for _ in 0..JOBS {
                    scope.spawn(|_| {
                        counter.fetch_add(1, Ordering::Relaxed);
                    });
                }
            })
        })
    });
    group.bench_function("rayon", |bench| {
        bench.iter(|| {
            rayon::scope(|scope| {
                for _ in 0..JOBS {
                    scope.spawn(|_| {
                        counter.fetch_add(1, Ordering::Relaxed);
                    });
                }
            })
        })
    });
    group.finish();
}

/// Time from submitting work to a *sleeping* pool until a worker starts it: the pool is left
/// idle long enough for its workers to sleep before each measured submission.
fn wake_latency(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("wake_from_sleep");
    group.sample_size(20);
    let pool = JobSystem::global();
    group.bench_function("ours", |bench| {
        bench.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                std::thread::sleep(Duration::from_millis(3));
                // The caller blocks on the channel inside the scope body, so the job can only
                // run on a worker that had to wake up (as in rayon's case below).
                let (sender, receiver) = std::sync::mpsc::channel();
                let submitted = Instant::now();
                let start = pool.scope(|scope| {
                    scope.spawn(move |_| sender.send(Instant::now()).expect("the bench waits for this"));
                    receiver.recv().expect("the job sends its start time")
                });
                total += start - submitted;
            }
            total
        })
    });
    group.bench_function("rayon", |bench| {
        bench.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                std::thread::sleep(Duration::from_millis(3));
                let (sender, receiver) = std::sync::mpsc::channel();
                let submitted = Instant::now();
                rayon::spawn(move || sender.send(Instant::now()).expect("the bench waits for this"));
                let start = receiver.recv().expect("the job sends its start time");
                total += start - submitted;
            }
            total
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    parallel_for_trivial,
    parallel_for_heavy,
    join_tree_small,
    join_tree,
    scope_spawn,
    wake_latency
);
criterion_main!(benches);
