//! Asymmetric fences for the sleep protocol's Dekker pair (README, "Local pushes: an
//! asymmetric fence").
//!
//! The pair is "publish; fence; read the sleeper count" (a pusher) against "count myself;
//! fence; look for work" (a thread going to sleep). Pushes happen on every `join`; sleeping
//! happens a few times a frame. So the pusher's fence is made *light* (a compiler fence, no
//! instruction) and the sleeper's *heavy*: Linux's `membarrier(PRIVATE_EXPEDITED)` runs a full
//! memory barrier on every core that runs a thread of this process before it returns. Whatever
//! point in a pusher's instruction stream that barrier lands on, either the pusher's push is
//! visible to the sleeper's look afterwards or the sleeper's count is visible to the pusher's
//! read afterwards, exactly as with two real fences.
//!
//! Where `membarrier` is missing (another OS, an old kernel, a sandbox that filters it) both
//! sides are real `SeqCst` fences, which is always correct and only slower. Under the model
//! checker both are loom fences.

#[cfg(all(target_os = "linux", not(loom)))]
mod imp {
    use std::sync::atomic::{compiler_fence, fence, AtomicU8, Ordering};

    /// Not decided yet: both sides fence.
    const UNKNOWN: u8 = 0;
    /// Registered for `membarrier(PRIVATE_EXPEDITED)`: light side is a compiler fence.
    const ASYMMETRIC: u8 = 1;
    /// `membarrier` refused: both sides fence.
    const SYMMETRIC: u8 = 2;

    // From <linux/membarrier.h>.
    const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    static MODE: AtomicU8 = AtomicU8::new(UNKNOWN);

    /// Decides the mode once per process, before the first pool can push. A pool's creation
    /// happens-before any use of it, so every push sees the mode its pool was made under.
    pub(crate) fn init() {
        if MODE.load(Ordering::Acquire) != UNKNOWN {
            return;
        }
        // SAFETY: the membarrier syscall takes (cmd, flags, cpu_id) integers and touches no memory.
        let registered =
            unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) } == 0;
        let mode = if registered { ASYMMETRIC } else { SYMMETRIC };
        // Racing initialisers compute the same answer; the first store wins, later ones agree.
        let _ = MODE.compare_exchange(UNKNOWN, mode, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The pusher's side.
    #[inline(always)]
    pub(crate) fn light() {
        if MODE.load(Ordering::Relaxed) == ASYMMETRIC {
            compiler_fence(Ordering::SeqCst);
        } else {
            fence(Ordering::SeqCst);
        }
    }

    /// Whether the pusher's side is a compiler fence only. Once true it stays true (the mode
    /// is decided once per process), so a caller may ask once, after `init`, and then use
    /// `light_asymmetric` on its hot path without loading the mode on every barrier.
    #[inline]
    pub(crate) fn is_asymmetric() -> bool {
        MODE.load(Ordering::Relaxed) == ASYMMETRIC
    }

    /// `light` for a caller that found `is_asymmetric` true: a compiler fence.
    #[inline(always)]
    pub(crate) fn light_asymmetric() {
        compiler_fence(Ordering::SeqCst);
    }

    /// The sleeper's side.
    pub(crate) fn heavy() {
        if MODE.load(Ordering::Relaxed) == ASYMMETRIC {
            // SAFETY: as in `init`.
            let done = unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) } == 0;
            // Once registered the command cannot fail; if it ever did, the pushers' compiler
            // fences would no longer pair with anything, and a lost wake-up is a hang.
            assert!(done, "membarrier(PRIVATE_EXPEDITED) failed after a successful registration");
        } else {
            fence(Ordering::SeqCst);
        }
    }
}

#[cfg(not(all(target_os = "linux", not(loom))))]
mod imp {
    use super::super::sync::{fence, Ordering};

    pub(crate) fn init() {}

    /// The pusher's side: a full fence.
    #[inline(always)]
    pub(crate) fn light() {
        fence(Ordering::SeqCst);
    }

    /// Never: both sides are full fences here.
    #[inline]
    pub(crate) fn is_asymmetric() -> bool {
        false
    }

    /// A full fence. Only the model checker reaches it (its frame deques are on; README,
    /// "Cheap joins"), where it is the model's fence.
    #[inline(always)]
    pub(crate) fn light_asymmetric() {
        fence(Ordering::SeqCst);
    }

    /// The sleeper's side: a full fence.
    pub(crate) fn heavy() {
        fence(Ordering::SeqCst);
    }
}

pub(crate) use imp::{heavy, init, is_asymmetric, light, light_asymmetric};
