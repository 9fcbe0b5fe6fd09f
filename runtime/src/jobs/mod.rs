//! A work-stealing job system: one deque per worker, a global injector, and callers that help.
//!
//! Every entry point blocks until its jobs are done, and the blocked thread runs other jobs
//! meanwhile, so nesting cannot deadlock and the calling thread takes part in the work. Idle
//! workers spin briefly, then sleep on a condition variable; `README.md` in this folder argues
//! why a wake-up cannot be lost. A panic in a job is caught, the sibling jobs finish, and the
//! panic is re-raised in the caller; the pool stays usable.
//!
//! The free functions ([`scope`], [`join`], [`parallel_for`], …) use the *current* pool: the one
//! the calling thread takes part in (as a worker, or inside any `scope`/`join`/`parallel_for`
//! body or job of that pool), else the one entered by [`JobSystem::install`], else
//! [`JobSystem::global`].
//!
//! Any number of threads may call into one pool at once; a body may block on work it spawned as
//! long as some thread of the pool is free to run it. `README.md` in this folder states these
//! guarantees precisely and how the model checker (loom) and the stress tests prove them.
//!
//! ```
//! use runtime::jobs;
//! let mut squares = vec![0u64; 10_000];
//! jobs::parallel_for_chunks(&mut squares, 1024, |first, chunk| {
//!     for (offset, value) in chunk.iter_mut().enumerate() {
//!         let i = (first + offset) as u64;
//!         *value = i * i;
//!     }
//! });
//! assert_eq!(squares[100], 10_000);
//! ```

mod arena;
mod barrier;
mod counters;
mod frames;
mod guests;
mod idle;
mod job;
mod join;
mod latch;
mod local;
mod mailbox;
mod registry;
mod scope;
mod sleep;
mod sync;

use std::cell::Cell;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use local::LocalThread;
use registry::Registry;

pub use counters::JobCounters;
pub use scope::Scope;

/// A pool of worker threads plus the threads that call into it.
///
/// `JobSystem::new(threads)` gives `threads`-way parallelism: `threads - 1` workers named
/// `worker-1` … plus the calling thread, which works while it waits. A 1-thread pool runs
/// everything on the caller.
pub struct JobSystem {
    registry: Arc<Registry>,
    handles: Vec<sync::thread::JoinHandle<()>>,
}

sync::job_thread_local! {
    /// The pool entered by `install` on this (non-worker) thread, or null.
    static INSTALLED: Cell<*const JobSystem> = Cell::new(std::ptr::null());
}

static GLOBAL: OnceLock<JobSystem> = OnceLock::new();

impl JobSystem {
    /// Creates a pool with `threads`-way parallelism (`threads - 1` workers; 0 counts as 1).
    ///
    /// # Panics
    /// If the operating system refuses to start a thread; see [`JobSystem::try_new`].
    pub fn new(threads: usize) -> JobSystem {
        JobSystem::try_new(threads).expect("the operating system refused to start a worker thread")
    }

    /// Creates a pool, returning the operating system's error if a thread cannot start.
    pub fn try_new(threads: usize) -> std::io::Result<JobSystem> {
        let workers = threads.max(1) - 1;
        let (registry, handles) = Registry::spawn(workers)?;
        Ok(JobSystem { registry, handles })
    }

