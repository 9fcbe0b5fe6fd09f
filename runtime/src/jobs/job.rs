//! Type-erased jobs: a pointer plus the function that knows how to run it, or for a stack job
//! a pointer to its header, which holds that function.
//!
//! Two shapes exist. A [`StackJob`] lives on the stack of the thread that waits for it
//! (`join`), so it needs no allocation; a [`HeapJob`] is boxed and owns its closure
//! (`Scope::spawn`), because the spawner does not wait for that particular job.

use std::any::Any;
use std::cell::UnsafeCell;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::panic::{self, AssertUnwindSafe};

use super::latch::Latch;
use super::local::LocalThread;
use super::sleep::Sleep;

/// Something a worker can run through a [`JobRef`].
pub(crate) trait Job {
    /// Runs the job.
    ///
    /// # Safety
    /// `this` must point to a live job that has not been executed yet; it is executed once.
    unsafe fn execute(this: *const Self);
}

/// A type-erased pointer to a job and its entry point. Copying it does not copy the job.
#[derive(Clone, Copy)]
pub(crate) struct JobRef {
    pointer: *const (),
    execute_fn: unsafe fn(*const ()),
    /// Tracy builds: the site of the thread that made the job (`profiling::job_label`, or
    /// the spawning call), the name and source of the job's zone on the thread that runs it.
    #[cfg(feature = "profile")]
    site: Option<crate::profiling::JobSite>,
}

// SAFETY: a JobRef is only created for jobs whose closures are `Send`, and the job it points
// to is kept alive by its owner until the job's latch is set (see `StackJob`, `HeapJob`).
unsafe impl Send for JobRef {}

/// Two references are the same job when they point to the same data (a job's address is
/// unique while it is pending; entry-point addresses are not, so they are not compared).
impl PartialEq for JobRef {
    fn eq(&self, other: &JobRef) -> bool {
        std::ptr::eq(self.pointer, other.pointer)
    }
}

impl Eq for JobRef {}

/// `T`'s entry point with the pointee type erased.
fn erased_execute<T: Job>() -> unsafe fn(*const ()) {
    let execute_fn: unsafe fn(*const T) = <T as Job>::execute;
    // SAFETY: only the pointee type of the argument changes, and the function is only ever
    // called with a pointer to a `T` (the one stored beside it, or its header's job).
    unsafe { std::mem::transmute::<unsafe fn(*const T), unsafe fn(*const ())>(execute_fn) }
}

impl JobRef {
    /// Erases the type of `data`.
    ///
    /// # Safety
    /// `data` must stay valid until the returned reference is executed, exactly once.
    pub(crate) unsafe fn new<T: Job>(data: *const T) -> JobRef {
        JobRef {
            pointer: data.cast(),
            execute_fn: erased_execute::<T>(),
            #[cfg(feature = "profile")]
            site: crate::profiling::current_job_site(),
        }
    }

    /// The reference named by a job's header: the job is at the header's address.
    ///
    /// # Safety
    /// `header` is the header of a live job (its first field, see [`JobHeader`]).
    #[inline]
    pub(crate) unsafe fn from_header(header: *const JobHeader) -> JobRef {
        // SAFETY: the caller promises a live header.
        let JobHeader {
            execute_fn,
            #[cfg(feature = "profile")]
            site,
        } = unsafe { *header };
        JobRef {
            pointer: header.cast(),
            execute_fn,
            #[cfg(feature = "profile")]
            site,
        }
    }

    /// Runs the job.
    ///
    /// # Safety
    /// The job must not have been executed before (see [`JobRef::new`]).
    pub(crate) unsafe fn execute(self) {
        #[cfg(feature = "profile")]
        let _zone = crate::profiling::job_zone(self.site);
        // SAFETY: the caller promises the job is live and unexecuted.
        unsafe { (self.execute_fn)(self.pointer) }
    }
}

/// A job's entry point stored in the job itself, as its first field, so that one pointer
/// (to the header, which is the job's address) names the job: a frame deque entry is that
/// pointer, and a `join` builds no [`JobRef`] on its stack, only this one word (README,
/// "Cheap joins").
#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct JobHeader {
    execute_fn: unsafe fn(*const ()),
    /// As in [`JobRef`].
    #[cfg(feature = "profile")]
    site: Option<crate::profiling::JobSite>,
}

/// What a [`StackJob`] produced: a value, or the panic it raised.
pub(crate) enum JobResult<R> {
    Done(R),
    Panicked(Box<dyn Any + Send>),
}

impl<R> JobResult<R> {
    /// Returns the value, or resumes the job's panic on this thread.
    pub(crate) fn into_value(self) -> R {
        match self {
            JobResult::Done(value) => value,
            JobResult::Panicked(payload) => panic::resume_unwind(payload),
        }
    }
}

/// A job that lives on the waiting thread's stack; its latch tells the owner it finished.
///
/// The closure and the result carry no "taken"/"pending" state: the closure is taken exactly
/// once (by `run_inline` or `execute`, whichever the job's queue gave it to), and the result is
/// written by `execute` before the latch is set and read once after. So an unstolen `join`
/// stores neither a tag nor an empty closure, and has nothing to drop (README, "Cheap joins").
///
/// It does not record its pool: whoever executes it takes part in that pool right now (next to
/// `execute`), so the pool's sleep state to tell is the executing thread's.
#[repr(C)]
pub(crate) struct StackJob<F, R> {
    /// First, at the job's own address (`repr(C)`).
    header: JobHeader,
    pub(crate) latch: Latch,
    func: UnsafeCell<ManuallyDrop<F>>,
    result: UnsafeCell<MaybeUninit<JobResult<R>>>,
}

