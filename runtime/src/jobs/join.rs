//! `join` and the `parallel_for` family, built on binary splitting with `join`.

use std::any::Any;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use super::guests::with_local;
use super::job::StackJob;
use super::local::LocalThread;
use super::registry::Registry;

/// Runs `a` and `b`, possibly in parallel, and returns both results. The calling thread runs
/// `a` itself and runs other jobs while it waits for `b`. A panic in either is re-raised here
/// once both have finished (the one from `a` first).
pub(crate) fn join_in<A, B, RA, RB>(registry: &Arc<Registry>, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    with_local(registry, |local| join_as(local, a, b))
}

/// `join` by a thread that already takes part in the pool through `local`.
///
/// `b` goes onto the thread's frame deque, which costs no fence, and is popped back and run
/// inline unless another thread took it meanwhile: promoted by this thread because some thread
/// was idle, or stolen straight from the deque (README, "Cheap joins").
///
/// Never inlined: its instance for a recursive caller's two closures then takes the caller's
/// body into each closure, so a recursion runs as this function calling itself, with the
/// caller's leaf test before each call. Inlined into the caller instead, it left every leaf a
/// call of its own (the 1,024-leaf tree in the bench binary: 2,047 calls rather than 1,023,
/// one thread 5.7-8.2 -> 4.3-6.4 us in the same minutes); which of the two shapes LLVM chose
/// had depended on the rest of the binary.
#[inline(never)]
pub(crate) fn join_as<A, B, RA, RB>(local: &LocalThread, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let job_b = StackJob::new(b);
    let frames = local.frames();
    // The frame deque points at `job_b`'s header, and this function does not return before
    // the job's latch is set or the frame has been popped back and run inline, so the job
    // outlives every use of the entry.
    let Some(index) = frames.push(job_b.header()) else {
        // By reference: a `JobRef` to `job_b` points at it where it is now, so it must not move.
        return join_on_deque(local, &job_b, a);
    };
    // Every sleeper is counted hungry before it sleeps, so this one load stands for the sleep
    // protocol's check of the sleeper counts: the Dekker pair "push; light barrier; read
    // `hungry`" against "count hungry; ...; heavy barrier; look for work" (README).
    if local.hungry_threads_after_push() {
        local.feed_hungry_threads();
    }

    let value_a = match panic::catch_unwind(AssertUnwindSafe(a)) {
        Ok(value) => value,
        // Out of line, so the common path carries no flag of how `a` ended.
        Err(payload) => finish_after_panic(local, &job_b, index, payload),
    };

    // A finished `b` was run by another thread, or by this one while it waited inside `a`.
    if !job_b.latch.probe() && frames.pop_if(index) {
        // Nobody took it: run it here without touching the latch; a panic of `b` unwinds
        // straight through, as nothing else is pending.
        // SAFETY: taken back from the frame deque, so it never runs elsewhere; run once here.
        return (value_a, unsafe { job_b.run_inline() });
    }
    // Promoted (then perhaps still on our deque), stolen, or already run by this thread while
    // it waited inside `a`: help until its latch is set.
    local.wait_until(&job_b.latch);
    // SAFETY: the latch is set, so the job ran elsewhere; its result is read once, here.
    (value_a, unsafe { job_b.take_result() }.into_value())
}

/// `a` of a frame-deque `join` panicked: `b` still finishes (taken back and run here, its own
/// panic caught, or waited for), then `a`'s panic goes on.
#[cold]
#[inline(never)]
fn finish_after_panic<B, RB>(
    local: &LocalThread,
    job_b: &StackJob<B, RB>,
    index: usize,
    payload: Box<dyn Any + Send>,
) -> !
where
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    if !job_b.latch.probe() && local.frames().pop_if(index) {
        // SAFETY: taken back from the frame deque, so it never runs elsewhere; run once here.
        drop(unsafe { job_b.run_taken_back(true) });
    } else {
        local.wait_until(&job_b.latch);
        // SAFETY: the latch is set, so the job ran elsewhere; its result is read once, here.
        drop(unsafe { job_b.take_result() });
    }
    panic::resume_unwind(payload)
}

/// `join` past the frame deque's depth: `b` goes onto the thread's ordinary deque.
#[cold]
#[inline(never)]
fn join_on_deque<A, B, RA, RB>(local: &LocalThread, job_b: &StackJob<B, RB>, a: A) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    // SAFETY: `job_b` stays where it is until this function returns, which it does only once
    // the job's latch is set or the job has been popped back and run inline.
    let job_b_ref = unsafe { job_b.as_job_ref() };
    local.push(job_b_ref);

    let result_a = panic::catch_unwind(AssertUnwindSafe(a));

    let result_b = loop {
        if job_b.latch.probe() {
            // SAFETY: the latch is set, so the job ran elsewhere; read once, then the loop ends.
            break unsafe { job_b.take_result() };
        }
        match local.pop_local() {
            // Nobody stole it: run it here without touching the latch.
            // SAFETY: popped from the deque, so it never runs elsewhere; run once here.
            Some(job) if job == job_b_ref => break unsafe { job_b.run_taken_back(result_a.is_err()) },
            // An older job of an enclosing join: run it, it had to run anyway.
            // SAFETY: popped from the deque, so it runs exactly once and is still live.
            Some(job) => unsafe { job.execute() },
            None => {
                local.wait_until(&job_b.latch);
                // SAFETY: as above.
                break unsafe { job_b.take_result() };
            }
        }
    };

    match result_a {
        Ok(value_a) => (value_a, result_b.into_value()),
        Err(payload) => panic::resume_unwind(payload),
    }
}

/// Splits `range` at a multiple of `grain` from its start, so every leaf range starts at
/// `range.start + k * grain` (callers writing 64-object bit words rely on this).
#[inline]
fn split_point(range: &Range<usize>, grain: usize) -> usize {
    let chunks = range.len().div_ceil(grain);
    range.start + (chunks / 2) * grain
}

/// Calls `body` on disjoint sub-ranges of at most `grain` items covering `range`.
pub(crate) fn parallel_ranges_in<F>(registry: &Arc<Registry>, range: Range<usize>, grain: usize, body: &F)
where
    F: Fn(Range<usize>) + Sync,
{
    if range.len() <= grain {
        if !range.is_empty() {
            body(range);
        }
        return;
    }
    let mid = split_point(&range, grain);
    join_in(
        registry,
        || parallel_ranges_in(registry, range.start..mid, grain, body),
        || parallel_ranges_in(registry, mid..range.end, grain, body),
    );
}

/// Calls `body(first_index, chunk)` on disjoint chunks of at most `grain` elements.
pub(crate) fn parallel_chunks_in<T, F>(
    registry: &Arc<Registry>,
    first_index: usize,
    data: &mut [T],
    grain: usize,
    body: &F,
) where
    T: Send,
    F: Fn(usize, &mut [T]) + Sync,
{
    if data.len() <= grain {
        if !data.is_empty() {
            body(first_index, data);
        }
        return;
    }
    let mid = split_point(&(0..data.len()), grain);
    let (left, right) = data.split_at_mut(mid);
    join_in(
        registry,
        || parallel_chunks_in(registry, first_index, left, grain, body),
        || parallel_chunks_in(registry, first_index + mid, right, grain, body),
    );
}