    /// The process-wide pool, sized to the available cores (or `ENGINE_THREADS` when set).
    pub fn global() -> &'static JobSystem {
        GLOBAL.get_or_init(|| {
            let from_env = std::env::var("ENGINE_THREADS").ok().and_then(|value| value.parse::<usize>().ok());
            let cores = std::thread::available_parallelism().map(usize::from).unwrap_or(1);
            JobSystem::new(from_env.unwrap_or(cores))
        })
    }

    /// What the pool's threads did since it started: jobs run, steals, sleeps and time
    /// asleep (see [`JobCounters`]; subtract two readings for a frame's).
    pub fn counters(&self) -> JobCounters {
        self.registry.counters.total()
    }

    /// Parallelism of the pool: its workers plus the calling thread.
    pub fn threads(&self) -> usize {
        self.registry.worker_count() + 1
    }

    /// Runs `body` so that the free functions of this module use this pool inside it.
    pub fn install<R>(&self, body: impl FnOnce() -> R) -> R {
        struct Restore(*const JobSystem);
        impl Drop for Restore {
            fn drop(&mut self) {
                INSTALLED.with(|cell| cell.set(self.0));
            }
        }
        let previous = INSTALLED.with(|cell| cell.replace(self as *const JobSystem));
        let _restore = Restore(previous);
        body()
    }

    /// Runs `body` with a [`Scope`] whose jobs may borrow the caller's data; returns once all
    /// of them finished. The first panic of the body or of a job is re-raised here.
    #[cfg_attr(feature = "profile", track_caller)]
    pub fn scope<'scope, R>(&self, body: impl FnOnce(&Scope<'scope>) -> R) -> R {
        #[cfg(feature = "profile")]
        let _site = crate::profiling::spawn_site();
        scope::run_scope(&self.registry, body)
    }

    /// Runs `a` on this thread and `b` possibly on another; returns both results.
    #[cfg_attr(feature = "profile", track_caller)]
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        #[cfg(feature = "profile")]
        let _site = crate::profiling::spawn_site();
        join::join_in(&self.registry, a, b)
    }

    /// Calls `body(i)` for every `i` in `range`, in parallel chunks of `grain` indices.
    #[cfg_attr(feature = "profile", track_caller)]
    pub fn parallel_for(&self, range: Range<usize>, grain: usize, body: impl Fn(usize) + Sync + Send) {
        #[cfg(feature = "profile")]
        let _site = crate::profiling::spawn_site();
        self.parallel_for_ranges(range, grain, |sub_range| sub_range.for_each(&body));
    }

    /// Calls `body(sub_range)` on disjoint sub-ranges of at most `grain` indices covering
    /// `range`. Each sub-range starts at `range.start + k * grain`, so with a `grain` that is a
    /// multiple of 64 and an aligned start, sub-ranges cover whole 64-bit words of a bitset.
    #[cfg_attr(feature = "profile", track_caller)]
    pub fn parallel_for_ranges(&self, range: Range<usize>, grain: usize, body: impl Fn(Range<usize>) + Sync + Send) {
        #[cfg(feature = "profile")]
        let _site = crate::profiling::spawn_site();
        ranges_in(&self.registry, range, grain, &body);
    }

    /// Calls `body(first_index, chunk)` on disjoint chunks of at most `grain` elements of
    /// `data`, `first_index` being the index of `chunk[0]` in `data`.
    #[cfg_attr(feature = "profile", track_caller)]
    pub fn parallel_for_chunks<T: Send>(
        &self,
        data: &mut [T],
        grain: usize,
        body: impl Fn(usize, &mut [T]) + Sync + Send,
    ) {
        #[cfg(feature = "profile")]
        let _site = crate::profiling::spawn_site();
        chunks_in(&self.registry, data, grain, &body);
    }
}

impl Drop for JobSystem {
    fn drop(&mut self) {
        self.registry.terminate();
        for handle in self.handles.drain(..) {
            // A worker never unwinds (jobs catch their panics), so join cannot fail but for
            // an abort, after which nothing runs anyway.
            let _ = handle.join();
        }
    }
}

impl std::fmt::Debug for JobSystem {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("JobSystem").field("threads", &self.threads()).finish()
    }
}

/// Wakes every sleeping worker of the process-wide pool, if it exists (they sleep again when
/// there is nothing to do).
#[cfg(feature = "profile")]
pub(crate) fn wake_global_workers() {
    if let Some(pool) = GLOBAL.get() {
        pool.registry.sleep.wake_all_workers();
    }
}