impl<F: FnOnce() -> R + Send, R: Send> StackJob<F, R> {
    /// A job that runs `func`.
    pub(crate) fn new(func: F) -> StackJob<F, R> {
        StackJob {
            header: JobHeader {
                execute_fn: erased_execute::<StackJob<F, R>>(),
                #[cfg(feature = "profile")]
                site: crate::profiling::current_job_site(),
            },
            latch: Latch::new(),
            func: UnsafeCell::new(ManuallyDrop::new(func)),
            result: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// A reference another thread may run.
    ///
    /// # Safety
    /// The job must outlive the reference's execution: the owner waits on `latch` first.
    pub(crate) unsafe fn as_job_ref(&self) -> JobRef {
        // SAFETY: the header is this job's first field; the lifetime is the caller's duty.
        unsafe { JobRef::from_header(self.header()) }
    }

    /// The job's header, whose address is the job's: what a frame deque entry points at.
    /// Executing the job through it has [`StackJob::as_job_ref`]'s duty.
    #[inline]
    pub(crate) fn header(&self) -> &JobHeader {
        &self.header
    }

    /// Runs the closure on this thread, when nobody stole the job. By reference: moving the
    /// job out would copy it (and its one-byte latch) on every inline `join`.
    ///
    /// # Safety
    /// The owner took the job back from its queue (so it is never executed) and calls this
    /// once.
    #[inline]
    pub(crate) unsafe fn run_inline(&self) -> R {
        // SAFETY: the caller took the job back, so no other thread runs it or touches `func`,
        // and this is the closure's one use.
        let func = unsafe { ManuallyDrop::take(&mut *self.func.get()) };
        func()
    }

    /// `join`'s `b` run by its owner, which took the job back: when `a` returned normally
    /// (`a_panicked` false), a panic of `b` may unwind straight through (nothing else is
    /// pending); when `a` panicked, `b`'s panic is caught so `a`'s is the one raised.
    ///
    /// # Safety
    /// As for [`StackJob::run_inline`].
    #[inline(always)]
    pub(crate) unsafe fn run_taken_back(&self, a_panicked: bool) -> JobResult<R> {
        // SAFETY: the caller's duty.
        let run = || unsafe { self.run_inline() };
        if !a_panicked {
            return JobResult::Done(run());
        }
        match panic::catch_unwind(AssertUnwindSafe(run)) {
            Ok(value) => JobResult::Done(value),
            Err(payload) => JobResult::Panicked(payload),
        }
    }

    /// Takes the result once the latch is set, leaving the job in place (its owner may not
    /// move it: a `JobRef` to it may have been handed out).
    ///
    /// # Safety
    /// The job was executed (its latch is set), and this is the one read of its result.
    pub(crate) unsafe fn take_result(&self) -> JobResult<R> {
        debug_assert!(self.latch.probe(), "StackJob result taken before the job finished");
        // SAFETY: the latch is set, so `execute` has written `result` and nobody else touches
        // it; the caller reads it once.
        unsafe { (*self.result.get()).assume_init_read() }
    }
}

impl<F: FnOnce() -> R + Send, R: Send> Job for StackJob<F, R> {
    unsafe fn execute(this: *const Self) {
        // SAFETY: the caller guarantees `this` is live and executed once; the owner does not
        // touch `func` or `result` until the latch is set below.
        let this = unsafe { &*this };
        // SAFETY: executed once and never run inline (the owner did not take it back), so this
        // is the closure's one use.
        let func = unsafe { ManuallyDrop::take(&mut *this.func.get()) };
        let result = match panic::catch_unwind(AssertUnwindSafe(func)) {
            Ok(value) => JobResult::Done(value),
            Err(payload) => JobResult::Panicked(payload),
        };
        // SAFETY: the owner reads `result` only after the latch is set, which happens after.
        unsafe { (*this.result.get()).write(result) };
        // The owner may be asleep in its pool, so that pool's sleep state is told once the latch
        // is set. A stack job sits only on its pool's deques and frame deques, and a thread
        // runs jobs only from the pool it takes part in at that moment (`LocalThread::find_work`
        // and `join_on_deque` run on the thread's current local state), so that pool is this
        // thread's. Looked up before the latch is set (afterwards the owner may free the job);
        // the registry stays alive through the current local state's own `Arc`.
        // SAFETY: a non-null pointer is this thread's local state, alive while it runs jobs.
        let local = unsafe { LocalThread::current().as_ref() }.expect("a stack job runs on a thread of its pool");
        let sleep: &Sleep = &local.registry().sleep;
        Latch::set(&this.latch);
        sleep.notify_latch_set();
    }
}

/// A boxed job that owns its closure; the closure handles its own panics and completion.
pub(crate) struct HeapJob<F> {
    func: F,
}

impl<F: FnOnce() + Send> HeapJob<F> {
    /// Boxes `func` and returns a reference that frees the box when executed.
    ///
    /// # Safety
    /// Whatever `func` borrows must outlive its execution (the scope waits for it).
    pub(crate) unsafe fn into_job_ref(func: F) -> JobRef {
        let boxed = Box::new(HeapJob { func });
        // SAFETY: the box is leaked here and reclaimed exactly once in `execute`.
        unsafe { JobRef::new(Box::into_raw(boxed)) }
    }
}

impl<F: FnOnce() + Send> Job for HeapJob<F> {
    unsafe fn execute(this: *const Self) {
        // SAFETY: `this` came from `Box::into_raw` in `into_job_ref` and runs once.
        let boxed = unsafe { Box::from_raw(this as *mut Self) };
        let HeapJob { func } = *boxed;
        func();
    }
}
