//! How an idle thread backs off: it spins, then yields its core, then sleeps
//! ([`IdleRounds`]), and while it finds nothing it counts itself hungry ([`Hunger`]), so that
//! owners promote join frames for it (README, "Cheap joins").

use std::time::{Duration, Instant};

use super::job::JobRef;
use super::mailbox::Mailbox;
use super::registry::Registry;
use super::sync::{self, Ordering};

/// How long a thread without work keeps looking (spinning, then yielding its core) before it
/// sleeps. A frame alternates parallel loops with serial stretches (an occluder pick, a gather,
/// a system's own code) of up to a few hundred microseconds; a worker that slept through one
/// makes the next loop wait for its wake-up, which on a loaded two-core machine costs more than
/// the loop saves (the 1M bench city: 2.07 ms a frame with a 64-round spin of about 50 µs,
/// 1.92 ms with 200 µs). Past it, an idle pool burns no core. Measured from the first yield.
const IDLE_SPIN: Duration = Duration::from_micros(250);
/// Rounds that only spin (1, 2, 4 ... 64 spin hints) before the thread starts to yield.
const PURE_SPIN_ROUNDS: u32 = 16;
/// Idle rounds after which a thread also steals join frames straight from their owners' frame
/// deques (a heavy barrier each), rather than waiting for an owner to promote one: long enough
/// for a running owner to reach its next `join`, short enough that an owner blocked inside `a`
/// (or in a long leaf) loses its pending `b` within microseconds. The models do it at once.
const HEAVY_STEAL_ROUND: u32 = if cfg!(loom) { 0 } else { PURE_SPIN_ROUNDS };
/// Counts a thread in `Registry::hungry` while it finds no work, and out again when it finds
/// some or stops looking (also on unwind).
pub(super) struct Hunger<'a> {
    registry: &'a Registry,
    counted: bool,
}

impl<'a> Hunger<'a> {
    pub(super) fn new(registry: &'a Registry) -> Hunger<'a> {
        Hunger { registry, counted: false }
    }

    /// Found nothing: owners should promote a frame. `SeqCst`, and always before the thread
    /// sleeps: a `join` skips the sleeper check when it reads no hungry thread, so this
    /// increment is the sleeper's half of that Dekker pair (README, "Cheap joins").
    #[inline]
    pub(super) fn starving(&mut self) {
        if !self.counted {
            self.counted = true;
            self.registry.hungry.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[inline]
    pub(super) fn fed(&mut self) {
        if self.counted {
            self.counted = false;
            self.registry.hungry.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Hunger<'_> {
    fn drop(&mut self) {
        self.fed();
    }
}

/// What a round of backing off ended with.
pub(super) enum Spun {
    /// A frame was delivered to the thread's mailbox (now closed again).
    Delivered(JobRef),
    /// Look for work again.
    Again,
    /// Done spinning: close the mailbox and sleep.
    Sleep,
}

/// A thread's search for work while it finds none: spin, then yield the core until
/// [`IDLE_SPIN`] has passed, then sleep. The models sleep at once: spinning adds
/// interleavings, not protocol steps.
pub(super) struct IdleRounds {
    rounds: u32,
    /// When the thread began to yield (read only past the pure spin, so a thread that finds
    /// work within it never reads the clock).
    yielding_since: Option<Instant>,
}

impl IdleRounds {
    pub(super) const fn new() -> IdleRounds {
        IdleRounds { rounds: 0, yielding_since: None }
    }

    /// The thread found work (or woke up): the next idle spell starts from the beginning.
    #[inline]
    pub(super) fn reset(&mut self) {
        self.rounds = 0;
        self.yielding_since = None;
    }

    /// Whether this round also steals join frames straight from their owners
    /// ([`HEAVY_STEAL_ROUND`]).
    #[inline]
    pub(super) fn heavy_steal(&self) -> bool {
        self.rounds >= HEAVY_STEAL_ROUND
    }

    /// Backs off for one round with `mailbox` open, watching it (and `stop`, a waiter's
    /// latch) between spin hints: a frame delivered there is returned at once.
    pub(super) fn back_off(&mut self, mailbox: &Mailbox, stop: impl Fn() -> bool) -> Spun {
        if cfg!(loom) {
            // The models sleep at once, but still open the mailbox for the owner to race with.
            mailbox.open();
            return Spun::Sleep;
        }
        mailbox.open();
        let round = self.rounds;
        self.rounds = round.saturating_add(1);
        if round < PURE_SPIN_ROUNDS {
            for _ in 0..(1u32 << round.min(6)) {
                if let Some(job) = mailbox.take() {
                    return Spun::Delivered(job);
                }
                if stop() {
                    return Spun::Again;
                }
                sync::thread::spin_loop();
            }
            return Spun::Again;
        }
        let since = *self.yielding_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= IDLE_SPIN {
            return Spun::Sleep;
        }
        sync::thread::yield_now();
        mailbox.take().map_or(Spun::Again, Spun::Delivered)
    }
}