/// Runs `action` with the current pool's registry (see the module docs).
fn with_current<R>(action: impl FnOnce(&Arc<Registry>) -> R) -> R {
    let local = LocalThread::current();
    // SAFETY: a non-null pointer is this thread's own local state, alive while it takes part.
    if let Some(local) = unsafe { local.as_ref() } {
        return action(local.registry());
    }
    let installed = INSTALLED.with(Cell::get);
    if !installed.is_null() {
        // SAFETY: `install` set it from `&self` and restores the previous value before that
        // borrow of the pool ends, so the pool is alive here.
        let pool = unsafe { &*installed };
        return action(&pool.registry);
    }
    action(&JobSystem::global().registry)
}

/// [`JobSystem::scope`] on the current pool.
#[cfg_attr(feature = "profile", track_caller)]
pub fn scope<'scope, R>(body: impl FnOnce(&Scope<'scope>) -> R) -> R {
    #[cfg(feature = "profile")]
    let _site = crate::profiling::spawn_site();
    with_current(|registry| scope::run_scope(registry, body))
}

/// [`JobSystem::join`] on the current pool.
// Inlined down to `join_as`, which is not (see there): a recursive caller (a join tree) then
// pays one stack frame per level, `join_as`'s, with the caller's own body inside it when
// that body is small.
#[inline]
#[cfg_attr(feature = "profile", track_caller)]
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    #[cfg(feature = "profile")]
    let _site = crate::profiling::spawn_site();
    // Fast path, one thread-local read: a thread taking part in a pool joins in that pool.
    // SAFETY: a non-null pointer is this thread's own local state, alive while it takes part.
    if let Some(local) = unsafe { LocalThread::current().as_ref() } {
        return join::join_as(local, a, b);
    }
    join_from_outside(a, b)
}

/// `join` by a thread that takes part in no pool yet: out of line, so the inlined fast path
/// stays small.
#[cold]
#[inline(never)]
fn join_from_outside<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    with_current(|registry| join::join_in(registry, a, b))
}

/// [`JobSystem::parallel_for`] on the current pool.
#[cfg_attr(feature = "profile", track_caller)]
pub fn parallel_for(range: Range<usize>, grain: usize, body: impl Fn(usize) + Sync + Send) {
    #[cfg(feature = "profile")]
    let _site = crate::profiling::spawn_site();
    parallel_for_ranges(range, grain, |sub_range| sub_range.for_each(&body));
}

/// [`JobSystem::parallel_for_ranges`] on the current pool.
#[cfg_attr(feature = "profile", track_caller)]
pub fn parallel_for_ranges(range: Range<usize>, grain: usize, body: impl Fn(Range<usize>) + Sync + Send) {
    #[cfg(feature = "profile")]
    let _site = crate::profiling::spawn_site();
    with_current(|registry| ranges_in(registry, range, grain, &body));
}

/// [`JobSystem::parallel_for_chunks`] on the current pool.
#[cfg_attr(feature = "profile", track_caller)]
pub fn parallel_for_chunks<T: Send>(data: &mut [T], grain: usize, body: impl Fn(usize, &mut [T]) + Sync + Send) {
    #[cfg(feature = "profile")]
    let _site = crate::profiling::spawn_site();
    with_current(|registry| chunks_in(registry, data, grain, &body));
}

/// `parallel_for_ranges` on `registry`'s pool, in one zone for every caller.
fn ranges_in(registry: &Arc<Registry>, range: Range<usize>, grain: usize, body: &(impl Fn(Range<usize>) + Sync)) {
    crate::profile_zone!("parallel_for");
    join::parallel_ranges_in(registry, range, grain.max(1), body);
}

/// `parallel_for_chunks` on `registry`'s pool, in one zone for every caller.
fn chunks_in<T: Send>(
    registry: &Arc<Registry>,
    data: &mut [T],
    grain: usize,
    body: &(impl Fn(usize, &mut [T]) + Sync),
) {
    crate::profile_zone!("parallel_for_chunks");
    join::parallel_chunks_in(registry, 0, data, grain.max(1), body);
}

/// Parallelism of the current pool (workers plus the calling thread).
pub fn current_threads() -> usize {
    with_current(|registry| registry.worker_count() + 1)
}

#[cfg(all(test, loom))]
mod models;
#[cfg(all(test, not(loom)))]
mod tests;
