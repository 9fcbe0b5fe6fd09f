//! A counting global allocator, for tests (and tools) that prove a steady-state frame makes
//! no heap allocation.
//!
//! Declare it as the global allocator of a test binary, warm up, then count:
//!
//! ```
//! use runtime::alloc_counter::{count_allocations, CountingAllocator};
//!
//! #[global_allocator]
//! static ALLOCATOR: CountingAllocator = CountingAllocator;
//!
//! let mut buffer: Vec<u32> = Vec::with_capacity(16);
//! let ((), allocations) = count_allocations(|| {
//!     buffer.clear();
//!     buffer.extend(0..16); // fits the capacity: no allocation
//! });
//! assert_eq!(allocations, 0);
//! let (_, allocations) = count_allocations(|| vec![1u8; 64]);
//! assert_eq!(allocations, 1);
//! ```
//!
//! Counting is process-wide (every thread's allocations count, the job system's workers
//! included) and not nested. The test harness runs a binary's tests on parallel threads, so a
//! binary with several counting tests takes [`one_test_at_a_time`] first in each: another
//! test's warm-up would otherwise be counted as this one's frames.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static COUNTING: AtomicBool = AtomicBool::new(false);
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

/// The system allocator plus a counter of allocations (and reallocations) made while
/// [`count_allocations`] runs. Has an effect only where declared `#[global_allocator]`.
#[derive(Clone, Copy, Debug, Default)]
pub struct CountingAllocator;

#[inline]
fn record() {
    if COUNTING.load(Ordering::Relaxed) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator, so the memory handed out
// and its contract are the system allocator's; the counter has no effect on it.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record();
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record();
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::dealloc`'s contract.
        unsafe { System.dealloc(pointer, layout) }
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record();
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::realloc`'s contract.
        unsafe { System.realloc(pointer, layout, new_size) }
    }
}

/// Runs `body` and returns its result with the number of heap allocations made meanwhile
/// (by any thread) through a [`CountingAllocator`] declared as the global allocator.
pub fn count_allocations<R>(body: impl FnOnce() -> R) -> (R, usize) {
    ALLOCATIONS.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    let result = body();
    COUNTING.store(false, Ordering::SeqCst);
    (result, ALLOCATIONS.load(Ordering::SeqCst))
}

/// Lets every thread that will run during a count allocate its one-time parking state first.
///
/// parking_lot allocates a thread's parking data, and may grow its global table, the first time
/// that thread blocks. A worker that first sleeps inside [`count_allocations`] would show up
/// as an allocation of the code under test. This sleeps long enough for idle workers to park
/// (they spin for microseconds first) and parks the calling thread once. Call it after the
/// warm-up frames, right before counting.
pub fn settle_threads() {
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mutex = parking_lot::Mutex::new(());
    parking_lot::Condvar::new().wait_for(&mut mutex.lock(), std::time::Duration::from_micros(50));
}

/// Holds the other tests of this binary that take it until the guard drops: take it first in
/// every test of a binary with several counting tests, so that no test allocates while another
/// counts. A test that panicked while holding it does not block the others.
///
/// ```
/// let _alone = runtime::alloc_counter::one_test_at_a_time();
/// // warm up, then count_allocations(...)
/// ```
pub fn one_test_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
