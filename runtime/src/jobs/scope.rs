//! `scope`: jobs that borrow from the caller's stack, all finished before `scope` returns.

use std::any::Any;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use super::arena::JobArena;
use super::guests::with_local;
use super::latch::CountLatch;
use super::local::push_from_current;
use super::registry::Registry;
use super::sync::Mutex;

/// A set of jobs that may borrow anything outliving `'scope`; created by
/// [`JobSystem::scope`](super::JobSystem::scope) or [`scope`](super::scope).
///
/// ```
/// let mut halves = [0u64; 2];
/// let (left, right) = halves.split_at_mut(1);
/// runtime::jobs::scope(|s| {
///     s.spawn(|_| left[0] = (0..1000).sum());
///     s.spawn(|_| right[0] = (1000..2000).sum());
/// });
/// assert_eq!(halves[0] + halves[1], (0..2000).sum());
/// ```
pub struct Scope<'scope> {
    registry: Arc<Registry>,
    jobs: CountLatch,
    /// The first panic raised by a spawned job; re-raised when the scope ends.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// The spawned jobs' memory, freed when the scope ends (after every job ran).
    arena: JobArena,
    /// Invariant in `'scope`, like `std::thread::Scope`, so borrows cannot be shortened.
    marker: PhantomData<InvariantScope<'scope>>,
}

/// A type invariant in `'scope` that is `Send + Sync`, used only as a marker.
type InvariantScope<'scope> = Box<dyn FnOnce(&Scope<'scope>) + Send + Sync + 'scope>;

/// A pointer to the scope that a spawned job carries to another thread.
struct ScopePtr<'scope>(*const Scope<'scope>);

// SAFETY: `Scope` is `Sync` (atomics and a mutex), and the scope outlives every job it spawned
// because `run_scope` waits for the count to reach zero before the scope is dropped.
unsafe impl Send for ScopePtr<'_> {}

impl<'scope> Scope<'scope> {
    /// Spawns a job into the scope. It may run on any thread of the pool, including the one
    /// that waits for the scope; it can spawn further jobs through the `&Scope` it receives.
    #[cfg_attr(feature = "profile", track_caller)]
    pub fn spawn<F>(&self, body: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        #[cfg(feature = "profile")]
        let _site = crate::profiling::spawn_site();
        self.jobs.increment();
        let scope_ptr = ScopePtr(self as *const Scope<'scope>);
        let job = move || {
            let scope_ptr = scope_ptr;
            // SAFETY: the scope waits for this job before it is dropped (see ScopePtr).
            let scope = unsafe { &*scope_ptr.0 };
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| body(scope))) {
                scope.store_panic(payload);
            }
            scope.job_completed();
        };
        // SAFETY: the job borrows only data outliving 'scope, and the scope (with its arena)
        // does not end before the job has run (its count keeps the latch unset).
        let job_ref = unsafe { self.arena.job(job) };
        push_from_current(&self.registry, job_ref);
    }

    fn store_panic(&self, payload: Box<dyn Any + Send>) {
        let mut slot = self.panic.lock();
        if slot.is_none() {
            *slot = Some(payload);
        }
    }

    fn job_completed(&self) {
        // Taken before the decrement: once the count reaches zero the owner may free `self`.
        // The registry itself outlives the call, since this thread runs inside that pool.
        let registry: *const Registry = Arc::as_ptr(&self.registry);
        if self.jobs.decrement() {
            // SAFETY: see above; the registry is kept alive by the pool this thread serves.
            unsafe { (*registry).sleep.notify_latch_set() };
        }
    }
}

/// Runs `body` with a new scope on `registry` and waits for all its jobs.
pub(crate) fn run_scope<'scope, F, R>(registry: &Arc<Registry>, body: F) -> R
where
    F: FnOnce(&Scope<'scope>) -> R,
{
    let scope = Scope {
        registry: Arc::clone(registry),
        jobs: CountLatch::new(),
        panic: Mutex::new(None),
        arena: JobArena::new(),
        marker: PhantomData,
    };
    let result = with_local(registry, |local| {
        let result = panic::catch_unwind(AssertUnwindSafe(|| body(&scope)));
        // The body counts as one job: finishing it may be what releases the latch.
        scope.jobs.decrement();
        local.wait_until(&scope.jobs.latch);
        result
    });
    let stored = scope.panic.lock().take();
    match (result, stored) {
        (Err(payload), _) => panic::resume_unwind(payload),
        (Ok(_), Some(payload)) => panic::resume_unwind(payload),
        (Ok(value), None) => value,
    }
}
