//! The memory of a scope's spawned jobs: chunks the spawning threads bump atomically, freed
//! all at once when the scope ends (every job has run by then), so a spawn costs an atomic
//! add instead of a `malloc` and a `free`. A chunk that fills is followed by one twice its
//! size, under a lock taken only then; a scope that spawns nothing allocates nothing.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::{self, NonNull};

use super::job::{Job, JobRef};
use super::sync::{AtomicPtr, AtomicUsize, Mutex, Ordering};

/// Every block is a multiple of this, and chunks are aligned to it, so every block is too.
const BLOCK_ALIGN: usize = 16;

/// The first chunk's size; each next one doubles, up to [`MAX_CHUNK`].
const FIRST_CHUNK: usize = if cfg!(loom) { 64 } else { 16 * 1024 };

/// The largest chunk (beyond it, chunks stay this size).
const MAX_CHUNK: usize = 4 * 1024 * 1024;

/// One chunk: `capacity` bytes at `memory`, `used` of them handed out (it may overshoot the
/// capacity when threads race past the end; those bytes are never handed out).
struct Chunk {
    memory: NonNull<u8>,
    capacity: usize,
    used: AtomicUsize,
}

impl Chunk {
    fn new(capacity: usize) -> Chunk {
        let layout = Layout::from_size_align(capacity, BLOCK_ALIGN).expect("a chunk's size fits a layout");
        // SAFETY: the layout has a non-zero size.
        let memory = NonNull::new(unsafe { alloc(layout) }).unwrap_or_else(|| handle_alloc_error(layout));
        Chunk { memory, capacity, used: AtomicUsize::new(0) }
    }

    /// A block of `size` bytes (a multiple of [`BLOCK_ALIGN`]), if it still fits.
    fn bump(&self, size: usize) -> Option<NonNull<u8>> {
        let offset = self.used.fetch_add(size, Ordering::Relaxed);
        // SAFETY: the block lies inside the chunk's allocation.
        (offset.checked_add(size)? <= self.capacity).then(|| unsafe { self.memory.add(offset) })
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.capacity, BLOCK_ALIGN).expect("made from this layout");
        // SAFETY: allocated in `Chunk::new` with this layout.
        unsafe { dealloc(self.memory.as_ptr(), layout) };
    }
}

/// A scope's job memory (see the module docs).
pub(crate) struct JobArena {
    /// The chunk being bumped (null before the first spawn); one of `chunks`.
    current: AtomicPtr<Chunk>,
    /// Every chunk, freed with the arena. Boxed: `current` points at a chunk (its `used`
    /// counter), which must not move when the list grows.
    #[allow(clippy::vec_box)]
    chunks: Mutex<Vec<Box<Chunk>>>,
}

// SAFETY: chunks are plain memory handed out in disjoint blocks; the jobs written there are
// `Send` (they run on any thread) and the arena is shared only through `&`.
unsafe impl Send for JobArena {}
// SAFETY: as above; every shared mutation is atomic or under the mutex.
unsafe impl Sync for JobArena {}

impl JobArena {
    pub(crate) fn new() -> JobArena {
        JobArena { current: AtomicPtr::new(ptr::null_mut()), chunks: Mutex::new(Vec::new()) }
    }

    /// A block for a `T`, or `None` when `T` needs more alignment than the arena gives.
    fn block<T>(&self) -> Option<NonNull<T>> {
        let layout = Layout::new::<T>();
        if layout.align() > BLOCK_ALIGN {
            return None;
        }
        let size = layout.size().max(1).next_multiple_of(BLOCK_ALIGN);
        loop {
            let chunk = self.current.load(Ordering::Acquire);
            // SAFETY: a non-null `current` is a chunk of `chunks`, alive while the arena is.
            if let Some(block) = unsafe { chunk.as_ref() }.and_then(|chunk| chunk.bump(size)) {
                return Some(block.cast());
            }
            let mut chunks = self.chunks.lock();
            // Another thread may have installed a new chunk meanwhile: retry on it.
            if self.current.load(Ordering::Acquire) == chunk {
                let last = chunks.last().map_or(FIRST_CHUNK / 2, |chunk| chunk.capacity);
                let mut next = Box::new(Chunk::new((last * 2).min(MAX_CHUNK).max(size)));
                self.current.store(&mut *next, Ordering::Release);
                chunks.push(next);
            }
        }
    }

    /// Moves `func` into the arena and returns a job that runs it once; the memory is freed
    /// with the arena (a `T` the arena cannot align is boxed instead).
    ///
    /// # Safety
    /// The job must run before the arena is dropped, and whatever `func` borrows must outlive
    /// its execution.
    pub(crate) unsafe fn job<F: FnOnce() + Send>(&self, func: F) -> JobRef {
        match self.block::<ArenaJob<F>>() {
            Some(block) => {
                // SAFETY: the block is this job's alone, aligned and large enough for it.
                unsafe { block.as_ptr().write(ArenaJob { func }) };
                // SAFETY: the block stays valid until the arena is dropped, after the job ran.
                unsafe { JobRef::new(block.as_ptr().cast_const()) }
            }
            // SAFETY: as this function's contract.
            None => unsafe { super::job::HeapJob::into_job_ref(func) },
        }
    }
}

/// A job whose closure lives in a [`JobArena`].
struct ArenaJob<F> {
    func: F,
}

impl<F: FnOnce() + Send> Job for ArenaJob<F> {
    unsafe fn execute(this: *const Self) {
        // SAFETY: `this` was written in `JobArena::job` and runs once; the closure is moved out
        // before it runs, so nothing reads the block after the closure signals completion.
        let func = unsafe { ptr::read(&(*this).func) };
        func();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use crate::jobs::JobSystem;

    /// A closure capture that needs more alignment than the arena gives.
    #[derive(Clone, Copy)]
    #[repr(align(64))]
    struct Aligned(u64);

    #[test]
    fn jobs_of_every_size_spawned_from_every_thread_run_once_with_their_captures() {
        let pool = JobSystem::new(2);
        let sum = AtomicU64::new(0);
        pool.scope(|scope| {
            for index in 0..2_000u64 {
                let sum = &sum;
                // Small jobs that spawn more from whichever thread runs them, a job larger
                // than the first chunk, and over-aligned ones (boxed instead).
                scope.spawn(move |scope| {
                    sum.fetch_add(index, Ordering::Relaxed);
                    scope.spawn(move |_| {
                        sum.fetch_add(1, Ordering::Relaxed);
                    });
                });
                if index % 500 == 0 {
                    let big = [index; 4096];
                    scope.spawn(move |_| {
                        sum.fetch_add(big.iter().sum::<u64>() / 4096, Ordering::Relaxed);
                    });
                    let aligned = Aligned(index);
                    scope.spawn(move |_| {
                        assert_eq!(&aligned as *const Aligned as usize % 64, 0);
                        sum.fetch_add(aligned.0, Ordering::Relaxed);
                    });
                }
            }
        });
        let spawned: u64 = (0..2_000).sum::<u64>() + 2_000;
        let extra: u64 = [0u64, 500, 1000, 1500].iter().map(|index| index * 2).sum();
        assert_eq!(sum.load(Ordering::Relaxed), spawned + extra);
    }
}
